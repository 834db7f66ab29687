/*
 * fx_close.c - what a sender's fi_close and its first message to a new
 * peer promise (fi_portals.7: Progress, Resource management, ERRORS).
 * One mode per run, -M <mode>:
 *
 *   close       the client (sender) opens a fabric, domain and endpoint
 *               of its own per round, sends -N messages (default: rounds
 *               of 1 and 40) of 1000 B to the server at each completion
 *               level (default, FI_INJECT_COMPLETE, FI_TRANSMIT_COMPLETE,
 *               FI_DELIVERY_COMPLETE, fi_tinject), reads their
 *               completions, closes everything at once and stays alive,
 *               outside the provider, until the server says it got every
 *               message (each one's payload checked) or gave up (10 s).
 *   close-exit:<level>  one such round, and the client exits right after
 *               fi_close: what the kernel holds must survive the exit.
 *   first       the client sends one message to the server (a new peer),
 *               reads its completion, tells the server over OOB and
 *               sleeps 5 s without calling the provider, then says over
 *               OOB that it woke. The server must receive the message
 *               before that second OOB note.
 *   connected   the same on a link already up: a first message, then 8
 *               back to back (4 plain, then 3 with FI_MORE and one
 *               without) and, without reading their completions, away;
 *               all must arrive before the note.
 *   refused     the client sends to an address where nothing listens:
 *               the send must fail with FI_ECONNREFUSED (olen 0) within
 *               FI_PORTALS_CONNECT_RETRY_MS (2 s) + 3 s.
 *   dead        after one message has set the connection up, the server
 *               exits without closing (as if killed); the client's later
 *               sends must fail (FI_TRANSMIT_COMPLETE and a rendezvous
 *               send at least), every error entry with len and olen 0.
 *   dead-recv   the client's rendezvous message arrives unexpected and
 *               the client exits: the receive posted for it later fails
 *               with len and olen 0.
 *
 * Messages are tagged round << 32 | index, payload seeded likewise, so a
 * message lost, doubled, reordered or of another round fails the check.
 */
#include "common.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FXC_SIZE	1000
#define FXC_MAX_MSGS	64
#define FXC_GIVE_UP_MS	10000	/* the server's wait for a round */
#define FXC_BLOCK_S	5
#define FXC_REFUSED_MS	5000	/* documented 2 s window + margin */

enum fxc_level {
	FXC_DEFAULT,
	FXC_INJECT_COMPLETE,
	FXC_TRANSMIT_COMPLETE,
	FXC_DELIVERY_COMPLETE,
	FXC_INJECT,
	FXC_NLEVELS
};

static const char *const fxc_level_names[FXC_NLEVELS] = {
	"default", "inject_complete", "transmit_complete",
	"delivery_complete", "inject",
};

static const uint64_t fxc_level_flags[FXC_NLEVELS] = {
	0, FI_INJECT_COMPLETE, FI_TRANSMIT_COMPLETE, FI_DELIVERY_COMPLETE, 0,
};

/* A sender's own fabric, domain, AV, CQ, counter and endpoint. */
struct fxc_side {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_cntr *cntr;
	struct fid_ep *ep;
	fi_addr_t dest;
};

static uint64_t fxc_tag(int round, int i)
{
	return (uint64_t)round << 32 | (uint64_t)i;
}

/* ---- the sender's objects ------------------------------------------------ */

static void fxc_open(const struct fx_ctx *ctx, const void *dest_name,
		     struct fxc_side *s)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .count = 4 };
	struct fi_cq_attr cq_attr = { .size = 1024,
				      .format = FI_CQ_FORMAT_TAGGED };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };

	memset(s, 0, sizeof(*s));
	FX_CALL(fi_fabric(ctx->info->fabric_attr, &s->fabric, NULL));
	FX_CALL(fi_domain(s->fabric, ctx->info, &s->domain, NULL));
	FX_CALL(fi_av_open(s->domain, &av_attr, &s->av, NULL));
	FX_CALL(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
	FX_CALL(fi_cntr_open(s->domain, &cntr_attr, &s->cntr, NULL));
	FX_CALL(fi_endpoint(s->domain, ctx->info, &s->ep, NULL));
	FX_CALL(fi_ep_bind(s->ep, &s->av->fid, 0));
	FX_CALL(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	FX_CALL(fi_ep_bind(s->ep, &s->cntr->fid, FI_SEND));
	FX_CALL(fi_enable(s->ep));
	FX_CHECK(fi_av_insert(s->av, dest_name, 1, &s->dest, 0, NULL) == 1,
		 "fi_av_insert of the destination");
}

/* Everything closed at once; returns how long fi_close of all took. */
static uint64_t fxc_close(struct fxc_side *s)
{
	uint64_t t0 = fx_now_us();

	FX_CALL(fi_close(&s->ep->fid));
	FX_CALL(fi_close(&s->cntr->fid));
	FX_CALL(fi_close(&s->cq->fid));
	FX_CALL(fi_close(&s->av->fid));
	FX_CALL(fi_close(&s->domain->fid));
	FX_CALL(fi_close(&s->fabric->fid));
	return fx_now_us() - t0;
}

/* One completion or error entry within ms; false on timeout. */
static bool fxc_cq_read(struct fid_cq *cq, struct fx_comp *c, int ms)
{
	uint64_t t0 = fx_now_us();
	struct fi_cq_err_entry err;
	ssize_t ret;

	memset(c, 0, sizeof(*c));
	for (;;) {
		ret = fi_cq_read(cq, &c->e, 1);
		if (ret == 1)
			return true;
		if (ret == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			FX_CHECK(fi_cq_readerr(cq, &err, 0) == 1,
				 "fi_cq_readerr");
			c->e.op_context = err.op_context;
			c->e.flags = err.flags;
			c->e.len = err.len;
			c->err = err.err;
			c->olen = err.olen;
			c->prov_errno = err.prov_errno;
			return true;
		}
		FX_CHECK(ret == -FI_EAGAIN, "fi_cq_read: %zd (%s)", ret,
			 fi_strerror((int)-ret));
		if (fx_now_us() - t0 > (uint64_t)ms * 1000)
			return false;
	}
}

/* Post one send at level, retrying while the provider says -FI_EAGAIN. */
static void fxc_post(struct fxc_side *s, enum fxc_level level, void *buf,
		     size_t len, uint64_t tag, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = s->dest,
		.tag = tag, .context = context,
	};
	uint64_t t0 = fx_now_us();
	struct fi_cq_tagged_entry e;
	ssize_t ret;

	for (;;) {
		if (level == FXC_INJECT)
			ret = fi_tinject(s->ep, buf, len, s->dest, tag);
		else if (level == FXC_DEFAULT)
			ret = fi_tsend(s->ep, buf, len, NULL, s->dest, tag,
				       context);
		else
			ret = fi_tsendmsg(s->ep, &msg, FI_COMPLETION |
					  fxc_level_flags[level]);
		if (ret != -FI_EAGAIN)
			break;
		FX_CHECK(fx_now_us() - t0 < FX_WAIT_MS * 1000ULL,
			 "send: -FI_EAGAIN for %d ms", FX_WAIT_MS);
		(void)fi_cq_read(s->cq, &e, 0);	/* progress only */
	}
	FX_CHECK(!ret, "send at level %s: %zd (%s)", fxc_level_names[level],
		 ret, fi_strerror((int)-ret));
}

/* ---- close: the client's rounds ------------------------------------------ */

static void fxc_send_round(struct fx_ctx *ctx, const void *server_name,
			   int round, enum fxc_level level, int n, bool exit_after)
{
	struct fi_context tctx[FXC_MAX_MSGS];
	uint8_t seen[FXC_MAX_MSGS] = { 0 };
	static uint8_t bufs[FXC_MAX_MSGS][FXC_SIZE];
	struct fxc_side s;
	struct fx_comp c;
	uint64_t close_us;
	int i;

	fxc_open(ctx, server_name, &s);
	for (i = 0; i < n; i++) {
		fx_fill(bufs[i], FXC_SIZE, fxc_tag(round, i));
		fxc_post(&s, level, bufs[i], FXC_SIZE, fxc_tag(round, i),
			 &tctx[i]);
	}
	if (level == FXC_INJECT) {
		uint64_t t0 = fx_now_us();

		while (fi_cntr_read(s.cntr) < (uint64_t)n) {
			(void)fi_cq_read(s.cq, &c.e, 0);
			FX_CHECK(fx_now_us() - t0 < FX_WAIT_MS * 1000ULL,
				 "injects not counted");
		}
	} else {
		for (i = 0; i < n; i++) {
			FX_CHECK(fxc_cq_read(s.cq, &c, FX_WAIT_MS),
				 "round %d: send completion %d missing", round,
				 i);
			FX_CHECK(!c.err, "round %d (%s): send error %d (%s)",
				 round, fxc_level_names[level], c.err,
				 fi_strerror(c.err));
			fx_slot_of(&c, tctx, n, seen, "send");
		}
	}
	/* the buffers are the application's again: what the provider
	 * sends after this point must be the copy it made */
	memset(bufs, 0xee, sizeof(bufs));
	close_us = fxc_close(&s);
	fx_info("round %d: %d x %d B at level %s completed, fi_close took "
		"%.1f ms", round, n, FXC_SIZE, fxc_level_names[level],
		(double)close_us / 1000);
	fx_oob_send_u64(ctx, 0, (uint64_t)round);
	if (exit_after)
		return;
	/* alive, outside the provider, until the server has them all */
	FX_CHECK(fx_oob_recv_u64(ctx, 0) == (uint64_t)round,
		 "the server did not get round %d", round);
}

/* The server's side of a round: n messages, each checked, within 10 s. */
static void fxc_recv_round(struct fx_ctx *ctx, int round, int n)
{
	static uint8_t bufs[FXC_MAX_MSGS][FXC_SIZE];
	struct fi_context rctx[FXC_MAX_MSGS];
	uint8_t seen[FXC_MAX_MSGS] = { 0 };
	struct fx_comp c;
	uint64_t t0;
	int i, slot;

	memset(bufs, 0, sizeof(bufs));
	for (i = 0; i < n; i++)
		FX_CALL(fi_trecv(ctx->ep, bufs[i], FXC_SIZE, NULL,
				 FI_ADDR_UNSPEC, fxc_tag(round, i), 0,
				 &rctx[i]));
	fx_oob_send_u64(ctx, 0, (uint64_t)round);	/* posted: go */
	t0 = fx_now_us();
	for (i = 0; i < n; i++) {
		int left = FXC_GIVE_UP_MS - (int)((fx_now_us() - t0) / 1000);

		FX_CHECK(left > 0 && fxc_cq_read(ctx->rxcq, &c, left),
			 "round %d: only %d of %d messages arrived in %d ms",
			 round, i, n, FXC_GIVE_UP_MS);
		FX_CHECK(!c.err, "round %d: receive error %d (%s)", round,
			 c.err, fi_strerror(c.err));
		slot = fx_slot_of(&c, rctx, n, seen, "receive");
		fx_check_comp(&c, &rctx[slot], FI_RECV | FI_TAGGED, FXC_SIZE,
			      fxc_tag(round, slot), "receive");
		fx_check(bufs[slot], FXC_SIZE, fxc_tag(round, slot),
			 "message");
	}
}

/* The rounds of a mode: level and count of each. */
struct fxc_round {
	enum fxc_level level;
	int n;
};

static int fxc_rounds(const char *mode, const struct fx_opts *opts,
		      struct fxc_round *r, bool *exit_p)
{
	int nr = 0, l, k;
	static const int counts[] = { 1, 40 };

	*exit_p = false;
	if (!strcmp(mode, "close")) {
		for (k = 0; k < 2; k++)
			for (l = 0; l < FXC_NLEVELS; l++) {
				r[nr].level = (enum fxc_level)l;
				r[nr++].n = opts->count ? opts->count :
					    counts[k];
			}
		return nr;
	}
	if (strncmp(mode, "close-exit:", 11))
		return 0;
	for (l = 0; l < FXC_NLEVELS; l++)
		if (!strcmp(mode + 11, fxc_level_names[l]))
			break;
	if (l == FXC_NLEVELS)
		return 0;
	*exit_p = true;
	r[0].level = (enum fxc_level)l;
	r[0].n = opts->count ? opts->count : 40;
	return 1;
}

/* Close the set-up endpoint: the client sends from endpoints of its own. */
static void fxc_drop_setup_ep(struct fx_ctx *ctx, void *name, size_t *len)
{
	FX_CALL(fi_av_lookup(ctx->av, ctx->peer[0], name, len));
	FX_CALL(fi_close(&ctx->ep->fid));
	ctx->ep = NULL;
}

static void fxc_close_mode(struct fx_ctx *ctx, const char *mode)
{
	struct fxc_round r[2 * FXC_NLEVELS];
	uint8_t name[128];
	size_t len = sizeof(name);
	bool exit_after;
	int nr, i;

	nr = fxc_rounds(mode, ctx->opts, r, &exit_after);
	FX_CHECK(nr > 0, "unknown mode %s", mode);
	if (!ctx->server)
		fxc_drop_setup_ep(ctx, name, &len);
	for (i = 0; i < nr; i++) {
		FX_CHECK(r[i].n <= FXC_MAX_MSGS, "-N above %d", FXC_MAX_MSGS);
		if (ctx->server) {
			fxc_recv_round(ctx, i, r[i].n);
			FX_CHECK(fx_oob_recv_u64(ctx, 0) == (uint64_t)i,
				 "client out of step");
			if (!exit_after)
				fx_oob_send_u64(ctx, 0, (uint64_t)i);
		} else {
			FX_CHECK(fx_oob_recv_u64(ctx, 0) == (uint64_t)i,
				 "server out of step");
			fxc_send_round(ctx, name, i, r[i].level, r[i].n,
				       exit_after);
		}
	}
}

/* ---- first: nothing held back while the sender is elsewhere -------------- */

#define FXC_BURST	8	/* "connected": messages sent back to back */

/*
 * first: one message to a new peer. connected: a first message sets the
 * link up and is received, then FXC_BURST messages go back to back (the
 * last few with FI_MORE but the very last). Either way the sender then stays away from the provider and
 * every message must arrive before it says it woke.
 */
static void fxc_first(struct fx_ctx *ctx, bool connected)
{
	static uint8_t buf[FXC_BURST][FXC_SIZE];
	struct fi_context tctx[FXC_BURST], rctx[FXC_BURST];
	int i, n = connected ? FXC_BURST : 1, got = 0;
	struct fx_comp c;
	uint64_t t0, note;

	if (ctx->server) {
		if (connected) {
			FX_CALL(fi_trecv(ctx->ep, buf[0], FXC_SIZE, NULL,
					 FI_ADDR_UNSPEC, 6, 0, &rctx[0]));
			fx_oob_send_u64(ctx, 0, 1);
			fx_cq_wait_ok(ctx, ctx->rxcq, &c, "set-up message");
		}
		for (i = 0; i < n; i++)
			FX_CALL(fi_trecv(ctx->ep, buf[i], FXC_SIZE, NULL,
					 FI_ADDR_UNSPEC, 7 + (uint64_t)i, 0,
					 &rctx[i]));
		fx_oob_send_u64(ctx, 0, 1);
		/* the client's first note: its sends completed, it sleeps */
		note = fx_oob_recv_u64(ctx, 0);
		FX_CHECK(note == 2, "client note %llu",
			 (unsigned long long)note);
		t0 = fx_now_us();
		/* its second note (it woke) must not come first: the CQ is
		 * read, the OOB socket only looked at */
		while (got < n) {
			struct pollfd pfd = { .fd = ctx->oob_fd[0],
					      .events = POLLIN };

			if (fxc_cq_read(ctx->rxcq, &c, 1)) {
				FX_CHECK(!c.err, "receive error %d", c.err);
				got++;
				continue;
			}
			FX_CHECK(poll(&pfd, 1, 0) == 0,
				 "%d of %d messages did not arrive while the "
				 "sender was away from the provider (%.1f s)",
				 n - got, n, (double)(fx_now_us() - t0) / 1e6);
		}
		for (i = 0; i < n; i++)
			fx_check(buf[i], FXC_SIZE, 7 + (uint64_t)i, "message");
		fx_info("%d message(s) arrived %.1f ms after the sender "
			"blocked", n, (double)(fx_now_us() - t0) / 1000);
		note = fx_oob_recv_u64(ctx, 0);
		FX_CHECK(note == 3, "client note %llu",
			 (unsigned long long)note);
		return;
	}
	if (connected) {
		FX_CHECK(fx_oob_recv_u64(ctx, 0) == 1, "server out of step");
		fx_fill(buf[0], FXC_SIZE, 6);
		FX_CALL(fi_tsend(ctx->ep, buf[0], FXC_SIZE, NULL,
				 ctx->peer[0], 6, &tctx[0]));
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "set-up send");
	}
	FX_CHECK(fx_oob_recv_u64(ctx, 0) == 1, "server out of step");
	for (i = 0; i < n; i++) {
		struct iovec iov = { .iov_base = buf[i], .iov_len = FXC_SIZE };
		struct fi_msg_tagged msg = {
			.msg_iov = &iov, .iov_count = 1,
			.addr = ctx->peer[0], .tag = 7 + (uint64_t)i,
			.context = &tctx[i],
		};

		fx_fill(buf[i], FXC_SIZE, 7 + (uint64_t)i);
		/* the second half of a burst: FI_MORE but on the last, which
		 * takes the ones before it along */
		FX_CALL(fi_tsendmsg(ctx->ep, &msg, FI_COMPLETION |
				    (i >= n / 2 && i < n - 1 ? FI_MORE : 0)));
	}
	/* "first" reads its completion before it goes away; "connected"
	 * goes away right after the posts, as a program that computes
	 * between MPI_Isend and MPI_Wait: reading a CQ is a call into the
	 * provider that would flush anything held back */
	if (!connected)
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
	fx_oob_send_u64(ctx, 0, 2);
	/* away from the provider: another library's barrier, a pipe */
	sleep(FXC_BLOCK_S);
	fx_oob_send_u64(ctx, 0, 3);
	for (i = connected ? 0 : 1; i < n; i++)
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
}

/* ---- errors ---------------------------------------------------------------- */

/*
 * An address of this host where nothing listens: a port bound by a
 * socket that never listens (a connect to it is refused), kept bound
 * until the caller closes the returned descriptor. A port bound and
 * freed again could be taken by an endpoint of another program during
 * the provider's connect retries (tests run side by side), which would
 * then accept the message.
 */
static int fxc_dead_addr(struct sockaddr_in *sin)
{
	socklen_t len = sizeof(*sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	FX_CHECK(fd >= 0, "socket");
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	FX_CHECK(!bind(fd, (struct sockaddr *)sin, sizeof(*sin)) &&
		 !getsockname(fd, (struct sockaddr *)sin, &len), "bind");
	return fd;
}

static void fxc_refused(struct fx_ctx *ctx)
{
	static uint8_t buf[FXC_SIZE];
	struct sockaddr_in sin;
	struct fi_context tctx;
	struct fx_comp c;
	struct fxc_side s;
	uint64_t t0, ms;
	uint8_t name[128];
	size_t len = sizeof(name);
	int dead_fd;

	if (ctx->server) {
		(void)fx_oob_recv_u64(ctx, 0);
		return;
	}
	fxc_drop_setup_ep(ctx, name, &len);
	dead_fd = fxc_dead_addr(&sin);
	fxc_open(ctx, &sin, &s);
	t0 = fx_now_us();
	fxc_post(&s, FXC_DEFAULT, buf, FXC_SIZE, 1, &tctx);
	FX_CHECK(fxc_cq_read(s.cq, &c, 60000), "no completion in 60 s");
	ms = (fx_now_us() - t0) / 1000;
	fx_info("send to a port nobody listens on: err %d (%s), olen %zu, "
		"after %llu ms", c.err, fi_strerror(c.err), c.olen,
		(unsigned long long)ms);
	FX_CHECK(c.err == FI_ECONNREFUSED, "error %d (%s), not "
		 "FI_ECONNREFUSED", c.err, fi_strerror(c.err));
	FX_CHECK(c.e.op_context == &tctx && !c.olen && !c.e.len,
		 "error entry: context %p, len %zu, olen %zu",
		 c.e.op_context, c.e.len, c.olen);
	FX_CHECK(ms <= FXC_REFUSED_MS, "error after %llu ms, documented "
		 "2000 + margin", (unsigned long long)ms);
	(void)fxc_close(&s);
	close(dead_fd);
	fx_oob_send_u64(ctx, 0, 1);
}

static void fxc_dead(struct fx_ctx *ctx)
{
	static uint8_t buf[FXC_SIZE], big[1 << 20];
	struct fi_context tctx[4], rctx;
	uint8_t seen[4] = { 0 };
	struct fi_msg_tagged msg;
	struct iovec iov;
	struct fx_comp c;
	int i, errors = 0, slot;

	if (ctx->server) {
		FX_CALL(fi_trecv(ctx->ep, buf, FXC_SIZE, NULL, FI_ADDR_UNSPEC,
				 1, 0, &rctx));
		fx_cq_wait_ok(ctx, ctx->rxcq, &c, "receive");
		fx_oob_send_u64(ctx, 0, 1);
		/* gone as a killed process goes: the kernel closes */
		_exit(0);
	}
	fx_send(ctx, buf, FXC_SIZE, ctx->peer[0], 1, &tctx[0]);
	fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
	(void)fx_oob_recv_u64(ctx, 0);
	usleep(200 * 1000);	/* the server's exit reached our kernel */
	fx_send(ctx, buf, FXC_SIZE, ctx->peer[0], 2, &tctx[1]);
	iov.iov_base = buf;
	iov.iov_len = FXC_SIZE;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.iov_count = 1;
	msg.addr = ctx->peer[0];
	msg.tag = 3;
	msg.context = &tctx[2];
	FX_CALL(fi_tsendmsg(ctx->ep, &msg, FI_COMPLETION |
			    FI_TRANSMIT_COMPLETE));
	FX_CALL(fi_tsend(ctx->ep, big, sizeof(big), NULL, ctx->peer[0], 4,
			 &tctx[3]));
	for (i = 1; i < 4; i++) {
		FX_CHECK(fxc_cq_read(ctx->txcq, &c, FX_WAIT_MS),
			 "send %d to a dead peer: no completion", i);
		slot = fx_slot_of(&c, tctx, 4, seen, "send");
		fx_info("send %d to the dead peer: err %d (%s), len %zu, "
			"olen %zu", slot, c.err, fi_strerror(c.err), c.e.len,
			c.olen);
		if (!c.err) {
			FX_CHECK(slot == 1, "send %d completed successfully",
				 slot);
			continue;
		}
		errors++;
		FX_CHECK(!c.olen && !c.e.len, "error entry of send %d: len "
			 "%zu, olen %zu (nothing was delivered)", slot,
			 c.e.len, c.olen);
	}
	FX_CHECK(errors >= 2, "only %d errors", errors);
}

/*
 * dead-recv: the client's rendezvous header arrives unexpected, the
 * client exits; the receive posted for it later fails (its data cannot
 * be pulled) with len and olen 0: nothing was delivered, nothing cut.
 */
static void fxc_dead_recv(struct fx_ctx *ctx)
{
	static uint8_t big[1 << 20];
	struct fi_context tctx, rctx;
	struct fx_comp c;
	uint64_t t0;

	if (!ctx->server) {
		FX_CALL(fi_tsend(ctx->ep, big, sizeof(big), NULL,
				 ctx->peer[0], 9, &tctx));
		fx_oob_send_u64(ctx, 0, 1);
		_exit(0);	/* the header is out; gone as if killed */
	}
	(void)fx_oob_recv_u64(ctx, 0);
	/* read the header and the client's end */
	t0 = fx_now_us();
	while (fx_now_us() - t0 < 300 * 1000)
		fx_progress(ctx);
	FX_CALL(fi_trecv(ctx->ep, big, sizeof(big), NULL, FI_ADDR_UNSPEC, 9,
			 0, &rctx));
	FX_CHECK(fxc_cq_read(ctx->rxcq, &c, FX_WAIT_MS),
		 "no completion for the receive");
	fx_info("receive of a dead sender's message: err %d (%s), len %zu, "
		"olen %zu", c.err, fi_strerror(c.err), c.e.len, c.olen);
	FX_CHECK(c.err, "the receive of a dead sender's data succeeded");
	FX_CHECK(!c.olen && !c.e.len, "error entry: len %zu, olen %zu "
		 "(nothing delivered, nothing truncated)", c.e.len, c.olen);
}

/* Take -M <mode> out of argv; the rest is the common command line. */
static const char *fxc_mode(int *argc, char **argv)
{
	const char *mode = "close";
	int i, j;

	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "-M") || i + 1 >= *argc)
			continue;
		mode = argv[i + 1];
		for (j = i; j + 2 <= *argc; j++)
			argv[j] = argv[j + 2];
		*argc -= 2;
		break;
	}
	return mode;
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED | FI_MSG };
	const char *mode = "close";
	struct fx_opts opts;
	struct fx_ctx ctx;

	if (argc > 1)
		mode = fxc_mode(&argc, argv);
	fx_parse(argc, argv, "sends that completed survive fi_close; the "
		 "first message leaves without another call; error codes",
		 "  -M close | close-exit:<level> | first | connected | refused | dead | "
		 "dead-recv\n"
		 "  -N messages per round (close modes)\n", &opts);
	fx_init(&ctx, &opts, &setup);
	if (!strncmp(mode, "close", 5))
		fxc_close_mode(&ctx, mode);
	else if (!strcmp(mode, "first"))
		fxc_first(&ctx, false);
	else if (!strcmp(mode, "connected"))
		fxc_first(&ctx, true);
	else if (!strcmp(mode, "refused"))
		fxc_refused(&ctx);
	else if (!strcmp(mode, "dead"))
		fxc_dead(&ctx);
	else if (!strcmp(mode, "dead-recv"))
		fxc_dead_recv(&ctx);
	else
		FX_FAIL("unknown mode %s", mode);
	/* the peer may be gone; a leak check at exit sees only what the
	 * provider itself keeps */
	fx_fini_nosync(&ctx);
	fx_info("PASS");
	return 0;
}
