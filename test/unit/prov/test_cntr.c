/*
 * test_cntr.c - counters: read/readerr/add/adderr/set/seterr, the data
 * path's increments, fi_cntr_wait (threshold met, timeout, wake-up by
 * another thread, -FI_EAVAIL when the error value changes), FI_GETWAIT +
 * fi_trywait, wait sets and poll sets with counters, close while bound.
 *
 * Objects are opened through the provider code linked into this binary so
 * the test can call p4f_cntr_inc the way the data path will; one
 * test goes through the real libfabric.
 */
#include <config.h>

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "p4f_static_test.h"

TestSuite(cntr, .init = static_setup, .fini = static_teardown, .timeout = 60);

/* ---- helpers ----------------------------------------------------------- */

static struct fid_cntr *open_cntr(enum fi_wait_obj wait_obj,
				  struct fid_wait *set)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = wait_obj,
		.wait_set = set,
	};
	struct fid_cntr *cntr;
	int ret;

	ret = fi_cntr_open(env.domain, &attr, &cntr, NULL);
	cr_assert_eq(ret, 0, "fi_cntr_open: %s", fi_strerror(-ret));
	return cntr;
}

/* What a completing operation does (a sink, under its worker's lock). */
static void inc(struct fid_cntr *cntr, uint64_t n, bool err)
{
	if (err)
		p4f_cntr_inc_err(p4f_cntr_of(cntr), n);
	else
		p4f_cntr_inc(p4f_cntr_of(cntr), n);
}

/* ---- values ------------------------------------------------------------ */

Test(cntr, add_set_and_errors_are_separate)
{
	struct fid_cntr *cntr = open_cntr(FI_WAIT_NONE, NULL);

	cr_expect_eq(fi_cntr_read(cntr), 0);
	cr_expect_eq(fi_cntr_readerr(cntr), 0);
	cr_assert_eq(fi_cntr_add(cntr, 5), 0);
	cr_assert_eq(fi_cntr_add(cntr, 7), 0);
	cr_expect_eq(fi_cntr_read(cntr), 12);
	cr_expect_eq(fi_cntr_readerr(cntr), 0);
	cr_assert_eq(fi_cntr_adderr(cntr, 3), 0);
	cr_assert_eq(fi_cntr_adderr(cntr, 1), 0);
	cr_expect_eq(fi_cntr_readerr(cntr), 4);
	cr_expect_eq(fi_cntr_read(cntr), 12);
	cr_assert_eq(fi_cntr_set(cntr, 100), 0);
	cr_assert_eq(fi_cntr_seterr(cntr, 9), 0);
	cr_expect_eq(fi_cntr_read(cntr), 100);
	cr_expect_eq(fi_cntr_readerr(cntr), 9);
	inc(cntr, 2, false);
	inc(cntr, 1, true);
	cr_expect_eq(fi_cntr_read(cntr), 102);
	cr_expect_eq(fi_cntr_readerr(cntr), 10);
	cr_assert_eq(fi_cntr_set(cntr, 0), 0);
	cr_expect_eq(fi_cntr_read(cntr), 0);
	cr_expect_eq(fi_cntr_readerr(cntr), 10);
	test_close_ok(&cntr->fid);
}

Test(cntr, open_attributes_and_opsflags)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *cntr;
	uint64_t flags = FI_TRANSMIT | FI_COMPLETION;
	int fd;

	attr.flags = 1;
	cr_expect_eq(fi_cntr_open(env.domain, &attr, &cntr, NULL),
		     -FI_EBADFLAGS);
	attr.flags = 0;
	attr.events = (enum fi_cntr_events)7;
	cr_expect_eq(fi_cntr_open(env.domain, &attr, &cntr, NULL), -FI_ENOSYS);
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.wait_obj = FI_WAIT_YIELD;
	cr_expect_eq(fi_cntr_open(env.domain, &attr, &cntr, NULL), -FI_ENOSYS);
	attr.wait_obj = FI_WAIT_NONE;
	cr_assert_eq(fi_cntr_open(env.domain, &attr, &cntr, NULL), 0);
	cr_assert_eq(fi_control(&cntr->fid, FI_SETOPSFLAG, &flags), 0);
	flags = 0;
	cr_assert_eq(fi_control(&cntr->fid, FI_GETOPSFLAG, &flags), 0);
	cr_expect_eq(flags, FI_TRANSMIT | FI_COMPLETION);
	cr_expect_eq(fi_control(&cntr->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	/* no wait object: fi_cntr_wait polls (fabtests relies on it) */
	cr_expect_eq(fi_cntr_wait(cntr, 1, 10), -FI_ETIMEDOUT);
	cr_assert_eq(fi_cntr_add(cntr, 1), 0);
	cr_expect_eq(fi_cntr_wait(cntr, 1, -1), 0);
	test_close_ok(&cntr->fid);
}

/* ---- fi_cntr_wait ------------------------------------------------------ */

Test(cntr, wait_threshold_already_met)
{
	struct fid_cntr *cntr = open_cntr(FI_WAIT_UNSPEC, NULL);
	uint64_t t0;

	inc(cntr, 3, false);
	t0 = test_now_ms();
	cr_expect_eq(fi_cntr_wait(cntr, 3, 20000), 0);
	cr_expect_eq(fi_cntr_wait(cntr, 2, 20000), 0);
	cr_expect_lt(test_now_ms() - t0, 10000);
	test_close_ok(&cntr->fid);
}

Test(cntr, wait_times_out)
{
	struct fid_cntr *cntr = open_cntr(FI_WAIT_FD, NULL);
	uint64_t t0;

	inc(cntr, 3, false);
	t0 = test_now_ms();
	cr_expect_eq(fi_cntr_wait(cntr, 4, 150), -FI_ETIMEDOUT);
	cr_expect_geq(test_now_ms() - t0, 140, "returned before the timeout");
	cr_expect_eq(fi_cntr_wait(cntr, 4, 0), -FI_ETIMEDOUT);
	cr_expect_eq(fi_cntr_readerr(cntr), 0, "timeout touched the errors");
	test_close_ok(&cntr->fid);
}

struct wait_arg {
	struct fid_cntr *cntr;
	uint64_t threshold;
	int timeout;			/* 0 = 20 s */
	int ret;
	uint64_t elapsed;
	_Atomic pid_t tid;		/* set as the call begins */
};

static void *wait_thread(void *p)
{
	struct wait_arg *arg = p;
	uint64_t t0 = test_now_ms();

	arg->tid = (pid_t)syscall(SYS_gettid);
	arg->ret = fi_cntr_wait(arg->cntr, arg->threshold,
				arg->timeout ? arg->timeout : 20000);
	arg->elapsed = test_now_ms() - t0;
	return NULL;
}

static pthread_t start_waiter(struct wait_arg *arg)
{
	pthread_t thread;

	cr_assert_eq(pthread_create(&thread, NULL, wait_thread, arg), 0);
	test_wait_until_polling(&arg->tid);
	return thread;
}

/* Increments below the threshold do not end the wait; reaching it does. */
Test(cntr, wait_woken_by_increments_from_another_thread)
{
	struct wait_arg arg = { .threshold = 10, .timeout = 300 };
	pthread_t thread;

	arg.cntr = open_cntr(FI_WAIT_UNSPEC, NULL);
	thread = start_waiter(&arg);
	inc(arg.cntr, 4, false);
	inc(arg.cntr, 5, false);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, -FI_ETIMEDOUT, "returned below the threshold");

	arg.timeout = 0;
	arg.tid = 0;
	thread = start_waiter(&arg);
	inc(arg.cntr, 1, false);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, 0);
	cr_expect_geq(fi_cntr_read(arg.cntr), 10);
	cr_expect_lt(arg.elapsed, 10000, "woken by the timeout");
	test_close_ok(&arg.cntr->fid);
}

Test(cntr, wait_woken_by_add_and_set)
{
	struct wait_arg arg = { .threshold = 2 };
	pthread_t thread;

	arg.cntr = open_cntr(FI_WAIT_FD, NULL);
	thread = start_waiter(&arg);
	cr_assert_eq(fi_cntr_add(arg.cntr, 2), 0);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, 0);
	cr_expect_lt(arg.elapsed, 10000);

	arg.threshold = 50;
	arg.tid = 0;
	thread = start_waiter(&arg);
	cr_assert_eq(fi_cntr_set(arg.cntr, 60), 0);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, 0);
	cr_expect_lt(arg.elapsed, 10000);
	test_close_ok(&arg.cntr->fid);
}

Test(cntr, wait_returns_eavail_when_errors_change)
{
	struct wait_arg arg = { .threshold = 10 };
	pthread_t thread;

	arg.cntr = open_cntr(FI_WAIT_UNSPEC, NULL);
	inc(arg.cntr, 1, true);		/* errors before the wait do not count */
	thread = start_waiter(&arg);
	inc(arg.cntr, 1, true);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, -FI_EAVAIL);
	cr_expect_lt(arg.elapsed, 10000, "error change did not wake");

	arg.tid = 0;
	thread = start_waiter(&arg);
	cr_assert_eq(fi_cntr_seterr(arg.cntr, 0), 0);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, -FI_EAVAIL);
	test_close_ok(&arg.cntr->fid);
}

/* ---- fds, trywait, wait sets, poll sets -------------------------------- */

Test(cntr, getwait_fd_and_trywait)
{
	struct fid_cntr *cntr = open_cntr(FI_WAIT_FD, NULL);
	struct fid *fids[] = { &cntr->fid };
	int fd = -1;

	cr_assert_eq(fi_control(&cntr->fid, FI_GETWAIT, &fd), 0);
	cr_assert_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(test_poll_fd(fd, 0), 0);
	inc(cntr, 1, false);
	cr_expect_eq(test_poll_fd(fd, 0), 1, "increment did not signal the fd");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	cr_expect_eq(fi_cntr_read(cntr), 1);
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), 0, "change reported twice");
	cr_expect_eq(test_poll_fd(fd, 0), 0);
	inc(cntr, 1, true);
	cr_expect_eq(test_poll_fd(fd, 0), 1, "error did not signal the fd");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	test_close_ok(&cntr->fid);
}

Test(cntr, waitset_with_counter)
{
	struct fi_wait_attr wattr = { .wait_obj = FI_WAIT_FD };
	struct fid_wait *set;
	struct fid_cntr *cntr;

	cr_assert_eq(fi_wait_open(env.fabric, &wattr, &set), 0);
	cntr = open_cntr(FI_WAIT_SET, set);
	cr_expect_eq(fi_wait(set, 0), -FI_ETIMEDOUT);
	inc(cntr, 1, false);
	cr_expect_eq(fi_wait(set, 20000), 0);
	cr_expect_eq(fi_wait(set, 0), -FI_ETIMEDOUT, "one change, two wakes");
	cr_expect_eq(fi_close(&set->fid), -FI_EBUSY);
	test_close_ok(&cntr->fid);
	test_close_ok(&set->fid);
}

Test(cntr, pollset_reports_changes_once)
{
	struct fid_poll *ps;
	struct fid_cntr *a, *b;
	void *ctx[4];

	a = open_cntr(FI_WAIT_NONE, NULL);
	b = open_cntr(FI_WAIT_NONE, NULL);
	a->fid.context = (void *)0xa;
	b->fid.context = (void *)0xb;
	cr_assert_eq(fi_poll_open(env.domain, NULL, &ps), 0);
	cr_assert_eq(fi_poll_add(ps, &a->fid, 0), 0);
	cr_assert_eq(fi_poll_add(ps, &b->fid, 0), 0);
	cr_expect_eq(fi_poll(ps, ctx, 4), 0);

	inc(b, 1, false);
	cr_assert_eq(fi_poll(ps, ctx, 4), 1);
	cr_expect_eq(ctx[0], (void *)0xb);
	cr_expect_eq(fi_poll(ps, ctx, 4), 0, "a change reported twice");
	inc(a, 1, true);
	cr_assert_eq(fi_poll(ps, ctx, 4), 1);
	cr_expect_eq(ctx[0], (void *)0xa);
	/* the application's own add/set are not events (fi_poll(3)) */
	cr_assert_eq(fi_cntr_add(a, 5), 0);
	cr_assert_eq(fi_cntr_set(b, 9), 0);
	cr_expect_eq(fi_poll(ps, ctx, 4), 0);

	cr_expect_eq(fi_close(&a->fid), -FI_EBUSY, "closed while in a set");
	test_close_ok(&ps->fid);
	test_close_ok(&a->fid);
	test_close_ok(&b->fid);
}

Test(cntr, close_while_bound_to_endpoint_is_ebusy)
{
	struct fid_cntr *cntr = open_cntr(FI_WAIT_NONE, NULL);

	static_close_while_bound(&cntr->fid, FI_SEND | FI_RECV);
}

Test(cntr, plugin_cntr_through_libfabric)
{
	struct test_env real;
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fid_cntr *cntr;

	test_env_open(&real, NULL);
	cr_assert_eq(fi_cntr_open(real.domain, &attr, &cntr, NULL), 0);
	cr_assert_eq(fi_cntr_add(cntr, 4), 0);
	cr_expect_eq(fi_cntr_read(cntr), 4);
	cr_expect_eq(fi_cntr_wait(cntr, 4, 20000), 0);
	cr_expect_eq(fi_cntr_wait(cntr, 5, 50), -FI_ETIMEDOUT);
	cr_expect_eq(fi_close(&real.domain->fid), -FI_EBUSY, "counter holds it");
	test_close_ok(&cntr->fid);
	test_env_close(&real);
}
