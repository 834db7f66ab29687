/*
 * fx_pingpong.c - ping-pong between a client and a server: tagged
 * (default) or untagged (-e msg) messages of each size (-S all: 0 B to
 * 16 MiB, eager and rendezvous), every completion's context, flags, length
 * and tag checked, with -v every byte of every message, in both
 * directions. The client prints the one-way latency per size.
 *
 * Each iteration uses a new tag and a new data seed, so a message matched
 * to the wrong receive, or a buffer left over from the previous
 * iteration, fails the check.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

#define FX_PP_MAX_SIZE	(16 * FX_MIB)
#define FX_PP_ITERS	100

static uint64_t fx_pp_tag(size_t size, int iter)
{
	return ((uint64_t)size << 24) | (uint64_t)iter;
}

/* seeds differ by size, iteration and direction */
static uint64_t fx_pp_seed(size_t size, int iter, bool from_server)
{
	return (uint64_t)size * 1000003 + (uint64_t)iter * 2 + from_server;
}

static void fx_pp_wait_recv(struct fx_ctx *ctx, void *buf, size_t size,
			    int iter, struct fi_context *rx_ctx)
{
	struct fx_comp c;

	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "receive");
	fx_check_comp(&c, rx_ctx, FI_RECV | fx_xfer_flag(ctx), size,
		      fx_pp_tag(size, iter), "receive");
	if (ctx->opts->verify)
		fx_check(buf, size, fx_pp_seed(size, iter, !ctx->server),
			 ctx->server ? "ping" : "pong");
}

static void fx_pp_send(struct fx_ctx *ctx, void *buf, size_t size, int iter,
		       struct fi_context *tx_ctx)
{
	struct fx_comp c;

	if (ctx->opts->verify)
		fx_fill(buf, size, fx_pp_seed(size, iter, ctx->server));
	fx_send(ctx, buf, size, ctx->peer[0], fx_pp_tag(size, iter), tx_ctx);
	fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
	fx_check_comp(&c, tx_ctx, FI_SEND | fx_xfer_flag(ctx), 0, 0, "send");
}

static void fx_pp_size(struct fx_ctx *ctx, void *tx, void *rx, size_t size)
{
	struct fi_context tx_ctx, rx_ctx;
	int iters = fx_iters(ctx->opts, size, FX_PP_ITERS), i;
	uint64_t t0, usec;

	t0 = fx_now_us();
	for (i = 0; i < iters; i++) {
		/* the receive goes first, so the peer's answer can match it */
		fx_recv(ctx, rx, size, FI_ADDR_UNSPEC, fx_pp_tag(size, i), 0,
			&rx_ctx);
		if (ctx->server) {
			fx_pp_wait_recv(ctx, rx, size, i, &rx_ctx);
			fx_pp_send(ctx, tx, size, i, &tx_ctx);
		} else {
			fx_pp_send(ctx, tx, size, i, &tx_ctx);
			fx_pp_wait_recv(ctx, rx, size, i, &rx_ctx);
		}
	}
	usec = fx_now_us() - t0;
	if (!ctx->server)
		printf("%10zu %8d %12.2f %10.2f\n", size, iters,
		       (double)usec / iters / 2,
		       usec ? (double)size * iters * 2 / usec : 0.0);
}

int main(int argc, char **argv)
{
	size_t sizes[64], nsizes, max = 0, i;
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG };
	struct fx_opts opts;
	struct fx_ctx ctx;
	void *tx, *rx;

	fx_parse(argc, argv, "tagged/untagged ping-pong, latency per size",
		 NULL, &opts);
	nsizes = fx_sizes(&opts, 0, FX_PP_MAX_SIZE, 64, sizes, 64);
	for (i = 0; i < nsizes; i++)
		if (sizes[i] > max)
			max = sizes[i];
	fx_init(&ctx, &opts, &setup);
	tx = fx_alloc(max);
	rx = fx_alloc(max);

	if (!ctx.server)
		printf("%10s %8s %12s %10s   (%s%s)\n", "bytes", "iters",
		       "usec/xfer", "MB/s",
		       opts.xfer == FX_XFER_MSG ? "fi_send" : "fi_tsend",
		       opts.verify ? ", data verified" : "");
	for (i = 0; i < nsizes; i++)
		fx_pp_size(&ctx, tx, rx, sizes[i]);

	fx_fini(&ctx);
	free(tx);
	free(rx);
	fx_info("PASS");
	return 0;
}
