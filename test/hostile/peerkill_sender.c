/*
 * peerkill_sender.c - a peer killed with SIGKILL while it sends an 8 MiB
 * stream to the survivor (docs/robustness.md, rows 2 and 11; the case of
 * a killed receiver is test/hostile/peerkill.c, what both share
 * peerkill_lib.c). Run by test/hostile/peerkill.sh:
 *
 *   peerkill_sender -n 2 -B 0                          survivor
 *   PEERKILL_ROLE=doomed  peerkill_sender -P <port> 127.0.0.1
 *   PEERKILL_ROLE=healthy peerkill_sender -P <port> 127.0.0.1
 *
 * The survivor opens a second endpoint and gives the doomed client its
 * name. On it, it keeps PK_RX_WIN pairs of receives posted: message n of
 * the stream (8 MiB, tag PK_TAG_STREAM | n) and the eager one behind it
 * (16000 B, tag PK_TAG_DOOMED | n); each is verified and the pair
 * replaced by pair n + PK_RX_WIN. The doomed client keeps PK_TX_WIN
 * messages of 8 MiB in flight, each followed by its eager one, till it is
 * killed. Once PK_STREAM_BEFORE messages arrived and one is in flight
 * (pk_flowing: its pull asked for, or with PEERKILL_PARTIAL=1 its first
 * 64 KiB arrived), the survivor writes $PEERKILL_READY and makes no
 * provider call till peerkill.sh has killed the doomed client (and
 * reaped it) and written the time into $PEERKILL_KILLED: the kill lands
 * in the middle of that transfer every time. Over shared memory with
 * cross-memory attach the doomed peer has mostly granted the pull by
 * then (and streamed its first chunks through the ring), and the
 * survivor's process_vm_readv of the dead process fails (ESRCH) or the
 * link's failure ends the pull; through the ring and over TCP part of
 * the data is there. The
 * survivor serves the healthy client (verified rounds) before and after,
 * and checks:
 *   - a receive completes successfully only with all its data (verified);
 *   - a receive matched by a message whose data did not all arrive
 *     completes with an error entry: error set, len and olen 0, the
 *     message's tag, within $PEERKILL_BOUND_MS of the kill; it prints how
 *     much of the data had come; with PEERKILL_STREAM_CUT=1 there must be
 *     such a message, with PEERKILL_PARTIAL=1 some of its data must have
 *     come;
 *   - the survivor then stops reposting; a send to the dead address
 *     fails within the bound (after it, the failure is known);
 *   - every receive not matched stays posted: peerkill.sh restarts the
 *     doomed peer on its address (PEERKILL_ROLE=reborn), which sends
 *     exactly those tags ($PEERKILL_PORT lists them), and every one
 *     completes with the new process's data; nothing else completes;
 *   - fi_close of both endpoints returns (the process exits).
 */
#include "peerkill_lib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PK_RX_WIN	4		/* pairs the survivor keeps posted */
#define PK_TX_WIN	2		/* 8 MiB messages the doomed sends */
#define PK_STREAM_BEFORE 2		/* arrived before READY */
#define PK_EAGER_SEED	500000		/* eager message n: + n */
#define PK_LATE_SIZE	(256 * 1024)	/* above every eager size */
#define PK_REBORN_SEED	900000		/* the restarted peer's: + tag's n */

enum { PK_BIG, PK_SMALL };

static const size_t pk_size[2] = { PK_STREAM_SIZE, PK_EAGER_SIZE };
static const uint64_t pk_tag_bit[2] = { PK_TAG_STREAM, PK_TAG_DOOMED };

static uint64_t pk_seed(int kind, uint64_t n, bool reborn)
{
	return (reborn ? PK_REBORN_SEED : kind == PK_BIG ? PK_STREAM_SEED :
		PK_EAGER_SEED) + n;
}

/* One posted receive of the survivor's. */
struct pk_recv {
	uint8_t *buf;
	struct fi_context ctx;
	uint64_t n;
	bool posted;
};

struct pk_rx {
	struct pk_srv *srv;
	struct fid_ep *ep2;
	struct fid_cq *cq2;
	struct pk_recv r[PK_RX_WIN][2];
	uint64_t next;			/* pair to post next */
	bool reposting;			/* till the kill or a failure */
	bool reborn;			/* the restarted peer's data now */
	size_t ok[2], err[2], posted;
	uint64_t last_err_us;
	size_t cut_arrived;		/* bytes of cut messages that came */
	struct fi_context late_ctx;
	int late;			/* late send: 0 pending, 1 ok, -1 err */
};

static void pk_post(struct pk_rx *x, int slot, int kind, uint64_t n)
{
	struct pk_recv *r = &x->r[slot][kind];

	/* not the pattern: what arrives of a failed one is told (pk_arrived) */
	memset(r->buf, 0, pk_size[kind]);
	r->n = n;
	r->posted = true;
	FX_RETRY(x->srv->ctx, "stream receive", fi_trecv(x->ep2, r->buf,
		 pk_size[kind], NULL, FI_ADDR_UNSPEC, pk_tag_bit[kind] | n, 0,
		 &r->ctx));
	x->posted++;
}

/* Which receive a context is, or NULL. */
static struct pk_recv *pk_find(struct pk_rx *x, void *op_context, int *slot,
			       int *kind)
{
	int s, k;

	for (s = 0; s < PK_RX_WIN; s++)
		for (k = 0; k < 2; k++)
			if (op_context == &x->r[s][k].ctx) {
				*slot = s;
				*kind = k;
				return &x->r[s][k];
			}
	return NULL;
}

static void pk_done_ok(struct pk_rx *x, const struct fi_cq_tagged_entry *e)
{
	struct pk_recv *r;
	int slot, kind;

	if (e->op_context == &x->late_ctx) {
		x->late = 1;
		return;
	}
	r = pk_find(x, e->op_context, &slot, &kind);
	FX_CHECK(r && r->posted, "a completion for no posted receive");
	FX_CHECK(e->len == pk_size[kind] && e->tag == (pk_tag_bit[kind] | r->n),
		 "receive %llu: len %zu tag 0x%llx", (unsigned long long)r->n,
		 e->len, (unsigned long long)e->tag);
	/* success means every byte arrived */
	fx_check(r->buf, pk_size[kind], pk_seed(kind, r->n, x->reborn),
		 kind == PK_BIG ? "8 MiB message" : "eager message");
	r->posted = false;
	x->ok[kind]++;
	if (x->reposting && !pk_kill_time(x->srv) &&
	    !x->r[slot][PK_BIG].posted && !x->r[slot][PK_SMALL].posted) {
		pk_post(x, slot, PK_BIG, x->next);
		pk_post(x, slot, PK_SMALL, x->next++);
	}
}

#define PK_PIECE	(64 * 1024)

/* How much of the data at [off, end) of a message is in its buffer. */
static size_t pk_arrived(const uint8_t *buf, size_t off, size_t end,
			 uint64_t seed)
{
	static uint8_t want[PK_PIECE];
	size_t at, n;

	for (at = off; at < end; at += n) {
		n = end - at < PK_PIECE ? end - at : PK_PIECE;
		fx_fill_at(want, at, n, seed);
		if (memcmp(buf + at, want, n))
			break;
	}
	return at - off;
}

static void pk_done_err(struct pk_rx *x, const struct fi_cq_err_entry *ee)
{
	struct pk_srv *s = x->srv;
	struct pk_recv *r;
	int slot, kind;
	size_t got;

	if (ee->op_context == &x->late_ctx) {
		x->late = -1;
		return;
	}
	r = pk_find(x, ee->op_context, &slot, &kind);
	FX_CHECK(r && r->posted, "an error for no posted receive");
	/* a transfer the kill cut fails before the peer is known dead */
	FX_CHECK(!x->reborn, "receive %llu failed after the death was known "
		 "(or with the restarted peer): %d (%s)",
		 (unsigned long long)r->n, ee->err, fi_strerror(ee->err));
	/* the matched message's data did not all arrive: nothing claimed */
	FX_CHECK(ee->err > 0 && ee->err != FI_ETRUNC && !ee->len && !ee->olen,
		 "receive %llu: error %d, len %zu, olen %zu",
		 (unsigned long long)r->n, ee->err, ee->len, ee->olen);
	FX_CHECK((ee->flags & (FI_RECV | FI_TAGGED)) == (FI_RECV | FI_TAGGED) &&
		 ee->tag == (pk_tag_bit[kind] | r->n),
		 "receive %llu: error entry flags 0x%llx tag 0x%llx",
		 (unsigned long long)r->n, (unsigned long long)ee->flags,
		 (unsigned long long)ee->tag);
	r->posted = false;
	x->err[kind]++;
	x->reposting = false;
	x->last_err_us = pk_wall_us();
	/* only a dead peer fails a receive; its time is written just after */
	while (!pk_kill_time(s)) {
		FX_CHECK(pk_wall_us() - x->last_err_us < 5000000, "receive "
			 "%llu failed, and nobody killed the peer",
			 (unsigned long long)r->n);
		usleep(1000);
	}
	got = pk_arrived(r->buf, 0, pk_size[kind], pk_seed(kind, r->n, false));
	x->cut_arrived += got;
	printf("peerkill_recv_error %s message %llu: %s, %llu ms after "
	       "the kill (%zu KiB of its data had arrived)\n",
	       kind == PK_BIG ? "8 MiB" : "eager", (unsigned long long)r->n,
	       fi_strerror(ee->err),
	       (unsigned long long)((x->last_err_us - s->t_kill) / 1000),
	       got / 1024);
}

/* Drains cq2 without blocking. */
static void pk_drain(struct pk_rx *x)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	ssize_t ret;

	for (;;) {
		ret = fi_cq_read(x->cq2, &e, 1);
		if (ret == 1) {
			pk_done_ok(x, &e);
			continue;
		}
		if (ret == -FI_EAVAIL) {
			memset(&ee, 0, sizeof(ee));
			FX_CHECK(fi_cq_readerr(x->cq2, &ee, 0) == 1, "readerr");
			pk_done_err(x, &ee);
			continue;
		}
		FX_CHECK(ret == -FI_EAGAIN, "fi_cq_read: %zd (%s)", ret,
			 fi_strerror((int)-ret));
		return;
	}
}

/* Serves the healthy client and drains until done() or the time is up. */
static void pk_until(struct pk_rx *x, bool (*done)(struct pk_rx *),
		     uint64_t limit_us, const char *what)
{
	uint64_t t0 = fx_now_us();

	while (!done(x)) {
		FX_CHECK(fx_now_us() - t0 < limit_us, "%s", what);
		pk_serve(x->srv);
		pk_drain(x);
	}
}

/* Whether the piece of message data at off is in buf. */
static bool pk_piece_in(const uint8_t *buf, size_t off, uint64_t seed)
{
	return pk_arrived(buf, off, off + PK_PIECE, seed) == PK_PIECE;
}

/*
 * The stream flows and an 8 MiB message is in flight, as of this progress
 * (pk_drain read the CQ empty). With PEERKILL_PARTIAL=1 (data that comes
 * in pieces, in order: the ring, TCP) its first 64 KiB are in its buffer
 * and those at 4 MiB not yet: more than the ring, or the socket buffers
 * peerkill.sh allows, is still to come, and the kill cuts it. Else its
 * eager follower arrived (the pair is reposted only once both are in),
 * so its header was matched and its pull asked for before: with
 * cross-memory attach the data can then only be read from the doomed
 * peer's memory once it is granted, which this survivor does after the
 * kill if at all.
 */
static bool pk_flowing(struct pk_rx *x)
{
	const char *partial = getenv("PEERKILL_PARTIAL");
	struct pk_recv *r;
	uint64_t seed;
	int s;

	if (x->ok[PK_BIG] < PK_STREAM_BEFORE)
		return false;
	for (s = 0; s < PK_RX_WIN; s++) {
		r = &x->r[s][PK_BIG];
		if (!r->posted)
			continue;
		seed = pk_seed(PK_BIG, r->n, false);
		if (partial && !strcmp(partial, "1") ?
		    pk_piece_in(r->buf, 0, seed) &&
		    !pk_piece_in(r->buf, PK_STREAM_SIZE / 2, seed) :
		    !x->r[s][PK_SMALL].posted)
			return true;
	}
	return false;
}

/* What of the 8 MiB messages in flight is in at the ready mark. */
static void pk_print_inflight(struct pk_rx *x)
{
	struct pk_recv *r;
	int s;

	for (s = 0; s < PK_RX_WIN; s++) {
		r = &x->r[s][PK_BIG];
		if (r->posted)
			printf("peerkill_inflight 8 MiB message %llu: %zu KiB "
			       "in at the mark\n", (unsigned long long)r->n,
			       pk_arrived(r->buf, 0, PK_STREAM_SIZE,
					  pk_seed(PK_BIG, r->n, false)) / 1024);
	}
}

static bool pk_known_kill(struct pk_rx *x)
{
	return pk_kill_time(x->srv);
}

static bool pk_late_done(struct pk_rx *x)
{
	return x->late;
}

static size_t pk_pending(struct pk_rx *x)
{
	return x->posted - x->ok[PK_BIG] - x->ok[PK_SMALL] - x->err[PK_BIG] -
	       x->err[PK_SMALL];
}

static bool pk_all_done(struct pk_rx *x)
{
	return !pk_pending(x);
}

/*
 * After the kill: a send to the dead address must fail; once it has, the
 * survivor knows the peer is dead and every transfer it had cut has
 * failed (a few more rounds let the last entries in).
 */
static void pk_after_kill(struct pk_rx *x, uint8_t *buf)
{
	struct pk_srv *s = x->srv;
	uint64_t t0;
	ssize_t ret;
	int i;

	pk_until(x, pk_known_kill, PK_WAIT_US, "never killed");
	x->reposting = false;
	/* a rendezvous one: eager payloads complete once copied */
	ret = fi_tsend(x->ep2, buf, PK_LATE_SIZE, NULL, s->doomed,
		       PK_TAG_HEALTHY, &x->late_ctx);
	if (ret) {
		printf("peerkill_late send refused: %zd (%s)\n", ret,
		       fi_strerror((int)-ret));
	} else {
		t0 = pk_wall_us();
		pk_until(x, pk_late_done, s->bound_ms * 1000,
			 "a send to the dead peer hangs");
		FX_CHECK(x->late < 0, "a send to the dead peer succeeded");
		printf("peerkill_late send failed after %llu ms\n",
		       (unsigned long long)((pk_wall_us() - t0) / 1000));
	}
	for (i = 0; i < PK_ROUNDS_AFTER; i++) {
		pk_serve(s);
		pk_drain(x);
	}
	FX_CHECK(!x->last_err_us ||
		 x->last_err_us - s->t_kill < s->bound_ms * 1000,
		 "a receive failed %llu ms after the kill",
		 (unsigned long long)((x->last_err_us - s->t_kill) / 1000));
}

/*
 * The receives still posted belong to no message: the restarted peer
 * sends exactly their tags ($PEERKILL_PORT, after the address and the
 * survivor's name), and each must complete with its data.
 */
static void pk_serve_reborn(struct pk_rx *x)
{
	char name[FI_NAME_MAX], *extra, *p;
	size_t len = sizeof(name), cap;
	int s, k;

	FX_CALL(fi_getname(&x->ep2->fid, name, &len));
	cap = 2 * len + 64 + PK_RX_WIN * 2 * 48;
	extra = malloc(cap);
	FX_CHECK(extra, "out of memory");
	pk_name_hex(name, len, extra);
	p = extra + strlen(extra);
	*p++ = '\n';
	for (s = 0; s < PK_RX_WIN; s++)
		for (k = 0; k < 2; k++)
			if (x->r[s][k].posted)
				p += sprintf(p, "%s %llu\n", k == PK_BIG ?
					     "big" : "eager",
					     (unsigned long long)x->r[s][k].n);
	x->reborn = true;
	printf("peerkill_pending %zu receives left posted\n", pk_pending(x));
	fflush(stdout);
	pk_write_peer_file(x->srv, extra);
	free(extra);
	pk_until(x, pk_all_done, PK_WAIT_US,
		 "a receive left posted was not served by the restarted peer");
	printf("peerkill_reborn filled every receive left posted\n");
}

static void pk_survivor(struct fx_ctx *ctx, const struct fx_setup *setup)
{
	const char *want_cut = getenv("PEERKILL_STREAM_CUT");
	const char *partial = getenv("PEERKILL_PARTIAL");
	char name[FI_NAME_MAX];
	size_t len = sizeof(name);
	struct pk_srv srv;
	struct pk_rx x;
	uint8_t *late_buf;
	int s, k;

	pk_srv_init(&srv, ctx);
	memset(&x, 0, sizeof(x));
	x.srv = &srv;
	fx_ep_open(ctx, setup, &x.ep2, &x.cq2);
	/* the doomed client sends to the second endpoint */
	FX_CALL(fi_getname(&x.ep2->fid, name, &len));
	fx_oob_send(ctx, 1 - srv.healthy_oob, name, len);
	pk_srv_forget_doomed(&srv);
	late_buf = fx_alloc(PK_LATE_SIZE);
	x.reposting = true;
	for (s = 0; s < PK_RX_WIN; s++) {
		for (k = 0; k < 2; k++) {
			x.r[s][k].buf = fx_alloc(pk_size[k]);
			pk_post(&x, s, k, x.next);
		}
		x.next++;
	}
	pk_until(&x, pk_flowing, PK_WAIT_US, "the stream never came");
	pk_print_inflight(&x);
	pk_ready(&srv);
	pk_after_kill(&x, late_buf);
	printf("peerkill_stream %zu messages of 8 MiB and %zu eager ones "
	       "arrived whole; %zu and %zu cut by the kill failed; %llu "
	       "healthy rounds verified\n", x.ok[PK_BIG], x.ok[PK_SMALL],
	       x.err[PK_BIG], x.err[PK_SMALL],
	       (unsigned long long)srv.round);
	if (want_cut && !strcmp(want_cut, "1")) {
		FX_CHECK(x.err[PK_BIG] + x.err[PK_SMALL],
			 "the kill cut no transfer");
		FX_CHECK(!partial || strcmp(partial, "1") || x.cut_arrived,
			 "no data of the cut transfer had arrived");
	}
	if (getenv("PEERKILL_PORT"))
		pk_serve_reborn(&x);
	pk_srv_fini(&srv);
	FX_CALL(fi_close(&x.ep2->fid));
	FX_CALL(fi_close(&x.cq2->fid));
	for (s = 0; s < PK_RX_WIN; s++)
		for (k = 0; k < 2; k++)
			free(x.r[s][k].buf);
	free(late_buf);
}

/*
 * The doomed client: the stream, PK_TX_WIN messages in flight, each with
 * its eager one behind it (a slot is free once both completed), forever.
 */
static void pk_doomed(struct fx_ctx *ctx)
{
	char name[FI_NAME_MAX];
	uint8_t *buf[PK_TX_WIN][2];
	struct fi_context c[PK_TX_WIN][2];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee = { 0 };
	int busy[PK_TX_WIN] = { 0 };
	fi_addr_t srv2;
	uint64_t n = 0;
	ssize_t ret;
	int i, k;

	fx_oob_send_u64(ctx, 0, PK_DOOMED);
	(void)fx_oob_recv(ctx, 0, name, sizeof(name));
	FX_CHECK(fi_av_insert(ctx->av, name, 1, &srv2, 0, NULL) == 1,
		 "fi_av_insert of the survivor's second endpoint");
	for (i = 0; i < PK_TX_WIN; i++)
		for (k = 0; k < 2; k++)
			buf[i][k] = fx_alloc(pk_size[k]);
	printf("peerkill_doomed pid %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		for (i = 0; i < PK_TX_WIN; i++) {
			if (busy[i])
				continue;
			for (k = 0; k < 2; k++) {
				fx_fill(buf[i][k], pk_size[k],
					pk_seed(k, n, false));
				FX_RETRY(ctx, "stream send", fi_tsend(ctx->ep,
					 buf[i][k], pk_size[k], NULL, srv2,
					 pk_tag_bit[k] | n, &c[i][k]));
			}
			busy[i] = 2;
			n++;
		}
		ret = fi_cq_read(ctx->txcq, &e, 1);
		if (ret == -FI_EAGAIN)
			continue;
		if (ret == -FI_EAVAIL && fi_cq_readerr(ctx->txcq, &ee, 0) == 1)
			FX_FAIL("stream send: error %d", ee.err);
		FX_CHECK(ret == 1, "fi_cq_read: %zd", ret);
		for (i = 0; i < PK_TX_WIN; i++)
			for (k = 0; k < 2; k++)
				busy[i] -= e.op_context == &c[i][k];
	}
}

/*
 * The restarted peer, on the killed one's address: sends the survivor
 * exactly the receives it left posted, with data of its own.
 */
static int pk_reborn_send(const struct fx_opts *opts)
{
	const char *path = getenv("PEERKILL_PORT");
	char line[2 * FI_NAME_MAX + 8], what[16];
	uint8_t name[FI_NAME_MAX], *buf[2 * PK_RX_WIN];
	struct fi_context c[2 * PK_RX_WIN];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee = { 0 };
	unsigned long long n;
	struct pk_reborn r;
	fi_addr_t srv2;
	size_t len;
	int kind, sent = 0, done = 0;
	uint64_t t0;
	ssize_t ret;
	FILE *f;

	FX_CHECK(path && (f = fopen(path, "r")), "reborn: no PEERKILL_PORT");
	FX_CHECK(fgets(line, sizeof(line), f) && fgets(line, sizeof(line), f),
		 "reborn: %s is short", path);
	len = pk_name_unhex(line, name, sizeof(name));
	pk_reborn_open(opts, &r);
	FX_CHECK(len && fi_av_insert(r.av, name, 1, &srv2, 0, NULL) == 1,
		 "reborn: fi_av_insert of the survivor");
	while (fgets(line, sizeof(line), f) && sent < 2 * PK_RX_WIN) {
		FX_CHECK(sscanf(line, "%15s %llu", what, &n) == 2,
			 "reborn: bad line %s", line);
		kind = strcmp(what, "big") ? PK_SMALL : PK_BIG;
		buf[sent] = fx_alloc(pk_size[kind]);
		fx_fill(buf[sent], pk_size[kind], pk_seed(kind, n, true));
		do {
			ret = fi_tsend(r.ep, buf[sent], pk_size[kind], NULL,
				       srv2, pk_tag_bit[kind] | n, &c[sent]);
			if (ret == -FI_EAGAIN)
				(void)fi_cq_read(r.cq, NULL, 0);
		} while (ret == -FI_EAGAIN);
		FX_CHECK(!ret, "reborn: send %zd", ret);
		sent++;
	}
	fclose(f);
	t0 = fx_now_us();
	while (done < sent) {
		ret = fi_cq_read(r.cq, &e, 1);
		if (ret == -FI_EAVAIL && fi_cq_readerr(r.cq, &ee, 0) == 1)
			FX_FAIL("reborn: send failed: %d", ee.err);
		FX_CHECK(ret == 1 || ret == -FI_EAGAIN, "reborn: cq %zd", ret);
		done += ret == 1;
		FX_CHECK(fx_now_us() - t0 < PK_WAIT_US,
			 "reborn: %d of %d sends done", done, sent);
	}
	printf("peerkill_reborn sent the %d messages left to receive\n", sent);
	pk_reborn_close(&r);
	while (sent)
		free(buf[--sent]);
	return 0;
}

int main(int argc, char **argv)
{
	struct fx_opts opts;
	struct fx_setup setup = { .caps = FI_TAGGED, .cq_size = 8192 };
	struct fx_ctx ctx;
	const char *role = getenv("PEERKILL_ROLE");

	fx_parse(argc, argv, "a peer killed while it sends", "", &opts);
	if (role && !strcmp(role, "reborn"))
		return pk_reborn_send(&opts);
	fx_init(&ctx, &opts, &setup);
	if (ctx.server)
		pk_survivor(&ctx, &setup);
	else if (role && !strcmp(role, "doomed"))
		pk_doomed(&ctx);	/* does not return */
	else
		pk_healthy(&ctx);
	fx_fini(&ctx);
	return 0;
}
