/*
 * fb_fabric.c - what the benchmark programs do through libfabric (see
 * fb_common.h): fabric, domain and endpoint set-up, memory registration
 * for any mr_mode and the data patterns, CQ progress, posting with
 * -FI_EAGAIN retry, and the control messages and rounds between client
 * and server. Everything here goes through the public libfabric API and
 * is the same for every provider: CQs are read with fi_cq_read in a busy
 * loop, never with a wait object.
 *
 * Not here: the command line, lifetime, result lines, the OOB socket and
 * timing (fb_common.c), and the measurements (one program each).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "fb_common.h"

/* ---- fabric set-up ------------------------------------------------ */

struct fi_info *fb_hints(struct fb_ctx *ctx, uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		fb_fail(ctx, "fi_allocinfo");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = caps;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
		FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	if (ctx->opts.prov) {
		hints->fabric_attr->prov_name = strdup(ctx->opts.prov);
		if (!hints->fabric_attr->prov_name)
			fb_fail(ctx, "strdup");
	}
	return hints;
}

int fb_getinfo(struct fb_ctx *ctx, struct fi_info *hints)
{
	struct fi_info *info = NULL;
	int ret;

	ret = fi_getinfo(FI_VERSION(1, 17), ctx->opts.src_addr, NULL,
			 FI_SOURCE, hints, &info);
	if ((ret == -FI_ENODATA || (!ret && !info)) &&
	    hints->addr_format == FI_SOCKADDR_IN) {
		/*
		 * A provider without IP addresses (shm: FI_ADDR_STR names)
		 * matches neither the format nor -s: ask again for its own
		 * format and its default source. Names are exchanged as
		 * opaque bytes over OOB, so any format does.
		 */
		if (info)
			fi_freeinfo(info);
		info = NULL;
		hints->addr_format = FI_FORMAT_UNSPEC;
		ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				 &info);
		hints->addr_format = FI_SOCKADDR_IN;
		/* an IP provider's answer here would ignore -s: not that */
		if (!ret && info && (info->addr_format == FI_SOCKADDR ||
				     info->addr_format == FI_SOCKADDR_IN ||
				     info->addr_format == FI_SOCKADDR_IN6)) {
			fi_freeinfo(info);
			info = NULL;
			ret = -FI_ENODATA;
		}
	}
	if (ret == -FI_ENODATA || (!ret && !info))
		return -FI_ENODATA;
	if (ret)
		fb_fail(ctx, "fi_getinfo: %s", fi_strerror(-ret));
	ctx->info = info;
	return 0;
}

void fb_domain_open(struct fb_ctx *ctx)
{
	int ret;

	ret = fi_fabric(ctx->info->fabric_attr, &ctx->fabric, NULL);
	if (ret)
		fb_fail(ctx, "fi_fabric: %s", fi_strerror(-ret));
	ret = fi_domain(ctx->fabric, ctx->info, &ctx->domain, NULL);
	if (ret)
		fb_fail(ctx, "fi_domain: %s", fi_strerror(-ret));
}

static int fb_ep_create(struct fb_ctx *ctx, size_t rx_size, size_t tx_size)
{
	struct fi_info *info = ctx->info;
	size_t rx_orig = info->rx_attr->size, tx_orig = info->tx_attr->size;
	int ret;

	/* ask for deeper queues; fall back to the defaults if refused */
	if (rx_size > rx_orig)
		info->rx_attr->size = rx_size;
	if (tx_size > tx_orig)
		info->tx_attr->size = tx_size;
	ret = fi_endpoint(ctx->domain, info, &ctx->ep, NULL);
	if (ret && (info->rx_attr->size != rx_orig ||
		    info->tx_attr->size != tx_orig)) {
		info->rx_attr->size = rx_orig;
		info->tx_attr->size = tx_orig;
		ret = fi_endpoint(ctx->domain, info, &ctx->ep, NULL);
	}
	return ret;
}

static void fb_ep_connect(struct fb_ctx *ctx)
{
	char name[256], peer[256];
	size_t len = sizeof(name);
	uint32_t my_len, peer_len;
	int ret;

	memset(name, 0, sizeof(name));
	ret = fi_getname(&ctx->ep->fid, name, &len);
	if (ret)
		fb_fail(ctx, "fi_getname: %s", fi_strerror(-ret));
	my_len = (uint32_t)len;
	fb_oob_xchg(ctx, &my_len, &peer_len, sizeof(my_len));
	if (peer_len > sizeof(peer))
		fb_fail(ctx, "peer name too long (%u)", peer_len);
	fb_oob_send(ctx, name, len);
	fb_oob_recv(ctx, peer, peer_len);
	ret = fi_av_insert(ctx->av, peer, 1, &ctx->peer, 0, NULL);
	if (ret != 1)
		fb_fail(ctx, "fi_av_insert: %s", fi_strerror(ret < 0 ? -ret : FI_EOTHER));
}

void fb_ep_open(struct fb_ctx *ctx, size_t rx_size, size_t tx_size,
		struct fid_cntr *send_cntr, struct fid_cntr *recv_cntr)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = FI_WAIT_NONE,
		.size = 4096,
	};
	struct fi_av_attr av_attr = {
		.type = ctx->info->domain_attr->av_type != FI_AV_UNSPEC ?
			ctx->info->domain_attr->av_type : FI_AV_MAP,
		.count = 4,
	};
	int ret;

	ret = fi_cq_open(ctx->domain, &cq_attr, &ctx->cq, NULL);
	if (ret)
		fb_fail(ctx, "fi_cq_open: %s", fi_strerror(-ret));
	ret = fi_av_open(ctx->domain, &av_attr, &ctx->av, NULL);
	if (ret)
		fb_fail(ctx, "fi_av_open: %s", fi_strerror(-ret));
	ret = fb_ep_create(ctx, rx_size, tx_size);
	if (ret)
		fb_fail(ctx, "fi_endpoint: %s", fi_strerror(-ret));
	ret = fi_ep_bind(ctx->ep, &ctx->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(ctx->ep, &ctx->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret && send_cntr)
		ret = fi_ep_bind(ctx->ep, &send_cntr->fid, FI_SEND);
	if (!ret && recv_cntr)
		ret = fi_ep_bind(ctx->ep, &recv_cntr->fid, FI_RECV);
	if (ret)
		fb_fail(ctx, "fi_ep_bind: %s", fi_strerror(-ret));
	ret = fi_enable(ctx->ep);
	if (ret)
		fb_fail(ctx, "fi_enable: %s", fi_strerror(-ret));

	ctx->inject_size = ctx->info->tx_attr->inject_size;
	ctx->mr_local = (ctx->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
	ctx->tx_cnt = ctx->rx_cnt = ctx->rdata_cnt = 0;
	if (ctx->mr_local)
		fb_mr_reg(ctx, &ctx->ctrl, sizeof(ctx->ctrl), FI_SEND | FI_RECV,
			  &ctx->ctrl_mr);
	fb_ep_connect(ctx);
}

void fb_ep_close(struct fb_ctx *ctx)
{
	fb_mr_close(&ctx->ctrl_mr);
	if (ctx->ep)
		fi_close(&ctx->ep->fid);
	if (ctx->av)
		fi_close(&ctx->av->fid);
	if (ctx->cq)
		fi_close(&ctx->cq->fid);
	ctx->ep = NULL;
	ctx->av = NULL;
	ctx->cq = NULL;
}

void fb_domain_close(struct fb_ctx *ctx)
{
	fb_ep_close(ctx);
	if (ctx->domain)
		fi_close(&ctx->domain->fid);
	if (ctx->fabric)
		fi_close(&ctx->fabric->fid);
	if (ctx->info)
		fi_freeinfo(ctx->info);
	ctx->domain = NULL;
	ctx->fabric = NULL;
	ctx->info = NULL;
}

/* ---- memory ------------------------------------------------------- */

void *fb_alloc(struct fb_ctx *ctx, size_t len)
{
	void *buf;

	if (posix_memalign(&buf, 4096, len ? len : 1))
		fb_fail(ctx, "out of memory (%zu bytes)", len);
	memset(buf, 0, len);
	return buf;
}

void fb_mr_reg(struct fb_ctx *ctx, void *buf, size_t len, uint64_t access,
	       struct fb_mr *mr)
{
	static uint64_t next_key = 1;
	uint64_t mode = ctx->info->domain_attr->mr_mode;
	int ret;

	memset(mr, 0, sizeof(*mr));
	ret = fi_mr_reg(ctx->domain, buf, len, access, 0, next_key++, 0,
			&mr->mr, NULL);
	if (ret)
		fb_fail(ctx, "fi_mr_reg(%zu bytes): %s", len, fi_strerror(-ret));
	if (mode & FI_MR_ENDPOINT) {
		ret = fi_mr_bind(mr->mr, &ctx->ep->fid, 0);
		if (!ret)
			ret = fi_mr_enable(mr->mr);
		if (ret)
			fb_fail(ctx, "fi_mr_bind/enable: %s", fi_strerror(-ret));
	}
	mr->desc = ctx->mr_local ? fi_mr_desc(mr->mr) : NULL;
	mr->key = fi_mr_key(mr->mr);
	mr->addr = (mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf : 0;
}

void fb_mr_close(struct fb_mr *mr)
{
	if (mr->mr)
		fi_close(&mr->mr->fid);
	memset(mr, 0, sizeof(*mr));
}

void fb_mr_xchg(struct fb_ctx *ctx, const struct fb_mr *mine, size_t len,
		struct fb_rmr *peer)
{
	struct fb_rmr out = { .key = mine->key, .addr = mine->addr,
			      .len = len };

	fb_oob_xchg(ctx, &out, peer, sizeof(out));
}

/* a word pattern that differs per seed and per position */
static inline uint64_t fb_word(uint64_t seed, size_t i)
{
	return (seed * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)i * 0xC2B2AE3D27D4EB4FULL);
}

void fb_fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t word;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		word = fb_word(seed, i);
		memcpy((char *)buf + i, &word, 8);
	}
	word = fb_word(seed, i);
	memcpy((char *)buf + i, &word, len - i);
}

ssize_t fb_check(const void *buf, size_t len, uint64_t seed)
{
	const unsigned char *bytes = buf;
	uint64_t word;
	size_t i, j;

	for (i = 0; i < len; i += 8) {
		word = fb_word(seed, i);
		if (memcmp(bytes + i, &word, len - i < 8 ? len - i : 8))
			for (j = 0; j < 8 && i + j < len; j++)
				if (bytes[i + j] != ((unsigned char *)&word)[j])
					return (ssize_t)(i + j);
	}
	return -1;
}

/* ---- progress and posting ----------------------------------------- */

static void fb_cq_error(struct fb_ctx *ctx)
{
	struct fi_cq_err_entry err = { 0 };
	char buf[256];
	ssize_t ret;

	ret = fi_cq_readerr(ctx->cq, &err, 0);
	if (ret < 0)
		fb_fail(ctx, "fi_cq_readerr: %s", fi_strerror((int)-ret));
	fb_fail(ctx, "completion error: %s (%s), len %zu olen %zu",
		fi_strerror(err.err),
		fi_cq_strerror(ctx->cq, err.prov_errno, err.err_data, buf,
			       sizeof(buf)), err.len, err.olen);
}

static void fb_complete(struct fb_ctx *ctx, const struct fi_cq_tagged_entry *ent)
{
	struct fb_op *op = ent->op_context;

	if (ent->flags & FI_REMOTE_CQ_DATA && ent->flags & FI_RMA) {
		ctx->rdata_cnt++;
		ctx->last_rdata = ent->data;
	}
	if (!op) {
		if (!(ent->flags & FI_REMOTE_CQ_DATA))
			fb_fail(ctx, "completion without context (flags 0x%llx)",
				(unsigned long long)ent->flags);
		return;
	}
	op->done++;
	op->len = ent->len;
	op->tag = ent->tag;
	op->data = ent->data;
	op->flags = ent->flags;
	if (op->kind == FB_OP_RECV)
		ctx->rx_cnt++;
	else
		ctx->tx_cnt++;
	if (ctx->on_complete)
		ctx->on_complete(ctx, op);
}

int fb_progress(struct fb_ctx *ctx)
{
	struct fi_cq_tagged_entry ent[16];
	ssize_t ret, i;

	ret = fi_cq_read(ctx->cq, ent, 16);
	if (ret > 0) {
		for (i = 0; i < ret; i++)
			fb_complete(ctx, &ent[i]);
		return (int)ret;
	}
	if (ret == -FI_EAGAIN)
		return 0;
	if (ret == -FI_EAVAIL)
		fb_cq_error(ctx);
	fb_fail(ctx, "fi_cq_read: %s", fi_strerror((int)-ret));
}

void fb_wait_tx(struct fb_ctx *ctx, uint64_t count)
{
	while (ctx->tx_cnt < count)
		fb_progress(ctx);
}

void fb_wait_rx(struct fb_ctx *ctx, uint64_t count)
{
	while (ctx->rx_cnt < count)
		fb_progress(ctx);
}

void fb_wait_op(struct fb_ctx *ctx, struct fb_op *op)
{
	while (!op->done)
		fb_progress(ctx);
}

/* true once a post has been refused for FB_EAGAIN_STUCK_SEC */
static bool fb_stuck(double *since)
{
	double now = fb_now();

	if (*since == 0.0) {
		*since = now;
		return false;
	}
	return now - *since > FB_EAGAIN_STUCK_SEC;
}

static void fb_op_prep(struct fb_op *op, enum fb_op_kind kind)
{
	op->kind = kind;
	op->done = 0;
}

int fb_tsend(struct fb_ctx *ctx, const void *buf, size_t len, void *desc,
	     uint64_t tag, struct fb_op *op)
{
	double since = 0.0;
	ssize_t ret;

	fb_op_prep(op, FB_OP_SEND);
	for (;;) {
		ret = fi_tsend(ctx->ep, buf, len, desc, ctx->peer, tag, op);
		if (!ret)
			return 0;
		if (ret != -FI_EAGAIN)
			fb_fail(ctx, "fi_tsend(%zu): %s", len, fi_strerror((int)-ret));
		if (fb_stuck(&since))
			return -FI_EAGAIN;
		fb_progress(ctx);
	}
}

int fb_tinject(struct fb_ctx *ctx, const void *buf, size_t len, uint64_t tag)
{
	double since = 0.0;
	ssize_t ret;

	for (;;) {
		ret = fi_tinject(ctx->ep, buf, len, ctx->peer, tag);
		if (!ret)
			return 0;
		if (ret != -FI_EAGAIN)
			fb_fail(ctx, "fi_tinject(%zu): %s", len, fi_strerror((int)-ret));
		if (fb_stuck(&since))
			return -FI_EAGAIN;
		fb_progress(ctx);
	}
}

int fb_trecv(struct fb_ctx *ctx, void *buf, size_t len, void *desc,
	     fi_addr_t src, uint64_t tag, uint64_t ignore, struct fb_op *op)
{
	double since = 0.0;
	ssize_t ret;

	fb_op_prep(op, FB_OP_RECV);
	for (;;) {
		ret = fi_trecv(ctx->ep, buf, len, desc, src, tag, ignore, op);
		if (!ret)
			return 0;
		/* shm has a fixed pool of receive entries and says so with
		 * -FI_ENOMEM, not -FI_EAGAIN: a limit as well, reported */
		if (ret == -FI_ENOMEM)
			return -FI_ENOMEM;
		if (ret != -FI_EAGAIN)
			fb_fail(ctx, "fi_trecv(%zu): %s", len, fi_strerror((int)-ret));
		if (fb_stuck(&since))
			return -FI_EAGAIN;
		fb_progress(ctx);
	}
}

void fb_tsend_small(struct fb_ctx *ctx, const void *buf, size_t len,
		    void *desc, uint64_t tag, struct fb_op *op)
{
	int ret;

	if (!ctx->opts.no_inject && len <= ctx->inject_size) {
		ret = fb_tinject(ctx, buf, len, tag);
	} else {
		ret = fb_tsend(ctx, buf, len, desc, tag, op);
		if (!ret)
			fb_wait_op(ctx, op);
	}
	if (ret)
		fb_fail(ctx, "send of %zu bytes refused for %.0f s",
			len, FB_EAGAIN_STUCK_SEC);
}

/* ---- control messages ------------------------------------------- */

void fb_ctrl_post(struct fb_ctx *ctx, uint64_t tag)
{
	ctx->ctrl.rx = 0;
	ctx->ctrl_tag = tag;
	if (fb_trecv(ctx, &ctx->ctrl.rx, sizeof(ctx->ctrl.rx), ctx->ctrl_mr.desc,
		     ctx->peer, tag, 0, &ctx->ctrl_op))
		fb_fail(ctx, "control receive refused");
}

void fb_ctrl_send(struct fb_ctx *ctx, uint64_t tag, uint64_t value)
{
	int ret;

	ctx->ctrl.tx = value;
	if (ctx->inject_size >= sizeof(ctx->ctrl.tx)) {
		ret = fb_tinject(ctx, &ctx->ctrl.tx, sizeof(ctx->ctrl.tx), tag);
	} else {
		ret = fb_tsend(ctx, &ctx->ctrl.tx, sizeof(ctx->ctrl.tx),
			       ctx->ctrl_mr.desc, tag, &ctx->ctrl_tx_op);
		if (!ret)
			fb_wait_op(ctx, &ctx->ctrl_tx_op);
	}
	if (ret)
		fb_fail(ctx, "control send refused");
}

uint64_t fb_ctrl_wait(struct fb_ctx *ctx)
{
	struct fb_op *op = &ctx->ctrl_op;

	fb_wait_op(ctx, op);
	if (op->len != sizeof(uint64_t) || op->tag != ctx->ctrl_tag)
		fb_fail(ctx, "bad control message: len %zu tag 0x%llx", op->len,
			(unsigned long long)op->tag);
	return ctx->ctrl.rx;
}

double fb_rounds_client(struct fb_ctx *ctx, const struct fb_rounds *r,
			int *rounds_p)
{
	double start = 0.0, end;
	uint64_t flags;
	int n;

	fb_ctrl_post(ctx, FB_TAG_ACK);
	fb_oob_sync(ctx);
	for (n = 0;; n++) {
		if (n == FB_WARM_ROUNDS)
			start = fb_now();
		r->round(r->arg);
		flags = fb_ctrl_wait(ctx);
		if (flags == FB_ACK_STOP)
			break;
		if (flags != FB_ACK_MORE)
			fb_fail(ctx, "bad ack 0x%llx", (unsigned long long)flags);
		fb_ctrl_post(ctx, FB_TAG_ACK);
	}
	end = fb_now();
	if (n + 1 <= FB_WARM_ROUNDS)
		fb_fail(ctx, "server stopped before the timed rounds");
	*rounds_p = n + 1;
	return end - start;
}

int fb_rounds_server(struct fb_ctx *ctx, const struct fb_rounds *r)
{
	int min_timed = ctx->opts.quick ? 1 : 2, n, timed;
	uint64_t base = ctx->rx_cnt;
	double start = 0.0;
	bool stop;

	fb_oob_sync(ctx);
	for (n = 0;; n++) {
		fb_wait_rx(ctx, base + (uint64_t)(n + 1) * r->per_round);
		r->check(r->arg, n);
		timed = n + 1 - FB_WARM_ROUNDS;
		if (timed == 0)
			start = fb_now();
		stop = timed >= r->max_timed ||
		       (timed >= min_timed && fb_now() - start >= r->cap);
		if (!stop)
			r->repost(r->arg);
		fb_ctrl_send(ctx, FB_TAG_ACK, stop ? FB_ACK_STOP : FB_ACK_MORE);
		if (stop)
			return n + 1;
	}
}
