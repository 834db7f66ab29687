/*
 * victim.c - the live endpoint test/hostile/hostile_peer.c attacks, and
 * the well-behaved client it keeps serving meanwhile. A fabtests-style
 * pair on the public fi_* API only (fabtests-ext/common.c):
 *
 *   victim [-p portals] -B 0                  server (the attacked one)
 *   victim [-p portals] -P <port> 127.0.0.1   the good client
 *
 * The server writes its endpoint's address ("<ip> <port>") to
 * $HOSTILE_ADDR_FILE once the client is connected, then ping-pongs with
 * the client (tagged, 64 B, 4000 B and 100000 B in turn: eager and
 * rendezvous, every byte verified both ways) until $HOSTILE_STOP_FILE
 * exists and at least -N rounds (default 50) ran after it appeared, so the
 * good client is shown to work after the attack too. It also registers a
 * 4 KiB window (key 0x4b1d) that hostile_peer writes past the end of;
 * the window and the 4 KiB after it must be untouched at the end. Any failed or wrong
 * completion fails the run (exit 1); the server prints "victim_rounds N".
 *
 * With $HOSTILE_GO_FILE set, the client sends nothing (so it has no link
 * yet) until that file exists, then times its first verified round trip
 * from there and prints "victim_first_round_ms N": how long a new peer
 * waits to be served by an endpoint under attack (test/hostile/silent.sh).
 */
#include "common.h"

#include <rdma/fi_domain.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VIC_ROUNDS_AFTER	50
#define VIC_MAX_SIZE		100000
#define VIC_TAG_BASE		(1ull << 40)	/* no hostile tag is here */
#define VIC_MR_KEY		0x4b1dull	/* hostile_peer aims past it */
#define VIC_MR_LEN		4096
#define VIC_MR_GUARD		4096		/* after it, same allocation */
#define VIC_MR_BYTE		0x5c

static const size_t vic_sizes[] = { 64, 4000, VIC_MAX_SIZE };

static uint64_t vic_seed(uint64_t round, bool from_server)
{
	return round * 2 + from_server + 7;
}

static void vic_write_addr(struct fx_ctx *ctx, const char *path)
{
	struct sockaddr_storage ss;
	size_t len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN];
	const void *a;
	unsigned port;
	FILE *f;
	char tmp[4096];

	FX_CALL(fi_getname(&ctx->ep->fid, &ss, &len));
	if (ss.ss_family == AF_INET) {
		a = &((struct sockaddr_in *)&ss)->sin_addr;
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else {
		a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	FX_CHECK(inet_ntop(ss.ss_family, a, ip, sizeof(ip)), "inet_ntop");
	/* written whole, then renamed: the reader never sees half of it */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	FX_CHECK(f, "cannot write %s", tmp);
	fprintf(f, "%s %u\n", ip, port);
	FX_CHECK(fclose(f) == 0 && rename(tmp, path) == 0, "cannot write %s",
		 path);
}

/* Wait (without a link: nothing sent yet) until path exists. */
static void vic_wait_go(const char *path, int timeout_s)
{
	uint64_t t0 = fx_now_us();

	while (access(path, F_OK) != 0) {
		FX_CHECK(fx_now_us() - t0 < (uint64_t)timeout_s * 1000000ull,
			 "%s did not appear", path);
		usleep(1000);
	}
}

static void vic_round(struct fx_ctx *ctx, void *tx, void *rx, uint64_t round)
{
	size_t size = vic_sizes[round % 3];
	uint64_t tag = VIC_TAG_BASE | round;
	struct fi_context tx_ctx, rx_ctx;
	struct fx_comp c;

	fx_recv(ctx, rx, size, FI_ADDR_UNSPEC, tag, 0, &rx_ctx);
	if (!ctx->server) {
		fx_fill(tx, size, vic_seed(round, false));
		fx_send(ctx, tx, size, ctx->peer[0], tag, &tx_ctx);
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
		fx_check_comp(&c, &tx_ctx, FI_SEND | FI_TAGGED, 0, 0, "send");
	}
	fx_cq_wait_ok(ctx, ctx->rxcq, &c, "receive");
	fx_check_comp(&c, &rx_ctx, FI_RECV | FI_TAGGED, size, tag, "receive");
	fx_check(rx, size, vic_seed(round, !ctx->server),
		 ctx->server ? "ping" : "pong");
	if (ctx->server) {
		fx_fill(tx, size, vic_seed(round, true));
		fx_send(ctx, tx, size, ctx->peer[0], tag, &tx_ctx);
		fx_cq_wait_ok(ctx, ctx->txcq, &c, "send");
		fx_check_comp(&c, &tx_ctx, FI_SEND | FI_TAGGED, 0, 0, "send");
	}
}

int main(int argc, char **argv)
{
	struct fx_opts opts;
	struct fx_setup setup = { .caps = FI_TAGGED | FI_RMA };
	struct fid_mr *mr = NULL;
	uint8_t *win = NULL;
	struct fx_ctx ctx;
	const char *addr_file = getenv("HOSTILE_ADDR_FILE");
	const char *stop_file = getenv("HOSTILE_STOP_FILE");
	const char *go_file = getenv("HOSTILE_GO_FILE");
	uint64_t round, stop_at = UINT64_MAX, more = 1, go_us = 0;
	int after;
	void *tx, *rx;

	fx_parse(argc, argv, "an endpoint under attack, and its good client",
		 "  -N <n>        rounds after the stop file appeared "
		 "(default 50)\n", &opts);
	after = opts.count ? opts.count : VIC_ROUNDS_AFTER;
	fx_init(&ctx, &opts, &setup);
	tx = fx_alloc(VIC_MAX_SIZE);
	rx = fx_alloc(VIC_MAX_SIZE);
	if (ctx.server) {
		/*
		 * A window for hostile_peer's out-of-range writes: neither it
		 * nor the guard after it may change (nobody may write here).
		 */
		win = fx_alloc(VIC_MR_LEN + VIC_MR_GUARD);
		memset(win, VIC_MR_BYTE, VIC_MR_LEN + VIC_MR_GUARD);
		FX_CALL(fi_mr_reg(ctx.domain, win, VIC_MR_LEN,
				  FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
				  VIC_MR_KEY, 0, &mr, NULL));
	}
	if (ctx.server && addr_file)
		vic_write_addr(&ctx, addr_file);
	if (!ctx.server && go_file) {
		vic_wait_go(go_file, opts.timeout ? opts.timeout : 60);
		go_us = fx_now_us();
	}
	for (round = 0; more; round++) {
		vic_round(&ctx, tx, rx, round);
		if (go_us && round == 0) {
			printf("victim_first_round_ms %llu\n",
			       (unsigned long long)(fx_now_us() - go_us) / 1000);
			fflush(stdout);
		}
		if (ctx.server) {
			if (stop_at == UINT64_MAX &&
			    (!stop_file || access(stop_file, F_OK) == 0))
				stop_at = round + (uint64_t)after;
			more = round < stop_at;
			fx_oob_send_u64(&ctx, 0, more);
		} else {
			more = fx_oob_recv_u64(&ctx, 0);
		}
	}
	if (ctx.server) {
		printf("victim_rounds %llu\n", (unsigned long long)round);
		fx_check_byte(win, VIC_MR_LEN + VIC_MR_GUARD, VIC_MR_BYTE,
			      "the window hostile_peer aimed past");
		FX_CALL(fi_close(&mr->fid));
		free(win);
	}
	free(tx);
	free(rx);
	fx_fini(&ctx);
	return 0;
}
