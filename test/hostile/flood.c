/*
 * flood.c - a receiver flooded while it posts nothing (docs/robustness.md,
 * item 3). One receiver (server) and two senders (clients) on the public
 * fi_* API (fabtests-ext/common.c):
 *
 *   flood -n 2 -B 0 [-N eager]                                receiver
 *   FLOOD_ROLE=flood     flood -P <port> [-N ..] 127.0.0.1
 *   FLOOD_ROLE=bystander flood -P <port> 127.0.0.1
 *
 * The flood sender posts -N eager messages (default 1,000,000 x 64 B) and
 * $FLOOD_RDZV rendezvous messages (default 10,000 x 32 KiB) spread evenly among
 * them, retrying on -FI_EAGAIN. The bystander sends 200 x 64 B at the
 * same time. The receiver progresses for $FLOOD_SLEEP seconds (default
 * 10) without posting a receive, so everything is unexpected: the
 * overflow pool fills and flow control must hold the senders. Then it
 * posts the bystander's 200 receives and a window of wildcard receives
 * for the flood, and checks:
 *   - every flood message arrives, matched in send order (the n-th
 *     receive posted gets message n: the tag says n, and an eager
 *     payload starts with n; rendezvous payloads, all one pattern,
 *     verified whole);
 *   - every bystander message arrives, and the last of them before the
 *     flood's last (it is not stuck behind the flood);
 *   - peak RSS growth (VmHWM now minus VmHWM before the flood) stays
 *     within $FLOOD_RSS_BOUND_MB (default: the overflow pool of both
 *     portals plus 64 MiB).
 * It prints the numbers ("flood_*" lines). Flow control episodes show in
 * the receiver's log at FI_LOG_LEVEL=info ("flow control: holding peer").
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FL_EAGER_COUNT	1000000
#define FL_RDZV_COUNT	10000
#define FL_EAGER_SIZE	64
#define FL_RDZV_SIZE	(32 * 1024)
#define FL_BY_COUNT	200
#define FL_WINDOW	256		/* flood receives posted at once */
#define FL_RDZV_SEED	0xfeedull	/* every rendezvous payload */
#define FL_TAG_FLOOD	(1ull << 61)
#define FL_TAG_BY	(1ull << 62)
#define FL_SEQ_MASK	((1ull << 40) - 1)

enum fl_role { FL_FLOOD = 1, FL_BYSTANDER = 2 };

static bool fl_is_rdzv(uint64_t seq, uint64_t total, uint64_t nrdzv)
{
	/* nrdzv of total, evenly spread: seq k * (total / nrdzv) */
	return nrdzv && seq % (total / nrdzv) == 0 &&
	       seq / (total / nrdzv) < nrdzv;
}

static uint64_t fl_hwm_kib(void)
{
	char line[256];
	unsigned long long kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	FX_CHECK(f, "cannot read /proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void fl_fill(uint8_t *buf, size_t len, uint64_t seq)
{
	memcpy(buf, &seq, sizeof(seq));
	if (len > sizeof(seq))
		fx_fill(buf + sizeof(seq), len - sizeof(seq), seq);
}

static void fl_check(const uint8_t *buf, size_t len, uint64_t seq)
{
	uint64_t got;

	memcpy(&got, buf, sizeof(got));
	FX_CHECK(got == seq, "message %llu carries sequence %llu: out of "
		 "order or corrupted", (unsigned long long)seq,
		 (unsigned long long)got);
	if (len > sizeof(seq))
		fx_check(buf + sizeof(seq), len - sizeof(seq), seq, "payload");
}

/* Reads what completed on cq: successes counted, errors fail the run. */
static size_t fl_reap(struct fx_ctx *ctx, struct fid_cq *cq,
		      struct fi_cq_tagged_entry *e, size_t max)
{
	struct fi_cq_err_entry ee = { 0 };
	ssize_t ret = fi_cq_read(cq, e, max);

	(void)ctx;
	if (ret == -FI_EAGAIN)
		return 0;
	if (ret == -FI_EAVAIL) {
		(void)fi_cq_readerr(cq, &ee, 0);
		FX_FAIL("completion error %d (%s)", ee.err, fi_strerror(ee.err));
	}
	FX_CHECK(ret > 0, "fi_cq_read: %zd (%s)", ret, fi_strerror((int)-ret));
	return (size_t)ret;
}

static void fl_flood(struct fx_ctx *ctx, uint64_t neager, uint64_t nrdzv)
{
	uint64_t total = neager + nrdzv, seq, eagain = 0, done = 0, t0;
	struct fi_cq_tagged_entry e[64];
	struct fi_context c;
	uint8_t *small = fx_alloc(FL_EAGER_SIZE);
	uint8_t *big = fx_alloc(FL_RDZV_SIZE);
	uint8_t *buf;
	size_t len;
	ssize_t ret;

	/*
	 * Every rendezvous send reads the same buffer (never written while
	 * they are pending), so the sender is limited by the provider
	 * (-FI_EAGAIN), not by buffers of its own; eager payloads are
	 * copied at post, so one buffer serves them all.
	 */
	fx_fill(big, FL_RDZV_SIZE, FL_RDZV_SEED);
	t0 = fx_now_us();
	for (seq = 0; seq < total; seq++) {
		if (fl_is_rdzv(seq, total, nrdzv)) {
			buf = big;
			len = FL_RDZV_SIZE;
		} else {
			buf = small;
			len = FL_EAGER_SIZE;
			fl_fill(buf, len, seq);
		}
		while ((ret = fi_tsend(ctx->ep, buf, len, NULL, ctx->peer[0],
				       FL_TAG_FLOOD | seq, &c)) == -FI_EAGAIN) {
			eagain++;
			done += fl_reap(ctx, ctx->txcq, e, 64);
		}
		FX_CHECK(ret == 0, "fi_tsend %llu: %zd (%s)",
			 (unsigned long long)seq, ret, fi_strerror((int)-ret));
	}
	while (done < total)
		done += fl_reap(ctx, ctx->txcq, e, 64);
	printf("flood_sender %llu sends (%llu rendezvous) completed in %.1f s, "
	       "%llu -FI_EAGAIN retries\n", (unsigned long long)total,
	       (unsigned long long)nrdzv, (fx_now_us() - t0) / 1e6,
	       (unsigned long long)eagain);
	free(small);
	free(big);
}

static void fl_bystander(struct fx_ctx *ctx)
{
	struct fi_cq_tagged_entry e[64];
	uint8_t *buf = fx_alloc(FL_EAGER_SIZE);
	uint64_t i, done = 0, t0 = fx_now_us();
	struct fi_context c;

	for (i = 0; i < FL_BY_COUNT; i++) {
		fl_fill(buf, FL_EAGER_SIZE, i);
		FX_RETRY(ctx, "bystander send", fi_tsend(ctx->ep, buf,
			 FL_EAGER_SIZE, NULL, ctx->peer[0], FL_TAG_BY | i, &c));
	}
	while (done < FL_BY_COUNT)
		done += fl_reap(ctx, ctx->txcq, e, 64);
	printf("flood_bystander %d sends completed in %.1f s\n", FL_BY_COUNT,
	       (fx_now_us() - t0) / 1e6);
	free(buf);
}

static void fl_receiver(struct fx_ctx *ctx, uint64_t neager, uint64_t nrdzv)
{
	const char *sleep_env = getenv("FLOOD_SLEEP");
	const char *bound_env = getenv("FLOOD_RSS_BOUND_MB");
	uint64_t sleep_us = (sleep_env ? strtoull(sleep_env, NULL, 10) : 10) *
			    1000000;
	uint64_t total = neager + nrdzv, posted = 0, next = 0, by_got = 0;
	uint64_t t0, t_by = 0, t_flood = 0, hwm0, hwm1, bound_kib;
	struct fi_context fctx[FL_WINDOW], bctx[FL_BY_COUNT];
	uint64_t want[FL_WINDOW];	/* the message each slot must get */
	struct fi_cq_tagged_entry e[64];
	uint8_t *fbuf = fx_alloc((size_t)FL_WINDOW * FL_RDZV_SIZE);
	uint8_t *bbuf = fx_alloc((size_t)FL_BY_COUNT * FL_EAGER_SIZE);
	size_t pool, slot, n, i;
	uint8_t *buf;
	int p;

	memset(fbuf, 0, (size_t)FL_WINDOW * FL_RDZV_SIZE);	/* in HWM */
	pool = 2 * (size_t)(getenv("FI_PORTALS_OFLOW_BUF_COUNT") ?
			    atol(getenv("FI_PORTALS_OFLOW_BUF_COUNT")) : 16) *
	       (size_t)(getenv("FI_PORTALS_OFLOW_BUF_SIZE") ?
			atol(getenv("FI_PORTALS_OFLOW_BUF_SIZE")) : 256 << 10);
	bound_kib = bound_env ? strtoull(bound_env, NULL, 10) * 1024 :
		    pool / 1024 + 64 * 1024;
	hwm0 = fl_hwm_kib();
	for (p = 0; p < 2; p++)
		fx_oob_send_u64(ctx, p, 1);	/* go */

	/* everything that comes now is unexpected */
	t0 = fx_now_us();
	while (fx_now_us() - t0 < sleep_us) {
		fx_progress(ctx);
		FX_CHECK(fl_reap(ctx, ctx->rxcq, e, 64) == 0,
			 "a completion with nothing posted");
	}
	t0 = fx_now_us();
	for (i = 0; i < FL_BY_COUNT; i++)
		FX_RETRY(ctx, "bystander receive", fi_trecv(ctx->ep,
			 bbuf + i * FL_EAGER_SIZE, FL_EAGER_SIZE, NULL,
			 FI_ADDR_UNSPEC, FL_TAG_BY | i, 0, &bctx[i]));
	for (; posted < FL_WINDOW && posted < total; posted++) {
		want[posted] = posted;
		FX_RETRY(ctx, "flood receive", fi_trecv(ctx->ep,
			 fbuf + posted * FL_RDZV_SIZE, FL_RDZV_SIZE, NULL,
			 FI_ADDR_UNSPEC, FL_TAG_FLOOD, FL_SEQ_MASK,
			 &fctx[posted]));
	}
	while (next < total || by_got < FL_BY_COUNT) {
		n = fl_reap(ctx, ctx->rxcq, e, 64);
		FX_CHECK(n || fx_now_us() - t0 < 600000000ull,
			 "stalled: %llu of %llu flood, %llu of %d bystander",
			 (unsigned long long)next, (unsigned long long)total,
			 (unsigned long long)by_got, FL_BY_COUNT);
		for (i = 0; i < n; i++) {
			if (e[i].tag & FL_TAG_BY) {
				slot = (struct fi_context *)e[i].op_context -
				       bctx;
				FX_CHECK(slot < FL_BY_COUNT &&
					 e[i].tag == (FL_TAG_BY | slot),
					 "bystander tag 0x%llx",
					 (unsigned long long)e[i].tag);
				fl_check(bbuf + slot * FL_EAGER_SIZE,
					 FL_EAGER_SIZE, slot);
				if (++by_got == FL_BY_COUNT)
					t_by = fx_now_us() - t0;
				continue;
			}
			/*
			 * Matching follows send order: the n-th receive
			 * posted gets message n. Completions need not come
			 * in that order (a rendezvous one waits for its
			 * data; eager ones behind it do not).
			 */
			slot = (size_t)((struct fi_context *)e[i].op_context -
					fctx);
			FX_CHECK(slot < FL_WINDOW, "unknown receive context");
			FX_CHECK((e[i].tag & FL_SEQ_MASK) == want[slot],
				 "receive %llu got message %llu: out of order",
				 (unsigned long long)want[slot],
				 (unsigned long long)(e[i].tag & FL_SEQ_MASK));
			buf = fbuf + slot * FL_RDZV_SIZE;
			FX_CHECK(e[i].len == (fl_is_rdzv(want[slot], total,
							 nrdzv) ?
					      FL_RDZV_SIZE : FL_EAGER_SIZE),
				 "message %llu: length %zu",
				 (unsigned long long)want[slot], e[i].len);
			if (e[i].len == FL_RDZV_SIZE)
				fx_check(buf, FL_RDZV_SIZE, FL_RDZV_SEED,
					 "rendezvous payload");
			else
				fl_check(buf, e[i].len, want[slot]);
			if (++next == total)
				t_flood = fx_now_us() - t0;
			if (posted < total) {
				want[slot] = posted;
				FX_RETRY(ctx, "flood receive", fi_trecv(ctx->ep,
					 buf, FL_RDZV_SIZE, NULL,
					 FI_ADDR_UNSPEC, FL_TAG_FLOOD,
					 FL_SEQ_MASK, &fctx[slot]));
				posted++;
			}
		}
	}
	hwm1 = fl_hwm_kib();
	printf("flood_receiver %llu messages in order (%llu rendezvous), "
	       "drained in %.2f s after a %.0f s sleep; bystander's %d in "
	       "%.3f s\n", (unsigned long long)total,
	       (unsigned long long)nrdzv, t_flood / 1e6, sleep_us / 1e6,
	       FL_BY_COUNT, t_by / 1e6);
	printf("flood_rss VmHWM %llu KiB before, %llu KiB peak: +%llu KiB "
	       "(bound %llu KiB; overflow pool %zu KiB)\n",
	       (unsigned long long)hwm0, (unsigned long long)hwm1,
	       (unsigned long long)(hwm1 - hwm0),
	       (unsigned long long)bound_kib, pool / 1024);
	FX_CHECK(t_by <= t_flood, "the bystander finished after the flood: "
		 "stalled behind it");
	FX_CHECK(hwm1 - hwm0 <= bound_kib, "peak RSS grew by %llu KiB, more "
		 "than %llu KiB", (unsigned long long)(hwm1 - hwm0),
		 (unsigned long long)bound_kib);
	free(fbuf);
	free(bbuf);
}

int main(int argc, char **argv)
{
	struct fx_opts opts;
	struct fx_setup setup = { .caps = FI_TAGGED, .cq_size = 8192 };
	struct fx_ctx ctx;
	const char *role = getenv("FLOOD_ROLE");
	uint64_t neager, nrdzv;
	int p, flood = -1;

	fx_parse(argc, argv, "a receiver flooded while it posts nothing",
		 "  -N <n>        eager messages (default 1000000); "
		 "$FLOOD_RDZV rendezvous ones (default 10000)\n", &opts);
	neager = opts.count ? (uint64_t)opts.count : FL_EAGER_COUNT;
	/* not -W: fx_parse caps it far below 10,000 */
	nrdzv = getenv("FLOOD_RDZV") ? strtoull(getenv("FLOOD_RDZV"), NULL, 10) :
		FL_RDZV_COUNT;
	FX_CHECK(nrdzv <= neager, "more rendezvous than eager messages");
	fx_init(&ctx, &opts, &setup);
	if (ctx.server) {
		for (p = 0; p < 2; p++)
			if (fx_oob_recv_u64(&ctx, p) == FL_FLOOD)
				flood = p;
		FX_CHECK(flood >= 0, "no flood sender");
		fl_receiver(&ctx, neager, nrdzv);
	} else {
		fx_oob_send_u64(&ctx, 0, role && !strcmp(role, "bystander") ?
				FL_BYSTANDER : FL_FLOOD);
		(void)fx_oob_recv_u64(&ctx, 0);	/* go */
		if (role && !strcmp(role, "bystander"))
			fl_bystander(&ctx);
		else
			fl_flood(&ctx, neager, nrdzv);
	}
	fx_fini(&ctx);
	return 0;
}
