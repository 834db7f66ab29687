/*
 * test_progress.c - progress models and blocking waits (p4f_progress.c,
 * p4f_wait.c, p4f_ep.c's wait fds, the blocking loops of p4f_cq.c and
 * p4f_cntr.c) over real TCP on the loopback interface.
 *
 * Every test opens two endpoints, each in a domain (and fabric) of its
 * own, so reading one side's CQ never progresses the other: what happens
 * at a side whose application does not call into libfabric is the work
 * of that domain's progress thread, or does not happen. That is the
 * difference from p4f_pair.h (one domain, loop transport), whose helpers
 * this file mirrors.
 *
 * The progress threads are found by name (p4f_progress) under
 * /proc/self/task; their CPU time is read through the per-thread CPU
 * clock of their tid, their wake-ups from voluntary_ctxt_switches, and
 * whether a thread is asleep in poll/epoll from its wchan. CPU-time
 * numbers are logged with cr_log_info (run the binary with --verbose).
 */
#include <config.h>

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "p4f_test.h"

#define TP_TIMEOUT_MS	10000	/* what a blocking wait may take at most */
#define TP_RDZV_SIZE	((size_t)1 << 20)
#define TP_THREAD_NAME	"p4f_progress"
#define TP_MAX_THREADS	16

static void tp_init(void)
{
	/* before the first fi_getinfo of this (per-test) process */
	setenv("FI_PORTALS_TRANSPORT", "tcp", 1);
	setenv("FI_PORTALS_IFACE", "lo", 1);
}

TestSuite(progress, .init = tp_init, .timeout = 120);

/* ---- time and threads ---------------------------------------------------- */

static uint64_t tp_clock_ns(clockid_t clock)
{
	struct timespec ts;

	cr_assert_eq(clock_gettime(clock, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t tp_now_ns(void)
{
	return tp_clock_ns(CLOCK_MONOTONIC);
}

static uint64_t tp_self_cpu_ns(void)
{
	return tp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static pid_t tp_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* CPU time of any thread of this process (the kernel's per-tid clock). */
static uint64_t tp_tid_cpu_ns(pid_t tid)
{
	/* MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), shifted unsigned: a
	 * left shift of a negative int is undefined */
	return tp_clock_ns((clockid_t)((~(uint32_t)tid << 3) | 6u));
}

static int tp_read_task(pid_t tid, const char *what, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, what);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

static long tp_tid_wakeups(pid_t tid)
{
	char buf[2048], *p;

	cr_assert_eq(tp_read_task(tid, "status", buf, sizeof(buf)), 0);
	p = strstr(buf, "voluntary_ctxt_switches:");
	cr_assert_not_null(p);
	return strtol(p + strlen("voluntary_ctxt_switches:"), NULL, 10);
}

/* Threads of this process named name; their tids in tids. */
static int tp_threads(const char *name, pid_t *tids, int max)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	char comm[64];
	int n = 0;

	cr_assert_not_null(dir);
	while ((de = readdir(dir))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0 || tp_read_task(tid, "comm", comm, sizeof(comm)))
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		if (!strcmp(comm, name) && n < max)
			tids[n++] = tid;
	}
	closedir(dir);
	return n;
}

static int tp_progress_threads(pid_t *tids)
{
	return tp_threads(TP_THREAD_NAME, tids, TP_MAX_THREADS);
}

/*
 * Wait (by looking, not by sleeping a guessed time) until thread tid sleeps
 * in poll(2) or epoll_wait(2): then a wake-up comes from an fd.
 */
static void tp_wait_asleep_in_poll(pid_t tid)
{
	uint64_t deadline = tp_now_ns() + (uint64_t)TP_TIMEOUT_MS * 1000000;
	char wchan[128], stat[512], *state;

	while (tp_now_ns() < deadline) {
		if (!tp_read_task(tid, "wchan", wchan, sizeof(wchan)) &&
		    strstr(wchan, "poll"))
			return;
		/* without wchan (restricted /proc) a sleeping state will do */
		if (!tp_read_task(tid, "wchan", wchan, sizeof(wchan)) &&
		    !strcmp(wchan, "0") &&
		    !tp_read_task(tid, "stat", stat, sizeof(stat)) &&
		    (state = strrchr(stat, ')')) && state[2] == 'S')
			return;
		sched_yield();
	}
	cr_assert_fail("thread %d never slept in poll", (int)tid);
}

/* ---- two endpoints, two domains, over TCP --------------------------------- */

struct tp_side_cfg {
	enum fi_progress progress;
	enum fi_threading threading;	/* 0: the provider's default */
	bool waitset;			/* CQ and counters in a wait set */
};

struct tp_side {
	struct test_env env;
	struct fid_wait *set;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_cntr *tx_cntr, *rx_cntr;
	fi_addr_t peer;
	char name[64];
	size_t namelen;
};

struct tp_pair {
	struct tp_side s[2];
};

static void tp_side_open(struct tp_side *s, const struct tp_side_cfg *cfg)
{
	struct fi_info *hints = test_hints();
	enum fi_wait_obj wobj = cfg->waitset ? FI_WAIT_SET : FI_WAIT_UNSPEC;
	struct fi_wait_attr wa = { .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fi_cntr_attr cta = { .events = FI_CNTR_EVENTS_COMP };

	memset(s, 0, sizeof(*s));
	hints->caps = FI_TAGGED | FI_MSG;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->data_progress = cfg->progress;
	hints->domain_attr->threading = cfg->threading;
	test_env_open(&s->env, hints);
	cr_assert_eq(s->env.info->domain_attr->data_progress, cfg->progress);
	if (cfg->waitset)
		cr_assert_eq(fi_wait_open(s->env.fabric, &wa, &s->set), 0);
	ca.wait_obj = cta.wait_obj = wobj;
	ca.wait_set = cta.wait_set = s->set;
	cr_assert_eq(fi_endpoint(s->env.domain, s->env.info, &s->ep, NULL), 0);
	cr_assert_eq(fi_cq_open(s->env.domain, &ca, &s->cq, NULL), 0);
	cr_assert_eq(fi_av_open(s->env.domain, &aa, &s->av, NULL), 0);
	cr_assert_eq(fi_cntr_open(s->env.domain, &cta, &s->tx_cntr, NULL), 0);
	cr_assert_eq(fi_cntr_open(s->env.domain, &cta, &s->rx_cntr, NULL), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->tx_cntr->fid, FI_SEND), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->rx_cntr->fid, FI_RECV), 0);
	cr_assert_eq(fi_enable(s->ep), 0);
	s->namelen = sizeof(s->name);
	cr_assert_eq(fi_getname(&s->ep->fid, s->name, &s->namelen), 0);
}

static void tp_side_close(struct tp_side *s)
{
	cr_expect_eq(fi_close(&s->ep->fid), 0);
	cr_expect_eq(fi_close(&s->cq->fid), 0);
	cr_expect_eq(fi_close(&s->av->fid), 0);
	cr_expect_eq(fi_close(&s->tx_cntr->fid), 0);
	cr_expect_eq(fi_close(&s->rx_cntr->fid), 0);
	if (s->set)
		cr_expect_eq(fi_close(&s->set->fid), 0);
	test_env_close(&s->env);
}

static void tp_pair_open(struct tp_pair *p, const struct tp_side_cfg *c0,
			 const struct tp_side_cfg *c1)
{
	int i;

	tp_side_open(&p->s[0], c0);
	tp_side_open(&p->s[1], c1);
	for (i = 0; i < 2; i++)
		cr_assert_eq(fi_av_insert(p->s[i].av, p->s[!i].name, 1,
					  &p->s[i].peer, 0, NULL), 1);
}

static void tp_pair_open_simple(struct tp_pair *p, enum fi_progress p0,
				enum fi_progress p1)
{
	struct tp_side_cfg c0 = { .progress = p0 }, c1 = { .progress = p1 };

	tp_pair_open(p, &c0, &c1);
}

static void tp_pair_close(struct tp_pair *p)
{
	tp_side_close(&p->s[0]);
	tp_side_close(&p->s[1]);
}

/* One completion from side s, sleeping in fi_cq_sread. */
static void tp_sread_one(struct tp_side *s, struct fi_cq_tagged_entry *e)
{
	ssize_t ret = fi_cq_sread(s->cq, e, 1, NULL, TP_TIMEOUT_MS);

	cr_assert_eq(ret, 1, "fi_cq_sread: %s", fi_strerror((int)-ret));
}

/*
 * Both sides polled by one thread until each has its completion. A side
 * that has its completion is still progressed (a read of 0 entries): a
 * send completes once its payload is copied, maybe before it left.
 */
static void tp_poll_both(struct tp_pair *p, struct fi_cq_tagged_entry *e0,
			 struct fi_cq_tagged_entry *e1)
{
	uint64_t deadline = tp_now_ns() + (uint64_t)TP_TIMEOUT_MS * 1000000;
	bool got0 = false, got1 = false;

	while (!(got0 && got1) && tp_now_ns() < deadline) {
		if (!got0)
			got0 = fi_cq_read(p->s[0].cq, e0, 1) == 1;
		else
			(void)fi_cq_read(p->s[0].cq, NULL, 0);
		if (!got1)
			got1 = fi_cq_read(p->s[1].cq, e1, 1) == 1;
		else
			(void)fi_cq_read(p->s[1].cq, NULL, 0);
	}
	cr_assert(got0 && got1, "no completion (%d %d)", got0, got1);
}

/*
 * A small tagged message from side 0 to side 1. The first one also sets
 * up the TCP connection, whose handshake needs both sides to progress:
 * under manual progress one thread must drive both.
 */
static void tp_ping(struct tp_pair *p, uint64_t tag)
{
	struct fi_cq_tagged_entry e0, e1;
	uint64_t out = tag, in = 0;

	cr_assert_eq(fi_trecv(p->s[1].ep, &in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			      tag, 0, &in), 0);
	cr_assert_eq(fi_tsend(p->s[0].ep, &out, sizeof(out), NULL,
			      p->s[0].peer, tag, &out), 0);
	tp_poll_both(p, &e0, &e1);
	cr_assert_eq(e0.op_context, &out);
	cr_assert_eq(e1.op_context, &in);
	cr_assert_eq(in, tag);
}

/* Count the fds an epoll fd watches (/proc/self/fdinfo lists them). */
static int tp_epoll_count(int epfd)
{
	char path[64], line[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "tfd:", 4))
			n++;
	fclose(f);
	return n;
}

static int tp_getwait(struct fid *fid)
{
	int fd = -1;

	cr_assert_eq(fi_control(fid, FI_GETWAIT, &fd), 0);
	cr_assert_geq(fd, 0);
	return fd;
}

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

	cr_assert_eq(tp_progress_threads(tids), 0);
	tp_pair_open_simple(&p, FI_PROGRESS_MANUAL, FI_PROGRESS_AUTO);
	cr_assert_eq(tp_progress_threads(tids), 1);
	tp_ping(&p, 1);
	tp_pair_close(&p);
	cr_assert_eq(tp_progress_threads(tids), 0, "thread not joined");
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
	cr_assert_eq(tp_progress_threads(tids), 0);
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
	cr_assert_eq(tp_progress_threads(tids), 0);
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
	cr_assert_eq(tp_progress_threads(tids), 0);
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

static int tp_poll_fd(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms);
}

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
		return tp_poll_fd(tp_getwait(&s->cq->fid), TP_TIMEOUT_MS);
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
	cr_assert_eq(tp_poll_fd(fd, 0), 0, "fd readable with nothing there");
	cr_assert_eq(fi_trecv(p.s[1].ep, &in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			      2, 0, &in), 0);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, &out, sizeof(out), NULL,
			      p.s[0].peer, 2, &out), 0);
	tp_sread_one(&p.s[0], &e);
	cr_assert_eq(tp_poll_fd(fd, TP_TIMEOUT_MS), 1, "fd never readable");
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cq_read(p.s[1].cq, &e, 1), 1);
	cr_assert_eq(e.op_context, &in);
	cr_assert_eq(in, out);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	cr_assert_eq(tp_poll_fd(fd, 0), 0, "fd still readable");
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
	cr_assert_eq(tp_poll_fd(tp_getwait(&p.s[1].tx_cntr->fid),
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
	cr_assert_eq(tp_poll_fd(fd, 0), 0);
	cr_assert_eq(fi_trecv(p.s[1].ep, &in, sizeof(in), NULL, FI_ADDR_UNSPEC,
			      2, 0, &in), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, &out, sizeof(out), NULL,
			      p.s[0].peer, 2, &out), 0);
	tp_sread_one(&p.s[0], &e);
	cr_assert_eq(tp_poll_fd(fd, TP_TIMEOUT_MS), 1);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cntr_read(p.s[1].rx_cntr), 2);
	tp_sread_one(&p.s[1], &e);
	cr_assert_eq(fi_trywait(p.s[1].env.fabric, fids, 1), 0);
	cr_assert_eq(tp_poll_fd(fd, 0), 0);
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
		cr_assert_eq(tp_poll_fd(fd, TP_TIMEOUT_MS), 1);
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
 * p4f_ep_wait_fds: a wait object holds the NI fd of every endpoint bound
 * to it, once each (a CQ for both directions, a counter for several
 * events), from fi_enable to the endpoint's fi_close.
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
		cr_assert_eq(fi_endpoint(env.domain, env.info, &ep[i], NULL), 0);
		cr_assert_eq(fi_ep_bind(ep[i], &av->fid, 0), 0);
		/* ep 0: one CQ both ways; ep 1: the CQ one way only */
		cr_assert_eq(fi_ep_bind(ep[i], &cq->fid,
					i ? FI_RECV : FI_TRANSMIT | FI_RECV), 0);
		if (i)
			cr_assert_eq(fi_ep_bind(ep[i], &cq_nowait->fid,
						FI_TRANSMIT), 0);
		cr_assert_eq(fi_ep_bind(ep[i], &cntr->fid,
					FI_SEND | FI_RECV), 0);
		/* nothing until fi_enable */
		cr_assert_eq(tp_epoll_count(cq_fd), 1 + i);
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
