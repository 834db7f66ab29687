/*
 * common_oob.c - the set-up half of common.h: fabric, domain, AV, CQs,
 * counters and endpoint from fi_getinfo hints, and the out-of-band (OOB)
 * exchange of endpoint names over a plain TCP socket (like fabtests' -E
 * mode), plus OOB barriers and values. Waits, data patterns and reporting
 * are in common.c.
 */
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- OOB: a plain TCP socket, length-prefixed frames ---------------- */

static char fx_role_buf[32];

static void fx_oob_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t ret;

	while (len) {
		ret = send(fd, p, len, MSG_NOSIGNAL);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			FX_FAIL("OOB send: %s (the peer failed or exited)",
				ret ? strerror(errno) : "closed");
		p += ret;
		len -= (size_t)ret;
	}
}

/*
 * Blocks for OOB bytes while progressing the endpoint: the peer may be
 * waiting for us to answer a rendezvous pull before it gets to write.
 * The overall alarm bounds how long (the peer may legitimately be busy).
 */
static void fx_oob_read(struct fx_ctx *ctx, int fd, void *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *p = buf;
	ssize_t ret;

	while (len) {
		ret = poll(&pfd, 1, ctx->ep ? 1 : 100);
		if (ret < 0 && errno != EINTR)
			FX_FAIL("OOB poll: %s", strerror(errno));
		if (ret <= 0) {
			if (ctx->ep)
				fx_progress(ctx);
			continue;
		}
		ret = recv(fd, p, len, 0);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			FX_FAIL("OOB receive: %s (the peer failed or exited)",
				ret ? strerror(errno) : "connection closed");
		p += ret;
		len -= (size_t)ret;
	}
}

static int fx_peer_fd(struct fx_ctx *ctx, int peer)
{
	FX_CHECK(peer >= 0 && peer < ctx->npeers, "no OOB peer %d", peer);
	return ctx->oob_fd[peer];
}

void fx_oob_send(struct fx_ctx *ctx, int peer, const void *buf, size_t len)
{
	uint32_t n = htonl((uint32_t)len);
	int fd = fx_peer_fd(ctx, peer);

	fx_oob_write(fd, &n, sizeof(n));
	fx_oob_write(fd, buf, len);
}

size_t fx_oob_recv(struct fx_ctx *ctx, int peer, void *buf, size_t cap)
{
	int fd = fx_peer_fd(ctx, peer);
	uint32_t n;

	fx_oob_read(ctx, fd, &n, sizeof(n));
	n = ntohl(n);
	FX_CHECK(n <= cap, "OOB frame of %u bytes, room for %zu", n, cap);
	fx_oob_read(ctx, fd, buf, n);
	return n;
}

void fx_oob_send_u64(struct fx_ctx *ctx, int peer, uint64_t val)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(val >> (i * 8));
	fx_oob_send(ctx, peer, b, sizeof(b));
}

uint64_t fx_oob_recv_u64(struct fx_ctx *ctx, int peer)
{
	uint64_t val = 0;
	uint8_t b[8];
	int i;

	FX_CHECK(fx_oob_recv(ctx, peer, b, sizeof(b)) == sizeof(b),
		 "short OOB value");
	for (i = 0; i < 8; i++)
		val |= (uint64_t)b[i] << (i * 8);
	return val;
}

void fx_oob_check_peers(struct fx_ctx *ctx)
{
	struct pollfd pfd;
	char byte;
	int i;

	/*
	 * A peer that failed has exited and its OOB socket reads EOF; a
	 * peer that merely sent OOB data early leaves that data in place.
	 */
	for (i = 0; i < ctx->npeers; i++) {
		pfd = (struct pollfd){ .fd = ctx->oob_fd[i], .events = POLLIN };
		if (poll(&pfd, 1, 0) <= 0)
			continue;
		if (recv(ctx->oob_fd[i], &byte, 1, MSG_PEEK | MSG_DONTWAIT)
		    == 0)
			FX_FAIL("the %s closed its OOB connection: it failed "
				"or exited early", ctx->server ? "client" :
				"server");
	}
}

void fx_oob_sync(struct fx_ctx *ctx)
{
	static const uint64_t magic = 0x53594e43;	/* "SYNC" */
	int i;

	/* clients first, then the server answers all: no cycle */
	if (ctx->server) {
		for (i = 0; i < ctx->npeers; i++)
			FX_CHECK(fx_oob_recv_u64(ctx, i) == magic,
				 "OOB sync out of step with client %d", i);
		for (i = 0; i < ctx->npeers; i++)
			fx_oob_send_u64(ctx, i, magic);
	} else {
		fx_oob_send_u64(ctx, 0, magic);
		FX_CHECK(fx_oob_recv_u64(ctx, 0) == magic,
			 "OOB sync out of step with the server");
	}
}

static void fx_oob_addr(const struct fx_opts *opts, const char *host,
			int port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	if (!host)
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		FX_FAIL("OOB address '%s' is not an IPv4 address", host);
	(void)opts;
}

/* server: listens, prints its port, accepts every client in turn */
static void fx_oob_accept(struct fx_ctx *ctx)
{
	const struct fx_opts *opts = ctx->opts;
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	int lfd, one = 1, i;

	fx_oob_addr(opts, opts->src_addr, opts->src_port, &sin);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	FX_CHECK(lfd >= 0, "OOB socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(lfd, FX_MAX_PEERS))
		FX_FAIL("OOB listen on port %d: %s", opts->src_port,
			strerror(errno));
	FX_CHECK(!getsockname(lfd, (struct sockaddr *)&sin, &slen),
		 "getsockname: %s", strerror(errno));
	/* run.sh reads this line to start the clients (with -B 0) */
	printf("fx_oob_port %d\n", ntohs(sin.sin_port));
	fflush(stdout);
	for (i = 0; i < opts->nclients; i++) {
		int fd = accept(lfd, NULL, NULL);

		FX_CHECK(fd >= 0, "OOB accept: %s", strerror(errno));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		ctx->oob_fd[ctx->npeers++] = fd;
	}
	close(lfd);
}

/* client: connects, retrying while the server is not listening yet */
static void fx_oob_connect(struct fx_ctx *ctx)
{
	const struct fx_opts *opts = ctx->opts;
	uint64_t deadline = fx_now_us() + FX_WAIT_MS * 1000ULL;
	struct sockaddr_in sin;
	int fd, one = 1;

	fx_oob_addr(opts, opts->dst_addr, opts->dst_port, &sin);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		FX_CHECK(fd >= 0, "OOB socket: %s", strerror(errno));
		if (!connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
			break;
		if (errno != ECONNREFUSED || fx_now_us() > deadline)
			FX_FAIL("OOB connect to %s:%d: %s", opts->dst_addr,
				opts->dst_port, strerror(errno));
		close(fd);
		usleep(10000);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ctx->oob_fd[ctx->npeers++] = fd;
}

/*
 * Each side's fi_getname() goes to the other; the server also gives every
 * client its rank (accept order) so clients can send distinct data.
 */
static void fx_oob_exchange(struct fx_ctx *ctx)
{
	char name[FI_NAME_MAX], peer_name[FI_NAME_MAX];
	size_t len = sizeof(name), plen;
	int i, ret, nclients;
	uint64_t val;

	FX_CALL(fi_getname(&ctx->ep->fid, name, &len));
	if (ctx->server) {
		fx_oob_accept(ctx);
		for (i = 0; i < ctx->npeers; i++) {
			/* rank, and how many clients there are */
			fx_oob_send_u64(ctx, i, (uint64_t)i |
					(uint64_t)ctx->npeers << 32);
			fx_oob_send(ctx, i, name, len);
			plen = fx_oob_recv(ctx, i, peer_name,
					   sizeof(peer_name));
			ret = fi_av_insert(ctx->av, peer_name, 1,
					   &ctx->peer[i], 0, NULL);
			FX_CHECK(ret == 1, "fi_av_insert of client %d: %d "
				 "(%s)", i, ret, fi_strerror(-ret));
			(void)plen;
		}
	} else {
		fx_oob_connect(ctx);
		val = fx_oob_recv_u64(ctx, 0);
		ctx->rank = (int)(uint32_t)val;
		nclients = (int)(val >> 32);
		plen = fx_oob_recv(ctx, 0, peer_name, sizeof(peer_name));
		fx_oob_send(ctx, 0, name, len);
		ret = fi_av_insert(ctx->av, peer_name, 1, &ctx->peer[0], 0,
				   NULL);
		FX_CHECK(ret == 1, "fi_av_insert of the server: %d (%s)", ret,
			 fi_strerror(-ret));
		(void)plen;
		if (nclients > 1) {
			snprintf(fx_role_buf, sizeof(fx_role_buf),
				 "client %d", ctx->rank);
			fx_role = fx_role_buf;
		}
	}
}

/* ---- set-up ----------------------------------------------------------- */

static struct fi_info *fx_hints(const struct fx_opts *opts,
				const struct fx_setup *setup)
{
	struct fi_info *hints = fi_allocinfo();

	FX_CHECK(hints, "fi_allocinfo failed");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = setup->caps;
	hints->mode = 0;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->threading = opts->threading ? opts->threading :
					setup->threading ? setup->threading :
					FI_THREAD_DOMAIN;
	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	hints->domain_attr->mr_mode = 0;
	hints->domain_attr->cq_data_size = setup->cq_data_size;
	hints->tx_attr->size = setup->tx_size;
	hints->rx_attr->size = setup->rx_size;
	if (opts->auto_progress) {
		hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
		hints->domain_attr->control_progress = FI_PROGRESS_AUTO;
	}
	/* the programs rely on send-after-send order per peer */
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	if (opts->prov) {
		hints->fabric_attr->prov_name = strdup(opts->prov);
		FX_CHECK(hints->fabric_attr->prov_name, "out of memory");
	}
	return hints;
}

void fx_cq_open(struct fx_ctx *ctx, const struct fx_setup *setup,
		struct fid_cq **cq_p)
{
	struct fi_cq_attr attr = {
		.size = setup->cq_size ? setup->cq_size : 1024,
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = ctx->opts->sread ? FI_WAIT_UNSPEC : FI_WAIT_NONE,
	};

	FX_CALL(fi_cq_open(ctx->domain, &attr, cq_p, NULL));
}

void fx_ep_open_on(struct fx_ctx *ctx, const struct fx_setup *setup,
		   struct fid_cq *cq, struct fid_ep **ep_p)
{
	struct fid_ep *ep;

	FX_CALL(fi_endpoint(ctx->domain, ctx->info, &ep, NULL));
	FX_CALL(fi_ep_bind(ep, &ctx->av->fid, 0));
	FX_CALL(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV |
			   setup->cq_bind_flags));
	FX_CALL(fi_enable(ep));
	*ep_p = ep;
}

void fx_ep_open(struct fx_ctx *ctx, const struct fx_setup *setup,
		struct fid_ep **ep_p, struct fid_cq **cq_p)
{
	fx_cq_open(ctx, setup, cq_p);
	fx_ep_open_on(ctx, setup, *cq_p, ep_p);
}

void fx_init(struct fx_ctx *ctx, const struct fx_opts *opts,
	     const struct fx_setup *setup)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE,
				      .count = FX_MAX_PEERS * 2 };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP,
					  .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *hints;
	int ret;

	memset(ctx, 0, sizeof(*ctx));
	ctx->opts = opts;
	ctx->server = !opts->dst_addr;
	hints = fx_hints(opts, setup);
	ret = fi_getinfo(FI_VERSION(1, 17), opts->src_addr, NULL,
			 opts->src_addr ? FI_SOURCE : 0, hints, &ctx->info);
	if (ret)
		FX_FAIL("fi_getinfo (provider %s, caps 0x%llx): %d (%s)",
			opts->prov ? opts->prov : "any",
			(unsigned long long)setup->caps, ret,
			fi_strerror(-ret));
	fi_freeinfo(hints);

	FX_CALL(fi_fabric(ctx->info->fabric_attr, &ctx->fabric, NULL));
	FX_CALL(fi_domain(ctx->fabric, ctx->info, &ctx->domain, NULL));
	FX_CALL(fi_av_open(ctx->domain, &av_attr, &ctx->av, NULL));
	fx_cq_open(ctx, setup, &ctx->txcq);
	fx_cq_open(ctx, setup, &ctx->rxcq);
	FX_CALL(fi_cntr_open(ctx->domain, &cntr_attr, &ctx->txcntr, NULL));
	FX_CALL(fi_cntr_open(ctx->domain, &cntr_attr, &ctx->rxcntr, NULL));

	FX_CALL(fi_endpoint(ctx->domain, ctx->info, &ctx->ep, NULL));
	FX_CALL(fi_ep_bind(ctx->ep, &ctx->av->fid, 0));
	FX_CALL(fi_ep_bind(ctx->ep, &ctx->txcq->fid,
			   FI_TRANSMIT | setup->cq_bind_flags));
	FX_CALL(fi_ep_bind(ctx->ep, &ctx->rxcq->fid,
			   FI_RECV | setup->cq_bind_flags));
	FX_CALL(fi_ep_bind(ctx->ep, &ctx->txcntr->fid, FI_SEND));
	FX_CALL(fi_ep_bind(ctx->ep, &ctx->rxcntr->fid, FI_RECV));
	if (setup->min_multi_recv)
		FX_CALL(fi_setopt(&ctx->ep->fid, FI_OPT_ENDPOINT,
				  FI_OPT_MIN_MULTI_RECV,
				  &setup->min_multi_recv,
				  sizeof(setup->min_multi_recv)));
	FX_CALL(fi_enable(ctx->ep));

	fx_oob_exchange(ctx);
}

void fx_fini_nosync(struct fx_ctx *ctx)
{
	struct fid *fids[] = {
		ctx->ep ? &ctx->ep->fid : NULL,
		ctx->txcntr ? &ctx->txcntr->fid : NULL,
		ctx->rxcntr ? &ctx->rxcntr->fid : NULL,
		ctx->txcq ? &ctx->txcq->fid : NULL,
		ctx->rxcq ? &ctx->rxcq->fid : NULL,
		ctx->av ? &ctx->av->fid : NULL,
		ctx->domain ? &ctx->domain->fid : NULL,
		ctx->fabric ? &ctx->fabric->fid : NULL,
	};
	size_t f;
	int i;

	for (f = 0; f < sizeof(fids) / sizeof(fids[0]); f++)
		if (fids[f])
			FX_CALL(fi_close(fids[f]));
	fi_freeinfo(ctx->info);
	for (i = 0; i < ctx->npeers; i++)
		close(ctx->oob_fd[i]);
	ctx->ep = NULL;
}

void fx_fini(struct fx_ctx *ctx)
{
	/*
	 * Nobody closes while a peer may still need it (a rendezvous pull
	 * answered, a last acknowledgement).
	 */
	fx_oob_sync(ctx);
	fx_fini_nosync(ctx);
}
