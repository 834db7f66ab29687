/*
 * fb_bw.c - windowed tagged sends: bandwidth and message rate.
 *
 *   -m bw   (default) sizes 1 KiB .. 8 MiB, window 64 (-W), MB/s (10^6 B/s)
 *           RESULT bw <size> <MB/s>
 *   -m rate 8-byte messages, windows 1,4,16,64,256 (-l a,b,c), Mmsg/s
 *           RESULT rate <window> <Mmsg/s>
 *
 * The client sends a window of fi_tsend (with completions), waits for
 * their completions and for the server's ack; the server pre-posts the
 * next window's receives before it acks, so messages meet posted
 * receives. Warm-up: one window. The server ends a point after -t
 * seconds (at least two timed windows) and says so in the ack.
 *
 * Checks: every receive's length and tag; after the warm-up window, the
 * data in every receive buffer; at the end, the server's receive count
 * against the client's send count (over OOB).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fb_common.h"

#define BW_MAX_SIZE	(8 * FB_MIB)
#define BW_RX_REGION	(64 * FB_MIB)	/* receive buffers of one window */
#define BW_MAX_WINDOW	1024

struct bw {
	struct fb_ctx fb;
	bool rate;
	void *tx, *rx;
	struct fb_mr tx_mr, rx_mr;
	struct fb_op ops[BW_MAX_WINDOW];
	uint64_t total;		/* messages moved, all points */
};

static size_t bw_nbuf(size_t size, int window)
{
	size_t nbuf = BW_RX_REGION / size;

	if (nbuf > (size_t)window)
		nbuf = (size_t)window;
	return nbuf ? nbuf : 1;
}

/* windows to time at most: enough bytes, bounded */
static int bw_max_windows(struct bw *bw, size_t size, int window)
{
	/* loopback bandwidth moves by 2x with scheduling: time enough of
	 * it (about 0.5 s a point) that one hiccup does not set the median */
	double bytes = bw->rate ? 1e6 * 8 : 2048.0 * FB_MIB;
	double win = bytes / ((double)size * window);

	if (bw->fb.opts.iters > 0)
		return bw->fb.opts.iters;
	if (win > 100000)
		win = 100000;
	return win < 2 ? 2 : (int)win;
}

static void bw_post_window(struct bw *bw, size_t size, int window,
			   uint64_t tag)
{
	struct fb_ctx *ctx = &bw->fb;
	size_t nbuf = bw_nbuf(size, window);
	int k;

	for (k = 0; k < window; k++)
		if (fb_trecv(ctx, (char *)bw->rx + (k % nbuf) * size, size,
			     bw->rx_mr.desc, ctx->peer, tag, 0, &bw->ops[k]))
			fb_fail(ctx, "receive %d of a window of %d refused", k,
				window);
}

static void bw_check_window(struct bw *bw, size_t size, int window,
			    uint64_t tag, bool data)
{
	struct fb_ctx *ctx = &bw->fb;
	size_t nbuf = bw_nbuf(size, window), i;
	ssize_t bad;
	int k;

	for (k = 0; k < window; k++)
		if (bw->ops[k].done != 1 || bw->ops[k].len != size ||
		    bw->ops[k].tag != tag)
			fb_fail(ctx, "size %zu: receive %d: done %llu len %zu "
				"tag 0x%llx", size, k,
				(unsigned long long)bw->ops[k].done,
				bw->ops[k].len, (unsigned long long)bw->ops[k].tag);
	if (!data)
		return;
	for (i = 0; i < nbuf; i++) {
		bad = fb_check((char *)bw->rx + i * size, size, size);
		if (bad >= 0)
			fb_fail(ctx, "size %zu: buffer %zu differs at byte %zd",
				size, i, bad);
	}
}

/* One point's round: a window of size-byte messages on tag. */
struct bw_win {
	struct bw *bw;
	size_t size;
	int window;
	uint64_t tag;
};

static void bw_win_check(void *arg, int round)
{
	struct bw_win *x = arg;

	bw_check_window(x->bw, x->size, x->window, x->tag, round == 0);
}

static void bw_win_repost(void *arg)
{
	struct bw_win *x = arg;

	bw_post_window(x->bw, x->size, x->window, x->tag);
}

static void bw_win_send(void *arg)
{
	struct bw_win *x = arg;
	struct fb_ctx *ctx = &x->bw->fb;
	uint64_t base = ctx->tx_cnt;
	int k;

	for (k = 0; k < x->window; k++)
		if (fb_tsend(ctx, x->bw->tx, x->size, x->bw->tx_mr.desc, x->tag,
			     &x->bw->ops[k]))
			fb_fail(ctx, "send %d of a window refused", k);
	fb_wait_tx(ctx, base + (uint64_t)x->window);
}

static void bw_server(struct bw *bw, size_t size, int window, uint64_t tag)
{
	struct bw_win x = { bw, size, window, tag };
	struct fb_rounds r = {
		.arg = &x, .check = bw_win_check, .repost = bw_win_repost,
		.per_round = (uint64_t)window,
		.cap = fb_cap(&bw->fb, bw->rate ? 0.2 : 0.5, 0.03),
		.max_timed = bw_max_windows(bw, size, window),
	};

	memset(bw->rx, 0, bw_nbuf(size, window) * size);
	bw_post_window(bw, size, window, tag);
	bw->total += (uint64_t)fb_rounds_server(&bw->fb, &r) * window;
}

static double bw_client(struct bw *bw, size_t size, int window, uint64_t tag,
			uint64_t *msgs_p)
{
	struct bw_win x = { bw, size, window, tag };
	struct fb_rounds r = { .arg = &x, .round = bw_win_send };
	double secs;
	int rounds;

	secs = fb_rounds_client(&bw->fb, &r, &rounds);
	bw->total += (uint64_t)rounds * window;
	*msgs_p = (uint64_t)(rounds - FB_WARM_ROUNDS) * window;
	return secs;
}

static void bw_point(struct bw *bw, size_t size, int window, int idx)
{
	struct fb_ctx *ctx = &bw->fb;
	uint64_t tag = 0x200 + (uint64_t)idx, msgs;
	char param[32];
	double secs;

	fb_fill(bw->tx, size, size);
	if (ctx->server) {
		bw_server(bw, size, window, tag);
		return;
	}
	secs = bw_client(bw, size, window, tag, &msgs);
	if (bw->rate) {
		snprintf(param, sizeof(param), "%d", window);
		fb_result(ctx, "rate", param, (double)msgs / secs / 1e6);
	} else {
		fb_size_str(size, param, sizeof(param));
		fb_result(ctx, "bw", param, (double)msgs * (double)size / secs / 1e6);
	}
}

static void bw_run(struct bw *bw)
{
	struct fb_ctx *ctx = &bw->fb;
	const char *list = ctx->opts.list ? ctx->opts.list : "1,4,16,64,256";
	int window = ctx->opts.window ? ctx->opts.window : 64, idx = 0;
	size_t size;
	char *copy, *tok, *save;

	if (bw->rate) {
		size = ctx->opts.size ? ctx->opts.size : 8;
		if (ctx->opts.window) {
			bw_point(bw, size, window, idx);
			return;
		}
		copy = strdup(list);
		for (tok = strtok_r(copy, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save), idx++) {
			window = atoi(tok);
			if (window < 1 || window > BW_MAX_WINDOW)
				fb_fail(ctx, "-l: windows 1..%d", BW_MAX_WINDOW);
			bw_point(bw, size, window, idx);
		}
		free(copy);
		return;
	}
	if (window > BW_MAX_WINDOW)
		fb_fail(ctx, "-W: at most %d", BW_MAX_WINDOW);
	if (ctx->opts.size) {
		bw_point(bw, ctx->opts.size, window, idx);
		return;
	}
	for (size = FB_KIB; size <= BW_MAX_SIZE; size *= 2, idx++)
		bw_point(bw, size, window, idx);
}

int main(int argc, char **argv)
{
	struct bw *bw = calloc(1, sizeof(*bw));
	struct fb_ctx *ctx;
	struct fi_info *hints;
	size_t max_size;
	bool ok;

	if (!bw)
		return 1;
	ctx = &bw->fb;
	fb_init(ctx, argc, argv, "fb_bw", NULL);
	bw->rate = ctx->opts.mode && !strcmp(ctx->opts.mode, "rate");
	if (ctx->opts.mode && !bw->rate && strcmp(ctx->opts.mode, "bw"))
		fb_fail(ctx, "-m: bw or rate");
	max_size = ctx->opts.size ? ctx->opts.size : bw->rate ? 8 : BW_MAX_SIZE;
	if (max_size > BW_MAX_SIZE)
		fb_fail(ctx, "-S: at most %lu bytes", BW_MAX_SIZE);
	fb_oob_open(ctx);

	hints = fb_hints(ctx, FI_TAGGED | FI_SEND | FI_RECV);
	ok = fb_oob_agree(ctx, fb_getinfo(ctx, hints) == 0);
	fi_freeinfo(hints);
	if (!ok) {
		fb_result_na(ctx, bw->rate ? "rate" : "bw", "*",
			     "fi_getinfo offers no FI_TAGGED endpoint");
		fb_oob_close(ctx);
		free(bw);
		return 0;
	}
	fb_domain_open(ctx);
	fb_ep_open(ctx, 0, 0, NULL, NULL);

	bw->tx = fb_alloc(ctx, max_size);
	bw->rx = fb_alloc(ctx, BW_RX_REGION);
	if (ctx->mr_local) {
		fb_mr_reg(ctx, bw->tx, max_size, FI_SEND, &bw->tx_mr);
		fb_mr_reg(ctx, bw->rx, BW_RX_REGION, FI_RECV, &bw->rx_mr);
	}
	bw_run(bw);

	/* the receiver must have seen exactly what the sender sent */
	fb_oob_totals_agree(ctx, bw->total);

	fb_mr_close(&bw->tx_mr);
	fb_mr_close(&bw->rx_mr);
	fb_domain_close(ctx);
	fb_oob_close(ctx);
	free(bw->tx);
	free(bw->rx);
	free(bw);
	return 0;
}
