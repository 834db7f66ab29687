/*
 * fx_unexpected.c - storms of unexpected messages: the client sends a
 * whole batch before the server has posted the receives, the server then
 * posts them and every message must arrive in send order with its data.
 *
 * Phase 1 ("marked"): a mixed batch (0 B to 1 MiB, both sides of the
 * eager/rendezvous boundary, two tags interleaved) followed by a tagged
 * zero-byte marker. The server first receives only the marker; since
 * sends are ordered (FI_ORDER_SAS covers tagged and untagged sends), every
 * message of the batch has then reached it, so all of them are
 * unexpected for sure. It posts the receives of the second tag first, so
 * matching has to skip over the other tag's unexpected messages.
 * The batch's eager bytes stay well below the provider's overflow buffers.
 *
 * Phase 2 ("flood"): -N messages (default 1000) whose eager bytes are
 * about twice the overflow space, so the receiver must hold the sender
 * back (flow control) while the server posts nothing; a quarter of the
 * receives are posted before the client starts, so the order also holds
 * across expected and unexpected matches.
 *
 * -e msg uses untagged messages for the batch (one queue, no tag skips).
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_UX_TAG_A	0x1aULL
#define FX_UX_TAG_B	0x1bULL
#define FX_UX_TAG_MARK	0x3a3aULL
#define FX_UX_MARKED	160
#define FX_UX_FLOOD	1000
#define FX_UX_FLOOD_PAUSE_US 300000

struct fx_ux {
	struct fx_ctx *ctx;
	int n;
	size_t *size, *off;	/* message i: size, offset in the region */
	uint64_t *tag;
	char *region;
	struct fi_context *ctxs;
	uint8_t *seen;
};

/* both sides of the eager boundaries (16 KiB over TCP, 64 KiB over shm),
 * and big rendezvous ones */
static const size_t fx_ux_marked_sizes[] = {
	0, 1, 100, 1024, 1025, 4096, 16383, 16384, 16385, 65535, 65536, 65537,
	200000, 1048576 + 3,
};
/* mostly eager, to overflow the receiver's buffers */
static const size_t fx_ux_flood_sizes[] = {
	16384, 16384, 1, 8000, 70000, 16000, 0, 12000,
};

static uint64_t fx_ux_seed(int phase, int i)
{
	return ((uint64_t)phase << 32) | (uint64_t)i;
}

static void fx_ux_layout(struct fx_ux *ux, int n, const size_t *sizes,
			 size_t nsizes, bool two_tags)
{
	const struct fx_opts *opts = ux->ctx->opts;
	size_t total = 0, k = 0;
	int i;

	ux->n = n;
	ux->size = calloc((size_t)n, sizeof(*ux->size));
	ux->off = calloc((size_t)n, sizeof(*ux->off));
	ux->tag = calloc((size_t)n, sizeof(*ux->tag));
	/* one more context: the marker's */
	ux->ctxs = calloc((size_t)n + 1, sizeof(*ux->ctxs));
	ux->seen = calloc((size_t)n + 1, 1);
	FX_CHECK(ux->size && ux->off && ux->tag && ux->ctxs && ux->seen,
		 "out of memory");
	for (i = 0; i < n; i++) {
		/* -S: the largest size to use */
		do {
			ux->size[i] = sizes[k++ % nsizes];
		} while (opts->size_set && ux->size[i] > opts->size);
		ux->off[i] = total;
		/* every third message on the other tag */
		ux->tag[i] = two_tags && i % 3 == 2 ? FX_UX_TAG_B
						    : FX_UX_TAG_A;
		total += ux->size[i];
	}
	ux->region = fx_alloc(total);
}

static void fx_ux_free(struct fx_ux *ux)
{
	free(ux->size);
	free(ux->off);
	free(ux->tag);
	free(ux->ctxs);
	free(ux->seen);
	free(ux->region);
}

/* server: receives of one tag, posted in send order, from message from */
static void fx_ux_post(struct fx_ux *ux, uint64_t tag, int from, int to)
{
	int i;

	for (i = from; i < to; i++)
		if (ux->tag[i] == tag)
			fx_recv(ux->ctx, ux->region + ux->off[i], ux->size[i],
				FI_ADDR_UNSPEC, ux->tag[i], 0, &ux->ctxs[i]);
}

/* server: every receive got exactly the message it should, once */
static void fx_ux_check_recvs(struct fx_ux *ux, int phase)
{
	struct fx_ctx *ctx = ux->ctx;
	struct fx_comp c;
	char what[64];
	int k, i;

	for (k = 0; k < ux->n; k++) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "storm receive");
		i = fx_slot_of(&c, ux->ctxs, ux->n, ux->seen, "storm receive");
		snprintf(what, sizeof(what), "phase %d message %d", phase, i);
		fx_check_comp(&c, &ux->ctxs[i], FI_RECV | fx_xfer_flag(ctx),
			      ux->size[i], ux->tag[i], what);
		fx_check(ux->region + ux->off[i], ux->size[i],
			 fx_ux_seed(phase, i), what);
	}
}

/* client: the whole batch goes out before any completion is awaited */
static void fx_ux_send_all(struct fx_ux *ux, int phase)
{
	struct fx_ctx *ctx = ux->ctx;
	int i;

	for (i = 0; i < ux->n; i++) {
		fx_fill(ux->region + ux->off[i], ux->size[i],
			fx_ux_seed(phase, i));
		fx_send(ctx, ux->region + ux->off[i], ux->size[i],
			ctx->peer[0], ux->tag[i], &ux->ctxs[i]);
	}
}

/* client: n sends (and the marker, context n, if marked), any order */
static void fx_ux_wait_sends(struct fx_ux *ux, bool marked)
{
	struct fx_ctx *ctx = ux->ctx;
	int k, i, total = ux->n + marked;
	struct fx_comp c;

	for (k = 0; k < total; k++) {
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "storm send");
		i = fx_slot_of(&c, ux->ctxs, total, ux->seen, "storm send");
		fx_check_comp(&c, &ux->ctxs[i], FI_SEND | (i == ux->n ?
			      FI_TAGGED : fx_xfer_flag(ctx)), 0, 0,
			      "storm send");
	}
}

static void fx_ux_marked(struct fx_ctx *ctx)
{
	bool tagged = ctx->opts->xfer == FX_XFER_TAGGED;
	struct fx_ux ux = { .ctx = ctx };
	struct fi_context *mark;
	struct fx_comp c;

	fx_ux_layout(&ux, FX_UX_MARKED, fx_ux_marked_sizes,
		     sizeof(fx_ux_marked_sizes) / sizeof(size_t), tagged);
	mark = &ux.ctxs[ux.n];
	fx_oob_sync(ctx);
	if (ctx->server) {
		FX_RETRY(ctx, "fi_trecv marker",
			 fi_trecv(ctx->ep, NULL, 0, NULL, FI_ADDR_UNSPEC,
				  FX_UX_TAG_MARK, 0, mark));
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "marker");
		fx_check_comp(&c, mark, FI_RECV | FI_TAGGED, 0,
			      FX_UX_TAG_MARK, "marker");
		/* everything sent before the marker is here, unexpected */
		if (tagged)
			fx_ux_post(&ux, FX_UX_TAG_B, 0, ux.n);
		fx_ux_post(&ux, FX_UX_TAG_A, 0, ux.n);
		fx_ux_check_recvs(&ux, 1);
	} else {
		fx_ux_send_all(&ux, 1);
		FX_RETRY(ctx, "fi_tsend marker",
			 fi_tsend(ctx->ep, NULL, 0, NULL, ctx->peer[0],
				  FX_UX_TAG_MARK, mark));
		fx_ux_wait_sends(&ux, true);
	}
	fx_oob_sync(ctx);
	fx_cq_expect_empty(ctx, ctx->server ? ctx->rxcq : ctx->txcq, 10,
			   "after the marked batch");
	fx_ux_free(&ux);
	fx_info("phase 1: %d unexpected messages matched in order",
		FX_UX_MARKED);
}

static void fx_ux_flood(struct fx_ctx *ctx)
{
	int n = ctx->opts->count ? ctx->opts->count : FX_UX_FLOOD;
	struct fx_ux ux = { .ctx = ctx };
	uint64_t t0;

	fx_ux_layout(&ux, n, fx_ux_flood_sizes,
		     sizeof(fx_ux_flood_sizes) / sizeof(size_t), false);
	if (ctx->server)
		fx_ux_post(&ux, FX_UX_TAG_A, 0, n / 4);
	fx_oob_sync(ctx);
	if (ctx->server) {
		/*
		 * The client says when it has posted everything; meanwhile
		 * (the OOB wait progresses) the flood arrives and fills the
		 * overflow buffers until the client is held back.
		 */
		FX_CHECK(fx_oob_recv_u64(ctx, 0) == (uint64_t)n,
			 "client posted a different number of messages");
		/*
		 * Let the flood land before posting the rest. Only how much
		 * of it is unexpected depends on this pause, not whether
		 * the checks hold.
		 */
		t0 = fx_now_us();
		while (fx_now_us() - t0 < FX_UX_FLOOD_PAUSE_US)
			fx_progress(ctx);
		fx_ux_post(&ux, FX_UX_TAG_A, n / 4, n);
		fx_ux_check_recvs(&ux, 2);
	} else {
		fx_ux_send_all(&ux, 2);
		fx_oob_send_u64(ctx, 0, (uint64_t)n);
		fx_ux_wait_sends(&ux, false);
	}
	fx_oob_sync(ctx);
	fx_cq_expect_empty(ctx, ctx->server ? ctx->rxcq : ctx->txcq, 10,
			   "after the flood");
	fx_ux_free(&ux);
	fx_info("phase 2: flood of %d messages (%d pre-posted) in order", n,
		n / 4);
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG,
				  .cq_size = 4096 };
	struct fx_opts opts;
	struct fx_ctx ctx;

	fx_parse(argc, argv, "storms of unexpected messages, order and data",
		 "  -N <n>        messages in the flood phase (default 1000)\n"
		 "  -S <n>        largest message size (default 1 MiB + 3)\n",
		 &opts);
	fx_init(&ctx, &opts, &setup);
	fx_ux_marked(&ctx);
	fx_ux_flood(&ctx);
	fx_fini(&ctx);
	fx_info("PASS");
	return 0;
}
