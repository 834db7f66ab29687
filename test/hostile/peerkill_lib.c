/*
 * peerkill_lib.c - what the two peer-kill programs share (what and why:
 * peerkill_lib.h): the healthy client's rounds, the survivor's view of its
 * clients, the files of peerkill.sh, the restarted peer's endpoint.
 */
#include "peerkill_lib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

/* One round: the client sends, the server answers; both verify. */
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

uint64_t pk_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void pk_touch(const char *path)
{
	FILE *f = fopen(path, "w");

	FX_CHECK(f && fclose(f) == 0, "cannot write %s", path);
}

void pk_ready(struct pk_srv *s)
{
	const char *path = getenv("PEERKILL_READY");
	char line[512];
	uint64_t t0;
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	FX_CHECK(f, "cannot read /proc/self/maps");
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "memfd:portals-shm") != NULL;
	fclose(f);
	printf("peerkill_segments %d mapped\n", n);
	fflush(stdout);
	if (path)
		pk_touch(path);
	if (!getenv("PEERKILL_KILLED"))
		return;
	t0 = fx_now_us();
	while (!pk_kill_time(s)) {
		FX_CHECK(fx_now_us() - t0 < PK_WAIT_US, "never killed");
		usleep(1000);
	}
}

void pk_srv_init(struct pk_srv *s, struct fx_ctx *ctx)
{
	const char *bound = getenv("PEERKILL_BOUND_MS");
	int p;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->doomed = s->healthy = FI_ADDR_UNSPEC;
	/* FI_PORTALS_PEER_TIMEOUT's default 30 s plus slack */
	s->bound_ms = bound ? strtoull(bound, NULL, 10) : 35000;
	for (p = 0; p < 2; p++) {
		if (fx_oob_recv_u64(ctx, p) == PK_DOOMED) {
			s->doomed = ctx->peer[p];
		} else {
			s->healthy = ctx->peer[p];
			s->healthy_oob = p;
		}
	}
	FX_CHECK(s->doomed != FI_ADDR_UNSPEC && s->healthy != FI_ADDR_UNSPEC,
		 "need one doomed and one healthy client");
	s->tx = fx_alloc(PK_ROUND_SIZE);
	s->rx = fx_alloc(PK_ROUND_SIZE);
}

void pk_srv_forget_doomed(struct pk_srv *s)
{
	int p = 1 - s->healthy_oob;

	/* stop fx_* from taking its end for a failure */
	close(s->ctx->oob_fd[p]);
	s->ctx->oob_fd[p] = -1;
}

uint64_t pk_kill_time(struct pk_srv *s)
{
	const char *path = getenv("PEERKILL_KILLED");
	unsigned long long us = 0;
	FILE *f;

	if (s->t_kill || !path)
		return s->t_kill;
	/* peerkill.sh writes `date +%s%6N` there right after the kill */
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &us) == 1)
		s->t_kill = us;
	fclose(f);
	return s->t_kill;
}

void pk_serve(struct pk_srv *s)
{
	fx_oob_send_u64(s->ctx, s->healthy_oob, 1);
	pk_round(s->ctx, s->healthy, s->tx, s->rx, s->round++);
	pk_kill_time(s);
}

void pk_wait_file(struct pk_srv *s, const char *path, const char *what)
{
	uint64_t t0 = fx_now_us();

	while (access(path, F_OK)) {
		FX_CHECK(fx_now_us() - t0 < PK_WAIT_US, "%s never came", what);
		pk_serve(s);
	}
}

void pk_write_peer_file(struct pk_srv *s, const char *extra)
{
	const char *path = getenv("PEERKILL_PORT");
	struct sockaddr_in addr;
	size_t len = sizeof(addr);
	FILE *f;

	FX_CHECK(path, "PEERKILL_PORT is not set");
	FX_CALL(fi_av_lookup(s->ctx->av, s->doomed, &addr, &len));
	FX_CHECK(addr.sin_family == AF_INET, "not an IPv4 peer");
	f = fopen(path, "w");
	FX_CHECK(f, "cannot write %s", path);
	fprintf(f, "%s %u\n%s", inet_ntoa(addr.sin_addr), ntohs(addr.sin_port),
		extra ? extra : "");
	FX_CHECK(fclose(f) == 0, "cannot write %s", path);
}

void pk_srv_fini(struct pk_srv *s)
{
	struct fx_ctx *ctx = s->ctx;
	int p = s->healthy_oob;

	fx_oob_send_u64(ctx, p, 0);
	fflush(stdout);
	/* fx_fini meets the OOB peers that are left: the healthy one */
	ctx->oob_fd[0] = ctx->oob_fd[p];
	ctx->peer[0] = ctx->peer[p];
	ctx->npeers = 1;
	free(s->tx);
	free(s->rx);
}

void pk_healthy(struct fx_ctx *ctx)
{
	void *tx = fx_alloc(PK_ROUND_SIZE), *rx = fx_alloc(PK_ROUND_SIZE);
	uint64_t round;

	fx_oob_send_u64(ctx, 0, PK_HEALTHY);
	for (round = 0; fx_oob_recv_u64(ctx, 0); round++)
		pk_round(ctx, ctx->peer[0], tx, rx, round);
	free(tx);
	free(rx);
}

void pk_reborn_open(const struct fx_opts *opts, struct pk_reborn *r)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .size = 1024 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	FX_CHECK(hints && getenv("PEERKILL_IP"), "reborn: set PEERKILL_IP");
	memset(r, 0, sizeof(*r));
	hints->caps = FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	hints->fabric_attr->prov_name = strdup(opts->prov ? opts->prov :
					       "portals");
	/* the killed peer's IP; its port comes from FI_PORTALS_PORT_* */
	FX_CALL(fi_getinfo(FI_VERSION(1, 17), getenv("PEERKILL_IP"), NULL,
			   FI_SOURCE, hints, &r->info));
	fi_freeinfo(hints);
	FX_CALL(fi_fabric(r->info->fabric_attr, &r->fabric, NULL));
	FX_CALL(fi_domain(r->fabric, r->info, &r->domain, NULL));
	FX_CALL(fi_av_open(r->domain, &av_attr, &r->av, NULL));
	FX_CALL(fi_cq_open(r->domain, &cq_attr, &r->cq, NULL));
	FX_CALL(fi_endpoint(r->domain, r->info, &r->ep, NULL));
	FX_CALL(fi_ep_bind(r->ep, &r->av->fid, 0));
	FX_CALL(fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV));
	FX_CALL(fi_enable(r->ep));
}

void pk_reborn_close(struct pk_reborn *r)
{
	FX_CALL(fi_close(&r->ep->fid));
	FX_CALL(fi_close(&r->cq->fid));
	FX_CALL(fi_close(&r->av->fid));
	FX_CALL(fi_close(&r->domain->fid));
	FX_CALL(fi_close(&r->fabric->fid));
	fi_freeinfo(r->info);
}

void pk_name_hex(const void *name, size_t len, char *out)
{
	const uint8_t *p = name;
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * len] = 0;
}

static int pk_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

size_t pk_name_unhex(const char *hex, void *name, size_t cap)
{
	uint8_t *p = name;
	size_t n = 0;
	int hi, lo;

	while (n < cap && (hi = pk_hexval(hex[2 * n])) >= 0 &&
	       (lo = pk_hexval(hex[2 * n + 1])) >= 0)
		p[n++] = (uint8_t)(hi << 4 | lo);
	return n;
}
