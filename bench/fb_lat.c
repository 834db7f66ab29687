/*
 * fb_lat.c - tagged ping-pong latency, 1 B .. 8 MiB (powers of two), one
 * way (half the round trip), warm-up iterations excluded.
 *
 *   fb_lat -p <prov> [-B port]            server
 *   fb_lat -p <prov> [-P port] 127.0.0.1  client; prints
 *   RESULT lat <size> <usec>
 *
 * Sends of at most the provider's inject_size use fi_tinject (as fabtests
 * and Open MPI's blocking send do); -J forces fi_tsend. Every size's first
 * exchange checks the data both ways, and every receive checks its length
 * and tag, so a provider that drops or truncates messages fails instead of
 * running fast.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fb_common.h"

#define LAT_MAX_SIZE	(8 * FB_MIB)

struct lat {
	struct fb_ctx fb;
	void *tx, *rx;
	struct fb_mr tx_mr, rx_mr;
	struct fb_op tx_op, rx_op;
};

static int lat_iters(struct fb_ctx *ctx, size_t size)
{
	size_t full = (64 * FB_MIB) / (size ? size : 1);

	if (full > 1000)
		full = 1000;
	if (full < 10)
		full = 10;
	return fb_iters(ctx, (int)full);
}

static void lat_send(struct lat *lat, size_t size, uint64_t tag)
{
	struct fb_ctx *ctx = &lat->fb;

	fb_tsend_small(ctx, lat->tx, size, lat->tx_mr.desc, tag, &lat->tx_op);
}

static void lat_post_recv(struct lat *lat, size_t size, uint64_t tag)
{
	if (fb_trecv(&lat->fb, lat->rx, size, lat->rx_mr.desc, lat->fb.peer,
		     tag, 0, &lat->rx_op))
		fb_fail(&lat->fb, "receive refused");
}

static void lat_wait_recv(struct lat *lat, size_t size, uint64_t tag,
			  bool check, uint64_t seed)
{
	struct fb_ctx *ctx = &lat->fb;
	ssize_t bad;

	fb_wait_op(ctx, &lat->rx_op);
	if (lat->rx_op.len != size || lat->rx_op.tag != tag)
		fb_fail(ctx, "size %zu: received len %zu tag 0x%llx", size,
			lat->rx_op.len, (unsigned long long)lat->rx_op.tag);
	if (check) {
		bad = fb_check(lat->rx, size, seed);
		if (bad >= 0)
			fb_fail(ctx, "size %zu: data differs at byte %zd", size, bad);
	}
}

static void lat_run_size(struct lat *lat, size_t size, int idx)
{
	struct fb_ctx *ctx = &lat->fb;
	int iters = lat_iters(ctx, size);
	int warm = iters / 10 > 2 ? iters / 10 : 2;
	int total = warm + iters, i;
	uint64_t tag = 0x100 + (uint64_t)idx;
	uint64_t my_seed = size * 2 + ctx->server, peer_seed = size * 2 + !ctx->server;
	double start = 0.0, end;
	char param[32];

	fb_fill(lat->tx, size, my_seed);
	memset(lat->rx, 0, size);
	fb_oob_sync(ctx);

	if (ctx->server) {
		lat_post_recv(lat, size, tag);
		for (i = 0; i < total; i++) {
			lat_wait_recv(lat, size, tag, i == 0, peer_seed);
			if (i + 1 < total)
				lat_post_recv(lat, size, tag);
			lat_send(lat, size, tag);
		}
		return;
	}
	for (i = 0; i < total; i++) {
		if (i == warm)
			start = fb_now();
		lat_post_recv(lat, size, tag);
		lat_send(lat, size, tag);
		lat_wait_recv(lat, size, tag, i == 0, peer_seed);
	}
	end = fb_now();
	fb_size_str(size, param, sizeof(param));
	fb_result(ctx, "lat", param, (end - start) * 1e6 / iters / 2.0);
}

int main(int argc, char **argv)
{
	struct lat lat;
	struct fb_ctx *ctx = &lat.fb;
	struct fi_info *hints;
	size_t size;
	bool ok;
	int idx;

	memset(&lat, 0, sizeof(lat));
	fb_init(ctx, argc, argv, "fb_lat", NULL);
	fb_oob_open(ctx);

	hints = fb_hints(ctx, FI_TAGGED | FI_SEND | FI_RECV);
	ok = fb_oob_agree(ctx, fb_getinfo(ctx, hints) == 0);
	fi_freeinfo(hints);
	if (!ok) {
		fb_result_na(ctx, "lat", "*", "fi_getinfo offers no FI_TAGGED endpoint");
		return 0;
	}
	fb_domain_open(ctx);
	fb_ep_open(ctx, 0, 0, NULL, NULL);

	lat.tx = fb_alloc(ctx, LAT_MAX_SIZE);
	lat.rx = fb_alloc(ctx, LAT_MAX_SIZE);
	if (ctx->mr_local) {
		fb_mr_reg(ctx, lat.tx, LAT_MAX_SIZE, FI_SEND, &lat.tx_mr);
		fb_mr_reg(ctx, lat.rx, LAT_MAX_SIZE, FI_RECV, &lat.rx_mr);
	}

	if (ctx->opts.size > LAT_MAX_SIZE)
		fb_fail(ctx, "-S: at most %lu bytes", LAT_MAX_SIZE);
	if (ctx->opts.size)
		lat_run_size(&lat, ctx->opts.size, 0);
	else
		for (size = 1, idx = 0; size <= LAT_MAX_SIZE; size *= 2, idx++)
			lat_run_size(&lat, size, idx);

	fb_oob_sync(ctx);
	fb_mr_close(&lat.tx_mr);
	fb_mr_close(&lat.rx_mr);
	fb_domain_close(ctx);
	fb_oob_close(ctx);
	free(lat.tx);
	free(lat.rx);
	return 0;
}
