/*
 * fb_rma.c - RMA and atomics through the public libfabric API: the client
 * acts on a region the server registered; the server only progresses.
 *
 *   -m lat     fi_write and fi_read latency, 8 B .. 1 MiB (x8 steps):
 *              post to local completion of one operation, with
 *              FI_DELIVERY_COMPLETE for writes (the data is placed), in us
 *              RESULT rma_write_lat <size> <usec>
 *              RESULT rma_read_lat <size> <usec>
 *   -m bw      windows of 64 writes / reads, 4 KiB .. 8 MiB (x4 steps),
 *              MB/s (10^6 B/s)
 *              RESULT rma_write_bw <size> <MB/s>
 *              RESULT rma_read_bw <size> <MB/s>
 *   -m atomic  fi_atomic FI_SUM on one uint64_t, window 64, Mops/s
 *              RESULT atomic_rate 64 <Mops/s>
 *
 * A provider whose fi_getinfo offers no FI_RMA (FI_ATOMIC) endpoint gets
 * "NA ..." lines: nothing is measured then.
 *
 * Checks: the first read of each size reads the server's pattern and the
 * first write of each size is read back; after the atomics the server
 * checks its counter equals the number of additions the client made.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fb_common.h"

#define RMA_MAX_SIZE	(8 * FB_MIB)
#define RMA_WINDOW	64
#define RMA_SEED	77

struct rma {
	struct fb_ctx fb;
	const char *mode;
	char *buf;		/* server: the target; client: local buffer */
	char *chk;		/* client: read-back buffer */
	struct fb_mr mr, chk_mr;
	struct fb_rmr peer;
	struct fb_op ops[RMA_WINDOW];
	uint64_t atomic_adds;
};

static int rma_iters(struct fb_ctx *ctx, size_t size)
{
	size_t full = (32 * FB_MIB) / size;

	if (full > 2000)
		full = 2000;
	if (full < 10)
		full = 10;
	return fb_iters(ctx, (int)full);
}

static void rma_post(struct rma *rma, bool write, void *buf, size_t len,
		     void *desc, uint64_t off, struct fb_op *op)
{
	struct fb_ctx *ctx = &rma->fb;
	struct fi_rma_iov riov = {
		.addr = rma->peer.addr + off,
		.len = len,
		.key = rma->peer.key,
	};
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_rma msg = {
		.msg_iov = &iov,
		.desc = &desc,
		.iov_count = 1,
		.addr = ctx->peer,
		.rma_iov = &riov,
		.rma_iov_count = 1,
		.context = op,
	};
	double since = fb_now();
	ssize_t ret;

	op->kind = FB_OP_RMA;
	op->done = 0;
	for (;;) {
		ret = write ? fi_writemsg(ctx->ep, &msg, FI_COMPLETION |
					  FI_DELIVERY_COMPLETE) :
			fi_readmsg(ctx->ep, &msg, FI_COMPLETION);
		if (!ret)
			return;
		if (ret != -FI_EAGAIN)
			fb_fail(ctx, "fi_%smsg(%zu): %s", write ? "write" : "read",
				len, fi_strerror((int)-ret));
		if (fb_now() - since > FB_EAGAIN_STUCK_SEC)
			fb_fail(ctx, "RMA refused for %.0f s", FB_EAGAIN_STUCK_SEC);
		fb_progress(ctx);
	}
}

/* the first write of a size, read back into chk */
static void rma_check_write(struct rma *rma, size_t size)
{
	struct fb_ctx *ctx = &rma->fb;
	ssize_t bad;

	memset(rma->chk, 0, size);
	rma_post(rma, false, rma->chk, size, rma->chk_mr.desc, 0, &rma->ops[0]);
	fb_wait_op(ctx, &rma->ops[0]);
	bad = fb_check(rma->chk, size, size);
	if (bad >= 0)
		fb_fail(ctx, "write of %zu: read back differs at byte %zd",
			size, bad);
}

static void rma_lat_size(struct rma *rma, bool write, size_t size)
{
	struct fb_ctx *ctx = &rma->fb;
	int iters = rma_iters(ctx, size), warm = iters / 10 + 1, i;
	double start = 0.0;
	char param[32];
	ssize_t bad;

	if (write)
		fb_fill(rma->buf, size, size);
	else
		memset(rma->buf, 0, size);
	for (i = 0; i < warm + iters; i++) {
		if (i == warm)
			start = fb_now();
		rma_post(rma, write, rma->buf, size, rma->mr.desc, 0,
			 &rma->ops[0]);
		fb_wait_op(ctx, &rma->ops[0]);
		if (i == 0 && write) {
			rma_check_write(rma, size);
		} else if (i == 0) {
			bad = fb_check(rma->buf, size, RMA_SEED);
			if (bad >= 0)
				fb_fail(ctx, "read of %zu: differs at byte %zd",
					size, bad);
		}
	}
	fb_size_str(size, param, sizeof(param));
	fb_result(ctx, write ? "rma_write_lat" : "rma_read_lat", param,
		  (fb_now() - start) * 1e6 / iters);
}

static void rma_bw_size(struct rma *rma, bool write, size_t size)
{
	struct fb_ctx *ctx = &rma->fb;
	double bytes = 256.0 * FB_MIB, start = 0.0, secs;
	int windows = (int)(bytes / ((double)size * RMA_WINDOW)), w, k;
	uint64_t base = ctx->tx_cnt;
	char param[32];

	if (ctx->opts.quick)
		windows /= 10;
	if (windows < 2)
		windows = 2;
	if (write)
		fb_fill(rma->buf, size, size);
	for (w = 0; w <= windows; w++) {
		if (w == 1)
			start = fb_now();
		for (k = 0; k < RMA_WINDOW; k++)
			rma_post(rma, write, rma->buf, size, rma->mr.desc, 0,
				 &rma->ops[k]);
		fb_wait_tx(ctx, base + (uint64_t)(w + 1) * RMA_WINDOW);
		if (fb_now() - start > fb_cap(ctx, 0.3, 0.05) && w >= 2) {
			w++;
			break;
		}
	}
	secs = fb_now() - start;
	if (write)
		rma_check_write(rma, size);
	fb_size_str(size, param, sizeof(param));
	fb_result(ctx, write ? "rma_write_bw" : "rma_read_bw", param,
		  (double)(w - 1) * RMA_WINDOW * (double)size / secs / 1e6);
}

static void rma_atomic_rate(struct rma *rma)
{
	struct fb_ctx *ctx = &rma->fb;
	uint64_t one = 1, base = ctx->tx_cnt;
	int windows = fb_iters(ctx, 2000), w, k;
	double start = 0.0, since;
	struct fi_atomic_attr attr;
	ssize_t ret;

	/* FI_ATOMIC in fi_getinfo does not promise every op x type */
	ret = fi_query_atomic(ctx->domain, FI_UINT64, FI_SUM, &attr, 0);
	if (ret) {
		fb_result_na(ctx, "atomic_rate", "64",
			     "fi_query_atomic(FI_UINT64, FI_SUM): %s",
			     fi_strerror((int)-ret));
		return;
	}

	for (w = 0; w <= windows; w++) {
		if (w == 1)
			start = fb_now();
		for (k = 0; k < RMA_WINDOW; k++) {
			rma->ops[k].kind = FB_OP_ATOMIC;
			rma->ops[k].done = 0;
			since = fb_now();
			while ((ret = fi_atomic(ctx->ep, &one, 1, rma->mr.desc,
						ctx->peer, rma->peer.addr,
						rma->peer.key, FI_UINT64, FI_SUM,
						&rma->ops[k])) == -FI_EAGAIN) {
				if (fb_now() - since > FB_EAGAIN_STUCK_SEC)
					fb_fail(ctx, "atomic refused");
				fb_progress(ctx);
			}
			if (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP) {
				fb_result_na(ctx, "atomic_rate", "64",
					     "fi_atomic: %s", fi_strerror((int)-ret));
				return;
			}
			if (ret)
				fb_fail(ctx, "fi_atomic: %s", fi_strerror((int)-ret));
			rma->atomic_adds++;
		}
		fb_wait_tx(ctx, base + (uint64_t)(w + 1) * RMA_WINDOW);
		if (fb_now() - start > fb_cap(ctx, 0.3, 0.05) && w >= 2) {
			w++;
			break;
		}
	}
	fb_result(ctx, "atomic_rate", "64",
		  (double)(w - 1) * RMA_WINDOW / (fb_now() - start) / 1e6);
}

static void rma_client(struct rma *rma)
{
	size_t size;

	if (!strcmp(rma->mode, "lat")) {
		/* reads first: they check the server's pattern */
		for (size = 8; size <= FB_MIB; size *= 8)
			rma_lat_size(rma, false, size);
		for (size = 8; size <= FB_MIB; size *= 8)
			rma_lat_size(rma, true, size);
	} else if (!strcmp(rma->mode, "bw")) {
		for (size = 4 * FB_KIB; size <= RMA_MAX_SIZE; size *= 4)
			rma_bw_size(rma, true, size);
		for (size = 4 * FB_KIB; size <= RMA_MAX_SIZE; size *= 4)
			rma_bw_size(rma, false, size);
	} else {
		rma_atomic_rate(rma);
	}
}

/* manual progress: the target's provider moves data only while polled */
static void rma_server(struct rma *rma)
{
	struct fb_ctx *ctx = &rma->fb;

	while (!fb_oob_readable(ctx))
		fb_progress(ctx);
}

int main(int argc, char **argv)
{
	struct rma *rma = calloc(1, sizeof(*rma));
	struct fb_ctx *ctx;
	struct fi_info *hints;
	uint64_t caps, adds, access;
	bool atomic, ok;

	if (!rma)
		return 1;
	ctx = &rma->fb;
	fb_init(ctx, argc, argv, "fb_rma", NULL);
	rma->mode = ctx->opts.mode ? ctx->opts.mode : "lat";
	if (strcmp(rma->mode, "lat") && strcmp(rma->mode, "bw") &&
	    strcmp(rma->mode, "atomic"))
		fb_fail(ctx, "-m: lat, bw or atomic");
	atomic = !strcmp(rma->mode, "atomic");
	fb_oob_open(ctx);

	caps = FI_TAGGED | FI_SEND | FI_RECV | (atomic ? FI_ATOMIC : FI_RMA) |
	       FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	hints = fb_hints(ctx, caps);
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	ok = fb_oob_agree(ctx, fb_getinfo(ctx, hints) == 0);
	fi_freeinfo(hints);
	if (!ok) {
		if (atomic)
			fb_result_na(ctx, "atomic_rate", "*",
				     "fi_getinfo offers no FI_ATOMIC endpoint");
		else if (!strcmp(rma->mode, "lat"))
			fb_result_na(ctx, "rma_lat", "*",
				     "fi_getinfo offers no FI_RMA endpoint");
		else
			fb_result_na(ctx, "rma_bw", "*",
				     "fi_getinfo offers no FI_RMA endpoint");
		fb_oob_close(ctx);
		free(rma);
		return 0;
	}
	fb_domain_open(ctx);
	fb_ep_open(ctx, 0, 0, NULL, NULL);

	rma->buf = fb_alloc(ctx, RMA_MAX_SIZE);
	rma->chk = fb_alloc(ctx, RMA_MAX_SIZE);
	access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	fb_mr_reg(ctx, rma->buf, RMA_MAX_SIZE, access, &rma->mr);
	if (ctx->mr_local)
		fb_mr_reg(ctx, rma->chk, RMA_MAX_SIZE, FI_READ, &rma->chk_mr);
	if (ctx->server)
		fb_fill(rma->buf, RMA_MAX_SIZE, RMA_SEED);
	if (ctx->server && atomic)
		memset(rma->buf, 0, sizeof(uint64_t));
	fb_mr_xchg(ctx, &rma->mr, RMA_MAX_SIZE, &rma->peer);
	fb_oob_sync(ctx);

	if (ctx->server)
		rma_server(rma);
	else
		rma_client(rma);

	/* the client is done (its OOB bytes end the server's loop) */
	fb_oob_xchg(ctx, &rma->atomic_adds, &adds, sizeof(adds));
	if (ctx->server && atomic) {
		memcpy(&rma->atomic_adds, rma->buf, sizeof(uint64_t));
		if (rma->atomic_adds != adds)
			fb_fail(ctx, "atomic counter %llu, client added %llu",
				(unsigned long long)rma->atomic_adds,
				(unsigned long long)adds);
	}
	fb_oob_sync(ctx);

	fb_mr_close(&rma->mr);
	fb_mr_close(&rma->chk_mr);
	fb_domain_close(ctx);
	fb_oob_close(ctx);
	free(rma->buf);
	free(rma->chk);
	free(rma);
	return 0;
}
