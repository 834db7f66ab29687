/*
 * fx_flood.c - floods of small sends a receiver takes only later, and
 * what they cost the sender (docs/design.md §7.2, §7.5).
 *
 * Phase 1 (tsend): the client posts -N (default 200,000) fi_tsend of 8
 * bytes, each completing before the server has posted anything, then a
 * zero-byte marker on another tag. The server receives the marker first
 * (sends are ordered, so every message of the flood has reached it and
 * is unexpected there), then posts the N receives; each gets its message,
 * in order, every payload checked. The flood is more than the server's
 * overflow buffers hold: past them the server keeps headers and pulls
 * the payloads the client kept. No post may stay -FI_EAGAIN for long
 * (FX_RETRY fails after its wait): a flood must not block the sender.
 *
 * Phase 2 (inject): the same with fi_tinject (no completions).
 *
 * Phase 3 (heap): the client posts 20,000 fi_tsend of 8 bytes while the
 * server does not progress at all, so they stay queued at the client,
 * and measures its heap in use (mallinfo2 uordblks + hblkhd, the blocks
 * malloc maps on their own): while queued it
 * may grow by at most (8 + FX_FL_PER_SEND) bytes per send; once the
 * server has received them all (its reply, on the same link, carries the
 * acceptance of every one) it must be back within FX_FL_HEAP_SLACK of
 * where it started. The numbers are printed either way.
 *
 * -e msg uses untagged messages (fi_send, fi_inject).
 */
#include "common.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_FL_N		200000
#define FX_FL_QUEUED	20000
#define FX_FL_LEN	8
#define FX_FL_TAG	0x71ULL
#define FX_FL_TAG_MARK	0x72ULL
#define FX_FL_TAG_DONE	0x73ULL
/* what a queued send may cost beyond its payload: the engine operation,
 * the transport's share of the queue (docs/design.md §7.5) */
#define FX_FL_PER_SEND	512
/* what may stay after the flood: the pools' spare chunks */
#define FX_FL_HEAP_SLACK	(2 * FX_MIB)

struct fx_fl {
	struct fx_ctx *ctx;
	int phase;
	int n;
	uint8_t *buf;		/* message i at buf + i * FX_FL_LEN */
	struct fi_context *ctxs;
	uint8_t *seen;
	int done;		/* completions taken */
};

static uint64_t fx_fl_seed(int phase, int i)
{
	return ((uint64_t)phase << 40) | (uint64_t)i;
}

static void fx_fl_init(struct fx_fl *fl, struct fx_ctx *ctx, int phase, int n)
{
	memset(fl, 0, sizeof(*fl));
	fl->ctx = ctx;
	fl->phase = phase;
	fl->n = n;
	fl->buf = fx_alloc((size_t)n * FX_FL_LEN);
	fl->ctxs = calloc((size_t)n, sizeof(*fl->ctxs));
	fl->seen = calloc((size_t)n, 1);
	FX_CHECK(fl->ctxs && fl->seen, "out of memory");
}

static void fx_fl_fini(struct fx_fl *fl)
{
	free(fl->buf);
	free(fl->ctxs);
	free(fl->seen);
}

/* One completion of the flood: the right operation, once, and for a
 * receive the right message. */
static void fx_fl_check(struct fx_fl *fl, struct fx_comp *c, bool recv)
{
	struct fx_ctx *ctx = fl->ctx;
	char what[64];
	int i;

	i = fx_slot_of(c, fl->ctxs, fl->n, fl->seen,
		       recv ? "flood receive" : "flood send");
	snprintf(what, sizeof(what), "phase %d message %d", fl->phase, i);
	if (!recv) {
		fx_check_comp(c, &fl->ctxs[i], FI_SEND | fx_xfer_flag(ctx), 0,
			      0, what);
	} else {
		fx_check_comp(c, &fl->ctxs[i], FI_RECV | fx_xfer_flag(ctx),
			      FX_FL_LEN, ctx->opts->xfer == FX_XFER_MSG ? 0 :
			      FX_FL_TAG, what);
		fx_check(fl->buf + (size_t)i * FX_FL_LEN, FX_FL_LEN,
			 fx_fl_seed(fl->phase, i), what);
	}
	fl->done++;
}

/* Take what completed so far without waiting (the CQ stays short). */
static void fx_fl_reap(struct fx_fl *fl, struct fid_cq *cq, bool recv)
{
	struct fi_cq_tagged_entry e[64];
	struct fx_comp c;
	ssize_t ret, k;

	for (;;) {
		ret = fi_cq_read(cq, e, 64);
		if (ret == -FI_EAGAIN)
			return;
		if (ret < 0) {
			/* the error entry: fx_cq_wait_ok reports it */
			fx_cq_wait_ok(fl->ctx, cq, &c, "flood");
			return;
		}
		for (k = 0; k < ret; k++) {
			memset(&c, 0, sizeof(c));
			c.e = e[k];
			fx_fl_check(fl, &c, recv);
		}
	}
}

static void fx_fl_wait_all(struct fx_fl *fl, struct fid_cq *cq, bool recv)
{
	struct fx_comp c;

	fx_fl_reap(fl, cq, recv);
	while (fl->done < fl->n) {
		fx_cq_wait_ok(fl->ctx, cq, &c, recv ? "flood receive" :
						      "flood send");
		fx_fl_check(fl, &c, recv);
	}
}

static void fx_fl_post_sends(struct fx_fl *fl, bool inject)
{
	struct fx_ctx *ctx = fl->ctx;
	bool msg = ctx->opts->xfer == FX_XFER_MSG;
	uint8_t *p;
	int i;

	for (i = 0; i < fl->n; i++) {
		p = fl->buf + (size_t)i * FX_FL_LEN;
		fx_fill(p, FX_FL_LEN, fx_fl_seed(fl->phase, i));
		if (inject && msg)
			FX_RETRY(ctx, "fi_inject",
				 fi_inject(ctx->ep, p, FX_FL_LEN, ctx->peer[0]));
		else if (inject)
			FX_RETRY(ctx, "fi_tinject",
				 fi_tinject(ctx->ep, p, FX_FL_LEN,
					    ctx->peer[0], FX_FL_TAG));
		else
			fx_send(ctx, p, FX_FL_LEN, ctx->peer[0], FX_FL_TAG,
				&fl->ctxs[i]);
		if (!inject && i % 256 == 255)
			fx_fl_reap(fl, ctx->txcq, false);
	}
	if (inject)
		fl->done = fl->n;	/* injects complete at the call */
	else
		fx_fl_wait_all(fl, ctx->txcq, false);
}

/* server: the N receives, in send order, reaped as they complete */
static void fx_fl_recv_all(struct fx_fl *fl)
{
	struct fx_ctx *ctx = fl->ctx;
	int i;

	memset(fl->buf, 0, (size_t)fl->n * FX_FL_LEN);
	for (i = 0; i < fl->n; i++) {
		fx_recv(ctx, fl->buf + (size_t)i * FX_FL_LEN, FX_FL_LEN,
			FI_ADDR_UNSPEC, FX_FL_TAG, 0, &fl->ctxs[i]);
		if (i % 256 == 255)
			fx_fl_reap(fl, ctx->rxcq, true);
	}
	fx_fl_wait_all(fl, ctx->rxcq, true);
}

/* A zero-byte message on tag: posted by one side, sent by the other. */
static void fx_fl_marker_send(struct fx_ctx *ctx, fi_addr_t to, uint64_t tag)
{
	struct fi_context mc;
	struct fx_comp c;

	FX_RETRY(ctx, "fi_tsend marker",
		 fi_tsend(ctx->ep, NULL, 0, NULL, to, tag, &mc));
	fx_cq_wait_ok(ctx, ctx->txcq, &c, "marker send");
	fx_check_comp(&c, &mc, FI_SEND | FI_TAGGED, 0, 0, "marker send");
}

static void fx_fl_marker_wait(struct fx_ctx *ctx, struct fi_context *mc,
			      uint64_t tag)
{
	struct fx_comp c;

	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "marker");
	fx_check_comp(&c, mc, FI_RECV | FI_TAGGED, 0, tag, "marker");
}

/* in use: malloc'd (uordblks) and mmap'd blocks (hblkhd: large ones) */
static size_t fx_fl_heap(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* Phases 1 and 2: an unexpected flood, received late, every byte checked. */
static void fx_fl_flood(struct fx_ctx *ctx, int phase, bool inject)
{
	int n = ctx->opts->count ? ctx->opts->count : FX_FL_N;
	struct fi_context mc;
	struct fx_fl fl;
	uint64_t t0 = fx_now_us();
	size_t h0, h1;

	fx_fl_init(&fl, ctx, phase, n);
	fx_oob_sync(ctx);
	if (ctx->server) {
		h0 = fx_fl_heap();
		FX_RETRY(ctx, "fi_trecv marker",
			 fi_trecv(ctx->ep, NULL, 0, NULL, FI_ADDR_UNSPEC,
				  FX_FL_TAG_MARK, 0, &mc));
		/* every message before the marker is here, unexpected */
		fx_fl_marker_wait(ctx, &mc, FX_FL_TAG_MARK);
		h1 = fx_fl_heap();
		fx_info("phase %d: %d unexpected messages held: heap %+.0f B "
			"(%.0f B each, overflow buffers included)", phase, n,
			(double)h1 - (double)h0,
			((double)h1 - (double)h0) / n);
		fx_fl_recv_all(&fl);
	} else {
		fx_fl_post_sends(&fl, inject);
		fx_fl_marker_send(ctx, ctx->peer[0], FX_FL_TAG_MARK);
	}
	/* the client progresses here: the server pulls what it kept */
	fx_oob_sync(ctx);
	fx_cq_expect_empty(ctx, ctx->server ? ctx->rxcq : ctx->txcq, 10,
			   "after the flood");
	fx_fl_fini(&fl);
	fx_info("phase %d: %d unexpected %s of %d B received in order, "
		"payloads checked, in %.1f s", phase, n,
		inject ? "injects" : "sends", FX_FL_LEN,
		(double)(fx_now_us() - t0) / 1e6);
}

/* Phase 3: sends queued at the client; its heap while and after. */
static void fx_fl_heap_phase(struct fx_ctx *ctx)
{
	int n = FX_FL_QUEUED;
	struct fi_context dc;
	struct fx_fl fl;
	struct fid_ep *ep;
	size_t h0, h1, h2;

	fx_fl_init(&fl, ctx, 3, n);
	fx_oob_sync(ctx);
	if (ctx->server) {
		/* no progress at all until the client has queued them */
		ep = ctx->ep;
		ctx->ep = NULL;
		FX_CHECK(fx_oob_recv_u64(ctx, 0) == (uint64_t)n,
			 "client queued a different number of sends");
		ctx->ep = ep;
		fx_fl_recv_all(&fl);
		/* on the same link, after the acceptance of every one */
		fx_fl_marker_send(ctx, ctx->peer[0], FX_FL_TAG_DONE);
	} else {
		FX_RETRY(ctx, "fi_trecv done",
			 fi_trecv(ctx->ep, NULL, 0, NULL, FI_ADDR_UNSPEC,
				  FX_FL_TAG_DONE, 0, &dc));
		h0 = fx_fl_heap();
		fx_fl_post_sends(&fl, false);
		h1 = fx_fl_heap();
		fx_oob_send_u64(ctx, 0, (uint64_t)n);
		fx_fl_marker_wait(ctx, &dc, FX_FL_TAG_DONE);
		h2 = fx_fl_heap();
		fx_info("phase 3: heap in use %zu B at the start; %d sends of "
			"%d B queued: %+.0f B (%.0f B per send, bound %d); "
			"after delivery: %+.0f B (bound %lu)", h0, n,
			FX_FL_LEN, (double)h1 - (double)h0,
			((double)h1 - (double)h0) / n,
			FX_FL_LEN + FX_FL_PER_SEND, (double)h2 - (double)h0,
			FX_FL_HEAP_SLACK);
		if (!getenv("FX_FLOOD_NO_BOUNDS")) {
			FX_CHECK(h1 <= h0 + (size_t)n * (FX_FL_LEN +
							 FX_FL_PER_SEND),
				 "queued sends cost %zu B each",
				 (h1 - h0) / (size_t)n);
			FX_CHECK(h2 <= h0 + FX_FL_HEAP_SLACK,
				 "%zu B still in use after delivery", h2 - h0);
		}
	}
	fx_oob_sync(ctx);
	fx_fl_fini(&fl);
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG,
				  .cq_size = 4096 };
	struct fx_opts opts;
	struct fx_ctx ctx;

	fx_parse(argc, argv, "floods of small sends received late; the "
		 "sender's heap",
		 "  -N <n>        messages in the flood phases (default "
		 "200000)\n", &opts);
	fx_init(&ctx, &opts, &setup);
	fx_fl_flood(&ctx, 1, false);
	fx_fl_flood(&ctx, 2, true);
	fx_fl_heap_phase(&ctx);
	fx_fini(&ctx);
	fx_info("PASS");
	return 0;
}
