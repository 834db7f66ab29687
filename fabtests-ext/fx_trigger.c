/*
 * fx_trigger.c - triggered operations between two processes.
 *
 * Phase 1, a chain driven only by counters: the client queues N-1 sends
 * with FI_TRIGGER, send i waiting for its send counter to reach base+i,
 * then posts send 0 by hand; each completion fires the next. The server
 * checks that all N arrive with their data, the client that all N
 * complete, in chain order.
 *
 * Phase 2, deferred work (fi_control FI_QUEUE_WORK): the server queues a
 * tagged receive on a counter of its own with a completion counter and
 * no FI_COMPLETION; the client's message waits unexpected until the
 * server bumps that counter by an *error* (deferred work fires on
 * success + error); the receive then lands, counts once on the
 * completion counter, and writes no CQ entry and no receive count.
 * The client's answer is a deferred send with FI_COMPLETION fired the
 * same way, and an FI_TRIGGER send that waits for the counter's success
 * value (an error does not fire it).
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_trigger.h>

#define FX_TR_N		8
#define FX_TR_LEN	4000
#define FX_TR_TAG	0x7100ULL
#define FX_TR_DEF_TAG	0x7200ULL
#define FX_TR_TRIG_TAG	0x7300ULL

static struct fid_cntr *fx_tr_cntr(struct fx_ctx *ctx)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *cntr;

	FX_CALL(fi_cntr_open(ctx->domain, &attr, &cntr, NULL));
	return cntr;
}

/* ---- phase 1: a chain of triggered sends --------------------------------- */

static void fx_tr_chain_client(struct fx_ctx *ctx, char **bufs)
{
	struct fi_triggered_context tctx[FX_TR_N];
	struct fi_context sctx0;
	uint64_t base = fi_cntr_read(ctx->txcntr);
	struct fx_comp c;
	int i;

	for (i = 1; i < FX_TR_N; i++) {
		struct iovec iov = { .iov_base = bufs[i],
				     .iov_len = FX_TR_LEN };
		struct fi_msg_tagged msg = {
			.msg_iov = &iov, .iov_count = 1,
			.addr = ctx->peer[0], .tag = FX_TR_TAG + (uint64_t)i,
			.context = &tctx[i],
		};

		tctx[i].event_type = FI_TRIGGER_THRESHOLD;
		tctx[i].trigger.threshold.cntr = ctx->txcntr;
		tctx[i].trigger.threshold.threshold = base + (uint64_t)i;
		FX_RETRY(ctx, "fi_tsendmsg(FI_TRIGGER)",
			 fi_tsendmsg(ctx->ep, &msg,
				     FI_TRIGGER | FI_COMPLETION));
	}
	fx_cq_expect_empty(ctx, ctx->txcq, 50, "before the chain starts");
	fx_oob_sync(ctx);	/* the server's receives are posted */
	FX_RETRY(ctx, "fi_tsend", fi_tsend(ctx->ep, bufs[0], FX_TR_LEN, NULL,
					   ctx->peer[0], FX_TR_TAG, &sctx0));
	/* send i+1 is posted only once send i counted: chain order */
	for (i = 0; i < FX_TR_N; i++) {
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "chained send");
		FX_CHECK(c.e.op_context == (i ? (void *)&tctx[i] :
					    (void *)&sctx0),
			 "completion %d has context %p", i, c.e.op_context);
	}
	fx_cntr_wait(ctx, ctx->txcntr, base + FX_TR_N, "send counter");
}

static void fx_tr_chain_server(struct fx_ctx *ctx, char **bufs)
{
	struct fi_context rctx[FX_TR_N];
	uint8_t seen[FX_TR_N] = { 0 };
	struct fx_comp c;
	int i, k;

	for (i = 0; i < FX_TR_N; i++) {
		memset(bufs[i], 0, FX_TR_LEN);
		FX_RETRY(ctx, "fi_trecv",
			 fi_trecv(ctx->ep, bufs[i], FX_TR_LEN, NULL,
				  FI_ADDR_UNSPEC, FX_TR_TAG + (uint64_t)i, 0,
				  &rctx[i]));
	}
	fx_oob_sync(ctx);
	for (k = 0; k < FX_TR_N; k++) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "chained message");
		i = fx_slot_of(&c, rctx, FX_TR_N, seen, "chained message");
		fx_check_comp(&c, &rctx[i], FI_RECV | FI_TAGGED, FX_TR_LEN,
			      FX_TR_TAG + (uint64_t)i, "chained message");
		fx_check(bufs[i], FX_TR_LEN, (uint64_t)i, "chained message");
	}
}

/* ---- phase 2: deferred work and the two threshold rules ------------------ */

static void fx_tr_deferred_server(struct fx_ctx *ctx, char *buf)
{
	struct fid_cntr *go = fx_tr_cntr(ctx), *done = fx_tr_cntr(ctx);
	uint64_t rx0 = fi_cntr_read(ctx->rxcntr);
	struct iovec iov = { .iov_base = buf, .iov_len = FX_TR_LEN };
	struct fi_op_tagged op = {
		.ep = ctx->ep,
		.msg = { .msg_iov = &iov, .iov_count = 1,
			 .addr = FI_ADDR_UNSPEC, .tag = FX_TR_DEF_TAG },
		.flags = 0,	/* no FI_COMPLETION: no CQ entry */
	};
	struct fi_deferred_work work = {
		.threshold = 1, .triggering_cntr = go,
		.completion_cntr = done, .op_type = FI_OP_TRECV,
		.op.tagged = &op,
	};
	struct fi_context rctx;
	struct fx_comp c;

	memset(buf, 0, FX_TR_LEN);
	FX_CALL(fi_control(&ctx->domain->fid, FI_QUEUE_WORK, &work));
	memset(&work, 0, sizeof(work));	/* deep-copied: reusable at once */
	memset(&op, 0, sizeof(op));
	fx_oob_sync(ctx);	/* the client sent; it waits unexpected */
	fx_oob_sync(ctx);
	fx_cq_expect_empty(ctx, ctx->rxcq, 50, "before the trigger");
	FX_CHECK(fi_cntr_read(done) == 0, "deferred receive ran early");
	FX_CALL(fi_cntr_adderr(go, 1));
	fx_cntr_wait(ctx, done, 1, "deferred receive's completion counter");
	fx_check(buf, FX_TR_LEN, 100, "deferred receive");
	fx_cq_expect_empty(ctx, ctx->rxcq, 50, "deferred work without "
			   "FI_COMPLETION");
	FX_CHECK(fi_cntr_read(ctx->rxcntr) == rx0, "receive counter moved "
		 "for deferred work without FI_COMPLETION");

	/* the client's two answers */
	FX_RETRY(ctx, "fi_trecv", fi_trecv(ctx->ep, buf, FX_TR_LEN, NULL,
					   FI_ADDR_UNSPEC, FX_TR_DEF_TAG, 0,
					   &rctx));
	fx_oob_sync(ctx);
	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "deferred send from the client");
	fx_check(buf, FX_TR_LEN, 101, "deferred send");
	FX_RETRY(ctx, "fi_trecv", fi_trecv(ctx->ep, buf, FX_TR_LEN, NULL,
					   FI_ADDR_UNSPEC, FX_TR_TRIG_TAG, 0,
					   &rctx));
	fx_oob_sync(ctx);
	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "triggered send from the client");
	fx_check(buf, FX_TR_LEN, 102, "triggered send");
	FX_CALL(fi_close(&go->fid));
	FX_CALL(fi_close(&done->fid));
}

static void fx_tr_deferred_client(struct fx_ctx *ctx, char **bufs)
{
	struct fid_cntr *go = fx_tr_cntr(ctx), *done = fx_tr_cntr(ctx);
	struct fi_triggered_context tctx;
	struct fi_context dctx;
	struct iovec iov = { .iov_base = bufs[1], .iov_len = FX_TR_LEN };
	struct fi_op_tagged op = {
		.ep = ctx->ep,
		.msg = { .msg_iov = &iov, .iov_count = 1,
			 .addr = ctx->peer[0], .tag = FX_TR_DEF_TAG,
			 .context = &dctx },
		.flags = FI_COMPLETION,
	};
	struct fi_deferred_work work = {
		.threshold = 2, .triggering_cntr = go,
		.completion_cntr = done, .op_type = FI_OP_TSEND,
		.op.tagged = &op,
	};
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = ctx->peer[0],
		.tag = FX_TR_TRIG_TAG, .context = &tctx,
	};
	struct fx_comp c;

	fx_fill(bufs[0], FX_TR_LEN, 100);
	fx_fill(bufs[1], FX_TR_LEN, 101);
	FX_RETRY(ctx, "fi_tsend", fi_tsend(ctx->ep, bufs[0], FX_TR_LEN, NULL,
					   ctx->peer[0], FX_TR_DEF_TAG, NULL));
	fx_cq_wait_ok(ctx, ctx->txcq, &c, "send to the deferred receive");
	fx_oob_sync(ctx);
	fx_oob_sync(ctx);

	/* deferred send: success + error reaches 2 */
	FX_CALL(fi_control(&ctx->domain->fid, FI_QUEUE_WORK, &work));
	FX_CALL(fi_cntr_add(go, 1));
	FX_CALL(fi_cntr_adderr(go, 1));
	fx_oob_sync(ctx);
	fx_cq_wait_ok(ctx, ctx->txcq, &c, "deferred send (FI_COMPLETION)");
	FX_CHECK(c.e.op_context == &dctx, "deferred send context %p",
		 c.e.op_context);
	fx_cntr_wait(ctx, done, 1, "deferred send's completion counter");

	/* FI_TRIGGER: success only, so go (1 + 1 error) is not at 2 yet */
	iov.iov_base = bufs[2];
	fx_fill(bufs[2], FX_TR_LEN, 102);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = go;
	tctx.trigger.threshold.threshold = 2;
	FX_RETRY(ctx, "fi_tsendmsg(FI_TRIGGER)",
		 fi_tsendmsg(ctx->ep, &msg, FI_TRIGGER | FI_COMPLETION));
	fx_cq_expect_empty(ctx, ctx->txcq, 50, "FI_TRIGGER before success 2");
	FX_CALL(fi_cntr_add(go, 1));
	fx_oob_sync(ctx);
	fx_cq_wait_ok(ctx, ctx->txcq, &c, "triggered send");
	FX_CHECK(c.e.op_context == &tctx, "triggered send context %p",
		 c.e.op_context);
	FX_CALL(fi_close(&go->fid));
	FX_CALL(fi_close(&done->fid));
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_TRIGGER };
	char *bufs[FX_TR_N];
	struct fx_opts opts;
	struct fx_ctx ctx;
	int i;

	fx_parse(argc, argv, "triggered operations: a counter-driven chain "
		 "and deferred work", NULL, &opts);
	fx_init(&ctx, &opts, &setup);
	for (i = 0; i < FX_TR_N; i++) {
		bufs[i] = fx_alloc(FX_TR_LEN);
		fx_fill(bufs[i], FX_TR_LEN, (uint64_t)i);
	}
	if (ctx.server) {
		fx_tr_chain_server(&ctx, bufs);
		fx_tr_deferred_server(&ctx, bufs[0]);
	} else {
		fx_tr_chain_client(&ctx, bufs);
		fx_tr_deferred_client(&ctx, bufs);
	}
	fx_info("a chain of %d triggered sends and deferred work checked",
		FX_TR_N);
	fx_fini(&ctx);
	for (i = 0; i < FX_TR_N; i++)
		free(bufs[i]);
	fx_info("PASS");
	return 0;
}
