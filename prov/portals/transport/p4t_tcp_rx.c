/*
 * p4t_tcp_rx.c - what a TCP link receives: one read into the link's
 * staging buffer (or straight into a chunk's destination), whole engine
 * messages handed to the recv upcall in place, messages larger than the
 * staging buffer, transport messages (chunks, pull requests, BYE, offers
 * and their announcements, a layered transport's messages), and where the
 * data of a PULL_DATA, PUSH_DATA or OFFER chunk lands.
 *
 * Not here: exposures, cookies and posting pulls and pushes, serving a
 * pull request (p4t_tcp_rma.c); the send path (p4t_tcp_send.c).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_tcp_priv.h"

/* Where chunk data lands (the receiving end, below the receive path). */
static int p4t_tcp_rx_data_begin(struct p4t_tcp_conn *conn,
				 const struct p4w_hdr *hdr,
				 const uint8_t *body);
static void p4t_tcp_rx_data_end(struct p4t_tcp_conn *conn);
static int p4t_tcp_rx_offer(struct p4t_tcp_conn *conn,
			    const struct p4w_data *d);

/* ---- receiving ------------------------------------------------------------- */

void p4t_tcp_conn_malformed(struct p4t_tcp_conn *conn, int ret,
			    const char *what)
{
	char buf[64];

	conn->iface->stats.malformed++;
	conn->iface->stats.rejected++;
	p4u_warn_sparse(P4U_LOG_TRANSPORT,
			"tcp: %s from %s: %s; closing the link", what,
			p4t_tcp_addr_str(&conn->addr, buf, sizeof(buf)),
			fi_strerror(-ret));
	p4t_tcp_conn_fail(conn, ret);
}

/* Hand one message to the engine; 0, or -1 when the link went down. */
static int p4t_tcp_rx_deliver(struct p4t_tcp_conn *conn, const uint8_t *msg,
			      size_t len)
{
	struct p4t_tcp_iface *iface = conn->iface;
	struct p4t_tcp_rx *rx = &conn->rx;
	bool offered = rx->offer == P4T_TCP_OFFER_ANNOUNCED;
	int ret;

	/* the announced message: a pull of its offer this upcall makes is
	 * held for the OFFER, which comes next (p4t_tcp_pull) */
	if (offered)
		rx->offer = P4T_TCP_OFFER_UPCALL;
	conn->busy = true;
	ret = iface->upcalls->recv(iface->upcall_ctx, &conn->base, msg, len);
	conn->busy = false;
	if (offered && rx->offer == P4T_TCP_OFFER_UPCALL)
		rx->offer = P4T_TCP_OFFER_DATA;
	iface->stats.msgs_recv++;
	iface->stats.bytes_recv += len;
	if (ret < 0 && conn->state == P4T_TCP_CONN_ESTABLISHED)
		p4t_tcp_conn_malformed(conn, ret, "message refused by the engine");
	return conn->state == P4T_TCP_CONN_ESTABLISHED ? 0 : -1;
}

/* Land what is staged of the current chunk; finish it when complete. */
static void p4t_tcp_rx_land_staged(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	size_t take = P4U_MIN(rx->left, rx->tail - rx->head);

	if (take && !rx->discard)
		p4t_tcp_iov_copy_in(rx->iov, rx->iovcnt, rx->off,
				    rx->buf + rx->head, take);
	rx->head += take;
	rx->off += take;
	rx->left -= take;
	conn->iface->stats.rma_bytes_in += take;
	conn->iface->stats.rma_bytes_staged += take;
	if (rx->left) {
		rx->mode = P4T_TCP_RX_LAND;
		return;
	}
	p4t_tcp_rx_data_end(conn);
}

/*
 * A layered transport's message (P4W_T_XPORT, whole in staging): to the
 * layered transport, never the engine. An iface nobody layers on has no
 * xport_recv, and the message is malformed. Returns 0, or < 0 for the
 * caller to fail the link as malformed; a failure the upcall asked for
 * is made here.
 */
static int p4t_tcp_rx_xport(struct p4t_tcp_conn *conn, const uint8_t *msg,
			    size_t len)
{
	struct p4t_tcp_iface *iface = conn->iface;
	int ret;

	if (!iface->upcalls->xport_recv)
		return -FI_EBADMSG;
	conn->busy = true;
	ret = iface->upcalls->xport_recv(iface->upcall_ctx, &conn->base,
					 msg + P4T_TCP_HDR_LEN,
					 len - P4T_TCP_HDR_LEN);
	conn->busy = false;
	iface->stats.xport_recv++;
	if (ret < 0 && conn->state == P4T_TCP_CONN_ESTABLISHED)
		p4t_tcp_conn_malformed(conn, ret, "message refused by the "
				       "layered transport");
	return 0;
}

/* The data header after a PULL_DATA, PUSH_DATA, OFFER or OFFER_ANNOUNCE
 * frame's common header, unpacked and checked against it. */
static int p4t_tcp_rx_data_hdr(const struct p4w_hdr *hdr, const uint8_t *body,
			       struct p4w_data *d)
{
	int ret = p4w_data_unpack(body, sizeof(struct p4w_data), d);

	return ret ? ret : p4w_data_check(hdr, d);
}

/* The peer announces an offer: its engine message comes next. */
static int p4t_tcp_rx_announce(struct p4t_tcp_conn *conn,
			       const struct p4w_hdr *hdr, const uint8_t *body)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	struct p4w_data d;
	int ret;

	ret = p4t_tcp_rx_data_hdr(hdr, body, &d);
	if (ret)
		return ret;
	rx->offer = P4T_TCP_OFFER_ANNOUNCED;
	rx->offer_src = d.dst;
	rx->offer_len = d.length;
	return 0;
}

/*
 * The frames of an offer come in their order (p4_wire.h, Offers): after
 * an OFFER_ANNOUNCE an engine message, after that message its OFFER, and
 * an OFFER nowhere else.
 */
static bool p4t_tcp_rx_in_order(const struct p4t_tcp_rx *rx, uint8_t type)
{
	if (rx->offer == P4T_TCP_OFFER_ANNOUNCED)
		return type < P4W_T_FIRST;
	return (rx->offer == P4T_TCP_OFFER_DATA) == (type == P4W_T_OFFER);
}

/* A transport message at the head of the staged bytes; false: need more. */
static bool p4t_tcp_rx_transport(struct p4t_tcp_conn *conn,
				 const struct p4w_hdr *hdr, int *ret_p)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	size_t avail = rx->tail - rx->head;

	*ret_p = 0;
	switch (hdr->type) {
	case P4W_T_OFFER_ANNOUNCE:
		if (avail < P4T_TCP_DATA_LEN)
			return false;
		*ret_p = p4t_tcp_rx_announce(conn, hdr, rx->buf + rx->head +
					     P4T_TCP_HDR_LEN);
		rx->head += P4T_TCP_DATA_LEN;
		return true;
	case P4W_T_PULL_DATA:
	case P4W_T_PUSH_DATA:
	case P4W_T_OFFER:
		if (avail < P4T_TCP_DATA_LEN)
			return false;
		*ret_p = p4t_tcp_rx_data_begin(conn, hdr,
					       rx->buf + rx->head +
					       P4T_TCP_HDR_LEN);
		if (*ret_p)
			return true;
		rx->head += P4T_TCP_DATA_LEN;
		p4t_tcp_rx_land_staged(conn);
		return true;
	case P4W_T_PULL_REQ:
		if (avail < hdr->length)
			return false;
		*ret_p = p4t_tcp_rx_pull_req(conn, rx->buf + rx->head);
		rx->head += hdr->length;
		return true;
	case P4W_T_XPORT:	/* at most P4W_XPORT_MAX: fits staging */
		if (avail < hdr->length)
			return false;
		rx->bulk = false;
		rx->head += hdr->length;
		*ret_p = p4t_tcp_rx_xport(conn, rx->buf + rx->head -
					  hdr->length, hdr->length);
		return true;
	case P4W_T_BYE:
		p4u_info(P4U_LOG_TRANSPORT, "tcp: peer said bye");
		p4t_tcp_conn_fail(conn, -FI_ECONNRESET);
		return true;
	default:	/* a second handshake on a link */
		*ret_p = -FI_EBADMSG;
		return true;
	}
}

/* An engine message larger than the staging buffer: a buffer of its own. */
static int p4t_tcp_rx_big(struct p4t_tcp_conn *conn, size_t len)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	size_t avail = rx->tail - rx->head;

	rx->big = malloc(len);
	if (!rx->big)
		return -FI_ENOMEM;
	memcpy(rx->big, rx->buf + rx->head, avail);
	rx->big_len = len;
	rx->big_got = avail;
	rx->head = rx->tail = 0;
	rx->mode = P4T_TCP_RX_BIG;
	return 0;
}

/* Handle staged messages; -1 when the link went down. */
static int p4t_tcp_rx_parse(struct p4t_tcp_conn *conn, int budget,
			    int *delivered)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	struct p4w_hdr hdr;
	size_t avail;
	int ret;

	while (rx->mode == P4T_TCP_RX_PARSE && *delivered < budget) {
		avail = rx->tail - rx->head;
		if (avail < P4T_TCP_HDR_LEN)
			break;
		ret = p4w_hdr_unpack(rx->buf + rx->head, avail, &hdr);
		if (!ret && hdr.type < P4W_T_FIRST &&
		    hdr.length > P4T_TCP_MAX_MSG)
			ret = -FI_EMSGSIZE;
		if (!ret && !p4t_tcp_rx_in_order(rx, hdr.type))
			ret = -FI_EBADMSG;
		if (!ret && hdr.type >= P4W_T_FIRST) {
			if (!p4t_tcp_rx_transport(conn, &hdr, &ret))
				break;
		} else if (!ret && hdr.length > avail) {
			if (hdr.length > P4T_TCP_STAGE)
				ret = p4t_tcp_rx_big(conn, hdr.length);
			if (!ret)
				break;
		} else if (!ret) {
			rx->bulk = false;
			rx->head += hdr.length;
			if (p4t_tcp_rx_deliver(conn, rx->buf + rx->head -
					       hdr.length, hdr.length))
				return -1;
			(*delivered)++;
		}
		if (ret) {
			p4t_tcp_conn_malformed(conn, ret, "malformed message");
			return -1;
		}
		if (conn->state != P4T_TCP_CONN_ESTABLISHED)
			return -1;
	}
	if (rx->head == rx->tail)
		rx->head = rx->tail = 0;
	return 0;
}

/* The destination part of the next read (LAND, BIG); bytes wanted. */
static size_t p4t_tcp_rx_dest(struct p4t_tcp_conn *conn, struct iovec *v,
			      size_t max, size_t *n_p)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	size_t i, n = 0, want = 0;

	if (rx->mode == P4T_TCP_RX_BIG) {
		v[0].iov_base = rx->big + rx->big_got;
		v[0].iov_len = rx->big_len - rx->big_got;
		n = 1;
	} else if (rx->mode == P4T_TCP_RX_LAND && rx->discard) {
		v[0].iov_base = conn->iface->scratch;
		v[0].iov_len = P4U_MIN(rx->left, P4T_TCP_SCRATCH);
		n = 1;
	} else if (rx->mode == P4T_TCP_RX_LAND) {
		n = p4t_tcp_iov_slice(rx->iov, rx->iovcnt, rx->off, rx->left, v,
				      max);
	}
	for (i = 0; i < n; i++)
		want += v[i].iov_len;
	*n_p = n;
	return want;
}

/* Account n bytes read into the destination part. */
static int p4t_tcp_rx_dest_done(struct p4t_tcp_conn *conn, size_t n)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	uint8_t *big;
	int ret;

	if (rx->mode == P4T_TCP_RX_LAND) {
		rx->off += n;
		rx->left -= n;
		conn->iface->stats.rma_bytes_in += n;
		if (!rx->left)
			p4t_tcp_rx_data_end(conn);
		return 0;
	}
	rx->big_got += n;
	if (rx->big_got < rx->big_len)
		return 0;
	big = rx->big;
	rx->big = NULL;
	rx->mode = P4T_TCP_RX_PARSE;
	ret = p4t_tcp_rx_deliver(conn, big, rx->big_len);
	free(big);
	return ret;
}

/*
 * One read: into the destination of a chunk or big message (if any) and
 * the staging buffer's free space behind it, in one syscall. Returns
 * bytes read, 0 when nothing was there, -1 when the link went down;
 * *drained when the socket gave less than asked (nothing more there).
 */
static ssize_t p4t_tcp_rx_fill(struct p4t_tcp_conn *conn, bool *drained)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	struct iovec v[65];
	size_t n, want, space, dest;
	ssize_t r;

	if (rx->head) {	/* keep the partial message at the front */
		memmove(rx->buf, rx->buf + rx->head, rx->tail - rx->head);
		rx->tail -= rx->head;
		rx->head = 0;
	}
	want = dest = p4t_tcp_rx_dest(conn, v, 64, &n);
	space = P4T_TCP_STAGE - rx->tail;
	/*
	 * While chunks stream in, the next message is most likely another
	 * chunk: stage only enough for its header, so its payload is read
	 * straight into place by the next read instead of copied out of a
	 * full staging buffer. Anything else clears bulk when it is parsed.
	 */
	if (rx->bulk)
		space = P4U_MIN(space, P4T_TCP_BULK_PEEK);
	/*
	 * Staged bytes are parsed as what follows the destination: while the
	 * destination takes only part of what it is owed (scratch of a drop,
	 * or more pieces than one read takes), read nothing behind it.
	 */
	if (rx->mode == P4T_TCP_RX_LAND && dest < rx->left)
		space = 0;
	if (space) {
		v[n].iov_base = rx->buf + rx->tail;
		v[n++].iov_len = space;
		want += space;
	}
	do {
		r = n == 1 ? recv(conn->sock->fd, v[0].iov_base, v[0].iov_len,
				  MSG_DONTWAIT) :
			     readv(conn->sock->fd, v, (int)n);
	} while (r < 0 && errno == EINTR);
	conn->iface->stats.recv_calls++;
	conn->rx_idle = r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	if (conn->rx_idle)
		return 0;
	if (r <= 0) {
		p4u_info(P4U_LOG_TRANSPORT, "tcp: link %s",
			 r ? "read error" : "closed by the peer");
		p4t_tcp_conn_fail(conn, r ? p4t_tcp_errno_status(errno) :
				  -FI_ECONNRESET);
		return -1;
	}
	*drained = (size_t)r < want;
	if (dest && p4t_tcp_rx_dest_done(conn, P4U_MIN((size_t)r, dest)))
		return -1;
	if ((size_t)r > dest)
		rx->tail += (size_t)r - dest;
	return r;
}

/* Read and deliver up to budget messages; returns how many. */
int p4t_tcp_conn_rx(struct p4t_tcp_conn *conn, int budget)
{
	struct p4t_tcp_iface *iface = conn->iface;
	bool drained = false;
	int delivered = 0, reads;

	p4u_list_remove(&conn->backlog);
	for (reads = 0;; reads++) {
		if (conn->state != P4T_TCP_CONN_ESTABLISHED ||
		    p4t_tcp_rx_parse(conn, budget, &delivered))
			return delivered;
		if (delivered >= budget) {
			if (conn->rx.tail > conn->rx.head)
				p4u_list_insert_tail(&iface->backlog,
						     &conn->backlog);
			break;
		}
		if (drained || reads == P4T_TCP_READS ||
		    p4t_tcp_rx_fill(conn, &drained) <= 0)
			break;
	}
	return delivered;
}

/* ---- where chunk data lands ---------------------------------------------- */

static int p4t_tcp_rx_pull_data(struct p4t_tcp_conn *conn,
				const struct p4w_data *d)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	struct p4t_tcp_rma *rma = p4u_pool_lookup(&conn->iface->rmas, d->id);

	/* pulls end only with their link: an unknown id is a lie */
	if (!rma || rma->kind != P4T_TCP_RMA_PULL || rma->conn != conn ||
	    !p4u_list_node_linked(&rma->link))
		return -FI_EBADMSG;
	/* one held for an offer was never asked for: its id is a guess */
	if (rma == rx->offer_pull)
		return -FI_EBADMSG;
	if (d->status) {
		if (!d->last)
			return -FI_EBADMSG;
		rma->status = d->status;
	} else if (d->offset != rma->pos || d->length > rma->len - rma->pos ||
		   (d->last && rma->pos + d->length != rma->len)) {
		return -FI_EBADMSG;
	}
	rx->iov = rma->iov;
	rx->iovcnt = rma->iovcnt;
	rx->off = d->offset;
	rx->pull = rma;
	rma->pos += d->length;
	return 0;
}

/*
 * An OFFER (it follows the message its OFFER_ANNOUNCE announced; rx is
 * set up for its data by p4t_tcp_rx_data_begin): what was announced, and
 * it serves the pull held for it (of exactly these bytes: p4t_tcp_pull);
 * with none, it is read and dropped, and pulls of it (of a part, later,
 * for a truncated receive) went or go to the network as usual.
 */
static int p4t_tcp_rx_offer(struct p4t_tcp_conn *conn,
			    const struct p4w_data *d)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	struct p4t_tcp_rma *rma = rx->offer_pull;

	rx->offer = P4T_TCP_OFFER_NONE;
	rx->offer_pull = NULL;
	if (d->dst.key != rx->offer_src.key ||
	    d->dst.addr != rx->offer_src.addr ||
	    d->dst.length != rx->offer_src.length ||
	    d->length != rx->offer_len)
		return -FI_EBADMSG;	/* not what was announced */
	if (rma) {
		rx->iov = rma->iov;
		rx->iovcnt = rma->iovcnt;
		rx->off = 0;
		rx->pull = rma;
		rma->pos = rma->len;
		conn->iface->stats.offers_taken++;
		return 0;
	}
	rx->discard = true;
	conn->iface->stats.offers_dropped++;
	return 0;
}

/* A chunk header is staged: check it and say where its data goes. */
static int p4t_tcp_rx_data_begin(struct p4t_tcp_conn *conn,
				 const struct p4w_hdr *hdr,
				 const uint8_t *body)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	struct p4t_tcp_mem *mem;
	struct p4w_data d;
	int ret;

	ret = p4t_tcp_rx_data_hdr(hdr, body, &d);
	if (ret)
		return ret;
	rx->pull = NULL;
	rx->mem = NULL;
	rx->discard = false;
	rx->last = d.last;
	rx->left = d.length;
	rx->bulk = d.length > P4T_TCP_BULK_PEEK;
	if (hdr->type == P4W_T_OFFER)
		return p4t_tcp_rx_offer(conn, &d);
	if (hdr->type == P4W_T_PULL_DATA)
		return p4t_tcp_rx_pull_data(conn, &d);
	/* a push the peer may not make is a protocol violation */
	ret = p4t_tcp_mem_lookup(conn->iface, conn, d.dst.key, d.offset,
				 d.length, P4T_ACCESS_WRITE, &mem);
	if (ret)
		return ret;
	rx->iov = mem->iov;
	rx->iovcnt = mem->iovcnt;
	rx->off = d.offset;
	rx->mem = mem;
	return 0;
}

/* The current chunk is all in place. */
static void p4t_tcp_rx_data_end(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_rx *rx = &conn->rx;
	struct p4t_tcp_rma *rma = rx->pull;

	rx->mode = P4T_TCP_RX_PARSE;
	rx->pull = NULL;
	rx->mem = NULL;
	rx->discard = false;
	if (rma && rx->last) {
		p4u_list_remove(&rma->link);
		rma->ev.status = rma->status;
		p4t_tcp_ev_post(conn->iface, &rma->ev);
	}
}
