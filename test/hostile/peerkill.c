/*
 * peerkill.c - a peer killed with SIGKILL while transfers to it are in
 * flight (docs/robustness.md, rows 2 and 11). One server ("survivor") and
 * two clients on the public fi_* API (fabtests-ext/common.c; what the
 * two peer-kill programs share: peerkill_lib.c):
 *
 *   peerkill -n 2 -B 0                          survivor
 *   PEERKILL_ROLE=doomed  peerkill -P <port> 127.0.0.1
 *   PEERKILL_ROLE=healthy peerkill -P <port> 127.0.0.1
 *
 * The doomed client posts receives for an 8 MiB stream only: it keeps
 * PK_RX_WIN of them posted (tags PK_TAG_STREAM | n), verifies each
 * message and posts the next. The survivor, on a second endpoint of
 * its own, keeps PK_TX_WIN stream messages in flight to it, and sends it
 * -N eager messages (default 2000 x 16000 B: more than its overflow pool
 * holds, so the tail is held by flow control) and 8 rendezvous messages
 * (256 KiB, never matched), and 8 fi_read and 8 fi_write of 4 MiB into a
 * window the doomed peer registered: the stream first, the rest once
 * PK_STREAM_BEFORE stream messages were delivered (PK_TX_WIN more are in
 * flight then). It posts one stream message more, writes
 * $PEERKILL_READY and makes no provider call until peerkill.sh has
 * killed the doomed client with SIGKILL (and reaped it) and written the
 * time it did into $PEERKILL_KILLED (netcut.sh cuts its link instead):
 * the last message's data can move only by the survivor's progress (a
 * grant, or data sent from it), so its transfer is cut every time; the
 * others are cut or not, as the doomed peer got on with them. The
 * survivor keeps ping-ponging verified data with the healthy client
 * before and after, and checks:
 *   - every operation towards the doomed peer completes, the rendezvous
 *     ones with an error entry (nothing could have matched them), within
 *     $PEERKILL_BOUND_MS (default 35000: FI_PORTALS_PEER_TIMEOUT's
 *     default 30 s plus slack) of the kill; it prints the time taken;
 *   - the stream was in flight at the kill: some message posted before
 *     it failed (its transfer was cut; peerkill.sh asks for this with
 *     PEERKILL_STREAM_CUT=1), and none posted after it succeeded; the
 *     doomed client verifies every message it receives;
 *   - a send posted to the dead peer after the kill also fails (or is
 *     refused at once) instead of hanging;
 *   - the healthy client's rounds all verify, before and after;
 *   - with $PEERKILL_REBORN set: once peerkill.sh has started a new
 *     process on the killed one's port (PEERKILL_ROLE=reborn, it touches
 *     that file), the address is removed from the AV and inserted again,
 *     and an eager and a rendezvous send to it complete and verify;
 *   - fi_close of both endpoints returns (the process exits).
 */
#include "peerkill_lib.h"

#include <rdma/fi_rma.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PK_EAGER_COUNT	2000
#define PK_RDZV_SIZE	(256 * 1024)
#define PK_RDZV_COUNT	8
#define PK_RMA_SIZE	(4 * 1024 * 1024)
#define PK_RMA_COUNT	8		/* reads and as many writes */
#define PK_RMA_KEY	0x600dull
#define PK_TX_WIN	2		/* stream messages in flight */
#define PK_TX_SLOTS	(PK_TX_WIN + 1)	/* + the one posted at the freeze */
#define PK_RX_WIN	4		/* stream receives the doomed posts */
#define PK_STREAM_BEFORE 1		/* delivered before the rest */

/* What the survivor sent the doomed peer, and how it ended. */
struct pk_state {
	struct pk_srv *srv;
	struct fid_ep *ep2;
	struct fid_cq *cq2;
	struct fi_context rdzv_ctx[PK_RDZV_COUNT];
	struct fi_context rma_ctx[2 * PK_RMA_COUNT];
	size_t posted, ok, err, rdzv_err, rma_ok, rma_err;
	/* the stream: a slot per message in flight */
	uint8_t *sbuf[PK_TX_SLOTS];
	struct fi_context sctx[PK_TX_SLOTS];
	uint64_t sseq[PK_TX_SLOTS], spost[PK_TX_SLOTS];
	uint64_t snext;
	size_t s_ok, s_ok_before_kill, s_cut, s_after_err;
	size_t s_after_ok;		/* posted after the kill: must be 0 */
	bool stream_on;			/* reposting (until the kill) */
};

static bool pk_in(const void *p, const struct fi_context *a, size_t n)
{
	return p >= (const void *)a && p < (const void *)(a + n);
}

static void pk_stream_post(struct pk_state *st, int slot)
{
	uint64_t seq = st->snext++;

	fx_fill(st->sbuf[slot], PK_STREAM_SIZE, PK_STREAM_SEED + seq);
	st->sseq[slot] = seq;
	st->spost[slot] = pk_wall_us();
	FX_RETRY(st->srv->ctx, "stream send", fi_tsend(st->ep2,
		 st->sbuf[slot], PK_STREAM_SIZE, NULL, st->srv->doomed,
		 PK_TAG_STREAM | seq, &st->sctx[slot]));
	st->posted++;
}

/* A stream message ended: sorted by when it was posted against the kill. */
static void pk_stream_done(struct pk_state *st, void *op_context, bool ok)
{
	int slot = (int)((struct fi_context *)op_context - st->sctx);
	uint64_t t_kill = pk_kill_time(st->srv), t0 = fx_now_us();
	bool before;

	/* a failure means the kill, whose time is written just after it */
	while (!ok && !t_kill) {
		FX_CHECK(fx_now_us() - t0 < 5000000, "stream message %llu "
			 "failed, and nobody killed the peer",
			 (unsigned long long)st->sseq[slot]);
		usleep(1000);
		t_kill = pk_kill_time(st->srv);
	}
	before = !t_kill || st->spost[slot] < t_kill;
	if (ok) {
		st->s_ok++;
		st->s_ok_before_kill += before;
		st->s_after_ok += !before;
	} else {
		/* posted before the kill: its transfer was cut */
		st->s_cut += before;
		st->s_after_err += !before;
		st->stream_on = false;
	}
	if (st->stream_on && !t_kill)
		pk_stream_post(st, slot);
}

/* Drains cq2 without blocking; counts successes and errors. */
static void pk_drain(struct pk_state *st)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	ssize_t ret;

	for (;;) {
		ret = fi_cq_read(st->cq2, &e, 1);
		if (ret == 1) {
			FX_CHECK(!pk_in(e.op_context, st->rdzv_ctx,
					PK_RDZV_COUNT),
				 "a rendezvous send to the doomed peer "
				 "succeeded: nothing received it");
			st->rma_ok += pk_in(e.op_context, st->rma_ctx,
					    2 * PK_RMA_COUNT);
			if (pk_in(e.op_context, st->sctx, PK_TX_SLOTS))
				pk_stream_done(st, e.op_context, true);
			st->ok++;
			continue;
		}
		if (ret == -FI_EAVAIL) {
			memset(&ee, 0, sizeof(ee));
			FX_CHECK(fi_cq_readerr(st->cq2, &ee, 0) == 1,
				 "readerr");
			FX_CHECK(ee.err > 0, "error entry with error %d",
				 ee.err);
			st->err++;
			st->rma_err += pk_in(ee.op_context, st->rma_ctx,
					     2 * PK_RMA_COUNT);
			st->rdzv_err += pk_in(ee.op_context, st->rdzv_ctx,
					      PK_RDZV_COUNT);
			if (pk_in(ee.op_context, st->sctx, PK_TX_SLOTS))
				pk_stream_done(st, ee.op_context, false);
			continue;
		}
		FX_CHECK(ret == -FI_EAGAIN, "fi_cq_read: %zd (%s)", ret,
			 fi_strerror((int)-ret));
		return;
	}
}

/* Waits for a successful completion on cq2, serving the healthy peer. */
static void pk_wait_ok(struct pk_state *st, const char *what)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee = { 0 };
	uint64_t t0 = fx_now_us();
	ssize_t ret;

	while ((ret = fi_cq_read(st->cq2, &e, 1)) == -FI_EAGAIN) {
		FX_CHECK(fx_now_us() - t0 < PK_WAIT_US, "%s: no completion",
			 what);
		pk_serve(st->srv);
	}
	if (ret == -FI_EAVAIL && fi_cq_readerr(st->cq2, &ee, 0) == 1)
		FX_FAIL("%s: error %d (%s)", what, ee.err,
			fi_strerror(ee.err));
	FX_CHECK(ret == 1, "%s: fi_cq_read %zd", what, ret);
}

/*
 * The killed peer's address comes back to life (peerkill.sh starts a new
 * process on the same port): remove it from the AV, insert it again, and
 * an eager and a rendezvous send to it must work.
 */
static void pk_reborn_check(struct pk_state *st)
{
	struct pk_srv *s = st->srv;
	struct fi_context c1, c2;
	char name[FI_NAME_MAX];
	size_t len = sizeof(name);
	fi_addr_t again;
	uint8_t *big, *small;

	FX_CALL(fi_av_lookup(s->ctx->av, s->doomed, name, &len));
	pk_write_peer_file(s, NULL);
	pk_wait_file(s, getenv("PEERKILL_REBORN"), "the restarted peer");
	FX_CALL(fi_av_remove(s->ctx->av, &s->doomed, 1, 0));
	FX_CHECK(fi_av_insert(s->ctx->av, name, 1, &again, 0, NULL) == 1,
		 "fi_av_insert of the restarted peer");
	big = fx_alloc(PK_RDZV_SIZE);
	small = fx_alloc(PK_EAGER_SIZE);
	fx_fill(big, PK_RDZV_SIZE, 3);
	fx_fill(small, PK_EAGER_SIZE, 4);
	FX_RETRY(s->ctx, "send to the restarted peer", fi_tsend(st->ep2, big,
		 PK_RDZV_SIZE, NULL, again, PK_TAG_DOOMED | 3, &c1));
	FX_RETRY(s->ctx, "send to the restarted peer", fi_tsend(st->ep2,
		 small, PK_EAGER_SIZE, NULL, again, PK_TAG_DOOMED | 4, &c2));
	pk_wait_ok(st, "rendezvous to reborn");
	pk_wait_ok(st, "eager to reborn");
	printf("peerkill_reborn re-inserted: eager and rendezvous sends "
	       "completed\n");
	free(big);
	free(small);
}

/*
 * The restarted peer: its own endpoint on the port the killed one had,
 * no OOB; it receives the two messages pk_reborn_check sends and
 * verifies them.
 */
static int pk_reborn(const struct fx_opts *opts)
{
	struct pk_reborn r;
	struct fi_cq_tagged_entry e;
	struct fi_context c1, c2;
	uint8_t *big = fx_alloc(PK_RDZV_SIZE), *small = fx_alloc(PK_EAGER_SIZE);
	const char *ready = getenv("PEERKILL_REBORN");
	uint64_t t0;
	int got = 0;
	ssize_t ret;

	FX_CHECK(ready, "reborn: set PEERKILL_REBORN");
	pk_reborn_open(opts, &r);
	FX_CALL(fi_trecv(r.ep, big, PK_RDZV_SIZE, NULL, FI_ADDR_UNSPEC,
			 PK_TAG_DOOMED | 3, 0, &c1));
	FX_CALL(fi_trecv(r.ep, small, PK_EAGER_SIZE, NULL, FI_ADDR_UNSPEC,
			 PK_TAG_DOOMED | 4, 0, &c2));
	pk_touch(ready);
	t0 = fx_now_us();
	while (got < 2) {
		ret = fi_cq_read(r.cq, &e, 1);
		FX_CHECK(ret == 1 || ret == -FI_EAGAIN, "reborn: cq %zd", ret);
		got += ret == 1;
		FX_CHECK(fx_now_us() - t0 < PK_WAIT_US, "reborn: nothing came");
	}
	fx_check(big, PK_RDZV_SIZE, 3, "rendezvous to the restarted peer");
	fx_check(small, PK_EAGER_SIZE, 4, "eager to the restarted peer");
	printf("peerkill_reborn received and verified both\n");
	pk_reborn_close(&r);
	free(big);
	free(small);
	return 0;
}

/* Everything but the stream towards the doomed peer. */
static void pk_post_all(struct pk_state *st, int neager, uint8_t *ebuf,
			uint8_t *rbuf, uint8_t *rmabuf,
			struct fi_context *ectx)
{
	struct pk_srv *s = st->srv;
	ssize_t ret;
	int i;

	/* the rendezvous ones first: they are surely pending at the kill */
	for (i = 0; i < PK_RDZV_COUNT; i++, st->posted++)
		FX_RETRY(s->ctx, "rendezvous send", fi_tsend(st->ep2, rbuf,
			 PK_RDZV_SIZE, NULL, s->doomed, PK_TAG_DOOMED | 1,
			 &st->rdzv_ctx[i]));
	/* RMA into the doomed peer's window (key PK_RMA_KEY, offset 0) */
	for (i = 0; i < PK_RMA_COUNT; i++, st->posted += 2) {
		FX_RETRY(s->ctx, "fi_read", fi_read(st->ep2, rmabuf,
			 PK_RMA_SIZE, NULL, s->doomed, 0, PK_RMA_KEY,
			 &st->rma_ctx[2 * i]));
		FX_RETRY(s->ctx, "fi_write", fi_write(st->ep2,
			 rmabuf + PK_RMA_SIZE, PK_RMA_SIZE, NULL, s->doomed, 0,
			 PK_RMA_KEY, &st->rma_ctx[2 * i + 1]));
	}
	for (i = 0; i < neager; i++, st->posted++) {
		do {
			ret = fi_tsend(st->ep2, ebuf, PK_EAGER_SIZE, NULL,
				       s->doomed, PK_TAG_DOOMED, &ectx[i]);
			if (ret == -FI_EAGAIN)
				pk_drain(st);
		} while (ret == -FI_EAGAIN);
		FX_CHECK(ret == 0, "eager send: %zd (%s)", ret,
			 fi_strerror((int)-ret));
	}
}

/* A send to the dead peer now: refused or failed, never hanging. */
static void pk_late_send(struct pk_state *st, uint8_t *rbuf)
{
	struct fi_context late_ctx;
	uint64_t t0;
	size_t err0 = st->err, ok0 = st->ok;
	ssize_t ret;

	/* a rendezvous one: eager payloads complete once copied */
	ret = fi_tsend(st->ep2, rbuf, PK_RDZV_SIZE, NULL, st->srv->doomed,
		       PK_TAG_DOOMED, &late_ctx);
	if (ret) {
		printf("peerkill_late send refused: %zd (%s)\n", ret,
		       fi_strerror((int)-ret));
		return;
	}
	t0 = fx_now_us();
	while (st->ok + st->err == ok0 + err0) {
		pk_drain(st);
		FX_CHECK(fx_now_us() - t0 < st->srv->bound_ms * 1000,
			 "a send to the dead peer hangs");
	}
	FX_CHECK(st->err == err0 + 1, "a send to the dead peer succeeded");
	printf("peerkill_late send failed after %llu ms\n",
	       (unsigned long long)((fx_now_us() - t0) / 1000));
}

static void pk_survivor(struct fx_ctx *ctx, const struct fx_setup *setup,
			int neager)
{
	const char *want_cut = getenv("PEERKILL_STREAM_CUT");
	struct pk_srv srv;
	struct pk_state st;
	struct fi_context *ectx;
	uint64_t t_done = 0, after = 0, t0;
	uint8_t *ebuf, *rbuf, *rmabuf;
	int i;

	pk_srv_init(&srv, ctx);
	pk_srv_forget_doomed(&srv);
	memset(&st, 0, sizeof(st));
	st.srv = &srv;
	fx_ep_open(ctx, setup, &st.ep2, &st.cq2);
	ebuf = fx_alloc(PK_EAGER_SIZE);
	rbuf = fx_alloc(PK_RDZV_SIZE);
	rmabuf = fx_alloc(2 * PK_RMA_SIZE);
	for (i = 0; i < PK_TX_SLOTS; i++)
		st.sbuf[i] = fx_alloc(PK_STREAM_SIZE);
	ectx = calloc((size_t)neager, sizeof(*ectx));
	FX_CHECK(ectx, "out of memory");
	fx_fill(ebuf, PK_EAGER_SIZE, 1);
	fx_fill(rbuf, PK_RDZV_SIZE, 2);

	/* the stream first; once it flows, everything else */
	st.stream_on = true;
	for (i = 0; i < PK_TX_WIN; i++)
		pk_stream_post(&st, i);
	t0 = fx_now_us();
	while (st.s_ok < PK_STREAM_BEFORE) {
		FX_CHECK(fx_now_us() - t0 < PK_WAIT_US, "the stream stalls");
		pk_serve(&srv);
		pk_drain(&st);
	}
	pk_post_all(&st, neager, ebuf, rbuf, rmabuf, ectx);
	FX_CHECK(st.err == 0, "%zu sends failed before the kill", st.err);
	printf("peerkill_posted %zu (%d rendezvous, %d RMA of 4 MiB, %zu "
	       "stream messages of 8 MiB), %zu already complete\n",
	       st.posted, PK_RDZV_COUNT, 2 * PK_RMA_COUNT, st.snext,
	       st.ok + st.err);
	/*
	 * One more after the last progress: its data can only move by the
	 * survivor's progress (granted, or sent from it), so it is in flight
	 * at the kill whatever the doomed peer did with the others.
	 */
	pk_stream_post(&st, PK_TX_WIN);
	pk_ready(&srv);

	/* the healthy client is served all along; the dead one's ops end */
	while (st.ok + st.err < st.posted || after < PK_ROUNDS_AFTER) {
		pk_serve(&srv);
		pk_drain(&st);
		if (srv.t_kill && !t_done && st.ok + st.err == st.posted)
			t_done = pk_wall_us();
		if (t_done)
			after++;
		FX_CHECK(!srv.t_kill || st.ok + st.err == st.posted ||
			 pk_wall_us() - srv.t_kill < srv.bound_ms * 1000,
			 "%zu of %zu operations towards the killed peer still "
			 "pending %llu ms after the kill", st.posted - st.ok -
			 st.err, st.posted, (unsigned long long)srv.bound_ms);
		FX_CHECK(srv.t_kill || srv.round < 1000000, "never killed");
	}
	printf("peerkill_rma %zu ok, %zu errors\n", st.rma_ok, st.rma_err);
	printf("peerkill_stream %zu messages of 8 MiB delivered (%zu posted "
	       "before the kill), %zu in flight at the kill failed, %zu "
	       "posted after it failed\n", st.s_ok, st.s_ok_before_kill,
	       st.s_cut, st.s_after_err);
	printf("peerkill_done %zu ok, %zu errors (%zu rendezvous), last "
	       "error %llu ms after the kill or cut; %llu healthy rounds "
	       "verified\n", st.ok, st.err, st.rdzv_err,
	       (unsigned long long)((t_done - srv.t_kill) / 1000),
	       (unsigned long long)srv.round);
	FX_CHECK(st.rdzv_err == PK_RDZV_COUNT,
		 "%zu of %d rendezvous sends failed", st.rdzv_err,
		 PK_RDZV_COUNT);
	FX_CHECK(!st.s_after_ok, "%zu stream messages posted after the kill "
		 "succeeded", st.s_after_ok);
	FX_CHECK(!want_cut || strcmp(want_cut, "1") || st.s_cut,
		 "no stream message in flight at the kill failed");

	pk_late_send(&st, rbuf);
	if (getenv("PEERKILL_REBORN"))
		pk_reborn_check(&st);
	pk_srv_fini(&srv);
	FX_CALL(fi_close(&st.ep2->fid));
	FX_CALL(fi_close(&st.cq2->fid));
	free(ectx);
	free(ebuf);
	free(rbuf);
	free(rmabuf);
	for (i = 0; i < PK_TX_SLOTS; i++)
		free(st.sbuf[i]);
}

/*
 * The doomed client: a window the survivor reads and writes, then the
 * stream's receives, each verified and replaced, till SIGKILL.
 */
static void pk_doomed(struct fx_ctx *ctx)
{
	struct fi_context rctx[PK_RX_WIN];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee = { 0 };
	uint8_t *rbuf[PK_RX_WIN], *win;
	uint64_t seq[PK_RX_WIN], next = 0;
	struct fid_mr *mr;
	ssize_t ret;
	int i;

	/* the window exists before the survivor hears of us */
	win = fx_alloc(2 * PK_RMA_SIZE);
	FX_CALL(fi_mr_reg(ctx->domain, win, 2 * PK_RMA_SIZE,
			  FI_REMOTE_READ | FI_REMOTE_WRITE, 0, PK_RMA_KEY, 0,
			  &mr, NULL));
	for (i = 0; i < PK_RX_WIN; i++) {
		rbuf[i] = fx_alloc(PK_STREAM_SIZE);
		seq[i] = next++;
		FX_CALL(fi_trecv(ctx->ep, rbuf[i], PK_STREAM_SIZE, NULL,
				 FI_ADDR_UNSPEC, PK_TAG_STREAM | seq[i], 0,
				 &rctx[i]));
	}
	fx_oob_send_u64(ctx, 0, PK_DOOMED);
	printf("peerkill_doomed pid %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		ret = fi_cq_read(ctx->rxcq, &e, 1);
		if (ret == -FI_EAGAIN) {
			fx_progress(ctx);
			continue;
		}
		if (ret == -FI_EAVAIL && fi_cq_readerr(ctx->rxcq, &ee, 0) == 1)
			FX_FAIL("stream receive: error %d", ee.err);
		FX_CHECK(ret == 1, "fi_cq_read: %zd", ret);
		i = (int)((struct fi_context *)e.op_context - rctx);
		FX_CHECK(i >= 0 && i < PK_RX_WIN && e.len == PK_STREAM_SIZE,
			 "unexpected completion");
		fx_check(rbuf[i], PK_STREAM_SIZE, PK_STREAM_SEED + seq[i],
			 "stream message");
		seq[i] = next++;
		FX_CALL(fi_trecv(ctx->ep, rbuf[i], PK_STREAM_SIZE, NULL,
				 FI_ADDR_UNSPEC, PK_TAG_STREAM | seq[i], 0,
				 &rctx[i]));
	}
}

int main(int argc, char **argv)
{
	struct fx_opts opts;
	struct fx_setup setup = { .caps = FI_TAGGED | FI_RMA,
				  .cq_size = 8192 };
	struct fx_ctx ctx;
	const char *role = getenv("PEERKILL_ROLE");

	fx_parse(argc, argv, "a peer killed during transfers to it",
		 "  -N <n>        eager messages to the doomed peer "
		 "(default 2000)\n", &opts);
	if (role && !strcmp(role, "reborn"))
		return pk_reborn(&opts);
	fx_init(&ctx, &opts, &setup);
	if (ctx.server)
		pk_survivor(&ctx, &setup,
			    opts.count ? opts.count : PK_EAGER_COUNT);
	else if (role && !strcmp(role, "doomed"))
		pk_doomed(&ctx);	/* does not return */
	else
		pk_healthy(&ctx);
	fx_fini(&ctx);
	return 0;
}
