/*
 * p4t_verbs.c - the verbs transport's iface (behaviour: p4t_verbs.h): the
 * inner TCP iface and its upcalls, links (RC QPs, their bootstrap over
 * TCP and state transitions), failure and teardown, progress, the wait
 * fd, open and close, the ops table and statistics.
 *
 * Not here: devices, ports and GID selection (p4t_verbs_dev.c); sends,
 * receives, RMA, exposures and completions (p4t_verbs_data.c);
 * application memory registrations (p4t_verbs_mr.c).
 *
 * Bootstrap records travel on the TCP link as messages of this transport's
 * own (p4t_send with P4T_SEND_XPORT; TCP frames them as P4W_T_XPORT and
 * hands them to our xport_recv upcall, in order with the link's other
 * messages), so the verbs layer never reads an engine header: everything
 * TCP hands to recv is the engine's and goes up as it is. An engine on
 * the bare TCP transport (no xport_recv) refuses them as malformed and
 * closes the link, the right outcome for a transport mismatch.
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_verbs_priv.h"
#include "p4t_tcp.h"
#include "p4u_compiler.h"
#include "p4u_log.h"
#include "p4u_time.h"

/* ---- links ----------------------------------------------------------------- */

void p4t_verbs_kick(struct p4t_verbs_iface *iface)
{
	uint64_t one = 1;

	if (write(iface->kickfd, &one, sizeof(one)) < 0)
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: kick: %s",
				strerror(errno));
}

struct p4t_verbs_conn *p4t_verbs_conn_by_qpn(struct p4t_verbs_iface *iface,
					     uint32_t qpn)
{
	struct p4t_verbs_conn *conn;

	if (iface->last_hit && iface->last_hit->qp &&
	    iface->last_hit->qp->qp_num == qpn)
		return iface->last_hit;
	p4u_list_foreach_entry(&iface->conns, conn, struct p4t_verbs_conn, link)
		if (conn->qp && conn->qp->qp_num == qpn) {
			iface->last_hit = conn;
			return conn;
		}
	return NULL;
}

static int p4t_verbs_qp_create(struct p4t_verbs_conn *conn)
{
	struct p4t_verbs_iface *iface = conn->iface;
	struct ibv_qp_init_attr qia = {
		.qp_context = conn,
		.send_cq = iface->cq,
		.recv_cq = iface->cq,
		.srq = iface->srq,
		.cap = {
			.max_send_wr = P4T_VERBS_QP_WR,
			.max_send_sge = iface->max_sge,
			.max_inline_data = iface->max_inline,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = iface->port,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_LOCAL_WRITE,
	};
	uint32_t psn;

	conn->qp = ibv_create_qp(iface->pd, &qia);
	if (!conn->qp && iface->max_inline) {
		/* the device may not do inline data at all */
		qia.cap.max_inline_data = 0;
		conn->qp = ibv_create_qp(iface->pd, &qia);
	}
	if (!conn->qp) {
		p4u_warn(P4U_LOG_TRANSPORT, "verbs: create qp: %s",
			 strerror(errno));
		return -FI_ENOMEM;
	}
	if (qia.cap.max_inline_data < iface->max_inline)
		iface->max_inline = qia.cap.max_inline_data;
	if (ibv_modify_qp(conn->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		p4u_warn(P4U_LOG_TRANSPORT, "verbs: qp to init: %s",
			 strerror(errno));
		ibv_destroy_qp(conn->qp);
		conn->qp = NULL;
		return -FI_EIO;
	}
	if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
		psn = (uint32_t)p4u_time_ns();
	conn->psn = psn & 0xffffff;
	return 0;
}

/* Send a BOOT or READY record on conn's TCP link (our own message). */
static int p4t_verbs_boot_send(struct p4t_verbs_conn *conn, uint8_t kind)
{
	struct p4t_verbs_iface *iface = conn->iface;
	struct p4t_verbs_boot boot = {
		.magic = htole32(P4T_VERBS_BOOT_MAGIC),
		.version = htole16(P4T_VERBS_BOOT_VERSION),
		.kind = kind,
		.link_layer = iface->link_layer,
		.qpn = htole32(conn->qp->qp_num),
		.psn = htole32(conn->psn),
		.mtu = htole32(iface->mtu),
		.lid = htole16(iface->lid),
	};
	int ret;

	memcpy(boot.gid, iface->gid.raw, sizeof(boot.gid));
	ret = p4t_send(iface->tcp, conn->tcp, &boot, sizeof(boot), NULL, 0,
		       NULL, P4T_SEND_XPORT);
	return ret < 0 ? ret : 0;
}

/* A record the peer sent (xport_recv): its fields in host order. */
static bool p4t_verbs_boot_parse(const void *msg, size_t len,
				 struct p4t_verbs_boot *boot)
{
	if (len != sizeof(*boot))
		return false;
	memcpy(boot, msg, sizeof(*boot));
	boot->magic = le32toh(boot->magic);
	boot->version = le16toh(boot->version);
	boot->qpn = le32toh(boot->qpn);
	boot->psn = le32toh(boot->psn);
	boot->mtu = le32toh(boot->mtu);
	boot->lid = le16toh(boot->lid);
	return true;
}

/* The peer's BOOT: our QP to RTR (towards it) and RTS. */
static int p4t_verbs_qp_connect(struct p4t_verbs_conn *conn,
				const struct p4t_verbs_boot *peer)
{
	struct p4t_verbs_iface *iface = conn->iface;
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = P4U_MIN(iface->mtu, (enum ibv_mtu)peer->mtu),
		.dest_qp_num = peer->qpn,
		.rq_psn = peer->psn,
		.max_dest_rd_atomic = (uint8_t)iface->rd_atom,
		.min_rnr_timer = 12,	/* 0.64 ms */
		.ah_attr = {
			.port_num = iface->port,
			.dlid = peer->lid,
		},
	};

	if (peer->magic != P4T_VERBS_BOOT_MAGIC ||
	    peer->version != P4T_VERBS_BOOT_VERSION ||
	    peer->link_layer != iface->link_layer || !peer->qpn ||
	    peer->qpn > 0xffffff || peer->psn > 0xffffff ||
	    peer->mtu < IBV_MTU_256 || peer->mtu > IBV_MTU_4096)
		return -FI_EPROTO;
	if (iface->link_layer == IBV_LINK_LAYER_ETHERNET) {
		qa.ah_attr.is_global = 1;
		memcpy(qa.ah_attr.grh.dgid.raw, peer->gid, 16);
		qa.ah_attr.grh.sgid_index = (uint8_t)iface->gid_index;
		qa.ah_attr.grh.hop_limit = 64;
	}
	if (ibv_modify_qp(conn->qp, &qa, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
		p4u_warn(P4U_LOG_TRANSPORT, "verbs: qp to rtr: %s",
			 strerror(errno));
		return -FI_EIO;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	qa.timeout = 14;	/* 4.096 us << 14 = 67 ms per try */
	qa.retry_cnt = 7;
	qa.rnr_retry = 7;	/* infinite: the SRQ backstop */
	qa.sq_psn = conn->psn;
	qa.max_rd_atomic = (uint8_t)iface->rd_atom;
	if (ibv_modify_qp(conn->qp, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
		p4u_warn(P4U_LOG_TRANSPORT, "verbs: qp to rts: %s",
			 strerror(errno));
		return -FI_EIO;
	}
	return 0;
}

static struct p4t_verbs_conn *p4t_verbs_conn_create(
	struct p4t_verbs_iface *iface, struct p4t_conn *tcp, bool self)
{
	struct p4t_verbs_conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	conn->iface = iface;
	conn->tcp = tcp;
	p4u_list_init(&conn->pending);
	p4u_list_node_init(&conn->link);
	if (self) {
		conn->state = P4T_VERBS_CONN_SELF;
	} else {
		conn->state = P4T_VERBS_CONN_BOOT;
		if (p4t_verbs_qp_create(conn) ||
		    p4t_verbs_boot_send(conn, P4T_VERBS_BOOT)) {
			if (conn->qp)
				ibv_destroy_qp(conn->qp);
			free(conn);
			return NULL;
		}
	}
	tcp->engine_ctx = conn;
	p4u_list_insert_tail(&iface->conns, &conn->link);
	iface->stats.links++;
	return conn;
}

static void p4t_verbs_conn_destroy(struct p4t_verbs_conn *conn)
{
	struct p4t_verbs_iface *iface = conn->iface;

	if (iface->last_hit == conn)
		iface->last_hit = NULL;
	if (conn->qp && ibv_destroy_qp(conn->qp))
		p4u_warn(P4U_LOG_TRANSPORT, "verbs: destroy qp: %s",
			 strerror(errno));
	p4u_list_remove(&conn->link);
	free(conn);
}

/*
 * Fail conn: its QP to the error state (outstanding work flushes), its
 * TCP link closed. Progress completes the rest (p4t_verbs_failing).
 */
void p4t_verbs_conn_fail(struct p4t_verbs_conn *conn, int status)
{
	struct p4t_verbs_iface *iface = conn->iface;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

	if (conn->state == P4T_VERBS_CONN_FAILING)
		return;
	/* a link the engine or the iface's close drops did not fail */
	if (conn->state != P4T_VERBS_CONN_SELF && !conn->closed &&
	    !iface->closing)
		iface->stats.link_failures++;
	conn->state = P4T_VERBS_CONN_FAILING;
	conn->fail_status = status;
	if (conn->qp && ibv_modify_qp(conn->qp, &qa, IBV_QP_STATE))
		p4u_warn(P4U_LOG_TRANSPORT, "verbs: qp to error: %s",
			 strerror(errno));
	if (conn->tcp) {
		conn->tcp->engine_ctx = NULL;
		p4t_conn_close(iface->tcp, conn->tcp);
		conn->tcp = NULL;
	}
	p4u_list_remove(&conn->link);
	p4u_list_insert_tail(&iface->failing, &conn->link);
	iface->stats.links--;
	p4t_verbs_kick(iface);
}

/* Failed links whose work has all come back: report and free. */
static int p4t_verbs_failing(struct p4t_verbs_iface *iface)
{
	struct p4t_verbs_conn *conn, *tmp;
	int done = 0;

	p4u_list_foreach_entry_safe(&iface->failing, conn, tmp,
				    struct p4t_verbs_conn, link) {
		p4t_verbs_pend_fail(conn, -FI_ECONNABORTED);
		if (conn->sq_posted)
			continue;	/* flushes still to come */
		if (!conn->closed && !iface->closing)
			iface->upcalls->conn_failed(iface->upcall_ctx,
						    &conn->base,
						    conn->fail_status);
		p4t_verbs_conn_destroy(conn);
		done++;
	}
	return done;
}

/* ---- the inner TCP iface's upcalls --------------------------------------------- */

/* The engine's messages over TCP (the self queue): up as they are. */
static int p4t_verbs_tcp_recv(void *ctx, struct p4t_conn *tcp, const void *msg,
			      size_t len)
{
	struct p4t_verbs_iface *iface = ctx;
	struct p4t_verbs_conn *conn = tcp->engine_ctx;

	if (!conn || iface->closing)
		return 0;
	return iface->upcalls->recv(iface->upcall_ctx, &conn->base, msg, len);
}

/* Our peer's bootstrap record: BOOT (its QP) or READY (it can receive). */
static int p4t_verbs_tcp_xport_recv(void *ctx, struct p4t_conn *tcp,
				    const void *msg, size_t len)
{
	struct p4t_verbs_iface *iface = ctx;
	struct p4t_verbs_conn *conn = tcp->engine_ctx;
	struct p4t_verbs_boot boot;
	int ret;

	if (!conn || iface->closing)
		return 0;
	if (!p4t_verbs_boot_parse(msg, len, &boot)) {
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: bootstrap record "
				"of %zu bytes", len);
		return -FI_EPROTO;
	}
	if (boot.kind == P4T_VERBS_BOOT &&
	    conn->state == P4T_VERBS_CONN_BOOT) {
		ret = p4t_verbs_qp_connect(conn, &boot);
		if (!ret)
			ret = p4t_verbs_boot_send(conn, P4T_VERBS_READY);
		if (ret)
			return ret;	/* the TCP link fails: so do we */
		conn->state = P4T_VERBS_CONN_READY_WAIT;
		return 0;
	}
	if (boot.kind == P4T_VERBS_READY &&
	    conn->state == P4T_VERBS_CONN_READY_WAIT) {
		conn->state = P4T_VERBS_CONN_UP;
		iface->stats.qps_up++;
		p4t_verbs_pend_flush(conn);
		return 0;
	}
	p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: unexpected bootstrap "
			"record %u in state %d", boot.kind, conn->state);
	return -FI_EPROTO;
}

static void p4t_verbs_tcp_send_done(void *ctx, void *op_ctx, int status)
{
	struct p4t_verbs_iface *iface = ctx;

	/* only self-queue sends of the engine are referenced by TCP */
	iface->upcalls->send_done(iface->upcall_ctx, op_ctx, status);
}

static void p4t_verbs_tcp_rma_done(void *ctx, void *op_ctx, int status)
{
	struct p4t_verbs_iface *iface = ctx;

	iface->upcalls->rma_done(iface->upcall_ctx, op_ctx, status);
}

static int p4t_verbs_tcp_conn_new(void *ctx, struct p4t_conn *tcp,
				  const void *addr, size_t addrlen)
{
	struct p4t_verbs_iface *iface = ctx;
	struct p4t_verbs_conn *conn;
	int ret;

	conn = p4t_verbs_conn_create(iface, tcp, false);
	if (!conn)
		return -FI_ENOMEM;
	ret = iface->upcalls->conn_new(iface->upcall_ctx, &conn->base, addr,
				       addrlen);
	if (ret) {
		/* refused: TCP drops the link, no conn_failed for it */
		tcp->engine_ctx = NULL;
		conn->tcp = NULL;
		conn->closed = true;
		p4t_verbs_conn_fail(conn, ret);
	}
	return ret;
}

static void p4t_verbs_tcp_conn_failed(void *ctx, struct p4t_conn *tcp,
				      int status)
{
	struct p4t_verbs_conn *conn = tcp->engine_ctx;

	if (!conn)
		return;
	tcp->engine_ctx = NULL;
	conn->tcp = NULL;	/* gone with the return */
	p4t_verbs_conn_fail(conn, status);
}

static const struct p4t_upcalls p4t_verbs_tcp_upcalls = {
	.recv = p4t_verbs_tcp_recv,
	.send_done = p4t_verbs_tcp_send_done,
	.rma_done = p4t_verbs_tcp_rma_done,
	.conn_new = p4t_verbs_tcp_conn_new,
	.conn_failed = p4t_verbs_tcp_conn_failed,
	.xport_recv = p4t_verbs_tcp_xport_recv,
};

/* ---- ops ------------------------------------------------------------------------ */

static int p4t_verbs_conn_get(struct p4t_iface *iface_, const void *addr,
			      size_t addrlen, struct p4t_conn **conn_p)
{
	struct p4t_verbs_iface *iface = p4t_verbs_iface_of(iface_);
	struct p4t_verbs_conn *conn;
	struct p4t_conn *tcp;
	bool self;
	int ret;

	ret = p4t_conn_get(iface->tcp, addr, addrlen, &tcp);
	if (ret)
		return ret;
	if (tcp->engine_ctx) {
		*conn_p = tcp->engine_ctx;
		return 0;
	}
	self = addrlen == iface->self_addrlen &&
	       !memcmp(addr, &iface->self_addr, addrlen);
	conn = p4t_verbs_conn_create(iface, tcp, self);
	if (!conn) {
		p4t_conn_close(iface->tcp, tcp);
		return -FI_ENOMEM;
	}
	*conn_p = &conn->base;
	return 0;
}

static void p4t_verbs_conn_close(struct p4t_iface *iface_,
				 struct p4t_conn *conn_)
{
	struct p4t_verbs_conn *conn = (struct p4t_verbs_conn *)conn_;

	(void)iface_;
	conn->closed = true;
	p4t_verbs_conn_fail(conn, -FI_ECONNABORTED);
}

static int p4t_verbs_getname(struct p4t_iface *iface_, void *addr,
			     size_t *addrlen)
{
	return p4t_getname(p4t_verbs_iface_of(iface_)->tcp, addr, addrlen);
}

static void p4t_verbs_iface_query(struct p4t_iface *iface_,
				  struct p4t_iface_attr *attr)
{
	struct p4t_verbs_iface *iface = p4t_verbs_iface_of(iface_);
	struct p4t_iface_attr tattr;

	p4t_iface_query(iface->tcp, &tattr);
	attr->max_inline = iface->max_inline;
	attr->max_msg = P4T_VERBS_BUF_SIZE;
	attr->max_rma = iface->max_rma * P4T_VERBS_QP_WR;
	attr->rma_native = true;
	attr->addr_len = tattr.addr_len;
}

/* Device events: the SRQ ran low, a QP broke. */
static int p4t_verbs_async(struct p4t_verbs_iface *iface)
{
	struct ibv_srq_attr sa = { .srq_limit = P4T_VERBS_SRQ_LIMIT };
	struct ibv_async_event ev;
	struct p4t_verbs_conn *conn;
	int done = 0;

	while (!ibv_get_async_event(iface->ctx, &ev)) {
		done++;
		switch (ev.event_type) {
		case IBV_EVENT_SRQ_LIMIT_REACHED:
			iface->stats.srq_limit_events++;
			p4t_verbs_recv_repost(iface, true);
			/* the limit is one-shot: arm it again */
			if (ibv_modify_srq(iface->srq, &sa, IBV_SRQ_LIMIT))
				p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: srq "
						"limit: %s", strerror(errno));
			break;
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_PATH_MIG_ERR:
			conn = ev.element.qp->qp_context;
			p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: %s",
					ibv_event_type_str(ev.event_type));
			if (conn)
				p4t_verbs_conn_fail(conn, -FI_EIO);
			break;
		default:
			p4u_info(P4U_LOG_TRANSPORT, "verbs: event %s",
				 ibv_event_type_str(ev.event_type));
			break;
		}
		ibv_ack_async_event(&ev);
	}
	return done;
}

static int p4t_verbs_progress(struct p4t_iface *iface_, int budget)
{
	struct p4t_verbs_iface *iface = p4t_verbs_iface_of(iface_);
	struct ibv_cq *cq;
	void *cq_ctx;
	uint64_t kicks;
	int done = 0, events = 0;

	if (read(iface->kickfd, &kicks, sizeof(kicks)) > 0)
		done++;
	done += p4t_verbs_async(iface);
	/* the channel said the CQ has work: ack and arm it again first,
	 * so what arrives after the poll below wakes the fd */
	while (!ibv_get_cq_event(iface->chan, &cq, &cq_ctx))
		events++;
	if (events) {
		ibv_ack_cq_events(iface->cq, (unsigned)events);
		ibv_req_notify_cq(iface->cq, 0);
	}
	done += p4t_verbs_cq_poll(iface, budget);
	p4t_verbs_recv_repost(iface, false);
	done += p4t_progress(iface->tcp, budget);
	done += p4t_verbs_failing(iface);
	return done;
}

/* Verbs sends go when posted; only the bootstrap link batches. */
static void p4t_verbs_flush(struct p4t_iface *iface_)
{
	p4t_flush(p4t_verbs_iface_of(iface_)->tcp);
}

static int p4t_verbs_wait_fd(struct p4t_iface *iface_)
{
	return p4t_verbs_iface_of(iface_)->epfd;
}

static int p4t_verbs_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	return flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) ? -1 : 0;
}

static int p4t_verbs_epoll_add(struct p4t_verbs_iface *iface, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (fd < 0)
		return 0;
	return epoll_ctl(iface->epfd, EPOLL_CTL_ADD, fd, &ev) ? -FI_EIO : 0;
}

static int p4t_verbs_open_queues(struct p4t_verbs_iface *iface)
{
	struct ibv_srq_init_attr sia = {
		.attr = { .max_wr = P4T_VERBS_RECV_BUFS, .max_sge = 1 },
	};
	struct ibv_srq_attr sa = { .srq_limit = P4T_VERBS_SRQ_LIMIT };
	int ret;

	iface->pd = ibv_alloc_pd(iface->ctx);
	iface->chan = iface->pd ? ibv_create_comp_channel(iface->ctx) : NULL;
	iface->cq = iface->chan ? ibv_create_cq(iface->ctx, P4T_VERBS_CQ_SIZE,
						iface, iface->chan, 0) : NULL;
	iface->srq = iface->cq ? ibv_create_srq(iface->pd, &sia) : NULL;
	if (!iface->srq) {
		p4u_warn(P4U_LOG_TRANSPORT, "verbs: pd/cq/srq: %s",
			 strerror(errno));
		return -FI_ENOMEM;
	}
	if (p4t_verbs_nonblock(iface->chan->fd) ||
	    p4t_verbs_nonblock(iface->ctx->async_fd) ||
	    ibv_req_notify_cq(iface->cq, 0))
		return -FI_EIO;
	ret = p4t_verbs_data_init(iface);
	if (ret)
		return ret;
	ret = p4t_verbs_recv_repost(iface, true);
	if (ret < 0)
		return ret;
	if (ibv_modify_srq(iface->srq, &sa, IBV_SRQ_LIMIT))
		p4u_info(P4U_LOG_TRANSPORT, "verbs: no srq limit event: %s",
			 strerror(errno));
	return 0;
}

static void p4t_verbs_iface_free(struct p4t_verbs_iface *iface)
{
	struct p4t_verbs_mem *mem;

	/* exposures the engine did not take back die with the PD */
	while (!p4u_list_empty(&iface->mems)) {
		mem = p4u_list_first_entry(&iface->mems, struct p4t_verbs_mem,
					   link);
		p4t_verbs_mem_release(iface, mem);
	}
	p4t_verbs_mr_iface_remove(iface);
	if (iface->srq)
		ibv_destroy_srq(iface->srq);
	p4t_verbs_data_fini(iface);
	if (iface->cq)
		ibv_destroy_cq(iface->cq);
	if (iface->chan)
		ibv_destroy_comp_channel(iface->chan);
	if (iface->pd)
		ibv_dealloc_pd(iface->pd);
	if (iface->ctx)
		ibv_close_device(iface->ctx);
	if (iface->epfd >= 0)
		close(iface->epfd);
	if (iface->kickfd >= 0)
		close(iface->kickfd);
	free(iface);
}

static int p4t_verbs_iface_open(const struct p4t_iface_config *cfg,
				struct p4t_iface **iface_p)
{
	struct p4t_iface_config tcfg = *cfg;
	struct p4t_verbs_iface *iface;
	int ret;

	iface = calloc(1, sizeof(*iface));
	if (!iface)
		return -FI_ENOMEM;
	iface->base.ops = &p4t_verbs_ops;
	iface->upcalls = cfg->upcalls;
	iface->upcall_ctx = cfg->upcall_ctx;
	iface->max_inline = P4T_VERBS_INLINE;
	iface->epfd = iface->kickfd = -1;
	p4u_list_init(&iface->conns);
	p4u_list_init(&iface->failing);
	p4u_list_init(&iface->mems);
	p4u_list_init(&iface->regs);
	p4u_list_node_init(&iface->reg_link);

	ret = p4t_verbs_open_port(iface, cfg);
	if (ret) {
		p4u_info(P4U_LOG_TRANSPORT, "verbs: no usable device port");
		goto err_free;
	}
	ret = p4t_verbs_open_queues(iface);
	if (ret)
		goto err_free;
	p4t_verbs_mr_iface_add(iface);
	tcfg.upcalls = &p4t_verbs_tcp_upcalls;
	tcfg.upcall_ctx = iface;
	ret = p4t_tcp_ops.iface_open(&tcfg, &iface->tcp);
	if (ret)
		goto err_free;
	iface->self_addrlen = sizeof(iface->self_addr);
	ret = p4t_getname(iface->tcp, &iface->self_addr, &iface->self_addrlen);
	if (ret)
		goto err_close_tcp;
	iface->epfd = epoll_create1(EPOLL_CLOEXEC);
	iface->kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (iface->epfd < 0 || iface->kickfd < 0 ||
	    p4t_verbs_epoll_add(iface, p4t_wait_fd(iface->tcp)) ||
	    p4t_verbs_epoll_add(iface, iface->chan->fd) ||
	    p4t_verbs_epoll_add(iface, iface->ctx->async_fd) ||
	    p4t_verbs_epoll_add(iface, iface->kickfd)) {
		ret = -FI_EIO;
		goto err_close_tcp;
	}
	*iface_p = (struct p4t_iface *)iface;
	return 0;

err_close_tcp:
	p4t_iface_close(iface->tcp);
err_free:
	p4t_verbs_iface_free(iface);
	return ret;
}

/* The iface's counters, at info level (FI_LOG_LEVEL=info). */
static void p4t_verbs_stats_log(const struct p4t_verbs_iface *iface)
{
	const struct p4t_verbs_stats *st = &iface->stats;

	p4u_info(P4U_LOG_TRANSPORT, "verbs: stats: sent %llu (inline %llu, "
		 "%llu bytes) recv %llu (%llu bytes) queued %llu rdma_reads "
		 "%llu (%llu bytes) rdma_writes %llu (%llu bytes) bounced %llu "
		 "regs %llu app_regs %llu app_mr_hits %llu srq_limit_events "
		 "%llu qps_up %llu wc_errors %llu link_failures %llu",
		 (unsigned long long)st->msgs_sent,
		 (unsigned long long)st->inline_sent,
		 (unsigned long long)st->bytes_sent,
		 (unsigned long long)st->msgs_recv,
		 (unsigned long long)st->bytes_recv,
		 (unsigned long long)st->queued,
		 (unsigned long long)st->reads,
		 (unsigned long long)st->read_bytes,
		 (unsigned long long)st->writes,
		 (unsigned long long)st->write_bytes,
		 (unsigned long long)st->bounced,
		 (unsigned long long)st->regs,
		 (unsigned long long)st->app_regs,
		 (unsigned long long)st->app_mr_hits,
		 (unsigned long long)st->srq_limit_events,
		 (unsigned long long)st->qps_up,
		 (unsigned long long)st->wc_errors,
		 (unsigned long long)st->link_failures);
}

static void p4t_verbs_iface_close(struct p4t_iface *iface_)
{
	struct p4t_verbs_iface *iface = p4t_verbs_iface_of(iface_);
	struct p4t_verbs_conn *conn;
	uint64_t deadline = p4u_time_ns() + 10ull * 1000000000ull;

	iface->closing = true;
	while (!p4u_list_empty(&iface->conns)) {
		conn = p4u_list_first_entry(&iface->conns,
					    struct p4t_verbs_conn, link);
		p4t_verbs_conn_fail(conn, -FI_ECONNABORTED);
	}
	/* every pull and push completes before we return (p4t.h) */
	while (!p4u_list_empty(&iface->failing)) {
		p4t_verbs_cq_poll(iface, 256);
		p4t_verbs_failing(iface);
		if (p4u_time_ns() > deadline) {
			p4u_warn(P4U_LOG_TRANSPORT, "verbs: close: flushes "
				 "missing; dropping %zu requests",
				 iface->wrs_posted);
			while (!p4u_list_empty(&iface->failing)) {
				conn = p4u_list_first_entry(
					&iface->failing,
					struct p4t_verbs_conn, link);
				p4t_verbs_conn_destroy(conn);
			}
		}
	}
	p4t_iface_close(iface->tcp);
	p4t_verbs_stats_log(iface);
	p4t_verbs_iface_free(iface);
}

const struct p4t_ops p4t_verbs_ops = {
	.name = "verbs",
	.iface_open = p4t_verbs_iface_open,
	.iface_close = p4t_verbs_iface_close,
	.iface_query = p4t_verbs_iface_query,
	.getname = p4t_verbs_getname,
	.conn_get = p4t_verbs_conn_get,
	.send = p4t_verbs_send,
	.mem_expose = p4t_verbs_mem_expose,
	.mem_unexpose = p4t_verbs_mem_unexpose,
	.pull = p4t_verbs_pull,
	.push = p4t_verbs_push,
	.conn_close = p4t_verbs_conn_close,
	.progress = p4t_verbs_progress,
	.flush = p4t_verbs_flush,
	.wait_fd = p4t_verbs_wait_fd,
	.mr_reg = p4t_verbs_mr_reg,
	.mr_dereg = p4t_verbs_mr_dereg,
};

int p4t_verbs_stats(struct p4t_iface *iface, struct p4t_verbs_stats *stats)
{
	if (!iface || p4t_ops_of(iface) != &p4t_verbs_ops)
		return -FI_EINVAL;
	*stats = p4t_verbs_iface_of(iface)->stats;
	return 0;
}
