/*
 * cqstall.c - a receiver that stops reading its CQ (docs/robustness.md).
 * Two processes on the public fi_* API (fabtests-ext/common.c):
 *
 *   cqstall -B 0 [-a] [-N n] [-W w]            receiver (server)
 *   cqstall -P <port> [-a] [-N n] [-W w] <ip>  sender (client)
 *
 * Both CQs hold 8 entries, the sender's transmit context 64 operations.
 * The receiver posts -W wildcard tagged receives (default 64, so their
 * completions are 8 times what its CQ holds), then stops reading its
 * CQ. The sender posts -N messages (default 3000; eager, with every 16th
 * a rendezvous one) tagged with their sequence number, retrying on
 * -FI_EAGAIN and reading its own CQ as it goes. The receiver:
 *   - waits until its receive counter says all -W receives completed
 *     (so their entries are queued behind a CQ of 8 nobody reads), then
 *     holds on for CQSTALL_SLEEP seconds (default 2) more, still not
 *     reading: with manual progress it keeps progressing through its
 *     counters; with -a (FI_PROGRESS_AUTO) it only sleeps;
 *   - then reads: every completion must be for the receive posted k-th
 *     with tag k (matching order = send order), its length and payload
 *     checked; receives are reposted, in sequence order, as their
 *     slots free up.
 * The sender must have seen -FI_EAGAIN while the receiver was not
 * reading (its 64 transmit slots fill up behind flow control and the
 * rendezvous transfers nobody pulls), and every send must complete
 * without error. Both print what they saw (cqstall_* lines).
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CS_CQ_SIZE	8
#define CS_TX_SIZE	64
#define CS_COUNT	3000
#define CS_WINDOW	64
#define CS_RDZV_EVERY	16
#define CS_RDZV_SIZE	70000	/* above the eager sizes (TCP 16, shm 64 KiB) */
#define CS_MAXLEN	CS_RDZV_SIZE
#define CS_BATCH	8

/* message k's size: small ones of two sizes, a rendezvous one now and then */
static size_t cs_size(uint64_t k)
{
	if (k % CS_RDZV_EVERY == CS_RDZV_EVERY - 1)
		return CS_RDZV_SIZE;
	return k & 1 ? 4000 : 1000;
}

static int cs_sleep_s(void)
{
	const char *env = getenv("CQSTALL_SLEEP");

	return env ? atoi(env) : 2;
}

/* ---- sender ------------------------------------------------------------- */

/*
 * Buffers the sender cycles through. Far more than the transmit context
 * holds, so that what stops the sender is the provider (-FI_EAGAIN once
 * 64 sends are pending), never a buffer of ours still in use: the 64th
 * rendezvous send after the window comes well before the ring wraps.
 */
#define CS_TX_SLOTS	2048

/* A send's buffer and context stay busy until its completion is read. */
struct cs_tx {
	struct fi_context ctx[CS_TX_SLOTS];
	uint8_t busy[CS_TX_SLOTS];
	uint8_t *bufs;
	size_t pending;
};

/* Takes what the tx CQ has and frees those slots. */
static void cs_tx_reap(struct fx_ctx *ctx, struct cs_tx *tx)
{
	struct fi_cq_tagged_entry e[CS_BATCH];
	struct fx_comp c;
	ssize_t ret, i;
	int slot;

	ret = fi_cq_read(ctx->txcq, e, CS_BATCH);
	if (ret == -FI_EAVAIL) {
		fx_cq_wait(ctx, ctx->txcq, &c);
		FX_FAIL("send %p failed: %s", c.e.op_context,
			fi_strerror(c.err));
	}
	if (ret == -FI_EAGAIN)
		return;
	if (ret < 0)
		FX_FAIL("fi_cq_read (tx): %zd (%s)", ret,
			fi_strerror((int)-ret));
	for (i = 0; i < ret; i++) {
		FX_CHECK(e[i].op_context >= (void *)tx->ctx &&
			 e[i].op_context < (void *)(tx->ctx + CS_TX_SLOTS),
			 "send completion for context %p, none of ours",
			 e[i].op_context);
		slot = (int)((struct fi_context *)e[i].op_context - tx->ctx);
		FX_CHECK(tx->busy[slot], "send slot %d completed twice", slot);
		tx->busy[slot] = 0;
		tx->pending--;
	}
}

static void cs_sender(struct fx_ctx *ctx, int count)
{
	uint64_t eagain = 0, first_eagain = 0, t0, waited = 0;
	struct cs_tx *tx = calloc(1, sizeof(*tx));
	ssize_t ret;
	int k;

	FX_CHECK(tx, "out of memory");
	tx->bufs = fx_alloc((size_t)CS_TX_SLOTS * CS_MAXLEN);
	fx_oob_sync(ctx);	/* the receives are posted */
	t0 = fx_now_us();
	for (k = 0; k < count; k++) {
		int slot = k % CS_TX_SLOTS;
		uint8_t *buf = tx->bufs + (size_t)slot * CS_MAXLEN;
		uint64_t since = 0;

		/* never reuse a buffer whose send has not completed */
		while (tx->busy[slot]) {
			cs_tx_reap(ctx, tx);
			fx_oob_check_peers(ctx);
		}
		fx_fill(buf, cs_size((uint64_t)k), (uint64_t)k);
		for (;;) {
			ret = fi_tsend(ctx->ep, buf, cs_size((uint64_t)k),
				       NULL, ctx->peer[0], (uint64_t)k,
				       &tx->ctx[slot]);
			if (ret != -FI_EAGAIN)
				break;
			if (!eagain++)
				first_eagain = (uint64_t)k;
			if (!since)
				since = fx_now_us();
			FX_CHECK(fx_now_us() - since < 60 * 1000000ULL,
				 "message %d: -FI_EAGAIN for 60 s", k);
			cs_tx_reap(ctx, tx);
			fx_oob_check_peers(ctx);
		}
		FX_CHECK(!ret, "fi_tsend %d: %zd (%s)", k, ret,
			 fi_strerror((int)-ret));
		if (since)
			waited += fx_now_us() - since;
		tx->busy[slot] = 1;
		tx->pending++;
		cs_tx_reap(ctx, tx);
	}
	while (tx->pending) {
		cs_tx_reap(ctx, tx);
		fx_oob_check_peers(ctx);
	}
	printf("cqstall_sender %d sends completed in %.2f s; -FI_EAGAIN %llu "
	       "times (first at message %llu), %.2f s spent retrying\n",
	       count, (double)(fx_now_us() - t0) / 1e6,
	       (unsigned long long)eagain, (unsigned long long)first_eagain,
	       (double)waited / 1e6);
	fflush(stdout);
	FX_CHECK(eagain > 0, "never saw -FI_EAGAIN although the receiver "
		 "read nothing for a while");
	fx_oob_send_u64(ctx, 0, eagain);
	free(tx->bufs);
	free(tx);
}

/* ---- receiver ----------------------------------------------------------- */

struct cs_rx {
	struct fi_context ctx[CS_WINDOW * 64];
	uint64_t seq[CS_WINDOW * 64];	/* message a slot's receive is for */
	uint8_t busy[CS_WINDOW * 64];	/* a receive is posted in the slot */
	uint8_t *bufs;
	int window;
};

static void cs_post(struct fx_ctx *ctx, struct cs_rx *rx, uint64_t k)
{
	int slot = (int)(k % (uint64_t)rx->window);

	rx->seq[slot] = k;
	rx->busy[slot] = 1;
	/* a wildcard: only posting order decides which message lands here */
	FX_RETRY(ctx, "fi_trecv", fi_trecv(ctx->ep,
		 rx->bufs + (size_t)slot * CS_MAXLEN, CS_MAXLEN, NULL,
		 FI_ADDR_UNSPEC, 0, ~0ULL, &rx->ctx[slot]));
}

static void cs_receiver(struct fx_ctx *ctx, int count, int window)
{
	struct cs_rx *rx = calloc(1, sizeof(*rx));
	uint64_t t0, k, eagain, next = 0, post;
	struct fx_comp c;
	char what[64];
	int slot;

	FX_CHECK(rx, "out of memory");
	rx->window = window;
	rx->bufs = fx_alloc((size_t)window * CS_MAXLEN);
	for (k = 0; k < (uint64_t)window && k < (uint64_t)count; k++)
		cs_post(ctx, rx, k);
	post = k;
	fx_oob_sync(ctx);

	/* every posted receive completes; nobody reads the CQ */
	t0 = fx_now_us();
	while (fi_cntr_read(ctx->rxcntr) < k) {
		FX_CHECK(fx_now_us() - t0 < FX_WAIT_MS * 1000ULL,
			 "receive counter %llu of %llu after %d ms",
			 (unsigned long long)fi_cntr_read(ctx->rxcntr),
			 (unsigned long long)k, FX_WAIT_MS);
		fx_oob_check_peers(ctx);
		if (ctx->opts->auto_progress)
			usleep(10000);
	}
	/* and some more time with the CQ unread, the sender pushing */
	t0 = fx_now_us();
	while (fx_now_us() - t0 < (uint64_t)cs_sleep_s() * 1000000) {
		if (ctx->opts->auto_progress)
			usleep(100000);
		else
			fx_progress(ctx);
	}
	printf("cqstall_receiver %llu receives completed into a CQ of %d "
	       "left unread for %d s more (%s progress)\n",
	       (unsigned long long)fi_cntr_read(ctx->rxcntr), CS_CQ_SIZE,
	       cs_sleep_s(), ctx->opts->auto_progress ? "auto" : "manual");
	fflush(stdout);
	FX_CHECK(fi_cntr_read(ctx->rxcntr) == k, "receive counter moved "
		 "past the receives posted");

	t0 = fx_now_us();
	while (next < (uint64_t)count) {
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "receive");
		FX_CHECK(c.e.op_context >= (void *)rx->ctx &&
			 c.e.op_context < (void *)(rx->ctx + window),
			 "completion for context %p, none of ours",
			 c.e.op_context);
		slot = (int)((struct fi_context *)c.e.op_context - rx->ctx);
		k = rx->seq[slot];
		snprintf(what, sizeof(what), "message %llu",
			 (unsigned long long)k);
		/* the k-th receive posted must hold the k-th message sent */
		fx_check_comp(&c, &rx->ctx[slot], FI_RECV | FI_TAGGED,
			      cs_size(k), k, what);
		fx_check(rx->bufs + (size_t)slot * CS_MAXLEN, cs_size(k), k,
			 what);
		next++;
		/*
		 * Repost in sequence order: a rendezvous message completes
		 * after eager ones behind it, and a receive posted for a
		 * later message first would take an earlier one.
		 */
		rx->busy[slot] = 0;
		while (post < (uint64_t)count &&
		       !rx->busy[post % (uint64_t)window])
			cs_post(ctx, rx, post++);
	}
	eagain = fx_oob_recv_u64(ctx, 0);
	printf("cqstall_receiver all %d messages matched in send order and "
	       "verified, %.2f s after reading resumed; the sender saw "
	       "-FI_EAGAIN %llu times\n", count,
	       (double)(fx_now_us() - t0) / 1e6, (unsigned long long)eagain);
	fflush(stdout);
	fx_cq_expect_empty(ctx, ctx->rxcq, 200, "after the last message");
	free(rx->bufs);
	free(rx);
}

int main(int argc, char **argv)
{
	struct fx_setup setup = {
		.caps = FI_TAGGED,
		.cq_size = CS_CQ_SIZE,
		.tx_size = CS_TX_SIZE,
	};
	struct fx_opts opts;
	struct fx_ctx ctx;
	int count, window;

	fx_prog = "cqstall";
	fx_parse(argc, argv, "a receiver that stops reading its CQ",
		 "  -N <n>        messages (default 3000)\n"
		 "  -W <n>        receives posted at a time (default 64)\n",
		 &opts);
	count = opts.count ? opts.count : CS_COUNT;
	window = opts.window ? opts.window : CS_WINDOW;
	FX_CHECK(window <= CS_WINDOW * 64, "-W at most %d", CS_WINDOW * 64);
	if (opts.auto_progress)
		setup.threading = FI_THREAD_SAFE;
	fx_init(&ctx, &opts, &setup);
	if (ctx.server)
		cs_receiver(&ctx, count, window);
	else
		cs_sender(&ctx, count);
	fx_fini(&ctx);
	fx_info("PASS");
	return 0;
}
