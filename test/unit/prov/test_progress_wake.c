/*
 * test_progress_wake.c - blocking waits (p4f_wait.c, p4f_ep.c's wait fds,
 * the blocking loops of p4f_cq.c and p4f_cntr.c) over real TCP on the
 * loopback interface: threads blocked in fi_cq_sread, fi_cntr_wait,
 * fi_wait and poll(2) on a wait fd wake when data arrives, with manual and
 * auto progress; FI_WAIT_FD readiness, fi_trywait, wait sets and wait fds
 * that follow bindings. Same suite (progress) and fixture
 * (p4f_progress_test.h) as test_progress.c.
 */
#include <config.h>

#include "p4f_progress_test.h"

TestSuite(progress, .init = tp_init, .timeout = 120);

/* ---- (c), (d), (e) blocked threads wake when data arrives ---------------- */

#define TP_WAKE_MAX_NS	2000000000ULL	/* send to wake-up, at most */

enum tp_wait_kind {
	TP_SREAD,		/* fi_cq_sread */
	TP_CNTR_WAIT,		/* fi_cntr_wait */
	TP_SET_WAIT,		/* fi_wait on the wait set holding the CQ */
	TP_FD_POLL,		/* fi_trywait, then poll(2) on FI_GETWAIT's fd */
};

static const char *const tp_wait_names[] = {
	"fi_cq_sread", "fi_cntr_wait", "fi_wait", "poll(FI_GETWAIT fd)",
};

struct tp_waiter {
	struct tp_side *side;
	enum tp_wait_kind kind;
	atomic_int tid;
	ssize_t ret;
	struct fi_cq_tagged_entry e;
	uint64_t cpu_ns;
	uint64_t woke_ns;
};

static ssize_t tp_waiter_block(struct tp_waiter *w)
{
	struct tp_side *s = w->side;
	struct fid *fids[1] = { &s->cq->fid };
	int ret;

	switch (w->kind) {
	case TP_SREAD:
		return fi_cq_sread(s->cq, &w->e, 1, NULL, TP_TIMEOUT_MS);
	case TP_CNTR_WAIT:
		return fi_cntr_wait(s->rx_cntr, 2, TP_TIMEOUT_MS);
	case TP_SET_WAIT:
		return fi_wait(s->set, TP_TIMEOUT_MS);
	case TP_FD_POLL:
		/* nothing is there yet: fi_trywait must allow the wait */
		ret = fi_trywait(s->env.fabric, fids, 1);
		if (ret)
			return ret;
		return test_poll_fd(tp_getwait(&s->cq->fid), TP_TIMEOUT_MS);
	}
	return -FI_EINVAL;
}

static void *tp_waiter_main(void *arg)
{
	struct tp_waiter *w = arg;
	uint64_t c0 = tp_self_cpu_ns();

	atomic_store(&w->tid, tp_gettid());
	w->ret = tp_waiter_block(w);
	w->woke_ns = tp_now_ns();
	w->cpu_ns = tp_self_cpu_ns() - c0;
	return NULL;
}

/*
 * A thread of side 1 sleeps in a blocking wait; once it is asleep in
 * poll, side 0 sends (and sleeps in its own sread until its send is
 * done). The waiter must wake at once (not at its timeout) and the
 * message be there.
 */
static void tp_wake_run(enum fi_progress progress, enum tp_wait_kind kind)
{
	struct tp_side_cfg c0 = { .progress = progress };
	struct tp_side_cfg c1 = { .progress = progress,
				  .waitset = kind == TP_SET_WAIT };
	struct tp_waiter w = { .kind = kind };
	struct fi_cq_tagged_entry e;
	uint64_t out = 0xfeed, in = 0, t_send;
	struct tp_pair p;
	pthread_t thread;
	int i;

	tp_pair_open(&p, &c0, &c1);
	tp_ping(&p, 1);
	w.side = &p.s[1];
	/* what the ping left (counter changes) is reported first */
	for (i = 0; kind == TP_SET_WAIT && !fi_wait(p.s[1].set, 0); i++)
		cr_assert_lt(i, 100, "the wait set never settles");
	cr_assert_eq(fi_trecv(p.s[1].ep, &in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			      2, 0, &in), 0);
	cr_assert_eq(pthread_create(&thread, NULL, tp_waiter_main, &w), 0);
	while (!atomic_load(&w.tid))
		sched_yield();
	tp_wait_asleep_in_poll(atomic_load(&w.tid));
	t_send = tp_now_ns();
	cr_assert_eq(fi_tsend(p.s[0].ep, &out, sizeof(out), NULL,
			      p.s[0].peer, 2, &out), 0);
	tp_sread_one(&p.s[0], &e);
	cr_assert_eq(pthread_join(thread, NULL), 0);
	cr_log_info("%s %s: woke %llu us after the send, CPU %llu us",
		    progress == FI_PROGRESS_AUTO ? "auto" : "manual",
		    tp_wait_names[kind],
		    (unsigned long long)(w.woke_ns - t_send) / 1000,
		    (unsigned long long)w.cpu_ns / 1000);
	cr_assert_eq(w.ret, kind == TP_SREAD || kind == TP_FD_POLL ? 1 : 0,
		     "%s: %zd", tp_wait_names[kind], w.ret);
	cr_assert_lt(w.woke_ns - t_send, TP_WAKE_MAX_NS,
		     "%s slept through the arrival", tp_wait_names[kind]);
	cr_assert_lt(w.cpu_ns, 50000000ULL);
	if (kind == TP_CNTR_WAIT)
		cr_assert_eq(fi_cntr_read(p.s[1].rx_cntr), 2);
	if (kind != TP_SREAD)
		tp_sread_one(&p.s[1], &w.e);
	cr_assert_eq(w.e.op_context, &in);
	cr_assert_eq(in, out);
	tp_pair_close(&p);
}

Test(progress, sread_wakes_on_arrival_manual)
{
	tp_wake_run(FI_PROGRESS_MANUAL, TP_SREAD);
}

Test(progress, sread_wakes_on_arrival_auto)
{
	tp_wake_run(FI_PROGRESS_AUTO, TP_SREAD);
}

Test(progress, cntr_wait_wakes_on_arrival_manual)
{
	tp_wake_run(FI_PROGRESS_MANUAL, TP_CNTR_WAIT);
}

Test(progress, cntr_wait_wakes_on_arrival_auto)
{
	tp_wake_run(FI_PROGRESS_AUTO, TP_CNTR_WAIT);
}

Test(progress, waitset_wait_wakes_on_arrival_manual)
{
	tp_wake_run(FI_PROGRESS_MANUAL, TP_SET_WAIT);
}

Test(progress, waitset_wait_wakes_on_arrival_auto)
{
	tp_wake_run(FI_PROGRESS_AUTO, TP_SET_WAIT);
}

Test(progress, wait_fd_poll_wakes_on_arrival_manual)
{
	tp_wake_run(FI_PROGRESS_MANUAL, TP_FD_POLL);
}

Test(progress, wait_fd_poll_wakes_on_arrival_auto)
{
	tp_wake_run(FI_PROGRESS_AUTO, TP_FD_POLL);
}

/* ---- (e) FI_WAIT_FD, fi_trywait, wait sets -------------------------------- */

/*
 * Manual progress: the CQ's fd turns readable when a message arrives,
 * before anything progressed the receiver; fi_trywait then says -FI_EAGAIN;
 * once the CQ is read and empty, 0, and the fd is quiet again.
 */
Test(progress, wait_fd_readable_on_arrival)
{
	struct fid *fids[1];
	struct fi_cq_tagged_entry e;
	uint64_t out = 0xabc, in = 0;
	struct tp_pair p;
	int fd;

	tp_pair_open_simple(&p, FI_PROGRESS_MANUAL, FI_PROGRESS_MANUAL);
	tp_ping(&p, 1);
	fd = tp_getwait(&p.s[1].cq->fid);
	fids[0] = &p.s[1].cq->fid;
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	cr_assert_eq(test_poll_fd(fd, 0), 0, "fd readable with nothing there");
	cr_assert_eq(fi_trecv(p.s[1].ep, &in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			      2, 0, &in), 0);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, &out, sizeof(out), NULL,
			      p.s[0].peer, 2, &out), 0);
	tp_sread_one(&p.s[0], &e);
	cr_assert_eq(test_poll_fd(fd, TP_TIMEOUT_MS), 1, "fd never readable");
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cq_read(p.s[1].cq, &e, 1), 1);
	cr_assert_eq(e.op_context, &in);
	cr_assert_eq(in, out);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	cr_assert_eq(test_poll_fd(fd, 0), 0, "fd still readable");
	tp_pair_close(&p);
}

/*
 * fi_trywait progresses once (a bounded budget); with more than that
 * waiting in the transport it must still say -FI_EAGAIN, even for an
 * object that did not change (side 1's send counter), so the caller
 * progresses instead of relying on the fd.
 */
#define TP_BACKLOG_MSGS	2000

Test(progress, trywait_eagain_while_transport_has_data)
{
	struct fi_cq_tagged_entry e;
	static uint64_t in[TP_BACKLOG_MSGS], out[TP_BACKLOG_MSGS];
	struct fid *fids[1];
	struct tp_pair p;
	int i, n, eagain = 0;
	ssize_t ret;

	tp_pair_open_simple(&p, FI_PROGRESS_MANUAL, FI_PROGRESS_MANUAL);
	tp_ping(&p, UINT64_MAX);
	fids[0] = &p.s[1].tx_cntr->fid;
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	for (i = 0; i < TP_BACKLOG_MSGS; i++)
		cr_assert_eq(fi_trecv(p.s[1].ep, &in[i], sizeof(in[i]), NULL,
				      FI_ADDR_UNSPEC, (uint64_t)i, 0, &in[i]),
			     0);
	for (i = 0; i < TP_BACKLOG_MSGS; i++) {
		out[i] = (uint64_t)i;
		while ((ret = fi_tsend(p.s[0].ep, &out[i], sizeof(out[i]),
				       NULL, p.s[0].peer, (uint64_t)i,
				       &out[i])) == -FI_EAGAIN)
			(void)fi_cq_read(p.s[0].cq, NULL, 0);
		cr_assert_eq(ret, 0);
	}
	for (n = 0; n < TP_BACKLOG_MSGS;)
		if (fi_cq_read(p.s[0].cq, &e, 1) == 1)
			n++;
	/* side 1 has not progressed since: thousands of messages wait */
	cr_assert_eq(test_poll_fd(tp_getwait(&p.s[1].tx_cntr->fid),
				TP_TIMEOUT_MS), 1);
	while (fi_trywait(p.s[1].env.fabric, fids, 1) == -FI_EAGAIN) {
		eagain++;
		cr_assert_lt(eagain, 10 * TP_BACKLOG_MSGS);
		(void)fi_cntr_read(p.s[1].tx_cntr);
	}
	cr_log_info("fi_trywait said -FI_EAGAIN %d times for a %d-message "
		    "backlog", eagain, TP_BACKLOG_MSGS);
	cr_assert_geq(eagain, 1, "fi_trywait let the caller sleep on data");
	for (n = 0; n < TP_BACKLOG_MSGS;) {
		cr_assert_eq(fi_cq_read(p.s[1].cq, &e, 1), 1,
			     "a completion missing after fi_trywait allowed "
			     "the wait");
		n++;
	}
	for (i = 0; i < TP_BACKLOG_MSGS; i++)
		cr_assert_eq(in[i], (uint64_t)i);
	tp_pair_close(&p);
}

/* The same through a counter's fd. */
Test(progress, cntr_wait_fd_readable_on_arrival)
{
	struct fid *fids[1];
	struct fi_cq_tagged_entry e;
	uint64_t out = 0xabc, in = 0;
	struct tp_pair p;
	int fd;

	tp_pair_open_simple(&p, FI_PROGRESS_MANUAL, FI_PROGRESS_MANUAL);
	tp_ping(&p, 1);
	fd = tp_getwait(&p.s[1].rx_cntr->fid);
	fids[0] = &p.s[1].rx_cntr->fid;
	/* the ping's change is reported once, then it is safe to wait */
	(void)fi_trywait(p.s[1].env.fabric, fids, 1);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	cr_assert_eq(test_poll_fd(fd, 0), 0);
	cr_assert_eq(fi_trecv(p.s[1].ep, &in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			      2, 0, &in), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, &out, sizeof(out), NULL,
			      p.s[0].peer, 2, &out), 0);
	tp_sread_one(&p.s[0], &e);
	cr_assert_eq(test_poll_fd(fd, TP_TIMEOUT_MS), 1);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cntr_read(p.s[1].rx_cntr), 2);
	tp_sread_one(&p.s[1], &e);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	cr_assert_eq(test_poll_fd(fd, 0), 0);
	tp_pair_close(&p);
}

/* With a progress thread the fd turns readable too, and the entry is there
 * by the time the application looks. */
Test(progress, wait_fd_auto)
{
	struct fid *fids[1];
	struct fi_cq_tagged_entry e;
	uint64_t out = 0xabc, in = 0;
	struct tp_pair p;
	int fd, ret;

	tp_pair_open_simple(&p, FI_PROGRESS_AUTO, FI_PROGRESS_AUTO);
	tp_ping(&p, 1);
	fd = tp_getwait(&p.s[1].cq->fid);
	fids[0] = &p.s[1].cq->fid;
	cr_assert_eq(fi_trecv(p.s[1].ep, &in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			      2, 0, &in), 0);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, &out, sizeof(out), NULL,
			      p.s[0].peer, 2, &out), 0);
	tp_sread_one(&p.s[0], &e);
	/* the fi_poll(3) loop: wait only after fi_trywait said so */
	for (;;) {
		cr_assert_eq(test_poll_fd(fd, TP_TIMEOUT_MS), 1);
		ret = (int)fi_cq_read(p.s[1].cq, &e, 1);
		if (ret == 1)
			break;
		cr_assert_eq(ret, -FI_EAGAIN);
		while (fi_trywait(p.s[1].env.fabric, fids, 1) == -FI_EAGAIN)
			if (fi_cq_read(p.s[1].cq, &e, 1) == 1)
				goto done;
	}
done:
	cr_assert_eq(e.op_context, &in);
	cr_assert_eq(in, out);
	tp_pair_close(&p);
}

/* fi_wait on a wait set with nothing coming times out, asleep. */
Test(progress, waitset_wait_timeout_sleeps)
{
	struct tp_side_cfg c0 = { .progress = FI_PROGRESS_MANUAL };
	struct tp_side_cfg c1 = { .progress = FI_PROGRESS_MANUAL,
				  .waitset = true };
	struct tp_pair p;
	uint64_t t0, c, wall;
	int i;

	tp_pair_open(&p, &c0, &c1);
	tp_ping(&p, 1);
	for (i = 0; !fi_wait(p.s[1].set, 0); i++)	/* what the ping left */
		cr_assert_lt(i, 100, "the wait set never settles");
	t0 = tp_now_ns();
	c = tp_self_cpu_ns();
	cr_assert_eq(fi_wait(p.s[1].set, 300), -FI_ETIMEDOUT);
	c = tp_self_cpu_ns() - c;
	wall = tp_now_ns() - t0;
	cr_log_info("fi_wait(300 ms) on a wait set: %llu ms, CPU %llu us",
		    (unsigned long long)wall / 1000000,
		    (unsigned long long)c / 1000);
	cr_assert_geq(wall, 290000000ULL);
	cr_assert_lt(c, 20000000ULL);
	tp_pair_close(&p);
}

/*
 * Progress sets (p4f_worker.c): a CQ's wait fd holds the wait fd of the
 * worker of every endpoint bound to it, once each (a CQ for both
 * directions), from fi_ep_bind to the endpoint's fi_close; a counter's
 * holds every worker of its domain, from the endpoint's fi_endpoint on.
 */
Test(progress, wait_fds_follow_bindings)
{
	struct fi_info *hints = test_hints();
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED,
				 .wait_obj = FI_WAIT_FD };
	struct fi_cntr_attr cta = { .events = FI_CNTR_EVENTS_COMP,
				    .wait_obj = FI_WAIT_FD };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fid_cq *cq, *cq_nowait;
	struct fid_cntr *cntr;
	struct fid_av *av;
	struct fid_ep *ep[2];
	struct test_env env;
	int cq_fd, cntr_fd, i;

	hints->caps = FI_TAGGED;
	hints->addr_format = FI_SOCKADDR_IN;
	test_env_open(&env, hints);
	cr_assert_eq(fi_cq_open(env.domain, &ca, &cq, NULL), 0);
	ca.wait_obj = FI_WAIT_NONE;
	cr_assert_eq(fi_cq_open(env.domain, &ca, &cq_nowait, NULL), 0);
	cr_assert_eq(fi_cntr_open(env.domain, &cta, &cntr, NULL), 0);
	cr_assert_eq(fi_av_open(env.domain, &aa, &av, NULL), 0);
	cq_fd = tp_getwait(&cq->fid);
	cntr_fd = tp_getwait(&cntr->fid);
	cr_assert_eq(tp_epoll_count(cq_fd), 1);		/* its eventfd */
	cr_assert_eq(tp_epoll_count(cntr_fd), 1);
	for (i = 0; i < 2; i++) {
		/* FI_THREAD_SAFE: a worker per endpoint, which every counter
		 * of the domain waits on from fi_endpoint on */
		cr_assert_eq(fi_endpoint(env.domain, env.info, &ep[i], NULL), 0);
		cr_assert_eq(tp_epoll_count(cntr_fd), 2 + i);
		cr_assert_eq(fi_ep_bind(ep[i], &av->fid, 0), 0);
		/* ep 0: one CQ both ways; ep 1: the CQ one way only */
		cr_assert_eq(tp_epoll_count(cq_fd), 1 + i);
		cr_assert_eq(fi_ep_bind(ep[i], &cq->fid,
					i ? FI_RECV : FI_TRANSMIT | FI_RECV), 0);
		/* a CQ waits on the workers of the endpoints bound to it */
		cr_assert_eq(tp_epoll_count(cq_fd), 2 + i);
		if (i)
			cr_assert_eq(fi_ep_bind(ep[i], &cq_nowait->fid,
						FI_TRANSMIT), 0);
		cr_assert_eq(fi_ep_bind(ep[i], &cntr->fid,
					FI_SEND | FI_RECV), 0);
		cr_assert_eq(fi_enable(ep[i]), 0);
		cr_assert_eq(tp_epoll_count(cq_fd), 2 + i);
		cr_assert_eq(tp_epoll_count(cntr_fd), 2 + i);
	}
	cr_assert_eq(fi_close(&ep[0]->fid), 0);
	cr_assert_eq(tp_epoll_count(cq_fd), 2);
	cr_assert_eq(tp_epoll_count(cntr_fd), 2);
	cr_assert_eq(fi_close(&ep[1]->fid), 0);
	cr_assert_eq(tp_epoll_count(cq_fd), 1);
	cr_assert_eq(tp_epoll_count(cntr_fd), 1);
	cr_assert_eq(fi_close(&cq->fid), 0);
	cr_assert_eq(fi_close(&cq_nowait->fid), 0);
	cr_assert_eq(fi_close(&cntr->fid), 0);
	cr_assert_eq(fi_close(&av->fid), 0);
	test_env_close(&env);
}
