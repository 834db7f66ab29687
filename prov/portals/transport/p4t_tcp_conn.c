/*
 * p4t_tcp_conn.c - TCP links: creation and lookup, the outgoing connect
 * (retried while refused) and the link's deadlines, the send path (direct
 * sendmsg, then the write queue flushed by one sendmsg of many iovecs),
 * failures and conn_close.
 *
 * Not here: sockets, accept and deadlines (p4t_tcp.c), the handshake
 * (p4t_tcp_hs.c), the receive path and what chunks mean (p4t_tcp_rma.c).
 *
 * Write order on a socket: the handshake bytes of the socket (sock->ctl)
 * first, then conn->txq in order. A stream or push tx describes one chunk
 * at a time; a flush never gathers past a chunk, so when the chunk is
 * written the next one can be armed in place (push: stream order) or the
 * stream moved behind the messages queued meanwhile (pull data rotates).
 */
#include <config.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_tcp_priv.h"

/* ---- iovec helpers --------------------------------------------------------- */

/* Describe [off, off + len) of iov in at most max entries; returns count. */
size_t p4t_tcp_iov_slice(const struct iovec *iov, size_t iovcnt,
			 uint64_t off, size_t len, struct iovec *out,
			 size_t max)
{
	size_t i, n = 0, take;

	for (i = 0; i < iovcnt && len && n < max; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = P4U_MIN(len, iov[i].iov_len - off);
		out[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		out[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

void p4t_tcp_iov_copy_in(const struct iovec *iov, size_t iovcnt, uint64_t off,
			 const void *src, size_t len)
{
	const uint8_t *p = src;
	size_t i, take;

	for (i = 0; i < iovcnt && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = P4U_MIN(len, iov[i].iov_len - off);
		memcpy((uint8_t *)iov[i].iov_base + off, p, take);
		p += take;
		len -= take;
		off = 0;
	}
}

void p4t_tcp_iov_copy_out(void *dst, const struct iovec *iov, size_t iovcnt,
			  uint64_t off, size_t len)
{
	uint8_t *p = dst;
	size_t i, take;

	for (i = 0; i < iovcnt && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = P4U_MIN(len, iov[i].iov_len - off);
		memcpy(p, (const uint8_t *)iov[i].iov_base + off, take);
		p += take;
		len -= take;
		off = 0;
	}
}

/* A socket errno as a link status; fi_errno values are errno values. */
int p4t_tcp_errno_status(int err)
{
	switch (err) {
	case EPIPE:
	case ECONNRESET:
		return -FI_ECONNRESET;
	case 0:
		return -FI_EIO;
	default:
		return -err;
	}
}

/* ---- links ---------------------------------------------------------------- */

struct p4t_tcp_conn *p4t_tcp_conn_find(struct p4t_tcp_iface *iface,
				       const struct sockaddr_storage *ss,
				       socklen_t len)
{
	uint64_t h = p4t_tcp_addr_hash(ss, len);
	struct p4t_tcp_conn *conn;

	p4u_hash_foreach(&iface->by_addr, h, conn, struct p4t_tcp_conn, hnode)
		if (p4t_tcp_addr_eq(&conn->addr, conn->addrlen, ss, len))
			return conn;
	return NULL;
}

/*
 * A connecting link's own deadline passed with no attempt of ours in
 * flight: the peer we wait for after a collision never connected, or
 * (refused, a retry still pending) the time for retries ran out.
 */
static void p4t_tcp_conn_expired(struct p4u_timer *timer, uint64_t now_ns)
{
	struct p4t_tcp_conn *conn = container_of(timer, struct p4t_tcp_conn,
						 deadline_timer);

	(void)now_ns;
	p4t_tcp_conn_fail(conn, p4u_timer_armed(&conn->retry_timer) ?
			  -FI_ECONNREFUSED : -FI_ETIMEDOUT);
}

/* The pause after a refusal is over: connect again. */
static void p4t_tcp_conn_retry(struct p4u_timer *timer, uint64_t now_ns)
{
	(void)now_ns;
	p4t_tcp_conn_reconnect(container_of(timer, struct p4t_tcp_conn,
					    retry_timer));
}

/* Stop timing conn: it is up, failed or closed. */
static void p4t_tcp_conn_timers_cancel(struct p4t_tcp_conn *conn)
{
	p4u_timer_cancel(conn->iface->timers, &conn->deadline_timer);
	p4u_timer_cancel(conn->iface->timers, &conn->retry_timer);
}

/*
 * A connecting link with no attempt in flight waits for its own deadline
 * (set at creation or by a collision): a retry, or the peer's socket, has
 * to make it before.
 */
void p4t_tcp_conn_wait_peer(struct p4t_tcp_conn *conn)
{
	p4u_timer_arm(conn->iface->timers, &conn->deadline_timer,
		      conn->deadline_ns);
}

struct p4t_tcp_conn *p4t_tcp_conn_create(struct p4t_tcp_iface *iface,
					 const struct sockaddr_storage *ss,
					 socklen_t len)
{
	struct p4t_tcp_conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	conn->iface = iface;
	conn->addr = *ss;
	conn->addrlen = len;
	conn->state = P4T_TCP_CONN_CONNECTING;
	conn->deadline_ns = p4u_time_ns() +
			    iface->peer_timeout_ms * 1000000ull;
	p4u_timer_init(&conn->deadline_timer, p4t_tcp_conn_expired);
	p4u_timer_init(&conn->retry_timer, p4t_tcp_conn_retry);
	p4t_tcp_conn_wait_peer(conn);
	p4u_list_init(&conn->txq);
	p4u_list_init(&conn->pulls);
	p4u_list_node_init(&conn->active);
	p4u_list_node_init(&conn->backlog);
	p4u_list_node_init(&conn->corked);
	p4u_list_node_init(&conn->fail_ev.node);
	conn->fail_ev.kind = P4T_TCP_EV_CONN_FAILED;
	p4u_hash_insert(&iface->by_addr, &conn->hnode,
			p4t_tcp_addr_hash(ss, len));
	conn->hashed = true;
	p4u_list_insert_tail(&iface->conns, &conn->node);
	iface->nconnecting++;
	iface->stats.links++;
	return conn;
}

/* Start the outgoing socket of a CONNECTING link. */
int p4t_tcp_conn_connect(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_iface *iface = conn->iface;
	struct p4t_tcp_sock *sock;
	int fd, ret;

	fd = socket(conn->addr.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sock = p4t_tcp_sock_new(iface, fd);
	if (!sock) {
		close(fd);
		return -FI_ENOMEM;
	}
	sock->outgoing = true;
	sock->conn = conn;
	sock->state = P4T_TCP_SOCK_CONNECTING;
	(void)p4t_tcp_sock_setup(iface, fd);
	if (connect(fd, (struct sockaddr *)&conn->addr, conn->addrlen) &&
	    errno != EINPROGRESS) {
		ret = -errno;
		close(fd);
		free(sock);
		return ret;
	}
	p4t_tcp_hello_pack(iface, P4W_T_HELLO, sock->ctl);
	sock->ctl_len = P4T_TCP_HELLO_LEN;
	ret = p4t_tcp_sock_watch(sock, EPOLLOUT | EPOLLIN);
	if (ret) {
		close(fd);
		free(sock);
		return ret;
	}
	/* the attempt has the peer timeout to connect and be answered */
	p4t_tcp_pending_add(sock, iface->peer_timeout_ms);
	conn->sock = sock;
	p4u_timer_cancel(iface->timers, &conn->deadline_timer);
	iface->stats.connects++;
	return 0;
}

/* Connect, or after a refusal, connect again (or wait and retry). */
void p4t_tcp_conn_reconnect(struct p4t_tcp_conn *conn)
{
	int ret = p4t_tcp_conn_connect(conn);

	if (!ret || (ret == -ECONNREFUSED && p4t_tcp_conn_retry_later(conn)))
		return;
	/* reported from progress, as on a network */
	p4t_tcp_conn_fail(conn, ret == -ECONNREFUSED ? -FI_ECONNREFUSED : ret);
}

/*
 * A connect refused by the peer's host: its process may simply not listen
 * yet (jobs start in any order, and tcp;ofi_rxm and net wait for it too).
 * Failing the link would fail what was queued for it, and an eager send
 * copied out already reported success: the message would be lost. So the
 * link stays CONNECTING and its retry timer connects again after a
 * pause, till the peer timeout; false when that has run out.
 */
bool p4t_tcp_conn_retry_later(struct p4t_tcp_conn *conn)
{
	uint64_t now = p4u_time_ns();

	conn->backoff_ms = conn->backoff_ms ?
		P4U_MIN(conn->backoff_ms * 2, (uint32_t)P4T_TCP_RETRY_MAX_MS) :
		P4T_TCP_RETRY_MIN_MS;
	if (now + conn->backoff_ms * 1000000ull >= conn->deadline_ns)
		return false;
	/* the link's deadline, after the retry, times it again from here */
	if (conn->sock)
		p4t_tcp_sock_close(conn->sock);
	p4t_tcp_timer_arm_ms(conn->iface, &conn->retry_timer, now,
			     conn->backoff_ms);
	return true;
}

/* sock finished its handshake for conn: from now on it is the link. */
int p4t_tcp_conn_adopt(struct p4t_tcp_conn *conn, struct p4t_tcp_sock *sock)
{
	struct p4t_tcp_iface *iface = conn->iface;

	if (!conn->rx.buf) {
		conn->rx.buf = malloc(P4T_TCP_STAGE);
		if (!conn->rx.buf)
			return -FI_ENOMEM;
	}
	if (conn->sock && conn->sock != sock)
		p4t_tcp_sock_close(conn->sock);
	p4u_list_remove(&sock->node);
	p4u_timer_cancel(iface->timers, &sock->timer);
	if (sock->state == P4T_TCP_SOCK_HELLO_WAIT)
		iface->naccepted--;
	sock->state = P4T_TCP_SOCK_ESTABLISHED;
	sock->conn = conn;
	conn->sock = sock;
	conn->state = P4T_TCP_CONN_ESTABLISHED;
	/* a retry may still be pending: the peer's own socket got here */
	p4t_tcp_conn_timers_cancel(conn);
	conn->wblocked = false;
	iface->nconnecting--;
	iface->nestablished++;
	p4u_list_insert_tail(&iface->established, &conn->active);
	iface->stats.handshakes++;
	p4t_tcp_conn_want_out(conn);
	return 0;
}

/* EPOLLOUT only while something waits to be written. */
void p4t_tcp_conn_want_out(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_sock *sock = conn->sock;
	uint32_t ev = EPOLLIN;

	if (!sock || sock->state != P4T_TCP_SOCK_ESTABLISHED)
		return;
	if (sock->ctl_off < sock->ctl_len || !p4u_list_empty(&conn->txq))
		ev |= EPOLLOUT;
	(void)p4t_tcp_sock_watch(sock, ev);
}

/* ---- the write queue -------------------------------------------------------- */

void p4t_tcp_tx_free(struct p4t_tcp_iface *iface, struct p4t_tcp_tx *tx)
{
	if (tx->buf_kind == P4T_TCP_BUF_POOL)
		p4u_pool_free(&iface->bufs, tx->buf);
	else if (tx->buf_kind == P4T_TCP_BUF_HEAP)
		free(tx->buf);
	free(tx->iov_heap);
	if (tx->pooled)
		p4u_pool_free(&iface->txs, tx);
}

/* The caller kicks the link afterwards (p4t_tcp_conn_kick). */
void p4t_tcp_txq_append(struct p4t_tcp_conn *conn, struct p4t_tcp_tx *tx)
{
	p4u_list_insert_tail(&conn->txq, &tx->ev.node);
	conn->txq_bytes += tx->len;
	if (tx->kind == P4T_TCP_TX_STREAM)
		conn->nstreams++;
}

/* conn's queue leaves at the end of this or the next progress call. */
static void p4t_tcp_conn_cork(struct p4t_tcp_conn *conn)
{
	if (!p4u_list_node_linked(&conn->corked))
		p4u_list_insert_tail(&conn->iface->corked, &conn->corked);
}

/*
 * Something was queued: write it now unless the socket is known full;
 * EPOLLOUT is asked for only if something is left (no epoll_ctl for
 * what leaves at once).
 */
void p4t_tcp_conn_kick(struct p4t_tcp_conn *conn)
{
	/* inside progress: written together when the call ends */
	if (conn->iface->in_progress &&
	    conn->state == P4T_TCP_CONN_ESTABLISHED) {
		p4t_tcp_conn_cork(conn);
		return;
	}
	if (!conn->wblocked)
		(void)p4t_tcp_conn_flush(conn);
	else
		p4t_tcp_conn_want_out(conn);
}

static struct p4t_tcp_tx *p4t_tcp_tx_alloc(struct p4t_tcp_iface *iface)
{
	struct p4t_tcp_tx *tx = p4u_pool_alloc(&iface->txs);

	if (!tx)
		return NULL;
	tx->pooled = true;
	tx->kind = P4T_TCP_TX_MSG;
	p4u_list_node_init(&tx->ev.node);
	return tx;
}

/* Copy bytes [skip, len) of hdr + iov into dst. */
static void p4t_tcp_msg_copy(uint8_t *dst, const void *hdr, size_t hdr_len,
			     const struct iovec *iov, size_t iovcnt,
			     size_t skip, size_t len)
{
	size_t take;

	if (skip < hdr_len) {
		take = hdr_len - skip;
		memcpy(dst, (const uint8_t *)hdr + skip, take);
		dst += take;
		len -= hdr_len;
		skip = 0;
	} else {
		skip -= hdr_len;
		len -= hdr_len;
	}
	p4t_tcp_iov_copy_out(dst, iov, iovcnt, skip, len - skip);
}

/* The unsent part [sent, len) of a message as an owned copy. */
static int p4t_tcp_tx_fill_copy(struct p4t_tcp_iface *iface,
				struct p4t_tcp_tx *tx, const void *hdr,
				size_t hdr_len, const struct iovec *iov,
				size_t iovcnt, size_t sent, size_t len)
{
	size_t rest = len - sent;

	if (rest <= P4T_TCP_HEAD_MAX) {
		p4t_tcp_msg_copy(tx->head, hdr, hdr_len, iov, iovcnt, sent,
				 len);
		tx->head_len = (uint32_t)rest;
		tx->len = rest;
		return 0;
	}
	if (rest <= P4T_TCP_BUF_SIZE) {
		tx->buf = p4u_pool_alloc(&iface->bufs);
		tx->buf_kind = P4T_TCP_BUF_POOL;
	}
	if (!tx->buf) {
		tx->buf = malloc(rest);
		tx->buf_kind = P4T_TCP_BUF_HEAP;
		if (!tx->buf) {
			tx->buf_kind = P4T_TCP_BUF_NONE;
			return -FI_ENOMEM;
		}
	}
	p4t_tcp_msg_copy(tx->buf, hdr, hdr_len, iov, iovcnt, sent, len);
	tx->one.iov_base = tx->buf;
	tx->one.iov_len = rest;
	tx->body = &tx->one;
	tx->body_cnt = 1;
	tx->len = rest;
	return 0;
}

/* Keep the caller's memory: header copied, iovecs copied, data not. */
static int p4t_tcp_tx_fill_ref(struct p4t_tcp_tx *tx, const void *hdr,
			       size_t hdr_len, const struct iovec *iov,
			       size_t iovcnt, size_t sent, size_t len)
{
	struct iovec *copy = tx->iov_inline;

	if (iovcnt > P4T_TCP_TX_IOV) {
		copy = malloc(iovcnt * sizeof(*copy));
		if (!copy)
			return -FI_ENOMEM;
		tx->iov_heap = copy;
	}
	if (iovcnt)
		memcpy(copy, iov, iovcnt * sizeof(*copy));
	memcpy(tx->head, hdr, hdr_len);
	tx->head_len = (uint32_t)hdr_len;
	tx->body = copy;
	tx->body_cnt = iovcnt;
	tx->len = len;
	tx->done = sent;
	return 0;
}

/* Queue what of a message is not written yet; P4T_DONE or P4T_QUEUED. */
static int p4t_tcp_send_queue(struct p4t_tcp_conn *conn, const void *hdr,
			      size_t hdr_len, const struct iovec *iov,
			      size_t iovcnt, size_t sent, size_t len,
			      void *op_ctx)
{
	struct p4t_tcp_iface *iface = conn->iface;
	bool copy = len - sent <= P4T_TCP_MAX_INLINE || !op_ctx ||
		    hdr_len > P4T_TCP_HEAD_MAX;
	struct p4t_tcp_tx *tx = p4t_tcp_tx_alloc(iface);
	int ret;

	if (!tx)
		return -FI_ENOMEM;
	if (copy)
		ret = p4t_tcp_tx_fill_copy(iface, tx, hdr, hdr_len, iov, iovcnt,
					   sent, len);
	else
		ret = p4t_tcp_tx_fill_ref(tx, hdr, hdr_len, iov, iovcnt, sent,
					  len);
	if (ret) {
		p4t_tcp_tx_free(iface, tx);
		return ret;
	}
	tx->op_ctx = op_ctx;
	tx->notify = !copy;
	if (copy)
		iface->stats.queued_copy++;
	else
		iface->stats.queued_ref++;
	p4t_tcp_txq_append(conn, tx);
	return copy ? P4T_DONE : P4T_QUEUED;
}

/* A transport control message, always copied, at the tail of the queue. */
struct p4t_tcp_tx *p4t_tcp_tx_ctl(struct p4t_tcp_conn *conn, const void *msg,
				  size_t len)
{
	struct p4t_tcp_tx *tx = p4t_tcp_tx_alloc(conn->iface);

	if (!tx)
		return NULL;
	memcpy(tx->head, msg, len);
	tx->head_len = (uint32_t)len;
	tx->len = len;
	p4t_tcp_txq_append(conn, tx);
	return tx;
}

static uint32_t p4t_tcp_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The whole length, if hdr starts an engine message of exactly that. */
static int p4t_tcp_msg_check(const void *hdr, size_t hdr_len,
			     const struct iovec *iov, size_t iovcnt,
			     size_t *len_p)
{
	const uint8_t *bytes = hdr;
	size_t payload;
	int ret;

	if (!hdr || hdr_len < P4T_TCP_HDR_LEN ||
	    iovcnt >= P4T_TCP_WRITEV_MAX)
		return -FI_EINVAL;
	ret = p4u_iov_len(iov, iovcnt, &payload);
	if (ret)
		return ret;
	if (payload > P4T_TCP_MAX_MSG || hdr_len > P4T_TCP_MAX_MSG - payload)
		return -FI_EMSGSIZE;
	if (p4t_tcp_le32(bytes + offsetof(struct p4w_hdr, length)) !=
	    hdr_len + payload)
		return -FI_EINVAL;
	/* transport types are ours: the engine never sends them */
	if (bytes[offsetof(struct p4w_hdr, type)] >= P4W_T_FIRST)
		return -FI_EINVAL;
	*len_p = hdr_len + payload;
	return 0;
}

/* One sendmsg of hdr + iov; bytes written (0: would block), or < 0. */
static ssize_t p4t_tcp_send_direct(struct p4t_tcp_conn *conn, const void *hdr,
				   size_t hdr_len, const struct iovec *iov,
				   size_t iovcnt)
{
	struct iovec *v = conn->iface->wiov;
	struct msghdr mh = { .msg_iov = v, .msg_iovlen = iovcnt + 1 };
	ssize_t n;

	v[0].iov_base = (void *)hdr;
	v[0].iov_len = hdr_len;
	if (iovcnt)	/* iov may be NULL then */
		memcpy(v + 1, iov, iovcnt * sizeof(*v));
	do {
		n = sendmsg(conn->sock->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	conn->iface->stats.sendmsg_calls++;
	if (n >= 0)
		return n;
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		conn->wblocked = true;
		return 0;
	}
	return p4t_tcp_errno_status(errno);
}

/*
 * Batching: a send the engine lets wait (P4T_SEND_BATCH: what it sends
 * inside its progress call, and requests between calls after the first
 * to the link) up to P4T_TCP_BATCH_REF_MAX goes onto the link's queue
 * (copied if small, else by reference when the caller waits for
 * send_done) and is written later with everything else sent meanwhile,
 * in one writev, instead of a sendmsg of its own: at the next p4t_flush
 * or progress call, or when the queue reaches P4T_TCP_BATCH_MAX. Larger
 * payloads go at once.
 */
static bool p4t_tcp_batched(struct p4t_tcp_conn *conn, size_t len,
			    const void *op_ctx, unsigned flags)
{
	/* a pooled copy (no malloc), or by reference if the caller waits */
	if (!(flags & P4T_SEND_BATCH) ||
	    conn->state != P4T_TCP_CONN_ESTABLISHED ||
	    (len > P4T_TCP_BUF_SIZE &&
	     (!op_ctx || len > P4T_TCP_BATCH_REF_MAX)))
		return false;
	return true;
}

static int p4t_tcp_send_batch(struct p4t_tcp_conn *conn, const void *hdr,
			      size_t hdr_len, const struct iovec *iov,
			      size_t iovcnt, size_t len, void *op_ctx)
{
	int ret;

	/* small ones copied (NULL op_ctx): the caller's memory is free at
	 * once; larger ones referenced, send_done when written */
	ret = p4t_tcp_send_queue(conn, hdr, hdr_len, iov, iovcnt, 0, len,
				 len <= P4T_TCP_BUF_SIZE ? NULL : op_ctx);
	if (ret < 0)
		return ret;
	if (conn->txq_bytes >= P4T_TCP_BATCH_MAX) {
		p4u_list_remove(&conn->corked);
		p4t_tcp_conn_kick(conn);
	} else {
		p4t_tcp_conn_cork(conn);
	}
	return ret;
}

/* Write the batched sends of every link. */
void p4t_tcp_corked_flush(struct p4t_tcp_iface *iface)
{
	struct p4t_tcp_conn *conn;
	struct p4u_list *node;

	while ((node = p4u_list_pop_head(&iface->corked))) {
		conn = container_of(node, struct p4t_tcp_conn, corked);
		p4u_list_node_init(&conn->corked);
		p4t_tcp_conn_kick(conn);
	}
}

/* A sequenced request finds the link's queue over its bound (counted). */
static bool p4t_tcp_queue_full(struct p4t_tcp_conn *conn, unsigned flags)
{
	struct p4t_tcp_iface *iface = conn->iface;

	if (!(flags & P4T_SEND_SEQ) ||
	    p4u_list_empty(&conn->txq) || conn->txq_bytes < iface->queue_limit)
		return false;
	iface->stats.eagain++;
	return true;
}

/*
 * One sendmsg straight from the caller's memory when nothing is queued;
 * what does not go at once is queued and the link kicked.
 */
static int p4t_tcp_send_now(struct p4t_tcp_conn *conn, const void *hdr,
			    size_t hdr_len, const struct iovec *iov,
			    size_t iovcnt, size_t len, void *op_ctx)
{
	ssize_t sent = 0;
	int ret;

	if (conn->state == P4T_TCP_CONN_ESTABLISHED &&
	    p4u_list_empty(&conn->txq) &&
	    conn->sock->ctl_off == conn->sock->ctl_len) {
		sent = p4t_tcp_send_direct(conn, hdr, hdr_len, iov, iovcnt);
		if (sent < 0) {
			/* dropped with the link; conn_failed follows */
			p4t_tcp_conn_fail(conn, (int)sent);
			return P4T_DONE;
		}
		if ((size_t)sent == len)
			return P4T_DONE;
		conn->wblocked = true;	/* a short write: the socket is full */
	}
	ret = p4t_tcp_send_queue(conn, hdr, hdr_len, iov, iovcnt, (size_t)sent,
				 len, op_ctx);
	if (ret >= 0)
		p4t_tcp_conn_kick(conn);
	return ret;
}

/*
 * A layered transport's own message (P4T_SEND_XPORT): framed here as
 * P4W_T_XPORT, copied, and sent like any other message on the link, in
 * order with them; the peer's transport hands it to xport_recv.
 */
static int p4t_tcp_send_xport(struct p4t_tcp_conn *conn, const void *msg,
			      size_t len, const struct iovec *iov,
			      size_t iovcnt, unsigned flags)
{
	struct p4t_tcp_iface *iface = conn->iface;
	uint8_t frame[P4T_TCP_HDR_LEN + P4W_XPORT_MAX];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = P4W_T_XPORT,
		.length = (uint32_t)(P4T_TCP_HDR_LEN + len),
	};

	if ((len && !msg) || len > P4W_XPORT_MAX || iovcnt || iov ||
	    (flags & P4T_SEND_SEQ) || conn->self)
		return -FI_EINVAL;
	if (conn->state != P4T_TCP_CONN_CONNECTING &&
	    conn->state != P4T_TCP_CONN_ESTABLISHED) {
		iface->stats.sends_dropped++;
		return P4T_DONE;
	}
	p4w_hdr_pack(frame, &hdr);
	if (len)
		memcpy(frame + P4T_TCP_HDR_LEN, msg, len);
	iface->stats.xport_sent++;
	len += P4T_TCP_HDR_LEN;
	/* no op_ctx: what does not go at once is copied, P4T_DONE */
	if (p4t_tcp_batched(conn, len, NULL, flags))
		return p4t_tcp_send_batch(conn, frame, len, NULL, 0, len, NULL);
	return p4t_tcp_send_now(conn, frame, len, NULL, 0, len, NULL);
}

int p4t_tcp_send(struct p4t_iface *iface_, struct p4t_conn *conn_,
		 const void *hdr, size_t hdr_len, const struct iovec *iov,
		 size_t iovcnt, void *op_ctx, unsigned flags)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_conn *conn = p4t_tcp_conn_of(conn_);
	size_t len;
	int ret;

	if (flags & P4T_SEND_XPORT)
		return p4t_tcp_send_xport(conn, hdr, hdr_len, iov, iovcnt,
					  flags);
	ret = p4t_tcp_msg_check(hdr, hdr_len, iov, iovcnt, &len);
	if (ret)
		return ret;
	if (conn->self)
		return p4t_tcp_self_send(iface, hdr, hdr_len, iov, iovcnt, len,
					 flags);
	if (conn->state != P4T_TCP_CONN_CONNECTING &&
	    conn->state != P4T_TCP_CONN_ESTABLISHED) {
		/* as on a network: gone with the link, conn_failed follows */
		iface->stats.sends_dropped++;
		return P4T_DONE;
	}
	if (p4t_tcp_queue_full(conn, flags))
		return -FI_EAGAIN;
	iface->stats.msgs_sent++;
	iface->stats.bytes_sent += len;
	if (p4t_tcp_batched(conn, len, op_ctx, flags))
		return p4t_tcp_send_batch(conn, hdr, hdr_len, iov, iovcnt, len,
					  op_ctx);
	return p4t_tcp_send_now(conn, hdr, hdr_len, iov, iovcnt, len, op_ctx);
}

/*
 * send_offer: an OFFER_ANNOUNCE frame naming mem's cookie and len, the
 * engine's message as it is (its header is not ours to read or mark),
 * then an OFFER frame carrying the first len bytes of mem, as one tx on
 * the queue (nothing may come between them: the receiver expects the
 * message, then the OFFER), the data by reference (p4_wire.h, Offers).
 * Where no offer can go (self link, a link that is gone, an exposure that
 * is not this link's, a source in more pieces than we slice here) the
 * message goes alone: the peer then pulls as usual.
 */
int p4t_tcp_send_offer(struct p4t_iface *iface_, struct p4t_conn *conn_,
		       const void *hdr, size_t hdr_len, struct p4t_mem *mem_,
		       size_t len, void *op_ctx, unsigned flags)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_conn *conn = p4t_tcp_conn_of(conn_);
	struct p4t_tcp_mem *mem = (struct p4t_tcp_mem *)mem_;
	struct p4w_hdr ah = {
		.version = P4W_VERSION,
		.type = P4W_T_OFFER_ANNOUNCE,
		.length = (uint32_t)P4T_TCP_DATA_LEN,
	};
	struct p4w_hdr oh = {
		.version = P4W_VERSION,
		.type = P4W_T_OFFER,
		.length = (uint32_t)(P4T_TCP_DATA_LEN + len),
	};
	struct p4w_data d = { .length = len, .last = 1 };
	uint8_t head[P4T_TCP_HEAD_MAX], *p = head;
	struct iovec v[P4T_TCP_OFFER_IOV];
	size_t msg_len, n, got = 0, head_len, total;
	int ret;

	ret = p4t_tcp_msg_check(hdr, hdr_len, NULL, 0, &msg_len);
	if (ret)
		return ret;
	if (!mem || !op_ctx || !len || len > iface->offer_max ||
	    len > mem->len || !(mem->access & P4T_ACCESS_READ) ||
	    hdr_len + 2 * P4T_TCP_DATA_LEN > P4T_TCP_HEAD_MAX)
		return -FI_EINVAL;
	n = p4t_tcp_iov_slice(mem->iov, mem->iovcnt, 0, len, v,
			      P4T_TCP_OFFER_IOV);
	(void)p4u_iov_len(v, n, &got);
	if (conn->self || mem->conn != conn || got != len ||
	    (conn->state != P4T_TCP_CONN_CONNECTING &&
	     conn->state != P4T_TCP_CONN_ESTABLISHED))
		return p4t_tcp_send(iface_, conn_, hdr, hdr_len, NULL, 0,
				    op_ctx, flags);
	if (p4t_tcp_queue_full(conn, flags))
		return -FI_EAGAIN;
	p4t_tcp_mem_cookie(iface, mem, &d.dst);
	p4w_hdr_pack(p, &ah);
	p4w_data_pack(p + P4T_TCP_HDR_LEN, &d);
	p += P4T_TCP_DATA_LEN;
	memcpy(p, hdr, hdr_len);
	p += hdr_len;
	p4w_hdr_pack(p, &oh);
	p4w_data_pack(p + P4T_TCP_HDR_LEN, &d);
	head_len = hdr_len + 2 * P4T_TCP_DATA_LEN;
	total = head_len + len;
	iface->stats.msgs_sent++;
	iface->stats.bytes_sent += msg_len;
	iface->stats.offers_sent++;
	/*
	 * Batching (P4T_SEND_BATCH): the offer waits on the queue, by
	 * reference, for the next flush, so a window of them leaves in a few
	 * large writes; rendezvous data moves only in progress anyway. One
	 * large write per window moves loopback data about twice as fast as
	 * one per message.
	 */
	if (conn->state == P4T_TCP_CONN_ESTABLISHED &&
	    (flags & P4T_SEND_BATCH)) {
		ret = p4t_tcp_send_queue(conn, head, head_len, v, n, 0, total,
					 op_ctx);
		if (ret >= 0)
			p4t_tcp_conn_cork(conn);
		return ret;
	}
	return p4t_tcp_send_now(conn, head, head_len, v, n, total, op_ctx);
}

/* ---- flushing ----------------------------------------------------------------- */

/* Add tx's unwritten bytes to v (at most max entries); bytes added. */
static size_t p4t_tcp_tx_gather(const struct p4t_tcp_tx *tx, struct iovec *v,
				size_t max, size_t *n_p)
{
	size_t n = *n_p, done = tx->done, bytes = 0, i, first;

	if (done < tx->head_len && n < max) {
		v[n].iov_base = (void *)(tx->head + done);
		v[n].iov_len = tx->head_len - done;
		bytes += v[n].iov_len;
		n++;
		done = tx->head_len;
	}
	if (done < tx->len && done >= tx->head_len && n < max) {
		first = n;
		n += p4t_tcp_iov_slice(tx->body, tx->body_cnt,
				       tx->body_off + (done - tx->head_len),
				       tx->len - done, v + n, max - n);
		for (i = first; i < n; i++)
			bytes += v[i].iov_len;
	}
	*n_p = n;
	return bytes;
}

/* A tx is written: complete it (or let its chunk source re-arm it). */
static void p4t_tcp_tx_written(struct p4t_tcp_conn *conn,
			       struct p4t_tcp_tx *tx)
{
	if (tx->kind != P4T_TCP_TX_MSG) {
		p4t_tcp_rma_chunk_written(tx);
		return;
	}
	p4u_list_remove(&tx->ev.node);
	conn->txq_bytes -= tx->len;
	if (tx->notify) {
		tx->ev.kind = P4T_TCP_EV_SEND_DONE;
		tx->ev.status = 0;
		p4t_tcp_ev_post(conn->iface, &tx->ev);
	} else {
		p4t_tcp_tx_free(conn->iface, tx);
	}
}

static void p4t_tcp_conn_consume(struct p4t_tcp_conn *conn, size_t n)
{
	struct p4t_tcp_sock *sock = conn->sock;
	struct p4t_tcp_tx *tx;
	size_t take;

	take = P4U_MIN(n, sock->ctl_len - sock->ctl_off);
	sock->ctl_off += take;
	n -= take;
	while (n) {
		tx = p4u_list_first_entry(&conn->txq, struct p4t_tcp_tx,
					  ev.node);
		take = P4U_MIN(n, tx->len - tx->done);
		tx->done += take;
		n -= take;
		if (tx->done == tx->len)
			p4t_tcp_tx_written(conn, tx);
	}
}

/* Gather the socket's handshake bytes and the queue (see the loop). */
static size_t p4t_tcp_conn_gather(struct p4t_tcp_conn *conn, size_t *n_p)
{
	struct p4t_tcp_sock *sock = conn->sock;
	struct iovec *v = conn->iface->wiov;
	struct p4t_tcp_tx *tx;
	size_t n = 0, bytes = 0;

	if (sock->ctl_off < sock->ctl_len) {
		v[n].iov_base = sock->ctl + sock->ctl_off;
		v[n].iov_len = sock->ctl_len - sock->ctl_off;
		bytes += v[n++].iov_len;
	}
	p4u_list_foreach_entry(&conn->txq, tx, struct p4t_tcp_tx, ev.node) {
		if (n >= P4T_TCP_WRITEV_MAX || bytes >= P4T_TCP_WRITEV_BYTES)
			break;
		bytes += p4t_tcp_tx_gather(tx, v, P4T_TCP_WRITEV_MAX, &n);
		/*
		 * A push arms its next chunk in place once this one is
		 * written: nothing may be gathered behind it. A stream's
		 * next chunk moves behind what is queued, so the chunks of
		 * many streams (and messages between them) leave together.
		 */
		if (tx->kind == P4T_TCP_TX_PUSH)
			break;
	}
	*n_p = n;
	return bytes;
}

/*
 * Write what the socket takes. Returns 0, or -1 when the link failed.
 * Completions become events; no upcall is made here.
 */
int p4t_tcp_conn_flush(struct p4t_tcp_conn *conn)
{
	struct msghdr mh = { .msg_iov = conn->iface->wiov };
	size_t n, bytes;
	ssize_t w;

	if (conn->state != P4T_TCP_CONN_ESTABLISHED)
		return 0;
	conn->wblocked = false;
	for (;;) {
		bytes = p4t_tcp_conn_gather(conn, &n);
		if (!n)
			break;
		mh.msg_iovlen = n;
		w = sendmsg(conn->sock->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		conn->iface->stats.writev_calls++;
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			conn->wblocked = true;
			break;
		}
		if (w < 0) {
			p4t_tcp_conn_fail(conn, p4t_tcp_errno_status(errno));
			return -1;
		}
		p4t_tcp_conn_consume(conn, (size_t)w);
		if ((size_t)w < bytes) {
			conn->wblocked = true;
			break;
		}
	}
	p4t_tcp_conn_want_out(conn);
	return 0;
}

/* ---- failure and close ------------------------------------------------------- */

static void p4t_tcp_conn_abort_txq(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_iface *iface = conn->iface;
	struct p4u_list *node;
	struct p4t_tcp_tx *tx;

	while ((node = p4u_list_pop_head(&conn->txq))) {
		tx = container_of(node, struct p4t_tcp_tx, ev.node);
		if (tx->kind != P4T_TCP_TX_MSG) {
			p4t_tcp_rma_abort(tx->rma, -FI_ECONNABORTED);
		} else if (tx->notify) {
			tx->ev.kind = P4T_TCP_EV_SEND_DONE;
			tx->ev.status = -FI_ECONNABORTED;
			p4t_tcp_ev_post(iface, &tx->ev);
		} else {
			p4t_tcp_tx_free(iface, tx);
		}
	}
	conn->txq_bytes = 0;
	conn->nstreams = 0;
}

static void p4t_tcp_conn_abort_pulls(struct p4t_tcp_conn *conn)
{
	struct p4u_list *node;

	while ((node = p4u_list_pop_head(&conn->pulls)))
		p4t_tcp_rma_abort(container_of(node, struct p4t_tcp_rma, link),
				  -FI_ECONNABORTED);
}

/* Unfindable, socket closed, operations aborted (events queued). */
static void p4t_tcp_conn_down(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_iface *iface = conn->iface;

	if (conn->hashed)
		p4u_hash_remove(&iface->by_addr, &conn->hnode);
	conn->hashed = false;
	if (conn->state == P4T_TCP_CONN_CONNECTING)
		iface->nconnecting--;
	if (p4u_list_node_linked(&conn->active)) {
		p4u_list_remove(&conn->active);
		iface->nestablished--;
	}
	p4u_list_remove(&conn->backlog);
	p4u_list_remove(&conn->corked);
	if (conn->sock)
		p4t_tcp_sock_close(conn->sock);
	conn->sock = NULL;
	p4t_tcp_conn_timers_cancel(conn);
	free(conn->rx.big);
	conn->rx.big = NULL;
	conn->rx.pull = NULL;
	conn->rx.mem = NULL;
	conn->rx.offer = P4T_TCP_OFFER_NONE;
	conn->rx.offer_pull = NULL;	/* on conn->pulls: aborted below */
	conn->rx.mode = P4T_TCP_RX_PARSE;
	conn->rx.head = conn->rx.tail = 0;
	p4t_tcp_conn_abort_txq(conn);
	p4t_tcp_conn_abort_pulls(conn);
	p4t_tcp_mem_forget_conn(conn);
	iface->stats.links--;
}

/* The link fails: its operations complete with errors, then conn_failed. */
void p4t_tcp_conn_fail(struct p4t_tcp_conn *conn, int status)
{
	char buf[64];

	if (conn->state != P4T_TCP_CONN_CONNECTING &&
	    conn->state != P4T_TCP_CONN_ESTABLISHED)
		return;
	p4u_info(P4U_LOG_TRANSPORT, "tcp: link to %s down: %s",
		 p4t_tcp_addr_str(&conn->addr, buf, sizeof(buf)),
		 fi_strerror(-status));
	p4t_tcp_conn_down(conn);
	conn->state = P4T_TCP_CONN_FAILED;
	conn->iface->stats.link_failures++;
	conn->fail_ev.status = status;
	p4t_tcp_ev_post(conn->iface, &conn->fail_ev);
}

void p4t_tcp_conn_free(struct p4t_tcp_conn *conn)
{
	/* not armed past conn_down; the self link never armed them */
	if (!conn->self)
		p4t_tcp_conn_timers_cancel(conn);
	free(conn->rx.buf);
	free(conn->rx.big);
	free(conn);
}

/* Best effort: a BYE when no message is half written. */
void p4t_tcp_conn_bye(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_tx *tx;
	uint8_t bye[P4T_TCP_HDR_LEN];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = P4W_T_BYE,
		.length = P4T_TCP_HDR_LEN,
	};

	if (conn->state != P4T_TCP_CONN_ESTABLISHED)
		return;
	tx = p4u_list_first_entry(&conn->txq, struct p4t_tcp_tx, ev.node);
	if ((tx && tx->done) || conn->sock->ctl_off != conn->sock->ctl_len)
		return;
	p4w_hdr_pack(bye, &hdr);
	(void)send(conn->sock->fd, bye, sizeof(bye),
		   MSG_DONTWAIT | MSG_NOSIGNAL);
}

void p4t_tcp_conn_close(struct p4t_iface *iface_, struct p4t_conn *conn_)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_conn *conn = p4t_tcp_conn_of(conn_);
	struct p4t_tcp_selfmsg *msg;
	struct p4u_list *node;

	if (conn->state == P4T_TCP_CONN_CLOSED)
		return;
	if (conn->self) {
		while ((node = p4u_list_pop_head(&iface->selfq))) {
			msg = container_of(node, struct p4t_tcp_selfmsg, node);
			free(msg);
		}
		iface->selfq_bytes = 0;
		iface->self = NULL;
		p4t_tcp_mem_forget_conn(conn);
	} else if (conn->state != P4T_TCP_CONN_FAILED) {
		p4t_tcp_conn_bye(conn);
		p4t_tcp_conn_down(conn);
	}
	/* the engine closed it: no conn_failed */
	p4u_list_remove(&conn->fail_ev.node);
	conn->state = P4T_TCP_CONN_CLOSED;
	p4u_list_remove(&conn->node);
	p4u_list_insert_tail(&iface->dead, &conn->node);
	p4t_tcp_signal(iface);
}
