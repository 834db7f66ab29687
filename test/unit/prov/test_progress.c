/*
 * test_progress.c - progress models (p4f_progress.c, p4f_ep.c) over real
 * TCP on the loopback interface: the progress rule for long messages, the
 * progress thread itself (which domains get one, that it sleeps when
 * idle, prompt close), blocking waits that time out without spinning, and
 * FI_THREAD_SAFE endpoints shared by application threads. Blocked threads
 * woken by arrivals, FI_WAIT_FD, fi_trywait and wait sets are in
 * test_progress_wake.c; the fixture is p4f_progress_test.h.
 *
 * The progress threads are found by name (p4f_progress) under
 * /proc/self/task; their CPU time is read through the per-thread CPU
 * clock of their tid, their wake-ups from voluntary_ctxt_switches, and
 * whether a thread is asleep in poll/epoll from its wchan. CPU-time
 * numbers are logged with cr_log_info (run the binary with --verbose).
 */
#include <config.h>

#include "p4f_progress_test.h"

TestSuite(progress, .init = tp_init, .timeout = 120);

/* ---- (a) the progress rule for long messages ----------------------------- */

static uint8_t *tp_pattern(size_t len, uint8_t seed)
{
	uint8_t *buf = malloc(len);
	size_t i;

	cr_assert_not_null(buf);
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 31 + seed);
	return buf;
}

/*
 * The receiver posts a 1 MiB receive and then makes no libfabric call. The
 * sender waits (asleep in fi_cq_sread, manual progress) for its send to
 * complete, which needs the receiver to match the header and pull the
 * data. Only afterwards does the receiver look at its CQ. Returns what the
 * sender's fi_cq_sread returned.
 */
static ssize_t tp_rdzv_run(enum fi_progress rx_progress, int send_wait_ms)
{
	struct tp_side_cfg tx = { .progress = FI_PROGRESS_MANUAL };
	struct tp_side_cfg rx = { .progress = rx_progress,
				  .threading = FI_THREAD_DOMAIN };
	struct fi_cq_tagged_entry e0, e1;
	uint8_t *out = tp_pattern(TP_RDZV_SIZE, 7);
	uint8_t *in = calloc(1, TP_RDZV_SIZE);
	struct tp_pair p;
	ssize_t ret;

	cr_assert_not_null(in);
	tp_pair_open(&p, &tx, &rx);
	cr_assert_eq(fi_trecv(p.s[1].ep, in, TP_RDZV_SIZE, NULL,
			      FI_ADDR_UNSPEC, 0x77, 0, in), 0);
	/* the receiver's application makes no call from here ... */
	cr_assert_eq(fi_tsend(p.s[0].ep, out, TP_RDZV_SIZE, NULL, p.s[0].peer,
			      0x77, out), 0);
	ret = fi_cq_sread(p.s[0].cq, &e0, 1, NULL, send_wait_ms);
	/* ... to here */
	if (ret == 1)
		tp_sread_one(&p.s[1], &e1);
	else
		tp_poll_both(&p, &e0, &e1);	/* manual: finish it */
	cr_assert_eq(e0.op_context, out);
	cr_assert(e0.flags & FI_SEND);
	cr_assert_eq(e1.op_context, in);
	cr_assert_eq(e1.len, TP_RDZV_SIZE);
	cr_assert_eq(memcmp(in, out, TP_RDZV_SIZE), 0, "data corrupted");
	tp_pair_close(&p);
	free(in);
	free(out);
	return ret;
}

Test(progress, auto_rendezvous_completes_without_receiver_calls)
{
	cr_assert_eq(tp_rdzv_run(FI_PROGRESS_AUTO, TP_TIMEOUT_MS), 1,
		     "the receiver's progress thread did not pull the data");
}

/* The control: the same exchange needs the receiver under manual progress,
 * so the test above cannot pass without the thread. */
Test(progress, manual_rendezvous_waits_for_receiver)
{
	cr_assert_eq(tp_rdzv_run(FI_PROGRESS_MANUAL, 500), -FI_EAGAIN);
}

/* ---- the progress thread itself ------------------------------------------ */

Test(progress, thread_per_auto_domain_only)
{
	struct tp_pair p;
	pid_t tids[TP_MAX_THREADS];

	cr_assert_eq(tp_progress_threads_gone(tids), 0);
	tp_pair_open_simple(&p, FI_PROGRESS_MANUAL, FI_PROGRESS_AUTO);
	cr_assert_eq(tp_progress_threads(tids), 1);
	tp_ping(&p, 1);
	tp_pair_close(&p);
	cr_assert_eq(tp_progress_threads_gone(tids), 0, "thread not joined");
}

Test(progress, env_forces_thread)
{
	struct tp_pair p;
	pid_t tids[TP_MAX_THREADS];

	setenv("FI_PORTALS_PROGRESS_THREAD", "1", 1);
	tp_pair_open_simple(&p, FI_PROGRESS_MANUAL, FI_PROGRESS_MANUAL);
	cr_assert_eq(tp_progress_threads(tids), 2);
	tp_ping(&p, 1);
	tp_pair_close(&p);
	cr_assert_eq(tp_progress_threads_gone(tids), 0);
}

/*
 * An idle progress thread sleeps in epoll_wait: over one second it uses
 * (almost) no CPU and is not woken at all.
 */
Test(progress, idle_thread_sleeps)
{
	struct tp_pair p;
	pid_t tids[TP_MAX_THREADS];
	uint64_t cpu0[2], cpu1[2];
	long wake0[2], wake1[2];
	int i, n;

	tp_pair_open_simple(&p, FI_PROGRESS_AUTO, FI_PROGRESS_AUTO);
	tp_ping(&p, 1);
	tp_ping(&p, 2);
	n = tp_progress_threads(tids);
	cr_assert_eq(n, 2);
	for (i = 0; i < n; i++)
		tp_wait_asleep_in_poll(tids[i]);
	for (i = 0; i < n; i++) {
		cpu0[i] = tp_tid_cpu_ns(tids[i]);
		wake0[i] = tp_tid_wakeups(tids[i]);
	}
	sleep(1);	/* the measurement window, not a synchronisation */
	for (i = 0; i < n; i++) {
		cpu1[i] = tp_tid_cpu_ns(tids[i]);
		wake1[i] = tp_tid_wakeups(tids[i]);
		cr_log_info("idle progress thread %d: %llu ns CPU, %ld "
			    "wake-ups in 1 s", i,
			    (unsigned long long)(cpu1[i] - cpu0[i]),
			    wake1[i] - wake0[i]);
		cr_expect_lt(cpu1[i] - cpu0[i], 2000000ULL, "thread spins");
		cr_expect_leq(wake1[i] - wake0[i], 1, "thread polls");
	}
	tp_pair_close(&p);
}

/* (f) fi_close(domain) stops and joins the thread at once. */
Test(progress, domain_close_is_prompt)
{
	struct tp_pair p;
	pid_t tids[TP_MAX_THREADS];
	uint64_t t0, dt;
	int i;

	tp_pair_open_simple(&p, FI_PROGRESS_AUTO, FI_PROGRESS_AUTO);
	tp_ping(&p, 1);
	for (i = 0; i < 2; i++) {
		struct tp_side *s = &p.s[i];

		cr_assert_eq(fi_close(&s->ep->fid), 0);
		cr_assert_eq(fi_close(&s->cq->fid), 0);
		cr_assert_eq(fi_close(&s->av->fid), 0);
		cr_assert_eq(fi_close(&s->tx_cntr->fid), 0);
		cr_assert_eq(fi_close(&s->rx_cntr->fid), 0);
	}
	cr_assert_eq(tp_progress_threads(tids), 2);
	for (i = 0; i < 2; i++) {
		t0 = tp_now_ns();
		cr_assert_eq(fi_close(&p.s[i].env.domain->fid), 0);
		dt = tp_now_ns() - t0;
		cr_log_info("fi_close(domain) with its thread: %llu us",
			    (unsigned long long)dt / 1000);
		cr_expect_lt(dt, 200000000ULL, "domain close took %llu ns",
			     (unsigned long long)dt);
		p.s[i].env.domain = NULL;
		test_env_close(&p.s[i].env);
	}
	cr_assert_eq(tp_progress_threads_gone(tids), 0);
}

/* The thread's fd set follows the endpoints: a domain whose endpoint was
 * closed is idle, and closing it with endpoints never enabled works. */
Test(progress, domain_close_without_endpoints)
{
	struct fi_info *hints = test_hints();
	struct test_env env;
	pid_t tids[TP_MAX_THREADS];

	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	test_env_open(&env, hints);
	cr_assert_eq(tp_progress_threads(tids), 1);
	test_env_close(&env);
	cr_assert_eq(tp_progress_threads_gone(tids), 0);
}

/* ---- (b) blocking waits that time out ------------------------------------ */

static void tp_sread_timeout(enum fi_progress progress)
{
	struct fi_cq_tagged_entry e;
	struct tp_pair p;
	uint64_t t0, c0, p0, wall, cpu, proc;
	ssize_t ret;

	tp_pair_open_simple(&p, progress, progress);
	tp_ping(&p, 1);		/* a live connection, then silence */
	t0 = tp_now_ns();
	c0 = tp_self_cpu_ns();
	p0 = tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	ret = fi_cq_sread(p.s[1].cq, &e, 1, NULL, 1000);
	cpu = tp_self_cpu_ns() - c0;
	proc = tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p0;
	wall = tp_now_ns() - t0;
	cr_log_info("%s: fi_cq_sread(1000 ms) -> %zd after %llu ms, thread "
		    "CPU %llu us, process CPU %llu us",
		    progress == FI_PROGRESS_AUTO ? "auto" : "manual", ret,
		    (unsigned long long)wall / 1000000,
		    (unsigned long long)cpu / 1000,
		    (unsigned long long)proc / 1000);
	cr_assert_eq(ret, -FI_EAGAIN);
	cr_assert_geq(wall, 990000000ULL);
	cr_assert_lt(wall, 3000000000ULL);
	cr_assert_lt(cpu, 20000000ULL, "sread used %llu ns CPU",
		     (unsigned long long)cpu);
	cr_assert_lt(proc, 50000000ULL);
	tp_pair_close(&p);
}

Test(progress, sread_timeout_manual_sleeps)
{
	tp_sread_timeout(FI_PROGRESS_MANUAL);
}

Test(progress, sread_timeout_auto_sleeps)
{
	tp_sread_timeout(FI_PROGRESS_AUTO);
}

Test(progress, cntr_wait_timeout_sleeps)
{
	struct tp_pair p;
	uint64_t t0, c0, cpu;
	int ret;

	tp_pair_open_simple(&p, FI_PROGRESS_MANUAL, FI_PROGRESS_MANUAL);
	tp_ping(&p, 1);
	t0 = tp_now_ns();
	c0 = tp_self_cpu_ns();
	ret = fi_cntr_wait(p.s[1].rx_cntr, 2, 500);
	cpu = tp_self_cpu_ns() - c0;
	cr_log_info("fi_cntr_wait(500 ms) -> %d, thread CPU %llu us", ret,
		    (unsigned long long)cpu / 1000);
	cr_assert_eq(ret, -FI_ETIMEDOUT);
	cr_assert_geq(tp_now_ns() - t0, 490000000ULL);
	cr_assert_lt(cpu, 20000000ULL);
	tp_pair_close(&p);
}

/* ---- (g) FI_THREAD_SAFE: application threads share the endpoints --------- */

#define TP_MT_THREADS	4
#define TP_MT_MSGS	10000
#define TP_MT_TOTAL	(TP_MT_THREADS * TP_MT_MSGS)

struct tp_mt {
	struct tp_pair p;
	uint64_t sbuf[TP_MT_TOTAL];
	uint64_t rbuf[TP_MT_TOTAL];
	atomic_uchar sent[TP_MT_TOTAL];
	atomic_uchar recvd[TP_MT_TOTAL];
	atomic_int nsent, nrecvd, errors;
};

struct tp_mt_arg {
	struct tp_mt *mt;
	int index;
};

static uint64_t tp_mt_value(uint64_t tag)
{
	return tag * 0x9e3779b97f4a7c15ULL;
}

/* Read up to a batch from both CQs; record what completed. */
static void tp_mt_reap(struct tp_mt *mt)
{
	struct fi_cq_tagged_entry e[16];
	ssize_t n, i;
	uint64_t tag;

	n = fi_cq_read(mt->p.s[0].cq, e, 16);
	for (i = 0; i < n; i++) {
		tag = (uint64_t)(uintptr_t)e[i].op_context - 1;
		if (tag >= TP_MT_TOTAL || !(e[i].flags & FI_SEND) ||
		    atomic_fetch_add(&mt->sent[tag], 1))
			atomic_fetch_add(&mt->errors, 1);
		atomic_fetch_add(&mt->nsent, 1);
	}
	if (n < 0 && n != -FI_EAGAIN)
		atomic_fetch_add(&mt->errors, 1);
	n = fi_cq_read(mt->p.s[1].cq, e, 16);
	for (i = 0; i < n; i++) {
		tag = (uint64_t)(uintptr_t)e[i].op_context - 1;
		if (tag >= TP_MT_TOTAL || e[i].tag != tag ||
		    !(e[i].flags & FI_RECV) || e[i].len != sizeof(uint64_t) ||
		    atomic_fetch_add(&mt->recvd[tag], 1))
			atomic_fetch_add(&mt->errors, 1);
		atomic_fetch_add(&mt->nrecvd, 1);
	}
	if (n < 0 && n != -FI_EAGAIN)
		atomic_fetch_add(&mt->errors, 1);
}

static void *tp_mt_main(void *arg_)
{
	struct tp_mt_arg *arg = arg_;
	struct tp_mt *mt = arg->mt;
	uint64_t first = (uint64_t)arg->index * TP_MT_MSGS, tag, deadline;
	ssize_t ret;

	for (tag = first; tag < first + TP_MT_MSGS; tag++) {
		void *ctx = (void *)(uintptr_t)(tag + 1);

		while ((ret = fi_trecv(mt->p.s[1].ep, &mt->rbuf[tag],
				       sizeof(uint64_t), NULL, FI_ADDR_UNSPEC,
				       tag, 0, ctx)) == -FI_EAGAIN)
			tp_mt_reap(mt);
		if (ret)
			atomic_fetch_add(&mt->errors, 1);
		while ((ret = fi_tsend(mt->p.s[0].ep, &mt->sbuf[tag],
				       sizeof(uint64_t), NULL, mt->p.s[0].peer,
				       tag, ctx)) == -FI_EAGAIN)
			tp_mt_reap(mt);
		if (ret)
			atomic_fetch_add(&mt->errors, 1);
		if (tag % 8 == 0)
			tp_mt_reap(mt);
	}
	deadline = tp_now_ns() + 60ULL * 1000000000ULL;
	while ((atomic_load(&mt->nsent) < TP_MT_TOTAL ||
		atomic_load(&mt->nrecvd) < TP_MT_TOTAL) &&
	       tp_now_ns() < deadline)
		tp_mt_reap(mt);
	return NULL;
}

static void tp_mt_run(enum fi_progress progress)
{
	struct tp_side_cfg cfg = { .progress = progress,
				   .threading = FI_THREAD_SAFE };
	struct tp_mt_arg args[TP_MT_THREADS];
	pthread_t threads[TP_MT_THREADS];
	struct tp_mt *mt = calloc(1, sizeof(*mt));
	uint64_t t0;
	int i;

	cr_assert_not_null(mt);
	tp_pair_open(&mt->p, &cfg, &cfg);
	tp_ping(&mt->p, UINT64_MAX);
	for (i = 0; i < TP_MT_TOTAL; i++)
		mt->sbuf[i] = tp_mt_value((uint64_t)i);
	t0 = tp_now_ns();
	for (i = 0; i < TP_MT_THREADS; i++) {
		args[i].mt = mt;
		args[i].index = i;
		cr_assert_eq(pthread_create(&threads[i], NULL, tp_mt_main,
					    &args[i]), 0);
	}
	for (i = 0; i < TP_MT_THREADS; i++)
		pthread_join(threads[i], NULL);
	cr_log_info("%s: %d threads x %d tagged messages in %llu ms",
		    progress == FI_PROGRESS_AUTO ? "auto" : "manual",
		    TP_MT_THREADS, TP_MT_MSGS,
		    (unsigned long long)(tp_now_ns() - t0) / 1000000);
	cr_assert_eq(atomic_load(&mt->errors), 0);
	cr_assert_eq(atomic_load(&mt->nsent), TP_MT_TOTAL);
	cr_assert_eq(atomic_load(&mt->nrecvd), TP_MT_TOTAL);
	for (i = 0; i < TP_MT_TOTAL; i++) {
		cr_assert_eq(atomic_load(&mt->sent[i]), 1, "send %d", i);
		cr_assert_eq(atomic_load(&mt->recvd[i]), 1, "recv %d", i);
		cr_assert_eq(mt->rbuf[i], tp_mt_value((uint64_t)i),
			     "payload of tag %d", i);
	}
	tp_pair_close(&mt->p);
	free(mt);
}

Test(progress, thread_safe_many_threads_manual)
{
	tp_mt_run(FI_PROGRESS_MANUAL);
}

Test(progress, thread_safe_many_threads_auto)
{
	tp_mt_run(FI_PROGRESS_AUTO);
}
