/*
 * p4f_cq_test.h - what the CQ tests (test_cq.c, test_cq_wait.c) share on
 * top of p4f_static_test.h: opening a CQ in the fixture's domain, and
 * writing completions and errors into it the way the data path does (under
 * the domain lock), each field derived from an index so that a mix-up
 * shows, with the checks that go with them.
 *
 * One test binary includes it once: helpers are static inline.
 */
#ifndef P4F_CQ_TEST_H
#define P4F_CQ_TEST_H

#include "p4f_static_test.h"

static inline struct fid_cq *open_cq(enum fi_cq_format format, size_t size,
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

/* Completion i: every field derived from i so a mix-up shows. */
static inline void write_comp(struct fid_cq *cq, uintptr_t i)
{
	int ret;

	ret = p4f_cq_write(p4f_cq_of(cq), (void *)(0x1000 + i),
			   FI_RECV | FI_TAGGED, 100 + i, (void *)(0x2000 + i),
			   0x3000 + i, 0x4000 + i, (fi_addr_t)i);
	cr_assert_eq(ret, 0, "p4f_cq_write: %s", fi_strerror(-ret));
}

static inline void write_err(struct fid_cq *cq, uintptr_t i, const void *data,
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

	ret = p4f_cq_write_error(p4f_cq_of(cq), &err);
	cr_assert_eq(ret, 0, "p4f_cq_write_error: %s", fi_strerror(-ret));
}

static inline void expect_comp(const struct fi_cq_tagged_entry *e, uintptr_t i)
{
	cr_expect_eq(e->op_context, (void *)(0x1000 + i), "entry %zu", (size_t)i);
	cr_expect_eq(e->flags, FI_RECV | FI_TAGGED);
	cr_expect_eq(e->len, 100 + i);
	cr_expect_eq(e->tag, 0x4000 + i);
}

static inline void expect_err(const struct fi_cq_err_entry *e, uintptr_t i)
{
	cr_expect_eq(e->op_context, (void *)(0x9000 + i));
	cr_expect_eq(e->err, FI_ETRUNC);
	cr_expect_eq(e->prov_errno, FI_EIO);
	cr_expect_eq(e->olen, 50 + i);
	cr_expect_eq(e->flags, FI_SEND);
}

static inline ssize_t read_one(struct fid_cq *cq, struct fi_cq_tagged_entry *e)
{
	return fi_cq_read(cq, e, 1);
}

#endif /* P4F_CQ_TEST_H */
