/*
 * fx_trunc.c - truncation: a message longer than its receive buffer
 * completes that receive with an FI_ETRUNC error entry whose len is what
 * was placed and whose olen is what was cut off; the placed bytes are the
 * message's first bytes, nothing is written past the buffer, the error
 * counts on the receive counter's error count (not its success count),
 * the send completes normally, and the next message on the same tag
 * arrives intact.
 *
 * Eager and rendezvous sizes, down to a zero-byte buffer; each with the
 * receive posted first ("expected") and with the message there first
 * ("unexpected": the client closes the batch with a tagged marker the
 * server waits for). Tagged, or untagged with -e msg.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_TR_TAG	0x7a7aULL
#define FX_TR_TAG_MARK	0x7b7bULL
#define FX_TR_GUARD	256
#define FX_TR_POISON	0xa5
#define FX_TR_NEXT_LEN	100

struct fx_tr_case {
	size_t msg_len, buf_len;
	bool unexpected_ok;	/* also run with the message there first */
};

static const struct fx_tr_case fx_tr_cases[] = {
	{ 1000, 100, true },		/* eager */
	{ 16384, 16000, true },		/* largest eager (TCP) */
	{ 65536, 60000, true },		/* largest eager (shm) */
	{ 1, 0, true },			/* zero-byte buffer */
	{ 100000, 65536, true },	/* rendezvous */
	{ 20000, 0, true },		/* rendezvous, zero-byte buffer */
	{ 200000, 16385, true },	/* rendezvous into a rendezvous size */
	{ 4 * FX_MIB, 300000, false },	/* several rendezvous chunks */
};
#define FX_TR_NCASES (sizeof(fx_tr_cases) / sizeof(fx_tr_cases[0]))

struct fx_tr {
	struct fx_ctx *ctx;
	char *buf;			/* buffer + guard */
	char *next;			/* the follow-up message */
	char *src;			/* client: what it sends */
	uint64_t rx_ok, rx_err;		/* expected receive counter values */
};

static uint64_t fx_tr_seed(int c, bool unexpected)
{
	return (uint64_t)c * 2 + unexpected;
}

static void fx_tr_check_trunc(struct fx_tr *tr, const struct fx_tr_case *tc,
			      const struct fx_comp *c, int err, uint64_t seed,
			      const char *what)
{
	struct fx_ctx *ctx = tr->ctx;

	FX_CHECK(err == FI_ETRUNC, "%s: expected an FI_ETRUNC error entry, "
		 "got %s (err %d)", what, err ? fi_strerror(err) :
		 "a completion", err);
	FX_CHECK(c->e.flags & FI_RECV, "%s: error entry flags 0x%llx lack "
		 "FI_RECV", what, (unsigned long long)c->e.flags);
	FX_CHECK(c->e.len == tc->buf_len, "%s: len %zu, expected %zu (bytes "
		 "placed)", what, c->e.len, tc->buf_len);
	FX_CHECK(c->olen == tc->msg_len - tc->buf_len, "%s: olen %zu, "
		 "expected %zu (bytes cut off)", what, c->olen,
		 tc->msg_len - tc->buf_len);
	if (ctx->opts->xfer == FX_XFER_TAGGED)
		FX_CHECK(c->e.tag == FX_TR_TAG, "%s: tag 0x%llx", what,
			 (unsigned long long)c->e.tag);
	fx_check(tr->buf, tc->buf_len, seed, what);
	fx_check_byte(tr->buf + tc->buf_len, FX_TR_GUARD, FX_TR_POISON,
		      "guard after a truncated receive buffer");
}

/* server: one case, the truncated receive and the one after it */
static void fx_tr_server(struct fx_tr *tr, int ci, bool unexpected)
{
	const struct fx_tr_case *tc = &fx_tr_cases[ci];
	struct fx_ctx *ctx = tr->ctx;
	struct fi_context rctx[2], mark;
	uint8_t seen[2] = { 0 };
	char what[96];
	struct fx_comp c;
	int k, s, err;

	snprintf(what, sizeof(what), "%zu-byte message into a %zu-byte "
		 "buffer, %s", tc->msg_len, tc->buf_len,
		 unexpected ? "unexpected" : "expected");
	memset(tr->buf, FX_TR_POISON, tc->buf_len + FX_TR_GUARD);
	memset(tr->next, 0, FX_TR_NEXT_LEN);
	if (unexpected) {
		FX_RETRY(ctx, "fi_trecv marker",
			 fi_trecv(ctx->ep, NULL, 0, NULL, FI_ADDR_UNSPEC,
				  FX_TR_TAG_MARK, 0, &mark));
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "marker");
		tr->rx_ok++;
	}
	fx_recv(ctx, tr->buf, tc->buf_len, FI_ADDR_UNSPEC, FX_TR_TAG, 0,
		&rctx[0]);
	fx_recv(ctx, tr->next, FX_TR_NEXT_LEN, FI_ADDR_UNSPEC, FX_TR_TAG, 0,
		&rctx[1]);
	if (!unexpected)
		fx_oob_sync(ctx);	/* posted: the client sends */
	for (k = 0; k < 2; k++) {
		err = fx_cq_wait(ctx, ctx->rxcq, &c);
		s = fx_slot_of(&c, rctx, 2, seen, what);
		if (s == 0) {
			fx_tr_check_trunc(tr, tc, &c, err,
					  fx_tr_seed(ci, unexpected), what);
			continue;
		}
		FX_CHECK(!err, "%s: the message after it failed: %s", what,
			 fi_strerror(err));
		fx_check_comp(&c, &rctx[1], FI_RECV | fx_xfer_flag(ctx),
			      FX_TR_NEXT_LEN, FX_TR_TAG,
			      "message after a truncated one");
		fx_check(tr->next, FX_TR_NEXT_LEN, ~fx_tr_seed(ci, unexpected),
			 "message after a truncated one");
	}
	tr->rx_ok++;
	tr->rx_err++;
	fx_cntr_wait(ctx, ctx->rxcntr, tr->rx_ok, "receive counter");
	FX_CHECK(fi_cntr_read(ctx->rxcntr) == tr->rx_ok, "%s: receive "
		 "counter %llu, expected %llu (a truncation counted as a "
		 "success?)", what,
		 (unsigned long long)fi_cntr_read(ctx->rxcntr),
		 (unsigned long long)tr->rx_ok);
	FX_CHECK(fi_cntr_readerr(ctx->rxcntr) == tr->rx_err, "%s: receive "
		 "counter errors %llu, expected %llu", what,
		 (unsigned long long)fi_cntr_readerr(ctx->rxcntr),
		 (unsigned long long)tr->rx_err);
}

static void fx_tr_client(struct fx_tr *tr, int ci, bool unexpected)
{
	const struct fx_tr_case *tc = &fx_tr_cases[ci];
	struct fx_ctx *ctx = tr->ctx;
	struct fi_context sctx[3];
	uint8_t seen[3] = { 0 };
	struct fx_comp c;
	int k, n = 2;

	if (!unexpected)
		fx_oob_sync(ctx);
	fx_fill(tr->src, tc->msg_len, fx_tr_seed(ci, unexpected));
	fx_fill(tr->next, FX_TR_NEXT_LEN, ~fx_tr_seed(ci, unexpected));
	fx_send(ctx, tr->src, tc->msg_len, ctx->peer[0], FX_TR_TAG, &sctx[0]);
	fx_send(ctx, tr->next, FX_TR_NEXT_LEN, ctx->peer[0], FX_TR_TAG,
		&sctx[1]);
	if (unexpected) {
		FX_RETRY(ctx, "fi_tsend marker",
			 fi_tsend(ctx->ep, NULL, 0, NULL, ctx->peer[0],
				  FX_TR_TAG_MARK, &sctx[2]));
		n++;
	}
	/* truncation is the receiver's business: the send succeeds */
	for (k = 0; k < n; k++) {
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send of a message that "
			      "gets truncated, or the ones after it");
		fx_slot_of(&c, sctx, n, seen, "send");
	}
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG };
	size_t ci, max_buf = 0, max_msg = 0;
	struct fx_opts opts;
	struct fx_ctx ctx;
	struct fx_tr tr = { .ctx = &ctx };
	int pass;

	fx_parse(argc, argv, "FI_ETRUNC, olen and the receive counter", NULL,
		 &opts);
	for (ci = 0; ci < FX_TR_NCASES; ci++) {
		if (fx_tr_cases[ci].buf_len > max_buf)
			max_buf = fx_tr_cases[ci].buf_len;
		if (fx_tr_cases[ci].msg_len > max_msg)
			max_msg = fx_tr_cases[ci].msg_len;
	}
	fx_init(&ctx, &opts, &setup);
	tr.buf = fx_alloc(max_buf + FX_TR_GUARD);
	tr.next = fx_alloc(FX_TR_NEXT_LEN);
	tr.src = fx_alloc(max_msg);

	for (pass = 0; pass < 2; pass++) {
		for (ci = 0; ci < FX_TR_NCASES; ci++) {
			if (pass && !fx_tr_cases[ci].unexpected_ok)
				continue;
			fx_oob_sync(&ctx);
			if (ctx.server)
				fx_tr_server(&tr, (int)ci, pass);
			else
				fx_tr_client(&tr, (int)ci, pass);
		}
		fx_oob_sync(&ctx);
		fx_info("%s receives: every truncation reported with len, "
			"olen and a counted error", pass ? "unexpected" :
			"expected");
	}
	fx_cq_expect_empty(&ctx, ctx.rxcq, 10, "after the truncations");

	fx_fini(&ctx);
	free(tr.buf);
	free(tr.next);
	free(tr.src);
	fx_info("PASS");
	return 0;
}
