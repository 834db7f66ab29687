/*
 * fx_access.c - access control through the API (docs/robustness.md):
 * every RMA the target must refuse ends in an error completion at the
 * initiator, and neither the target's memory nor the initiator's read
 * buffer is touched. fx_rma covers a write with an unknown key and a
 * write past the end of a window; this program covers the rest:
 *
 *   1. access rights: a window registered FI_REMOTE_READ only can be
 *      read but not written (fi_write, fi_atomic: FI_EACCES); one
 *      registered FI_REMOTE_WRITE only can be written but not read
 *      (fi_read, fi_fetch_atomic: FI_EACCES);
 *   2. keys and ranges on reads: an unknown key (FI_EACCES), a read
 *      crossing the end, one starting just past it, and a write whose
 *      offset wraps around 2^64 (FI_EINVAL);
 *   3. fi_close of the MR: a window written and read back fine, then
 *      closed by the target; a later write or read fails (FI_EACCES);
 *   4. auth_key: the server opens a second endpoint with an 8-byte
 *      auth_key. A client endpoint with the same key writes to it and
 *      sends it a message; one with another key, and one with no key,
 *      are refused: their writes, reads and a FI_TRANSMIT_COMPLETE send
 *      fail (FI_ECONNREFUSED), and the server's endpoint receives only the good
 *      message.
 * Each refused operation is tried eager (100 B) and rendezvous
 * (40,000 B). At the end the server compares its whole registered
 * memory, byte for byte, with what the successful writes alone make of
 * it.
 */
#include "common.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FA_WIN		(128 * FX_KIB)
#define FA_NWIN		4
#define FA_KEY_RO	0xa0001ULL	/* FI_REMOTE_READ only */
#define FA_KEY_WO	0xa0002ULL	/* FI_REMOTE_WRITE only */
#define FA_KEY_CLOSE	0xa0003ULL	/* closed halfway */
#define FA_KEY_AUTH	0xa0004ULL	/* written through the keyed ep */
#define FA_KEY_NONE	0xa0bad0ULL
#define FA_SMALL	100
#define FA_LARGE	70000	/* above the eager sizes (TCP 16, shm 64 KiB) */
#define FA_POISON	0xa5
#define FA_TAG		0x77
#define FA_AUTH_GOOD	0x11
#define FA_AUTH_BAD	0x55

static const uint64_t fa_keys[FA_NWIN] = {
	FA_KEY_RO, FA_KEY_WO, FA_KEY_CLOSE, FA_KEY_AUTH,
};
static const uint64_t fa_access[FA_NWIN] = {
	FI_REMOTE_READ, FI_REMOTE_WRITE, FI_REMOTE_READ | FI_REMOTE_WRITE,
	FI_REMOTE_READ | FI_REMOTE_WRITE,
};

/* window w's initial pattern, and the writes that are let through */
static uint64_t fa_seed(int win)
{
	return 11 + (uint64_t)win;
}

#define FA_GOOD_SEED(win) (21 + (uint64_t)(win))

/* One more endpoint on the domain and AV, with an auth_key (seed 0: none). */
static void fa_ep_open(struct fx_ctx *ctx, uint8_t key_seed,
		       struct fid_ep **ep_p, struct fid_cq **cq_p)
{
	struct fi_cq_attr cattr = { .size = 64,
				    .format = FI_CQ_FORMAT_TAGGED };
	struct fi_info *info = fi_dupinfo(ctx->info);
	int i;

	FX_CHECK(info, "fi_dupinfo failed");
	free(info->ep_attr->auth_key);
	info->ep_attr->auth_key = NULL;
	info->ep_attr->auth_key_size = 0;
	if (key_seed) {
		info->ep_attr->auth_key = malloc(8);
		FX_CHECK(info->ep_attr->auth_key, "out of memory");
		for (i = 0; i < 8; i++)
			info->ep_attr->auth_key[i] = (uint8_t)(key_seed + i);
		info->ep_attr->auth_key_size = 8;
	}
	FX_CALL(fi_cq_open(ctx->domain, &cattr, cq_p, NULL));
	FX_CALL(fi_endpoint(ctx->domain, info, ep_p, NULL));
	FX_CALL(fi_ep_bind(*ep_p, &ctx->av->fid, 0));
	FX_CALL(fi_ep_bind(*ep_p, &(*cq_p)->fid, FI_TRANSMIT | FI_RECV));
	FX_CALL(fi_enable(*ep_p));
	fi_freeinfo(info);
}

/* ---- client: one operation, its completion -------------------------- */

struct fa_op {
	struct fx_ctx *ctx;
	struct fid_ep *ep;
	struct fid_cq *cq;
	fi_addr_t dest;
	uint8_t *buf;		/* local buffer, FA_WIN bytes */
};

static int fa_wait(struct fa_op *op, void *octx, const char *what)
{
	struct fx_comp c;
	int err = fx_cq_wait(op->ctx, op->cq, &c);

	FX_CHECK(c.e.op_context == octx, "%s: completion for %p, expected "
		 "%p", what, c.e.op_context, octx);
	return err;
}

static void fa_expect(struct fa_op *op, void *octx, int want,
		      const char *what)
{
	int err = fa_wait(op, octx, what);

	if (!want && err)
		FX_FAIL("%s: failed: %s", what, fi_strerror(err));
	if (want && !err)
		FX_FAIL("%s: succeeded; it must be refused (%s)", what,
			fi_strerror(want));
	if (want && err != want)
		FX_FAIL("%s: refused with %s, expected %s", what,
			fi_strerror(err), fi_strerror(want));
}

static void fa_write(struct fa_op *op, uint64_t off, size_t len,
		     uint64_t key, uint64_t seed, int want, const char *what)
{
	struct fi_context octx;

	fx_fill(op->buf, len, seed);
	FX_RETRY(op->ctx, what, fi_write(op->ep, op->buf, len, NULL,
					 op->dest, off, key, &octx));
	fa_expect(op, &octx, want, what);
}

/* a refused read must leave the local buffer as it was */
static void fa_read(struct fa_op *op, uint64_t off, size_t len,
		    uint64_t key, int want, const char *what)
{
	struct fi_context octx;

	memset(op->buf, FA_POISON, len);
	FX_RETRY(op->ctx, what, fi_read(op->ep, op->buf, len, NULL,
					op->dest, off, key, &octx));
	fa_expect(op, &octx, want, what);
	if (want)
		fx_check_byte(op->buf, len, FA_POISON, what);
}

static void fa_client_rights(struct fa_op *op)
{
	static const size_t lens[] = { FA_SMALL, FA_LARGE };
	struct fi_context octx;
	uint64_t one = 1, old = 7;
	char what[96];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(what, sizeof(what), "fi_read %zu B of the read-only "
			 "window", lens[i]);
		fa_read(op, 1000, lens[i], FA_KEY_RO, 0, what);
		fx_check_at(op->buf, 1000, lens[i], fa_seed(0), what);
		snprintf(what, sizeof(what), "fi_write %zu B to the read-only "
			 "window", lens[i]);
		fa_write(op, 1000, lens[i], FA_KEY_RO, 99, FI_EACCES, what);
		snprintf(what, sizeof(what), "fi_read %zu B of the write-only "
			 "window", lens[i]);
		fa_read(op, 1000, lens[i], FA_KEY_WO, FI_EACCES, what);
	}
	fa_write(op, 0, FA_SMALL, FA_KEY_WO, FA_GOOD_SEED(1), 0,
		 "fi_write to the write-only window");
	FX_RETRY(op->ctx, "fi_atomic", fi_atomic(op->ep, &one, 1, NULL,
		 op->dest, 2000, FA_KEY_RO, FI_UINT64, FI_SUM, &octx));
	fa_expect(op, &octx, FI_EACCES, "fi_atomic SUM on the read-only "
		  "window");
	FX_RETRY(op->ctx, "fi_fetch_atomic", fi_fetch_atomic(op->ep, &one, 1,
		 NULL, &old, NULL, op->dest, 2000, FA_KEY_WO, FI_UINT64,
		 FI_SUM, &octx));
	fa_expect(op, &octx, FI_EACCES, "fi_fetch_atomic SUM on the "
		  "write-only window");
	FX_CHECK(old == 7, "a refused fetch-atomic wrote its result: %llu",
		 (unsigned long long)old);
	FX_RETRY(op->ctx, "fi_fetch_atomic", fi_fetch_atomic(op->ep, &one, 1,
		 NULL, &old, NULL, op->dest, 2000, FA_KEY_RO, FI_UINT64,
		 FI_SUM, &octx));
	fa_expect(op, &octx, FI_EACCES, "fi_fetch_atomic SUM on the "
		  "read-only window");
	fx_info("access rights: read-only and write-only windows refuse the "
		"other direction (FI_EACCES), atomics too");
}

static void fa_client_ranges(struct fa_op *op)
{
	fa_read(op, 0, FA_SMALL, FA_KEY_NONE, FI_EACCES,
		"fi_read 100 B with an unknown key");
	fa_read(op, 0, FA_LARGE, FA_KEY_NONE, FI_EACCES,
		"fi_read 70000 B with an unknown key");
	fa_read(op, FA_WIN - 32, 64, FA_KEY_RO, FI_EINVAL,
		"fi_read across the end of the window");
	fa_read(op, FA_WIN - 1000, FA_LARGE, FA_KEY_RO, FI_EINVAL,
		"fi_read 70000 B across the end of the window");
	fa_read(op, FA_WIN, 1, FA_KEY_RO, FI_EINVAL,
		"fi_read just past the end of the window");
	fa_write(op, UINT64_MAX - 7, 64, FA_KEY_WO, 98, FI_EINVAL,
		 "fi_write at an offset that wraps around");
	fx_info("ranges: unknown key FI_EACCES, past the end and wrapping "
		"FI_EINVAL, reads untouched");
}

static void fa_client_closed(struct fa_op *op)
{
	fa_write(op, 0, FA_SMALL, FA_KEY_CLOSE, FA_GOOD_SEED(2), 0,
		 "fi_write before fi_close of the MR");
	fa_read(op, 0, FA_SMALL, FA_KEY_CLOSE, 0,
		"fi_read before fi_close of the MR");
	fx_check(op->buf, FA_SMALL, FA_GOOD_SEED(2), "read back");
	fx_oob_sync(op->ctx);	/* the server closes it */
	fx_oob_sync(op->ctx);
	fa_write(op, 0, FA_SMALL, FA_KEY_CLOSE, 97, FI_EACCES,
		 "fi_write 100 B after fi_close of the MR");
	fa_write(op, 0, FA_LARGE, FA_KEY_CLOSE, 97, FI_EACCES,
		 "fi_write 70000 B after fi_close of the MR");
	fa_read(op, 0, FA_LARGE, FA_KEY_CLOSE, FI_EACCES,
		"fi_read after fi_close of the MR");
	fx_info("fi_close of the MR: later writes and reads FI_EACCES");
}

/* from an endpoint the server's keyed endpoint must refuse */
static void fa_client_refused(struct fa_op *op, const char *who)
{
	struct fi_context octx;
	struct iovec iov;
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = op->dest,
		.tag = FA_TAG, .context = &octx,
	};
	char what[96];

	snprintf(what, sizeof(what), "fi_write 100 B from %s", who);
	fa_write(op, 0, FA_SMALL, FA_KEY_AUTH, 96, FI_ECONNREFUSED, what);
	snprintf(what, sizeof(what), "fi_write 70000 B from %s", who);
	fa_write(op, 0, FA_LARGE, FA_KEY_AUTH, 96, FI_ECONNREFUSED, what);
	snprintf(what, sizeof(what), "fi_read from %s", who);
	fa_read(op, 0, FA_LARGE, FA_KEY_AUTH, FI_ECONNREFUSED, what);
	/* FI_TRANSMIT_COMPLETE: the send completes only once accepted */
	fx_fill(op->buf, FA_SMALL, FA_AUTH_BAD);
	iov = (struct iovec){ .iov_base = op->buf, .iov_len = FA_SMALL };
	snprintf(what, sizeof(what), "fi_tsendmsg from %s", who);
	FX_RETRY(op->ctx, what, fi_tsendmsg(op->ep, &msg,
		 FI_TRANSMIT_COMPLETE | FI_COMPLETION));
	fa_expect(op, &octx, FI_ECONNREFUSED, what);
}

static void fa_client_auth(struct fx_ctx *ctx, uint8_t *buf)
{
	struct fid_ep *good_ep, *bad_ep;
	struct fid_cq *good_cq, *bad_cq;
	char name[FI_NAME_MAX];
	struct fi_context octx;
	fi_addr_t srv2;
	size_t len;
	int ret;

	len = fx_oob_recv(ctx, 0, name, sizeof(name));
	ret = fi_av_insert(ctx->av, name, 1, &srv2, 0, NULL);
	FX_CHECK(ret == 1, "fi_av_insert: %d", ret);
	(void)len;
	fa_ep_open(ctx, FA_AUTH_GOOD, &good_ep, &good_cq);
	fa_ep_open(ctx, FA_AUTH_BAD, &bad_ep, &bad_cq);

	fa_client_refused(&(struct fa_op){ ctx, bad_ep, bad_cq, srv2, buf },
			  "an endpoint with another auth_key");
	fa_client_refused(&(struct fa_op){ ctx, ctx->ep, ctx->txcq, srv2,
					   buf },
			  "an endpoint with no auth_key");
	/* the same key gets through: the refusals were about the key */
	fa_write(&(struct fa_op){ ctx, good_ep, good_cq, srv2, buf }, 0,
		 FA_SMALL, FA_KEY_AUTH, FA_GOOD_SEED(3), 0,
		 "fi_write from the endpoint with the same auth_key");
	fx_fill(buf, FA_SMALL, FA_AUTH_GOOD);
	FX_RETRY(ctx, "fi_tsend", fi_tsend(good_ep, buf, FA_SMALL, NULL, srv2,
					   FA_TAG, &octx));
	fa_expect(&(struct fa_op){ ctx, good_ep, good_cq, srv2, buf }, &octx,
		  0, "fi_tsend from the endpoint with the same auth_key");
	fx_oob_sync(ctx);	/* the server has its message */
	FX_CALL(fi_close(&good_ep->fid));
	FX_CALL(fi_close(&bad_ep->fid));
	FX_CALL(fi_close(&good_cq->fid));
	FX_CALL(fi_close(&bad_cq->fid));
	fx_info("auth_key: another key and no key refused (FI_EIO), the same "
		"key served");
}

/* ---- server ------------------------------------------------------------- */

static void fa_server(struct fx_ctx *ctx, uint8_t *mem, struct fid_mr **mrs)
{
	uint8_t *expect = fx_alloc(FA_NWIN * FA_WIN), *rbuf;
	struct fid_ep *ep2;
	struct fid_cq *cq2;
	char name[FI_NAME_MAX];
	size_t len = sizeof(name);
	struct fi_context octx;
	struct fx_comp c;
	int w;

	for (w = 0; w < FA_NWIN; w++)
		fx_fill(expect + w * FA_WIN, FA_WIN, fa_seed(w));
	fx_fill(expect + 1 * FA_WIN, FA_SMALL, FA_GOOD_SEED(1));
	fx_fill(expect + 2 * FA_WIN, FA_SMALL, FA_GOOD_SEED(2));
	fx_fill(expect + 3 * FA_WIN, FA_SMALL, FA_GOOD_SEED(3));

	/* the keyed endpoint; it takes one message, the good one */
	fa_ep_open(ctx, FA_AUTH_GOOD, &ep2, &cq2);
	rbuf = fx_alloc(FA_LARGE);
	FX_RETRY(ctx, "fi_trecv", fi_trecv(ep2, rbuf, FA_LARGE, NULL,
					   FI_ADDR_UNSPEC, FA_TAG, 0, &octx));

	fx_oob_sync(ctx);	/* rights and ranges done */
	fx_oob_sync(ctx);	/* the closed window: written and read */
	FX_CALL(fi_close(&mrs[2]->fid));
	mrs[2] = NULL;
	fx_oob_sync(ctx);
	fx_oob_sync(ctx);	/* refused after the close */

	FX_CALL(fi_getname(&ep2->fid, name, &len));
	fx_oob_send(ctx, 0, name, len);
	fx_oob_sync(ctx);	/* auth done */
	/* with the receive posted, the good message is its completion */
	FX_CHECK(!fx_cq_wait(ctx, cq2, &c), "keyed endpoint: error "
		 "completion %s", fi_strerror(c.err));
	fx_check_comp(&c, &octx, FI_RECV | FI_TAGGED, FA_SMALL, FA_TAG,
		      "keyed endpoint's receive");
	fx_check(rbuf, FA_SMALL, FA_AUTH_GOOD, "keyed endpoint's receive "
		 "(a refused endpoint's message got in?)");
	fx_cq_expect_empty(ctx, cq2, 300, "keyed endpoint");
	fx_oob_sync(ctx);

	for (w = 0; w < FA_NWIN; w++) {
		char what[64];

		snprintf(what, sizeof(what), "window %d", w);
		if (memcmp(mem + w * FA_WIN, expect + w * FA_WIN, FA_WIN)) {
			size_t i;

			for (i = 0; i < FA_WIN; i++)
				if (mem[w * FA_WIN + i] !=
				    expect[w * FA_WIN + i])
					FX_FAIL("%s: byte %zu is 0x%02x, "
						"expected 0x%02x: a refused "
						"operation wrote it", what, i,
						mem[w * FA_WIN + i],
						expect[w * FA_WIN + i]);
		}
	}
	fx_info("all %d windows hold exactly what the allowed writes put "
		"there", FA_NWIN);
	FX_CALL(fi_close(&ep2->fid));
	FX_CALL(fi_close(&cq2->fid));
	free(rbuf);
	free(expect);
}

int main(int argc, char **argv)
{
	struct fx_setup setup = {
		.caps = FI_TAGGED | FI_RMA | FI_ATOMIC,
	};
	struct fid_mr *mrs[FA_NWIN] = { NULL };
	struct fx_opts opts;
	struct fx_ctx ctx;
	uint8_t *mem;
	int w;

	fx_parse(argc, argv, "access control: rights, ranges, closed MRs, "
		 "auth_key", NULL, &opts);
	fx_init(&ctx, &opts, &setup);
	mem = fx_alloc(FA_NWIN * FA_WIN);
	if (ctx.server) {
		for (w = 0; w < FA_NWIN; w++) {
			fx_fill(mem + w * FA_WIN, FA_WIN, fa_seed(w));
			FX_CALL(fi_mr_reg(ctx.domain, mem + w * FA_WIN,
					  FA_WIN, fa_access[w], 0, fa_keys[w],
					  0, &mrs[w], NULL));
		}
	}
	fx_oob_sync(&ctx);	/* the windows exist */
	if (ctx.server) {
		fa_server(&ctx, mem, mrs);
	} else {
		struct fa_op op = { &ctx, ctx.ep, ctx.txcq, ctx.peer[0], mem };

		fa_client_rights(&op);
		fa_client_ranges(&op);
		fx_oob_sync(&ctx);
		fa_client_closed(&op);
		fx_oob_sync(&ctx);
		fa_client_auth(&ctx, mem);
		fx_oob_sync(&ctx);
	}
	for (w = 0; w < FA_NWIN; w++)
		if (mrs[w])
			FX_CALL(fi_close(&mrs[w]->fid));
	fx_fini(&ctx);
	free(mem);
	fx_info("PASS");
	return 0;
}
