/*
 * test_rma.c - fi_read* / fi_write* through libfabric on two endpoints of
 * one domain over the loop transport: every call form, both addressing
 * modes (offsets with application keys; FI_MR_VIRT_ADDR with provider
 * keys), FI_REMOTE_CQ_DATA at the target, the local, remote and MR
 * counters, selective completion, FI_FENCE, MRs registered before and
 * after an endpoint, and the access errors (bad key, closed MR, out of
 * range, missing rights): an error completion at the initiator, memory
 * untouched, an error count on the MR's counter.
 */
#include <inttypes.h>

#include "p4f_rma_test.h"

/* tx_attr->iov_limit of the provider (p4f.h) */
#define RP_IOV_LIMIT 8

static struct pair p;
static uint8_t tgt[1 << 21], loc[1 << 21];

static void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 13 + (i >> 9));
}

static void setup_offset(void)
{
	rpair_open(&p, 0, 0);
	memset(tgt, 0xee, sizeof(tgt));
	fill(loc, sizeof(loc), 1);
}

static void setup_virt(void)
{
	rpair_open(&p, FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED, 0);
	memset(tgt, 0xee, sizeof(tgt));
	fill(loc, sizeof(loc), 1);
}

static void teardown(void)
{
	pair_close(&p);
}

TestSuite(rma, .init = setup_offset, .fini = teardown, .timeout = 60);
TestSuite(rma_virt, .init = setup_virt, .fini = teardown, .timeout = 60);

static void expect_ok(int side, void *ctx, uint64_t flags)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	ssize_t ret = rp_comp(&p, side, &e, &err);

	cr_assert_eq(ret, 1, "completion: %zd (%s)", ret,
		     ret == -FI_EAVAIL ? fi_strerror(err.err) : "");
	cr_expect_eq(e.op_context, ctx);
	cr_expect_eq(e.flags, flags, "flags %#" PRIx64, e.flags);
}

static int expect_err(int side, void *ctx)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	cr_assert_eq(rp_comp(&p, side, &e, &err), -FI_EAVAIL);
	cr_expect_eq(err.op_context, ctx);
	return err.err;
}

static void expect_untouched(size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		cr_assert_eq(tgt[i], 0xee, "target byte %zu touched", i);
}

/* ---- data ---------------------------------------------------------------- */

static void write_then_read(size_t off, size_t len)
{
	struct fid_mr *mr = rp_reg(&p, tgt, len + off + 64,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 42);
	uint64_t key = fi_mr_key(mr);
	static uint8_t back[1 << 21];
	int ctx;

	cr_assert_eq(fi_write(p.s[0].ep, loc, len, NULL, p.s[0].peer,
			      rp_addr(&p, tgt, off), key, &ctx), 0);
	expect_ok(0, &ctx, FI_RMA | FI_WRITE);
	cr_assert_eq(memcmp(tgt + off, loc, len), 0);
	cr_expect_eq(tgt[off - 1], 0xee);
	cr_expect_eq(tgt[off + len], 0xee);

	memset(back, 0, len);
	cr_assert_eq(fi_read(p.s[0].ep, back, len, NULL, p.s[0].peer,
			     rp_addr(&p, tgt, off), key, &ctx), 0);
	expect_ok(0, &ctx, FI_RMA | FI_READ);
	cr_assert_eq(memcmp(back, loc, len), 0);
	/* nothing reports at the target without data or counters asked */
	pair_quiet(&p, 1);
	rp_wait_cntr(&p, p.s[0].tx_cntr, 2, false);
	rp_wait_cntr(&p, p.s[1].rx_cntr, 2, false);
	cr_assert_eq(fi_close(&mr->fid), 0);
}

Test(rma, write_read_small)
{
	write_then_read(10, 100);
}

Test(rma, write_read_large)
{
	/* past the eager size: rendezvous pull and pushed reply */
	write_then_read(8, (1 << 20) + 3);
}

Test(rma_virt, write_read_small)
{
	write_then_read(10, 100);
}

Test(rma_virt, write_read_large)
{
	write_then_read(8, (1 << 20) + 3);
}

Test(rma_virt, provider_keys_differ)
{
	struct fid_mr *a = rp_reg(&p, tgt, 64, FI_REMOTE_WRITE, 1);
	struct fid_mr *b = rp_reg(&p, tgt + 64, 64, FI_REMOTE_WRITE, 1);

	cr_expect_neq(fi_mr_key(a), fi_mr_key(b));
	cr_assert_eq(fi_write(p.s[0].ep, loc, 8, NULL, p.s[0].peer,
			      (uintptr_t)tgt + 64, fi_mr_key(b), NULL), 0);
	expect_ok(0, NULL, FI_RMA | FI_WRITE);
	cr_expect_eq(memcmp(tgt + 64, loc, 8), 0);
	expect_untouched(64);
	/* b's range through a's key: outside a */
	cr_assert_eq(fi_write(p.s[0].ep, loc, 8, NULL, p.s[0].peer,
			      (uintptr_t)tgt + 64, fi_mr_key(a), NULL), 0);
	cr_expect_eq(expect_err(0, NULL), FI_EINVAL);
	cr_assert_eq(fi_close(&a->fid), 0);
	cr_assert_eq(fi_close(&b->fid), 0);
}

Test(rma_virt, multi_iov_mr_by_address)
{
	struct iovec iov[2] = {
		{ .iov_base = tgt, .iov_len = 100 },
		{ .iov_base = tgt + 1000, .iov_len = 50 },
	};
	struct fid_mr *mr;

	cr_assert_eq(fi_mr_regv(p.env.domain, iov, 2, FI_REMOTE_WRITE, 0, 0,
				0, &mr, NULL), 0);
	cr_assert_eq(fi_write(p.s[0].ep, loc, 50, NULL, p.s[0].peer,
			      (uintptr_t)tgt + 1000, fi_mr_key(mr), NULL), 0);
	expect_ok(0, NULL, FI_RMA | FI_WRITE);
	cr_expect_eq(memcmp(tgt + 1000, loc, 50), 0);
	/* one byte past the second iov */
	cr_assert_eq(fi_write(p.s[0].ep, loc, 51, NULL, p.s[0].peer,
			      (uintptr_t)tgt + 1000, fi_mr_key(mr), NULL), 0);
	cr_expect_eq(expect_err(0, NULL), FI_EINVAL);
	cr_assert_eq(fi_close(&mr->fid), 0);
}

Test(rma, vector_and_msg_forms)
{
	struct fid_mr *mr = rp_reg(&p, tgt, 4096,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 7);
	struct iovec iov[3] = {
		{ .iov_base = loc, .iov_len = 10 },
		{ .iov_base = loc + 100, .iov_len = 20 },
		{ .iov_base = loc + 200, .iov_len = 30 },
	};
	struct fi_rma_iov riov = { .addr = 500, .len = 60, .key = 7 };
	struct fi_msg_rma msg = {
		.msg_iov = iov, .iov_count = 3, .addr = p.s[0].peer,
		.rma_iov = &riov, .rma_iov_count = 1,
	};
	static uint8_t back[128];
	struct iovec biov[2] = {
		{ .iov_base = back, .iov_len = 25 },
		{ .iov_base = back + 30, .iov_len = 35 },
	};
	int c1, c2, c3;

	cr_assert_eq(fi_writev(p.s[0].ep, iov, NULL, 3, p.s[0].peer, 0, 7,
			       &c1), 0);
	expect_ok(0, &c1, FI_RMA | FI_WRITE);
	cr_expect_eq(memcmp(tgt, loc, 10), 0);
	cr_expect_eq(memcmp(tgt + 10, loc + 100, 20), 0);
	cr_expect_eq(memcmp(tgt + 30, loc + 200, 30), 0);

	msg.context = &c2;
	cr_assert_eq(fi_writemsg(p.s[0].ep, &msg, FI_COMPLETION), 0);
	expect_ok(0, &c2, FI_RMA | FI_WRITE);
	cr_expect_eq(memcmp(tgt + 500, tgt, 60), 0);

	cr_assert_eq(fi_readv(p.s[0].ep, biov, NULL, 2, p.s[0].peer, 0, 7,
			      &c3), 0);
	expect_ok(0, &c3, FI_RMA | FI_READ);
	cr_expect_eq(memcmp(back, tgt, 25), 0);
	cr_expect_eq(memcmp(back + 30, tgt + 25, 35), 0);

	msg.msg_iov = biov;
	msg.iov_count = 1;
	msg.context = &c1;
	riov.len = 25;
	memset(back, 0, sizeof(back));
	cr_assert_eq(fi_readmsg(p.s[0].ep, &msg, FI_COMPLETION), 0);
	expect_ok(0, &c1, FI_RMA | FI_READ);
	cr_expect_eq(memcmp(back, tgt + 500, 25), 0);

	/* the remote range must cover the local buffers */
	riov.len = 24;
	cr_expect_eq(fi_readmsg(p.s[0].ep, &msg, 0), -FI_EINVAL);
	/* one remote range only */
	msg.rma_iov_count = 2;
	cr_expect_eq(fi_writemsg(p.s[0].ep, &msg, 0), -FI_EINVAL);
	cr_assert_eq(fi_close(&mr->fid), 0);
}

Test(rma, inject_writes_complete_silently)
{
	struct fid_mr *mr = rp_reg(&p, tgt, 4096, FI_REMOTE_WRITE, 7);
	uint8_t tmp[16];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	memcpy(tmp, loc, sizeof(tmp));
	cr_assert_eq(fi_inject_write(p.s[0].ep, tmp, sizeof(tmp), p.s[0].peer,
				     32, 7), 0);
	memset(tmp, 0, sizeof(tmp));	/* the buffer is free at return */
	rp_wait_cntr(&p, p.s[0].tx_cntr, 1, false);
	cr_expect_eq(memcmp(tgt + 32, loc, 16), 0);
	pair_quiet(&p, 0);

	cr_assert_eq(fi_inject_writedata(p.s[0].ep, loc, 8, 0xabcdef,
					 p.s[0].peer, 64, 7), 0);
	rp_wait_cntr(&p, p.s[0].tx_cntr, 2, false);
	cr_assert_eq(rp_comp(&p, 1, &e, &err), 1);
	cr_expect_eq(e.flags, FI_REMOTE_WRITE | FI_RMA | FI_REMOTE_CQ_DATA);
	cr_expect_eq(e.data, 0xabcdef);
	cr_expect_eq(e.len, 8);
	pair_quiet(&p, 0);

	/* larger than the inject size */
	cr_expect_eq(fi_inject_write(p.s[0].ep, loc, p.env.info->tx_attr->
				     inject_size + 1, p.s[0].peer, 0, 7),
		     -FI_EINVAL);
	/* an inject that fails still tells */
	cr_assert_eq(fi_inject_write(p.s[0].ep, loc, 8, p.s[0].peer, 0, 8),
		     0);
	cr_expect_eq(expect_err(0, NULL), FI_EACCES);
	cr_assert_eq(fi_close(&mr->fid), 0);
}

Test(rma, writedata_reaches_the_target_cq)
{
	struct fid_mr *mr = rp_reg(&p, tgt, 4096, FI_REMOTE_WRITE, 7);
	struct fi_cq_tagged_entry e;
	int ctx;

	cr_assert_eq(fi_writedata(p.s[0].ep, loc, 100, NULL, 0x1122334455ULL,
				  p.s[0].peer, 0, 7, &ctx), 0);
	expect_ok(0, &ctx, FI_RMA | FI_WRITE);
	cr_assert_eq(rp_comp(&p, 1, &e, NULL), 1);
	cr_expect_null(e.op_context);
	cr_expect_eq(e.flags, FI_REMOTE_WRITE | FI_RMA | FI_REMOTE_CQ_DATA);
	cr_expect_eq(e.data, 0x1122334455ULL);
	cr_expect_eq(memcmp(tgt, loc, 100), 0);
	/* a plain write makes no entry there */
	cr_assert_eq(fi_write(p.s[0].ep, loc, 100, NULL, p.s[0].peer, 0, 7,
			      &ctx), 0);
	expect_ok(0, &ctx, FI_RMA | FI_WRITE);
	pair_quiet(&p, 1);
	cr_assert_eq(fi_close(&mr->fid), 0);
}

/* ---- counters --------------------------------------------------------------- */

Test(rma, mr_counter_counts_its_accesses)
{
	struct fid_mr *mr = NULL;
	struct fid_cntr *mc;
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP };
	int ctx;

	cr_assert_eq(fi_cntr_open(p.env.domain, &ca, &mc, NULL), 0);
	cr_assert_eq(fi_mr_reg(p.env.domain, tgt, 256,
			       FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 5,
			       FI_RMA_EVENT, &mr, NULL), 0);
	cr_assert_eq(fi_mr_bind(mr, &mc->fid, FI_REMOTE_WRITE), 0);
	cr_assert_eq(fi_write(p.s[0].ep, loc, 16, NULL, p.s[0].peer, 0, 5,
			      &ctx), 0);
	expect_ok(0, &ctx, FI_RMA | FI_WRITE);
	rp_wait_cntr(&p, mc, 1, false);
	/* reads are not what it was bound for */
	cr_assert_eq(fi_read(p.s[0].ep, loc, 16, NULL, p.s[0].peer, 0, 5,
			     &ctx), 0);
	expect_ok(0, &ctx, FI_RMA | FI_READ);
	rp_progress(&p);
	cr_expect_eq(fi_cntr_read(mc), 1);
	/* out of range: an error on it, and on the endpoint's counter */
	cr_assert_eq(fi_write(p.s[0].ep, loc, 16, NULL, p.s[0].peer, 250, 5,
			      &ctx), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EINVAL);
	rp_wait_cntr(&p, mc, 1, true);
	cr_expect_eq(fi_cntr_read(mc), 1);
	cr_expect_eq(fi_cntr_readerr(p.s[1].rx_cntr), 1);
	cr_expect_eq(fi_cntr_read(p.s[1].rx_cntr), 2);
	cr_expect_eq(fi_cntr_readerr(p.s[0].tx_cntr), 1);
	cr_assert_eq(fi_close(&mr->fid), 0);
	cr_assert_eq(fi_close(&mc->fid), 0);
}

/* ---- access errors -------------------------------------------------------- */

Test(rma, bad_key_closed_mr_and_rights)
{
	struct fid_mr *ro = rp_reg(&p, tgt, 256, FI_REMOTE_READ, 11);
	struct fid_mr *wo = rp_reg(&p, tgt + 256, 256, FI_REMOTE_WRITE, 12);
	struct fid_mr *gone = rp_reg(&p, tgt + 512, 256, FI_REMOTE_WRITE, 13);
	int ctx;

	/* no such key */
	cr_assert_eq(fi_write(p.s[0].ep, loc, 8, NULL, p.s[0].peer, 0, 99,
			      &ctx), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EACCES);
	cr_assert_eq(fi_read(p.s[0].ep, loc, 8, NULL, p.s[0].peer, 0, 99,
			     &ctx), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EACCES);
	/* a write to a read-only MR, a read of a write-only one */
	cr_assert_eq(fi_write(p.s[0].ep, loc, 8, NULL, p.s[0].peer, 0, 11,
			      &ctx), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EACCES);
	cr_assert_eq(fi_read(p.s[0].ep, loc, 8, NULL, p.s[0].peer, 0, 12,
			     &ctx), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EACCES);
	/* registered for local use only */
	{
		struct fid_mr *local = rp_reg(&p, tgt + 768, 256,
					      FI_SEND | FI_RECV, 14);

		cr_assert_eq(fi_write(p.s[0].ep, loc, 8, NULL, p.s[0].peer,
				      0, 14, &ctx), 0);
		cr_expect_eq(expect_err(0, &ctx), FI_EACCES);
		cr_assert_eq(fi_close(&local->fid), 0);
	}
	/* closed */
	cr_assert_eq(fi_close(&gone->fid), 0);
	cr_assert_eq(fi_write(p.s[0].ep, loc, 8, NULL, p.s[0].peer, 0, 13,
			      &ctx), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EACCES);
	/* out of range, both ways, and a range that wraps */
	cr_assert_eq(fi_write(p.s[0].ep, loc, 8, NULL, p.s[0].peer, 252, 12,
			      &ctx), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EINVAL);
	cr_assert_eq(fi_read(p.s[0].ep, loc, 300, NULL, p.s[0].peer, 0, 11,
			     &ctx), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EINVAL);
	cr_assert_eq(fi_write(p.s[0].ep, loc, 8, NULL, p.s[0].peer,
			      UINT64_MAX - 3, 12, &ctx), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EINVAL);
	expect_untouched(1024);
	rp_progress(&p);
	cr_expect_eq(fi_cntr_readerr(p.s[0].tx_cntr), 9);
	cr_expect_eq(fi_cntr_read(p.s[0].tx_cntr), 0);
	pair_quiet(&p, 1);
	cr_assert_eq(fi_close(&ro->fid), 0);
	cr_assert_eq(fi_close(&wo->fid), 0);
}

Test(rma, bad_arguments)
{
	struct iovec iov[RP_IOV_LIMIT + 1] = { { 0 } };

	cr_expect_eq(fi_writev(p.s[0].ep, iov, NULL, RP_IOV_LIMIT + 1,
			       p.s[0].peer, 0, 1, NULL), -FI_EINVAL);
	cr_expect_eq(fi_write(p.s[0].ep, NULL, 8, NULL, p.s[0].peer, 0, 1,
			      NULL), -FI_EINVAL);
	cr_expect_eq(fi_write(p.s[0].ep, loc, 8, NULL, 77, 0, 1, NULL),
		     -FI_EINVAL);
	{
		struct iovec one = { .iov_base = loc, .iov_len = 8 };
		struct fi_rma_iov riov = { .addr = 0, .len = 8, .key = 1 };
		struct fi_msg_rma msg = {
			.msg_iov = &one, .iov_count = 1, .addr = p.s[0].peer,
			.rma_iov = &riov, .rma_iov_count = 1,
		};

		/* persistent memory is not offered: no commit level */
		cr_expect_eq(fi_writemsg(p.s[0].ep, &msg,
					 FI_COMMIT_COMPLETE), -FI_EBADFLAGS);
		/* reads carry no data and copy nothing at the call */
		cr_expect_eq(fi_readmsg(p.s[0].ep, &msg, FI_INJECT),
			     -FI_EINVAL);
		cr_expect_eq(fi_readmsg(p.s[0].ep, &msg, FI_REMOTE_CQ_DATA),
			     -FI_EINVAL);
	}
	pair_quiet(&p, 0);
}

/* ---- endpoints and MRs in any order -------------------------------------- */

Test(rma, endpoint_enabled_after_the_mr)
{
	struct fid_mr *mr = rp_reg(&p, tgt, 256, FI_REMOTE_WRITE, 21);
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_DATA };
	char name[64];
	size_t len = sizeof(name);
	struct fi_cq_tagged_entry e;
	fi_addr_t third;
	ssize_t ret = 0;
	long k;

	cr_assert_eq(fi_endpoint(p.env.domain, p.env.info, &ep, NULL), 0);
	cr_assert_eq(fi_av_open(p.env.domain, &aa, &av, NULL), 0);
	cr_assert_eq(fi_cq_open(p.env.domain, &ca, &cq, NULL), 0);
	cr_assert_eq(fi_ep_bind(ep, &av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(ep), 0);
	cr_assert_eq(fi_getname(&ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(p.s[0].av, name, 1, &third, 0, NULL), 1);
	cr_assert_eq(fi_write(p.s[0].ep, loc, 32, NULL, third, 16, 21, NULL),
		     0);
	/* manual progress: the third endpoint's side is served by reads of
	 * its own CQ (its worker), as an application's would be */
	for (k = 0; k < 1000000; k++) {
		ret = fi_cq_read(p.s[0].cq, &e, 1);
		if (ret != -FI_EAGAIN)
			break;
		(void)fi_cq_read(cq, NULL, 0);
	}
	cr_assert_eq(ret, 1, "completion: %zd", ret);
	cr_expect_eq(e.flags, FI_RMA | FI_WRITE);
	cr_expect_eq(memcmp(tgt + 16, loc, 32), 0);
	/* and through an endpoint on its own (self) */
	cr_assert_eq(fi_write(p.s[0].ep, loc + 1, 8, NULL, p.s[0].self, 64,
			      21, NULL), 0);
	expect_ok(0, NULL, FI_RMA | FI_WRITE);
	cr_expect_eq(memcmp(tgt + 64, loc + 1, 8), 0);
	cr_assert_eq(fi_close(&ep->fid), 0);
	cr_assert_eq(fi_close(&av->fid), 0);
	cr_assert_eq(fi_close(&cq->fid), 0);
	/* the MR outlives the endpoint it was exposed on */
	cr_assert_eq(fi_write(p.s[0].ep, loc, 8, NULL, p.s[0].peer, 0, 21,
			      NULL), 0);
	expect_ok(0, NULL, FI_RMA | FI_WRITE);
	cr_assert_eq(fi_close(&mr->fid), 0);
}

/* ---- completion semantics ---------------------------------------------- */

Test(rma, fence_waits_for_earlier_operations)
{
	struct fid_mr *mr = rp_reg(&p, tgt, 4096,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 3);
	struct iovec iov = { .iov_base = loc + 1000, .iov_len = 64 };
	struct fi_rma_iov riov = { .addr = 0, .len = 64, .key = 3 };
	struct fi_msg_rma msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = p.s[0].peer,
		.rma_iov = &riov, .rma_iov_count = 1,
	};
	int c1, c2;
	ssize_t ret;
	int tries = 0;

	cr_assert_eq(fi_write(p.s[0].ep, loc, 64, NULL, p.s[0].peer, 0, 3,
			      &c1), 0);
	/* the write is outstanding until the target's acceptance is back */
	msg.context = &c2;
	iov.iov_base = loc + 2000;
	cr_expect_eq(fi_readmsg(p.s[0].ep, &msg, FI_FENCE | FI_COMPLETION),
		     -FI_EAGAIN);
	expect_ok(0, &c1, FI_RMA | FI_WRITE);
	do {
		ret = fi_readmsg(p.s[0].ep, &msg, FI_FENCE | FI_COMPLETION);
	} while (ret == -FI_EAGAIN && ++tries < 1000);
	cr_assert_eq(ret, 0);
	expect_ok(0, &c2, FI_RMA | FI_READ);
	cr_expect_eq(memcmp(loc + 2000, loc, 64), 0);
	cr_assert_eq(fi_close(&mr->fid), 0);
}

Test(rma, selective_completion)
{
	struct fid_mr *mr;
	struct iovec iov = { .iov_base = loc, .iov_len = 8 };
	struct fi_rma_iov riov = { .addr = 0, .len = 8, .key = 3 };
	struct fi_msg_rma msg = {
		.msg_iov = &iov, .iov_count = 1,
		.rma_iov = &riov, .rma_iov_count = 1,
	};
	int ctx;

	pair_close(&p);
	rpair_open(&p, 0, FI_SELECTIVE_COMPLETION);
	mr = rp_reg(&p, tgt, 64, FI_REMOTE_WRITE, 3);
	msg.addr = p.s[0].peer;
	msg.context = &ctx;
	cr_assert_eq(fi_writemsg(p.s[0].ep, &msg, 0), 0);
	rp_wait_cntr(&p, p.s[0].tx_cntr, 1, false);
	pair_quiet(&p, 0);
	cr_assert_eq(fi_writemsg(p.s[0].ep, &msg, FI_COMPLETION), 0);
	expect_ok(0, &ctx, FI_RMA | FI_WRITE);
	/* errors always report */
	riov.key = 4;
	cr_assert_eq(fi_writemsg(p.s[0].ep, &msg, 0), 0);
	cr_expect_eq(expect_err(0, &ctx), FI_EACCES);
	cr_assert_eq(fi_close(&mr->fid), 0);
}
