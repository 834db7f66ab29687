/*
 * p4t_tcp_rma.c - the TCP transport's emulated RDMA: exposures and their
 * cookies, the rma objects (a pull, a stream serving the peer's pull, a
 * push) and their chunks, posting pull (PULL_REQ) and push (PUSH_DATA
 * chunks) and the self case, and serving the peer's PULL_REQ (a stream of
 * PULL_DATA chunks, or a refusal).
 *
 * Not here: where received chunks land and how an offer serves a pull
 * (p4t_tcp_rx.c, with the rest of the receive path); how chunks are
 * written (p4t_tcp_send.c gathers a chunk's head and body like any queued
 * message).
 *
 * A stream or push is one tx on the link's write queue describing its
 * current chunk; when the chunk is written the next is armed. A stream
 * then moves behind whatever was queued meanwhile, so a large pull takes
 * turns with small messages; a push stays in place, so what is sent after
 * push() arrives after the pushed data.
 *
 * Everything that names memory across the wire is checked: a cookie key
 * is a pool handle (index | generation) xor a per-iface salt, so stale or
 * forged keys miss; a pull id is the pull's own pool handle; offsets and
 * lengths are compared without overflow against what was exposed.
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

/* ---- exposures ------------------------------------------------------------ */

int p4t_tcp_mem_expose(struct p4t_iface *iface_, struct p4t_conn *conn_,
		       const struct iovec *iov, size_t iovcnt, unsigned access,
		       struct p4w_cookie *cookie, struct p4t_mem **mem_p)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_mem *mem;
	struct iovec *copy;
	size_t len;
	int ret;

	if (!conn_ || !cookie || !mem_p || !access ||
	    (access & ~(unsigned)(P4T_ACCESS_READ | P4T_ACCESS_WRITE)) ||
	    iovcnt > P4T_TCP_MAX_IOV)
		return -FI_EINVAL;
	ret = p4u_iov_len(iov, iovcnt, &len);
	if (ret)
		return ret;
	copy = calloc(iovcnt ? iovcnt : 1, sizeof(*copy));
	if (!copy)
		return -FI_ENOMEM;
	mem = p4u_pool_alloc(&iface->mems);
	if (!mem) {
		free(copy);
		return -FI_EAGAIN;
	}
	if (iovcnt)
		memcpy(copy, iov, iovcnt * sizeof(*copy));
	mem->conn = p4t_tcp_conn_of(conn_);
	mem->access = access;
	mem->len = len;
	mem->iovcnt = iovcnt;
	mem->iov = copy;
	p4u_list_init(&mem->streams);
	p4t_tcp_mem_cookie(iface, mem, cookie);
	*mem_p = (struct p4t_mem *)mem;
	return 0;
}

void p4t_tcp_mem_cookie(struct p4t_tcp_iface *iface,
			const struct p4t_tcp_mem *mem, struct p4w_cookie *cookie)
{
	cookie->addr = 0;	/* offset addressing */
	cookie->key = p4u_pool_handle(&iface->mems, mem) ^ iface->salt;
	cookie->length = mem->len;
}

/*
 * A stream still reading mem keeps its current chunk (copied now, as it
 * may be half written) and refuses the rest with -FI_EACCES.
 */
static void p4t_tcp_mem_cut_stream(struct p4t_tcp_rma *rma)
{
	struct p4t_tcp_tx *tx = &rma->tx;
	size_t body = tx->len - tx->head_len;
	void *copy = malloc(body ? body : 1);

	p4u_list_remove(&rma->link);
	rma->mem = NULL;
	rma->status = -FI_EACCES;
	if (!copy) {
		p4t_tcp_conn_fail(rma->conn, -FI_ENOMEM);
		return;
	}
	p4t_tcp_iov_copy_out(copy, tx->body, tx->body_cnt, tx->body_off, body);
	free(rma->chunk_copy);
	rma->chunk_copy = copy;
	tx->one.iov_base = copy;
	tx->one.iov_len = body;
	tx->body = &tx->one;
	tx->body_cnt = 1;
	tx->body_off = 0;
}

void p4t_tcp_mem_unexpose(struct p4t_iface *iface_, struct p4t_mem *mem_)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_mem *mem = (struct p4t_tcp_mem *)mem_;
	struct p4t_tcp_rma *rma, *tmp;

	if (!mem)
		return;
	p4u_list_foreach_entry_safe(&mem->streams, rma, tmp,
				    struct p4t_tcp_rma, link)
		p4t_tcp_mem_cut_stream(rma);
	/* a push landing in it: the rest of the chunk goes nowhere */
	if (mem->conn && mem->conn->rx.mem == mem) {
		mem->conn->rx.mem = NULL;
		mem->conn->rx.discard = true;
	}
	free(mem->iov);
	/* the generation moves on: the cookie is refused from now on */
	p4u_pool_free(&iface->mems, mem);
}

/* Exposures for conn become unusable (the cookie stays until unexpose). */
void p4t_tcp_mem_forget_conn(struct p4t_tcp_conn *conn)
{
	struct p4u_pool *mems = &conn->iface->mems;
	struct p4t_tcp_mem *mem;
	uint32_t i;

	for (i = 0; p4u_pool_in_use(mems) && i < p4u_pool_capacity(mems); i++) {
		mem = p4u_pool_at(mems, i);
		if (mem && mem->conn == conn)
			mem->conn = NULL;
	}
}

void p4t_tcp_mem_free_all(struct p4t_tcp_iface *iface)
{
	struct p4t_tcp_mem *mem;
	uint32_t i;

	for (i = 0; i < p4u_pool_capacity(&iface->mems); i++) {
		mem = p4u_pool_at(&iface->mems, i);
		if (mem)
			free(mem->iov);
	}
}

/* The exposure key names, usable by conn's peer for [off, off + len). */
int p4t_tcp_mem_lookup(struct p4t_tcp_iface *iface, struct p4t_tcp_conn *conn,
		       uint64_t key, uint64_t off, uint64_t len,
		       unsigned access, struct p4t_tcp_mem **mem_p)
{
	struct p4t_tcp_mem *mem = p4u_pool_lookup(&iface->mems,
						  key ^ iface->salt);

	if (!mem || !(mem->access & access) || mem->conn != conn) {
		p4u_warn_sparse(P4U_LOG_TRANSPORT,
				"tcp: rma refused: key 0x%llx %s",
				(unsigned long long)key,
				!mem ? "unknown" : !(mem->access & access) ?
				"access" : "other peer");
		return -FI_EACCES;
	}
	if (off > mem->len || len > mem->len - off) {
		p4u_warn_sparse(P4U_LOG_TRANSPORT,
				"tcp: rma out of range: off %llu len %llu of %zu",
				(unsigned long long)off,
				(unsigned long long)len, mem->len);
		return -FI_EINVAL;
	}
	*mem_p = mem;
	return 0;
}

/* ---- rma objects ------------------------------------------------------------ */

void p4t_tcp_rma_free(struct p4t_tcp_iface *iface, struct p4t_tcp_rma *rma)
{
	if (rma->iov != rma->iov_inline)
		free(rma->iov);
	free(rma->chunk_copy);
	p4u_pool_free(&iface->rmas, rma);
}

static struct p4t_tcp_rma *p4t_tcp_rma_alloc(struct p4t_tcp_conn *conn,
					     enum p4t_tcp_rma_kind kind,
					     const struct iovec *iov,
					     size_t iovcnt)
{
	struct p4t_tcp_rma *rma = p4u_pool_alloc(&conn->iface->rmas);

	if (!rma)
		return NULL;
	rma->kind = kind;
	rma->conn = conn;
	rma->ev.kind = P4T_TCP_EV_RMA_DONE;
	p4u_list_node_init(&rma->ev.node);
	p4u_list_node_init(&rma->link);
	p4u_list_node_init(&rma->tx.ev.node);
	rma->tx.kind = kind == P4T_TCP_RMA_PUSH ? P4T_TCP_TX_PUSH :
		       P4T_TCP_TX_STREAM;
	rma->tx.rma = rma;
	rma->iov = rma->iov_inline;
	if (iovcnt > P4T_TCP_TX_IOV) {
		rma->iov = malloc(iovcnt * sizeof(*rma->iov));
		if (!rma->iov) {
			rma->iov = rma->iov_inline;
			p4t_tcp_rma_free(conn->iface, rma);
			return NULL;
		}
	}
	if (iovcnt)
		memcpy(rma->iov, iov, iovcnt * sizeof(*iov));
	rma->iovcnt = iovcnt;
	return rma;
}

/* Complete a pull or push (event), or drop a stream, with status. */
void p4t_tcp_rma_abort(struct p4t_tcp_rma *rma, int status)
{
	struct p4t_tcp_iface *iface = rma->conn->iface;

	p4u_list_remove(&rma->link);
	p4u_list_remove(&rma->tx.ev.node);
	if (rma->kind == P4T_TCP_RMA_STREAM) {
		p4t_tcp_rma_free(iface, rma);
		return;
	}
	rma->ev.status = status;
	p4t_tcp_ev_post_conn(rma->conn, &rma->ev);
}

/* Describe the next chunk of a stream or push in its tx. */
static void p4t_tcp_rma_arm(struct p4t_tcp_rma *rma)
{
	struct p4t_tcp_tx *tx = &rma->tx;
	size_t clen = P4U_MIN(rma->conn->iface->chunk, rma->len - rma->pos);
	bool stream = rma->kind == P4T_TCP_RMA_STREAM;
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = stream ? P4W_T_PULL_DATA : P4W_T_PUSH_DATA,
	};
	struct p4w_data d = { .id = rma->id, .offset = rma->pos };

	if (stream && rma->status)
		clen = 0;
	if (stream && !rma->chunk_copy) {
		tx->body = rma->mem->iov;
		tx->body_cnt = rma->mem->iovcnt;
		tx->body_off = rma->mem_off + rma->pos;
	} else if (!stream) {
		d.id = 0;
		d.dst = rma->remote;
		d.offset = rma->remote_off + rma->pos;
		tx->body = rma->iov;
		tx->body_cnt = rma->iovcnt;
		tx->body_off = rma->pos;
	}
	d.status = stream ? rma->status : 0;
	d.length = clen;
	d.last = rma->status || rma->pos + clen == rma->len;
	hdr.length = (uint32_t)(P4T_TCP_DATA_LEN + clen);
	p4w_hdr_pack(tx->head, &hdr);
	p4w_data_pack(tx->head + P4T_TCP_HDR_LEN, &d);
	tx->head_len = P4T_TCP_DATA_LEN;
	tx->len = P4T_TCP_DATA_LEN + clen;
	tx->done = 0;
	tx->final = d.last;
	rma->pos += clen;
}

/* A chunk is in the socket: arm the next, or finish. */
void p4t_tcp_rma_chunk_written(struct p4t_tcp_tx *tx)
{
	struct p4t_tcp_rma *rma = tx->rma;
	struct p4t_tcp_conn *conn = rma->conn;

	conn->txq_bytes -= tx->len;
	conn->iface->stats.rma_bytes_out += tx->len - tx->head_len;
	if (rma->chunk_copy) {
		free(rma->chunk_copy);
		rma->chunk_copy = NULL;
	}
	if (!tx->final) {
		p4t_tcp_rma_arm(rma);
		conn->txq_bytes += tx->len;
		/* pull data takes turns with what was queued meanwhile */
		if (rma->kind == P4T_TCP_RMA_STREAM &&
		    conn->txq.prev != &tx->ev.node) {
			p4u_list_remove(&tx->ev.node);
			p4u_list_insert_tail(&conn->txq, &tx->ev.node);
		}
		return;
	}
	p4u_list_remove(&tx->ev.node);
	if (rma->kind == P4T_TCP_RMA_STREAM) {
		conn->nstreams--;
		p4u_list_remove(&rma->link);
		p4t_tcp_rma_free(conn->iface, rma);
		return;
	}
	rma->ev.status = 0;
	p4t_tcp_ev_post(conn->iface, &rma->ev);
}

/* ---- posting ------------------------------------------------------------------ */

/* Copy len bytes from src (at soff) to dst (at doff); both hold them. */
static void p4t_tcp_iov_copy(const struct iovec *dst, size_t dcnt,
			     uint64_t doff, const struct iovec *src,
			     size_t scnt, uint64_t soff, size_t len)
{
	struct iovec s[16];
	size_t i, n;

	while (len) {
		n = p4t_tcp_iov_slice(src, scnt, soff, len, s, 16);
		for (i = 0; i < n; i++) {
			p4t_tcp_iov_copy_in(dst, dcnt, doff, s[i].iov_base,
					    s[i].iov_len);
			doff += s[i].iov_len;
			soff += s[i].iov_len;
			len -= s[i].iov_len;
		}
	}
}

/* Pull and push on the self link: copied now, reported from progress. */
static int p4t_tcp_rma_self(struct p4t_tcp_rma *rma)
{
	struct p4t_tcp_iface *iface = rma->conn->iface;
	bool pull = rma->kind == P4T_TCP_RMA_PULL;
	struct p4t_tcp_mem *mem;
	int ret;

	ret = p4t_tcp_mem_lookup(iface, rma->conn, rma->remote.key,
				 rma->remote_off, rma->len,
				 pull ? P4T_ACCESS_READ : P4T_ACCESS_WRITE,
				 &mem);
	if (ret)
		return ret;
	if (pull)
		p4t_tcp_iov_copy(rma->iov, rma->iovcnt, 0, mem->iov,
				 mem->iovcnt, rma->remote_off, rma->len);
	else
		p4t_tcp_iov_copy(mem->iov, mem->iovcnt, rma->remote_off,
				 rma->iov, rma->iovcnt, 0, rma->len);
	return 0;
}

/*
 * Checks every pull and push shares; a failure that is the peer's or the
 * link's completes through rma_done like a network would. Returns 1 when
 * rma was completed that way, 0 to go on, < 0 for a caller error.
 */
static int p4t_tcp_rma_start(struct p4t_tcp_conn *conn,
			     struct p4t_tcp_rma *rma)
{
	int status = 0;

	if (rma->remote_off > rma->remote.length ||
	    rma->len > rma->remote.length - rma->remote_off)
		status = -FI_EINVAL;
	else if (conn->self)
		status = p4t_tcp_rma_self(rma);
	else if (conn->state != P4T_TCP_CONN_CONNECTING &&
		 conn->state != P4T_TCP_CONN_ESTABLISHED)
		status = -FI_ECONNABORTED;
	else
		return 0;
	if (conn->self && !status)
		conn->iface->stats.rma_bytes_in += rma->len;
	rma->ev.status = status;
	p4t_tcp_ev_post_conn(conn, &rma->ev);
	return 1;
}

static int p4t_tcp_rma_check(struct p4t_conn *conn, const struct iovec *local,
			     size_t iovcnt, size_t len,
			     const struct p4w_cookie *remote)
{
	size_t local_len;
	int ret;

	if (!conn || !remote || iovcnt > P4T_TCP_MAX_IOV)
		return -FI_EINVAL;
	ret = p4u_iov_len(local, iovcnt, &local_len);
	if (ret)
		return ret;
	return local_len < len ? -FI_EINVAL : 0;
}

/* Send rma's PULL_REQ; it waits on conn->pulls for the data. */
static int p4t_tcp_pull_ask(struct p4t_tcp_conn *conn, struct p4t_tcp_rma *rma)
{
	uint8_t msg[P4T_TCP_PULL_REQ_LEN];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = P4W_T_PULL_REQ,
		.length = P4T_TCP_PULL_REQ_LEN,
	};
	struct p4w_pull_req req = {
		.pull_id = p4u_pool_handle(&conn->iface->rmas, rma),
		.offset = rma->remote_off,
		.length = rma->len,
		.src = rma->remote,
	};

	p4w_hdr_pack(msg, &hdr);
	p4w_pull_req_pack(msg + P4T_TCP_HDR_LEN, &req);
	if (!p4t_tcp_tx_ctl(conn, msg, sizeof(msg)))
		return -FI_EAGAIN;
	if (!p4u_list_node_linked(&rma->link))
		p4u_list_insert_tail(&conn->pulls, &rma->link);
	p4t_tcp_conn_kick(conn);
	return 0;
}

int p4t_tcp_pull(struct p4t_iface *iface_, struct p4t_conn *conn_,
		 const struct p4w_cookie *remote, uint64_t remote_off,
		 const struct iovec *local, size_t iovcnt, size_t len,
		 void *op_ctx)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_conn *conn = p4t_tcp_conn_of(conn_);
	struct p4t_tcp_rma *rma;
	int ret;

	ret = p4t_tcp_rma_check(conn_, local, iovcnt, len, remote);
	if (ret)
		return ret;
	rma = p4t_tcp_rma_alloc(conn, P4T_TCP_RMA_PULL, local, iovcnt);
	if (!rma)
		return -FI_EAGAIN;
	rma->op_ctx = op_ctx;
	rma->len = len;
	rma->remote = *remote;
	rma->remote_off = remote_off;
	iface->stats.pulls++;
	if (p4t_tcp_rma_start(conn, rma))
		return 0;
	/*
	 * The message this recv upcall handles was announced with an offer
	 * of exactly these bytes, which come right behind it: wait for its
	 * OFFER (p4t_tcp_rx_offer) instead of asking.
	 */
	if (conn->busy && conn->rx.offer == P4T_TCP_OFFER_UPCALL &&
	    !conn->rx.offer_pull && !remote_off &&
	    len == conn->rx.offer_len &&
	    remote->key == conn->rx.offer_src.key &&
	    remote->addr == conn->rx.offer_src.addr) {
		conn->rx.offer_pull = rma;
		p4u_list_insert_tail(&conn->pulls, &rma->link);
		return 0;
	}
	ret = p4t_tcp_pull_ask(conn, rma);
	if (ret)
		p4t_tcp_rma_free(iface, rma);
	return ret;
}

int p4t_tcp_push(struct p4t_iface *iface_, struct p4t_conn *conn_,
		 const struct iovec *local, size_t iovcnt, size_t len,
		 const struct p4w_cookie *remote, uint64_t remote_off,
		 void *op_ctx)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_conn *conn = p4t_tcp_conn_of(conn_);
	struct p4t_tcp_rma *rma;
	int ret;

	ret = p4t_tcp_rma_check(conn_, local, iovcnt, len, remote);
	if (ret)
		return ret;
	rma = p4t_tcp_rma_alloc(conn, P4T_TCP_RMA_PUSH, local, iovcnt);
	if (!rma)
		return -FI_EAGAIN;
	rma->op_ctx = op_ctx;
	rma->len = len;
	rma->remote = *remote;
	rma->remote_off = remote_off;
	iface->stats.pushes++;
	if (p4t_tcp_rma_start(conn, rma))
		return 0;
	p4t_tcp_rma_arm(rma);
	p4t_tcp_txq_append(conn, &rma->tx);
	p4t_tcp_conn_kick(conn);
	return 0;
}

/* ---- serving the peer's pulls -------------------------------------------- */

/* A refused pull: one final PULL_DATA carrying the status, no data. */
static int p4t_tcp_pull_refuse(struct p4t_tcp_conn *conn, uint64_t pull_id,
			       int status)
{
	uint8_t msg[P4T_TCP_DATA_LEN];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = P4W_T_PULL_DATA,
		.length = P4T_TCP_DATA_LEN,
	};
	struct p4w_data d = { .id = pull_id, .last = 1, .status = status };

	p4w_hdr_pack(msg, &hdr);
	p4w_data_pack(msg + P4T_TCP_HDR_LEN, &d);
	if (!p4t_tcp_tx_ctl(conn, msg, sizeof(msg)))
		return -FI_ENOMEM;
	p4t_tcp_conn_kick(conn);
	return 0;
}

/* The peer asks for data we exposed to it. */
int p4t_tcp_rx_pull_req(struct p4t_tcp_conn *conn, const uint8_t *msg)
{
	struct p4t_tcp_iface *iface = conn->iface;
	struct p4w_pull_req req;
	struct p4t_tcp_mem *mem;
	struct p4t_tcp_rma *rma;
	int ret;

	ret = p4w_pull_req_unpack(msg + P4T_TCP_HDR_LEN,
				  P4T_TCP_PULL_REQ_LEN - P4T_TCP_HDR_LEN, &req);
	if (ret)
		return ret;
	ret = p4t_tcp_mem_lookup(iface, conn, req.src.key, req.offset,
				 req.length, P4T_ACCESS_READ, &mem);
	if (ret)
		return p4t_tcp_pull_refuse(conn, req.pull_id, ret);
	rma = p4t_tcp_rma_alloc(conn, P4T_TCP_RMA_STREAM, NULL, 0);
	if (!rma)
		return p4t_tcp_pull_refuse(conn, req.pull_id, -FI_ENOMEM);
	rma->id = req.pull_id;
	rma->len = req.length;
	rma->mem = mem;
	rma->mem_off = req.offset;
	p4u_list_insert_tail(&mem->streams, &rma->link);
	p4t_tcp_rma_arm(rma);
	p4t_tcp_txq_append(conn, &rma->tx);
	iface->stats.streams++;
	p4t_tcp_conn_kick(conn);
	return 0;
}
