/*
 * p4t_loop.c - the loop transport: ifaces in one process exchanging real
 * wire messages through in-memory queues (behaviour: p4t_loop.h; shared
 * objects and the locking rule: p4t_loop_priv.h).
 *
 * Here: the process-wide registry (address -> iface), links (a pair of
 * struct p4t_loop_conn, one per end), the inbound message queue and the
 * event queue of each iface, send, progress and the ops table. Not here:
 * the exposure table, pull and push (p4t_loop_rma.c), the test hooks
 * (p4t_loop_hooks.c), nor anything the engine decides (framing beyond the
 * header's length, matching, flow control).
 *
 * Nothing happens in the background. A send copies the message onto the
 * destination's msgq; the destination delivers it in its own progress.
 * Completions and link failures are events on the iface's evq, reported
 * in progress. A link is the two ends X (at A, for B) and Y (at B, for A)
 * with X->peer == Y and Y->peer == X; an end is paired only while ACTIVE,
 * and each iface has at most one ACTIVE conn per peer address.
 */
#include <config.h>

#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t.h"
#include "p4t_loop.h"
#include "p4t_loop_priv.h"
#include "p4_wire.h"
#include "p4u_compiler.h"
#include "p4u_list.h"
#include "p4u_lock.h"
#include "p4u_log.h"
#include "p4u_pool.h"

static struct p4u_lock p4t_loop_lock = {
	.mutex = PTHREAD_MUTEX_INITIALIZER,
	.active = true,
};
static struct p4u_list p4t_loop_registry =
	P4U_LIST_INITIALIZER(p4t_loop_registry);
static uint32_t p4t_loop_next_port = P4T_LOOP_PORT_FIRST;
static uint64_t p4t_loop_iface_seq;

void p4t_loop_lock_acquire(void)
{
	p4u_lock_acquire(&p4t_loop_lock);
}

void p4t_loop_lock_release(void)
{
	p4u_lock_release(&p4t_loop_lock);
}

/* ---- addresses and the registry ---------------------------------------- */

/* A loop address is exactly a sockaddr_in; only address and port count. */
int p4t_loop_addr_parse(const void *addr, size_t addrlen,
			struct sockaddr_in *sin_p)
{
	struct sockaddr_in sin;

	if (!addr || addrlen != sizeof(sin))
		return -FI_EINVAL;
	memcpy(&sin, addr, sizeof(sin));	/* the caller's may be unaligned */
	if (sin.sin_family != AF_INET)
		return -FI_EINVAL;
	memset(sin_p, 0, sizeof(*sin_p));
	sin_p->sin_family = AF_INET;
	sin_p->sin_addr = sin.sin_addr;
	sin_p->sin_port = sin.sin_port;
	return 0;
}

static bool p4t_loop_addr_eq(const struct sockaddr_in *a,
			     const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr &&
	       a->sin_port == b->sin_port;
}

static struct p4t_loop_iface *
p4t_loop_registry_find_locked(const struct sockaddr_in *addr)
{
	struct p4t_loop_iface *iface;

	p4u_lock_assert_held(&p4t_loop_lock);
	p4u_list_foreach_entry(&p4t_loop_registry, iface, struct p4t_loop_iface,
			       node)
		if (p4t_loop_addr_eq(&iface->addr, addr))
			return iface;
	return NULL;
}

/* Counter and range ports are unique across addresses, for readable logs. */
static bool p4t_loop_port_used_locked(uint32_t port)
{
	struct p4t_loop_iface *iface;

	p4u_list_foreach_entry(&p4t_loop_registry, iface, struct p4t_loop_iface,
			       node)
		if (ntohs(iface->addr.sin_port) == port)
			return true;
	return false;
}

static int p4t_loop_port_pick_locked(const struct p4t_iface_config *cfg,
				     struct sockaddr_in *addr)
{
	uint32_t port, tries;

	if (addr->sin_port)
		return p4t_loop_registry_find_locked(addr) ? -FI_EADDRINUSE : 0;
	if (cfg->port_low || cfg->port_high) {
		if (!cfg->port_low || cfg->port_low > cfg->port_high)
			return -FI_EINVAL;
		for (port = cfg->port_low; port <= cfg->port_high; port++)
			if (!p4t_loop_port_used_locked(port))
				goto found;
		return -FI_EADDRINUSE;
	}
	for (tries = 0; tries <= P4T_LOOP_PORT_LAST - P4T_LOOP_PORT_FIRST; tries++) {
		port = p4t_loop_next_port++;
		if (p4t_loop_next_port > P4T_LOOP_PORT_LAST)
			p4t_loop_next_port = P4T_LOOP_PORT_FIRST;
		if (!p4t_loop_port_used_locked(port))
			goto found;
	}
	return -FI_EADDRINUSE;
found:
	addr->sin_port = htons((uint16_t)port);
	return 0;
}

/* splitmix64: a fixed, well-spread salt per iface, so runs repeat. */
static uint64_t p4t_loop_salt(uint64_t seq)
{
	uint64_t z = seq * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ---- wait fd ----------------------------------------------------------- */

static bool p4t_loop_iface_has_work_locked(const struct p4t_loop_iface *iface)
{
	return !p4u_list_empty(&iface->evq) ||
	       (!iface->held && !p4u_list_empty(&iface->msgq));
}

/* Called after every change to iface's queues: efd readable iff work. */
void p4t_loop_iface_signal_locked(struct p4t_loop_iface *iface)
{
	bool work = p4t_loop_iface_has_work_locked(iface);
	uint64_t val = 1;

	if (work == iface->signaled)
		return;
	if (work ? write(iface->efd, &val, sizeof(val)) != sizeof(val) :
		   read(iface->efd, &val, sizeof(val)) != sizeof(val))
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "loop: eventfd %s failed",
				work ? "write" : "read");
	iface->signaled = work;
}

/* ---- copying ----------------------------------------------------------- */

/*
 * Copy len bytes from src, starting src_off bytes in, to dst, starting
 * dst_off bytes in. The caller checked that both hold them.
 */
void p4t_loop_iov_copy(const struct iovec *dst, uint64_t dst_off,
		       const struct iovec *src, uint64_t src_off,
		       size_t len)
{
	size_t n;

	while (len) {
		/* skip what lies before the offsets, and empty entries */
		while (dst_off >= dst->iov_len)
			dst_off -= dst++->iov_len;
		while (src_off >= src->iov_len)
			src_off -= src++->iov_len;
		n = P4U_MIN(len, P4U_MIN(dst->iov_len - dst_off,
					 src->iov_len - src_off));
		memcpy((char *)dst->iov_base + dst_off,
		       (const char *)src->iov_base + src_off, n);
		dst_off += n;
		src_off += n;
		len -= n;
	}
}

/* ---- conns and links ----------------------------------------------------- */

struct p4t_loop_conn *
p4t_loop_conn_find_locked(struct p4t_loop_iface *iface,
			  const struct sockaddr_in *addr)
{
	struct p4t_loop_conn *conn;

	p4u_list_foreach_entry(&iface->conns, conn, struct p4t_loop_conn, node)
		if (conn->state == P4T_LOOP_CONN_ACTIVE &&
		    p4t_loop_addr_eq(&conn->addr, addr))
			return conn;
	return NULL;
}

struct p4t_loop_conn *
p4t_loop_conn_create_locked(struct p4t_loop_iface *iface,
			    const struct sockaddr_in *addr, bool known)
{
	struct p4t_loop_conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	conn->iface = iface;
	conn->addr = *addr;
	conn->state = P4T_LOOP_CONN_ACTIVE;
	conn->known = known;
	conn->fail_ev.kind = P4T_LOOP_EV_CONN_FAILED;
	p4u_list_node_init(&conn->fail_ev.node);
	p4u_list_init(&conn->ops);
	p4u_list_insert_tail(&iface->conns, &conn->node);
	return conn;
}

/*
 * Pair conn with the peer iface's conn for us. Without create, only an
 * existing (unpaired) end is taken; with it, one is made for the peer
 * engine to learn of through conn_new. -FI_ECONNREFUSED: nobody listens
 * at conn->addr, or the listener has another auth_key.
 */
int p4t_loop_link_pair_locked(struct p4t_loop_conn *conn, bool create)
{
	struct p4t_loop_iface *iface = conn->iface, *peer_iface;
	struct p4t_loop_conn *peer;

	assert(conn->state == P4T_LOOP_CONN_ACTIVE);
	if (conn->peer)
		return 0;
	peer_iface = p4t_loop_registry_find_locked(&conn->addr);
	if (!peer_iface || peer_iface->auth_key != iface->auth_key)
		return -FI_ECONNREFUSED;
	/* a link to oneself finds conn itself here: X->peer == X */
	peer = p4t_loop_conn_find_locked(peer_iface, &iface->addr);
	if (!peer) {
		if (!create)
			return -FI_ECONNREFUSED;
		peer = p4t_loop_conn_create_locked(peer_iface, &iface->addr,
						   false);
		if (!peer)
			return -FI_ENOMEM;
	}
	/* peer's other end would be our ACTIVE conn for it: conn, unpaired */
	assert(!peer->peer);
	conn->peer = peer;
	peer->peer = conn;
	return 0;
}

/* Drop what is queued at conn's end (its iface's msgq). */
static void p4t_loop_conn_drop_msgs_locked(struct p4t_loop_conn *conn)
{
	struct p4t_loop_iface *iface = conn->iface;
	struct p4t_loop_msg *msg, *tmp;

	/* not by inq_bytes: an injected message may be empty */
	p4u_list_foreach_entry_safe(&iface->msgq, msg, tmp, struct p4t_loop_msg,
				    node) {
		if (msg->conn != conn)
			continue;
		p4u_list_remove(&msg->node);
		iface->stats.msgs_dropped++;
		free(msg);
	}
	conn->inq_bytes = 0;
}

/* Detach conn's posted ops; they stay on the evq and report an error. */
static void p4t_loop_conn_abort_ops_locked(struct p4t_loop_conn *conn)
{
	struct p4t_loop_op *op, *tmp;

	p4u_list_foreach_entry_safe(&conn->ops, op, tmp, struct p4t_loop_op,
				    conn_node) {
		p4u_list_remove(&op->conn_node);
		op->conn = NULL;
		if (!op->status)
			op->status = -FI_ECONNABORTED;
	}
}

/* One end goes down: unpaired, unfindable, its queue and ops failed. */
static void p4t_loop_conn_fail_locked(struct p4t_loop_conn *conn, int status)
{
	if (conn->state != P4T_LOOP_CONN_ACTIVE)
		return;
	conn->state = P4T_LOOP_CONN_FAILED;
	conn->fail_status = status;
	conn->peer = NULL;
	p4t_loop_conn_drop_msgs_locked(conn);
	p4t_loop_conn_abort_ops_locked(conn);
	/* behind the aborted ops: they complete before conn_failed */
	p4u_list_insert_tail(&conn->iface->evq, &conn->fail_ev.node);
	p4t_loop_iface_signal_locked(conn->iface);
}

void p4t_loop_link_fail_locked(struct p4t_loop_conn *conn, int status,
			       int peer_status)
{
	struct p4t_loop_conn *peer = conn->peer;

	/* closes and refusals are ordinary here: who caused one logs it */
	p4u_info(P4U_LOG_TRANSPORT, "loop: link %u -> %u down: %s",
		 ntohs(conn->iface->addr.sin_port), ntohs(conn->addr.sin_port),
		 fi_strerror(-status));
	p4t_loop_conn_fail_locked(conn, status);
	if (peer && peer != conn)
		p4t_loop_conn_fail_locked(peer, peer_status);
}

/* Pair conn for traffic; a refusal fails the link (reported later). */
int p4t_loop_link_connect_locked(struct p4t_loop_conn *conn)
{
	int ret = p4t_loop_link_pair_locked(conn, true);

	if (ret == -FI_ECONNREFUSED)
		p4t_loop_link_fail_locked(conn, ret, ret);
	return ret;
}

/* Only the owner iface frees a conn, never while an upcall holds it. */
static void p4t_loop_conn_free_locked(struct p4t_loop_conn *conn)
{
	assert(conn->state != P4T_LOOP_CONN_ACTIVE && !conn->busy);
	p4t_loop_conn_abort_ops_locked(conn);
	p4u_list_remove(&conn->fail_ev.node);
	p4u_list_remove(&conn->node);
	p4t_loop_conn_forget_mems_locked(conn);
	free(conn);
}

/* ---- iface ------------------------------------------------------------- */

static int p4t_loop_iface_config_check(const struct p4t_iface_config *cfg,
				       struct sockaddr_in *addr)
{
	const struct p4t_upcalls *up = cfg->upcalls;
	int ret;

	/* send_done may be NULL: loop sends never return P4T_QUEUED */
	if (!up || !up->recv || !up->rma_done || !up->conn_new ||
	    !up->conn_failed)
		return -FI_EINVAL;
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	if (cfg->addr) {
		ret = p4t_loop_addr_parse(cfg->addr, cfg->addrlen, addr);
		if (ret)
			return ret;
	}
	if (addr->sin_addr.s_addr == htonl(INADDR_ANY))
		addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return 0;
}

static int p4t_loop_iface_open(const struct p4t_iface_config *cfg,
			       struct p4t_iface **iface_p)
{
	struct p4t_loop_iface *iface;
	int ret;

	if (!cfg || !iface_p)
		return -FI_EINVAL;
	iface = calloc(1, sizeof(*iface));
	if (!iface)
		return -FI_ENOMEM;
	ret = p4t_loop_iface_config_check(cfg, &iface->addr);
	if (ret)
		goto err_free_iface;
	iface->base.ops = &p4t_loop_ops;
	iface->auth_key = cfg->auth_key;
	iface->upcalls = cfg->upcalls;
	iface->upcall_ctx = cfg->upcall_ctx;
	iface->queue_limit = P4T_LOOP_QUEUE_LIMIT;
	p4u_list_init(&iface->conns);
	p4u_list_init(&iface->msgq);
	p4u_list_init(&iface->evq);
	ret = p4u_pool_init(&iface->mems, sizeof(struct p4t_loop_mem),
			    P4T_LOOP_MEM_CHUNK, P4T_LOOP_MEM_MAX);
	if (ret)
		goto err_free_iface;
	iface->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (iface->efd < 0) {
		ret = -errno;
		p4u_warn(P4U_LOG_TRANSPORT, "loop: eventfd: %s",
			 fi_strerror(-ret));
		goto err_fini_pool;
	}

	p4t_loop_lock_acquire();
	ret = p4t_loop_port_pick_locked(cfg, &iface->addr);
	if (!ret) {
		iface->key_salt = p4t_loop_salt(++p4t_loop_iface_seq);
		p4u_list_insert_tail(&p4t_loop_registry, &iface->node);
	}
	p4t_loop_lock_release();
	if (ret)
		goto err_close_efd;
	*iface_p = (struct p4t_iface *)iface;
	return 0;

err_close_efd:
	close(iface->efd);
err_fini_pool:
	p4u_pool_fini(&iface->mems);
err_free_iface:
	free(iface);
	return ret;
}

/*
 * Every link fails (peers hear -FI_ECONNRESET), queued messages are
 * dropped, and this iface's pending pulls and pushes complete here, with
 * the lock dropped, so the engine can release what they hold.
 */
static void p4t_loop_iface_close(struct p4t_iface *iface_)
{
	struct p4t_loop_iface *iface = p4t_loop_iface_of(iface_);
	struct p4t_loop_conn *conn, *ctmp;
	struct p4t_loop_mem *mem;
	struct p4t_loop_op *op;
	struct p4u_list done, *node;
	uint32_t i;

	p4u_list_init(&done);
	p4t_loop_lock_acquire();
	p4u_list_remove(&iface->node);	/* nobody reaches it from now on */
	p4u_list_foreach_entry(&iface->conns, conn, struct p4t_loop_conn, node)
		if (conn->state == P4T_LOOP_CONN_ACTIVE)
			p4t_loop_link_fail_locked(conn, -FI_ECONNABORTED,
						  -FI_ECONNRESET);
	/* ops go to done; failure reports are moot: the engine is closing */
	while ((node = p4u_list_pop_head(&iface->evq))) {
		struct p4t_loop_ev *ev = container_of(node, struct p4t_loop_ev,
						      node);

		if (ev->kind == P4T_LOOP_EV_RMA)
			p4u_list_insert_tail(&done, node);
	}
	/* messages only sit on ACTIVE ends: failing the links dropped all */
	assert(p4u_list_empty(&iface->msgq));
	p4u_list_foreach_entry_safe(&iface->conns, conn, ctmp,
				    struct p4t_loop_conn, node) {
		assert(!conn->busy);	/* not called from an upcall */
		conn->state = P4T_LOOP_CONN_CLOSED;
		p4t_loop_conn_free_locked(conn);
	}
	for (i = 0; i < p4u_pool_capacity(&iface->mems); i++) {
		mem = p4u_pool_at(&iface->mems, i);
		if (mem)
			free(mem->iov);
	}
	p4u_pool_fini(&iface->mems);
	p4t_loop_lock_release();

	while ((node = p4u_list_pop_head(&done))) {
		op = container_of(node, struct p4t_loop_op, ev.node);
		iface->upcalls->rma_done(iface->upcall_ctx, op->op_ctx,
					 op->status);
		free(op);
	}
	close(iface->efd);
	free(iface);
}

static void p4t_loop_iface_query(struct p4t_iface *iface,
				 struct p4t_iface_attr *attr)
{
	attr->max_inline = P4T_LOOP_MAX_INLINE;
	attr->max_msg = P4W_MAX_MSG;
	attr->max_rma = SIZE_MAX;
	attr->rma_native = false;
	attr->addr_len = sizeof(struct sockaddr_in);
}

/* As fi_getname: a short buffer gets -FI_ETOOSMALL and the size needed. */
static int p4t_loop_getname(struct p4t_iface *iface_, void *addr,
			    size_t *addrlen)
{
	struct p4t_loop_iface *iface = p4t_loop_iface_of(iface_);

	if (!addrlen)
		return -FI_EINVAL;
	if (*addrlen < sizeof(iface->addr)) {
		*addrlen = sizeof(iface->addr);
		return -FI_ETOOSMALL;
	}
	if (!addr)
		return -FI_EINVAL;
	memcpy(addr, &iface->addr, sizeof(iface->addr));
	*addrlen = sizeof(iface->addr);
	return 0;
}

/* ---- conn_get / conn_close ------------------------------------------------ */

static int p4t_loop_conn_get(struct p4t_iface *iface_, const void *addr,
			     size_t addrlen, struct p4t_conn **conn_p)
{
	struct p4t_loop_iface *iface = p4t_loop_iface_of(iface_);
	struct p4t_loop_conn *conn;
	struct sockaddr_in sin;
	int ret;

	ret = p4t_loop_addr_parse(addr, addrlen, &sin);
	if (ret || !conn_p)
		return ret ? ret : -FI_EINVAL;
	p4t_loop_lock_acquire();
	conn = p4t_loop_conn_find_locked(iface, &sin);
	if (!conn) {
		conn = p4t_loop_conn_create_locked(iface, &sin, true);
		/* both ends asked for each other: one link, no conn_new */
		if (conn)
			(void)p4t_loop_link_pair_locked(conn, false);
	}
	if (conn) {
		/* one the peer opened, not yet announced: no conn_new now */
		conn->known = true;
		*conn_p = &conn->base;
	}
	p4t_loop_lock_release();
	return conn ? 0 : -FI_ENOMEM;
}

static void p4t_loop_conn_close(struct p4t_iface *iface_,
				struct p4t_conn *conn_)
{
	struct p4t_loop_iface *iface = p4t_loop_iface_of(iface_);
	struct p4t_loop_conn *conn = p4t_loop_conn_of(conn_);

	p4t_loop_lock_acquire();
	assert(conn->iface == iface && conn->state != P4T_LOOP_CONN_CLOSED);
	if (conn->state == P4T_LOOP_CONN_ACTIVE)
		p4t_loop_link_fail_locked(conn, -FI_ECONNABORTED,
					  -FI_ECONNRESET);
	/* the engine closed it: no conn_failed for it */
	p4u_list_remove(&conn->fail_ev.node);
	conn->state = P4T_LOOP_CONN_CLOSED;
	if (!conn->busy)
		p4t_loop_conn_free_locked(conn);
	p4t_loop_iface_signal_locked(iface);
	p4t_loop_lock_release();
}

/* ---- send -------------------------------------------------------------- */

static uint32_t p4t_loop_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The whole length, if hdr starts an engine message of exactly that. */
static int p4t_loop_msg_check(const void *hdr, size_t hdr_len,
			      const struct iovec *iov, size_t iovcnt,
			      size_t *len_p)
{
	const uint8_t *bytes = hdr;
	size_t payload;
	int ret;

	if (!hdr || hdr_len < sizeof(struct p4w_hdr))
		return -FI_EINVAL;
	ret = p4u_iov_len(iov, iovcnt, &payload);
	if (ret)
		return ret;
	if (payload > P4W_MAX_MSG || hdr_len > P4W_MAX_MSG - payload)
		return -FI_EMSGSIZE;
	if (p4t_loop_le32(bytes + offsetof(struct p4w_hdr, length)) !=
	    hdr_len + payload)
		return -FI_EINVAL;
	/* transport types are ours: the engine never sends them */
	if (bytes[offsetof(struct p4w_hdr, type)] >= P4W_T_FIRST)
		return -FI_EINVAL;
	*len_p = hdr_len + payload;
	return 0;
}

/* Queue len bytes on dst's end of a link: -FI_EAGAIN above the bound. */
struct p4t_loop_msg *p4t_loop_msg_queue_locked(struct p4t_loop_conn *dst,
					       size_t len, int *ret_p)
{
	struct p4t_loop_iface *iface = dst->iface;
	struct p4t_loop_msg *msg;

	/* an empty queue takes any message, so every size can pass */
	if (dst->inq_bytes && (dst->inq_bytes >= iface->queue_limit ||
			       len > iface->queue_limit - dst->inq_bytes)) {
		*ret_p = -FI_EAGAIN;
		return NULL;
	}
	msg = malloc(sizeof(*msg) + len);
	if (!msg) {
		*ret_p = -FI_ENOMEM;
		return NULL;
	}
	msg->conn = dst;
	msg->len = len;
	dst->inq_bytes += len;
	p4u_list_insert_tail(&iface->msgq, &msg->node);
	p4t_loop_iface_signal_locked(iface);
	return msg;
}

static int p4t_loop_send(struct p4t_iface *iface_, struct p4t_conn *conn_,
			 const void *hdr, size_t hdr_len,
			 const struct iovec *iov, size_t iovcnt, void *op_ctx,
			 unsigned flags)
{
	struct p4t_loop_iface *iface = p4t_loop_iface_of(iface_);
	struct p4t_loop_conn *conn = p4t_loop_conn_of(conn_);
	struct p4t_loop_msg *msg;
	struct iovec dst;
	size_t len;
	int ret;

	/* nothing is layered on the loop transport */
	if (flags & P4T_SEND_XPORT)
		return -FI_EINVAL;
	ret = p4t_loop_msg_check(hdr, hdr_len, iov, iovcnt, &len);
	if (ret)
		return ret;
	p4t_loop_lock_acquire();
	assert(conn->iface == iface && conn->state != P4T_LOOP_CONN_CLOSED);
	if (conn->state == P4T_LOOP_CONN_ACTIVE) {
		ret = p4t_loop_link_connect_locked(conn);
		if (ret && ret != -FI_ECONNREFUSED)
			goto unlock;
	}
	if (conn->state != P4T_LOOP_CONN_ACTIVE) {
		/* as on a network: gone with the link, conn_failed follows */
		iface->stats.sends_dropped++;
		ret = P4T_DONE;
		goto unlock;
	}
	msg = p4t_loop_msg_queue_locked(conn->peer, len, &ret);
	if (!msg)
		goto unlock;
	memcpy(msg->data, hdr, hdr_len);
	dst.iov_base = msg->data + hdr_len;
	dst.iov_len = len - hdr_len;
	p4t_loop_iov_copy(&dst, 0, iov, 0, len - hdr_len);
	iface->stats.msgs_sent++;
	iface->stats.bytes_sent += len;
	ret = P4T_DONE;
unlock:
	p4t_loop_lock_release();
	return ret;
}
/* ---- progress ---------------------------------------------------------- */

/* Report one event; returns 1 if an upcall was made. Drops the lock. */
static int p4t_loop_ev_run_locked(struct p4t_loop_iface *iface,
				  struct p4t_loop_ev *ev)
{
	const struct p4t_upcalls *up = iface->upcalls;
	struct p4t_loop_conn *conn;
	struct p4t_loop_op *op;

	if (ev->kind == P4T_LOOP_EV_RMA) {
		op = container_of(ev, struct p4t_loop_op, ev);
		if (op->conn) {
			if (op->kind == P4T_LOOP_OP_PULL && !op->status)
				op->status = p4t_loop_pull_exec_locked(op);
			p4u_list_remove(&op->conn_node);
			op->conn = NULL;
		}
		p4t_loop_lock_release();
		up->rma_done(iface->upcall_ctx, op->op_ctx, op->status);
		free(op);
		p4t_loop_lock_acquire();
		return 1;
	}
	conn = container_of(ev, struct p4t_loop_conn, fail_ev);
	/* a conn the engine never had (or refused) goes silently */
	if (!conn->known) {
		p4t_loop_conn_free_locked(conn);
		return 0;
	}
	conn->busy = true;
	p4t_loop_lock_release();
	up->conn_failed(iface->upcall_ctx, &conn->base, conn->fail_status);
	p4t_loop_lock_acquire();
	conn->busy = false;
	conn->state = P4T_LOOP_CONN_CLOSED;
	p4t_loop_conn_free_locked(conn);
	return 1;
}

/* conn_new for a conn the peer opened; false if it is not to be used. */
static bool p4t_loop_conn_announce_locked(struct p4t_loop_iface *iface,
					  struct p4t_loop_conn *conn)
{
	struct sockaddr_in addr = conn->addr;
	int ret;

	conn->busy = true;
	p4t_loop_lock_release();
	ret = iface->upcalls->conn_new(iface->upcall_ctx, &conn->base, &addr,
				       sizeof(addr));
	p4t_loop_lock_acquire();
	conn->busy = false;
	if (ret < 0) {
		/* still unknown, so this end goes without a conn_failed */
		p4u_warn_sparse(P4U_LOG_TRANSPORT,
				"loop: conn from port %u refused: %s",
				ntohs(addr.sin_port), fi_strerror(-ret));
		p4t_loop_link_fail_locked(conn, ret, -FI_ECONNREFUSED);
		return false;
	}
	conn->known = true;
	return conn->state == P4T_LOOP_CONN_ACTIVE;
}

/* Deliver one message (conn_new first if due). Drops the lock. */
static void p4t_loop_msg_deliver_locked(struct p4t_loop_iface *iface,
					struct p4t_loop_msg *msg)
{
	struct p4t_loop_conn *conn = msg->conn;
	int ret;

	/* queued messages only ever sit on ACTIVE ends */
	assert(conn->state == P4T_LOOP_CONN_ACTIVE);
	conn->inq_bytes -= msg->len;
	if (!conn->known && !p4t_loop_conn_announce_locked(iface, conn)) {
		iface->stats.msgs_dropped++;
		goto out;
	}
	conn->busy = true;
	p4t_loop_lock_release();
	ret = iface->upcalls->recv(iface->upcall_ctx, &conn->base, msg->data,
				   msg->len);
	p4t_loop_lock_acquire();
	conn->busy = false;
	iface->stats.msgs_delivered++;
	iface->stats.bytes_delivered += msg->len;
	if (ret < 0 && conn->state == P4T_LOOP_CONN_ACTIVE)
		p4t_loop_link_fail_locked(conn, ret, -FI_ECONNRESET);
out:
	/* closed by the engine during an upcall: freeing was left to us */
	if (conn->state == P4T_LOOP_CONN_CLOSED)
		p4t_loop_conn_free_locked(conn);
	free(msg);
}

/* Nothing waits: every send is queued to its peer at once. */
static void p4t_loop_flush(struct p4t_iface *iface)
{
	(void)iface;
}

static int p4t_loop_progress(struct p4t_iface *iface_, int budget)
{
	struct p4t_loop_iface *iface = p4t_loop_iface_of(iface_);
	struct p4u_list *node;
	int done = 0;

	p4t_loop_lock_acquire();
	while (done < budget) {
		node = p4u_list_pop_head(&iface->evq);
		if (node) {
			done += p4t_loop_ev_run_locked(iface,
				container_of(node, struct p4t_loop_ev, node));
			continue;
		}
		if (iface->held || p4u_list_empty(&iface->msgq))
			break;
		node = p4u_list_pop_head(&iface->msgq);
		p4t_loop_msg_deliver_locked(iface,
			container_of(node, struct p4t_loop_msg, node));
		done++;
	}
	p4t_loop_iface_signal_locked(iface);
	p4t_loop_lock_release();
	return done;
}

static int p4t_loop_wait_fd(struct p4t_iface *iface)
{
	return p4t_loop_iface_of(iface)->efd;
}

const struct p4t_ops p4t_loop_ops = {
	.name = "loop",
	.iface_open = p4t_loop_iface_open,
	.iface_close = p4t_loop_iface_close,
	.iface_query = p4t_loop_iface_query,
	.getname = p4t_loop_getname,
	.conn_get = p4t_loop_conn_get,
	.send = p4t_loop_send,
	.mem_expose = p4t_loop_mem_expose,
	.mem_unexpose = p4t_loop_mem_unexpose,
	.pull = p4t_loop_pull,
	.push = p4t_loop_push,
	.conn_close = p4t_loop_conn_close,
	.progress = p4t_loop_progress,
	.flush = p4t_loop_flush,
	.wait_fd = p4t_loop_wait_fd,
};
