/*
 * fx_rma.c - RMA and atomics between two processes.
 *
 * The server registers a window (application key, offset addressing,
 * FI_REMOTE_READ | FI_REMOTE_WRITE) with a counter bound for
 * FI_REMOTE_WRITE, filled with a known pattern. The client then:
 *   1. reads slices of every size (eager and rendezvous) and checks them;
 *   2. writes slices with another pattern, the server checks its window
 *      and that its MR counter counted every write;
 *   3. fi_writedata: the server gets an rx CQ entry with FI_REMOTE_WRITE |
 *      FI_RMA | FI_REMOTE_CQ_DATA and the data;
 *   4. atomics on a uint64 word and a double: fetch-add in a sequence
 *      (each old value checked), compare-and-swap that hits and misses,
 *      FI_ATOMIC_READ; the server checks the final values;
 *   5. access errors: a bad key (FI_EACCES) and a range past the window
 *      (FI_EINVAL) as error completions, memory untouched, the range
 *      error counted on the MR counter's error value.
 */
#include "common.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_RMA_KEY	0xc0ffeeULL
#define FX_RMA_WIN	(4 * FX_MIB)
#define FX_RMA_ATOM	(FX_RMA_WIN - 64)	/* offset of the atomic words */
#define FX_RMA_NADD	100
#define FX_RMA_DATA	0x8877665544332211ULL

static const size_t fx_rma_sizes[] = {
	1, 7, 64, 1000, 4096, 65536, 300000, FX_MIB + 5,
};
#define FX_RMA_NSIZES (sizeof(fx_rma_sizes) / sizeof(fx_rma_sizes[0]))

/* Slice i starts at a different, unaligned offset each time. */
static size_t fx_rma_off(size_t i)
{
	return i * 131 + 3;
}

static void fx_rma_wait_tx(struct fx_ctx *ctx, void *op_ctx, uint64_t flags,
			   const char *what)
{
	struct fx_comp c;

	fx_cq_wait_ok(ctx, ctx->txcq, &c, what);
	fx_check_comp(&c, op_ctx, flags, 0, 0, what);
}

static int fx_rma_wait_err(struct fx_ctx *ctx, const char *what)
{
	struct fx_comp c;
	int err = fx_cq_wait(ctx, ctx->txcq, &c);

	FX_CHECK(err, "%s: succeeded, expected an error", what);
	return err;
}

/* ---- client ------------------------------------------------------------- */

static void fx_rma_client_rw(struct fx_ctx *ctx, uint8_t *buf)
{
	struct fi_context octx;
	char what[64];
	size_t i;

	for (i = 0; i < FX_RMA_NSIZES; i++) {
		/* reads in [1 MiB, 2.1 MiB), writes from 2 MiB on */
		size_t len = fx_rma_sizes[i], off = fx_rma_off(i) + FX_MIB;

		snprintf(what, sizeof(what), "fi_read %zu bytes", len);
		memset(buf, 0, len);
		FX_RETRY(ctx, what, fi_read(ctx->ep, buf, len, NULL,
					    ctx->peer[0], off, FX_RMA_KEY,
					    &octx));
		fx_rma_wait_tx(ctx, &octx, FI_RMA | FI_READ, what);
		fx_check_at(buf, off, len, 1, what);
	}
	fx_info("reads: every size checked");
	for (i = 0; i < FX_RMA_NSIZES; i++) {
		size_t len = fx_rma_sizes[i], off = fx_rma_off(i) + 2 * FX_MIB;

		snprintf(what, sizeof(what), "fi_write %zu bytes", len);
		fx_fill_at(buf, off, len, 2);
		FX_RETRY(ctx, what, fi_write(ctx->ep, buf, len, NULL,
					     ctx->peer[0], off, FX_RMA_KEY,
					     &octx));
		fx_rma_wait_tx(ctx, &octx, FI_RMA | FI_WRITE, what);
	}
	fx_oob_sync(ctx);	/* the server checks */
	fx_oob_sync(ctx);	/* and counts nothing else meanwhile */
	fx_info("writes: every size written and counted");
}

static void fx_rma_client_data(struct fx_ctx *ctx, uint8_t *buf)
{
	struct fi_context octx;

	fx_fill_at(buf, 100, 500, 3);
	FX_RETRY(ctx, "fi_writedata",
		 fi_writedata(ctx->ep, buf, 500, NULL, FX_RMA_DATA,
			      ctx->peer[0], 100, FX_RMA_KEY, &octx));
	fx_rma_wait_tx(ctx, &octx, FI_RMA | FI_WRITE, "fi_writedata");
	fx_oob_sync(ctx);
}

static void fx_rma_client_atomics(struct fx_ctx *ctx)
{
	uint64_t one = 1, old, cmp, val;
	double dv = 0.5, dold;
	struct fi_context octx;
	int i;

	for (i = 0; i < FX_RMA_NADD; i++) {
		FX_RETRY(ctx, "fi_fetch_atomic SUM",
			 fi_fetch_atomic(ctx->ep, &one, 1, NULL, &old, NULL,
					 ctx->peer[0], FX_RMA_ATOM, FX_RMA_KEY,
					 FI_UINT64, FI_SUM, &octx));
		fx_rma_wait_tx(ctx, &octx, FI_ATOMIC | FI_READ,
			       "fi_fetch_atomic SUM");
		FX_CHECK(old == 1000 + (uint64_t)i, "fetch-add %d: old %llu",
			 i, (unsigned long long)old);
	}
	/* a compare that misses, then one that hits */
	cmp = 5;
	val = 77;
	FX_RETRY(ctx, "fi_compare_atomic miss",
		 fi_compare_atomic(ctx->ep, &val, 1, NULL, &cmp, NULL, &old,
				   NULL, ctx->peer[0], FX_RMA_ATOM, FX_RMA_KEY,
				   FI_UINT64, FI_CSWAP, &octx));
	fx_rma_wait_tx(ctx, &octx, FI_ATOMIC | FI_READ, "fi_compare_atomic");
	FX_CHECK(old == 1000 + FX_RMA_NADD, "cswap old %llu",
		 (unsigned long long)old);
	cmp = old;
	FX_RETRY(ctx, "fi_compare_atomic hit",
		 fi_compare_atomic(ctx->ep, &val, 1, NULL, &cmp, NULL, &old,
				   NULL, ctx->peer[0], FX_RMA_ATOM, FX_RMA_KEY,
				   FI_UINT64, FI_CSWAP, &octx));
	fx_rma_wait_tx(ctx, &octx, FI_ATOMIC | FI_READ, "fi_compare_atomic");
	FX_RETRY(ctx, "fi_atomic_read",
		 fi_fetch_atomic(ctx->ep, &val, 1, NULL, &old, NULL,
				 ctx->peer[0], FX_RMA_ATOM, FX_RMA_KEY,
				 FI_UINT64, FI_ATOMIC_READ, &octx));
	fx_rma_wait_tx(ctx, &octx, FI_ATOMIC | FI_READ, "FI_ATOMIC_READ");
	FX_CHECK(old == 77, "after cswap: %llu", (unsigned long long)old);
	/* a plain atomic on a double: 1.5 * 0.5 */
	FX_RETRY(ctx, "fi_atomic PROD",
		 fi_atomic(ctx->ep, &dv, 1, NULL, ctx->peer[0],
			   FX_RMA_ATOM + 8, FX_RMA_KEY, FI_DOUBLE, FI_PROD,
			   &octx));
	fx_rma_wait_tx(ctx, &octx, FI_ATOMIC | FI_WRITE, "fi_atomic PROD");
	FX_RETRY(ctx, "fi_atomic_read double",
		 fi_fetch_atomic(ctx->ep, &dv, 1, NULL, &dold, NULL,
				 ctx->peer[0], FX_RMA_ATOM + 8, FX_RMA_KEY,
				 FI_DOUBLE, FI_ATOMIC_READ, &octx));
	fx_rma_wait_tx(ctx, &octx, FI_ATOMIC | FI_READ, "FI_ATOMIC_READ");
	FX_CHECK(dold == 0.75, "double PROD: %g", dold);
	fx_oob_sync(ctx);
	fx_info("atomics: fetch-add sequence, cswap, read, double prod");
}

static void fx_rma_client_errors(struct fx_ctx *ctx, uint8_t *buf)
{
	int err;

	memset(buf, 0x5a, 64);
	FX_RETRY(ctx, "fi_write bad key",
		 fi_write(ctx->ep, buf, 64, NULL, ctx->peer[0], 0,
			  FX_RMA_KEY + 1, NULL));
	err = fx_rma_wait_err(ctx, "fi_write with a bad key");
	FX_CHECK(err == FI_EACCES, "bad key: %s", fi_strerror(err));
	FX_RETRY(ctx, "fi_write past the end",
		 fi_write(ctx->ep, buf, 64, NULL, ctx->peer[0],
			  FX_RMA_WIN - 32, FX_RMA_KEY, NULL));
	err = fx_rma_wait_err(ctx, "fi_write past the window");
	FX_CHECK(err == FI_EINVAL, "out of range: %s", fi_strerror(err));
	fx_oob_sync(ctx);
	fx_info("errors: bad key FI_EACCES, out of range FI_EINVAL");
}

/* ---- server -------------------------------------------------------------- */

static void fx_rma_server(struct fx_ctx *ctx, uint8_t *win,
			  struct fid_cntr *mrc)
{
	uint64_t *word = (uint64_t *)(void *)(win + FX_RMA_ATOM);
	double *dword = (double *)(void *)(win + FX_RMA_ATOM + 8);
	struct fx_comp c;
	char what[64];
	size_t i;

	fx_oob_sync(ctx);	/* writes done */
	for (i = 0; i < FX_RMA_NSIZES; i++) {
		size_t len = fx_rma_sizes[i], off = fx_rma_off(i) + 2 * FX_MIB;

		snprintf(what, sizeof(what), "window after fi_write %zu", len);
		fx_check_at(win + off, off, len, 2, what);
	}
	fx_cntr_wait(ctx, mrc, FX_RMA_NSIZES, "MR counter after the writes");
	FX_CHECK(fi_cntr_read(mrc) == FX_RMA_NSIZES, "MR counter %llu",
		 (unsigned long long)fi_cntr_read(mrc));
	fx_oob_sync(ctx);

	/* fi_writedata: an rx CQ entry with the data, nothing else asked */
	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "remote CQ data");
	FX_CHECK(c.e.flags == (FI_REMOTE_WRITE | FI_RMA | FI_REMOTE_CQ_DATA),
		 "remote CQ data flags %#llx", (unsigned long long)c.e.flags);
	FX_CHECK(c.e.data == FX_RMA_DATA, "remote CQ data %#llx",
		 (unsigned long long)c.e.data);
	fx_oob_sync(ctx);
	fx_check_at(win + 100, 100, 500, 3, "window after fi_writedata");

	fx_oob_sync(ctx);	/* atomics done */
	FX_CHECK(*word == 77, "atomic word %llu", (unsigned long long)*word);
	FX_CHECK(*dword == 0.75, "atomic double %g", *dword);

	fx_oob_sync(ctx);	/* errors done */
	fx_check_byte(win, 64, 0x00, "window start after a bad-key write");
	fx_check_at(win + FX_RMA_WIN - 32, FX_RMA_WIN - 32, 32, 1,
		    "window end after an out-of-range write");
	FX_CHECK(fi_cntr_readerr(mrc) == 1, "MR counter errors %llu",
		 (unsigned long long)fi_cntr_readerr(mrc));
}

int main(int argc, char **argv)
{
	struct fx_setup setup = {
		.caps = FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RMA_EVENT,
	};
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *mrc = NULL;
	struct fid_mr *mr = NULL;
	struct fx_opts opts;
	struct fx_ctx ctx;
	uint8_t *buf;

	fx_parse(argc, argv, "RMA and atomics: data, remote counter, "
		 "writedata, access errors", NULL, &opts);
	fx_init(&ctx, &opts, &setup);
	buf = fx_alloc(FX_RMA_WIN);
	if (ctx.server) {
		fx_fill(buf, FX_RMA_WIN, 1);
		memset(buf, 0, 64);
		memset(buf + 100, 0, 500);
		*(uint64_t *)(void *)(buf + FX_RMA_ATOM) = 1000;
		*(double *)(void *)(buf + FX_RMA_ATOM + 8) = 1.5;
		FX_CALL(fi_mr_reg(ctx.domain, buf, FX_RMA_WIN,
				  FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
				  FX_RMA_KEY, 0, &mr, NULL));
		FX_CALL(fi_cntr_open(ctx.domain, &cattr, &mrc, NULL));
		FX_CALL(fi_mr_bind(mr, &mrc->fid, FI_REMOTE_WRITE));
	}
	fx_oob_sync(&ctx);	/* the window exists */
	if (ctx.server) {
		fx_rma_server(&ctx, buf, mrc);
	} else {
		/* the slices read must hold the server's pattern */
		fx_rma_client_rw(&ctx, buf);
		fx_rma_client_data(&ctx, buf);
		fx_rma_client_atomics(&ctx);
		fx_rma_client_errors(&ctx, buf);
	}
	fx_oob_sync(&ctx);
	if (mr)
		FX_CALL(fi_close(&mr->fid));
	if (mrc)
		FX_CALL(fi_close(&mrc->fid));
	fx_fini(&ctx);
	free(buf);
	fx_info("PASS");
	return 0;
}
