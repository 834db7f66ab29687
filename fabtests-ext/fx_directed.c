/*
 * fx_directed.c - FI_DIRECTED_RECV with several senders (run the server
 * with -n 3 and three clients). Every client sends the same tag (or, with
 * -e msg, untagged messages) carrying data of its own; the server posts
 * receives directed at one client at a time, in an order of its choosing
 * that differs from arrival order, and checks that each receive got its
 * own sender's messages, in that sender's order, with FI_SOURCE naming it.
 *
 * Phase 1: all messages are already there (each client sends a tagged
 *          marker last; the server waits for every marker) - matching
 *          must skip the other clients' unexpected messages.
 * Phase 2: the receives are posted first (clients in reverse order) and
 *          the clients then send at once - arriving messages must skip
 *          the receives directed at other clients.
 * Sizes mix eager and rendezvous (1 B, 1000 B, 20000 B, 100000 B).
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_DR_TAG	0xd1d1ULL
#define FX_DR_TAG_MARK	0xd2d2ULL
#define FX_DR_PER_PEER	8

static const size_t fx_dr_sizes[] = { 1, 1000, 20000, 100000 };
#define FX_DR_NSIZES (sizeof(fx_dr_sizes) / sizeof(fx_dr_sizes[0]))

struct fx_dr {
	struct fx_ctx *ctx;
	int nslots;			/* server: peers * FX_DR_PER_PEER */
	char **bufs;
	struct fi_context *ctxs;	/* slot r * FX_DR_PER_PEER + j */
	uint8_t *seen;
};

static size_t fx_dr_size(int j)
{
	return fx_dr_sizes[(size_t)j % FX_DR_NSIZES];
}

static uint64_t fx_dr_seed(int phase, int rank, int j)
{
	return ((uint64_t)phase << 40) | ((uint64_t)rank << 20) | (uint64_t)j;
}

static void fx_dr_post(struct fx_dr *dr, int r)
{
	struct fx_ctx *ctx = dr->ctx;
	int j, s;

	for (j = 0; j < FX_DR_PER_PEER; j++) {
		s = r * FX_DR_PER_PEER + j;
		fx_recv(ctx, dr->bufs[s], fx_dr_size(j), ctx->peer[r],
			FX_DR_TAG, 0, &dr->ctxs[s]);
	}
}

/* server: the order receives are posted in, a permutation of the peers */
static int fx_dr_order(int phase, int npeers, int i)
{
	/* phase 1: the middle one first, then rotate; phase 2: reversed */
	return phase == 1 ? (i + npeers / 2) % npeers : npeers - 1 - i;
}

static void fx_dr_check(struct fx_dr *dr, int phase)
{
	struct fx_ctx *ctx = dr->ctx;
	struct fx_comp c;
	char what[64];
	int k, s, r, j;

	for (k = 0; k < dr->nslots; k++) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "directed receive");
		s = fx_slot_of(&c, dr->ctxs, dr->nslots, dr->seen,
			       "directed receive");
		r = s / FX_DR_PER_PEER;
		j = s % FX_DR_PER_PEER;
		snprintf(what, sizeof(what), "phase %d, receive %d directed "
			 "at client %d", phase, j, r);
		fx_check_comp(&c, &dr->ctxs[s], FI_RECV | fx_xfer_flag(ctx),
			      fx_dr_size(j), FX_DR_TAG, what);
		FX_CHECK(c.src == ctx->peer[r], "%s: FI_SOURCE %llu, expected "
			 "%llu", what, (unsigned long long)c.src,
			 (unsigned long long)ctx->peer[r]);
		/* a message from another client has another seed */
		fx_check(dr->bufs[s], fx_dr_size(j), fx_dr_seed(phase, r, j),
			 what);
	}
}

static void fx_dr_server(struct fx_dr *dr, int phase)
{
	struct fx_ctx *ctx = dr->ctx;
	struct fi_context mark;
	struct fx_comp c;
	int i;

	memset(dr->seen, 0, (size_t)dr->nslots);
	if (phase == 1) {
		for (i = 0; i < ctx->npeers; i++) {
			FX_RETRY(ctx, "fi_trecv marker",
				 fi_trecv(ctx->ep, NULL, 0, NULL,
					  FI_ADDR_UNSPEC, FX_DR_TAG_MARK, 0,
					  &mark));
			fx_cq_wait_ok(ctx, ctx->rxcq, &c, "marker");
			fx_check_comp(&c, &mark, FI_RECV | FI_TAGGED, 0,
				      FX_DR_TAG_MARK, "marker");
		}
		/* every client's messages are all here now */
		for (i = 0; i < ctx->npeers; i++)
			fx_dr_post(dr, fx_dr_order(phase, ctx->npeers, i));
	} else {
		for (i = 0; i < ctx->npeers; i++)
			fx_dr_post(dr, fx_dr_order(phase, ctx->npeers, i));
		fx_oob_sync(ctx);	/* receives posted: send */
	}
	fx_dr_check(dr, phase);
}

static void fx_dr_client(struct fx_dr *dr, int phase)
{
	struct fx_ctx *ctx = dr->ctx;
	struct fi_context sctx[FX_DR_PER_PEER + 1];
	uint8_t seen[FX_DR_PER_PEER + 1] = { 0 };
	int j, n = FX_DR_PER_PEER;
	struct fx_comp c;

	if (phase == 2)
		fx_oob_sync(ctx);
	for (j = 0; j < FX_DR_PER_PEER; j++) {
		fx_fill(dr->bufs[j], fx_dr_size(j),
			fx_dr_seed(phase, ctx->rank, j));
		fx_send(ctx, dr->bufs[j], fx_dr_size(j), ctx->peer[0],
			FX_DR_TAG, &sctx[j]);
	}
	if (phase == 1) {
		FX_RETRY(ctx, "fi_tsend marker",
			 fi_tsend(ctx->ep, NULL, 0, NULL, ctx->peer[0],
				  FX_DR_TAG_MARK, &sctx[n]));
		n++;
	}
	for (j = 0; j < n; j++) {
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
		fx_slot_of(&c, sctx, n, seen, "send");
	}
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG |
					  FI_DIRECTED_RECV | FI_SOURCE };
	struct fx_opts opts;
	struct fx_ctx ctx;
	struct fx_dr dr = { .ctx = &ctx };
	int phase, s, nbufs;

	fx_parse(argc, argv, "directed receives from several clients",
		 "  -n <n>        server: clients (run with 3)\n", &opts);
	fx_init(&ctx, &opts, &setup);
	dr.nslots = ctx.server ? ctx.npeers * FX_DR_PER_PEER : 0;
	nbufs = ctx.server ? dr.nslots : FX_DR_PER_PEER;
	dr.bufs = calloc((size_t)nbufs, sizeof(*dr.bufs));
	dr.ctxs = calloc((size_t)nbufs, sizeof(*dr.ctxs));
	dr.seen = calloc((size_t)nbufs, 1);
	FX_CHECK(dr.bufs && dr.ctxs && dr.seen, "out of memory");
	for (s = 0; s < nbufs; s++)
		dr.bufs[s] = fx_alloc(fx_dr_size(s % FX_DR_PER_PEER));

	for (phase = 1; phase <= 2; phase++) {
		fx_oob_sync(&ctx);
		if (ctx.server)
			fx_dr_server(&dr, phase);
		else
			fx_dr_client(&dr, phase);
		fx_oob_sync(&ctx);
		fx_info("phase %d: receives posted %s the messages came, "
			"each got its own sender's data", phase,
			phase == 1 ? "after" : "before");
	}
	fx_cq_expect_empty(&ctx, ctx.rxcq, 10, "after the directed receives");

	fx_fini(&ctx);
	for (s = 0; s < nbufs; s++)
		free(dr.bufs[s]);
	free(dr.bufs);
	free(dr.ctxs);
	free(dr.seen);
	fx_info("PASS");
	return 0;
}
