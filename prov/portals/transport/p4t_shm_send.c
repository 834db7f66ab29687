/*
 * p4t_shm_send.c - the shared-memory transport's send path: send, the
 * link's queue (what did not fit into the ring, in order) and its drain,
 * the transport's own control frames, and failing a queue.
 *
 * Not here: how frames become records (p4t_shm_ring.c), RMA data chunks
 * (p4t_shm_rma.c arms them; they sit on the same queue).
 *
 * Order: a frame goes straight into the ring only when the queue is
 * empty; otherwise behind it. The queue is drained from progress, and
 * right after each send that finds it non-empty.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "p4t_shm_priv.h"

/*
 * A copy of up to P4T_SHM_SMALL_MAX bytes is kept inside its tx: one
 * allocation sized to the message, the tx cut short where the fields
 * only a reference send uses begin (iov_inline, head), the bytes in
 * their place. A pooled tx with a pool buffer would take over 4 KiB for
 * each small send queued behind a full ring.
 */
#define P4T_SHM_SMALL_OFF	offsetof(struct p4t_shm_tx, iov_inline)
#define P4T_SHM_SMALL_MAX	(sizeof(struct p4t_shm_tx) - P4T_SHM_SMALL_OFF)

void p4t_shm_tx_free(struct p4t_shm_iface *iface, struct p4t_shm_tx *tx)
{
	if (tx->buf_kind == P4T_SHM_BUF_SMALL) {
		free(tx);
		return;
	}
	if (tx->buf_kind == P4T_SHM_BUF_POOL)
		p4u_pool_free(&iface->bufs, tx->buf);
	else if (tx->buf_kind == P4T_SHM_BUF_HEAP)
		free(tx->buf);
	free(tx->iov_heap);
	if (tx->pooled)
		p4u_pool_free(&iface->txs, tx);
	else
		free(tx);
}

static struct p4t_shm_tx *p4t_shm_tx_alloc(struct p4t_shm_iface *iface,
					   uint16_t type, size_t len)
{
	struct p4t_shm_tx *tx = p4u_pool_alloc(&iface->txs);

	/* past the pool's bound the heap: messages that are not requests
	 * must never be refused short of memory (p4t.h) */
	if (tx)
		tx->pooled = true;
	else if (!(tx = calloc(1, sizeof(*tx))))
		return NULL;
	tx->type = type;
	tx->len = len;
	tx->ev.kind = P4T_SHM_EV_SEND_DONE;
	p4u_list_node_init(&tx->ev.node);
	return tx;
}

/* An owned buffer of len bytes for tx. */
static void *p4t_shm_tx_buf(struct p4t_shm_iface *iface,
			    struct p4t_shm_tx *tx, size_t len)
{
	if (len <= P4T_SHM_BUF_SIZE &&
	    (tx->buf = p4u_pool_alloc_raw(&iface->bufs))) {
		tx->buf_kind = P4T_SHM_BUF_POOL;
	} else {	/* large, or past the pool's bound (as for txs) */
		tx->buf = malloc(len);
		tx->buf_kind = P4T_SHM_BUF_HEAP;
	}
	if (!tx->buf)
		tx->buf_kind = P4T_SHM_BUF_NONE;
	tx->one.iov_base = tx->buf;
	tx->one.iov_len = len;
	tx->body = &tx->one;
	tx->body_cnt = 1;
	return tx->buf;
}

/* A tx of a frame of len bytes owning a copy of size of them (its body). */
static struct p4t_shm_tx *p4t_shm_tx_owned(struct p4t_shm_iface *iface,
					   uint16_t type, size_t len,
					   size_t size)
{
	struct p4t_shm_tx *tx;

	if (size > P4T_SHM_SMALL_MAX) {
		tx = p4t_shm_tx_alloc(iface, type, len);
		if (tx && !p4t_shm_tx_buf(iface, tx, size)) {
			p4t_shm_tx_free(iface, tx);
			tx = NULL;
		}
		return tx;
	}
	tx = calloc(1, P4T_SHM_SMALL_OFF + size);
	if (!tx)
		return NULL;
	tx->type = type;
	tx->len = len;
	tx->ev.kind = P4T_SHM_EV_SEND_DONE;
	p4u_list_node_init(&tx->ev.node);
	tx->buf = (uint8_t *)tx + P4T_SHM_SMALL_OFF;
	tx->buf_kind = P4T_SHM_BUF_SMALL;
	tx->one.iov_base = tx->buf;
	tx->one.iov_len = size;
	tx->body = &tx->one;
	tx->body_cnt = 1;
	return tx;
}

/* A queued copy of the frame a then b. */
struct p4t_shm_tx *p4t_shm_tx_copy(struct p4t_shm_conn *conn, uint16_t type,
				   const void *a, size_t alen, const void *b,
				   size_t blen)
{
	struct p4t_shm_tx *tx = p4t_shm_tx_owned(conn->iface, type,
						 alen + blen, alen + blen);
	uint8_t *buf;

	if (!tx)
		return NULL;
	buf = tx->buf;
	if (alen)
		memcpy(buf, a, alen);
	if (blen)
		memcpy(buf + alen, b, blen);
	return tx;
}

void p4t_shm_txq_add(struct p4t_shm_conn *conn, struct p4t_shm_tx *tx,
		     bool head)
{
	if (head)
		p4u_list_insert_head(&conn->txq, &tx->ev.node);
	else
		p4u_list_insert_tail(&conn->txq, &tx->ev.node);
	conn->txq_bytes += tx->len - tx->done;
	if (!p4u_list_node_linked(&conn->backlog))
		p4u_list_insert_tail(&conn->iface->backlog, &conn->backlog);
}

/*
 * A tx whose last byte is in the ring. Its send_done waits while the peer
 * has not mapped the ring (our link, HELLO_ACK not seen): a peer that
 * died before it answered never reads it, and its sender must hear so.
 */
static void p4t_shm_tx_written(struct p4t_shm_conn *conn,
			       struct p4t_shm_tx *tx)
{
	p4u_list_remove(&tx->ev.node);
	if (tx->rma) {
		p4t_shm_rma_chunk_written(tx);
	} else if (tx->notify && !conn->mapped_by_peer) {
		p4u_list_insert_tail(&conn->unconfirmed, &tx->ev.node);
	} else if (tx->notify) {
		tx->ev.status = 0;
		p4t_shm_ev_post(conn->iface, &tx->ev);
	} else {
		p4t_shm_tx_free(conn->iface, tx);
	}
}

/* send_done(status) for what was written before the peer mapped the ring */
static void p4t_shm_unconfirmed_done(struct p4t_shm_conn *conn, int status)
{
	struct p4u_list *node;
	struct p4t_shm_tx *tx;

	while ((node = p4u_list_pop_head(&conn->unconfirmed))) {
		tx = container_of(node, struct p4t_shm_tx, ev.node);
		tx->ev.status = status;
		p4t_shm_ev_post(conn->iface, &tx->ev);
	}
}

/* The peer mapped the ring: what was written before it is sent. */
void p4t_shm_confirm(struct p4t_shm_conn *conn)
{
	p4t_shm_unconfirmed_done(conn, 0);
}

/* Write what the ring takes of the queue; returns frames finished. */
int p4t_shm_txq_drain(struct p4t_shm_conn *conn)
{
	struct p4t_shm_tx *tx;
	size_t before;
	int done = 0;

	while (p4t_shm_conn_live(conn) && !p4u_list_empty(&conn->txq)) {
		tx = p4u_list_first_entry(&conn->txq, struct p4t_shm_tx,
					  ev.node);
		before = tx->done;
		if (!p4t_shm_ring_put(conn, tx)) {
			conn->txq_bytes -= tx->done - before;
			break;
		}
		conn->txq_bytes -= tx->len - before;
		p4t_shm_tx_written(conn, tx);
		done++;
	}
	if (p4u_list_empty(&conn->txq)) {
		conn->txq_bytes = 0;
		p4u_list_remove(&conn->backlog);
	}
	return done;
}

/* The link failed or closed: queued sends complete with an error. */
void p4t_shm_txq_fail(struct p4t_shm_conn *conn)
{
	struct p4t_shm_iface *iface = conn->iface;
	struct p4u_list *node;
	struct p4t_shm_tx *tx;

	/* written before those queued, but the peer never mapped the ring */
	p4t_shm_unconfirmed_done(conn, -FI_ECONNABORTED);
	while ((node = p4u_list_pop_head(&conn->txq))) {
		tx = container_of(node, struct p4t_shm_tx, ev.node);
		if (tx->rma) {
			/* pushes complete with the link's rmas; streams go */
			tx->rma->in_txq = false;
			if (tx->rma->kind == P4T_SHM_RMA_STREAM)
				p4t_shm_rma_free(iface, tx->rma);
		} else if (tx->notify) {
			tx->ev.status = -FI_ECONNABORTED;
			p4t_shm_ev_post(iface, &tx->ev);
		} else {
			p4t_shm_tx_free(iface, tx);
		}
	}
	conn->txq_bytes = 0;
	p4u_list_remove(&conn->backlog);
}

/* A control frame: into the ring now if nothing waits, else queued. */
int p4t_shm_ctl_send(struct p4t_shm_conn *conn, uint16_t type,
		     const struct p4t_shm_ctl *ctl, const void *more,
		     size_t more_len)
{
	struct p4t_shm_tx *tx;

	if (!p4t_shm_conn_live(conn))
		return 0;
	if (p4u_list_empty(&conn->txq) &&
	    p4t_shm_ring_frame(conn, type, ctl, sizeof(*ctl), more, more_len))
		return 0;
	tx = p4t_shm_tx_copy(conn, type, ctl, sizeof(*ctl), more, more_len);
	if (!tx)
		return -FI_ENOMEM;
	p4t_shm_txq_add(conn, tx, false);
	(void)p4t_shm_txq_drain(conn);
	return 0;
}

/* ---- send ---------------------------------------------------------------------- */

/* With op_ctx, tx owes its caller send_done (P4T_QUEUED); else P4T_DONE. */
static int p4t_shm_tx_owe(struct p4t_shm_tx *tx, void *op_ctx)
{
	if (!op_ctx)
		return P4T_DONE;
	tx->notify = true;
	tx->op_ctx = op_ctx;
	return P4T_QUEUED;
}

static int p4t_shm_msg_check(const void *hdr, size_t hdr_len,
			     const struct iovec *iov, size_t iovcnt,
			     size_t *len_p)
{
	size_t payload;
	int ret;

	if (!hdr || hdr_len < sizeof(struct p4w_hdr) ||
	    iovcnt > P4T_SHM_MAX_IOV)
		return -FI_EINVAL;
	ret = p4u_iov_len(iov, iovcnt, &payload);
	if (ret)
		return -FI_EINVAL;
	if (payload > P4T_SHM_MAX_MSG || hdr_len > P4T_SHM_MAX_MSG - payload)
		return -FI_EMSGSIZE;
	*len_p = hdr_len + payload;
	return 0;
}

/*
 * What did not go of the frame described by tmp is queued: by reference
 * (P4T_QUEUED) when the caller will hear of it and it is large, else
 * copied from where the ring stopped (P4T_DONE; P4T_QUEUED with confirm:
 * the copy's send_done waits for the peer to map the ring).
 */
static int p4t_shm_send_queue(struct p4t_shm_conn *conn,
			      const struct p4t_shm_tx *tmp, void *op_ctx,
			      bool confirm)
{
	struct p4t_shm_iface *iface = conn->iface;
	size_t rest = tmp->len - tmp->done;
	struct p4t_shm_tx *tx;

	if (op_ctx && !confirm && rest > P4T_SHM_MAX_INLINE &&
	    tmp->head_len <= P4T_SHM_HEAD_MAX) {
		tx = p4t_shm_tx_alloc(iface, P4T_SHM_F_MSG, tmp->len);
		if (!tx)
			return -FI_ENOMEM;
		tx->done = tmp->done;
		memcpy(tx->head, tmp->head, tmp->head_len);
		tx->head_len = tmp->head_len;
		tx->body = tx->iov_inline;
		if (tmp->body_cnt > P4T_SHM_TX_IOV) {
			tx->iov_heap = malloc(tmp->body_cnt * sizeof(struct iovec));
			if (!tx->iov_heap) {
				p4t_shm_tx_free(iface, tx);
				return -FI_ENOMEM;
			}
			tx->body = tx->iov_heap;
		}
		memcpy((struct iovec *)tx->body, tmp->body,
		       tmp->body_cnt * sizeof(struct iovec));
		tx->body_cnt = tmp->body_cnt;
		tx->notify = true;
		tx->op_ctx = op_ctx;
		iface->stats.queued_ref++;
		p4t_shm_txq_add(conn, tx, false);
		return P4T_QUEUED;
	}
	tx = p4t_shm_tx_owned(iface, P4T_SHM_F_MSG, tmp->len, rest ? rest : 1);
	if (!tx)
		return -FI_ENOMEM;
	tx->done = tmp->done;
	tx->one.iov_len = rest;
	p4t_shm_src_copy(tx->buf, tmp->head, tmp->head_len, tmp->body,
			 tmp->body_cnt, 0, tmp->done, rest);
	/* the bytes before done are in the ring: the buffer starts there */
	tx->skip = tmp->done;
	iface->stats.queued_copy++;
	p4t_shm_txq_add(conn, tx, false);
	return p4t_shm_tx_owe(tx, confirm ? op_ctx : NULL);
}

int p4t_shm_send(struct p4t_iface *iface_, struct p4t_conn *conn_,
		 const void *hdr, size_t hdr_len, const struct iovec *iov,
		 size_t iovcnt, void *op_ctx, unsigned flags)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_conn *conn = p4t_shm_conn_of(conn_);
	struct p4t_shm_tx tmp;
	bool confirm;
	size_t len;
	int ret;

	if (flags & P4T_SEND_XPORT)
		return -FI_EINVAL;
	ret = p4t_shm_msg_check(hdr, hdr_len, iov, iovcnt, &len);
	if (ret)
		return ret;
	if (!p4t_shm_conn_live(conn)) {
		/* as on a network: gone with the link, conn_failed follows */
		iface->stats.sends_dropped++;
		return P4T_DONE;
	}
	if ((flags & P4T_SEND_SEQ) && !p4u_list_empty(&conn->txq) &&
	    conn->txq_bytes >= iface->queue_limit) {
		iface->stats.eagain++;
		return -FI_EAGAIN;
	}
	iface->stats.msgs_sent++;
	iface->stats.bytes_sent += len;
	/* the peer has not mapped the ring yet: the caller hears of it
	 * once it has (a queued copy, p4t_shm_tx_written) */
	confirm = op_ctx && !conn->mapped_by_peer;
	/* nothing queued ahead and one record holds it: written now */
	if (!confirm && p4u_list_empty(&conn->txq) &&
	    p4t_shm_ring_framev(conn, P4T_SHM_F_MSG, hdr, hdr_len, iov, iovcnt,
				len))
		return P4T_DONE;
	/* the caller's header and iovecs, read in place */
	tmp.type = P4T_SHM_F_MSG;
	tmp.raw = false;
	tmp.len = len;
	tmp.done = 0;
	tmp.skip = 0;
	tmp.head_len = 0;
	tmp.body = tmp.iov_heap = NULL;
	tmp.body_off = 0;
	tmp.body_cnt = 0;
	if (hdr_len <= P4T_SHM_HEAD_MAX) {
		memcpy(tmp.head, hdr, hdr_len);
		tmp.head_len = (uint32_t)hdr_len;
		tmp.body = iov;
		tmp.body_cnt = iovcnt;
	} else {
		/* a header larger than a tx keeps: one contiguous copy */
		tmp.body = NULL;
	}
	if (!tmp.body && iovcnt) {
		struct p4t_shm_tx *tx = p4t_shm_tx_owned(iface, P4T_SHM_F_MSG,
							 len, len);
		uint8_t *buf = tx ? tx->buf : NULL;

		if (!buf)
			return -FI_ENOMEM;
		memcpy(buf, hdr, hdr_len);
		p4t_shm_src_copy(buf + hdr_len, NULL, 0, iov, iovcnt, 0, 0,
				 len - hdr_len);
		ret = p4t_shm_tx_owe(tx, confirm ? op_ctx : NULL);
		p4t_shm_txq_add(conn, tx, false);
		(void)p4t_shm_txq_drain(conn);
		return ret;
	}
	if (!tmp.body) {
		struct iovec one = { (void *)hdr, hdr_len };

		tmp.body = &one;
		tmp.body_cnt = 1;
		if (!confirm && p4u_list_empty(&conn->txq) &&
		    p4t_shm_ring_put(conn, &tmp))
			return P4T_DONE;
		/* one is on this stack: copied, never referenced */
		ret = p4t_shm_send_queue(conn, &tmp, confirm ? op_ctx : NULL,
					 confirm);
		return ret;
	}
	if (!confirm && p4u_list_empty(&conn->txq) &&
	    p4t_shm_ring_put(conn, &tmp))
		return P4T_DONE;
	ret = p4t_shm_send_queue(conn, &tmp, op_ctx, confirm);
	if (ret >= 0)
		(void)p4t_shm_txq_drain(conn);
	return ret;
}
