/*
 * test_cq.c - completion queues: entry layout per format, read/readfrom/
 * readerr ordering with errors interleaved, err_data rules per API version,
 * overflow beyond `size`, sread (timeout, threshold, wake-up by a writer
 * thread and by fi_cq_signal), FI_GETWAIT + fi_trywait, wait sets and poll
 * sets with CQs, close while bound.
 *
 * Completions can only be produced by the data path, so the objects are
 * opened through the provider code linked into this binary
 * (p4f_fabric_open), which lets the test call p4f_cq_write_locked the way
 * the data path will, under the domain lock. One test opens a CQ through
 * the real libfabric to check what the plug-in installs.
 */
#include <config.h>

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "p4f.h"
#include "p4f_test.h"

struct cq_env {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
};

static struct cq_env env;

static void cq_setup(void)
{
	struct fi_info *hints = test_hints();
	int ret;

	ret = p4f_getinfo(TEST_FI_VERSION, NULL, NULL, 0, hints, &env.info);
	fi_freeinfo(hints);
	cr_assert_eq(ret, 0, "p4f_getinfo: %s", fi_strerror(-ret));
	ret = p4f_fabric_open(env.info->fabric_attr, &env.fabric, NULL);
	cr_assert_eq(ret, 0, "p4f_fabric_open: %s", fi_strerror(-ret));
	ret = fi_domain(env.fabric, env.info, &env.domain, NULL);
	cr_assert_eq(ret, 0, "fi_domain: %s", fi_strerror(-ret));
}

static void cq_teardown(void)
{
	/* 0 here also proves every CQ, set and binding gave its reference back */
	if (env.domain)
		cr_expect_eq(fi_close(&env.domain->fid), 0);
	if (env.fabric)
		cr_expect_eq(fi_close(&env.fabric->fid), 0);
	fi_freeinfo(env.info);
	memset(&env, 0, sizeof(env));
}

TestSuite(cq, .init = cq_setup, .fini = cq_teardown, .timeout = 60);

/* ---- helpers ----------------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct fid_cq *open_cq(enum fi_cq_format format, size_t size,
			      enum fi_wait_obj wait_obj,
			      enum fi_cq_wait_cond cond)
{
	struct fi_cq_attr attr = {
		.size = size, .format = format, .wait_obj = wait_obj,
		.wait_cond = cond,
	};
	struct fid_cq *cq;
	int ret;

	ret = fi_cq_open(env.domain, &attr, &cq, (void *)0xc0);
	cr_assert_eq(ret, 0, "fi_cq_open: %s", fi_strerror(-ret));
	return cq;
}

static void close_ok(struct fid *fid)
{
	int ret = fi_close(fid);

	cr_assert_eq(ret, 0, "fi_close: %s", fi_strerror(-ret));
}

static void domain_lock(void)
{
	p4u_lock_acquire(&p4f_domain_of(env.domain)->lock);
}

static void domain_unlock(void)
{
	p4u_lock_release(&p4f_domain_of(env.domain)->lock);
}

/* Completion i: every field derived from i so a mix-up shows. */
static void write_comp(struct fid_cq *cq, uintptr_t i)
{
	int ret;

	domain_lock();
	ret = p4f_cq_write_locked(p4f_cq_of(cq), (void *)(0x1000 + i),
				  FI_RECV | FI_TAGGED, 100 + i,
				  (void *)(0x2000 + i), 0x3000 + i, 0x4000 + i,
				  (fi_addr_t)i);
	domain_unlock();
	cr_assert_eq(ret, 0, "p4f_cq_write_locked: %s", fi_strerror(-ret));
}

static void write_err(struct fid_cq *cq, uintptr_t i, const void *data,
		      size_t data_len)
{
	struct fi_cq_err_entry err = {
		.op_context = (void *)(0x9000 + i),
		.flags = FI_SEND,
		.len = 7,
		.olen = 50 + i,
		.err = FI_ETRUNC,
		.prov_errno = FI_EIO,
		.err_data = (void *)data,
		.err_data_size = data_len,
	};
	int ret;

	domain_lock();
	ret = p4f_cq_write_error_locked(p4f_cq_of(cq), &err);
	domain_unlock();
	cr_assert_eq(ret, 0, "p4f_cq_write_error_locked: %s",
		     fi_strerror(-ret));
}

static void expect_comp(const struct fi_cq_tagged_entry *e, uintptr_t i)
{
	cr_expect_eq(e->op_context, (void *)(0x1000 + i), "entry %zu", (size_t)i);
	cr_expect_eq(e->flags, FI_RECV | FI_TAGGED);
	cr_expect_eq(e->len, 100 + i);
	cr_expect_eq(e->tag, 0x4000 + i);
}

static void expect_err(const struct fi_cq_err_entry *e, uintptr_t i)
{
	cr_expect_eq(e->op_context, (void *)(0x9000 + i));
	cr_expect_eq(e->err, FI_ETRUNC);
	cr_expect_eq(e->prov_errno, FI_EIO);
	cr_expect_eq(e->olen, 50 + i);
	cr_expect_eq(e->flags, FI_SEND);
}

static ssize_t read_one(struct fid_cq *cq, struct fi_cq_tagged_entry *e)
{
	return fi_cq_read(cq, e, 1);
}

/* ---- formats ----------------------------------------------------------- */

/*
 * One completion read into a buffer pre-filled with 0xab: the format's
 * fields carry the written values and not one byte past the entry is
 * touched, so each format's size and layout are checked.
 */
static void check_format(enum fi_cq_format format, size_t entry_size)
{
	struct fid_cq *cq = open_cq(format, 8, FI_WAIT_NONE, FI_CQ_COND_NONE);
	struct fi_cq_tagged_entry e;
	uint8_t raw[sizeof(e) * 2];
	size_t i;

	write_comp(cq, 3);
	memset(raw, 0xab, sizeof(raw));
	cr_assert_eq(fi_cq_read(cq, raw, 1), 1);
	for (i = entry_size; i < sizeof(raw); i++)
		cr_assert_eq(raw[i], 0xab, "byte %zu written past the entry", i);
	memset(&e, 0, sizeof(e));
	memcpy(&e, raw, entry_size);
	cr_expect_eq(e.op_context, (void *)0x1003);
	if (entry_size >= sizeof(struct fi_cq_msg_entry)) {
		cr_expect_eq(e.flags, FI_RECV | FI_TAGGED);
		cr_expect_eq(e.len, 103);
	}
	if (entry_size >= sizeof(struct fi_cq_data_entry)) {
		cr_expect_eq(e.buf, (void *)0x2003);
		cr_expect_eq(e.data, 0x3003);
	}
	if (entry_size == sizeof(struct fi_cq_tagged_entry))
		cr_expect_eq(e.tag, 0x4003);
	close_ok(&cq->fid);
}

Test(cq, format_unspec_is_context)
{
	check_format(FI_CQ_FORMAT_UNSPEC, sizeof(struct fi_cq_entry));
}

Test(cq, format_context)
{
	check_format(FI_CQ_FORMAT_CONTEXT, sizeof(struct fi_cq_entry));
}

Test(cq, format_msg)
{
	check_format(FI_CQ_FORMAT_MSG, sizeof(struct fi_cq_msg_entry));
}

Test(cq, format_data)
{
	check_format(FI_CQ_FORMAT_DATA, sizeof(struct fi_cq_data_entry));
}

Test(cq, format_tagged)
{
	check_format(FI_CQ_FORMAT_TAGGED, sizeof(struct fi_cq_tagged_entry));
}

Test(cq, open_rejects_bad_attributes)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fid_cq *cq;

	attr.format = (enum fi_cq_format)42;
	cr_expect_eq(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_EINVAL);
	attr.format = FI_CQ_FORMAT_CONTEXT;
	attr.wait_obj = FI_WAIT_FD;
	attr.wait_cond = (enum fi_cq_wait_cond)9;
	cr_expect_eq(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_EINVAL);
	attr.wait_obj = FI_WAIT_NONE;
	attr.wait_cond = FI_CQ_COND_NONE;
	attr.flags = FI_PEER;
	cr_expect_eq(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_EBADFLAGS);
	attr.flags = 0;
	attr.wait_obj = FI_WAIT_MUTEX_COND;
	cr_expect_eq(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_ENOSYS);
	attr.wait_obj = FI_WAIT_YIELD;
	cr_expect_eq(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_ENOSYS);
	attr.wait_obj = FI_WAIT_SET;	/* without a set */
	cr_expect_eq(fi_cq_open(env.domain, &attr, &cq, NULL), -FI_EINVAL);
}

Test(cq, size_zero_takes_the_default_depth)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 0, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	size_t expect = p4f_params.cq_size ? p4f_params.cq_size : 4096;

	domain_lock();
	cr_expect_eq(p4f_cq_space_locked(p4f_cq_of(cq)), expect);
	domain_unlock();
	close_ok(&cq->fid);
}

/* ---- read, readfrom, readerr ------------------------------------------- */

Test(cq, empty_read_is_eagain)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, 8, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = { 0 };

	cr_expect_eq(read_one(cq, &e), -FI_EAGAIN);
	cr_expect_eq(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
	cr_expect_eq(fi_cq_read(cq, NULL, 0), -FI_EAGAIN);
	write_comp(cq, 0);
	cr_expect_eq(fi_cq_read(cq, NULL, 0), 0, "count 0: entry present");
	cr_expect_eq(read_one(cq, &e), 1);
	close_ok(&cq->fid);
}

/* s0 s1 E0 s2 E1 E2 s3: reads stop at each error, readerr takes it. */
Test(cq, errors_interleaved_keep_order)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, 16, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	struct fi_cq_tagged_entry e[8];
	struct fi_cq_err_entry err;
	fi_addr_t src[8];

	write_comp(cq, 0);
	write_comp(cq, 1);
	write_err(cq, 0, NULL, 0);
	write_comp(cq, 2);
	write_err(cq, 1, NULL, 0);
	write_err(cq, 2, NULL, 0);
	write_comp(cq, 3);

	cr_assert_eq(fi_cq_read(cq, e, 8), 2);
	expect_comp(&e[0], 0);
	expect_comp(&e[1], 1);
	cr_assert_eq(fi_cq_read(cq, e, 8), -FI_EAVAIL);
	cr_assert_eq(fi_cq_readfrom(cq, e, 8, src), -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	expect_err(&err, 0);
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN, "success is next");
	cr_assert_eq(fi_cq_read(cq, e, 8), 1);
	expect_comp(&e[0], 2);
	cr_assert_eq(fi_cq_read(cq, e, 8), -FI_EAVAIL);
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	expect_err(&err, 1);
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	expect_err(&err, 2);
	cr_assert_eq(fi_cq_read(cq, e, 8), 1);
	expect_comp(&e[0], 3);
	cr_expect_eq(fi_cq_read(cq, e, 8), -FI_EAGAIN);
	cr_expect_eq(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
	close_ok(&cq->fid);
}

Test(cq, readfrom_reports_source_or_notavail)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_MSG, 8, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	struct fi_cq_msg_entry e[3];
	fi_addr_t src[3] = { 77, 77, 77 };
	int ret;

	write_comp(cq, 5);
	domain_lock();
	ret = p4f_cq_write_locked(p4f_cq_of(cq), NULL, FI_RECV, 1, NULL, 0, 0,
				  FI_ADDR_NOTAVAIL);
	domain_unlock();
	cr_assert_eq(ret, 0);
	cr_assert_eq(fi_cq_readfrom(cq, e, 3, src), 2);
	cr_expect_eq(src[0], 5);
	cr_expect_eq(src[1], FI_ADDR_NOTAVAIL);
	cr_expect_eq(src[2], 77, "only returned entries are written");
	close_ok(&cq->fid);
}

Test(cq, readerr_copies_err_data_into_user_buffer)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	const char data[] = "0123456789";
	char small[4], big[32];
	struct fi_cq_err_entry err;

	write_err(cq, 0, data, sizeof(data));
	write_err(cq, 1, data, sizeof(data));

	memset(&err, 0, sizeof(err));
	memset(small, 'x', sizeof(small));
	err.err_data = small;
	err.err_data_size = sizeof(small);
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	cr_expect_eq(err.err_data, small, "the caller's buffer is kept");
	cr_expect_eq(err.err_data_size, sizeof(small), "cut to the buffer");
	cr_expect_arr_eq(small, data, sizeof(small));

	memset(&err, 0, sizeof(err));
	err.err_data = big;
	err.err_data_size = sizeof(big);
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	expect_err(&err, 1);
	cr_expect_eq(err.err_data_size, sizeof(data));
	cr_expect_arr_eq(big, data, sizeof(data));
	close_ok(&cq->fid);
}

/* err_data_size 0: err_data points to a provider buffer holding the data. */
Test(cq, readerr_size_zero_gets_provider_buffer)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	const char data[] = "abcdef";
	char mine[16];
	struct fi_cq_err_entry err;

	write_err(cq, 0, data, sizeof(data));
	memset(&err, 0, sizeof(err));
	err.err_data = mine;
	err.err_data_size = 0;
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	cr_assert_not_null(err.err_data);
	cr_expect_neq(err.err_data, mine);
	cr_expect_eq(err.err_data_size, sizeof(data));
	cr_expect_arr_eq(err.err_data, data, sizeof(data));
	close_ok(&cq->fid);
}

/*
 * Before API 1.5 the entry ends at err_data: the caller's buffer is ignored,
 * err_data is the provider's, and nothing is written where err_data_size
 * would be (a 1.4 application's struct has no such field).
 */
Test(cq, readerr_api_1_4_layout)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	const char data[] = "v14";
	char mine[16];
	struct fi_cq_err_entry err;

	p4f_domain_of(env.domain)->api_version = FI_VERSION(1, 4);
	write_err(cq, 4, data, sizeof(data));
	memset(&err, 0, sizeof(err));
	err.err_data = mine;
	err.err_data_size = 0xfeed;	/* a 1.4 struct's neighbour memory */
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	expect_err(&err, 4);
	cr_expect_neq(err.err_data, mine);
	cr_expect_arr_eq(err.err_data, data, sizeof(data));
	cr_expect_eq(err.err_data_size, 0xfeed, "written past a 1.4 entry");
	close_ok(&cq->fid);
}

/* ---- overflow ---------------------------------------------------------- */

Test(cq, overflow_keeps_every_entry_in_order)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, 4, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	struct fi_cq_tagged_entry e[3];
	struct fi_cq_err_entry err;
	uintptr_t next = 0, i;
	ssize_t n, k;

	domain_lock();
	cr_expect_eq(p4f_cq_space_locked(p4f_cq_of(cq)), 4);
	domain_unlock();
	for (i = 0; i < 50; i++)
		write_comp(cq, i);
	write_err(cq, 50, NULL, 0);	/* an error deep in the overflow */
	for (i = 51; i < 100; i++)
		write_comp(cq, i);
	domain_lock();
	cr_expect_eq(p4f_cq_space_locked(p4f_cq_of(cq)), 0);
	domain_unlock();

	/* read in threes while writing more: order holds across the seam */
	while (next < 130) {
		n = fi_cq_read(cq, e, 3);
		if (n == -FI_EAVAIL) {
			cr_assert_eq(next, 50);
			cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
			expect_err(&err, 50);
			next++;
			continue;
		}
		cr_assert_gt(n, 0, "lost entries after %zu: %zd", (size_t)next, n);
		for (k = 0; k < n; k++)
			expect_comp(&e[k], next++);
		if (next == 60)
			for (i = 100; i < 130; i++)
				write_comp(cq, i);
	}
	cr_expect_eq(fi_cq_read(cq, e, 3), -FI_EAGAIN);
	domain_lock();
	cr_expect_eq(p4f_cq_space_locked(p4f_cq_of(cq)), 4);
	domain_unlock();
	close_ok(&cq->fid);
}

/* ---- sread ------------------------------------------------------------- */

Test(cq, sread_times_out_with_eagain)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_UNSPEC,
				    FI_CQ_COND_NONE);
	struct fi_cq_entry e;
	uint64_t t0 = now_ms();

	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 150), -FI_EAGAIN);
	cr_expect_geq(now_ms() - t0, 140, "returned before the timeout");
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 0), -FI_EAGAIN);
	close_ok(&cq->fid);
}

Test(cq, sread_returns_queued_entry_at_once)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, 8, FI_WAIT_FD,
				    FI_CQ_COND_NONE);
	struct fi_cq_tagged_entry e;
	fi_addr_t src = 0;
	uint64_t t0;

	write_comp(cq, 9);
	t0 = now_ms();
	cr_assert_eq(fi_cq_sreadfrom(cq, &e, 1, &src, NULL, 10000), 1);
	cr_expect_lt(now_ms() - t0, 5000);
	expect_comp(&e, 9);
	cr_expect_eq(src, 9);
	write_err(cq, 1, NULL, 0);
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 10000), -FI_EAVAIL);
	close_ok(&cq->fid);
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
	close_ok(&cq->fid);
}

struct sread_arg {
	struct fid_cq *cq;
	size_t count;
	size_t threshold;
	int timeout;
	ssize_t ret;
	struct fi_cq_tagged_entry e[8];
	uint64_t elapsed;
	volatile pid_t tid;		/* set as the call begins */
};

static void *sread_thread(void *p)
{
	struct sread_arg *arg = p;
	uint64_t t0 = now_ms();

	arg->tid = (pid_t)syscall(SYS_gettid);
	arg->ret = fi_cq_sread(arg->cq, arg->e, arg->count,
			       arg->threshold ? &arg->threshold : NULL,
			       arg->timeout);
	arg->elapsed = now_ms() - t0;
	return NULL;
}

/*
 * Wait until thread tid sleeps in poll(2), so that what ends its wait is
 * the wake-up under test. Reads /proc/self/task/<tid>/syscall; should that
 * be unavailable, falls back to a short pause.
 */
static void wait_until_polling(volatile pid_t *tid)
{
	char path[64];
	long nr;
	FILE *f;
	int i;

	while (!*tid)
		sched_yield();
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)*tid);
	for (i = 0; i < 50000; i++) {
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%ld", &nr) != 1)
			nr = -1;
		fclose(f);
		if (nr == SYS_poll || nr == SYS_ppoll)
			return;
		usleep(100);
	}
	usleep(50 * 1000);
}

Test(cq, sread_woken_by_writer_thread)
{
	struct sread_arg arg = { .count = 1, .timeout = 20000 };
	pthread_t thread;

	arg.cq = open_cq(FI_CQ_FORMAT_TAGGED, 8, FI_WAIT_UNSPEC,
			 FI_CQ_COND_NONE);
	cr_assert_eq(pthread_create(&thread, NULL, sread_thread, &arg), 0);
	wait_until_polling(&arg.tid);
	write_comp(arg.cq, 42);
	pthread_join(thread, NULL);
	cr_assert_eq(arg.ret, 1, "sread: %zd", arg.ret);
	expect_comp(&arg.e[0], 42);
	cr_expect_lt(arg.elapsed, 10000, "woken by the timeout, not the write");
	close_ok(&arg.cq->fid);
}

Test(cq, sread_woken_by_signal)
{
	struct sread_arg arg = { .count = 1, .timeout = 20000 };
	pthread_t thread;

	arg.cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_UNSPEC,
			 FI_CQ_COND_NONE);
	cr_assert_eq(pthread_create(&thread, NULL, sread_thread, &arg), 0);
	wait_until_polling(&arg.tid);
	cr_assert_eq(fi_cq_signal(arg.cq), 0);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, -FI_EAGAIN);
	cr_expect_lt(arg.elapsed, 10000, "signal ignored");
	close_ok(&arg.cq->fid);
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
	wait_until_polling(&a.tid);
	wait_until_polling(&b.tid);
	cr_assert_eq(fi_cq_signal(a.cq), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	cr_expect_eq(a.ret, -FI_EAGAIN);
	cr_expect_eq(b.ret, -FI_EAGAIN);
	cr_expect_lt(a.elapsed, 10000, "first reader not woken");
	cr_expect_lt(b.elapsed, 10000, "second reader not woken");
	close_ok(&a.cq->fid);
}

Test(cq, signal_before_sread_is_not_lost)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_FD,
				    FI_CQ_COND_NONE);
	struct fi_cq_entry e;
	uint64_t t0;

	cr_assert_eq(fi_cq_signal(cq), 0);
	t0 = now_ms();
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 20000), -FI_EAGAIN);
	cr_expect_lt(now_ms() - t0, 10000);
	/* consumed: the next sread waits for its timeout again */
	t0 = now_ms();
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 100), -FI_EAGAIN);
	cr_expect_geq(now_ms() - t0, 90);
	close_ok(&cq->fid);
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
	t0 = now_ms();
	cr_assert_eq(fi_cq_sread(cq, e, 8, &threshold, 150), 2);
	cr_expect_geq(now_ms() - t0, 140, "returned before the threshold");
	expect_comp(&e[0], 0);
	expect_comp(&e[1], 1);

	write_comp(cq, 2);
	write_comp(cq, 3);
	write_comp(cq, 4);
	t0 = now_ms();
	cr_assert_eq(fi_cq_sread(cq, e, 8, &threshold, 20000), 3);
	cr_expect_lt(now_ms() - t0, 10000);
	expect_comp(&e[2], 4);
	close_ok(&cq->fid);
}

static void *write_three_thread(void *p)
{
	struct sread_arg *arg = p;
	uintptr_t i;

	wait_until_polling(&arg->tid);
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
	close_ok(&arg.cq->fid);
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
	close_ok(&cq->fid);
}

/* ---- FI_GETWAIT and fi_trywait ----------------------------------------- */

static int poll_fd(int fd, int timeout)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout);
}

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
	cr_expect_eq(poll_fd(fd, 0), 0, "readable with nothing queued");
	write_comp(cq, 1);
	cr_expect_eq(poll_fd(fd, 0), 1, "entry written, fd not readable");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cq_read(cq, &e, 1), 1);
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(poll_fd(fd, 0), 0, "trywait left the fd readable");
	write_err(cq, 0, NULL, 0);
	cr_expect_eq(poll_fd(fd, 0), 1, "error entry did not signal");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	close_ok(&cq->fid);
}

Test(cq, unspec_wait_object_is_an_fd)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 8, FI_WAIT_UNSPEC,
				    FI_CQ_COND_NONE);
	struct fid *fids[] = { &cq->fid };
	int fd = -1;

	cr_assert_eq(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	cr_assert_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(poll_fd(fd, 0), 0);
	write_comp(cq, 1);
	cr_expect_eq(poll_fd(fd, 0), 1);
	close_ok(&cq->fid);
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
	cr_expect_eq(poll_fd(fd, 0), 0);
	cr_assert_eq(write(pipefd[1], &c, 1), 1);
	cr_expect_eq(poll_fd(fd, 0), 1, "transport data did not reach the fd");
	cr_assert_eq(p4f_wait_del_fd(wait, pipefd[0]), 0);
	cr_expect_eq(poll_fd(fd, 0), 0, "a removed fd still counts");
	close(pipefd[0]);
	close(pipefd[1]);
	close_ok(&cq->fid);
	close_ok(&none->fid);
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
	cr_expect_eq(poll_fd(fd, 0), 0);

	write_comp(cq2, 1);
	cr_expect_eq(poll_fd(fd, 0), 1, "member entry did not reach the set");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), -FI_EAGAIN);
	cr_expect_eq(fi_wait(set, 20000), 0);
	cr_assert_eq(fi_cq_read(cq2, &e, 1), 1);
	cr_expect_eq(fi_wait(set, 50), -FI_ETIMEDOUT, "stale wake-up");
	cr_expect_eq(fi_trywait(env.fabric, fids, 1), 0);
	cr_expect_eq(poll_fd(fd, 0), 0);

	/* a member's transport fd reaches the set's fd too */
	cr_assert_eq(pipe(pipefd), 0);
	cr_assert_eq(p4f_wait_add_fd(p4f_cq_waitobj(p4f_cq_of(cq1)),
				     pipefd[0]), 0);
	cr_assert_eq(write(pipefd[1], &c, 1), 1);
	cr_expect_eq(poll_fd(fd, 0), 1);
	cr_assert_eq(p4f_wait_del_fd(p4f_cq_waitobj(p4f_cq_of(cq1)),
				     pipefd[0]), 0);
	cr_expect_eq(poll_fd(fd, 0), 0);
	close(pipefd[0]);
	close(pipefd[1]);

	cr_expect_eq(fi_close(&set->fid), -FI_EBUSY);
	close_ok(&cq1->fid);
	close_ok(&cq2->fid);
	close_ok(&set->fid);
}

struct wait_arg {
	struct fid_wait *set;
	int ret;
	uint64_t elapsed;
	volatile pid_t tid;		/* set as the call begins */
};

static void *wait_thread(void *p)
{
	struct wait_arg *arg = p;
	uint64_t t0 = now_ms();

	arg->tid = (pid_t)syscall(SYS_gettid);
	arg->ret = fi_wait(arg->set, 20000);
	arg->elapsed = now_ms() - t0;
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
	wait_until_polling(&arg.tid);
	write_comp(cq, 3);
	pthread_join(thread, NULL);
	cr_expect_eq(arg.ret, 0);
	cr_expect_lt(arg.elapsed, 10000);
	close_ok(&cq->fid);
	close_ok(&arg.set->fid);
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
	close_ok(&cq1->fid);
	close_ok(&ps->fid);	/* releases cq2 */
	close_ok(&cq2->fid);
}

Test(cq, close_while_bound_to_endpoint_is_ebusy)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, 8, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	struct fid_ep *ep;
	int ret;

	ret = fi_endpoint(env.domain, env.info, &ep, NULL);
	cr_assert_eq(ret, 0, "fi_endpoint: %s", fi_strerror(-ret));
	cr_assert_eq(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_expect_eq(fi_close(&cq->fid), -FI_EBUSY);
	close_ok(&ep->fid);
	close_ok(&cq->fid);
}

/* ---- through the real libfabric ---------------------------------------- */

Test(cq, plugin_cq_through_libfabric)
{
	struct test_env real;
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fi_cq_tagged_entry e;
	struct fid_cq *cq;
	uint64_t t0;

	test_env_open(&real, NULL);
	cr_assert_eq(fi_cq_open(real.domain, &attr, &cq, NULL), 0);
	cr_expect_eq(fi_cq_read(cq, &e, 1), -FI_EAGAIN);
	cr_expect_eq(fi_close(&real.domain->fid), -FI_EBUSY, "CQ holds it");
	cr_assert_eq(fi_cq_signal(cq), 0);
	t0 = now_ms();
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 20000), -FI_EAGAIN);
	cr_expect_lt(now_ms() - t0, 10000);
	close_ok(&cq->fid);
	test_env_close(&real);
}
