/*
 * fx_multirecv.c - FI_MULTI_RECV buffers with FI_OPT_MIN_MULTI_RECV.
 *
 * The server keeps two multi-receive buffers of 128 KiB posted (untagged,
 * fi_recvmsg with FI_MULTI_RECV), the minimum free space set to 20000
 * bytes, above the eager limit, so both eager and rendezvous messages
 * land in them. The client sends messages of pseudo-random sizes of 1 to
 * 20000 bytes; both sides derive the sizes from the message index.
 *
 * Every placement is checked: inside its buffer, not overlapping another,
 * in message order within the buffer (messages fill one buffer, then the
 * next), the right length and data. Every buffer must be released with an
 * FI_MULTI_RECV completion (separate, or on its last message) exactly
 * when less than the minimum is left, and after all of its placements;
 * it is then checked and posted again. At the end, fi_cancel returns the
 * partly used buffers with FI_ECANCELED.
 *
 * Phase 1: buffers posted before the client sends.
 * Phase 2: the messages arrive first (a tagged marker closes them), the
 *          buffers are posted afterwards.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_MR_BUF_SIZE	(128 * FX_KIB)
#define FX_MR_MIN	20000
#define FX_MR_MAX_PL	4096	/* placements per buffer use, at most */
#define FX_MR_NBUF	2
#define FX_MR_PHASE1	300
#define FX_MR_PHASE2	100
#define FX_MR_TAG_MARK	0x3131ULL

struct fx_mr_place {
	char *buf;
	size_t len;
};

struct fx_mr_buf {
	char *base;
	struct fi_context ctx;
	bool posted, released;
	int npl;
	struct fx_mr_place *pl;
};

struct fx_mr {
	struct fx_ctx *ctx;
	int phase;
	int n;				/* messages in this phase */
	int placed;			/* placements seen */
	int next_msg;			/* index of the next one to check */
	int gens;			/* buffer uses checked */
	struct fx_mr_buf bufs[FX_MR_NBUF];
	int fifo[FX_MR_NBUF];		/* buffers in the order they fill */
};

static size_t fx_mr_size(int phase, int i)
{
	uint64_t x = ((uint64_t)phase << 32 | (uint64_t)i) *
		     0x9E3779B97F4A7C15ULL;

	return 1 + (size_t)((x >> 33) % FX_MR_MIN);
}

static uint64_t fx_mr_seed(int phase, int i)
{
	return ((uint64_t)phase << 32) | (uint64_t)i;
}

static void fx_mr_post(struct fx_mr *mr, struct fx_mr_buf *b)
{
	struct iovec iov = { .iov_base = b->base,
			     .iov_len = FX_MR_BUF_SIZE };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.context = &b->ctx,
	};

	/* anything a provider writes where no message goes shows up */
	memset(b->base, 0xee, FX_MR_BUF_SIZE);
	b->npl = 0;
	b->released = false;
	b->posted = true;
	FX_RETRY(mr->ctx, "fi_recvmsg FI_MULTI_RECV",
		 fi_recvmsg(mr->ctx->ep, &msg, FI_MULTI_RECV));
}

static int fx_mr_place_cmp(const void *a, const void *b)
{
	const struct fx_mr_place *pa = a, *pb = b;

	if (pa->buf != pb->buf)
		return pa->buf < pb->buf ? -1 : 1;
	return pa->len < pb->len ? -1 : pa->len > pb->len;
}

/*
 * A buffer use is over (released, or the phase's messages all placed):
 * its placements, in address order, are the next messages in order.
 */
static void fx_mr_check_gen(struct fx_mr *mr, struct fx_mr_buf *b)
{
	char *end = b->base + FX_MR_BUF_SIZE, *prev = b->base;
	char what[96];
	int k, i;

	qsort(b->pl, (size_t)b->npl, sizeof(*b->pl), fx_mr_place_cmp);
	for (k = 0; k < b->npl; k++) {
		struct fx_mr_place *p = &b->pl[k];

		i = mr->next_msg++;
		snprintf(what, sizeof(what), "phase %d message %d (buffer "
			 "use %d, placement %d at offset %td)", mr->phase, i,
			 mr->gens, k, p->buf - b->base);
		FX_CHECK(i < mr->n, "%s: more placements than messages", what);
		FX_CHECK(p->len == fx_mr_size(mr->phase, i), "%s: length %zu, "
			 "expected %zu (a message missing or misplaced)",
			 what, p->len, fx_mr_size(mr->phase, i));
		FX_CHECK(p->buf >= prev, "%s: overlaps the previous message "
			 "(ends at offset %td)", what, prev - b->base);
		fx_check_byte(prev, (size_t)(p->buf - prev), 0xee,
			      "gap before a placement");
		fx_check(p->buf, p->len, fx_mr_seed(mr->phase, i), what);
		prev = p->buf + p->len;
		/* the provider may not release a buffer that still had room */
		if (k + 1 < b->npl || !b->released)
			FX_CHECK(end - prev >= FX_MR_MIN, "%s: only %td bytes "
				 "left after it, below the minimum %d, but the"
				 " buffer took more", what, end - prev,
				 FX_MR_MIN);
	}
	if (b->released)
		FX_CHECK(end - prev < FX_MR_MIN, "buffer use %d released with "
			 "%td bytes free, not below the minimum %d", mr->gens,
			 end - prev, FX_MR_MIN);
	fx_check_byte(prev, (size_t)(end - prev), 0xee,
		      "multi-recv buffer after the last placement");
	mr->gens++;
}

/* bytes after the furthest placement so far */
static size_t fx_mr_free_space(const struct fx_mr_buf *b)
{
	char *end = b->base;
	int k;

	for (k = 0; k < b->npl; k++)
		if (b->pl[k].buf + b->pl[k].len > end)
			end = b->pl[k].buf + b->pl[k].len;
	return (size_t)(b->base + FX_MR_BUF_SIZE - end);
}

/* the oldest buffers, once released, are checked and posted again */
static void fx_mr_rotate(struct fx_mr *mr)
{
	struct fx_mr_buf *b = &mr->bufs[mr->fifo[0]];
	int head = mr->fifo[0], k;

	while (b->released) {
		fx_mr_check_gen(mr, b);
		for (k = 0; k + 1 < FX_MR_NBUF; k++)
			mr->fifo[k] = mr->fifo[k + 1];
		mr->fifo[FX_MR_NBUF - 1] = head;
		fx_mr_post(mr, b);
		head = mr->fifo[0];
		b = &mr->bufs[head];
	}
}

static struct fx_mr_buf *fx_mr_buf_of(struct fx_mr *mr,
				      const struct fx_comp *c)
{
	int k;

	for (k = 0; k < FX_MR_NBUF; k++)
		if (c->e.op_context == &mr->bufs[k].ctx)
			return &mr->bufs[k];
	FX_FAIL("completion for context %p, not a multi-recv buffer",
		c->e.op_context);
}

static void fx_mr_completion(struct fx_mr *mr, const struct fx_comp *c)
{
	struct fx_mr_buf *b = fx_mr_buf_of(mr, c);
	char flags[128];

	FX_CHECK(b->posted && !b->released, "completion (flags %s) for a "
		 "buffer already released",
		 fx_flags_str(c->e.flags, flags, sizeof(flags)));
	if (c->e.flags & FI_RECV) {
		FX_CHECK((c->e.flags & ~FI_MULTI_RECV) == (FI_RECV | FI_MSG),
			 "placement with flags %s",
			 fx_flags_str(c->e.flags, flags, sizeof(flags)));
		FX_CHECK(c->e.buf && (char *)c->e.buf >= b->base &&
			 (char *)c->e.buf + c->e.len <= b->base +
			 FX_MR_BUF_SIZE, "placement of %zu bytes at %p (flags "
			 "%s), outside its buffer %p..+%lu (placement %d of "
			 "buffer use %d)", c->e.len, c->e.buf,
			 fx_flags_str(c->e.flags, flags, sizeof(flags)),
			 (void *)b->base, (unsigned long)FX_MR_BUF_SIZE,
			 b->npl, mr->gens);
		FX_CHECK(b->npl < FX_MR_MAX_PL, "too many placements");
		b->pl[b->npl++] = (struct fx_mr_place){ c->e.buf, c->e.len };
		mr->placed++;
	} else {
		/* a separate release entry carries no other flag */
		FX_CHECK(c->e.flags == FI_MULTI_RECV, "completion with flags "
			 "%s", fx_flags_str(c->e.flags, flags, sizeof(flags)));
	}
	if (c->e.flags & FI_MULTI_RECV)
		b->released = true;
	fx_mr_rotate(mr);
}

/* server: phase over; the partly used buffers come back cancelled */
static void fx_mr_cancel_all(struct fx_mr *mr)
{
	struct fx_ctx *ctx = mr->ctx;
	struct fx_comp c;
	int k, err;

	for (k = 0; k < FX_MR_NBUF; k++)
		fx_mr_check_gen(mr, &mr->bufs[mr->fifo[k]]);
	FX_CHECK(mr->next_msg == mr->n, "%d messages checked, %d sent",
		 mr->next_msg, mr->n);
	for (k = 0; k < FX_MR_NBUF; k++) {
		FX_CALL(fi_cancel(&ctx->ep->fid, &mr->bufs[k].ctx));
		err = fx_cq_wait(ctx, ctx->rxcq, &c);
		FX_CHECK(err == FI_ECANCELED, "cancel of a multi-recv buffer: "
			 "%s (err %d), expected FI_ECANCELED",
			 err ? fi_strerror(err) : "a completion", err);
		FX_CHECK(c.e.op_context == &mr->bufs[k].ctx, "FI_ECANCELED "
			 "for context %p, expected %p", c.e.op_context,
			 (void *)&mr->bufs[k].ctx);
		mr->bufs[k].posted = false;
	}
}

static void fx_mr_server(struct fx_mr *mr)
{
	struct fx_ctx *ctx = mr->ctx;
	struct fi_context mark;
	struct fx_comp c;
	int k;

	mr->placed = mr->next_msg = 0;
	if (mr->phase == 2) {
		FX_RETRY(ctx, "fi_trecv marker",
			 fi_trecv(ctx->ep, NULL, 0, NULL, FI_ADDR_UNSPEC,
				  FX_MR_TAG_MARK, 0, &mark));
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "marker");
		fx_check_comp(&c, &mark, FI_RECV | FI_TAGGED, 0,
			      FX_MR_TAG_MARK, "marker");
	}
	for (k = 0; k < FX_MR_NBUF; k++) {
		mr->fifo[k] = k;
		fx_mr_post(mr, &mr->bufs[k]);
	}
	if (mr->phase == 1)
		fx_oob_sync(ctx);	/* posted: the client may send */
	while (mr->placed < mr->n) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "multi-recv completion");
		fx_mr_completion(mr, &c);
	}
	/* the last message may have left too little: a release is due */
	while (fx_mr_free_space(&mr->bufs[mr->fifo[0]]) < FX_MR_MIN) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "the last buffer release");
		fx_mr_completion(mr, &c);
	}
	fx_mr_cancel_all(mr);
}

static void fx_mr_client(struct fx_mr *mr)
{
	struct fx_ctx *ctx = mr->ctx;
	struct fi_context *sctx;
	uint8_t *seen;
	char **bufs;
	int i, n = mr->n + (mr->phase == 2);
	struct fx_comp c;

	bufs = calloc((size_t)mr->n, sizeof(*bufs));
	sctx = calloc((size_t)n, sizeof(*sctx));
	seen = calloc((size_t)n, 1);
	FX_CHECK(bufs && sctx && seen, "out of memory");
	if (mr->phase == 1)
		fx_oob_sync(ctx);
	for (i = 0; i < mr->n; i++) {
		bufs[i] = fx_alloc(fx_mr_size(mr->phase, i));
		fx_fill(bufs[i], fx_mr_size(mr->phase, i),
			fx_mr_seed(mr->phase, i));
		FX_RETRY(ctx, "fi_send",
			 fi_send(ctx->ep, bufs[i], fx_mr_size(mr->phase, i),
				 NULL, ctx->peer[0], &sctx[i]));
	}
	if (mr->phase == 2)
		FX_RETRY(ctx, "fi_tsend marker",
			 fi_tsend(ctx->ep, NULL, 0, NULL, ctx->peer[0],
				  FX_MR_TAG_MARK, &sctx[mr->n]));
	for (i = 0; i < n; i++) {
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
		fx_slot_of(&c, sctx, n, seen, "send");
	}
	for (i = 0; i < mr->n; i++)
		free(bufs[i]);
	free(bufs);
	free(sctx);
	free(seen);
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_MSG | FI_TAGGED | FI_MULTI_RECV,
				  .min_multi_recv = FX_MR_MIN,
				  .cq_size = 1024 };
	struct fx_opts opts;
	struct fx_ctx ctx;
	struct fx_mr mr = { .ctx = &ctx };
	size_t min = 0, len = sizeof(min);
	int k;

	fx_parse(argc, argv, "FI_MULTI_RECV buffers and their release",
		 NULL, &opts);
	fx_init(&ctx, &opts, &setup);
	FX_CALL(fi_getopt(&ctx.ep->fid, FI_OPT_ENDPOINT,
			  FI_OPT_MIN_MULTI_RECV, &min, &len));
	FX_CHECK(min == FX_MR_MIN, "FI_OPT_MIN_MULTI_RECV reads %zu, set %d",
		 min, FX_MR_MIN);
	for (k = 0; k < FX_MR_NBUF; k++) {
		mr.bufs[k].base = fx_alloc(FX_MR_BUF_SIZE);
		mr.bufs[k].pl = calloc(FX_MR_MAX_PL, sizeof(*mr.bufs[k].pl));
		FX_CHECK(mr.bufs[k].pl, "out of memory");
	}

	for (mr.phase = 1; mr.phase <= 2; mr.phase++) {
		mr.n = mr.phase == 1 ? FX_MR_PHASE1 : FX_MR_PHASE2;
		mr.gens = 0;
		fx_oob_sync(&ctx);
		if (ctx.server)
			fx_mr_server(&mr);
		else
			fx_mr_client(&mr);
		fx_oob_sync(&ctx);
		if (ctx.server)
			fx_info("phase %d: %d messages in %d buffer uses, "
				"every placement and release checked",
				mr.phase, mr.n, mr.gens);
	}
	fx_cq_expect_empty(&ctx, ctx.rxcq, 10, "after the multi-recv phases");

	fx_fini(&ctx);
	for (k = 0; k < FX_MR_NBUF; k++) {
		free(mr.bufs[k].base);
		free(mr.bufs[k].pl);
	}
	fx_info("PASS");
	return 0;
}
