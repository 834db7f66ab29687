/*
 * fx_cancel.c - fi_cancel of posted receives.
 *
 * Step 1: the server posts receives (tagged, with and without ignore
 *         bits, and untagged) that nothing will match and cancels them in
 *         a different order: each yields exactly one FI_ECANCELED error
 *         entry with its context, and its buffer stays untouched.
 *         Cancelling them again, or a context never posted, yields
 *         nothing at all.
 * Step 2: of three receives for one tag, the middle one is cancelled; the
 *         client's two messages land in the first and the third, in that
 *         order, and the cancelled buffer stays untouched.
 * Step 3: a receive is cancelled before its message arrives; the message
 *         is then unexpected and a receive posted later gets it.
 *         Cancelling a receive that already completed yields nothing.
 * Step 4: traffic still works: a ping-pong of eager and rendezvous sizes.
 *
 * Steps 2 to 4 use tagged or (-e msg) untagged messages.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_CN_N		8
#define FX_CN_LEN	4096
#define FX_CN_POISON	0xc5
#define FX_CN_TAG_NONE	0xdead0000ULL	/* never sent */
#define FX_CN_TAG	0xca0ULL
#define FX_CN_TAG_LATE	0xca1ULL
#define FX_CN_TAG_PP	0xca2ULL
#define FX_CN_STEP2_LEN	3000

static char *fx_cn_bufs[FX_CN_N];
static struct fi_context fx_cn_ctxs[FX_CN_N];

/* one error entry per cancelled receive, nothing else */
static void fx_cn_expect_cancels(struct fx_ctx *ctx, int n, uint8_t *seen,
				 const char *what)
{
	struct fx_comp c;
	int k, err, s;

	memset(seen, 0, FX_CN_N);
	for (k = 0; k < n; k++) {
		err = fx_cq_wait(ctx, ctx->rxcq, &c);
		FX_CHECK(err == FI_ECANCELED, "%s: expected FI_ECANCELED, got "
			 "%s (err %d, context %p)", what,
			 err ? fi_strerror(err) : "a completion", err,
			 c.e.op_context);
		s = fx_slot_of(&c, fx_cn_ctxs, FX_CN_N, seen, what);
		fx_check_byte(fx_cn_bufs[s], FX_CN_LEN, FX_CN_POISON,
			      "buffer of a cancelled receive");
	}
}

static void fx_cn_step1(struct fx_ctx *ctx)
{
	static const int order[FX_CN_N] = { 5, 0, 7, 2, 4, 1, 6, 3 };
	struct fi_context never;
	uint8_t seen[FX_CN_N];
	int i;

	for (i = 0; i < FX_CN_N; i++) {
		memset(fx_cn_bufs[i], FX_CN_POISON, FX_CN_LEN);
		if (i == 3)
			FX_RETRY(ctx, "fi_recv",
				 fi_recv(ctx->ep, fx_cn_bufs[i], FX_CN_LEN,
					 NULL, FI_ADDR_UNSPEC,
					 &fx_cn_ctxs[i]));
		else
			FX_RETRY(ctx, "fi_trecv",
				 fi_trecv(ctx->ep, fx_cn_bufs[i], FX_CN_LEN,
					  NULL, FI_ADDR_UNSPEC,
					  FX_CN_TAG_NONE + (uint64_t)i,
					  i % 2 ? 0xf0 : 0, &fx_cn_ctxs[i]));
	}
	/* nothing may match them (the untagged one: nobody sends yet) */
	fx_cq_expect_empty(ctx, ctx->rxcq, 20, "before the cancels");
	for (i = 0; i < FX_CN_N; i++)
		(void)fi_cancel(&ctx->ep->fid, &fx_cn_ctxs[order[i]]);
	fx_cn_expect_cancels(ctx, FX_CN_N, seen, "cancelled receive");
	/* already cancelled, or never posted: no entry of any kind */
	(void)fi_cancel(&ctx->ep->fid, &fx_cn_ctxs[0]);
	(void)fi_cancel(&ctx->ep->fid, &never);
	fx_cq_expect_empty(ctx, ctx->rxcq, 20, "cancel of nothing pending");
	fx_info("step 1: %d receives cancelled, FI_ECANCELED each", FX_CN_N);
}

static void fx_cn_step2_server(struct fx_ctx *ctx)
{
	uint8_t seen[FX_CN_N] = { 0 };
	struct fx_comp c;
	int i, s;

	for (i = 0; i < 3; i++) {
		memset(fx_cn_bufs[i], FX_CN_POISON, FX_CN_LEN);
		fx_recv(ctx, fx_cn_bufs[i], FX_CN_LEN, FI_ADDR_UNSPEC,
			FX_CN_TAG, 0, &fx_cn_ctxs[i]);
	}
	(void)fi_cancel(&ctx->ep->fid, &fx_cn_ctxs[1]);
	fx_cn_expect_cancels(ctx, 1, seen, "cancelled middle receive");
	FX_CHECK(seen[1], "the wrong receive was cancelled");
	fx_oob_sync(ctx);		/* the client sends two messages */
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 2; i++) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "receive around a cancel");
		s = fx_slot_of(&c, fx_cn_ctxs, FX_CN_N, seen,
			       "receive around a cancel");
		FX_CHECK(s == 0 || s == 2, "message landed in receive %d", s);
		fx_check_comp(&c, &fx_cn_ctxs[s], FI_RECV | fx_xfer_flag(ctx),
			      FX_CN_STEP2_LEN, FX_CN_TAG,
			      "receive around a cancel");
		/* first message in the first receive, second in the third */
		fx_check(fx_cn_bufs[s], FX_CN_STEP2_LEN, s / 2,
			 "receive around a cancel");
	}
	fx_check_byte(fx_cn_bufs[1], FX_CN_LEN, FX_CN_POISON,
		      "buffer of the cancelled middle receive");
}

static void fx_cn_step3_server(struct fx_ctx *ctx)
{
	uint8_t seen[FX_CN_N] = { 0 };
	struct fx_comp c;

	memset(fx_cn_bufs[0], FX_CN_POISON, FX_CN_LEN);
	memset(fx_cn_bufs[1], FX_CN_POISON, FX_CN_LEN);
	fx_recv(ctx, fx_cn_bufs[0], FX_CN_LEN, FI_ADDR_UNSPEC, FX_CN_TAG_LATE,
		0, &fx_cn_ctxs[0]);
	(void)fi_cancel(&ctx->ep->fid, &fx_cn_ctxs[0]);
	fx_cn_expect_cancels(ctx, 1, seen, "cancelled receive");
	fx_oob_sync(ctx);		/* the client sends */
	fx_oob_sync(ctx);		/* it has been sent */
	fx_recv(ctx, fx_cn_bufs[1], FX_CN_LEN, FI_ADDR_UNSPEC, FX_CN_TAG_LATE,
		0, &fx_cn_ctxs[1]);
	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "receive after a cancel");
	fx_check_comp(&c, &fx_cn_ctxs[1], FI_RECV | fx_xfer_flag(ctx),
		      FX_CN_STEP2_LEN, FX_CN_TAG_LATE, "receive after a cancel");
	fx_check(fx_cn_bufs[1], FX_CN_STEP2_LEN, 7, "receive after a cancel");
	fx_check_byte(fx_cn_bufs[0], FX_CN_LEN, FX_CN_POISON,
		      "buffer of the cancelled receive");
	/* completed already: cancelling it must not add anything */
	(void)fi_cancel(&ctx->ep->fid, &fx_cn_ctxs[1]);
	fx_cq_expect_empty(ctx, ctx->rxcq, 20, "cancel of a completed receive");
}

static void fx_cn_send(struct fx_ctx *ctx, size_t len, uint64_t tag,
		       uint64_t seed)
{
	struct fi_context sctx;
	struct fx_comp c;

	fx_fill(fx_cn_bufs[FX_CN_N - 1], len, seed);
	fx_send(ctx, fx_cn_bufs[FX_CN_N - 1], len, ctx->peer[0], tag, &sctx);
	fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
	fx_check_comp(&c, &sctx, FI_SEND | fx_xfer_flag(ctx), 0, 0, "send");
}

/* traffic after all the cancels: both ways, eager and rendezvous */
static void fx_cn_step4(struct fx_ctx *ctx, char *big)
{
	static const size_t sizes[] = { 0, 1, 4096, 16385, 200000 };
	struct fi_context rctx, sctx;
	struct fx_comp c;
	size_t i;
	int dir;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (dir = 0; dir < 2; dir++) {
			bool recv = (dir == 0) == ctx->server;

			if (!recv) {
				fx_fill(big, sizes[i], i * 2 + (size_t)dir);
				fx_send(ctx, big, sizes[i], ctx->peer[0],
					FX_CN_TAG_PP, &sctx);
				fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
				continue;
			}
			fx_recv(ctx, big, sizes[i], FI_ADDR_UNSPEC,
				FX_CN_TAG_PP, 0, &rctx);
			fx_cq_wait_ok(ctx, ctx->rxcq, &c, "traffic");
			fx_check_comp(&c, &rctx, FI_RECV | fx_xfer_flag(ctx),
				      sizes[i], FX_CN_TAG_PP, "traffic");
			fx_check(big, sizes[i], i * 2 + (size_t)dir,
				 "traffic after the cancels");
		}
	}
	fx_info("step 4: traffic after the cancels intact");
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG };
	struct fx_opts opts;
	struct fx_ctx ctx;
	char *big;
	int i;

	fx_parse(argc, argv, "fi_cancel of posted receives", NULL, &opts);
	fx_init(&ctx, &opts, &setup);
	for (i = 0; i < FX_CN_N; i++)
		fx_cn_bufs[i] = fx_alloc(FX_CN_LEN);
	big = fx_alloc(200000);

	if (ctx.server)
		fx_cn_step1(&ctx);
	fx_oob_sync(&ctx);

	if (ctx.server) {
		fx_cn_step2_server(&ctx);
	} else {
		fx_oob_sync(&ctx);
		fx_cn_send(&ctx, FX_CN_STEP2_LEN, FX_CN_TAG, 0);
		fx_cn_send(&ctx, FX_CN_STEP2_LEN, FX_CN_TAG, 1);
	}
	fx_oob_sync(&ctx);
	fx_info("step 2: receives around a cancelled one matched in order");

	if (ctx.server) {
		fx_cn_step3_server(&ctx);
	} else {
		fx_oob_sync(&ctx);
		fx_cn_send(&ctx, FX_CN_STEP2_LEN, FX_CN_TAG_LATE, 7);
		fx_oob_sync(&ctx);
	}
	fx_oob_sync(&ctx);
	fx_info("step 3: a message for a cancelled receive waited for the "
		"next one");

	fx_cn_step4(&ctx, big);
	fx_cq_expect_empty(&ctx, ctx.rxcq, 10, "at the end");

	fx_fini(&ctx);
	for (i = 0; i < FX_CN_N; i++)
		free(fx_cn_bufs[i]);
	free(big);
	fx_info("PASS");
	return 0;
}
