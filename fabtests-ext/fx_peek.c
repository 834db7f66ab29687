/*
 * fx_peek.c - FI_PEEK, FI_CLAIM and FI_DISCARD on tagged messages that
 * have arrived unexpected, for an eager and a rendezvous size:
 *
 *   tag +1: FI_PEEK finds it (length, tag, data if the provider copies
 *           it), twice without consuming it; a wildcard peek finds the
 *           oldest message; then a plain receive gets its data.
 *   tag +2: FI_PEEK|FI_CLAIM claims it: a plain peek no longer sees it,
 *           the FI_CLAIM receive with the same fi_context gets the data.
 *   tag +3: FI_PEEK|FI_DISCARD drops it; a later peek gets FI_ENOMSG.
 *   tag +4: FI_PEEK|FI_CLAIM, then FI_CLAIM|FI_DISCARD drops it.
 *   tag +5: never sent: FI_PEEK gets an FI_ENOMSG error entry.
 *   tag +6: sent last; received normally after all that.
 *
 * The client sends everything, then a marker; the server first receives
 * the marker, so all messages have arrived (FI_ORDER_SAS). The client
 * checks every send completes, the discarded ones too.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_PK_TAG_MARK	0x7777ULL
#define FX_PK_NMSG	5		/* tags +1, +2, +3, +4, +6 */

struct fx_pk {
	struct fx_ctx *ctx;
	size_t size;
	uint64_t base;			/* tag base of this size */
	char *buf;
};

static const int fx_pk_sent[FX_PK_NMSG] = { 1, 2, 3, 4, 6 };

static uint64_t fx_pk_seed(const struct fx_pk *pk, int which)
{
	return pk->base + (uint64_t)which;
}

/* one fi_trecvmsg with flags; buf NULL means no buffer */
static void fx_pk_recvmsg(struct fx_pk *pk, void *buf, size_t len,
			  uint64_t tag, uint64_t ignore, void *context,
			  uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = buf ? &iov : NULL,
		.iov_count = buf ? 1 : 0,
		.addr = FI_ADDR_UNSPEC,
		.tag = tag,
		.ignore = ignore,
		.context = context,
	};

	FX_RETRY(pk->ctx, "fi_trecvmsg",
		 fi_trecvmsg(pk->ctx->ep, &msg, flags));
}

/* the request found a message: len and tag of it, its data if given */
static void fx_pk_found(struct fx_pk *pk, void *context, uint64_t tag,
			const char *what)
{
	struct fx_ctx *ctx = pk->ctx;
	struct fx_comp c;

	fx_cq_wait_ok(ctx, ctx->rxcq, &c, what);
	fx_check_comp(&c, context, FI_RECV | FI_TAGGED, pk->size, tag, what);
	/* a peek may copy data; buf then points at the given buffer */
	if (c.e.buf) {
		FX_CHECK(c.e.buf == pk->buf, "%s: buf %p, not the given %p",
			 what, c.e.buf, (void *)pk->buf);
		fx_check(pk->buf, pk->size, tag, what);
	}
}

static void fx_pk_enomsg(struct fx_pk *pk, void *context, const char *what)
{
	struct fx_ctx *ctx = pk->ctx;
	struct fx_comp c;
	int err;

	err = fx_cq_wait(ctx, ctx->rxcq, &c);
	FX_CHECK(err == FI_ENOMSG, "%s: expected an FI_ENOMSG error entry, "
		 "got %s (err %d, len %zu, tag 0x%llx)", what,
		 err ? fi_strerror(err) : "a completion", err, c.e.len,
		 (unsigned long long)c.e.tag);
	FX_CHECK(c.e.op_context == context, "%s: FI_ENOMSG for context %p, "
		 "expected %p", what, c.e.op_context, context);
}

static void fx_pk_peek(struct fx_pk *pk, int which)
{
	uint64_t tag = pk->base + (uint64_t)which;
	struct fi_context peek_ctx;

	/* no buffer: only the metadata */
	fx_pk_recvmsg(pk, NULL, 0, tag, 0, &peek_ctx, FI_PEEK);
	fx_pk_found(pk, &peek_ctx, tag, "FI_PEEK");
	/* with a buffer; still there afterwards */
	memset(pk->buf, 0, pk->size);
	fx_pk_recvmsg(pk, pk->buf, pk->size, tag, 0, &peek_ctx, FI_PEEK);
	fx_pk_found(pk, &peek_ctx, tag, "second FI_PEEK (with a buffer)");
	/* wildcard over this size's tags: the oldest, this one */
	fx_pk_recvmsg(pk, NULL, 0, pk->base, 0xff, &peek_ctx, FI_PEEK);
	fx_pk_found(pk, &peek_ctx, tag, "wildcard FI_PEEK");
}

static void fx_pk_receive(struct fx_pk *pk, int which, const char *what)
{
	struct fx_ctx *ctx = pk->ctx;
	uint64_t tag = pk->base + (uint64_t)which;
	struct fi_context rctx;
	struct fx_comp c;

	memset(pk->buf, 0, pk->size);
	FX_RETRY(ctx, "fi_trecv", fi_trecv(ctx->ep, pk->buf, pk->size, NULL,
					   FI_ADDR_UNSPEC, tag, 0, &rctx));
	fx_cq_wait_ok(ctx, ctx->rxcq, &c, what);
	fx_check_comp(&c, &rctx, FI_RECV | FI_TAGGED, pk->size, tag, what);
	fx_check(pk->buf, pk->size, fx_pk_seed(pk, which), what);
}

static void fx_pk_claim(struct fx_pk *pk, int which, bool discard)
{
	struct fx_ctx *ctx = pk->ctx;
	uint64_t tag = pk->base + (uint64_t)which;
	struct fi_context claim_ctx, peek_ctx;
	struct fx_comp c;

	fx_pk_recvmsg(pk, NULL, 0, tag, 0, &claim_ctx, FI_PEEK | FI_CLAIM);
	fx_pk_found(pk, &claim_ctx, tag, "FI_PEEK|FI_CLAIM");
	/* claimed: invisible to everyone but the paired FI_CLAIM */
	fx_pk_recvmsg(pk, NULL, 0, tag, 0, &peek_ctx, FI_PEEK);
	fx_pk_enomsg(pk, &peek_ctx, "FI_PEEK of a claimed message");

	memset(pk->buf, 0, pk->size);
	if (discard) {
		/* the buffer is given, but FI_DISCARD must ignore it */
		fx_pk_recvmsg(pk, pk->buf, pk->size, tag, 0, &claim_ctx,
			      FI_CLAIM | FI_DISCARD);
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "FI_CLAIM|FI_DISCARD");
		FX_CHECK(c.e.op_context == &claim_ctx, "FI_CLAIM|FI_DISCARD: "
			 "completion for context %p", c.e.op_context);
		fx_check_byte(pk->buf, pk->size, 0,
			      "buffer after FI_CLAIM|FI_DISCARD");
	} else {
		fx_pk_recvmsg(pk, pk->buf, pk->size, tag, 0, &claim_ctx,
			      FI_CLAIM);
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "FI_CLAIM receive");
		fx_check_comp(&c, &claim_ctx, FI_RECV | FI_TAGGED, pk->size,
			      tag, "FI_CLAIM receive");
		fx_check(pk->buf, pk->size, fx_pk_seed(pk, which),
			 "FI_CLAIM receive");
	}
	fx_pk_recvmsg(pk, NULL, 0, tag, 0, &peek_ctx, FI_PEEK);
	fx_pk_enomsg(pk, &peek_ctx, discard ? "FI_PEEK after FI_CLAIM|"
		     "FI_DISCARD" : "FI_PEEK after the FI_CLAIM receive");
}

static void fx_pk_discard(struct fx_pk *pk, int which)
{
	uint64_t tag = pk->base + (uint64_t)which;
	struct fi_context peek_ctx;
	struct fx_comp c;

	/* the buffer is given, but FI_DISCARD must ignore it */
	memset(pk->buf, 0, pk->size);
	fx_pk_recvmsg(pk, pk->buf, pk->size, tag, 0, &peek_ctx,
		      FI_PEEK | FI_DISCARD);
	fx_cq_wait_ok(pk->ctx, pk->ctx->rxcq, &c, "FI_PEEK|FI_DISCARD");
	fx_check_comp(&c, &peek_ctx, FI_RECV | FI_TAGGED, pk->size, tag,
		      "FI_PEEK|FI_DISCARD");
	fx_check_byte(pk->buf, pk->size, 0, "buffer after FI_PEEK|FI_DISCARD");
	fx_pk_recvmsg(pk, NULL, 0, tag, 0, &peek_ctx, FI_PEEK);
	fx_pk_enomsg(pk, &peek_ctx, "FI_PEEK after FI_PEEK|FI_DISCARD");
}

static void fx_pk_server(struct fx_pk *pk)
{
	struct fx_ctx *ctx = pk->ctx;
	struct fi_context mark, peek_ctx;
	struct fx_comp c;

	FX_RETRY(ctx, "fi_trecv marker",
		 fi_trecv(ctx->ep, NULL, 0, NULL, FI_ADDR_UNSPEC,
			  FX_PK_TAG_MARK, 0, &mark));
	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "marker");
	fx_check_comp(&c, &mark, FI_RECV | FI_TAGGED, 0, FX_PK_TAG_MARK,
		      "marker");

	fx_pk_peek(pk, 1);
	fx_pk_receive(pk, 1, "receive after FI_PEEK");
	fx_pk_claim(pk, 2, false);
	fx_pk_discard(pk, 3);
	fx_pk_claim(pk, 4, true);
	fx_pk_recvmsg(pk, NULL, 0, pk->base + 5, 0, &peek_ctx, FI_PEEK);
	fx_pk_enomsg(pk, &peek_ctx, "FI_PEEK of a message never sent");
	fx_pk_receive(pk, 6, "receive after the discards");
}

static void fx_pk_client(struct fx_pk *pk, char **bufs)
{
	struct fx_ctx *ctx = pk->ctx;
	struct fi_context sctx[FX_PK_NMSG + 1];
	uint8_t seen[FX_PK_NMSG + 1] = { 0 };
	struct fx_comp c;
	int i;

	for (i = 0; i < FX_PK_NMSG; i++) {
		fx_fill(bufs[i], pk->size, fx_pk_seed(pk, fx_pk_sent[i]));
		FX_RETRY(ctx, "fi_tsend",
			 fi_tsend(ctx->ep, bufs[i], pk->size, NULL,
				  ctx->peer[0], pk->base + (uint64_t)
				  fx_pk_sent[i], &sctx[i]));
	}
	FX_RETRY(ctx, "fi_tsend marker",
		 fi_tsend(ctx->ep, NULL, 0, NULL, ctx->peer[0],
			  FX_PK_TAG_MARK, &sctx[FX_PK_NMSG]));
	/* discarded messages' sends must complete as well */
	for (i = 0; i <= FX_PK_NMSG; i++) {
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
		fx_slot_of(&c, sctx, FX_PK_NMSG + 1, seen, "send");
	}
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG };
	size_t sizes[2] = { 1000, 100000 }, nsizes = 2, i;
	char *bufs[FX_PK_NMSG];
	struct fx_opts opts;
	struct fx_ctx ctx;
	struct fx_pk pk = { .ctx = &ctx };
	int k;

	fx_parse(argc, argv, "FI_PEEK, FI_CLAIM, FI_DISCARD, FI_ENOMSG",
		 "  -S <n>        message size (default: 1000 and 100000)\n",
		 &opts);
	if (opts.size_set) {
		sizes[0] = opts.size;
		nsizes = 1;
	}
	fx_init(&ctx, &opts, &setup);
	for (i = 0; i < nsizes; i++) {
		pk.size = sizes[i];
		pk.base = 0x1000 * (i + 1);
		pk.buf = fx_alloc(pk.size);
		for (k = 0; k < FX_PK_NMSG; k++)
			bufs[k] = fx_alloc(pk.size);
		fx_oob_sync(&ctx);
		if (ctx.server)
			fx_pk_server(&pk);
		else
			fx_pk_client(&pk, bufs);
		fx_oob_sync(&ctx);
		fx_cq_expect_empty(&ctx, ctx.rxcq, 10, "after the peeks");
		fx_info("%zu bytes: peek, claim, discard, FI_ENOMSG checked",
			pk.size);
		free(pk.buf);
		for (k = 0; k < FX_PK_NMSG; k++)
			free(bufs[k]);
	}
	fx_fini(&ctx);
	fx_info("PASS");
	return 0;
}
