/*
 * test_cq_wait.c - waiting on completion queues (suite cq, fixture
 * p4f_cq_test.h, as test_cq.c): sread (timeout, threshold, wake-up by a
 * writer thread and by fi_cq_signal), FI_GETWAIT + fi_trywait, the
 * transport's fd in the wait object, wait sets and poll sets with CQs,
 * close while bound.
 *
 * The objects are opened through the provider code linked into this
 * binary, so that completions can be written the way the data path does.
 */
#include <config.h>

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "p4f_cq_test.h"

TestSuite(cq, .init = static_setup, .fini = static_teardown, .timeout = 60);

/* ---- sread ------------------------------------------------------------- */

Test(cq, sread_times_out_with_eagain)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_UNSPEC,
				    FI_CQ_COND_NONE);
	struct fi_cq_entry e;
	uint64_t t0 = test_now_ms();

	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 150), -FI_EAGAIN);
	cr_expect_geq(test_now_ms() - t0, 140, "returned before the timeout");
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 0), -FI_EAGAIN);
	test_close_ok(&cq->fid);
}

Test(cq, sread_returns_queued_entry_at_once)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, 8, FI_WAIT_FD,
				    FI_CQ_COND_NONE);
	struct fi_cq_tagged_entry e;
	fi_addr_t src = 0;
	uint64_t t0;

	write_comp(cq, 9);
	t0 = test_now_ms();
	cr_assert_eq(fi_cq_sreadfrom(cq, &e, 1, &src, NULL, 10000), 1);
	cr_expect_lt(test_now_ms() - t0, 5000);
	expect_comp(&e, 9);
	cr_expect_eq(src, 9);
	write_err(cq, 1, NULL, 0);
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 10000), -FI_EAVAIL);
	test_close_ok(&cq->fid);
}

Test(cq, sread_without_wait_object_is_refused)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	struct fi_cq_entry e;
	int fd;

	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 10), -FI_EINVAL);
	cr_expect_eq(fi_cq_signal(cq), -FI_ENOSYS);
	cr_expect_eq(fi_control(&cq->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	cr_expect_eq(fi_trywait(env.fabric, (struct fid *[]){ &cq->fid }, 1),
		     -FI_EINVAL);
	test_close_ok(&cq->fid);
}

struct sread_arg {
	struct fid_cq *cq;
	size_t count;
	size_t threshold;
	int timeout;
	ssize_t ret;
	struct fi_cq_tagged_entry e[8];
	uint64_t elapsed;
	_Atomic pid_t tid;		/* set as the call begins */
};

static void *sread_thread(void *p)
{
	struct sread_arg *arg = p;
	uint64_t t0 = test_now_ms();

	arg->tid = (pid_t)syscall(SYS_gettid);
	arg->ret = fi_cq_sread(arg->cq, arg->e, arg->count,
			       arg->threshold ? &arg->threshold : NULL,
			       arg->timeout);
	arg->elapsed = test_now_ms() - t0;
	return NULL;
}

Test(cq, sread_woken_by_writer_thread)
{
	struct sread_arg arg = { .count = 1, .timeout = 20000 };
	pthread_t thread;

	arg.cq = open_cq(FI_CQ_FORMAT_TAGGED, 8, FI_WAIT_UNSPEC,
			 FI_CQ_COND_NONE);
	cr_assert_eq(pthread_create(&thread, NULL, sread_thread, &arg), 0);
	test_wait_until_polling(&arg.tid);
	write_comp(arg.cq, 42);
	pthread_join(thread, NULL);
	cr_assert_eq(arg.ret, 1, "sread: %zd", arg.ret);
	expect_comp(&arg.e[0], 42);
	cr_expect_lt(arg.elapsed, 10000, "woken by the timeout, not the write");
	test_close_ok(&arg.cq->fid);
}

Test(cq, sread_woken_by_signal)
{
	struct sread_arg arg = { .count = 1, .timeout = 20000 };
	pthread_t thread;

	arg.cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_UNSPEC,
			 FI_CQ_COND_NONE);
	cr_assert_eq(pthread_create(&thread, NULL, sread_thread, &arg), 0);
	test_wait_until_polling(&arg.tid);
	cr_assert_eq(fi_cq_signal(arg.cq), 0);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, -FI_EAGAIN);
	cr_expect_lt(arg.elapsed, 10000, "signal ignored");
	test_close_ok(&arg.cq->fid);
}

/* fi_cq(3): the signal unblocks any thread waiting, not just one. */
Test(cq, signal_wakes_every_sleeping_reader)
{
	struct sread_arg a = { .count = 1, .timeout = 20000 };
	struct sread_arg b = { .count = 1, .timeout = 20000 };
	pthread_t ta, tb;

	a.cq = b.cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_UNSPEC,
			      FI_CQ_COND_NONE);
	cr_assert_eq(pthread_create(&ta, NULL, sread_thread, &a), 0);
	cr_assert_eq(pthread_create(&tb, NULL, sread_thread, &b), 0);
	test_wait_until_polling(&a.tid);
	test_wait_until_polling(&b.tid);
	cr_assert_eq(fi_cq_signal(a.cq), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	cr_expect_eq(a.ret, -FI_EAGAIN);
	cr_expect_eq(b.ret, -FI_EAGAIN);
	cr_expect_lt(a.elapsed, 10000, "first reader not woken");
	cr_expect_lt(b.elapsed, 10000, "second reader not woken");
	test_close_ok(&a.cq->fid);
}

Test(cq, signal_before_sread_is_not_lost)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_FD,
				    FI_CQ_COND_NONE);
	struct fi_cq_entry e;
	uint64_t t0;

	cr_assert_eq(fi_cq_signal(cq), 0);
	t0 = test_now_ms();
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 20000), -FI_EAGAIN);
	cr_expect_lt(test_now_ms() - t0, 10000);
	/* consumed: the next sread waits for its timeout again */
	t0 = test_now_ms();
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 100), -FI_EAGAIN);
	cr_expect_geq(test_now_ms() - t0, 90);
	test_close_ok(&cq->fid);
}

/* Two of three entries: a threshold sread waits, then returns what it has. */
Test(cq, sread_threshold_waits_for_enough_entries)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, 8, FI_WAIT_UNSPEC,
				    FI_CQ_COND_THRESHOLD);
	struct fi_cq_tagged_entry e[8];
	size_t threshold = 3;
	uint64_t t0;

	write_comp(cq, 0);
	write_comp(cq, 1);
	t0 = test_now_ms();
	cr_assert_eq(fi_cq_sread(cq, e, 8, &threshold, 150), 2);
	cr_expect_geq(test_now_ms() - t0, 140, "returned before the threshold");
	expect_comp(&e[0], 0);
	expect_comp(&e[1], 1);

	write_comp(cq, 2);
	write_comp(cq, 3);
	write_comp(cq, 4);
	t0 = test_now_ms();
	cr_assert_eq(fi_cq_sread(cq, e, 8, &threshold, 20000), 3);
	cr_expect_lt(test_now_ms() - t0, 10000);
	expect_comp(&e[2], 4);
	test_close_ok(&cq->fid);
}

static void *write_three_thread(void *p)
{
	struct sread_arg *arg = p;
	uintptr_t i;

	test_wait_until_polling(&arg->tid);
	for (i = 0; i < 3; i++)
		write_comp(arg->cq, i);
	return NULL;
}

Test(cq, sread_threshold_woken_by_writer)
{
	struct sread_arg arg = { .count = 8, .threshold = 3, .timeout = 20000 };
	pthread_t writer;

	arg.cq = open_cq(FI_CQ_FORMAT_TAGGED, 8, FI_WAIT_UNSPEC,
			 FI_CQ_COND_THRESHOLD);
	cr_assert_eq(pthread_create(&writer, NULL, write_three_thread, &arg), 0);
	sread_thread(&arg);
	pthread_join(writer, NULL);
	cr_assert_eq(arg.ret, 3, "sread: %zd", arg.ret);
	expect_comp(&arg.e[0], 0);
	expect_comp(&arg.e[2], 2);
	cr_expect_lt(arg.elapsed, 10000);
	test_close_ok(&arg.cq->fid);
}

/* A writer and an sread reader race on a FI_THREAD_SAFE domain. */
static void *write_many_thread(void *p)
{
	struct fid_cq *cq = p;
	uintptr_t i;

	for (i = 0; i < 5000; i++)
		write_comp(cq, i);
	return NULL;
}

Test(cq, concurrent_writer_and_sread_lose_nothing)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, 64, FI_WAIT_FD,
				    FI_CQ_COND_NONE);
	struct fi_cq_tagged_entry e[16];
	pthread_t writer;
	uintptr_t next = 0;
	ssize_t n, k;

	cr_assert(p4f_domain_of(env.domain)->lock.active);
	cr_assert_eq(pthread_create(&writer, NULL, write_many_thread, cq), 0);
	while (next < 5000) {
		n = fi_cq_sread(cq, e, 16, NULL, 10000);
		cr_assert_gt(n, 0, "sread after %zu: %zd", (size_t)next, n);
		for (k = 0; k < n; k++)
			cr_assert_eq(e[k].op_context, (void *)(0x1000 + next++));
	}
	pthread_join(writer, NULL);
	cr_expect_eq(fi_cq_read(cq, e, 1), -FI_EAGAIN);
	test_close_ok(&cq->fid);
}

/* ---- FI_GETWAIT and fi_trywait ----------------------------------------- */

Test(cq, getwait_fd_follows_entries_and_trywait)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_FD,
				    FI_CQ_COND_NONE);
	struct fid *fids[] = { &cq->fid };
	enum fi_wait_obj obj = FI_WAIT_NONE;
	struct fi_cq_entry e;
	int fd = -1;

	cr_assert_eq(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fi_control(&cq->fid, FI_GETWAITOBJ, &obj), 0);
	cr_expect_eq(obj, FI_WAIT_FD);

	cr_assert_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0, "readable with nothing queued");
	write_comp(cq, 1);
	cr_expect_eq(test_poll_fd(fd, 0), 1, "entry written, fd not readable");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cq_read(cq, &e, 1), 1);
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0, "trywait left the fd readable");
	write_err(cq, 0, NULL, 0);
	cr_expect_eq(test_poll_fd(fd, 0), 1, "error entry did not signal");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	test_close_ok(&cq->fid);
}

Test(cq, unspec_wait_object_is_an_fd)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_UNSPEC,
				    FI_CQ_COND_NONE);
	struct fid *fids[] = { &cq->fid };
	int fd = -1;

	cr_assert_eq(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	cr_assert_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0);
	write_comp(cq, 1);
	cr_expect_eq(test_poll_fd(fd, 0), 1);
	test_close_ok(&cq->fid);
}

/* A transport fd added by the domain makes the CQ's fd readable. */
Test(cq, transport_fd_joins_the_wait_object)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_FD,
				    FI_CQ_COND_NONE);
	struct fid_cq *none = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_NONE,
				      FI_CQ_COND_NONE);
	struct p4f_wait *wait = p4f_cq_waitobj(p4f_cq_of(cq));
	int pipefd[2], fd;
	char c = 'x';

	cr_expect_null(p4f_cq_waitobj(p4f_cq_of(none)));
	cr_assert_not_null(wait);
	cr_assert_eq(pipe(pipefd), 0);
	cr_assert_eq(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	cr_assert_eq(p4f_wait_add_fd(wait, pipefd[0]), 0);
	cr_expect_eq(p4f_wait_add_fd(wait, pipefd[0]), -FI_EALREADY);
	cr_expect_eq(test_poll_fd(fd, 0), 0);
	cr_assert_eq(write(pipefd[1], &c, 1), 1);
	cr_expect_eq(test_poll_fd(fd, 0), 1, "transport data did not reach the fd");
	cr_assert_eq(p4f_wait_del_fd(wait, pipefd[0]), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0, "a removed fd still counts");
	close(pipefd[0]);
	close(pipefd[1]);
	test_close_ok(&cq->fid);
	test_close_ok(&none->fid);
}

/* ---- wait sets --------------------------------------------------------- */

static struct fid_wait *open_waitset(void)
{
	struct fi_wait_attr attr = { .wait_obj = FI_WAIT_FD };
	struct fid_wait *set;

	cr_assert_eq(fi_wait_open(env.fabric, &attr, &set), 0);
	return set;
}

static struct fid_cq *open_cq_in_set(struct fid_wait *set)
{
	struct fi_cq_attr attr = {
		.size = 8, .format = FI_CQ_FORMAT_CONTEXT,
		.wait_obj = FI_WAIT_SET, .wait_set = set,
	};
	struct fid_cq *cq;

	cr_assert_eq(fi_cq_open(env.domain, &attr, &cq, NULL), 0);
	return cq;
}

Test(cq, waitset_wait_and_trywait)
{
	struct fid_wait *set = open_waitset();
	struct fid_cq *cq1 = open_cq_in_set(set), *cq2 = open_cq_in_set(set);
	struct fid *fids[] = { &set->fid };
	struct fi_cq_entry e;
	int fd, pipefd[2];
	char c = 'x';

	cr_assert_eq(fi_control(&set->fid, FI_GETWAIT, &fd), 0);
	cr_expect_eq(fi_wait(set, 0), -FI_ETIMEDOUT);
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0);

	write_comp(cq2, 1);
	cr_expect_eq(test_poll_fd(fd, 0), 1, "member entry did not reach the set");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	cr_expect_eq(fi_wait(set, 20000), 0);
	cr_assert_eq(fi_cq_read(cq2, &e, 1), 1);
	cr_expect_eq(fi_wait(set, 50), -FI_ETIMEDOUT, "stale wake-up");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0);

	/* a member's transport fd reaches the set's fd too */
	cr_assert_eq(pipe(pipefd), 0);
	cr_assert_eq(p4f_wait_add_fd(p4f_cq_waitobj(p4f_cq_of(cq1)),
				     pipefd[0]), 0);
	cr_assert_eq(write(pipefd[1], &c, 1), 1);
	cr_expect_eq(test_poll_fd(fd, 0), 1);
	cr_assert_eq(p4f_wait_del_fd(p4f_cq_waitobj(p4f_cq_of(cq1)),
				     pipefd[0]), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0);
	close(pipefd[0]);
	close(pipefd[1]);

	cr_expect_eq(fi_close(&set->fid), -FI_EBUSY);
	test_close_ok(&cq1->fid);
	test_close_ok(&cq2->fid);
	test_close_ok(&set->fid);
}

struct wait_arg {
	struct fid_wait *set;
	int ret;
	uint64_t elapsed;
	_Atomic pid_t tid;		/* set as the call begins */
};

static void *wait_thread(void *p)
{
	struct wait_arg *arg = p;
	uint64_t t0 = test_now_ms();

	arg->tid = (pid_t)syscall(SYS_gettid);
	arg->ret = fi_wait(arg->set, 20000);
	arg->elapsed = test_now_ms() - t0;
	return NULL;
}

Test(cq, waitset_woken_by_member_write)
{
	struct wait_arg arg = { 0 };
	struct fid_cq *cq;
	pthread_t thread;

	arg.set = open_waitset();
	cq = open_cq_in_set(arg.set);
	cr_assert_eq(pthread_create(&thread, NULL, wait_thread, &arg), 0);
	test_wait_until_polling(&arg.tid);
	write_comp(cq, 3);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, 0);
	cr_expect_lt(arg.elapsed, 10000);
	test_close_ok(&cq->fid);
	test_close_ok(&arg.set->fid);
}

/* ---- poll sets and bindings -------------------------------------------- */

Test(cq, pollset_reports_cqs_with_entries)
{
	struct fi_poll_attr attr = { 0 };
	struct fid_poll *ps;
	struct fid_cq *cq1, *cq2;
	struct fi_cq_entry e;
	void *ctx[4];

	cq1 = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_NONE, FI_CQ_COND_NONE);
	cq2 = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_NONE, FI_CQ_COND_NONE);
	cq1->fid.context = (void *)0x11;
	cq2->fid.context = (void *)0x22;
	cr_assert_eq(fi_poll_open(env.domain, &attr, &ps), 0);
	cr_assert_eq(fi_poll_add(ps, &cq1->fid, 0), 0);
	cr_assert_eq(fi_poll_add(ps, &cq2->fid, 0), 0);
	cr_expect_eq(fi_poll_add(ps, &cq2->fid, 0), -FI_EALREADY);

	cr_expect_eq(fi_poll(ps, ctx, 4), 0);
	write_comp(cq2, 0);
	cr_assert_eq(fi_poll(ps, ctx, 4), 1);
	cr_expect_eq(ctx[0], (void *)0x22);
	write_comp(cq1, 0);
	cr_assert_eq(fi_poll(ps, ctx, 1), 1, "count not honoured");
	cr_assert_eq(fi_poll(ps, ctx, 4), 2);
	cr_expect_eq(ctx[0], (void *)0x11);
	cr_expect_eq(ctx[1], (void *)0x22);
	cr_assert_eq(fi_cq_read(cq1, &e, 1), 1);
	cr_assert_eq(fi_cq_read(cq2, &e, 1), 1);
	cr_expect_eq(fi_poll(ps, ctx, 4), 0);

	cr_expect_eq(fi_close(&cq1->fid), -FI_EBUSY, "closed while in a set");
	cr_assert_eq(fi_poll_del(ps, &cq1->fid, 0), 0);
	cr_expect_eq(fi_poll_del(ps, &cq1->fid, 0), -FI_EINVAL);
	test_close_ok(&cq1->fid);
	test_close_ok(&ps->fid);	/* releases cq2 */
	test_close_ok(&cq2->fid);
}

Test(cq, close_while_bound_to_endpoint_is_ebusy)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, 8, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);

	static_close_while_bound(&cq->fid, FI_TRANSMIT | FI_RECV);
}
