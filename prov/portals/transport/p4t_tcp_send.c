/*
 * p4t_tcp_send.c - the TCP transport's send path: send (a direct sendmsg
 * from the caller's memory when nothing is queued, else the link's write
 * queue: copied or referenced), batching (P4T_SEND_BATCH: corked links
 * written when progress ends or at p4t_flush), the request bound, a
 * layered transport's messages (P4T_SEND_XPORT), offers, control
 * messages, and flushing the queue with one sendmsg of many iovecs.
 *
 * Not here: links, connects and failures (p4t_tcp_conn.c), the handshake
 * bytes a socket writes first (p4t_tcp_hs.c), what a chunk is and how the
 * next one is armed (p4t_tcp_rma.c), the receive path (p4t_tcp_rx.c).
 *
 * Write order on a socket: the handshake bytes of the socket (sock->ctl)
 * first, then conn->txq in order. A stream or push tx describes one chunk
 * at a time; a flush never gathers past a push chunk, so when the chunk
 * is written the next one can be armed in place (push: stream order) or
 * the stream moved behind the messages queued meanwhile (pull data
 * rotates).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <rdma/fi_errno.h>

#include "p4t_tcp_priv.h"

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
	/*
	 * A copy on a link still being set up is reported too (send_done
	 * when written): until then nothing of it left, and the engine
	 * completes nothing that may never leave (a refused connect).
	 */
	tx->notify = op_ctx && (!copy ||
				conn->state != P4T_TCP_CONN_ESTABLISHED);
	if (copy)
		iface->stats.queued_copy++;
	else
		iface->stats.queued_ref++;
	p4t_tcp_txq_append(conn, tx);
	return tx->notify ? P4T_QUEUED : P4T_DONE;
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

/* A message tx left for good: send_done if its sender waits, else freed. */
void p4t_tcp_tx_done(struct p4t_tcp_iface *iface, struct p4t_tcp_tx *tx)
{
	if (tx->notify) {
		tx->ev.kind = P4T_TCP_EV_SEND_DONE;
		tx->ev.status = 0;
		p4t_tcp_ev_post(iface, &tx->ev);
	} else {
		p4t_tcp_tx_free(iface, tx);
	}
}

/*
 * A tx is written: complete it (or let its chunk source re-arm it). On
 * an attempt not yet answered it waits for the answer (unconfirmed).
 */
static void p4t_tcp_tx_written(struct p4t_tcp_conn *conn,
			       struct p4t_tcp_tx *tx)
{
	if (tx->kind != P4T_TCP_TX_MSG) {
		p4t_tcp_rma_chunk_written(tx);
		return;
	}
	p4u_list_remove(&tx->ev.node);
	conn->txq_bytes -= tx->len;
	if (conn->state == P4T_TCP_CONN_CONNECTING) {
		p4u_list_insert_tail(&conn->unconfirmed, &tx->ev.node);
		return;
	}
	p4t_tcp_tx_done(conn->iface, tx);
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
		/* pipelined behind a HELLO: whole messages only (a chunk
		 * is armed by its source once written) */
		if (conn->state != P4T_TCP_CONN_ESTABLISHED &&
		    tx->kind != P4T_TCP_TX_MSG)
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

/* Is there something the socket could take now? */
bool p4t_tcp_conn_has_out(const struct p4t_tcp_conn *conn)
{
	const struct p4t_tcp_sock *sock = conn->sock;
	const struct p4t_tcp_tx *tx;

	if (sock->ctl_off < sock->ctl_len)
		return true;
	tx = p4u_list_first_entry(&conn->txq, struct p4t_tcp_tx, ev.node);
	return tx && (conn->state == P4T_TCP_CONN_ESTABLISHED ||
		      tx->kind == P4T_TCP_TX_MSG);
}

/*
 * Write what the socket takes: its handshake bytes, then the queue (on a
 * link still connecting: the whole messages at its head, pipelined behind
 * the HELLO of conn->sock, which must be outgoing and connected).
 * Returns 0, or the socket's error (< 0; the caller decides what fails).
 * Completions become events; no upcall is made here.
 */
int p4t_tcp_conn_write(struct p4t_tcp_conn *conn)
{
	struct msghdr mh = { .msg_iov = conn->iface->wiov };
	size_t n, bytes;
	ssize_t w;

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
		if (w < 0)
			return p4t_tcp_errno_status(errno);
		p4t_tcp_conn_consume(conn, (size_t)w);
		if ((size_t)w < bytes) {
			conn->wblocked = true;
			break;
		}
	}
	p4t_tcp_conn_want_out(conn);
	return 0;
}

/*
 * Write what the socket takes. Returns 0, or -1 when the link failed.
 * A link still connecting writes what its handshake allows
 * (p4t_tcp_hs_pipeline).
 */
int p4t_tcp_conn_flush(struct p4t_tcp_conn *conn)
{
	int ret;

	if (conn->state == P4T_TCP_CONN_CONNECTING) {
		p4t_tcp_hs_pipeline(conn);
		return conn->state == P4T_TCP_CONN_FAILED ? -1 : 0;
	}
	if (conn->state != P4T_TCP_CONN_ESTABLISHED)
		return 0;
	ret = p4t_tcp_conn_write(conn);
	if (ret < 0) {
		p4t_tcp_conn_fail(conn, ret);
		return -1;
	}
	return 0;
}
