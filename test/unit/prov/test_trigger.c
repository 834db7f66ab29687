/*
 * test_trigger.c - triggered operations through the real libfabric
 * between two endpoints of one domain (loop transport): the FI_TRIGGER
 * flag (success-only threshold, threshold order, FIFO among equals,
 * firing at post when already met, chains through counters, triggered
 * receives) and deferred work (success + error threshold, completion
 * counter, CQ entries only with FI_COMPLETION, deep copy of the request,
 * counter operations, FI_CANCEL_WORK / FI_FLUSH_WORK, unsupported kinds,
 * endpoint and counter close with work pending).
 */
#include "p4f_pair.h"

#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>

static struct pair p;

#define CAPS (FI_TAGGED | FI_MSG | FI_TRIGGER)

static struct fid_cntr *trig_cntr;	/* triggering counter */
static struct fid_cntr *comp_cntr;	/* completion counter */

static struct fid_cntr *open_cntr(void)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = FI_WAIT_UNSPEC };
	struct fid_cntr *cntr;

	cr_assert_eq(fi_cntr_open(p.env.domain, &attr, &cntr, NULL), 0);
	return cntr;
}

static void setup(void)
{
	pair_open(&p, CAPS, 0);
	trig_cntr = open_cntr();
	comp_cntr = open_cntr();
}

static void teardown(void)
{
	if (trig_cntr)
		cr_expect_eq(fi_close(&trig_cntr->fid), 0);
	if (comp_cntr)
		cr_expect_eq(fi_close(&comp_cntr->fid), 0);
	trig_cntr = comp_cntr = NULL;
	pair_close(&p);
}

TestSuite(trigger, .init = setup, .fini = teardown, .timeout = 60);

/* ---- helpers ------------------------------------------------------------ */

/* fi_tsendmsg with FI_TRIGGER from side 0 to side 1. */
static void trig_tsend(const void *buf, size_t len, uint64_t tag,
		       struct fid_cntr *cntr, uint64_t threshold,
		       struct fi_triggered_context *tctx)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = p.s[0].peer,
		.tag = tag, .context = tctx,
	};

	tctx->event_type = FI_TRIGGER_THRESHOLD;
	tctx->trigger.threshold.cntr = cntr;
	tctx->trigger.threshold.threshold = threshold;
	cr_assert_eq(fi_tsendmsg(p.s[0].ep, &msg, FI_TRIGGER | FI_COMPLETION),
		     0);
}

/* Post a wildcard tagged receive on side 1. */
static void post_trecv(void *buf, size_t len, void *ctx)
{
	cr_assert_eq(fi_trecv(p.s[1].ep, buf, len, NULL, FI_ADDR_UNSPEC, 0,
			      ~0ULL, ctx), 0);
}

/* Read one receive completion on side 1: its tag. */
static uint64_t recv_tag(void)
{
	struct fi_cq_tagged_entry e;

	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_assert(e.flags & FI_RECV);
	return e.tag;
}

/* Progress both sides a while: nothing is on either CQ. */
static void both_quiet(void)
{
	pair_quiet(&p, 1);
	pair_quiet(&p, 0);
}

/* ---- FI_TRIGGER --------------------------------------------------------- */

Test(trigger, fires_on_success_value_only)
{
	struct fi_triggered_context tctx;
	struct fi_cq_tagged_entry e;
	char src[16] = "triggered", dst[16] = { 0 };
	int rctx;

	post_trecv(dst, sizeof(dst), &rctx);
	trig_tsend(src, sizeof(src), 7, trig_cntr, 2, &tctx);
	both_quiet();
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	both_quiet();
	/* errors do not count for FI_TRIGGER (fi_portals.7) */
	cr_assert_eq(fi_cntr_adderr(trig_cntr, 5), 0);
	both_quiet();
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.op_context, &rctx);
	cr_expect_eq(e.tag, 7);
	cr_expect_str_eq(dst, "triggered");
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_expect_eq(e.op_context, &tctx, "the application's context");
	cr_expect_eq(e.flags, FI_SEND | FI_TAGGED);
	cr_expect_eq(fi_cntr_read(p.s[0].tx_cntr), 1);
}

Test(trigger, threshold_order_and_fifo_among_equals)
{
	struct fi_triggered_context tctx[5];
	static const uint64_t thr[5] = { 3, 1, 2, 2, 1 };
	static const uint64_t want[5] = { 1, 4, 2, 3, 0 };
	char src[8] = "x", dst[5][8];
	int i;

	for (i = 0; i < 5; i++)
		post_trecv(dst[i], sizeof(dst[i]), NULL);
	/* tag i, threshold thr[i]: fire order by threshold, then post order */
	for (i = 0; i < 5; i++)
		trig_tsend(src, sizeof(src), (uint64_t)i, trig_cntr, thr[i],
			   &tctx[i]);
	both_quiet();
	/* all become due in one update */
	cr_assert_eq(fi_cntr_set(trig_cntr, 3), 0);
	for (i = 0; i < 5; i++)
		cr_expect_eq(recv_tag(), want[i], "message %d", i);
}

Test(trigger, fires_at_post_when_already_met)
{
	struct fi_triggered_context tctx;
	char src[8] = "now", dst[8] = { 0 };

	cr_assert_eq(fi_cntr_set(trig_cntr, 5), 0);
	post_trecv(dst, sizeof(dst), NULL);
	trig_tsend(src, sizeof(src), 1, trig_cntr, 3, &tctx);
	cr_expect_eq(recv_tag(), 1);
	cr_expect_str_eq(dst, "now");
}

/* A send completing bumps the tx counter, which fires the next one. */
Test(trigger, chain_through_completion_counter)
{
	struct fi_triggered_context tctx[3];
	char src[8] = "c", dst[4][8];
	int i;

	for (i = 0; i < 4; i++)
		post_trecv(dst[i], sizeof(dst[i]), NULL);
	for (i = 0; i < 3; i++)
		trig_tsend(src, sizeof(src), (uint64_t)(10 + i),
			   p.s[0].tx_cntr, (uint64_t)(i + 1), &tctx[i]);
	both_quiet();
	cr_assert_eq(fi_tsend(p.s[0].ep, src, sizeof(src), NULL, p.s[0].peer,
			      9, NULL), 0);
	for (i = 0; i < 4; i++)
		cr_expect_eq(recv_tag(), (uint64_t)(9 + i));
	for (i = 0; i < 200 && fi_cntr_read(p.s[0].tx_cntr) < 4; i++)
		;
	cr_expect_eq(fi_cntr_read(p.s[0].tx_cntr), 4);
}

/* A triggered send gathers several iovecs; the caller's array is gone
 * (overwritten) before the send fires. */
Test(trigger, triggered_send_of_several_iovecs)
{
	struct fi_triggered_context tctx;
	struct fi_cq_tagged_entry e;
	char a[5] = "trig", b[6] = "gered", c[3] = "!!", dst[32] = { 0 };
	struct iovec iov[3] = {
		{ .iov_base = a, .iov_len = 4 },
		{ .iov_base = b, .iov_len = 5 },
		{ .iov_base = c, .iov_len = 3 },
	};
	struct fi_msg_tagged msg = {
		.msg_iov = iov, .iov_count = 3, .addr = p.s[0].peer,
		.tag = 9, .context = &tctx,
	};
	int rctx;

	post_trecv(dst, sizeof(dst), &rctx);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = trig_cntr;
	tctx.trigger.threshold.threshold = 1;
	cr_assert_eq(fi_tsendmsg(p.s[0].ep, &msg, FI_TRIGGER | FI_COMPLETION),
		     0);
	memset(iov, 0, sizeof(iov));
	both_quiet();
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.len, 12);
	cr_expect_str_eq(dst, "triggered!!");
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_expect_eq(e.op_context, &tctx);
}

/* A triggered receive is appended when it fires: before that, the
 * message waits unexpected. */
Test(trigger, triggered_receive)
{
	struct fi_triggered_context tctx;
	struct fi_cq_tagged_entry e;
	char src[8] = "late", dst[8] = { 0 };
	struct iovec iov = { .iov_base = dst, .iov_len = sizeof(dst) };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = 5, .context = &tctx,
	};

	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = trig_cntr;
	tctx.trigger.threshold.threshold = 1;
	cr_assert_eq(fi_trecvmsg(p.s[1].ep, &msg, FI_TRIGGER), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, src, sizeof(src), NULL, p.s[0].peer,
			      5, NULL), 0);
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	pair_quiet(&p, 1);
	cr_expect_str_eq(dst, "");
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.op_context, &tctx);
	cr_expect_str_eq(dst, "late");
}

Test(trigger, bad_trigger_contexts)
{
	struct fi_triggered_context tctx = { .event_type = FI_TRIGGER_XPU };
	char src[8] = "";
	struct iovec iov = { .iov_base = src, .iov_len = sizeof(src) };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = p.s[0].peer,
		.context = &tctx,
	};

	cr_expect_eq(fi_tsendmsg(p.s[0].ep, &msg, FI_TRIGGER), -FI_ENOSYS);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = NULL;
	cr_expect_eq(fi_tsendmsg(p.s[0].ep, &msg, FI_TRIGGER), -FI_EINVAL);
	msg.context = NULL;
	cr_expect_eq(fi_tsendmsg(p.s[0].ep, &msg, FI_TRIGGER), -FI_EINVAL);
	cr_expect_eq(pair_tx_left(p.s[0].ep), pair_tx_left(p.s[1].ep),
		     "refused posts hold no slot");
}

/* ---- deferred work ------------------------------------------------------ */

static int queue_msg(enum fi_op_type type, int side, void *buf,
		     size_t len, uint64_t flags, uint64_t threshold,
		     struct fid_cntr *completion, void *ctx)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_op_msg op = {
		.ep = p.s[side].ep,
		.msg = { .msg_iov = &iov, .iov_count = 1,
			 .addr = side ? FI_ADDR_UNSPEC : p.s[0].peer,
			 .context = ctx },
		.flags = flags,
	};
	struct fi_deferred_work work = {
		.threshold = threshold, .triggering_cntr = trig_cntr,
		.completion_cntr = completion, .op_type = type,
		.op.msg = &op,
	};

	return fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work);
}

/* success + error reaches the threshold; completion counter +1 per op;
 * no CQ entry and no endpoint counter without FI_COMPLETION. */
Test(trigger, deferred_send_recv_counts_and_stays_silent)
{
	char src[16] = "deferred", dst[16] = { 0 };
	ssize_t tx0 = pair_tx_left(p.s[0].ep);
	ssize_t rx0 = pair_rx_left(p.s[1].ep);
	int i;

	cr_assert_eq(queue_msg(FI_OP_RECV, 1, dst, sizeof(dst), 0, 2,
			       comp_cntr, NULL), 0);
	cr_assert_eq(queue_msg(FI_OP_SEND, 0, src, sizeof(src), 0, 2,
			       comp_cntr, NULL), 0);
	both_quiet();
	cr_expect_eq(fi_cntr_read(comp_cntr), 0);
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	cr_assert_eq(fi_cntr_adderr(trig_cntr, 1), 0);
	for (i = 0; i < 1000 && fi_cntr_read(comp_cntr) < 2; i++)
		fi_cq_read(p.s[1].cq, NULL, 0);
	cr_expect_eq(fi_cntr_read(comp_cntr), 2, "one per data operation");
	cr_expect_str_eq(dst, "deferred");
	both_quiet();
	cr_expect_eq(fi_cntr_read(p.s[0].tx_cntr), 0);
	cr_expect_eq(fi_cntr_read(p.s[1].rx_cntr), 0);
	cr_expect_eq(pair_tx_left(p.s[0].ep), tx0);
	cr_expect_eq(pair_rx_left(p.s[1].ep), rx0);
}

Test(trigger, deferred_with_completion_writes_cq)
{
	char src[16] = "loud", dst[16] = { 0 };
	struct fi_cq_tagged_entry e;
	int sctx, rctx;

	cr_assert_eq(queue_msg(FI_OP_RECV, 1, dst, sizeof(dst),
			       FI_COMPLETION, 1, comp_cntr, &rctx), 0);
	cr_assert_eq(queue_msg(FI_OP_SEND, 0, src, sizeof(src),
			       FI_COMPLETION, 1, comp_cntr, &sctx), 0);
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.op_context, &rctx);
	cr_expect_eq(e.flags, FI_RECV | FI_MSG);
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_expect_eq(e.op_context, &sctx);
	cr_expect_str_eq(dst, "loud");
	cr_expect_eq(fi_cntr_read(comp_cntr), 2);
	cr_expect_eq(fi_cntr_read(p.s[0].tx_cntr), 1);
	cr_expect_eq(fi_cntr_read(p.s[1].rx_cntr), 1);
}

/* Everything the request points to may be reused once the call returns. */
Test(trigger, deferred_request_is_deep_copied)
{
	char src[16] = "copied", dst[16] = { 0 };
	struct fi_cq_tagged_entry e;
	struct iovec iov;
	struct fi_op_tagged op;
	struct fi_deferred_work work;
	int ctx;

	memset(&work, 0, sizeof(work));
	work.threshold = 1;
	work.triggering_cntr = trig_cntr;
	work.op.tagged = &op;
	memset(&op, 0, sizeof(op));
	op.ep = p.s[1].ep;
	op.msg.msg_iov = &iov;
	op.msg.iov_count = 1;
	op.msg.addr = FI_ADDR_UNSPEC;
	op.msg.tag = 0x77;
	op.msg.context = &ctx;
	op.flags = FI_COMPLETION;
	iov.iov_base = dst;
	iov.iov_len = sizeof(dst);
	work.op_type = FI_OP_TRECV;
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	/* the same structs again for the send */
	op.ep = p.s[0].ep;
	op.msg.addr = p.s[0].peer;
	iov.iov_base = src;
	work.op_type = FI_OP_TSEND;
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	/* scribble over everything before it fires */
	memset(&iov, 0xa5, sizeof(iov));
	memset(&op, 0x5a, sizeof(op));
	memset(&work, 0xff, sizeof(work));
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.op_context, &ctx);
	cr_expect_eq(e.tag, 0x77);
	cr_expect_str_eq(dst, "copied");
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_expect_eq(e.op_context, &ctx);
}

Test(trigger, deferred_counter_operations_chain)
{
	struct fid_cntr *c2 = open_cntr();
	struct fi_op_cntr set = { .cntr = c2, .value = 5 };
	struct fi_op_cntr add = { .cntr = comp_cntr, .value = 3 };
	struct fi_deferred_work work = {
		.threshold = 1, .triggering_cntr = trig_cntr,
		.op_type = FI_OP_CNTR_SET, .op.cntr = &set,
	};

	cr_assert_eq(fi_cntr_seterr(c2, 2), 0);
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	/* c2 reaching 5 adds 3 to comp_cntr: a chain */
	work.triggering_cntr = c2;
	work.threshold = 5;
	work.op_type = FI_OP_CNTR_ADD;
	work.op.cntr = &add;
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	cr_expect_eq(fi_cntr_read(c2), 0);
	cr_expect_eq(fi_cntr_read(comp_cntr), 0);
	cr_assert_eq(fi_cntr_adderr(trig_cntr, 1), 0, "an error counts too");
	cr_expect_eq(fi_cntr_read(c2), 5);
	cr_expect_eq(fi_cntr_readerr(c2), 2, "a set leaves errors alone");
	cr_expect_eq(fi_cntr_read(comp_cntr), 3);
	/* completion_cntr must be NULL for counter operations */
	work.completion_cntr = comp_cntr;
	cr_expect_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work),
		     -FI_EINVAL);
	cr_expect_eq(fi_close(&c2->fid), 0);
}

Test(trigger, deferred_unsupported_and_bad_requests)
{
	struct fi_op_cntr set = { .cntr = comp_cntr, .value = 1 };
	struct fi_deferred_work work = {
		.threshold = 1, .triggering_cntr = trig_cntr,
		.op_type = (enum fi_op_type)1000, .op.cntr = &set,
	};

	cr_expect_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work),
		     -FI_ENOSYS);
	work.op_type = FI_OP_CNTR_SET;
	work.triggering_cntr = NULL;
	cr_expect_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work),
		     -FI_EINVAL);
	cr_expect_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, NULL),
		     -FI_EINVAL);
	work.triggering_cntr = trig_cntr;
	work.op.cntr = NULL;
	cr_expect_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work),
		     -FI_EINVAL);
	cr_expect_eq(fi_control(&p.env.domain->fid, FI_CANCEL_WORK, NULL),
		     -FI_EINVAL);
	cr_expect_eq(fi_control(&p.env.domain->fid, FI_GETWAIT, NULL),
		     -FI_ENOSYS);
}

Test(trigger, cancel_one_request_keeps_the_others)
{
	struct fi_op_cntr a1 = { .cntr = comp_cntr, .value = 1 };
	struct fi_op_cntr a2 = { .cntr = comp_cntr, .value = 10 };
	struct fi_op_cntr a3 = { .cntr = comp_cntr, .value = 100 };
	struct fi_deferred_work w1 = {
		.threshold = 2, .triggering_cntr = trig_cntr,
		.op_type = FI_OP_CNTR_ADD, .op.cntr = &a1,
	}, w2 = w1, w3 = w1;
	char dst[8] = { 0 }, src[8] = "kept";
	ssize_t left = pair_rx_left(p.s[1].ep);

	w2.op.cntr = &a2;
	w3.op.cntr = &a3;
	w3.threshold = 1;
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &w1), 0);
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &w2), 0);
	/* a receive with FI_COMPLETION holds a slot until it fires */
	cr_assert_eq(queue_msg(FI_OP_RECV, 1, dst, sizeof(dst),
			       FI_COMPLETION, 2, NULL, NULL), 0);
	cr_expect_eq(pair_rx_left(p.s[1].ep), left - 1);
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &w3), 0);
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	cr_expect_eq(fi_cntr_read(comp_cntr), 100, "w3 fired");
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_CANCEL_WORK, &w2), 0);
	/* cancelling what already fired changes nothing */
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_CANCEL_WORK, &w3), 0);
	cr_assert_eq(fi_cntr_add(trig_cntr, 1), 0);
	cr_expect_eq(fi_cntr_read(comp_cntr), 101, "w1 fired, w2 did not");
	/* the receive survived the cancel and works */
	cr_assert_eq(fi_send(p.s[0].ep, src, sizeof(src), NULL, p.s[0].peer,
			     NULL), 0);
	(void)recv_tag();
	cr_expect_str_eq(dst, "kept");
}

Test(trigger, flush_cancels_everything_and_gives_slots_back)
{
	char dst[8] = { 0 }, src[8] = "none";
	struct fi_triggered_context tctx;
	ssize_t rx0 = pair_rx_left(p.s[1].ep);
	ssize_t tx0 = pair_tx_left(p.s[0].ep);
	struct fi_deferred_work work = { .triggering_cntr = trig_cntr };

	cr_assert_eq(queue_msg(FI_OP_RECV, 1, dst, sizeof(dst),
			       FI_COMPLETION, 1, NULL, NULL), 0);
	trig_tsend(src, sizeof(src), 1, trig_cntr, 1, &tctx);
	cr_expect_eq(pair_rx_left(p.s[1].ep), rx0 - 1);
	cr_expect_eq(pair_tx_left(p.s[0].ep), tx0 - 1);
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_FLUSH_WORK, NULL), 0);
	cr_expect_eq(pair_rx_left(p.s[1].ep), rx0);
	cr_expect_eq(pair_tx_left(p.s[0].ep), tx0);
	cr_assert_eq(fi_cntr_add(trig_cntr, 5), 0);
	both_quiet();
	cr_expect_str_eq(dst, "");
	/* by counter, too */
	trig_tsend(src, sizeof(src), 1, trig_cntr, 10, &tctx);
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_FLUSH_WORK, &work), 0);
	cr_expect_eq(pair_tx_left(p.s[0].ep), tx0);
}

/* Closing with triggered work pending drops it, cleanly. */
Test(trigger, close_with_work_pending)
{
	struct fid_cntr *c2 = open_cntr();
	struct fi_triggered_context tctx;
	char src[8] = "gone", dst[8] = { 0 };
	struct fi_op_cntr add = { .cntr = comp_cntr, .value = 1 };
	struct fi_deferred_work work = {
		.threshold = 1, .triggering_cntr = c2,
		.op_type = FI_OP_CNTR_ADD, .op.cntr = &add,
	};

	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &work), 0);
	trig_tsend(src, sizeof(src), 1, c2, 1, &tctx);
	post_trecv(dst, sizeof(dst), NULL);
	cr_assert_eq(fi_close(&c2->fid), 0);
	cr_expect_eq(pair_tx_left(p.s[0].ep), pair_tx_left(p.s[1].ep),
		     "the dropped send gave its slot back");
	both_quiet();
	cr_expect_eq(fi_cntr_read(comp_cntr), 0);
	cr_expect_str_eq(dst, "");
	/* endpoint close: the pair closes side 0 with this one pending */
	trig_tsend(src, sizeof(src), 2, trig_cntr, 1, &tctx);
}

/* A counter set back to 0 must not make pending work look fired: a
 * cancel of other work keeps it, and it fires later. */
Test(trigger, cancel_after_counter_was_lowered)
{
	struct fi_op_cntr a1 = { .cntr = comp_cntr, .value = 1 };
	struct fi_op_cntr a2 = { .cntr = comp_cntr, .value = 10 };
	struct fi_deferred_work w1 = {
		.threshold = 3, .triggering_cntr = trig_cntr,
		.op_type = FI_OP_CNTR_ADD, .op.cntr = &a1,
	}, w2 = w1;

	w2.op.cntr = &a2;
	cr_assert_eq(fi_cntr_set(trig_cntr, 5), 0);
	cr_assert_eq(fi_cntr_set(trig_cntr, 0), 0);
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &w1), 0);
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_QUEUE_WORK, &w2), 0);
	cr_assert_eq(fi_control(&p.env.domain->fid, FI_CANCEL_WORK, &w2), 0);
	cr_assert_eq(fi_cntr_add(trig_cntr, 3), 0);
	cr_expect_eq(fi_cntr_read(comp_cntr), 1, "w1 fired, w2 did not");
}
