/*
 * test_alias.c - fi_ep_alias through the real libfabric (loop transport):
 * flags validation, the alias's own op_flags (FI_GETOPSFLAG /
 * FI_SETOPSFLAG) against the parent's, data through the alias landing on
 * the parent's NI, CQ, counters and queue slots, FI_TRANSMIT | FI_TRIGGER
 * aliases (as fabtests' fi_rdm_rma_trigger uses), names and close order.
 */
#include "p4f_pair.h"

#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>

static struct pair p;

#define CAPS (FI_TAGGED | FI_MSG | FI_TRIGGER)

static void setup(void)
{
	pair_open(&p, CAPS, 0);
}

static void teardown(void)
{
	pair_close(&p);
}

TestSuite(alias, .init = setup, .fini = teardown, .timeout = 60);

Test(alias, flags_must_name_one_direction)
{
	struct fid_ep *alias;

	cr_expect_eq(fi_ep_alias(p.s[0].ep, &alias, 0), -FI_EINVAL);
	cr_expect_eq(fi_ep_alias(p.s[0].ep, &alias, FI_TRANSMIT | FI_RECV),
		     -FI_EINVAL);
	cr_expect_eq(fi_ep_alias(p.s[0].ep, &alias, FI_COMPLETION),
		     -FI_EINVAL);
}

Test(alias, own_op_flags_and_close_order)
{
	struct fid_ep *alias;
	uint64_t flags, parent_tx;

	flags = FI_TRANSMIT;
	cr_assert_eq(fi_control(&p.s[0].ep->fid, FI_GETOPSFLAG, &flags), 0);
	parent_tx = flags;
	cr_assert_eq(fi_ep_alias(p.s[0].ep, &alias,
				 FI_TRANSMIT | FI_COMPLETION |
				 FI_DELIVERY_COMPLETE), 0);
	flags = FI_TRANSMIT;
	cr_assert_eq(fi_control(&alias->fid, FI_GETOPSFLAG, &flags), 0);
	cr_expect_eq(flags, FI_TRANSMIT | FI_COMPLETION | FI_DELIVERY_COMPLETE);
	flags = FI_RECV;
	cr_assert_eq(fi_control(&alias->fid, FI_GETOPSFLAG, &flags), 0);
	cr_expect_eq(flags & ~FI_RECV, p.env.info->rx_attr->op_flags,
		     "rx flags inherited");
	flags = FI_TRANSMIT | FI_INJECT_COMPLETE;
	cr_assert_eq(fi_control(&alias->fid, FI_SETOPSFLAG, &flags), 0);
	flags = FI_TRANSMIT;
	cr_assert_eq(fi_control(&p.s[0].ep->fid, FI_GETOPSFLAG, &flags), 0);
	cr_expect_eq(flags, parent_tx, "the parent's flags are its own");
	/* bindings are the parent's */
	cr_expect_eq(fi_ep_bind(alias, &p.s[0].cq->fid, FI_TRANSMIT),
		     -FI_EINVAL);
	cr_expect_eq(fi_close(&p.s[0].ep->fid), -FI_EBUSY,
		     "the endpoint outlives its aliases");
	cr_expect_eq(fi_close(&alias->fid), 0);
}

Test(alias, data_through_alias_uses_parent_state)
{
	struct fid_ep *alias, *ralias;
	struct fi_cq_tagged_entry e;
	char src[8] = "alias", dst[8] = { 0 };
	char name[2][64];
	size_t len[2] = { sizeof(name[0]), sizeof(name[1]) };
	ssize_t left = pair_tx_left(p.s[0].ep);
	int sctx, rctx;

	cr_assert_eq(fi_ep_alias(p.s[0].ep, &alias, FI_TRANSMIT), 0);
	cr_assert_eq(fi_ep_alias(p.s[1].ep, &ralias, FI_RECV), 0);
	cr_assert_eq(fi_getname(&alias->fid, name[0], &len[0]), 0);
	cr_assert_eq(fi_getname(&p.s[0].ep->fid, name[1], &len[1]), 0);
	cr_expect_eq(len[0], len[1]);
	cr_expect_eq(memcmp(name[0], name[1], len[0]), 0, "same address");
	cr_assert_eq(fi_trecv(ralias, dst, sizeof(dst), NULL, FI_ADDR_UNSPEC,
			      3, 0, &rctx), 0);
	cr_expect_eq(pair_rx_left(ralias), pair_rx_left(p.s[1].ep));
	cr_assert_eq(fi_tsend(alias, src, sizeof(src), NULL, p.s[0].peer, 3,
			      &sctx), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.op_context, &rctx);
	cr_expect_str_eq(dst, "alias");
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1, "on the parent's CQ");
	cr_expect_eq(e.op_context, &sctx);
	cr_expect_eq(fi_cntr_read(p.s[0].tx_cntr), 1);
	cr_expect_eq(pair_tx_left(p.s[0].ep), left, "slot given back");
	cr_expect_eq(pair_tx_left(alias), left);
	/* cancel through the alias reaches the parent's receives */
	cr_assert_eq(fi_trecv(ralias, dst, sizeof(dst), NULL, FI_ADDR_UNSPEC,
			      4, 0, &rctx), 0);
	cr_expect_eq(fi_cancel(&ralias->fid, &rctx), 0);
	cr_expect_eq(pair_read(&p, 1, &e, NULL), -FI_EAVAIL);
	cr_expect_eq(fi_close(&alias->fid), 0);
	cr_expect_eq(fi_close(&ralias->fid), 0);
}

/* fabtests' fi_rdm_rma_trigger: FI_TRIGGER in the alias's op_flags makes
 * every operation posted through it a triggered one. */
Test(alias, trigger_alias)
{
	struct fid_ep *alias;
	struct fi_triggered_context tctx = {
		.event_type = FI_TRIGGER_THRESHOLD,
	};
	struct fi_cq_tagged_entry e;
	char src[8] = "second", dst[2][8];

	tctx.trigger.threshold.cntr = p.s[0].tx_cntr;
	tctx.trigger.threshold.threshold = 1;
	cr_assert_eq(fi_ep_alias(p.s[0].ep, &alias, FI_TRANSMIT | FI_TRIGGER),
		     0);
	cr_assert_eq(fi_trecv(p.s[1].ep, dst[0], 8, NULL, FI_ADDR_UNSPEC, 0,
			      ~0ULL, NULL), 0);
	cr_assert_eq(fi_trecv(p.s[1].ep, dst[1], 8, NULL, FI_ADDR_UNSPEC, 0,
			      ~0ULL, NULL), 0);
	cr_assert_eq(fi_tsend(alias, src, sizeof(src), NULL, p.s[0].peer, 2,
			      &tctx), 0);
	pair_quiet(&p, 1);
	cr_assert_eq(fi_tsend(p.s[0].ep, "first", 6, NULL, p.s[0].peer, 1,
			      NULL), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.tag, 1);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.tag, 2, "fired by the first send's completion");
	cr_expect_str_eq(dst[1], "second");
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_expect_eq(fi_close(&alias->fid), 0);
}
