/*
 * fx_selective.c - FI_SELECTIVE_COMPLETION: with the CQs bound that way,
 * only operations carrying FI_COMPLETION (in their flags or in the
 * endpoint's op_flags) write a CQ entry, while the bound counters still
 * count every operation, failures are still reported, and a multi-receive
 * buffer's release is still reported (fi_endpoint(3), fi_msg(3)).
 *
 * The client sends, the server receives; each side checks its own CQ.
 * Step 1: tagged messages, eager and rendezvous sizes, sent through
 *         fi_tsendmsg with and without FI_COMPLETION, fi_tsend and
 *         fi_tinject, and received through fi_trecvmsg with and without
 *         FI_COMPLETION: exactly the entries asked for appear, the
 *         counters count all, every message's data is checked.
 * Step 2: a truncated receive posted without FI_COMPLETION still yields
 *         its FI_ETRUNC error entry and a counter error.
 * Step 3: two multi-receive buffers, the first posted without
 *         FI_COMPLETION, the second with it: untagged messages fill the
 *         first, which reports only its release (FI_MULTI_RECV), then go
 *         to the second, which reports each placement; the counter counts
 *         every message. (The data check of the first buffer relies on
 *         messages being placed back to back, as the portals provider
 *         does: there is no entry saying where they went.)
 * Step 4: FI_COMPLETION through FI_SETOPSFLAG: fi_tsend and fi_trecv
 *         complete while it is set and stop when it is cleared; fi_tinject
 *         never completes.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_SEL_N	48
#define FX_SEL_TAG1	0x5e1000ULL
#define FX_SEL_SMALL	100
#define FX_SEL_LARGE	40000		/* above the eager limit */
#define FX_SEL_INJ_BASE	8
#define FX_SEL_INJ_SPAN	40
#define FX_SEL_TAG2	0x5e2000ULL
#define FX_SEL_TRUNC_RX	1000
#define FX_SEL_TRUNC_TX	3000
#define FX_SEL_MR_BUF	16384
#define FX_SEL_MR_MIN	4096
#define FX_SEL_MR_LEN	1000
#define FX_SEL_MR_N	20
/* messages that fit before less than the minimum is left */
#define FX_SEL_MR_FIRST	((FX_SEL_MR_BUF - FX_SEL_MR_MIN) / FX_SEL_MR_LEN + 1)
#define FX_SEL_TAG4	0x5e4000ULL
#define FX_SEL_K	10	/* K % 6 == 4: an inject size */

/* ---- step 1 ------------------------------------------------------------- */

/* messages that may go by fi_tinject (i % 6 == 4) stay below 64 bytes,
 * the smallest inject_size seen (tcp;ofi_rxm) */
static size_t fx_sel_size(int i)
{
	if (i % 4 == 3)
		return FX_SEL_LARGE;
	if (i % 6 == 4)
		return FX_SEL_INJ_BASE + (size_t)i % FX_SEL_INJ_SPAN;
	return FX_SEL_SMALL + (size_t)i;
}

static bool fx_sel_rx_comp(int i)
{
	return i % 2 == 0;
}

enum fx_sel_tx_how {
	FX_SEL_MSG_COMP,	/* fi_tsendmsg(FI_COMPLETION): an entry */
	FX_SEL_MSG,		/* fi_tsendmsg(0) */
	FX_SEL_SEND,		/* fi_tsend, op_flags 0 */
	FX_SEL_INJECT,		/* fi_tinject */
};

static enum fx_sel_tx_how fx_sel_tx_how(int i)
{
	if (i % 3 == 0)
		return FX_SEL_MSG_COMP;
	if (i % 6 == 4)
		return FX_SEL_INJECT;	/* even: always a small size */
	return i % 3 == 1 ? FX_SEL_MSG : FX_SEL_SEND;
}

static uint64_t fx_sel_seed(int step, int i)
{
	return (uint64_t)step << 32 | (uint64_t)i;
}

static void fx_sel_tsendmsg(struct fx_ctx *ctx, void *buf, size_t len,
			    uint64_t tag, void *context, uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = ctx->peer[0],
		.tag = tag, .context = context,
	};

	FX_RETRY(ctx, "fi_tsendmsg", fi_tsendmsg(ctx->ep, &msg, flags));
}

static void fx_sel_trecvmsg(struct fx_ctx *ctx, void *buf, size_t len,
			    uint64_t tag, void *context, uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = tag, .context = context,
	};

	FX_RETRY(ctx, "fi_trecvmsg", fi_trecvmsg(ctx->ep, &msg, flags));
}

/* n entries for the contexts of which want() says so, nothing else */
static void fx_sel_expect(struct fx_ctx *ctx, struct fid_cq *cq,
			  struct fi_context *ctxs, int n, bool (*want)(int),
			  uint64_t flags, const char *what)
{
	uint8_t *seen = calloc((size_t)n, 1);
	struct fx_comp c;
	int i, k, nwant = 0;

	FX_CHECK(seen, "out of memory");
	for (i = 0; i < n; i++)
		nwant += want(i);
	for (k = 0; k < nwant; k++) {
		fx_cq_wait_ok(ctx, cq, &c, what);
		i = fx_slot_of(&c, ctxs, n, seen, what);
		FX_CHECK(want(i), "%s: operation %d completed without "
			 "FI_COMPLETION", what, i);
		FX_CHECK(c.e.flags == flags, "%s: operation %d: flags 0x%llx",
			 what, i, (unsigned long long)c.e.flags);
		if (flags & FI_RECV)
			FX_CHECK(c.e.len == fx_sel_size(i) &&
				 c.e.tag == FX_SEL_TAG1 + (uint64_t)i,
				 "%s: operation %d: len %zu tag 0x%llx", what,
				 i, c.e.len, (unsigned long long)c.e.tag);
	}
	fx_cq_expect_empty(ctx, cq, 50, what);
	free(seen);
}

static bool fx_sel_tx_comp(int i)
{
	return fx_sel_tx_how(i) == FX_SEL_MSG_COMP;
}

static void fx_sel_step1(struct fx_ctx *ctx)
{
	struct fi_context ctxs[FX_SEL_N];
	char *bufs[FX_SEL_N];
	uint64_t c0;
	int i;

	for (i = 0; i < FX_SEL_N; i++)
		bufs[i] = fx_alloc(fx_sel_size(i));
	if (ctx->server) {
		c0 = fi_cntr_read(ctx->rxcntr);
		for (i = 0; i < FX_SEL_N; i++)
			fx_sel_trecvmsg(ctx, bufs[i], fx_sel_size(i),
					FX_SEL_TAG1 + (uint64_t)i, &ctxs[i],
					fx_sel_rx_comp(i) ? FI_COMPLETION : 0);
		fx_oob_sync(ctx);
		fx_cntr_wait(ctx, ctx->rxcntr, c0 + FX_SEL_N, "receives");
		fx_sel_expect(ctx, ctx->rxcq, ctxs, FX_SEL_N, fx_sel_rx_comp,
			      FI_RECV | FI_TAGGED, "step 1 receives");
		for (i = 0; i < FX_SEL_N; i++)
			fx_check(bufs[i], fx_sel_size(i), fx_sel_seed(1, i),
				 "step 1 message");
	} else {
		fx_oob_sync(ctx);
		c0 = fi_cntr_read(ctx->txcntr);
		for (i = 0; i < FX_SEL_N; i++) {
			uint64_t tag = FX_SEL_TAG1 + (uint64_t)i;
			size_t len = fx_sel_size(i);

			fx_fill(bufs[i], len, fx_sel_seed(1, i));
			switch (fx_sel_tx_how(i)) {
			case FX_SEL_MSG_COMP:
				fx_sel_tsendmsg(ctx, bufs[i], len, tag,
						&ctxs[i], FI_COMPLETION);
				break;
			case FX_SEL_MSG:
				fx_sel_tsendmsg(ctx, bufs[i], len, tag,
						&ctxs[i], 0);
				break;
			case FX_SEL_SEND:
				FX_RETRY(ctx, "fi_tsend",
					 fi_tsend(ctx->ep, bufs[i], len, NULL,
						  ctx->peer[0], tag,
						  &ctxs[i]));
				break;
			case FX_SEL_INJECT:
				FX_RETRY(ctx, "fi_tinject",
					 fi_tinject(ctx->ep, bufs[i], len,
						    ctx->peer[0], tag));
				break;
			}
		}
		/* without entries, the counter says when buffers are free */
		fx_cntr_wait(ctx, ctx->txcntr, c0 + FX_SEL_N, "sends");
		fx_sel_expect(ctx, ctx->txcq, ctxs, FX_SEL_N, fx_sel_tx_comp,
			      FI_SEND | FI_TAGGED, "step 1 sends");
	}
	fx_oob_sync(ctx);
	for (i = 0; i < FX_SEL_N; i++)
		free(bufs[i]);
}

/* ---- step 2 ------------------------------------------------------------- */

static void fx_sel_step2(struct fx_ctx *ctx)
{
	char *buf = fx_alloc(FX_SEL_TRUNC_TX);
	struct fi_context rctx, sctx;
	uint64_t e0, c0;
	struct fx_comp c;
	int err;

	if (ctx->server) {
		e0 = fi_cntr_readerr(ctx->rxcntr);
		c0 = fi_cntr_read(ctx->rxcntr);
		fx_sel_trecvmsg(ctx, buf, FX_SEL_TRUNC_RX, FX_SEL_TAG2, &rctx,
				0);
		fx_oob_sync(ctx);
		err = fx_cq_wait(ctx, ctx->rxcq, &c);
		FX_CHECK(err == FI_ETRUNC, "truncated receive without "
			 "FI_COMPLETION: %s (err %d), expected an FI_ETRUNC "
			 "error entry", err ? fi_strerror(err) : "a completion",
			 err);
		/* fi_endpoint(3): the context may be the endpoint's */
		FX_CHECK(c.e.op_context == &rctx || c.e.op_context == NULL,
			 "FI_ETRUNC for context %p, expected %p",
			 c.e.op_context, (void *)&rctx);
		FX_CHECK(c.olen == FX_SEL_TRUNC_TX - FX_SEL_TRUNC_RX,
			 "FI_ETRUNC with olen %zu, expected %d", c.olen,
			 FX_SEL_TRUNC_TX - FX_SEL_TRUNC_RX);
		fx_check(buf, FX_SEL_TRUNC_RX, fx_sel_seed(2, 0),
			 "the part of a truncated message that fit");
		fx_check_byte(buf + FX_SEL_TRUNC_RX,
			      FX_SEL_TRUNC_TX - FX_SEL_TRUNC_RX, 0,
			      "after a truncated receive's buffer");
		FX_CHECK(fi_cntr_readerr(ctx->rxcntr) == e0 + 1 &&
			 fi_cntr_read(ctx->rxcntr) == c0,
			 "truncation: receive counter %llu (+%llu errors), "
			 "expected +0 (+1 error)",
			 (unsigned long long)(fi_cntr_read(ctx->rxcntr) - c0),
			 (unsigned long long)(fi_cntr_readerr(ctx->rxcntr) -
					      e0));
		fx_cq_expect_empty(ctx, ctx->rxcq, 20, "after FI_ETRUNC");
	} else {
		fx_oob_sync(ctx);
		c0 = fi_cntr_read(ctx->txcntr);
		fx_fill(buf, FX_SEL_TRUNC_TX, fx_sel_seed(2, 0));
		fx_sel_tsendmsg(ctx, buf, FX_SEL_TRUNC_TX, FX_SEL_TAG2, &sctx,
				0);
		/* the sender's part succeeded: counted, no entry */
		fx_cntr_wait(ctx, ctx->txcntr, c0 + 1, "truncated send");
		fx_cq_expect_empty(ctx, ctx->txcq, 20, "after a send without "
				   "FI_COMPLETION");
	}
	fx_oob_sync(ctx);
	free(buf);
}

/* ---- step 3 ------------------------------------------------------------- */

static void fx_sel_mr_post(struct fx_ctx *ctx, char *buf, void *context,
			   uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = FX_SEL_MR_BUF };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.context = context,
	};

	memset(buf, 0xee, FX_SEL_MR_BUF);
	FX_RETRY(ctx, "fi_recvmsg FI_MULTI_RECV",
		 fi_recvmsg(ctx->ep, &msg, FI_MULTI_RECV | flags));
}

static void fx_sel_step3_server(struct fx_ctx *ctx)
{
	char *a = fx_alloc(FX_SEL_MR_BUF), *b = fx_alloc(FX_SEL_MR_BUF);
	struct fi_context actx, bctx;
	bool released = false;
	int placed = 0, i, err;
	struct fx_comp c;
	uint64_t c0;

	c0 = fi_cntr_read(ctx->rxcntr);
	fx_sel_mr_post(ctx, a, &actx, 0);
	fx_sel_mr_post(ctx, b, &bctx, FI_COMPLETION);
	fx_oob_sync(ctx);
	fx_cntr_wait(ctx, ctx->rxcntr, c0 + FX_SEL_MR_N, "multi-recv "
		     "messages");
	while (!released || placed < FX_SEL_MR_N - FX_SEL_MR_FIRST) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "multi-recv");
		if (c.e.op_context == &actx) {
			FX_CHECK(c.e.flags == FI_MULTI_RECV && !released,
				 "buffer without FI_COMPLETION: an entry with "
				 "flags 0x%llx (only its release may come, "
				 "once)", (unsigned long long)c.e.flags);
			released = true;
			continue;
		}
		FX_CHECK(c.e.op_context == &bctx, "multi-recv entry for "
			 "context %p", c.e.op_context);
		FX_CHECK(c.e.flags == (FI_RECV | FI_MSG), "placement in the "
			 "FI_COMPLETION buffer with flags 0x%llx",
			 (unsigned long long)c.e.flags);
		FX_CHECK(c.e.len == FX_SEL_MR_LEN && (char *)c.e.buf >= b &&
			 (char *)c.e.buf + c.e.len <= b + FX_SEL_MR_BUF,
			 "placement of %zu bytes at %p, outside %p..+%d",
			 c.e.len, c.e.buf, (void *)b, FX_SEL_MR_BUF);
		i = FX_SEL_MR_FIRST + placed++;
		fx_check(c.e.buf, FX_SEL_MR_LEN, fx_sel_seed(3, i),
			 "message in the FI_COMPLETION multi-recv buffer");
	}
	fx_cq_expect_empty(ctx, ctx->rxcq, 50, "after the multi-recv "
			   "placements");
	for (i = 0; i < FX_SEL_MR_FIRST; i++)
		fx_check(a + (size_t)i * FX_SEL_MR_LEN, FX_SEL_MR_LEN,
			 fx_sel_seed(3, i), "message in the multi-recv "
			 "buffer without FI_COMPLETION");
	fx_check_byte(a + FX_SEL_MR_FIRST * FX_SEL_MR_LEN,
		      FX_SEL_MR_BUF - FX_SEL_MR_FIRST * FX_SEL_MR_LEN, 0xee,
		      "after the last message of the released buffer");
	FX_CALL(fi_cancel(&ctx->ep->fid, &bctx));
	err = fx_cq_wait(ctx, ctx->rxcq, &c);
	FX_CHECK(err == FI_ECANCELED && c.e.op_context == &bctx,
		 "cancel of the multi-recv buffer: err %d, context %p", err,
		 c.e.op_context);
	free(a);
	free(b);
}

static void fx_sel_step3_client(struct fx_ctx *ctx)
{
	char *bufs[FX_SEL_MR_N];
	uint64_t c0;
	int i;

	fx_oob_sync(ctx);
	c0 = fi_cntr_read(ctx->txcntr);
	for (i = 0; i < FX_SEL_MR_N; i++) {
		bufs[i] = fx_alloc(FX_SEL_MR_LEN);
		fx_fill(bufs[i], FX_SEL_MR_LEN, fx_sel_seed(3, i));
		FX_RETRY(ctx, "fi_send", fi_send(ctx->ep, bufs[i],
						 FX_SEL_MR_LEN, NULL,
						 ctx->peer[0], NULL));
	}
	fx_cntr_wait(ctx, ctx->txcntr, c0 + FX_SEL_MR_N, "untagged sends");
	fx_cq_expect_empty(ctx, ctx->txcq, 20, "after fi_send without "
			   "FI_COMPLETION");
	for (i = 0; i < FX_SEL_MR_N; i++)
		free(bufs[i]);
}

/* ---- step 4 ------------------------------------------------------------- */

static bool fx_sel_first_k(int i)
{
	return i < FX_SEL_K;
}

static void fx_sel_opsflag(struct fx_ctx *ctx, uint64_t dir, uint64_t flags)
{
	uint64_t set = dir | flags, get = dir;

	FX_CALL(fi_control(&ctx->ep->fid, FI_SETOPSFLAG, &set));
	FX_CALL(fi_control(&ctx->ep->fid, FI_GETOPSFLAG, &get));
	FX_CHECK((get & FI_COMPLETION) == (flags & FI_COMPLETION),
		 "FI_GETOPSFLAG reads 0x%llx after setting 0x%llx",
		 (unsigned long long)get, (unsigned long long)set);
}

/* sizes and tags as in step 1, so fx_sel_expect checks them */
static void fx_sel_step4(struct fx_ctx *ctx)
{
	const int n = 2 * FX_SEL_K + 1;
	struct fi_context ctxs[2 * FX_SEL_K + 1];
	char *bufs[2 * FX_SEL_K + 1];
	uint64_t c0;
	int i;

	for (i = 0; i < n; i++)
		bufs[i] = fx_alloc(fx_sel_size(i));
	if (ctx->server) {
		c0 = fi_cntr_read(ctx->rxcntr);
		fx_sel_opsflag(ctx, FI_RECV, FI_COMPLETION);
		for (i = 0; i < n; i++) {
			if (i == FX_SEL_K)
				fx_sel_opsflag(ctx, FI_RECV, 0);
			FX_RETRY(ctx, "fi_trecv",
				 fi_trecv(ctx->ep, bufs[i], fx_sel_size(i),
					  NULL, FI_ADDR_UNSPEC,
					  FX_SEL_TAG1 + (uint64_t)i, 0,
					  &ctxs[i]));
		}
		fx_oob_sync(ctx);
		fx_cntr_wait(ctx, ctx->rxcntr, c0 + (uint64_t)n, "receives");
		fx_sel_expect(ctx, ctx->rxcq, ctxs, n, fx_sel_first_k,
			      FI_RECV | FI_TAGGED, "step 4 receives");
		for (i = 0; i < n; i++)
			fx_check(bufs[i], fx_sel_size(i), fx_sel_seed(4, i),
				 "step 4 message");
	} else {
		fx_oob_sync(ctx);
		c0 = fi_cntr_read(ctx->txcntr);
		fx_sel_opsflag(ctx, FI_TRANSMIT, FI_COMPLETION);
		for (i = 0; i < n; i++) {
			uint64_t tag = FX_SEL_TAG1 + (uint64_t)i;

			fx_fill(bufs[i], fx_sel_size(i), fx_sel_seed(4, i));
			if (i == FX_SEL_K) {
				/* an inject never completes, op_flags or not */
				FX_RETRY(ctx, "fi_tinject",
					 fi_tinject(ctx->ep, bufs[i],
						    fx_sel_size(i),
						    ctx->peer[0], tag));
				fx_sel_opsflag(ctx, FI_TRANSMIT, 0);
				continue;
			}
			FX_RETRY(ctx, "fi_tsend",
				 fi_tsend(ctx->ep, bufs[i], fx_sel_size(i),
					  NULL, ctx->peer[0], tag, &ctxs[i]));
		}
		fx_cntr_wait(ctx, ctx->txcntr, c0 + (uint64_t)n, "sends");
		fx_sel_expect(ctx, ctx->txcq, ctxs, n, fx_sel_first_k,
			      FI_SEND | FI_TAGGED, "step 4 sends");
	}
	fx_oob_sync(ctx);
	for (i = 0; i < n; i++)
		free(bufs[i]);
}

int main(int argc, char **argv)
{
	struct fx_setup setup = {
		.caps = FI_TAGGED | FI_MSG | FI_MULTI_RECV,
		.cq_bind_flags = FI_SELECTIVE_COMPLETION,
		.min_multi_recv = FX_SEL_MR_MIN,
	};
	struct fx_opts opts;
	struct fx_ctx ctx;

	fx_parse(argc, argv, "FI_SELECTIVE_COMPLETION: entries only for "
		 "FI_COMPLETION, counters for all", NULL, &opts);
	fx_init(&ctx, &opts, &setup);
	FX_CHECK(FX_SEL_INJ_BASE + FX_SEL_INJ_SPAN <=
		 ctx.info->tx_attr->inject_size,
		 "inject_size %zu is below the sizes injected",
		 ctx.info->tx_attr->inject_size);

	fx_oob_sync(&ctx);
	fx_sel_step1(&ctx);
	fx_info("step 1: %d messages, entries only for FI_COMPLETION, "
		"counted and checked", FX_SEL_N);
	fx_sel_step2(&ctx);
	fx_info("step 2: truncation without FI_COMPLETION reported");
	if (ctx.server)
		fx_sel_step3_server(&ctx);
	else
		fx_sel_step3_client(&ctx);
	fx_oob_sync(&ctx);
	fx_info("step 3: multi-recv release reported without FI_COMPLETION");
	fx_sel_step4(&ctx);
	fx_info("step 4: FI_COMPLETION through the endpoint's op_flags");

	fx_fini(&ctx);
	fx_info("PASS");
	return 0;
}
