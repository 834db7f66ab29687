/*
 * fb_trig.c - triggered operations against direct ones, 8-byte tagged
 * sends, microseconds per send (lower is better):
 *
 *   direct_w64     a window of 64 fi_tsend, posted back to back
 *   triggered_w64  the same 64 posted with FI_TRIGGER on a counter at
 *                  its next value, then released by one fi_cntr_add
 *   chain_<N>      N sends chained by the provider: send k waits (as a
 *                  triggered operation) for the send counter to count
 *                  send k-1; the first is posted directly
 *   app_chain_<N>  the same chain driven by the application: each send
 *                  posted once the previous one's completion was read
 *
 *   RESULT trig <param> <usec per send>
 *   NA     trig <param> <reason>     (no FI_TRIGGER endpoint)
 *
 * Each round ends with the server's ack once it has received all of the
 * round's messages (posted before the round; tags and lengths checked),
 * so every variant pays the same round trip per round. Warm-up: one
 * round; the server stops a point after -t seconds (at least two timed
 * rounds). Chain depths: -l (default 8,64).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fi_trigger.h>

#include "fb_common.h"

#define TR_WINDOW	64
#define TR_MAX_OPS	1024
#define TR_SIZE		8

enum tr_kind { TR_DIRECT, TR_TRIGGERED, TR_CHAIN, TR_APP_CHAIN };

struct tr {
	struct fb_ctx fb;
	bool trigger;			/* FI_TRIGGER endpoint */
	struct fid_cntr *go;		/* released by fi_cntr_add */
	struct fid_cntr *sent;		/* bound to the endpoint: FI_SEND */
	char tx[TR_SIZE], rx[TR_MAX_OPS][TR_SIZE];
	struct fb_op ops[TR_MAX_OPS];
	uint64_t total;			/* messages moved, all points */
};

static void tr_post_recvs(struct tr *tr, int n, uint64_t tag)
{
	int k;

	for (k = 0; k < n; k++)
		if (fb_trecv(&tr->fb, tr->rx[k], TR_SIZE, NULL, tr->fb.peer,
			     tag, 0, &tr->ops[k]))
			fb_fail(&tr->fb, "receive %d of %d refused", k, n);
}

/* One point's round: n sends of a kind on tag. */
struct tr_rnd {
	struct tr *tr;
	enum tr_kind kind;
	int n;
	uint64_t tag;
};

static void tr_rnd_check(void *arg, int round)
{
	struct tr_rnd *x = arg;
	struct fb_op *ops = x->tr->ops;
	int k;

	(void)round;
	for (k = 0; k < x->n; k++)
		if (ops[k].len != TR_SIZE || ops[k].tag != x->tag)
			fb_fail(&x->tr->fb, "receive %d: len %zu tag 0x%llx", k,
				ops[k].len, (unsigned long long)ops[k].tag);
}

static void tr_rnd_repost(void *arg)
{
	struct tr_rnd *x = arg;

	tr_post_recvs(x->tr, x->n, x->tag);
}

static void tr_server(struct tr *tr, int n, uint64_t tag)
{
	struct tr_rnd x = { tr, TR_DIRECT, n, tag };
	struct fb_rounds r = {
		.arg = &x, .check = tr_rnd_check, .repost = tr_rnd_repost,
		.per_round = (uint64_t)n, .cap = fb_cap(&tr->fb, 0.3, 0.03),
		.max_timed = 100000,
	};

	tr_post_recvs(tr, n, tag);
	tr->total += (uint64_t)fb_rounds_server(&tr->fb, &r) * n;
}

/* fi_tsendmsg with FI_TRIGGER: op k fires when cntr reaches threshold. */
static void tr_post_triggered(struct tr *tr, struct fb_op *op, uint64_t tag,
			      struct fid_cntr *cntr, uint64_t threshold)
{
	struct fb_ctx *ctx = &tr->fb;
	struct iovec iov = { tr->tx, TR_SIZE };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = ctx->peer,
		.tag = tag, .context = &op->u.tctx,
	};
	ssize_t ret;

	op->kind = FB_OP_SEND;
	op->done = 0;
	op->u.tctx.event_type = FI_TRIGGER_THRESHOLD;
	op->u.tctx.trigger.threshold.cntr = cntr;
	op->u.tctx.trigger.threshold.threshold = (size_t)threshold;
	do {
		ret = fi_tsendmsg(ctx->ep, &msg, FI_TRIGGER | FI_COMPLETION);
		if (ret == -FI_EAGAIN)
			fb_progress(ctx);
	} while (ret == -FI_EAGAIN);
	if (ret)
		fb_fail(ctx, "triggered fi_tsendmsg: %s",
			fi_strerror((int)-ret));
}

/* One round of n sends of the given kind; waits for their completions. */
static void tr_round(struct tr *tr, enum tr_kind kind, int n, uint64_t tag)
{
	struct fb_ctx *ctx = &tr->fb;
	uint64_t base = ctx->tx_cnt, c0;
	int k;

	switch (kind) {
	case TR_DIRECT:
		for (k = 0; k < n; k++)
			if (fb_tsend(ctx, tr->tx, TR_SIZE, NULL, tag,
				     &tr->ops[k]))
				fb_fail(ctx, "send %d refused", k);
		break;
	case TR_TRIGGERED:
		c0 = fi_cntr_read(tr->go);
		for (k = 0; k < n; k++)
			tr_post_triggered(tr, &tr->ops[k], tag, tr->go, c0 + 1);
		if (fi_cntr_add(tr->go, 1))
			fb_fail(ctx, "fi_cntr_add failed");
		break;
	case TR_CHAIN:
		c0 = fi_cntr_read(tr->sent);
		for (k = 1; k < n; k++)
			tr_post_triggered(tr, &tr->ops[k], tag, tr->sent,
					  c0 + (uint64_t)k);
		if (fb_tsend(ctx, tr->tx, TR_SIZE, NULL, tag, &tr->ops[0]))
			fb_fail(ctx, "chain head refused");
		break;
	case TR_APP_CHAIN:
		for (k = 0; k < n; k++) {
			if (fb_tsend(ctx, tr->tx, TR_SIZE, NULL, tag,
				     &tr->ops[k]))
				fb_fail(ctx, "send %d refused", k);
			fb_wait_op(ctx, &tr->ops[k]);
		}
		break;
	}
	fb_wait_tx(ctx, base + (uint64_t)n);
}

static void tr_rnd_send(void *arg)
{
	struct tr_rnd *x = arg;

	tr_round(x->tr, x->kind, x->n, x->tag);
}

static double tr_client(struct tr *tr, enum tr_kind kind, int n,
			uint64_t tag, uint64_t *sends_p)
{
	struct tr_rnd x = { tr, kind, n, tag };
	struct fb_rounds r = { .arg = &x, .round = tr_rnd_send };
	double secs;
	int rounds;

	secs = fb_rounds_client(&tr->fb, &r, &rounds);
	tr->total += (uint64_t)rounds * n;
	*sends_p = (uint64_t)(rounds - FB_WARM_ROUNDS) * n;
	return secs;
}

static void tr_point(struct tr *tr, enum tr_kind kind, int n,
		     const char *param, int idx)
{
	struct fb_ctx *ctx = &tr->fb;
	uint64_t tag = 0x300 + (uint64_t)idx, sends;
	double secs;

	if ((kind == TR_TRIGGERED || kind == TR_CHAIN) && !tr->trigger) {
		fb_result_na(ctx, "trig", param,
			     "fi_getinfo offers no FI_TRIGGER endpoint");
		return;
	}
	if (ctx->server) {
		tr_server(tr, n, tag);
		return;
	}
	secs = tr_client(tr, kind, n, tag, &sends);
	fb_result(ctx, "trig", param, secs / (double)sends * 1e6);
}

static void tr_run(struct tr *tr)
{
	struct fb_ctx *ctx = &tr->fb;
	char *copy, *tok, *save, param[32];
	int idx = 0, depth;

	tr_point(tr, TR_DIRECT, TR_WINDOW, "direct_w64", idx++);
	tr_point(tr, TR_TRIGGERED, TR_WINDOW, "triggered_w64", idx++);
	copy = strdup(ctx->opts.list ? ctx->opts.list : "8,64");
	if (!copy)
		fb_fail(ctx, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		depth = atoi(tok);
		if (depth < 2 || depth > TR_MAX_OPS)
			fb_fail(ctx, "-l: chain depths 2..%d", TR_MAX_OPS);
		snprintf(param, sizeof(param), "chain_%d", depth);
		tr_point(tr, TR_CHAIN, depth, param, idx++);
		snprintf(param, sizeof(param), "app_chain_%d", depth);
		tr_point(tr, TR_APP_CHAIN, depth, param, idx++);
	}
	free(copy);
}

static void tr_cntr_open(struct tr *tr, struct fid_cntr **cntr)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	int ret = fi_cntr_open(tr->fb.domain, &attr, cntr, NULL);

	if (ret)
		fb_fail(&tr->fb, "fi_cntr_open: %s", fi_strerror(-ret));
}

int main(int argc, char **argv)
{
	struct tr *tr = calloc(1, sizeof(*tr));
	struct fb_ctx *ctx;
	struct fi_info *hints;
	bool ok;

	if (!tr)
		return 1;
	ctx = &tr->fb;
	fb_init(ctx, argc, argv, "fb_trig", NULL);
	fb_oob_open(ctx);

	/* a triggered endpoint if there is one (both sides must agree) */
	hints = fb_hints(ctx, FI_TAGGED | FI_SEND | FI_RECV | FI_TRIGGER);
	tr->trigger = fb_oob_agree(ctx, fb_getinfo(ctx, hints) == 0);
	fi_freeinfo(hints);
	if (!tr->trigger) {
		fi_freeinfo(ctx->info);
		ctx->info = NULL;
		hints = fb_hints(ctx, FI_TAGGED | FI_SEND | FI_RECV);
		ok = fb_oob_agree(ctx, fb_getinfo(ctx, hints) == 0);
		fi_freeinfo(hints);
		if (!ok) {
			fb_result_na(ctx, "trig", "*",
				     "fi_getinfo offers no FI_TAGGED endpoint");
			fb_oob_close(ctx);
			free(tr);
			return 0;
		}
	}
	fb_domain_open(ctx);
	if (tr->trigger) {
		tr_cntr_open(tr, &tr->go);
		tr_cntr_open(tr, &tr->sent);
	}
	fb_ep_open(ctx, 0, 0, tr->sent, NULL);
	memset(tr->tx, 0x5a, sizeof(tr->tx));
	tr_run(tr);

	fb_oob_totals_agree(ctx, tr->total);
	/* the endpoint goes first: it holds the counters */
	fb_ep_close(ctx);
	if (tr->sent)
		fi_close(&tr->sent->fid);
	if (tr->go)
		fi_close(&tr->go->fid);
	fb_domain_close(ctx);
	fb_oob_close(ctx);
	free(tr);
	return 0;
}
