/*
 * fx_resmgmt.c - FI_RM_ENABLED resource limits, the way fabtests'
 * fi_resmgmt_test probes them, but checked: posting to a full receive or
 * transmit context returns -FI_EAGAIN (not an error, not a hang, not a
 * silent overrun), at no fewer operations than rx_attr/tx_attr->size
 * promise, and everything posted before it completes with intact data.
 * The CQs are smaller than the operations outstanding, so a full CQ must
 * hold its entries back rather than lose them.
 *
 * Step 1 (rx): the server posts tagged receives until -FI_EAGAIN, then
 *         tells the client how many; the client sends that many; each
 *         receive completes in order with its data, and posting works
 *         again once they have.
 * Step 2 (tx): the server posts nothing, so rendezvous sends cannot
 *         finish; the client posts them until -FI_EAGAIN, then tells the
 *         server how many; the server receives them all, the client's
 *         sends all complete, and posting works again.
 *
 * -S sets the step 2 message size (default 256 KiB, above any eager
 * limit); -W the context sizes asked for in the hints (default 16).
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_RM_CTX	16		/* tx/rx_attr->size asked for */
#define FX_RM_CQ	8		/* CQ entries: fewer than the ops */
#define FX_RM_CAP_MUL	64		/* no -FI_EAGAIN by size * this: fail */
#define FX_RM_RX_LEN	64
#define FX_RM_TX_LEN	(256 * FX_KIB)
#define FX_RM_TAG_RX	0x7a100000ULL
#define FX_RM_TAG_TX	0x7a200000ULL
#define FX_RM_TAG_NEXT	0x7a300000ULL

/* posts with one call until it returns -FI_EAGAIN; returns how many */
#define FX_RM_FILL(n, cap, what, call)					\
	do {								\
		ssize_t fx_rm_ret_ = 0;					\
		for ((n) = 0; (n) < (cap); (n)++) {			\
			fx_rm_ret_ = (call);				\
			if (fx_rm_ret_)					\
				break;					\
		}							\
		FX_CHECK(fx_rm_ret_ == -FI_EAGAIN || (n) == (cap),	\
			 "%s: %zd (%s) after %d posts, expected "	\
			 "-FI_EAGAIN", what, fx_rm_ret_,		\
			 fi_strerror((int)-fx_rm_ret_), (n));		\
		FX_CHECK((n) < (cap), "%s: still accepted after %d "	\
			 "posts; the context is %zu deep", what, (n),	\
			 (size_t)(cap) / FX_RM_CAP_MUL);		\
	} while (0)

/* one more operation after the context drained: a round trip */
static void fx_rm_again(struct fx_ctx *ctx, char *buf)
{
	struct fi_context c1;
	struct fx_comp c;

	if (ctx->server) {
		/* drained: accepted at once, no -FI_EAGAIN */
		FX_CALL(fi_trecv(ctx->ep, buf, FX_RM_RX_LEN, NULL,
				 FI_ADDR_UNSPEC, FX_RM_TAG_NEXT, 0, &c1));
		fx_oob_sync(ctx);
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "receive after draining");
		fx_check_comp(&c, &c1, FI_RECV | FI_TAGGED, FX_RM_RX_LEN,
			      FX_RM_TAG_NEXT, "receive after draining");
	} else {
		fx_oob_sync(ctx);
		FX_CALL(fi_tsend(ctx->ep, buf, FX_RM_RX_LEN, NULL,
				 ctx->peer[0], FX_RM_TAG_NEXT, &c1));
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send after draining");
		fx_check_comp(&c, &c1, FI_SEND | FI_TAGGED, 0, 0,
			      "send after draining");
	}
}

static void fx_rm_step_rx(struct fx_ctx *ctx)
{
	size_t depth = ctx->info->rx_attr->size;
	int cap = (int)(depth * FX_RM_CAP_MUL), n, i;
	struct fi_context *ctxs = calloc((size_t)cap, sizeof(*ctxs));
	char *bufs = calloc((size_t)cap, FX_RM_RX_LEN);
	struct fx_comp c;
	char what[64];

	FX_CHECK(ctxs && bufs, "out of memory");
	if (ctx->server) {
		FX_RM_FILL(n, cap, "fi_trecv on a full receive context",
			   fi_trecv(ctx->ep, bufs + (size_t)n * FX_RM_RX_LEN,
				    FX_RM_RX_LEN, NULL, FI_ADDR_UNSPEC,
				    FX_RM_TAG_RX + (uint64_t)n, 0, &ctxs[n]));
		FX_CHECK((size_t)n >= depth, "-FI_EAGAIN after %d receives, "
			 "rx_attr->size is %zu", n, depth);
		fx_oob_send_u64(ctx, 0, (uint64_t)n);
		/* every send is expected: they complete in order */
		for (i = 0; i < n; i++) {
			snprintf(what, sizeof(what), "receive %d of %d", i, n);
			fx_cq_wait_ok(ctx, ctx->rxcq, &c, what);
			fx_check_comp(&c, &ctxs[i], FI_RECV | FI_TAGGED,
				      FX_RM_RX_LEN, FX_RM_TAG_RX + (uint64_t)i,
				      what);
			fx_check(bufs + (size_t)i * FX_RM_RX_LEN, FX_RM_RX_LEN,
				 (uint64_t)i, what);
		}
		fx_info("rx: -FI_EAGAIN after %d posted receives (rx_attr->"
			"size %zu); all %d completed", n, depth, n);
	} else {
		n = (int)fx_oob_recv_u64(ctx, 0);
		FX_CHECK(n > 0 && n <= cap, "the server posted %d receives",
			 n);
		for (i = 0; i < n; i++) {
			char *buf = bufs + (size_t)i * FX_RM_RX_LEN;

			fx_fill(buf, FX_RM_RX_LEN, (uint64_t)i);
			FX_RETRY(ctx, "fi_tsend",
				 fi_tsend(ctx->ep, buf, FX_RM_RX_LEN, NULL,
					  ctx->peer[0],
					  FX_RM_TAG_RX + (uint64_t)i,
					  &ctxs[i]));
		}
		fx_cq_drain(ctx, ctx->txcq, (size_t)n, "send");
	}
	fx_rm_again(ctx, bufs);
	fx_oob_sync(ctx);
	free(ctxs);
	free(bufs);
}

static void fx_rm_step_tx(struct fx_ctx *ctx, size_t len)
{
	size_t depth = ctx->info->tx_attr->size;
	int cap = (int)(depth * FX_RM_CAP_MUL), n, i;
	struct fi_context *ctxs = calloc((size_t)cap, sizeof(*ctxs));
	uint8_t *seen = calloc((size_t)cap, 1);
	char *buf = fx_alloc(len), *small = fx_alloc(FX_RM_RX_LEN);
	struct fx_comp c;
	char what[64];

	FX_CHECK(ctxs && seen, "out of memory");
	if (ctx->server) {
		/* posts nothing until told: the sends cannot finish */
		n = (int)fx_oob_recv_u64(ctx, 0);
		FX_CHECK(n > 0 && n <= cap, "the client posted %d sends", n);
		for (i = 0; i < n; i++) {
			snprintf(what, sizeof(what), "receive %d of %d", i, n);
			memset(buf, 0, len);
			FX_RETRY(ctx, "fi_trecv",
				 fi_trecv(ctx->ep, buf, len, NULL,
					  FI_ADDR_UNSPEC,
					  FX_RM_TAG_TX + (uint64_t)i, 0,
					  &ctxs[i]));
			fx_cq_wait_ok(ctx, ctx->rxcq, &c, what);
			fx_check_comp(&c, &ctxs[i], FI_RECV | FI_TAGGED, len,
				      FX_RM_TAG_TX + (uint64_t)i, what);
			fx_check(buf, len, 0x7a, what);
		}
	} else {
		/* one buffer for all: it is only read */
		fx_fill(buf, len, 0x7a);
		FX_RM_FILL(n, cap, "fi_tsend on a full transmit context",
			   fi_tsend(ctx->ep, buf, len, NULL, ctx->peer[0],
				    FX_RM_TAG_TX + (uint64_t)n, &ctxs[n]));
		FX_CHECK((size_t)n >= depth, "-FI_EAGAIN after %d sends, "
			 "tx_attr->size is %zu", n, depth);
		fx_oob_send_u64(ctx, 0, (uint64_t)n);
		for (i = 0; i < n; i++) {
			fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
			fx_slot_of(&c, ctxs, n, seen, "send");
		}
		fx_info("tx: -FI_EAGAIN after %d posted sends of %zu bytes "
			"(tx_attr->size %zu); all %d completed", n, len, depth,
			n);
	}
	fx_rm_again(ctx, small);
	fx_oob_sync(ctx);
	free(ctxs);
	free(seen);
	free(buf);
	free(small);
}

int main(int argc, char **argv)
{
	struct fx_setup setup = {
		.caps = FI_TAGGED,
		.cq_size = FX_RM_CQ,
	};
	struct fx_opts opts;
	struct fx_ctx ctx;

	fx_parse(argc, argv, "-FI_EAGAIN on full transmit and receive "
		 "contexts, nothing lost (FI_RM_ENABLED)",
		 "  -W <n>        tx/rx context size asked for (default 16)\n",
		 &opts);
	setup.tx_size = setup.rx_size = opts.window ? (size_t)opts.window :
						      FX_RM_CTX;
	fx_init(&ctx, &opts, &setup);
	FX_CHECK(ctx.info->domain_attr->resource_mgmt == FI_RM_ENABLED,
		 "resource management is not enabled");

	fx_oob_sync(&ctx);
	fx_rm_step_rx(&ctx);
	fx_rm_step_tx(&ctx, opts.size_set ? opts.size : FX_RM_TX_LEN);
	fx_fini(&ctx);
	fx_info("PASS");
	return 0;
}
