/*
 * p4e_ni.c - the network interface: limits, status registers, the pools
 * of its objects, its transport instance and the upcalls the transport
 * makes, per-peer state, logical rank maps and one NI's share of its
 * worker's progress (p4e_worker.c).
 */
#include <config.h>

#include <inttypes.h>

#include <stdlib.h>

#include "p4e_priv.h"
#include "p4u_addr.h"

#define P4E_DEFAULT_ENTRIES	(1u << 20)
#define P4E_DEFAULT_UH		(1u << 16)
#define P4E_DEFAULT_MDS		(1u << 16)
#define P4E_DEFAULT_PT_INDEX	63
#define P4E_DEFAULT_OPS		4096
#define P4E_DEFAULT_VOLATILE	4096
#define P4E_DEFAULT_EAGER	16384
/* Payloads up to this are copied unless told otherwise: cheaper than
 * holding the buffer till the target accepts. */
#define P4E_DEFAULT_COPY	1024
/* Bytes all copies of an NI may take unless told otherwise. */
#define P4E_DEFAULT_COPY_MEM	(256ULL << 20)

/* ---- limits -------------------------------------------------------------- */

static uint64_t p4e_pick(uint64_t desired, uint64_t dflt, uint64_t max)
{
	uint64_t v = desired ? desired : dflt;

	return v > max ? max : v;
}

static void p4e_ni_limits_init(struct p4e_ni *ni, const struct p4e_ni_attr *attr)
{
	const struct p4e_ni_limits *d = &attr->desired;
	struct p4e_ni_limits *l = &ni->limits;

	l->max_entries = p4e_pick(d->max_entries, P4E_DEFAULT_ENTRIES, 1u << 24);
	l->max_unexpected_headers = p4e_pick(d->max_unexpected_headers,
					     P4E_DEFAULT_UH, 1u << 24);
	l->max_mds = p4e_pick(d->max_mds, P4E_DEFAULT_MDS, 1u << 24);
	l->max_cts = ni->dom->cts.max_objs;
	l->max_eqs = p4e_pick(d->max_eqs, 1024, 1u << 20);
	l->max_pt_index = p4e_pick(d->max_pt_index, P4E_DEFAULT_PT_INDEX, 4095);
	l->max_iovecs = p4e_pick(d->max_iovecs, P4E_IOV_MAX, P4E_IOV_MAX);
	l->max_list_size = p4e_pick(d->max_list_size, l->max_entries,
				    l->max_entries);
	l->max_triggered_ops = ni->dom->trigs.max_objs;
	l->max_msg_size = p4e_pick(d->max_msg_size, P4W_MAX_MSG, P4W_MAX_MSG);
	l->max_volatile_size = p4e_pick(d->max_volatile_size,
					P4E_DEFAULT_VOLATILE, 1u << 20);
	/* atomics always travel eagerly, in one message */
	l->max_atomic_size = p4e_pick(d->max_atomic_size, ni->eager_size,
				      ni->eager_size);
	/* fetched values and compare values travel through bounce blocks */
	l->max_fetch_atomic_size = p4e_pick(d->max_fetch_atomic_size,
					    ni->eager_size,
					    P4U_MIN(ni->eager_size,
						    l->max_volatile_size));
	/* the target applies one message at a time, in order */
	l->max_waw_ordered_size = l->max_atomic_size;
	l->max_war_ordered_size = l->max_atomic_size;
	l->features = 0;
	l->max_ops = p4e_pick(d->max_ops, P4E_DEFAULT_OPS, 1u << 24);
	l->max_held = p4e_pick(d->max_held, l->max_ops, l->max_ops);
}

void p4e_ni_limits_get(struct p4e_ni *ni, struct p4e_ni_limits *limits)
{
	if (ni && limits)
		*limits = ni->limits;	/* fixed at create: no lock */
}

int p4e_ni_status(struct p4e_ni *ni, enum p4e_sr_index index, int64_t *val)
{
	if (!ni || !val || (unsigned)index >= P4E_SR_LAST)
		return -FI_EINVAL;
	P4E_NI_ASSERT(ni);
	*val = ni->sr[index];
	return 0;
}

int p4e_ni_getname(struct p4e_ni *ni, void *addr, size_t *addrlen)
{
	if (!ni)
		return -FI_EINVAL;
	P4E_NI_ASSERT(ni);
	/* the local transport's name is the network one's, stamped with
	 * the host token */
	if (ni->xp[P4E_XP_LOCAL].iface)
		return p4t_getname(ni->xp[P4E_XP_LOCAL].iface, addr, addrlen);
	return p4t_getname(ni->xp[P4E_XP_NET].iface, addr, addrlen);
}

int p4e_ni_wait_fd(struct p4e_ni *ni)
{
	return ni ? p4t_wait_fd(ni->xp[P4E_XP_NET].iface) : -1;
}

struct p4e_worker *p4e_ni_worker(struct p4e_ni *ni)
{
	return ni ? ni->worker : NULL;
}

bool p4e_ni_ack_held(struct p4e_ni *ni)
{
	P4E_NI_ASSERT(ni);
	return ni && !p4u_list_empty(&ni->ack_pending);
}

/* ---- peers of this NI --------------------------------------------------- */

struct p4e_npeer *p4e_npeer_get(struct p4e_ni *ni, uint32_t peer_id)
{
	struct p4e_npeer *np, **arr;
	uint32_t cap;

	/* known already: the domain's table is not consulted */
	if (peer_id < ni->npeers_cap && ni->npeers[peer_id])
		return ni->npeers[peer_id];
	if (!p4e_dom_peer(ni->dom, peer_id))
		return NULL;
	if (peer_id >= ni->npeers_cap) {
		cap = ni->npeers_cap ? ni->npeers_cap : 64;
		while (cap <= peer_id)
			cap *= 2;
		arr = realloc(ni->npeers, cap * sizeof(*arr));
		if (!arr)
			return NULL;
		memset(arr + ni->npeers_cap, 0,
		       (cap - ni->npeers_cap) * sizeof(*arr));
		ni->npeers = arr;
		ni->npeers_cap = cap;
	}
	np = ni->npeers[peer_id];
	if (np)
		return np;
	np = calloc(1, sizeof(*np));
	if (!np)
		return NULL;
	np->ni = ni;
	np->id = peer_id;
	p4u_list_init(&np->tx_queue);
	p4u_list_init(&np->tx_sent);
	p4u_list_init(&np->tx_wait);
	p4u_list_init(&np->flush_link);
	p4u_list_init(&np->block_link);
	p4u_list_init(&np->ack_link);
	p4u_list_init(&np->deferred);
	p4u_list_init(&np->defer_link);
	ni->npeers[peer_id] = np;
	return np;
}

/*
 * Open (lazily) the transport link to np: through the host-local
 * transport when it reaches the peer (it says -FI_EHOSTUNREACH at once
 * when not), else the network one.
 */
int p4e_npeer_connect(struct p4e_npeer *np)
{
	struct p4e_xport *xp = &np->ni->xp[P4E_XP_LOCAL];
	uint8_t stamped[P4W_ADDR_MAX];
	struct p4e_peer_addr *pa;
	struct p4t_conn *conn;
	int ret = -FI_EHOSTUNREACH;

	if (np->conn)
		return 0;
	pa = p4e_dom_peer(np->ni->dom, np->id);
	if (xp->iface) {
		memcpy(stamped, pa->addr, pa->addrlen);
		p4u_addr_stamp(stamped, pa->addrlen,
			       __atomic_load_n(&pa->token, __ATOMIC_RELAXED));
		ret = p4t_conn_get(xp->iface, stamped, pa->addrlen, &conn);
		if (ret && ret != -FI_EHOSTUNREACH)
			p4u_info(P4U_LOG_ENGINE, "peer %u: local transport: "
				 "%d, using the network", np->id, ret);
	}
	if (ret) {
		xp = &np->ni->xp[P4E_XP_NET];
		ret = p4t_conn_get(xp->iface, pa->addr, pa->addrlen, &conn);
		if (ret)
			return ret;
	}
	conn->engine_ctx = np;
	np->conn = conn;
	np->xp = xp;
	np->ni->sr[xp == &np->ni->xp[P4E_XP_LOCAL] ? P4E_SR_LINKS_LOCAL :
						      P4E_SR_LINKS_NET]++;
	return 0;
}

/* Forget the link and every sequence: a new link starts a new session. */
static void p4e_npeer_reset(struct p4e_npeer *np)
{
	np->conn = NULL;
	np->xp = NULL;
	np->tx_seq = np->tx_acked = 0;
	np->tx_held = false;
	np->rx_expect = np->rx_told = 0;
	p4e_fc_drop_held(np);
	p4e_fc_unblock(np);
	p4u_list_remove(&np->ack_link);
	p4u_list_remove(&np->flush_link);
	p4e_npeer_drop_deferred(np);
}

uint32_t p4e_ni_event_id(struct p4e_ni *ni, uint32_t peer_id)
{
	uint32_t i;

	if (!(ni->options & P4E_NI_LOGICAL))
		return peer_id;
	/* ranks are few and this runs once per event: a scan is fine for
	 * now; a reverse table is the upgrade if it ever shows */
	for (i = 0; i < ni->map_len; i++)
		if (ni->map[i] == peer_id)
			return i;
	return P4E_ID_ANY;
}

int p4e_ni_target_peer(struct p4e_ni *ni, uint32_t target, uint32_t *peer_p)
{
	if (ni->options & P4E_NI_LOGICAL) {
		if (target >= ni->map_len)
			return -FI_EINVAL;
		target = ni->map[target];
	}
	if ((target >= ni->npeers_cap || !ni->npeers[target]) &&
	    !p4e_dom_peer(ni->dom, target))
		return -FI_EINVAL;
	*peer_p = target;
	return 0;
}

int p4e_ni_set_map(struct p4e_ni *ni, const uint32_t *peer_ids, size_t count)
{
	uint32_t *map;
	size_t i;

	if (!ni || !(ni->options & P4E_NI_LOGICAL) || (count && !peer_ids))
		return -FI_EINVAL;
	P4E_NI_ASSERT(ni);
	for (i = 0; i < count; i++)
		if (!p4e_dom_peer(ni->dom, peer_ids[i]))
			return -FI_EINVAL;
	map = malloc(count * sizeof(*map) + 1);
	if (!map)
		return -FI_ENOMEM;
	memcpy(map, peer_ids, count * sizeof(*map));
	free(ni->map);
	ni->map = map;
	ni->map_len = (uint32_t)count;
	return 0;
}

int p4e_ni_get_map(struct p4e_ni *ni, uint32_t *peer_ids, size_t count,
		   size_t *count_p)
{
	if (!ni || !count_p || !(ni->options & P4E_NI_LOGICAL))
		return -FI_EINVAL;
	P4E_NI_ASSERT(ni);
	if (peer_ids)
		memcpy(peer_ids, ni->map,
		       P4U_MIN(count, ni->map_len) * sizeof(*peer_ids));
	*count_p = ni->map_len;
	return 0;
}

/* ---- transport upcalls ------------------------------------------------- */

static int p4e_ni_up_recv(void *ctx, struct p4t_conn *conn, const void *msg,
			  size_t len)
{
	struct p4e_ni *ni = ((struct p4e_xport *)ctx)->ni;
	struct p4e_npeer *np = conn->engine_ctx;
	struct p4w_hdr hdr;
	struct p4w_fc fc;
	int ret;

	if (ni->closing || !np)
		return 0;
	ret = p4w_hdr_unpack(msg, len, &hdr);
	if (!ret && hdr.length != len)
		ret = -FI_EBADMSG;
	if (ret)
		goto malformed;
	if (hdr.flags & P4W_F_ACK_SEQ)
		p4e_fc_tx_acked(np, hdr.ack_seq);

	switch (hdr.type) {
	case P4W_PUT:
	case P4W_GET:
	case P4W_ATOMIC:
	case P4W_FETCH:
	case P4W_SWAP:
		ret = p4e_tgt_request(ni, np, &hdr, msg);
		if (hdr.flags & P4W_F_ACK_NOW)
			p4e_fc_ack_now(np);
		break;
	case P4W_ACK:
	case P4W_REPLY:
		ret = p4e_ini_response(ni, np, &hdr, msg);
		break;
	case P4W_SEQ_ACK:
		ret = 0;
		break;
	case P4W_NACK:
	case P4W_RESUME:
		ret = p4w_fc_unpack((const uint8_t *)msg + sizeof(hdr),
				    len - sizeof(hdr), &fc);
		if (ret)
			break;
		if (hdr.type == P4W_RESUME && fc.flags)
			ret = -FI_EBADMSG;
		else if (fc.flags & P4W_FC_AS_RDZV)
			p4e_fc_nacked_rdzv(np, fc.seq);
		else if (hdr.type == P4W_NACK)
			p4e_fc_nacked(np, fc.seq);
		else
			p4e_fc_resume_req(np, fc.seq);
		break;
	default:
		ret = -FI_EBADMSG;
		break;
	}
	if (!ret)
		return 0;
malformed:
	ni->sr[P4E_SR_MALFORMED]++;
	p4u_warn_sparse(P4U_LOG_WIRE,
			"malformed message from peer %u dropped (%d): closing "
			"the link", np->id, ret);
	return ret;
}

static void p4e_ni_up_send_done(void *ctx, void *op_ctx, int status)
{
	struct p4e_ni *ni = ((struct p4e_xport *)ctx)->ni;

	if (!ni->closing)
		p4e_ini_send_done(ni, p4e_ctx_obj(op_ctx), status);
}

static void p4e_ni_up_rma_done(void *ctx, void *op_ctx, int status)
{
	struct p4e_ni *ni = ((struct p4e_xport *)ctx)->ni;

	if (ni->closing)
		return;
	if (p4e_ctx_tag(op_ctx) == P4E_CTX_TOP)
		p4e_tgt_rma_done(ni, p4e_ctx_obj(op_ctx), status);
	else
		p4e_ini_rma_done(ni, p4e_ctx_obj(op_ctx), status);
}

static int p4e_ni_up_conn_new(void *ctx, struct p4t_conn *conn,
			      const void *addr, size_t addrlen)
{
	struct p4e_xport *xp = ctx;
	struct p4e_ni *ni = xp->ni;
	struct p4e_npeer *np;
	uint32_t id;
	int ret;

	if (ni->closing)
		return -FI_ECONNREFUSED;
	ret = p4e_peer_lookup(ni->dom, addr, addrlen, &id);
	if (ret)
		return ret;
	np = p4e_npeer_get(ni, id);
	if (!np)
		return -FI_ENOMEM;
	if (np->conn && np->conn != conn) {
		/* the transport keeps one link per pair: a second is stale */
		p4e_ini_fail_peer(np, P4E_NI_UNDELIVERABLE);
		p4e_tgt_fail_peer(np);
		p4e_npeer_reset(np);
	}
	np->conn = conn;
	np->xp = xp;
	conn->engine_ctx = np;
	ni->sr[xp == &ni->xp[P4E_XP_LOCAL] ? P4E_SR_LINKS_LOCAL :
					     P4E_SR_LINKS_NET]++;
	return 0;
}

static void p4e_ni_up_conn_failed(void *ctx, struct p4t_conn *conn, int status)
{
	struct p4e_ni *ni = ((struct p4e_xport *)ctx)->ni;
	struct p4e_npeer *np = conn->engine_ctx;

	if (ni->closing || !np || np->conn != conn)
		return;
	p4u_info(P4U_LOG_ENGINE, "link to peer %u failed: %d", np->id, status);
	/* a link refused before it was up delivered nothing: say so */
	p4e_ini_fail_peer(np, status == -FI_ECONNREFUSED ?
			  P4E_NI_CONN_REFUSED : P4E_NI_UNDELIVERABLE);
	p4e_tgt_fail_peer(np);
	p4e_npeer_reset(np);
}

static const struct p4t_upcalls p4e_ni_upcalls = {
	.recv = p4e_ni_up_recv,
	.send_done = p4e_ni_up_send_done,
	.rma_done = p4e_ni_up_rma_done,
	.conn_new = p4e_ni_up_conn_new,
	.conn_failed = p4e_ni_up_conn_failed,
};

/* ---- create / destroy ------------------------------------------------- */

static int p4e_ni_pools_init(struct p4e_ni *ni)
{
	const struct p4e_ni_limits *l = &ni->limits;
	int ret;

	ret = p4u_pool_init(&ni->mds, sizeof(struct p4e_md), 64, l->max_mds);
	if (!ret)
		ret = p4u_pool_init(&ni->mes, sizeof(struct p4e_me), 256,
				    l->max_entries);
	if (!ret)
		ret = p4u_pool_init(&ni->ops, sizeof(struct p4e_op), 256,
				    l->max_ops);
	/* target operations: as many as the operations callers wait for */
	if (!ret)
		ret = p4u_pool_init(&ni->tops, sizeof(struct p4e_tgt_op), 64,
				    ni->ops_credit);
	if (!ret)
		ret = p4u_pool_init(&ni->uhs, sizeof(struct p4e_uh), 256,
				    l->max_unexpected_headers);
	/* the largest copy: a volatile payload, or a swap's operand with
	 * its compare values, or a copied put */
	if (!ret)
		ret = p4e_copies_init(&ni->copies,
				      P4U_MAX(l->max_volatile_size * 2,
					      ni->copy_size),
				      ni->copy_mem_max,
				      l->max_ops + l->max_ops);
	if (!ret)
		ret = p4u_pool_init(&ni->iovbufs, sizeof(struct p4e_iovbuf), 64,
				    l->max_entries);
	return ret;
}

static void p4e_ni_pools_fini(struct p4e_ni *ni)
{
	p4u_pool_fini(&ni->iovbufs);
	p4e_copies_fini(&ni->copies);
	p4u_pool_fini(&ni->uhs);
	p4u_pool_fini(&ni->tops);
	p4u_pool_fini(&ni->ops);
	p4u_pool_fini(&ni->mes);
	p4u_pool_fini(&ni->mds);
}

/*
 * The network transport, then the local one on its name (p4t.h); a local
 * one that does not open is left out, the NI works without it.
 */
static int p4e_ni_open_transport(struct p4e_ni *ni,
				 const struct p4e_ni_attr *attr,
				 struct p4e_worker *w)
{
	struct p4e_xport *net = &ni->xp[P4E_XP_NET];
	struct p4e_xport *loc = &ni->xp[P4E_XP_LOCAL];
	uint8_t name[P4W_ADDR_MAX];
	size_t len = sizeof(name);
	struct p4t_iface_config cfg = {
		.addr = attr->addr,
		.addrlen = attr->addrlen,
		.port_low = attr->port_low,
		.port_high = attr->port_high,
		.auth_key = attr->auth_key,
		.peer_timeout_ms = attr->peer_timeout_ms,
		.connect_retry_ms = attr->connect_retry_ms,
		.rma_chunk = attr->rma_chunk,
		.rma_offer = attr->rma_offer,
		.no_offers = attr->no_offers,
		.timers = &w->timers,
		.upcalls = &p4e_ni_upcalls,
		.upcall_ctx = net,
	};
	int ret;

	net->ni = loc->ni = ni;
	ret = attr->transport->iface_open(&cfg, &net->iface);
	if (ret)
		return ret;
	p4t_iface_query(net->iface, &net->attr);
	if (!attr->local_transport || attr->local_transport == attr->transport)
		return 0;
	ret = p4t_getname(net->iface, name, &len);
	if (!ret) {
		cfg.addr = name;
		cfg.addrlen = len;
		cfg.upcall_ctx = loc;
		ret = attr->local_transport->iface_open(&cfg, &loc->iface);
	}
	if (ret) {
		loc->iface = NULL;
		p4u_info(P4U_LOG_ENGINE, "%s transport not opened (%d): peers "
			 "on this host use %s", attr->local_transport->name,
			 ret, attr->transport->name);
		return 0;
	}
	p4t_iface_query(loc->iface, &loc->attr);
	return 0;
}

/*
 * Eager and copy sizes per transport (a peer's puts follow its link's
 * transport), and the NI's: the least eager size, which its limits
 * (atomics, ordering) are given in, and the largest copy, which its
 * copy blocks must hold.
 */
static void p4e_ni_sizes(struct p4e_ni *ni, const struct p4e_ni_attr *attr)
{
	struct p4e_xport *net = &ni->xp[P4E_XP_NET];
	struct p4e_xport *loc = &ni->xp[P4E_XP_LOCAL];

	net->eager_size = attr->eager_size ? attr->eager_size :
			  P4E_DEFAULT_EAGER;
	net->copy_size = attr->copy_size ? attr->copy_size : P4E_DEFAULT_COPY;
	loc->eager_size = attr->local_eager_size ? attr->local_eager_size :
			  net->eager_size;
	loc->copy_size = attr->local_copy_size ? attr->local_copy_size :
			 net->copy_size;
	ni->eager_size = P4U_MIN(net->eager_size, loc->eager_size);
	ni->copy_size = P4U_MAX(net->copy_size, loc->copy_size);
}

static void p4e_ni_close_transports(struct p4e_ni *ni)
{
	struct p4e_xport *xp;

	p4e_ni_foreach_xp(ni, xp) {
		p4t_iface_close(xp->iface);
		xp->iface = NULL;
	}
}

void p4e_ni_flush(struct p4e_ni *ni)
{
	struct p4e_xport *xp;

	p4e_ni_foreach_xp(ni, xp)
		p4t_flush(xp->iface);
}

int p4e_ni_create(struct p4e_dom *dom, const struct p4e_ni_attr *attr,
		  struct p4e_ni **ni_p)
{
	unsigned match = P4E_NI_MATCHING | P4E_NI_NO_MATCHING;
	unsigned addr = P4E_NI_LOGICAL | P4E_NI_PHYSICAL;
	struct p4e_worker *w;
	struct p4e_ni *ni;
	uint32_t i;
	int ret;

	if (!dom || !attr || !ni_p || !attr->transport ||
	    (attr->options & ~(match | addr)) ||
	    (attr->options & match) == match || !(attr->options & match) ||
	    (attr->options & addr) == addr || !(attr->options & addr))
		return -FI_EINVAL;
	w = attr->worker;
	if (!w) {
		ret = p4e_dom_worker_get(dom, &w);
		if (ret)
			return ret;
	}
	p4e_worker_assert_held(w);
	ni = calloc(1, sizeof(*ni));
	if (!ni)
		return -FI_ENOMEM;
	ni->dom = dom;
	ni->options = attr->options;
	ni->uid = attr->uid;
	ni->ack_delay_ns = attr->ack_delay_ns;
	ni->id_filter = attr->id_filter;
	ni->id_filter_ctx = attr->id_filter_ctx;
	ni->trig_dropped = attr->trig_dropped;
	ni->trig_dropped_ctx = attr->trig_dropped_ctx;
	p4e_ni_sizes(ni, attr);
	ni->copy_mem_max = attr->copy_mem_max ? attr->copy_mem_max :
			   P4E_DEFAULT_COPY_MEM;
	p4u_list_init(&ni->flush);
	p4u_list_init(&ni->ack_pending);
	p4u_list_init(&ni->deferring);
	p4u_list_init(&ni->trig_due);
	p4u_list_init(&ni->worker_link);
	p4u_timer_init(&ni->ack_timer, p4e_fc_ack_timer);
	p4e_ni_limits_init(ni, attr);
	/* the operations callers wait for: those not held after their SEND
	 * when max_held is a bound of its own */
	ni->ops_credit = ni->limits.max_held < ni->limits.max_ops ?
			 ni->limits.max_ops - ni->limits.max_held :
			 ni->limits.max_ops;
	ret = p4e_ni_pools_init(ni);
	if (ret)
		goto err_pools;
	ni->pts = calloc(ni->limits.max_pt_index + 1, sizeof(*ni->pts));
	if (!ni->pts) {
		ret = -FI_ENOMEM;
		goto err_pools;
	}
	for (i = 0; i <= ni->limits.max_pt_index; i++)
		p4u_list_init(&ni->pts[i].blocked);
	ret = p4e_ni_open_transport(ni, attr, w);
	if (ret)
		goto err_pts;
	ret = p4e_worker_attach(w, ni);
	if (ret)
		goto err_iface;
	p4u_lock_acquire(&dom->lock);
	p4u_list_insert_tail(&dom->nis, &ni->dom_link);
	p4u_lock_release(&dom->lock);
	*ni_p = ni;
	return 0;

err_iface:
	p4e_ni_close_transports(ni);
err_pts:
	free(ni->pts);
err_pools:
	p4e_ni_pools_fini(ni);
	free(ni);
	return ret;
}

int p4e_ni_destroy(struct p4e_ni *ni)
{
	uint32_t i;

	if (!ni)
		return -FI_EINVAL;
	P4E_NI_ASSERT(ni);
	if (ni->sr[P4E_SR_FLOWCTRL] || ni->sr[P4E_SR_FC_AS_RDZV] ||
	    ni->sr[P4E_SR_RESENT_AS_RDZV])
		p4u_info(P4U_LOG_ENGINE, "flow control: held senders %" PRId64
			 " times, had them resend as rendezvous %" PRId64
			 " times; resent %" PRId64 " messages of ours so",
			 ni->sr[P4E_SR_FLOWCTRL], ni->sr[P4E_SR_FC_AS_RDZV],
			 ni->sr[P4E_SR_RESENT_AS_RDZV]);
	/* bounds reached: said once when it happened, counted here */
	if (ni->sr[P4E_SR_UH_FULL] || ni->sr[P4E_SR_COPY_REFUSED])
		p4u_warn(P4U_LOG_ENGINE, "resource bounds reached: %" PRId64
			 " requests held for want of an unexpected header "
			 "(budget %u), %" PRId64 " payloads not copied (%u "
			 "operations after completion, %" PRIu64 " bytes of "
			 "copies at most)", ni->sr[P4E_SR_UH_FULL],
			 ni->limits.max_unexpected_headers,
			 ni->sr[P4E_SR_COPY_REFUSED], ni->limits.max_held,
			 (uint64_t)ni->copy_mem_max);
	/* upcalls made while the transport tears down are ignored */
	ni->closing = true;
	p4e_trig_drop_ni(ni);
	p4u_timer_cancel(&ni->worker->timers, &ni->ack_timer);
	p4e_worker_detach(ni->worker, ni);
	p4e_ni_close_transports(ni);
	for (i = 0; i <= ni->limits.max_pt_index; i++)
		if (ni->pts[i].allocated)
			p4e_pt_teardown(ni, &ni->pts[i]);
	for (i = 0; i < ni->npeers_cap; i++) {
		if (ni->npeers[i]) {
			p4e_npeer_drop_deferred(ni->npeers[i]);
			p4e_fc_drop_held(ni->npeers[i]);
		}
		free(ni->npeers[i]);
	}
	free(ni->npeers);
	free(ni->map);
	free(ni->pts);
	p4e_ni_pools_fini(ni);
	p4u_lock_acquire(&ni->dom->lock);
	p4u_list_remove(&ni->dom_link);
	p4u_lock_release(&ni->dom->lock);
	free(ni);
	return 0;
}

/* ---- progress ----------------------------------------------------------- */

/*
 * The one answer to "is anything still owed to peers" (p4e.h): the
 * engine's side per peer (§7.1: tx_queue and tx_sent hold what the
 * target has not accepted; deferred and held responses; acceptance owed
 * to the peer), then the transport's bytes (p4t_owes).
 */
bool p4e_ni_owes(struct p4e_ni *ni)
{
	struct p4e_xport *xp;
	struct p4e_npeer *np;
	uint32_t i;

	P4E_NI_ASSERT(ni);
	if (!p4u_list_empty(&ni->flush) || !p4u_list_empty(&ni->ack_pending))
		return true;
	for (i = 0; i < ni->npeers_cap; i++) {
		np = ni->npeers[i];
		if (np && (!p4u_list_empty(&np->tx_queue) ||
			   !p4u_list_empty(&np->tx_sent) ||
			   !p4u_list_empty(&np->deferred) || np->nheld))
			return true;
	}
	p4e_ni_foreach_xp(ni, xp)
		if (p4t_owes(xp->iface))
			return true;
	return false;
}

int p4e_ni_progress(struct p4e_ni *ni, int budget)
{
	struct p4e_npeer *np, *tmp;
	struct p4e_xport *xp;
	int done;

	if (!ni)
		return 0;
	P4E_NI_ASSERT(ni);
	/* what this call sends leaves together, at the flush below */
	ni->in_progress = true;
	/* triggered ops that became due before this call act before the
	 * messages it receives (an append before the put it is for) */
	done = 0;
	/* (the unlocked peek p4e_trig_run_ni makes, without the call) */
	if (!p4u_list_empty(&ni->trig_due))
		done = p4e_trig_run_ni(ni);
	p4e_ni_foreach_xp(ni, xp)
		done += p4t_progress(xp->iface, budget > 0 ? budget : 64);
	/* responses first: requests wait behind them */
	p4u_list_foreach_entry_safe(&ni->deferring, np, tmp, struct p4e_npeer,
				    defer_link)
		p4e_npeer_flush_deferred(np);
	/* sends that waited for the transport, in peer order */
	p4u_list_foreach_entry_safe(&ni->flush, np, tmp, struct p4e_npeer,
				    flush_link)
		p4e_ini_flush(np);
	p4e_fc_progress(ni);
	if (!p4u_list_empty(&ni->trig_due))
		done += p4e_trig_run_ni(ni);
	ni->in_progress = false;
	p4e_ni_flush(ni);
	return done;
}

struct p4e_pt *p4e_pt_get(struct p4e_ni *ni, uint32_t index)
{
	if (index > ni->limits.max_pt_index || !ni->pts[index].allocated)
		return NULL;
	return &ni->pts[index];
}
