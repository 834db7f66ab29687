/*
 * fx_cqdata.c - remote CQ data and FI_SOURCE.
 *
 * The client sends with every call that can carry 8 bytes of CQ data
 * (fi_tsenddata, fi_senddata, fi_tinjectdata, fi_injectdata,
 * fi_tsendmsg/fi_sendmsg with FI_REMOTE_CQ_DATA), eager, rendezvous and
 * zero-byte, and with calls that carry none (fi_tsend, fi_send, and
 * *sendmsg with data set but no FI_REMOTE_CQ_DATA flag). Each receive
 * completion must have FI_REMOTE_CQ_DATA set exactly when data was sent,
 * the full 64-bit value, the right length, tag and data, and FI_SOURCE
 * must name the client. A second client endpoint that the server never
 * inserted in its AV must show up as FI_ADDR_NOTAVAIL. Injects complete
 * nothing but count on the send counter. Finally the server answers with
 * fi_tsenddata and the client checks data and source the same way.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_CD_TAG	0xcd00ULL
#define FX_CD_DATA	0xfedcba9876543210ULL
#define FX_CD_MAXLEN	100000

enum fx_cd_call {
	FX_CD_SENDDATA,		/* fi_(t)senddata */
	FX_CD_INJECTDATA,	/* fi_(t)injectdata */
	FX_CD_MSG_DATA,		/* fi_(t)sendmsg with FI_REMOTE_CQ_DATA */
	FX_CD_MSG_NODATA,	/* fi_(t)sendmsg, data set, flag not */
	FX_CD_SEND,		/* fi_(t)send */
};

struct fx_cd_op {
	const char *name;
	enum fx_cd_call call;
	bool tagged;
	size_t len;
	bool other_ep;		/* from the endpoint not in the server's AV */
};

static const struct fx_cd_op fx_cd_ops[] = {
	{ "fi_tsenddata eager", FX_CD_SENDDATA, true, 100, false },
	{ "fi_tsenddata rendezvous", FX_CD_SENDDATA, true, 100000, false },
	{ "fi_tsenddata 0 bytes", FX_CD_SENDDATA, true, 0, false },
	{ "fi_tinjectdata", FX_CD_INJECTDATA, true, 16, false },
	{ "fi_tsendmsg FI_REMOTE_CQ_DATA", FX_CD_MSG_DATA, true, 5000, false },
	{ "fi_tsendmsg without the flag", FX_CD_MSG_NODATA, true, 64, false },
	{ "fi_tsend", FX_CD_SEND, true, 64, false },
	{ "fi_senddata eager", FX_CD_SENDDATA, false, 100, false },
	{ "fi_senddata rendezvous", FX_CD_SENDDATA, false, 70000, false },
	{ "fi_injectdata", FX_CD_INJECTDATA, false, 8, false },
	{ "fi_sendmsg FI_REMOTE_CQ_DATA", FX_CD_MSG_DATA, false, 3000, false },
	{ "fi_sendmsg without the flag", FX_CD_MSG_NODATA, false, 1, false },
	{ "fi_send", FX_CD_SEND, false, 64, false },
	{ "fi_tsenddata, sender not in the AV", FX_CD_SENDDATA, true, 200,
	  true },
};
#define FX_CD_NOPS ((int)(sizeof(fx_cd_ops) / sizeof(fx_cd_ops[0])))

static uint64_t fx_cd_data(int i)
{
	/* all 64 bits in use, the top one too */
	return FX_CD_DATA ^ ((uint64_t)i * 0x0101010101010101ULL);
}

static bool fx_cd_has_data(const struct fx_cd_op *op)
{
	return op->call == FX_CD_SENDDATA || op->call == FX_CD_INJECTDATA ||
	       op->call == FX_CD_MSG_DATA;
}

static void fx_cd_post_send(struct fx_ctx *ctx, struct fid_ep *ep, int i,
			    void *buf, struct fi_context *sctx)
{
	const struct fx_cd_op *op = &fx_cd_ops[i];
	struct iovec iov = { .iov_base = buf, .iov_len = op->len };
	uint64_t tag = FX_CD_TAG + (uint64_t)i, data = fx_cd_data(i);
	fi_addr_t dest = ctx->peer[0];
	struct fi_msg_tagged tmsg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest, .tag = tag,
		.context = sctx, .data = data,
	};
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest,
		.context = sctx, .data = data,
	};
	uint64_t mflags = FI_COMPLETION |
			  (op->call == FX_CD_MSG_DATA ? FI_REMOTE_CQ_DATA : 0);

	switch (op->call) {
	case FX_CD_SENDDATA:
		FX_RETRY(ctx, op->name, op->tagged ?
			 fi_tsenddata(ep, buf, op->len, NULL, data, dest, tag,
				      sctx) :
			 fi_senddata(ep, buf, op->len, NULL, data, dest,
				     sctx));
		break;
	case FX_CD_INJECTDATA:
		FX_RETRY(ctx, op->name, op->tagged ?
			 fi_tinjectdata(ep, buf, op->len, data, dest, tag) :
			 fi_injectdata(ep, buf, op->len, data, dest));
		break;
	case FX_CD_MSG_DATA:
	case FX_CD_MSG_NODATA:
		FX_RETRY(ctx, op->name, op->tagged ?
			 fi_tsendmsg(ep, &tmsg, mflags) :
			 fi_sendmsg(ep, &msg, mflags));
		break;
	case FX_CD_SEND:
		FX_RETRY(ctx, op->name, op->tagged ?
			 fi_tsend(ep, buf, op->len, NULL, dest, tag, sctx) :
			 fi_send(ep, buf, op->len, NULL, dest, sctx));
		break;
	}
}

static void fx_cd_check_recv(struct fx_ctx *ctx, int i,
			     const struct fx_comp *c, void *buf, fi_addr_t src)
{
	const struct fx_cd_op *op = &fx_cd_ops[i];
	uint64_t flags = FI_RECV | (op->tagged ? FI_TAGGED : FI_MSG) |
			 (fx_cd_has_data(op) ? FI_REMOTE_CQ_DATA : 0);

	fx_check_comp(c, c->e.op_context, flags, op->len,
		      FX_CD_TAG + (uint64_t)i, op->name);
	if (fx_cd_has_data(op))
		FX_CHECK(c->e.data == fx_cd_data(i), "%s: CQ data 0x%016llx, "
			 "expected 0x%016llx", op->name,
			 (unsigned long long)c->e.data,
			 (unsigned long long)fx_cd_data(i));
	FX_CHECK(c->src == src, "%s: FI_SOURCE %llu, expected %llu%s",
		 op->name, (unsigned long long)c->src,
		 (unsigned long long)src, src == FI_ADDR_NOTAVAIL ?
		 " (FI_ADDR_NOTAVAIL)" : "");
	fx_check(buf, op->len, (uint64_t)i, op->name);
}

static void fx_cd_server(struct fx_ctx *ctx, char **bufs)
{
	struct fi_context rctx[FX_CD_NOPS], sctx;
	uint8_t seen[FX_CD_NOPS] = { 0 };
	struct fx_comp c;
	int i, k;

	/* tagged by tag, untagged in send order */
	for (i = 0; i < FX_CD_NOPS; i++) {
		if (fx_cd_ops[i].tagged)
			FX_RETRY(ctx, "fi_trecv",
				 fi_trecv(ctx->ep, bufs[i], fx_cd_ops[i].len,
					  NULL, FI_ADDR_UNSPEC,
					  FX_CD_TAG + (uint64_t)i, 0,
					  &rctx[i]));
		else
			FX_RETRY(ctx, "fi_recv",
				 fi_recv(ctx->ep, bufs[i], fx_cd_ops[i].len,
					 NULL, FI_ADDR_UNSPEC, &rctx[i]));
	}
	fx_oob_sync(ctx);
	for (k = 0; k < FX_CD_NOPS; k++) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "receive");
		i = fx_slot_of(&c, rctx, FX_CD_NOPS, seen, "receive");
		fx_cd_check_recv(ctx, i, &c, bufs[i], fx_cd_ops[i].other_ep ?
				 FI_ADDR_NOTAVAIL : ctx->peer[0]);
	}
	/* and back: the client checks data and source the same way */
	fx_fill(bufs[0], fx_cd_ops[0].len, 0);
	fx_oob_sync(ctx);		/* its receive is posted */
	fx_cd_post_send(ctx, ctx->ep, 0, bufs[0], &sctx);
	fx_cq_wait_ok(ctx, ctx->txcq, &c, "fi_tsenddata to the client");
	fx_check_comp(&c, &sctx, FI_SEND | FI_TAGGED, 0, 0,
		      "fi_tsenddata to the client");
}

static void fx_cd_client(struct fx_ctx *ctx, char **bufs)
{
	struct fx_setup setup = { .cq_size = 64 };
	struct fi_context sctx[FX_CD_NOPS], rctx;
	uint8_t seen[FX_CD_NOPS] = { 0 };
	int i, k, n = 0, other = 0;
	struct fid_ep *ep2;
	struct fid_cq *cq2;
	struct fx_comp c;

	/* the second endpoint shares the AV, so it can reach the server */
	fx_ep_open(ctx, &setup, &ep2, &cq2);
	for (i = 0; i < FX_CD_NOPS; i++)
		fx_fill(bufs[i], fx_cd_ops[i].len, (uint64_t)i);
	fx_oob_sync(ctx);
	for (i = 0; i < FX_CD_NOPS; i++) {
		fx_cd_post_send(ctx, fx_cd_ops[i].other_ep ? ep2 : ctx->ep, i,
				bufs[i], &sctx[i]);
		if (fx_cd_ops[i].other_ep)
			other++;
		else if (fx_cd_ops[i].call != FX_CD_INJECTDATA)
			n++;
	}
	/* injects complete nothing... */
	for (k = 0; k < n; k++) {
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
		i = fx_slot_of(&c, sctx, FX_CD_NOPS, seen, "send");
		FX_CHECK(fx_cd_ops[i].call != FX_CD_INJECTDATA &&
			 !fx_cd_ops[i].other_ep, "a send completion for %s",
			 fx_cd_ops[i].name);
		fx_check_comp(&c, &sctx[i], FI_SEND | (fx_cd_ops[i].tagged ?
			      FI_TAGGED : FI_MSG), 0, 0, fx_cd_ops[i].name);
	}
	for (k = 0; k < other; k++) {
		fx_cq_wait_ok(ctx, cq2, &c, "send from the second endpoint");
		i = fx_slot_of(&c, sctx, FX_CD_NOPS, seen,
			       "send from the second endpoint");
		FX_CHECK(fx_cd_ops[i].other_ep, "%s completed on the second "
			 "endpoint's CQ", fx_cd_ops[i].name);
	}
	/* ...but count on the send counter, like every send of the ep */
	fx_cntr_wait(ctx, ctx->txcntr, (uint64_t)(FX_CD_NOPS - other),
		     "send counter (injects included)");
	FX_CHECK(fi_cntr_read(ctx->txcntr) == (uint64_t)(FX_CD_NOPS - other),
		 "send counter %llu, expected %d",
		 (unsigned long long)fi_cntr_read(ctx->txcntr),
		 FX_CD_NOPS - other);
	fx_cq_expect_empty(ctx, ctx->txcq, 10, "after the sends");

	/* the server's answer: data and source checked the same way */
	memset(bufs[0], 0, fx_cd_ops[0].len);
	FX_RETRY(ctx, "fi_trecv", fi_trecv(ctx->ep, bufs[0], fx_cd_ops[0].len,
					   NULL, FI_ADDR_UNSPEC, FX_CD_TAG,
					   0, &rctx));
	fx_oob_sync(ctx);
	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "fi_tsenddata from the server");
	FX_CHECK(c.e.op_context == &rctx, "receive completion for %p",
		 c.e.op_context);
	fx_cd_check_recv(ctx, 0, &c, bufs[0], ctx->peer[0]);

	FX_CALL(fi_close(&ep2->fid));
	FX_CALL(fi_close(&cq2->fid));
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG | FI_SOURCE,
				  .cq_data_size = 8 };
	char *bufs[FX_CD_NOPS];
	struct fx_opts opts;
	struct fx_ctx ctx;
	int i;

	fx_parse(argc, argv, "remote CQ data and FI_SOURCE", NULL, &opts);
	fx_init(&ctx, &opts, &setup);
	FX_CHECK(ctx.info->domain_attr->cq_data_size >= 8, "cq_data_size "
		 "%zu, 8 needed", ctx.info->domain_attr->cq_data_size);
	for (i = 0; i < FX_CD_NOPS; i++)
		bufs[i] = fx_alloc(fx_cd_ops[i].len);

	if (ctx.server)
		fx_cd_server(&ctx, bufs);
	else
		fx_cd_client(&ctx, bufs);
	fx_info("%d sends with and without CQ data checked, and one back",
		FX_CD_NOPS);

	fx_fini(&ctx);
	for (i = 0; i < FX_CD_NOPS; i++)
		free(bufs[i]);
	fx_info("PASS");
	return 0;
}
