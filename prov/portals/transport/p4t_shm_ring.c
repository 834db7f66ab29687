/*
 * p4t_shm_ring.c - the shared-memory transport's rings (layout:
 * p4t_shm.h, p4t_shm_priv.h): writing frames as records (fragments, pads
 * at the end), reading records and reassembling frames, handing them to
 * the engine or to the RMA code, wake-ups through the peer's eventfd,
 * moving a lost link's records into the kept one.
 *
 * Not here: which frames are written when (p4t_shm_send.c keeps the
 * link's order), what RMA frames mean (p4t_shm_rma.c).
 *
 * Who writes what in the shared segment: the producer writes records
 * and tail, the consumer head; tail is stored with release after the
 * records it covers, and loaded with acquire before they are read; head
 * likewise the other way, so the producer never overwrites bytes the
 * consumer may still read (a message handed in place stays put until its
 * recv upcall returns). armed / space use the store-fence-load order on
 * both sides (Dekker): the sleeper stores its flag, fences, then looks at
 * the ring; the other side publishes, fences, then looks at the flag, so
 * at least one of them sees the other. Everything read from the segment
 * is the peer's to corrupt: record lengths and positions are checked
 * before use, and a bad one fails the link.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_shm_priv.h"

#define P4T_SHM_PAY_MAX		(P4T_SHM_FRAG_MAX - P4T_SHM_REC_HDR)
#define P4T_SHM_FRAG_MIN	1024	/* smaller pieces are not worth it */

void p4t_shm_ring_attach(struct p4t_shm_conn *conn, bool outgoing)
{
	struct p4t_shm_seg *seg = conn->seg;
	int t = outgoing ? 0 : 1, r = outgoing ? 1 : 0;

	conn->tx.ctl = &seg->ctl[t];
	conn->tx.data = (uint8_t *)seg + P4T_SHM_HDR_PAGE +
			(size_t)t * P4T_SHM_RING;
	conn->rx.ctl = &seg->ctl[r];
	conn->rx.data = (uint8_t *)seg + P4T_SHM_HDR_PAGE +
			(size_t)r * P4T_SHM_RING;
	conn->tx.size = conn->rx.size = P4T_SHM_RING;
	conn->tx.mask = conn->rx.mask = P4T_SHM_RING - 1;
	conn->tx.pos = __atomic_load_n(&conn->tx.ctl->tail, __ATOMIC_ACQUIRE);
	conn->tx.other = __atomic_load_n(&conn->tx.ctl->head,
					 __ATOMIC_ACQUIRE);
	conn->rx.pos = __atomic_load_n(&conn->rx.ctl->head, __ATOMIC_ACQUIRE);
	conn->rx.other = 0;
	/* a fresh segment: positions the peer set would be nonsense */
	if (conn->tx.pos != conn->tx.other)
		conn->tx.pos = conn->tx.other = 0;
}

/* Copy [off, off + len) of head ++ body (from body_off) to dst. */
size_t p4t_shm_src_copy(void *dst, const uint8_t *head, size_t head_len,
			const struct iovec *body, size_t body_cnt,
			uint64_t body_off, uint64_t off, size_t len)
{
	uint8_t *d = dst;
	size_t i, n, left = len;

	if (off < head_len) {
		n = P4U_MIN(left, head_len - off);
		memcpy(d, head + off, n);
		d += n;
		left -= n;
		off = 0;
	} else {
		off -= head_len;
	}
	off += body_off;
	for (i = 0; i < body_cnt && left; i++) {
		if (off >= body[i].iov_len) {
			off -= body[i].iov_len;
			continue;
		}
		n = P4U_MIN(left, body[i].iov_len - off);
		memcpy(d, (const uint8_t *)body[i].iov_base + off, n);
		d += n;
		left -= n;
		off = 0;
	}
	return len - left;
}

/* ---- producing ---------------------------------------------------------------- */

/* Free bytes, looking at the consumer's head again when short of need. */
static uint64_t p4t_shm_ring_room(struct p4t_shm_ring *r, uint64_t need)
{
	uint64_t used = r->pos - r->other;

	if (r->size - used < need) {
		r->other = __atomic_load_n(&r->ctl->head, __ATOMIC_ACQUIRE);
		used = r->pos - r->other;
		/* a head past our tail, or too far behind: not a consumer */
		if (used > r->size)
			return 0;
	}
	return r->size - used;
}

static void p4t_shm_rec_put(struct p4t_shm_rec *rec, uint32_t len,
			    uint16_t type, uint16_t flags, uint64_t total)
{
	rec->len = len;
	rec->type = type;
	rec->flags = flags;
	rec->total = total;
}

/*
 * Room for a record of *n_p payload bytes at the tail (whole: exactly
 * that, else at least P4T_SHM_FRAG_MIN and *n_p shrinks to what fits). A
 * record does not fit before the end is preceded by a pad to the end.
 */
static struct p4t_shm_rec *p4t_shm_ring_reserve(struct p4t_shm_ring *r,
						size_t *n_p, bool whole)
{
	uint64_t off, to_end, room;
	size_t n = *n_p;

	for (;;) {
		off = r->pos & r->mask;
		to_end = r->size - off;
		if (!whole && p4t_shm_rec_size(n) > to_end &&
		    to_end >= P4T_SHM_FRAG_MIN)
			n = to_end - P4T_SHM_REC_HDR;
		if (p4t_shm_rec_size(n) <= to_end)
			break;
		if (p4t_shm_ring_room(r, to_end) < to_end)
			return NULL;
		p4t_shm_rec_put((struct p4t_shm_rec *)(r->data + off),
				(uint32_t)(to_end - P4T_SHM_REC_HDR),
				P4T_SHM_F_PAD, 0, 0);
		r->pos += to_end;
		__atomic_store_n(&r->ctl->tail, r->pos, __ATOMIC_RELEASE);
	}
	room = p4t_shm_ring_room(r, p4t_shm_rec_size(n));
	if (room < p4t_shm_rec_size(n)) {
		room &= ~(uint64_t)(P4T_SHM_REC_ALIGN - 1);
		if (whole || room < P4T_SHM_FRAG_MIN)
			return NULL;
		n = room - P4T_SHM_REC_HDR;
	}
	*n_p = n;
	return (struct p4t_shm_rec *)(r->data + off);
}

/*
 * Write what fits of tx; true when all of it is in the ring. A frame
 * that fits one record goes in one (the reader hands it over in place),
 * larger ones in pieces as room appears.
 */
bool p4t_shm_ring_put(struct p4t_shm_conn *conn, struct p4t_shm_tx *tx)
{
	struct p4t_shm_ring *r = &conn->tx;
	struct p4t_shm_rec *rec;
	bool whole, wrote = false;
	uint16_t flags;
	size_t n;

	while (tx->done < tx->len) {
		n = P4U_MIN(tx->len - tx->done, (size_t)P4T_SHM_PAY_MAX);
		whole = tx->raw || (!tx->done && tx->len <= P4T_SHM_PAY_MAX);
		rec = p4t_shm_ring_reserve(r, &n, whole);
		if (!rec)
			break;
		flags = tx->raw ? tx->raw_flags :
			(uint16_t)((!tx->done ? P4T_SHM_REC_FIRST : 0) |
				   (tx->done + n == tx->len ?
				    P4T_SHM_REC_LAST : 0));
		p4t_shm_rec_put(rec, (uint32_t)n, tx->type, flags,
				tx->raw ? tx->raw_total : tx->len);
		p4t_shm_src_copy(rec + 1, tx->head, tx->head_len, tx->body,
				 tx->body_cnt, tx->body_off, tx->done - tx->skip,
				 n);
		tx->done += n;
		r->pos += p4t_shm_rec_size(n);
		__atomic_store_n(&r->ctl->tail, r->pos, __ATOMIC_RELEASE);
		wrote = true;
	}
	if (wrote)
		p4t_shm_ring_wake_peer(conn);
	return tx->done == tx->len;
}

/*
 * A frame of len bytes (a, then the iovecs) in one record now, or false
 * (nothing written): the common small message goes straight from the
 * caller's buffers into the ring, with no struct p4t_shm_tx to describe it.
 */
bool p4t_shm_ring_framev(struct p4t_shm_conn *conn, uint16_t type,
			 const void *a, size_t alen, const struct iovec *iov,
			 size_t iovcnt, size_t len)
{
	struct p4t_shm_ring *r = &conn->tx;
	struct p4t_shm_rec *rec;
	size_t n = len;

	if (n > P4T_SHM_PAY_MAX)
		return false;
	rec = p4t_shm_ring_reserve(r, &n, true);
	if (!rec)
		return false;
	p4t_shm_rec_put(rec, (uint32_t)n, type,
			P4T_SHM_REC_FIRST | P4T_SHM_REC_LAST, n);
	p4t_shm_src_copy(rec + 1, a, alen, iov, iovcnt, 0, 0, n);
	r->pos += p4t_shm_rec_size(n);
	__atomic_store_n(&r->ctl->tail, r->pos, __ATOMIC_RELEASE);
	p4t_shm_ring_wake_peer(conn);
	return true;
}

/* A small frame (a then b) in one record now, or false (nothing written). */
bool p4t_shm_ring_frame(struct p4t_shm_conn *conn, uint16_t type,
			const void *a, size_t alen, const void *b, size_t blen)
{
	struct iovec one = { (void *)b, blen };

	return p4t_shm_ring_framev(conn, type, a, alen, &one, blen ? 1 : 0,
				   alen + blen);
}

/* After records were published: ring the consumer's bell; if it sleeps
 * (armed), write its eventfd, once. */
void p4t_shm_ring_wake_peer(struct p4t_shm_conn *conn)
{
	struct p4t_shm_ring_ctl *ctl = conn->tx.ctl;
	uint64_t one = 1;

	if (conn->peer_wake < 0)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	p4t_shm_bell_ring(conn);
	if (!__atomic_load_n(&ctl->armed, __ATOMIC_RELAXED) ||
	    !__atomic_exchange_n(&ctl->armed, 0, __ATOMIC_ACQ_REL))
		return;
	if (write(conn->peer_wake, &one, sizeof(one)) == sizeof(one))
		conn->iface->stats.wakeups_sent++;
}

/* ---- consuming ------------------------------------------------------------------ */

static void p4t_shm_rx_malformed(struct p4t_shm_conn *conn, const char *what)
{
	conn->iface->stats.malformed++;
	p4u_warn_sparse(P4U_LOG_TRANSPORT, "shm: malformed input from pid %d "
			"(%s): link failed", (int)conn->peer_pid, what);
	p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_EPROTO);
}

static void p4t_shm_rx_frame(struct p4t_shm_conn *conn, uint16_t type,
			     const uint8_t *data, size_t len, bool in_place)
{
	struct p4t_shm_iface *iface = conn->iface;
	struct p4t_shm_ctl ctl;
	int ret;

	if (type == P4T_SHM_F_MSG) {
		iface->stats.msgs_recv++;
		iface->stats.bytes_recv += len;
		iface->stats.recv_in_place += in_place;
		conn->busy = true;
		ret = iface->upcalls->recv(iface->upcall_ctx, &conn->base,
					   data, len);
		conn->busy = false;
		if (ret < 0 && p4t_shm_conn_live(conn))
			p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, ret);
		return;
	}
	if (type == P4T_SHM_F_INFO && len == sizeof(ctl)) {
		memcpy(&ctl, data, sizeof(ctl));
		conn->peer_reads = ctl.status == 1;
		return;
	}
	if (type > P4T_SHM_F_INFO && type < P4T_SHM_F_MAX &&
	    !p4t_shm_rma_frame(conn, type, data, len))
		return;
	p4t_shm_rx_malformed(conn, "frame");
}

/* One record: handed over in place when it is a whole frame. */
static void p4t_shm_rx_rec(struct p4t_shm_conn *conn,
			   const struct p4t_shm_rec *h, const uint8_t *data)
{
	struct p4t_shm_asm *a = &conn->rxa;
	bool first = h->flags & P4T_SHM_REC_FIRST;
	bool last = h->flags & P4T_SHM_REC_LAST;

	if (first && last && !a->busy && h->total == h->len) {
		p4t_shm_rx_frame(conn, h->type, data, h->len, true);
		return;
	}
	if (first) {
		if (a->busy || last || h->total <= h->len ||
		    h->total > P4T_SHM_FRAME_MAX)
			goto bad;
		a->buf = malloc(h->total);
		if (!a->buf) {
			p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_ENOMEM);
			return;
		}
		a->busy = true;
		a->type = h->type;
		a->total = h->total;
		a->got = 0;
	} else if (!a->busy || h->type != a->type ||
		   h->len > a->total - a->got) {
		goto bad;
	}
	memcpy(a->buf + a->got, data, h->len);
	a->got += h->len;
	if (!last)
		return;
	if (a->got != a->total)
		goto bad;
	a->busy = false;
	p4t_shm_rx_frame(conn, a->type, a->buf, a->total, false);
	free(a->buf);
	a->buf = NULL;
	return;
bad:
	p4t_shm_rx_malformed(conn, "fragments");
}

/*
 * Read up to budget records; returns how many. Head moves past a record
 * only once it was handled (in place: after the recv upcall).
 */
int p4t_shm_ring_rx(struct p4t_shm_conn *conn, int budget)
{
	struct p4t_shm_ring *r = &conn->rx;
	struct p4t_shm_rec h;
	uint64_t tail, off, size;
	int done = 0;

	if (!conn->seg || conn->busy || !p4t_shm_conn_live(conn))
		return 0;
	tail = __atomic_load_n(&r->ctl->tail, __ATOMIC_ACQUIRE);
	if (tail == r->pos)
		return 0;
	if (tail - r->pos > r->size) {
		p4t_shm_rx_malformed(conn, "tail");
		return 0;
	}
	while (r->pos != tail && done < budget && p4t_shm_conn_live(conn)) {
		off = r->pos & r->mask;
		memcpy(&h, r->data + off, sizeof(h));
		size = h.type == P4T_SHM_F_PAD ? r->size - off :
		       p4t_shm_rec_size(h.len);
		if (h.len > r->size || size > r->size - off ||
		    size > tail - r->pos) {
			p4t_shm_rx_malformed(conn, "record");
			return done;
		}
		if (h.type != P4T_SHM_F_PAD)
			p4t_shm_rx_rec(conn, &h, r->data + off +
				       P4T_SHM_REC_HDR);
		if (!conn->seg)
			return done;
		r->pos += size;
		__atomic_store_n(&r->ctl->head, r->pos, __ATOMIC_RELEASE);
		done++;
	}
	/* the producer waits for room: tell it there is some */
	if (done && conn->seg && conn->peer_wake >= 0) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->ctl->space, __ATOMIC_RELAXED) &&
		    __atomic_exchange_n(&r->ctl->space, 0, __ATOMIC_ACQ_REL)) {
			uint64_t one = 1;

			if (write(conn->peer_wake, &one, sizeof(one)) ==
			    sizeof(one))
				conn->iface->stats.wakeups_sent++;
		}
	}
	return done;
}

/* Records wait for us. */
bool p4t_shm_ring_pending(const struct p4t_shm_conn *conn)
{
	return conn->seg && __atomic_load_n(&conn->rx.ctl->tail,
					    __ATOMIC_ACQUIRE) != conn->rx.pos;
}

/* Bytes of ours the peer has not read. */
bool p4t_shm_ring_unread(const struct p4t_shm_conn *conn)
{
	return conn->seg && __atomic_load_n(&conn->tx.ctl->head,
					    __ATOMIC_ACQUIRE) != conn->tx.pos;
}

/*
 * Before the owner sleeps: ask the peer to write our eventfd when it
 * writes (armed) or, if our queue waits for room, when it reads (space);
 * then look again. > 0: do not sleep.
 */
/* Room, now, for the next record of the queue's first frame? */
static bool p4t_shm_ring_fits(struct p4t_shm_conn *conn)
{
	struct p4t_shm_ring *r = &conn->tx;
	struct p4t_shm_tx *tx = p4u_list_first_entry(&conn->txq,
						     struct p4t_shm_tx,
						     ev.node);
	uint64_t to_end = r->size - (r->pos & r->mask);
	uint64_t need = P4T_SHM_FRAG_MIN;

	if (tx->raw || (!tx->done && tx->len <= P4T_SHM_PAY_MAX))
		need = p4t_shm_rec_size(tx->len - tx->done);
	if (need > to_end)
		need += to_end;
	return p4t_shm_ring_room(r, need) >= need;
}

int p4t_shm_ring_arm(struct p4t_shm_conn *conn)
{
	bool queued = !p4u_list_empty(&conn->txq);

	if (!conn->seg || !p4t_shm_conn_live(conn))
		return 0;
	__atomic_store_n(&conn->rx.ctl->armed, 1, __ATOMIC_RELAXED);
	if (queued)
		__atomic_store_n(&conn->tx.ctl->space, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (p4t_shm_ring_pending(conn))
		return 1;
	if (queued && p4t_shm_ring_fits(conn))
		return 1;
	return 0;
}

void p4t_shm_ring_disarm(struct p4t_shm_conn *conn)
{
	if (!conn->seg || !p4t_shm_conn_live(conn))
		return;
	__atomic_store_n(&conn->rx.ctl->armed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&conn->tx.ctl->space, 0, __ATOMIC_RELAXED);
}

/*
 * A collision we lost: the records we wrote into old (the peer never
 * read them) go back to the head of the queue, each as it was, before
 * what was queued behind them; the queue is written into the new ring.
 */
int p4t_shm_ring_take_lost(struct p4t_shm_conn *conn,
			   const struct p4t_shm_ring *old)
{
	struct p4u_list moved = P4U_LIST_INITIALIZER(moved);
	const struct p4t_shm_rec *h;
	struct p4t_shm_tx *tx;
	uint64_t pos = 0, off, size;

	while (pos < old->pos) {
		off = pos & old->mask;
		h = (const struct p4t_shm_rec *)(old->data + off);
		size = h->type == P4T_SHM_F_PAD ? old->size - off :
		       p4t_shm_rec_size(h->len);
		pos += size;
		if (h->type == P4T_SHM_F_PAD)
			continue;
		tx = p4t_shm_tx_copy(conn, h->type, h + 1, h->len, NULL, 0);
		if (!tx)
			return -FI_ENOMEM;
		tx->raw = true;
		tx->raw_flags = h->flags;
		tx->raw_total = h->total;
		p4u_list_insert_tail(&moved, &tx->ev.node);
		conn->txq_bytes += tx->len;
	}
	p4u_list_splice_tail(&moved, &conn->txq);
	p4u_list_splice_tail(&conn->txq, &moved);
	if (!p4u_list_empty(&conn->txq) &&
	    !p4u_list_node_linked(&conn->backlog))
		p4u_list_insert_tail(&conn->iface->backlog, &conn->backlog);
	return 0;
}
