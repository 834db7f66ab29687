/*
 * fx_bw.c - bandwidth: the client sends windows of tagged (or, with -e
 * msg, untagged) messages, the server receives each window and answers
 * with a zero-byte acknowledgement; 1 KiB to 16 MiB with -S all. All
 * messages of a window carry the same tag, so with -v the data check also
 * proves they matched in send order (each slot has its own seed). The
 * client prints the bandwidth per size.
 *
 * The server posts the receives of the next window before it
 * acknowledges the current one, so most messages meet a posted receive;
 * the storm of unexpected ones is fx_unexpected's business.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_BW_MIN_SIZE	FX_KIB
#define FX_BW_MAX_SIZE	(16 * FX_MIB)
#define FX_BW_WINDOW	64
#define FX_BW_ITERS	20
/* bytes in flight per window, so 16 MiB messages do not need 1 GiB */
#define FX_BW_WINDOW_BYTES (32 * FX_MIB)
#define FX_BW_TAG	0xb0b0ULL
#define FX_BW_ACK_TAG	0xacc0ULL

struct fx_bw {
	struct fx_ctx *ctx;
	size_t size;
	int window;
	char *base;			/* slot s at base + s * size */
	struct fi_context *ctxs;	/* one context per slot */
	uint8_t *seen;			/* slots completed in this window */
	struct fi_context ack_ctx;
	size_t region;			/* bytes at base */
};

static char *fx_bw_slot(struct fx_bw *bw, int slot)
{
	return bw->base + (size_t)slot * bw->size;
}

static uint64_t fx_bw_seed(size_t size, int iter, int slot)
{
	return ((uint64_t)size << 20) ^ ((uint64_t)iter << 10) ^
	       (uint64_t)slot;
}

static void fx_bw_post_window(struct fx_bw *bw)
{
	int s;

	for (s = 0; s < bw->window; s++)
		fx_recv(bw->ctx, fx_bw_slot(bw, s), bw->size,
			FI_ADDR_UNSPEC, FX_BW_TAG, 0, &bw->ctxs[s]);
}

/*
 * server: completions may come in any order (a rendezvous transfer can
 * finish after a later one), but each slot's data must be its own, which
 * proves the receives matched in send order.
 */
static void fx_bw_recv_window(struct fx_bw *bw, int iter)
{
	struct fx_ctx *ctx = bw->ctx;
	struct fx_comp c;
	int n, s;

	memset(bw->seen, 0, (size_t)bw->window);
	for (n = 0; n < bw->window; n++) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "window receive");
		s = fx_slot_of(&c, bw->ctxs, bw->window, bw->seen,
			       "window receive");
		fx_check_comp(&c, &bw->ctxs[s], FI_RECV | fx_xfer_flag(ctx),
			      bw->size, FX_BW_TAG, "window receive");
		if (ctx->opts->verify)
			fx_check(fx_bw_slot(bw, s), bw->size,
				 fx_bw_seed(bw->size, iter, s), "window data");
	}
}

static void fx_bw_send_window(struct fx_bw *bw, int iter)
{
	struct fx_ctx *ctx = bw->ctx;
	struct fx_comp c;
	int n, s;

	for (s = 0; s < bw->window; s++) {
		if (ctx->opts->verify)
			fx_fill(fx_bw_slot(bw, s), bw->size,
				fx_bw_seed(bw->size, iter, s));
		fx_send(ctx, fx_bw_slot(bw, s), bw->size, ctx->peer[0],
			FX_BW_TAG, &bw->ctxs[s]);
	}
	memset(bw->seen, 0, (size_t)bw->window);
	for (n = 0; n < bw->window; n++) {
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "window send");
		s = fx_slot_of(&c, bw->ctxs, bw->window, bw->seen,
			       "window send");
		fx_check_comp(&c, &bw->ctxs[s], FI_SEND | fx_xfer_flag(ctx),
			      0, 0, "window send");
	}
}

static void fx_bw_ack(struct fx_bw *bw, bool send)
{
	struct fx_ctx *ctx = bw->ctx;
	struct fx_comp c;

	if (send) {
		fx_send(ctx, NULL, 0, ctx->peer[0], FX_BW_ACK_TAG,
			&bw->ack_ctx);
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "ack send");
		fx_check_comp(&c, &bw->ack_ctx, FI_SEND | fx_xfer_flag(ctx),
			      0, 0, "ack send");
	} else {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "ack receive");
		fx_check_comp(&c, &bw->ack_ctx, FI_RECV | fx_xfer_flag(ctx),
			      0, FX_BW_ACK_TAG, "ack receive");
	}
}

static void fx_bw_size(struct fx_bw *bw, size_t size)
{
	struct fx_ctx *ctx = bw->ctx;
	int iters = fx_iters(ctx->opts, size, FX_BW_ITERS), i;
	uint64_t t0, usec;

	bw->size = size;
	bw->window = ctx->opts->window ? ctx->opts->window : FX_BW_WINDOW;
	if ((size_t)bw->window * size > bw->region)
		bw->window = (int)(bw->region / size);
	if (bw->window < 1)
		bw->window = 1;

	if (ctx->server)
		fx_bw_post_window(bw);
	fx_oob_sync(ctx);
	t0 = fx_now_us();
	for (i = 0; i < iters; i++) {
		if (ctx->server) {
			fx_bw_recv_window(bw, i);
			if (i + 1 < iters)
				fx_bw_post_window(bw);
			fx_bw_ack(bw, true);
		} else {
			/* the acknowledgement's receive is posted early */
			fx_recv(ctx, NULL, 0, FI_ADDR_UNSPEC, FX_BW_ACK_TAG,
				0, &bw->ack_ctx);
			fx_bw_send_window(bw, i);
			fx_bw_ack(bw, false);
		}
	}
	usec = fx_now_us() - t0;
	if (!ctx->server)
		printf("%10zu %6d %6d %10.2f %10.2f\n", size, bw->window,
		       iters, usec ? (double)size * bw->window * iters / usec
				   : 0.0,
		       (double)usec / ((double)bw->window * iters));
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG,
				  .cq_size = 2 * FX_BW_WINDOW };
	size_t sizes[64], nsizes, max = 0, i;
	struct fx_opts opts;
	struct fx_ctx ctx;
	struct fx_bw bw = { .ctx = &ctx };
	int slots;

	fx_parse(argc, argv, "windowed send bandwidth per size",
		 "  -W <n>        window: messages in flight (default 64, "
		 "fewer above 512 KiB)\n", &opts);
	nsizes = fx_sizes(&opts, FX_BW_MIN_SIZE, FX_BW_MAX_SIZE, 64 * FX_KIB,
			  sizes, 64);
	for (i = 0; i < nsizes; i++)
		if (sizes[i] > max)
			max = sizes[i];
	slots = opts.window ? opts.window : FX_BW_WINDOW;
	if (setup.cq_size < 2 * (size_t)slots)
		setup.cq_size = 2 * (size_t)slots;
	fx_init(&ctx, &opts, &setup);

	/* one region; each size carves its window's slots out of it */
	bw.region = (size_t)slots * max;
	if (bw.region > FX_BW_WINDOW_BYTES)
		bw.region = FX_BW_WINDOW_BYTES > max ? FX_BW_WINDOW_BYTES : max;
	bw.base = fx_alloc(bw.region);
	bw.ctxs = calloc((size_t)slots, sizeof(*bw.ctxs));
	bw.seen = calloc((size_t)slots, 1);
	FX_CHECK(bw.ctxs && bw.seen, "out of memory");

	if (!ctx.server)
		printf("%10s %6s %6s %10s %10s   (%s%s)\n", "bytes", "window",
		       "iters", "MB/s", "usec/msg",
		       opts.xfer == FX_XFER_MSG ? "fi_send" : "fi_tsend",
		       opts.verify ? ", data verified" : "");
	for (i = 0; i < nsizes; i++)
		fx_bw_size(&bw, sizes[i]);

	fx_fini(&ctx);
	free(bw.base);
	free(bw.ctxs);
	free(bw.seen);
	fx_info("PASS");
	return 0;
}
