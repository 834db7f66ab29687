/*
 * peerkill.c - a peer killed with SIGKILL while transfers to it are in
 * flight (docs/robustness.md, item 2). One server ("survivor") and two
 * clients on the public fi_* API (fabtests-ext/common.c):
 *
 *   peerkill -n 2 -B 0                          survivor
 *   PEERKILL_ROLE=doomed  peerkill -P <port> 127.0.0.1
 *   PEERKILL_ROLE=healthy peerkill -P <port> 127.0.0.1
 *
 * The doomed client only progresses; it posts no receive. The survivor,
 * on a second endpoint of its own, sends it -N eager messages (default
 * 2000 x 16000 B: more than its overflow pool holds, so the tail is held
 * by flow control) and 8 rendezvous messages (256 KiB, never matched),
 * and 8 fi_read and 8 fi_write of 4 MiB into a window the doomed peer
 * registered, then writes $PEERKILL_READY. run.sh kills the doomed client with
 * SIGKILL and writes the time it did into $PEERKILL_KILLED. The survivor keeps ping-ponging
 * verified data with the healthy client meanwhile, and checks:
 *   - every send to the doomed peer completes, the rendezvous ones with
 *     an error entry (nothing could have matched them), within
 *     $PEERKILL_BOUND_MS (default 35000: FI_PORTALS_PEER_TIMEOUT's
 *     default 30 s plus slack) of the kill; it prints the time taken;
 *   - a send posted to the dead peer after the kill also fails (or is
 *     refused at once) instead of hanging;
 *   - the healthy client's rounds all verify, before and after;
 *   - with $PEERKILL_REBORN set: once run.sh has started a new process
 *     on the killed one's port (PEERKILL_ROLE=reborn, it touches that
 *     file), the address is removed from the AV and inserted again, and
 *     an eager and a rendezvous send to it complete and verify;
 *   - fi_close of both endpoints returns (the process exits).
 */
#include "common.h"

#include <rdma/fi_rma.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#define PK_EAGER_SIZE	16000
#define PK_EAGER_COUNT	2000
#define PK_RDZV_SIZE	(256 * 1024)
#define PK_RDZV_COUNT	8
#define PK_ROUND_SIZE	4000
#define PK_ROUNDS_AFTER	20
#define PK_RMA_SIZE	(4 * 1024 * 1024)
#define PK_RMA_COUNT	8		/* reads and as many writes */
#define PK_RMA_KEY	0x600dull
#define PK_TAG_HEALTHY	(1ull << 41)
#define PK_TAG_DOOMED	(1ull << 42)

enum pk_role { PK_DOOMED = 1, PK_HEALTHY = 2 };

static void pk_round(struct fx_ctx *ctx, fi_addr_t peer, void *tx, void *rx,
		     uint64_t round)
{
	uint64_t tag = PK_TAG_HEALTHY | round;
	struct fi_context tx_ctx, rx_ctx;
	struct fx_comp c;

	fx_recv(ctx, rx, PK_ROUND_SIZE, FI_ADDR_UNSPEC, tag, 0, &rx_ctx);
	if (!ctx->server) {
		fx_fill(tx, PK_ROUND_SIZE, round * 2);
		fx_send(ctx, tx, PK_ROUND_SIZE, peer, tag, &tx_ctx);
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
	}
	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "receive");
	fx_check_comp(&c, &rx_ctx, FI_RECV | FI_TAGGED, PK_ROUND_SIZE, tag,
		      "receive");
	fx_check(rx, PK_ROUND_SIZE, round * 2 + (ctx->server ? 0 : 1), "round");
	if (ctx->server) {
		fx_fill(tx, PK_ROUND_SIZE, round * 2 + 1);
		fx_send(ctx, tx, PK_ROUND_SIZE, peer, tag, &tx_ctx);
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
	}
}

static uint64_t pk_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* When run.sh sent SIGKILL (it writes `date +%s%6N`), or 0 not yet. */
static uint64_t pk_kill_time_us(const char *path)
{
	unsigned long long us = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu", &us) != 1)
		us = 0;
	fclose(f);
	return us;
}

/* RMA to the doomed peer: contexts, and how they ended */
static struct fi_context pk_rma_ctx[2 * PK_RMA_COUNT];
static size_t pk_rma_ok, pk_rma_err;

static bool pk_is_rma(const void *op_context)
{
	return op_context >= (void *)pk_rma_ctx &&
	       op_context < (void *)(pk_rma_ctx + 2 * PK_RMA_COUNT);
}

/* Drains cq without blocking; counts successes and errors. */
static void pk_drain(struct fid_cq *cq, size_t *ok, size_t *err,
		     size_t *rdzv_err, const struct fi_context *rdzv_ctx)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	ssize_t ret;

	for (;;) {
		ret = fi_cq_read(cq, &e, 1);
		if (ret == 1) {
			FX_CHECK(!(e.op_context >= (void *)rdzv_ctx &&
				   e.op_context < (void *)(rdzv_ctx +
							   PK_RDZV_COUNT)),
				 "a rendezvous send to the doomed peer "
				 "succeeded: nothing received it");
			pk_rma_ok += pk_is_rma(e.op_context);
			(*ok)++;
			continue;
		}
		if (ret == -FI_EAVAIL) {
			memset(&ee, 0, sizeof(ee));
			FX_CHECK(fi_cq_readerr(cq, &ee, 0) == 1, "readerr");
			(*err)++;
			pk_rma_err += pk_is_rma(ee.op_context);
			if (ee.op_context >= (void *)rdzv_ctx &&
			    ee.op_context < (void *)(rdzv_ctx + PK_RDZV_COUNT))
				(*rdzv_err)++;
			continue;
		}
		FX_CHECK(ret == -FI_EAGAIN, "fi_cq_read: %zd (%s)", ret,
			 fi_strerror((int)-ret));
		return;
	}
}

/* Waits for a successful completion on cq, serving the healthy peer. */
static void pk_wait_ok(struct fx_ctx *ctx, struct fid_cq *cq, fi_addr_t healthy,
		       uint64_t *round, void *tx, void *rx, const char *what)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee = { 0 };
	uint64_t t0 = fx_now_us();
	ssize_t ret;

	while ((ret = fi_cq_read(cq, &e, 1)) == -FI_EAGAIN) {
		FX_CHECK(fx_now_us() - t0 < 60000000ull, "%s: no completion",
			 what);
		fx_oob_send_u64(ctx, healthy == ctx->peer[0] ? 0 : 1, 1);
		pk_round(ctx, healthy, tx, rx, (*round)++);
	}
	if (ret == -FI_EAVAIL && fi_cq_readerr(cq, &ee, 0) == 1)
		FX_FAIL("%s: error %d (%s)", what, ee.err,
			fi_strerror(ee.err));
	FX_CHECK(ret == 1, "%s: fi_cq_read %zd", what, ret);
}

/*
 * The killed peer's address comes back to life (run.sh starts a new
 * process on the same port): remove it from the AV, insert it again, and
 * an eager and a rendezvous send to it must work.
 */
static void pk_reborn_check(struct fx_ctx *ctx, struct fid_ep *ep2,
			    struct fid_cq *cq2, fi_addr_t doomed,
			    fi_addr_t healthy, uint64_t *round, void *tx,
			    void *rx)
{
	const char *reborn = getenv("PEERKILL_REBORN");
	const char *port_file = getenv("PEERKILL_PORT");
	struct sockaddr_in addr;
	size_t len = sizeof(addr);
	struct fi_context c1, c2;
	fi_addr_t again;
	uint64_t t0 = fx_now_us();
	uint8_t *big, *small;
	FILE *f;

	FX_CALL(fi_av_lookup(ctx->av, doomed, &addr, &len));
	FX_CHECK(addr.sin_family == AF_INET, "not an IPv4 peer");
	f = fopen(port_file, "w");
	FX_CHECK(f, "cannot write %s", port_file);
	fprintf(f, "%s %u\n", inet_ntoa(addr.sin_addr), ntohs(addr.sin_port));
	FX_CHECK(fclose(f) == 0, "cannot write %s", port_file);
	while (access(reborn, F_OK)) {
		FX_CHECK(fx_now_us() - t0 < 60000000ull,
			 "the restarted peer never came up");
		fx_oob_send_u64(ctx, healthy == ctx->peer[0] ? 0 : 1, 1);
		pk_round(ctx, healthy, tx, rx, (*round)++);
	}
	FX_CALL(fi_av_remove(ctx->av, &doomed, 1, 0));
	FX_CHECK(fi_av_insert(ctx->av, &addr, 1, &again, 0, NULL) == 1,
		 "fi_av_insert of the restarted peer");
	big = fx_alloc(PK_RDZV_SIZE);
	small = fx_alloc(PK_EAGER_SIZE);
	fx_fill(big, PK_RDZV_SIZE, 3);
	fx_fill(small, PK_EAGER_SIZE, 4);
	FX_RETRY(ctx, "send to the restarted peer", fi_tsend(ep2, big,
		 PK_RDZV_SIZE, NULL, again, PK_TAG_DOOMED | 3, &c1));
	FX_RETRY(ctx, "send to the restarted peer", fi_tsend(ep2, small,
		 PK_EAGER_SIZE, NULL, again, PK_TAG_DOOMED | 4, &c2));
	pk_wait_ok(ctx, cq2, healthy, round, tx, rx, "rendezvous to reborn");
	pk_wait_ok(ctx, cq2, healthy, round, tx, rx, "eager to reborn");
	printf("peerkill_reborn re-inserted at port %u: eager and rendezvous "
	       "sends completed\n", ntohs(addr.sin_port));
	free(big);
	free(small);
}

/*
 * The restarted peer: its own endpoint on the port the killed one had
 * (FI_PORTALS_PORT_LOW/HIGH from run.sh), no OOB; it receives the two
 * messages pk_reborn_check sends and verifies them.
 */
static int pk_reborn(const struct fx_opts *opts)
{
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_tagged_entry e;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fi_context c1, c2;
	uint8_t *big = fx_alloc(PK_RDZV_SIZE), *small = fx_alloc(PK_EAGER_SIZE);
	const char *ready = getenv("PEERKILL_REBORN");
	uint64_t t0;
	int got = 0;
	ssize_t ret;
	FILE *f;

	FX_CHECK(hints && ready && getenv("PEERKILL_IP"),
		 "reborn: set PEERKILL_REBORN and PEERKILL_IP");
	hints->caps = FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup(opts->prov ? opts->prov :
					       "portals");
	/* the killed peer's IP; its port comes from FI_PORTALS_PORT_* */
	FX_CALL(fi_getinfo(FI_VERSION(1, 17), getenv("PEERKILL_IP"), NULL,
			   FI_SOURCE, hints, &info));
	FX_CALL(fi_fabric(info->fabric_attr, &fabric, NULL));
	FX_CALL(fi_domain(fabric, info, &domain, NULL));
	FX_CALL(fi_av_open(domain, &av_attr, &av, NULL));
	FX_CALL(fi_cq_open(domain, &cq_attr, &cq, NULL));
	FX_CALL(fi_endpoint(domain, info, &ep, NULL));
	FX_CALL(fi_ep_bind(ep, &av->fid, 0));
	FX_CALL(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	FX_CALL(fi_enable(ep));
	FX_CALL(fi_trecv(ep, big, PK_RDZV_SIZE, NULL, FI_ADDR_UNSPEC,
			 PK_TAG_DOOMED | 3, 0, &c1));
	FX_CALL(fi_trecv(ep, small, PK_EAGER_SIZE, NULL, FI_ADDR_UNSPEC,
			 PK_TAG_DOOMED | 4, 0, &c2));
	f = fopen(ready, "w");
	FX_CHECK(f && fclose(f) == 0, "cannot write %s", ready);
	t0 = fx_now_us();
	while (got < 2) {
		ret = fi_cq_read(cq, &e, 1);
		FX_CHECK(ret == 1 || ret == -FI_EAGAIN, "reborn: cq %zd", ret);
		got += ret == 1;
		FX_CHECK(fx_now_us() - t0 < 60000000ull, "reborn: nothing came");
	}
	fx_check(big, PK_RDZV_SIZE, 3, "rendezvous to the restarted peer");
	fx_check(small, PK_EAGER_SIZE, 4, "eager to the restarted peer");
	printf("peerkill_reborn received and verified both\n");
	FX_CALL(fi_close(&ep->fid));
	FX_CALL(fi_close(&cq->fid));
	FX_CALL(fi_close(&av->fid));
	FX_CALL(fi_close(&domain->fid));
	FX_CALL(fi_close(&fabric->fid));
	fi_freeinfo(info);
	fi_freeinfo(hints);
	free(big);
	free(small);
	return 0;
}

static void pk_survivor(struct fx_ctx *ctx, const struct fx_setup *setup,
			int neager)
{
	const char *ready = getenv("PEERKILL_READY");
	const char *killed = getenv("PEERKILL_KILLED");
	const char *bound_env = getenv("PEERKILL_BOUND_MS");
	uint64_t bound_ms = bound_env ? strtoull(bound_env, NULL, 10) : 35000;
	struct fi_context *ectx, rctx[PK_RDZV_COUNT], late_ctx;
	size_t ok = 0, err = 0, rdzv_err = 0, posted = 0, total;
	uint64_t t_kill = 0, t_done = 0, round = 0, after = 0;
	fi_addr_t doomed = FI_ADDR_UNSPEC, healthy = FI_ADDR_UNSPEC;
	struct fid_ep *ep2;
	struct fid_cq *cq2;
	uint8_t *ebuf, *rbuf, *rmabuf, *tx, *rx;
	ssize_t ret;
	int p, i;
	FILE *f;

	for (p = 0; p < 2; p++) {
		if (fx_oob_recv_u64(ctx, p) == PK_DOOMED)
			doomed = ctx->peer[p];
		else
			healthy = ctx->peer[p];
	}
	FX_CHECK(doomed != FI_ADDR_UNSPEC && healthy != FI_ADDR_UNSPEC,
		 "need one doomed and one healthy client");
	/* its death is the point: stop fx_* from taking it for a failure */
	p = doomed == ctx->peer[0] ? 0 : 1;
	close(ctx->oob_fd[p]);
	ctx->oob_fd[p] = -1;
	fx_ep_open(ctx, setup, &ep2, &cq2);
	ebuf = fx_alloc(PK_EAGER_SIZE);
	rbuf = fx_alloc(PK_RDZV_SIZE);
	rmabuf = fx_alloc(2 * PK_RMA_SIZE);
	tx = fx_alloc(PK_ROUND_SIZE);
	rx = fx_alloc(PK_ROUND_SIZE);
	ectx = calloc((size_t)neager, sizeof(*ectx));
	FX_CHECK(ectx, "out of memory");
	fx_fill(ebuf, PK_EAGER_SIZE, 1);
	fx_fill(rbuf, PK_RDZV_SIZE, 2);

	/* the rendezvous ones first: they are surely pending at the kill */
	for (i = 0; i < PK_RDZV_COUNT; i++, posted++)
		FX_RETRY(ctx, "rendezvous send", fi_tsend(ep2, rbuf,
			 PK_RDZV_SIZE, NULL, doomed, PK_TAG_DOOMED | 1, &rctx[i]));
	/* RMA into the doomed peer's window (key PK_RMA_KEY, offset 0) */
	for (i = 0; i < PK_RMA_COUNT; i++, posted += 2) {
		FX_RETRY(ctx, "fi_read", fi_read(ep2, rmabuf, PK_RMA_SIZE, NULL,
			 doomed, 0, PK_RMA_KEY, &pk_rma_ctx[2 * i]));
		FX_RETRY(ctx, "fi_write", fi_write(ep2, rmabuf + PK_RMA_SIZE,
			 PK_RMA_SIZE, NULL, doomed, 0, PK_RMA_KEY,
			 &pk_rma_ctx[2 * i + 1]));
	}
	for (i = 0; i < neager; i++, posted++) {
		do {
			ret = fi_tsend(ep2, ebuf, PK_EAGER_SIZE, NULL, doomed,
				       PK_TAG_DOOMED, &ectx[i]);
			if (ret == -FI_EAGAIN)
				pk_drain(cq2, &ok, &err, &rdzv_err, rctx);
		} while (ret == -FI_EAGAIN);
		FX_CHECK(ret == 0, "eager send: %zd (%s)", ret,
			 fi_strerror((int)-ret));
	}
	total = posted;
	FX_CHECK(err == 0, "%zu sends failed before the kill", err);
	printf("peerkill_posted %zu (%d rendezvous, %d RMA of 4 MiB), %zu "
	       "already complete\n", total, PK_RDZV_COUNT, 2 * PK_RMA_COUNT,
	       ok + err);
	fflush(stdout);
	if (ready) {
		f = fopen(ready, "w");
		FX_CHECK(f && fclose(f) == 0, "cannot write %s", ready);
	}

	/* the healthy client is served all along; the dead one's ops end */
	while (ok + err < total || after < PK_ROUNDS_AFTER) {
		fx_oob_send_u64(ctx, healthy == ctx->peer[0] ? 0 : 1, 1);
		pk_round(ctx, healthy, tx, rx, round++);
		fi_cq_read(cq2, NULL, 0);	/* progress ep2 */
		pk_drain(cq2, &ok, &err, &rdzv_err, rctx);
		if (!t_kill && killed)
			t_kill = pk_kill_time_us(killed);
		if (t_kill && !t_done && ok + err == total)
			t_done = pk_wall_us();
		if (t_done)
			after++;
		FX_CHECK(!t_kill || ok + err == total ||
			 pk_wall_us() - t_kill < bound_ms * 1000,
			 "%zu of %zu sends to the killed peer still pending "
			 "%llu ms after the kill", total - ok - err, total,
			 (unsigned long long)bound_ms);
		FX_CHECK(t_kill || round < 1000000, "never killed");
	}
	FX_CHECK(rdzv_err == PK_RDZV_COUNT, "%zu of %d rendezvous sends failed",
		 rdzv_err, PK_RDZV_COUNT);
	printf("peerkill_rma %zu ok, %zu errors\n", pk_rma_ok, pk_rma_err);
	printf("peerkill_done %zu ok, %zu errors (%zu rendezvous), last "
	       "error %llu ms after the kill or cut; %llu healthy rounds verified\n",
	       ok, err, rdzv_err,
	       (unsigned long long)((t_done - t_kill) / 1000),
	       (unsigned long long)round);

	/*
	 * A send to the dead peer now: refused or failed, never hanging
	 * (a rendezvous one: eager payloads complete once copied).
	 */
	ret = fi_tsend(ep2, rbuf, PK_RDZV_SIZE, NULL, doomed, PK_TAG_DOOMED,
		       &late_ctx);
	if (ret == 0) {
		t_kill = fx_now_us();
		ok = err = 0;
		while (ok + err == 0) {
			pk_drain(cq2, &ok, &err, &rdzv_err, rctx);
			FX_CHECK(fx_now_us() - t_kill < bound_ms * 1000,
				 "a send to the dead peer hangs");
		}
		FX_CHECK(err == 1, "a send to the dead peer succeeded");
		printf("peerkill_late send failed after %llu ms\n",
		       (unsigned long long)((fx_now_us() - t_kill) / 1000));
	} else {
		printf("peerkill_late send refused: %zd (%s)\n", ret,
		       fi_strerror((int)-ret));
	}
	if (getenv("PEERKILL_REBORN"))
		pk_reborn_check(ctx, ep2, cq2, doomed, healthy, &round, tx, rx);
	fx_oob_send_u64(ctx, healthy == ctx->peer[0] ? 0 : 1, 0);
	fflush(stdout);
	/* fx_fini meets the OOB peers that are left: the healthy one */
	p = healthy == ctx->peer[0] ? 0 : 1;
	ctx->oob_fd[0] = ctx->oob_fd[p];
	ctx->peer[0] = ctx->peer[p];
	ctx->npeers = 1;
	FX_CALL(fi_close(&ep2->fid));
	FX_CALL(fi_close(&cq2->fid));
	free(ectx);
	free(ebuf);
	free(rbuf);
	free(rmabuf);
	free(tx);
	free(rx);
}

int main(int argc, char **argv)
{
	struct fx_opts opts;
	struct fx_setup setup = { .caps = FI_TAGGED | FI_RMA,
				  .cq_size = 8192 };
	struct fid_mr *mr = NULL;
	uint8_t *win;
	struct fx_ctx ctx;
	const char *role = getenv("PEERKILL_ROLE");
	void *tx, *rx;
	uint64_t round;

	fx_parse(argc, argv, "a peer killed during transfers",
		 "  -N <n>        eager messages to the doomed peer "
		 "(default 2000)\n", &opts);
	if (role && !strcmp(role, "reborn"))
		return pk_reborn(&opts);
	fx_init(&ctx, &opts, &setup);
	if (ctx.server) {
		pk_survivor(&ctx, &setup,
			    opts.count ? opts.count : PK_EAGER_COUNT);
	} else if (role && !strcmp(role, "doomed")) {
		/* the window exists before the survivor hears of us */
		win = fx_alloc(2 * PK_RMA_SIZE);
		FX_CALL(fi_mr_reg(ctx.domain, win, 2 * PK_RMA_SIZE,
				  FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
				  PK_RMA_KEY, 0, &mr, NULL));
		fx_oob_send_u64(&ctx, 0, PK_DOOMED);
		printf("peerkill_doomed pid %d\n", (int)getpid());
		fflush(stdout);
		for (;;)
			fx_progress(&ctx);	/* till SIGKILL */
	} else {
		fx_oob_send_u64(&ctx, 0, PK_HEALTHY);
		tx = fx_alloc(PK_ROUND_SIZE);
		rx = fx_alloc(PK_ROUND_SIZE);
		for (round = 0; fx_oob_recv_u64(&ctx, 0); round++)
			pk_round(&ctx, ctx.peer[0], tx, rx, round);
		free(tx);
		free(rx);
	}
	fx_fini(&ctx);
	return 0;
}
