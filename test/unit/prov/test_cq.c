/*
 * test_cq.c - completion queues: entry layout per format, read/readfrom/
 * readerr ordering with errors interleaved, err_data rules per API version,
 * overflow beyond `size`, and a CQ opened through the real libfabric. The
 * blocking side (sread, signal, FI_GETWAIT + fi_trywait, wait sets, poll
 * sets, close while bound) is in test_cq_wait.c, same suite and fixture.
 *
 * Completions can only be produced by the data path, so the objects are
 * opened through the provider code linked into this binary
 * (p4f_static_test.h), which lets the test call p4f_cq_write the
 * way the data path will, under the domain lock (p4f_cq_test.h). One test
 * opens a CQ through the real libfabric to check what the plug-in
 * installs.
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
	test_close_ok(&cq->fid);
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

	cr_expect_eq(p4f_cq_space(p4f_cq_of(cq)), expect);
	test_close_ok(&cq->fid);
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
	test_close_ok(&cq->fid);
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
	test_close_ok(&cq->fid);
}

Test(cq, readfrom_reports_source_or_notavail)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_MSG, 8, FI_WAIT_NONE,
				    FI_CQ_COND_NONE);
	struct fi_cq_msg_entry e[3];
	fi_addr_t src[3] = { 77, 77, 77 };
	int ret;

	write_comp(cq, 5);
	ret = p4f_cq_write(p4f_cq_of(cq), NULL, FI_RECV, 1, NULL, 0, 0,
				  FI_ADDR_NOTAVAIL);
	cr_assert_eq(ret, 0);
	cr_assert_eq(fi_cq_readfrom(cq, e, 3, src), 2);
	cr_expect_eq(src[0], 5);
	cr_expect_eq(src[1], FI_ADDR_NOTAVAIL);
	cr_expect_eq(src[2], 77, "only returned entries are written");
	test_close_ok(&cq->fid);
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
	test_close_ok(&cq->fid);
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
	test_close_ok(&cq->fid);
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
	test_close_ok(&cq->fid);
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

	cr_expect_eq(p4f_cq_space(p4f_cq_of(cq)), 4);
	for (i = 0; i < 50; i++)
		write_comp(cq, i);
	write_err(cq, 50, NULL, 0);	/* an error deep in the overflow */
	for (i = 51; i < 100; i++)
		write_comp(cq, i);
	cr_expect_eq(p4f_cq_space(p4f_cq_of(cq)), 0);

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
	cr_expect_eq(p4f_cq_space(p4f_cq_of(cq)), 4);
	test_close_ok(&cq->fid);
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
	t0 = test_now_ms();
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 20000), -FI_EAGAIN);
	cr_expect_lt(test_now_ms() - t0, 10000);
	test_close_ok(&cq->fid);
	test_env_close(&real);
}
