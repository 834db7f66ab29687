/*
 * test_trigger_rma.c - triggered one-sided operations through libfabric
 * on two endpoints of one domain (loop transport, offset addressing with
 * application keys): fi_write through an FI_TRANSMIT | FI_TRIGGER alias
 * (fabtests' fi_rdm_rma_trigger), and deferred FI_OP_WRITE / FI_OP_READ /
 * FI_OP_ATOMIC / FI_OP_FETCH_ATOMIC / FI_OP_COMPARE_ATOMIC with a
 * completion counter and no CQ entry.
 */
#include <inttypes.h>

#include <rdma/fi_trigger.h>

#include "p4f_rma_test.h"

static struct pair p;
static uint8_t tgt[4096], loc[4096], res[4096];
static struct fid_mr *mr;
static struct fid_cntr *trig_cntr, *comp_cntr;

#define TR_KEY 0x77

static struct fid_cntr *open_cntr(void)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *cntr;

	cr_assert_eq(fi_cntr_open(p.env.domain, &attr, &cntr, NULL), 0);
	return cntr;
}

static void setup(void)
{
	size_t i;

	rpair_open(&p, 0, 0);
	memset(tgt, 0xee, sizeof(tgt));
	for (i = 0; i < sizeof(loc); i++)
		loc[i] = (uint8_t)(i * 7 + 3);
	memset(res, 0, sizeof(res));
	mr = rp_reg(&p, tgt, sizeof(tgt), FI_REMOTE_WRITE | FI_REMOTE_READ,
		    TR_KEY);
	trig_cntr = open_cntr();
	comp_cntr = open_cntr();
}

static void teardown(void)
{
	cr_expect_eq(fi_close(&mr->fid), 0);
	cr_expect_eq(fi_close(&trig_cntr->fid), 0);
	cr_expect_eq(fi_close(&comp_cntr->fid), 0);
	pair_close(&p);
}

TestSuite(trigger_rma, .init = setup, .fini = teardown, .timeout = 60);

Test(trigger_rma, write_through_trigger_alias)
{
	struct fi_triggered_context tctx = {
		.event_type = FI_TRIGGER_THRESHOLD,
	};
	struct fi_cq_tagged_entry e;
	struct fid_ep *alias;

	tctx.trigger.threshold.cntr = trig_cntr;
	tctx.trigger.threshold.threshold = 1;
	cr_assert_eq(fi_ep_alias(p.s[0].ep, &alias, FI_TRANSMIT | FI_TRIGGER),
		     0);
	cr_assert_eq(fi_write(alias, loc + 100, 64, NULL, p.s[0].peer, 100,
			      TR_KEY, &tctx), 0);
	rp_progress(&p);
	cr_expect_eq(tgt[100], 0xee, "not before the trigger");
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	cr_assert_eq(rp_comp(&p, 0, &e, NULL), 1);
	cr_expect_eq(e.op_context, &tctx);
	cr_expect_eq(memcmp(tgt + 100, loc + 100, 64), 0);
	/* without FI_TRIGGER in the flags an alias write is immediate */
	cr_assert_eq(fi_writemsg(alias, &(struct fi_msg_rma){
			.msg_iov = &(struct iovec){ loc, 32 }, .iov_count = 1,
			.addr = p.s[0].peer,
			.rma_iov = &(struct fi_rma_iov){ 0, 32, TR_KEY },
			.rma_iov_count = 1, .context = &e }, FI_COMPLETION), 0);
	cr_assert_eq(rp_comp(&p, 0, &e, NULL), 1);
	cr_expect_eq(memcmp(tgt, loc, 32), 0);
	cr_expect_eq(fi_close(&alias->fid), 0);
}

/* FI_TRIGGER on the endpoint itself (no alias): fi_writemsg and
 * fi_atomicmsg wait for the counter's success value. */
Test(trigger_rma, triggered_writemsg_and_atomicmsg)
{
	struct fi_triggered_context tw = { .event_type = FI_TRIGGER_THRESHOLD };
	struct fi_triggered_context ta = { .event_type = FI_TRIGGER_THRESHOLD };
	uint64_t one = 5, *t64 = (uint64_t *)(void *)(tgt + 1024);
	struct fi_cq_tagged_entry e;
	int i;

	tw.trigger.threshold.cntr = trig_cntr;
	tw.trigger.threshold.threshold = 1;
	ta.trigger.threshold.cntr = trig_cntr;
	ta.trigger.threshold.threshold = 2;
	*t64 = 10;
	cr_assert_eq(fi_writemsg(p.s[0].ep, &(struct fi_msg_rma){
			.msg_iov = &(struct iovec){ loc + 300, 16 },
			.iov_count = 1, .addr = p.s[0].peer,
			.rma_iov = &(struct fi_rma_iov){ 300, 16, TR_KEY },
			.rma_iov_count = 1, .context = &tw },
			FI_TRIGGER | FI_COMPLETION), 0);
	cr_assert_eq(fi_atomicmsg(p.s[0].ep, &(struct fi_msg_atomic){
			.msg_iov = &(struct fi_ioc){ &one, 1 },
			.iov_count = 1, .addr = p.s[0].peer,
			.rma_iov = &(struct fi_rma_ioc){ 1024, 1, TR_KEY },
			.rma_iov_count = 1, .datatype = FI_UINT64,
			.op = FI_SUM, .context = &ta },
			FI_TRIGGER | FI_COMPLETION), 0);
	rp_progress(&p);
	cr_expect_eq(tgt[300], 0xee, "not before the trigger");
	cr_expect_eq(*t64, 10);
	/* an error does not count towards FI_TRIGGER's threshold */
	cr_assert_eq(fi_cntr_adderr(trig_cntr, 1), 0);
	rp_progress(&p);
	cr_expect_eq(tgt[300], 0xee);
	cr_assert_eq(fi_cntr_add(trig_cntr, 2), 0);
	for (i = 0; i < 2; i++)
		cr_assert_eq(rp_comp(&p, 0, &e, NULL), 1);
	cr_expect_eq(memcmp(tgt + 300, loc + 300, 16), 0);
	cr_expect_eq(*t64, 15);
}

/* Deferred RMA: fires on success + error, counts on the completion
 * counter, writes no CQ entry without FI_COMPLETION. */
Test(trigger_rma, deferred_write_and_read)
{
	struct iovec wiov = { loc + 200, 48 }, riov = { res, 48 };
	struct fi_rma_iov rma = { 200, 48, TR_KEY };
	struct fi_op_rma op = {
		.ep = p.s[0].ep,
		.msg = { .msg_iov = &wiov, .iov_count = 1,
			 .addr = p.s[0].peer, .rma_iov = &rma,
			 .rma_iov_count = 1 },
	};
	struct fi_deferred_work work = {
		.threshold = 1, .triggering_cntr = trig_cntr,
		.completion_cntr = comp_cntr, .op_type = FI_OP_WRITE,
		.op.rma = &op,
	};

	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	/* the read of the same range, after the write */
	op.msg.msg_iov = &riov;
	work.threshold = 2;
	work.triggering_cntr = comp_cntr;
	work.op_type = FI_OP_READ;
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	memset(&op, 0, sizeof(op));
	rp_progress(&p);
	cr_expect_eq(tgt[200], 0xee);
	cr_assert_eq(fi_cntr_adderr(trig_cntr, 1), 0);
	rp_wait_cntr(&p, comp_cntr, 1, false);
	cr_expect_eq(memcmp(tgt + 200, loc + 200, 48), 0);
	/* comp_cntr is at 1: the read waits for 2 */
	cr_assert_eq(fi_cntr_add(comp_cntr, 1), 0);
	rp_wait_cntr(&p, comp_cntr, 3, false);
	cr_expect_eq(memcmp(res, loc + 200, 48), 0, "the read fetched it");
	pair_quiet(&p, 0);
}

Test(trigger_rma, deferred_atomics)
{
	uint64_t val = 5, cmp = 0xeeeeeeeeeeeeeeeeULL, swp = 9, old = 0;
	struct fi_ioc ioc = { &val, 1 }, cioc = { &cmp, 1 }, sioc = { &swp, 1 };
	struct fi_ioc rioc = { &old, 1 };
	struct fi_rma_ioc rma = { 8, 1, TR_KEY };
	struct fi_op_atomic op = {
		.ep = p.s[0].ep,
		.msg = { .msg_iov = &ioc, .iov_count = 1, .addr = p.s[0].peer,
			 .rma_iov = &rma, .rma_iov_count = 1,
			 .datatype = FI_UINT64, .op = FI_ATOMIC_WRITE },
	};
	struct fi_op_fetch_atomic fop = {
		.ep = p.s[0].ep, .msg = op.msg,
		.fetch = { .msg_iov = &rioc, .iov_count = 1 },
	};
	struct fi_op_compare_atomic cop = {
		.ep = p.s[0].ep, .msg = op.msg,
		.fetch = { .msg_iov = &rioc, .iov_count = 1 },
		.compare = { .msg_iov = &cioc, .iov_count = 1 },
	};
	struct fi_deferred_work work = {
		.threshold = 1, .triggering_cntr = trig_cntr,
		.completion_cntr = comp_cntr, .op_type = FI_OP_ATOMIC,
		.op.atomic = &op,
	};
	uint64_t now;

	/* compare-and-swap on the untouched word: 0xee.. -> 9 */
	cop.msg.msg_iov = &sioc;
	cop.msg.op = FI_CSWAP;
	cop.msg.rma_iov = &(struct fi_rma_ioc){ 16, 1, TR_KEY };
	work.op_type = FI_OP_COMPARE_ATOMIC;
	work.op.compare_atomic = &cop;
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	/* write 5 at word 1, then fetch-add 5 there (old 5, new 10) */
	work.op_type = FI_OP_ATOMIC;
	work.op.atomic = &op;
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	fop.msg.op = FI_SUM;
	work.threshold = 2;	/* after both of the above completed */
	work.triggering_cntr = comp_cntr;
	work.op_type = FI_OP_FETCH_ATOMIC;
	work.op.fetch_atomic = &fop;
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	/* three data operations, one count each */
	rp_wait_cntr(&p, comp_cntr, 3, false);
	memcpy(&now, tgt + 16, 8);
	cr_expect_eq(now, 9, "compare-and-swap");
	cr_expect_eq(fi_cntr_readerr(comp_cntr), 0);
	memcpy(&now, tgt + 8, 8);
	cr_expect_eq(now, 10, "atomic write then fetch-add");
	cr_expect_eq(old, 5, "fetched the written value");
	pair_quiet(&p, 0);
}
