/*
 * p4f_progress_test.h - what the progress tests (test_progress.c,
 * test_progress_wake.c) share: finding the provider's progress threads
 * and reading their CPU time and wake-ups under /proc/self/task, and two
 * endpoints over TCP on the loopback interface, each in a domain (and
 * fabric) of its own, so reading one side's CQ never progresses the other:
 * what happens at a side whose application does not call into libfabric
 * is the work of that domain's progress thread, or does not happen. That
 * is the difference from p4f_pair.h (one domain, loop transport), whose
 * helpers this file mirrors.
 *
 * One test binary includes it once: helpers are static inline.
 */
#ifndef P4F_PROGRESS_TEST_H
#define P4F_PROGRESS_TEST_H

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

static inline void tp_init(void)
{
	/* before the first fi_getinfo of this (per-test) process */
	setenv("FI_PORTALS_TRANSPORT", "tcp", 1);
	setenv("FI_PORTALS_IFACE", "lo", 1);
}

/* ---- time and threads ---------------------------------------------------- */

static inline uint64_t tp_clock_ns(clockid_t clock)
{
	struct timespec ts;

	cr_assert_eq(clock_gettime(clock, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t tp_now_ns(void)
{
	return tp_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t tp_self_cpu_ns(void)
{
	return tp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline pid_t tp_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* CPU time of any thread of this process (the kernel's per-tid clock). */
static inline uint64_t tp_tid_cpu_ns(pid_t tid)
{
	/* MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), shifted unsigned: a
	 * left shift of a negative int is undefined */
	return tp_clock_ns((clockid_t)((~(uint32_t)tid << 3) | 6u));
}

static inline int tp_read_task(pid_t tid, const char *what, char *buf,
			       size_t len)
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

static inline long tp_tid_wakeups(pid_t tid)
{
	char buf[2048], *p;

	cr_assert_eq(tp_read_task(tid, "status", buf, sizeof(buf)), 0);
	p = strstr(buf, "voluntary_ctxt_switches:");
	cr_assert_not_null(p);
	return strtol(p + strlen("voluntary_ctxt_switches:"), NULL, 10);
}

/* Threads of this process named name; their tids in tids. */
static inline int tp_threads(const char *name, pid_t *tids, int max)
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

static inline int tp_progress_threads(pid_t *tids)
{
	return tp_threads(TP_THREAD_NAME, tids, TP_MAX_THREADS);
}

/*
 * The same once joined threads have left /proc: a thread's entry stays a
 * moment after pthread_join returned (the kernel wakes the joiner before
 * the task is reaped), so look again, for up to a second. A thread that
 * was not joined is still there then.
 */
static inline int tp_progress_threads_gone(pid_t *tids)
{
	struct timespec ten_ms = { 0, 10000000 };
	int n, i;

	for (i = 0; (n = tp_progress_threads(tids)) > 0 && i < 100; i++)
		nanosleep(&ten_ms, NULL);
	return n;
}

/*
 * Wait (by looking, not by sleeping a guessed time) until thread tid sleeps
 * in poll(2) or epoll_wait(2): then a wake-up comes from an fd.
 */
static inline void tp_wait_asleep_in_poll(pid_t tid)
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

/* ---- two endpoints, two domains, over TCP -------------------------------- */

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

static inline void tp_side_open(struct tp_side *s,
				const struct tp_side_cfg *cfg)
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

static inline void tp_side_close(struct tp_side *s)
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

static inline void tp_pair_open(struct tp_pair *p,
				const struct tp_side_cfg *c0,
				const struct tp_side_cfg *c1)
{
	int i;

	tp_side_open(&p->s[0], c0);
	tp_side_open(&p->s[1], c1);
	for (i = 0; i < 2; i++)
		cr_assert_eq(fi_av_insert(p->s[i].av, p->s[!i].name, 1,
					  &p->s[i].peer, 0, NULL), 1);
}

static inline void tp_pair_open_simple(struct tp_pair *p,
				       enum fi_progress p0,
				       enum fi_progress p1)
{
	struct tp_side_cfg c0 = { .progress = p0 }, c1 = { .progress = p1 };

	tp_pair_open(p, &c0, &c1);
}

static inline void tp_pair_close(struct tp_pair *p)
{
	tp_side_close(&p->s[0]);
	tp_side_close(&p->s[1]);
}

/* One completion from side s, sleeping in fi_cq_sread. */
static inline void tp_sread_one(struct tp_side *s,
				struct fi_cq_tagged_entry *e)
{
	ssize_t ret = fi_cq_sread(s->cq, e, 1, NULL, TP_TIMEOUT_MS);

	cr_assert_eq(ret, 1, "fi_cq_sread: %s", fi_strerror((int)-ret));
}

/*
 * Both sides polled by one thread until each has its completion. A side
 * that has its completion is still progressed (a read of 0 entries): a
 * send completes once its payload is copied, maybe before it left.
 */
static inline void tp_poll_both(struct tp_pair *p,
				struct fi_cq_tagged_entry *e0,
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
static inline void tp_ping(struct tp_pair *p, uint64_t tag)
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
static inline int tp_epoll_count(int epfd)
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

static inline int tp_getwait(struct fid *fid)
{
	int fd = -1;

	cr_assert_eq(fi_control(fid, FI_GETWAIT, &fd), 0);
	cr_assert_geq(fd, 0);
	return fd;
}

#endif /* P4F_PROGRESS_TEST_H */
