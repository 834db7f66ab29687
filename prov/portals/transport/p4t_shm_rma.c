/*
 * p4t_shm_rma.c - the shared-memory transport's RMA (behaviour:
 * p4t_shm.h): pull and push by cross-memory attach, read a step per
 * progress call, the ring fallback (data chunks on the link's queue),
 * serving the peer's requests, failing what a link had pending.
 *
 * Not here: the exposures (p4t_shm_mem.c), how frames reach the ring
 * (p4t_shm_send.c, p4t_shm_ring.c).
 *
 * The owner of an exposure decides every access against its own live
 * table, in its own progress, before a byte moves: the peer only ever
 * gets bytes the owner granted (a pull) or has its bytes read by the
 * owner into the exposure (a push). Cross-memory attach is only used to
 * read into memory of the process that reads, so no copy lands in a
 * process that did not ask for it at that moment.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <rdma/fi_errno.h>

#include "p4t_shm_priv.h"

#define P4T_SHM_CMA_IOV		1024	/* IOV_MAX per side and call */

/* ---- iovec helpers ------------------------------------------------------------- */

/* Up to max pieces of iov covering [off, off + len); returns the count. */
static size_t p4t_shm_iov_slice(const struct iovec *iov, size_t cnt,
				uint64_t off, size_t len, struct iovec *out,
				size_t max)
{
	size_t i, n = 0, take;

	for (i = 0; i < cnt && len && n < max; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = P4U_MIN(len, iov[i].iov_len - off);
		out[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		out[n++].iov_len = take;
		len -= take;
		off = 0;
	}
	return n;
}

/* Copy len bytes of src into iov at off (which holds them). */
void p4t_shm_iov_put(const struct iovec *iov, size_t cnt, uint64_t off,
		     const uint8_t *src, size_t len)
{
	size_t i, n;

	for (i = 0; i < cnt && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		n = P4U_MIN(len, iov[i].iov_len - off);
		memcpy((uint8_t *)iov[i].iov_base + off, src, n);
		src += n;
		len -= n;
		off = 0;
	}
}

/*
 * Read len bytes of the peer's memory (remote, from roff) into ours
 * (local, from loff) with process_vm_readv, in calls of at most
 * P4T_SHM_CMA_IOV pieces a side; 0 or -errno (EPERM / ENOSYS: the kernel
 * refuses attaching).
 */
int p4t_shm_cma_read(struct p4t_shm_conn *conn, const struct iovec *local,
		     size_t lcnt, uint64_t loff, const struct iovec *remote,
		     size_t rcnt, uint64_t roff, size_t len)
{
	struct iovec l[P4T_SHM_CMA_IOV], r[P4T_SHM_CMA_IOV];
	size_t done = 0, nl, nr;
	ssize_t n;

	while (done < len) {
		nl = p4t_shm_iov_slice(local, lcnt, loff + done, len - done, l,
				       P4T_SHM_CMA_IOV);
		nr = p4t_shm_iov_slice(remote, rcnt, roff + done, len - done,
				       r, P4T_SHM_CMA_IOV);
		n = process_vm_readv(conn->peer_pid, l, nl, r, nr, 0);
		conn->iface->stats.cma_reads++;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	conn->iface->stats.cma_bytes += len;
	return 0;
}

bool p4t_shm_cma_refused(int err)
{
	return err == -EPERM || err == -ENOSYS || err == -EACCES;
}

/* A pull's status after a read of the peer failed otherwise (ret < 0):
 * the peer is gone (ESRCH), or its pieces could not be read. */
int p4t_shm_cma_fail_status(int ret)
{
	return ret == -ESRCH ? -FI_ECONNABORTED : -FI_EIO;
}

/* The kernel refused attaching: from now on this link copies through
 * the ring. */
void p4t_shm_cma_off(struct p4t_shm_conn *conn)
{
	conn->iface->stats.cma_refused++;
	conn->cma = false;
}

/* PUSH_DONE's status after reading the peer's push returned ret. */
static int p4t_shm_fill_status(struct p4t_shm_conn *conn, int ret)
{
	if (!ret)
		return 0;
	if (p4t_shm_cma_refused(ret)) {
		/* the pusher sends it again as data */
		p4t_shm_cma_off(conn);
		return P4T_SHM_ST_RING;
	}
	return -FI_EIO;
}

/* Can we read the peer? Its session word at addr must read back. */
bool p4t_shm_cma_probe(struct p4t_shm_conn *conn, uint64_t addr,
		       uint64_t want)
{
	uint64_t got = 0;
	struct iovec l = { &got, sizeof(got) };
	struct iovec r = { (void *)(uintptr_t)addr, sizeof(got) };
	int ret;

	if (!conn->iface->cma)
		return false;
	ret = p4t_shm_cma_read(conn, &l, 1, 0, &r, 1, 0, sizeof(got));
	if (p4t_shm_cma_refused(ret))
		conn->iface->stats.cma_refused++;
	return !ret && got == want;
}

/* ---- rma objects ------------------------------------------------------------------- */

/* A granted pull stops being read (done, failed or freed). */
void p4t_shm_cma_forget(struct p4t_shm_rma *rma)
{
	if (p4u_list_node_linked(&rma->cma_node))
		p4u_list_remove(&rma->cma_node);
	free(rma->granted);
	rma->granted = NULL;
	rma->ngranted = 0;
}

void p4t_shm_rma_free(struct p4t_shm_iface *iface, struct p4t_shm_rma *rma)
{
	p4t_shm_cma_forget(rma);
	p4u_list_remove(&rma->link);
	if (p4u_list_node_linked(&rma->coop_node))
		p4u_list_remove(&rma->coop_node);
	if (rma->iov != rma->iov_inline)
		free(rma->iov);
	p4u_pool_free(&iface->rmas, rma);
}

struct p4t_shm_rma *p4t_shm_rma_alloc(struct p4t_shm_conn *conn,
				      enum p4t_shm_rma_kind kind,
				      const struct iovec *iov, size_t iovcnt)
{
	struct p4t_shm_rma *rma = p4u_pool_alloc(&conn->iface->rmas);

	if (!rma)
		return NULL;
	rma->kind = kind;
	rma->conn = conn;
	rma->ev.kind = P4T_SHM_EV_RMA_DONE;
	p4u_list_node_init(&rma->ev.node);
	p4u_list_node_init(&rma->link);
	p4u_list_node_init(&rma->tx.ev.node);
	p4u_list_node_init(&rma->cma_node);
	p4u_list_node_init(&rma->coop_node);
	rma->cma_gen = 0;
	rma->granted = NULL;
	rma->ngranted = 0;
	rma->tx.rma = rma;
	rma->iov = rma->iov_inline;
	if (iovcnt > P4T_SHM_TX_IOV) {
		rma->iov = malloc(iovcnt * sizeof(*rma->iov));
		if (!rma->iov) {
			rma->iov = rma->iov_inline;
			p4t_shm_rma_free(conn->iface, rma);
			return NULL;
		}
	}
	if (iovcnt)
		memcpy(rma->iov, iov, iovcnt * sizeof(*iov));
	rma->iovcnt = iovcnt;
	return rma;
}

uint64_t p4t_shm_rma_id(struct p4t_shm_rma *rma)
{
	return p4u_pool_handle(&rma->conn->iface->rmas, rma);
}

/* A pull or push of ours finished: rma_done from progress. */
void p4t_shm_rma_complete(struct p4t_shm_rma *rma, int status)
{
	p4t_shm_cma_forget(rma);
	p4u_list_remove(&rma->link);
	if (rma->in_txq) {
		rma->conn->txq_bytes -= rma->tx.len - rma->tx.done;
		p4u_list_remove(&rma->tx.ev.node);
		rma->in_txq = false;
	}
	rma->ev.status = status;
	p4t_shm_ev_post_conn(rma->conn, &rma->ev);
}

/* Every pull and push of conn completes with status (link down). */
void p4t_shm_rma_fail_conn(struct p4t_shm_conn *conn, int status)
{
	struct p4t_shm_rma *rma, *tmp;

	p4u_list_foreach_entry_safe(&conn->rmas, rma, tmp, struct p4t_shm_rma,
				    link)
		p4t_shm_rma_complete(rma, status);
	/* the peer's pushes being read here: nobody waits for them now */
	p4u_list_foreach_entry_safe(&conn->iface->cma_reads, rma, tmp,
				    struct p4t_shm_rma, cma_node)
		if (rma->conn == conn && rma->kind == P4T_SHM_RMA_FILL)
			p4t_shm_rma_free(conn->iface, rma);
	p4t_shm_coop_fail_conn(conn);
}

/* Describe the next ring-mode chunk (PULL_DATA or PUSH_DATA) in rma->tx. */
static void p4t_shm_rma_arm(struct p4t_shm_rma *rma)
{
	struct p4t_shm_tx *tx = &rma->tx;
	bool stream = rma->kind == P4T_SHM_RMA_STREAM;
	size_t n = P4U_MIN((size_t)P4T_SHM_CHUNK, rma->len - rma->pos);
	struct p4t_shm_ctl ctl = {
		.id = stream ? rma->id : p4t_shm_rma_id(rma),
		.key = stream ? 0 : rma->remote.key,
		.off = stream ? rma->pos : rma->remote_off + rma->pos,
		.len = n,
		.flags = (!rma->pos ? P4T_SHM_CTL_FIRST : 0) |
			 (rma->pos + n == rma->len ? P4T_SHM_CTL_LAST : 0) |
			 (rma->coop ? P4T_SHM_CTL_COOP : 0),
	};

	memcpy(tx->head, &ctl, sizeof(ctl));
	tx->head_len = sizeof(ctl);
	tx->type = stream ? P4T_SHM_F_PULL_DATA : P4T_SHM_F_PUSH_DATA;
	tx->body = stream ? rma->mem->iov : rma->iov;
	tx->body_cnt = stream ? rma->mem->iovcnt : rma->iovcnt;
	tx->body_off = stream ? rma->mem_off + rma->pos : rma->pos;
	tx->len = sizeof(ctl) + n;
	tx->done = 0;
	tx->skip = 0;
	rma->pos += n;
}

/* Start ring-mode data: its chunks go on the queue, in order; drain:
 * write what the ring takes now. */
void p4t_shm_rma_stream(struct p4t_shm_rma *rma, bool drain)
{
	rma->ring = true;
	rma->pos = 0;
	p4t_shm_rma_arm(rma);
	rma->in_txq = true;
	p4t_shm_txq_add(rma->conn, &rma->tx, false);
	if (drain)
		(void)p4t_shm_txq_drain(rma->conn);
}

/* A chunk is in the ring: the next stays in place (order), or done. */
void p4t_shm_rma_chunk_written(struct p4t_shm_tx *tx)
{
	struct p4t_shm_rma *rma = tx->rma;
	struct p4t_shm_conn *conn = rma->conn;
	bool coop;

	conn->iface->stats.ring_rma_bytes += tx->len - tx->head_len;
	if (rma->pos < rma->len) {
		p4t_shm_rma_arm(rma);
		/* a pull read from both ends lets the link's frames pass */
		p4t_shm_txq_add(conn, tx, !rma->coop);
		return;
	}
	rma->in_txq = false;
	/* a push now waits for PUSH_DONE; a stream is over */
	if (rma->kind == P4T_SHM_RMA_STREAM) {
		coop = rma->coop;
		p4t_shm_rma_free(conn->iface, rma);
		if (coop)
			p4t_shm_coop_next(conn, false);
	}
}

/* A stream serving the peer stops: off the link's queue, freed. */
void p4t_shm_stream_drop(struct p4t_shm_rma *rma)
{
	struct p4t_shm_conn *conn = rma->conn;

	if (rma->in_txq) {
		/* chunks are single records: none is half written */
		conn->txq_bytes -= rma->tx.len - rma->tx.done;
		p4u_list_remove(&rma->tx.ev.node);
	}
	p4t_shm_rma_free(conn->iface, rma);
	if (p4u_list_empty(&conn->txq))
		p4u_list_remove(&conn->backlog);
}

/* Unexposed while a peer's pull streams from it or its push fills it:
 * what is left is refused. */
void p4t_shm_stream_cut(struct p4t_shm_rma *rma, int status)
{
	struct p4t_shm_conn *conn = rma->conn;
	struct p4t_shm_ctl done = {
		.id = rma->id,
		.status = status,
		.flags = rma->coop ? P4T_SHM_CTL_COOP : 0,
	};
	uint16_t type = rma->kind == P4T_SHM_RMA_FILL ? P4T_SHM_F_PUSH_DONE :
			P4T_SHM_F_PULL_DONE;
	bool coop = rma->coop;

	p4t_shm_stream_drop(rma);
	if (p4t_shm_conn_live(conn) &&
	    p4t_shm_ctl_send(conn, type, &done, NULL, 0))
		p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_ENOMEM);
	/* not drained here: the caller walks the exposure's streams */
	if (coop)
		p4t_shm_coop_next(conn, false);
}

/* ---- posting --------------------------------------------------------------------------- */

/*
 * What every pull and push does first: check the arguments, make the rma
 * (*rma_p) and check its range and link. < 0: refused, nothing made; 1:
 * completed here (its error event posted); 0: the caller goes on.
 */
static int p4t_shm_rma_post(struct p4t_conn *conn_, enum p4t_shm_rma_kind kind,
			    const struct iovec *local, size_t iovcnt,
			    size_t len, const struct p4w_cookie *remote,
			    uint64_t remote_off, void *op_ctx,
			    struct p4t_shm_rma **rma_p)
{
	struct p4t_shm_conn *conn = p4t_shm_conn_of(conn_);
	struct p4t_shm_rma *rma;
	size_t local_len;
	int status;

	if (!conn_ || !remote || iovcnt > P4T_SHM_MAX_IOV ||
	    p4u_iov_len(local, iovcnt, &local_len) || local_len < len)
		return -FI_EINVAL;
	rma = p4t_shm_rma_alloc(conn, kind, local, iovcnt);
	if (!rma)
		return -FI_EAGAIN;
	rma->op_ctx = op_ctx;
	rma->len = len;
	rma->remote = *remote;
	rma->remote_off = remote_off;
	*rma_p = rma;
	if (rma->remote_off > rma->remote.length ||
	    rma->len > rma->remote.length - rma->remote_off)
		status = -FI_EINVAL;
	else if (!p4t_shm_conn_live(conn))
		status = -FI_ECONNABORTED;
	else {
		p4u_list_insert_tail(&conn->rmas, &rma->link);
		return 0;
	}
	rma->ev.status = status;
	p4t_shm_ev_post_conn(conn, &rma->ev);
	return 1;
}

static int p4t_shm_pull_ask(struct p4t_shm_rma *rma)
{
	struct p4t_shm_conn *conn = rma->conn;
	struct p4t_shm_ctl req = {
		.id = p4t_shm_rma_id(rma),
		.key = rma->remote.key,
		.off = rma->remote_off,
		.len = rma->len,
		.flags = rma->ring ? P4T_SHM_CTL_RING : 0,
	};

	return p4t_shm_ctl_send(conn, P4T_SHM_F_PULL_REQ, &req, NULL, 0);
}

int p4t_shm_pull(struct p4t_iface *iface_, struct p4t_conn *conn_,
		 const struct p4w_cookie *remote, uint64_t remote_off,
		 const struct iovec *local, size_t iovcnt, size_t len,
		 void *op_ctx)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_conn *conn = p4t_shm_conn_of(conn_);
	struct p4t_shm_rma *rma;
	int ret;

	ret = p4t_shm_rma_post(conn_, P4T_SHM_RMA_PULL, local, iovcnt, len,
			       remote, remote_off, op_ctx, &rma);
	if (ret < 0)
		return ret;
	iface->stats.pulls++;
	if (ret)
		return 0;
	rma->ring = !conn->cma;
	ret = p4t_shm_pull_ask(rma);
	if (ret)
		p4t_shm_rma_free(iface, rma);
	return ret;
}

int p4t_shm_push(struct p4t_iface *iface_, struct p4t_conn *conn_,
		 const struct iovec *local, size_t iovcnt, size_t len,
		 const struct p4w_cookie *remote, uint64_t remote_off,
		 void *op_ctx)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_conn *conn = p4t_shm_conn_of(conn_);
	struct p4t_shm_piece *pieces;
	struct iovec *sl;
	struct p4t_shm_rma *rma;
	struct p4t_shm_ctl req;
	size_t i, n;
	int ret;

	ret = p4t_shm_rma_post(conn_, P4T_SHM_RMA_PUSH, local, iovcnt, len,
			       remote, remote_off, op_ctx, &rma);
	if (ret < 0)
		return ret;
	iface->stats.pushes++;
	if (ret)
		return 0;
	if (!conn->peer_reads || !iface->cma) {
		p4t_shm_rma_stream(rma, true);
		return 0;
	}
	/* the owner reads our pieces itself once it checked its exposure */
	sl = malloc((iovcnt ? iovcnt : 1) * (sizeof(*sl) + sizeof(*pieces)));
	if (!sl) {
		p4t_shm_rma_free(iface, rma);
		return -FI_ENOMEM;
	}
	pieces = (struct p4t_shm_piece *)(sl + (iovcnt ? iovcnt : 1));
	n = p4t_shm_iov_slice(local, iovcnt, 0, len, sl, iovcnt);
	for (i = 0; i < n; i++) {
		pieces[i].addr = (uint64_t)(uintptr_t)sl[i].iov_base;
		pieces[i].len = sl[i].iov_len;
	}
	memset(&req, 0, sizeof(req));
	req.id = p4t_shm_rma_id(rma);
	req.key = remote->key;
	req.off = remote_off;
	req.len = len;
	req.niov = (uint32_t)n;
	ret = p4t_shm_ctl_send(conn, P4T_SHM_F_PUSH_REQ, &req, pieces,
			       n * sizeof(*pieces));
	free(sl);
	if (ret)
		p4t_shm_rma_free(iface, rma);
	return ret;
}

/* ---- frames from the peer ------------------------------------------------------------- */

/* Our pull or push named by id, or NULL. */
static struct p4t_shm_rma *p4t_shm_rma_find(struct p4t_shm_conn *conn,
					    uint64_t id,
					    enum p4t_shm_rma_kind kind)
{
	struct p4t_shm_rma *rma = p4u_pool_lookup(&conn->iface->rmas, id);

	if (!rma || rma->kind != kind || rma->conn != conn ||
	    !p4u_list_node_linked(&rma->link))
		return NULL;
	return rma;
}

/* The peer's pieces after ctl, as iovecs (a fresh array), or NULL. */
static struct iovec *p4t_shm_pieces(const struct p4t_shm_ctl *ctl,
				    const uint8_t *more, size_t more_len,
				    uint64_t want)
{
	struct p4t_shm_piece p;
	struct iovec *iov;
	uint64_t sum = 0;
	uint32_t i;

	if (ctl->niov > P4T_SHM_MAX_IOV ||
	    more_len != (size_t)ctl->niov * sizeof(p))
		return NULL;
	iov = malloc((ctl->niov ? ctl->niov : 1) * sizeof(*iov));
	if (!iov)
		return NULL;
	for (i = 0; i < ctl->niov; i++) {
		memcpy(&p, more + i * sizeof(p), sizeof(p));
		if (p.len > want - sum) {
			free(iov);
			return NULL;
		}
		sum += p.len;
		iov[i].iov_base = (void *)(uintptr_t)p.addr;
		iov[i].iov_len = p.len;
	}
	if (sum != want) {
		free(iov);
		return NULL;
	}
	return iov;
}

static int p4t_shm_rx_pull_req(struct p4t_shm_conn *conn,
			       const struct p4t_shm_ctl *req)
{
	struct p4t_shm_iface *iface = conn->iface;
	struct p4t_shm_ctl ans = { .id = req->id };
	struct p4t_shm_piece *pieces;
	struct p4t_shm_mem *mem;
	struct p4t_shm_rma *rma;
	struct iovec *sl;
	size_t i, n;
	int ret;

	ans.status = p4t_shm_mem_lookup(conn, req->key, req->off, req->len,
					P4T_ACCESS_READ, &mem);
	if (ans.status)
		return p4t_shm_ctl_send(conn, P4T_SHM_F_PULL_DONE, &ans,
					NULL, 0);
	if (!(req->flags & P4T_SHM_CTL_RING) && iface->cma &&
	    conn->peer_reads) {
		/* the checked pieces; the puller reads them itself */
		sl = malloc((mem->iovcnt ? mem->iovcnt : 1) *
			    (sizeof(*sl) + sizeof(*pieces)));
		if (!sl)
			return -FI_ENOMEM;
		pieces = (struct p4t_shm_piece *)(sl + (mem->iovcnt ?
							mem->iovcnt : 1));
		n = p4t_shm_iov_slice(mem->iov, mem->iovcnt, req->off,
				      req->len, sl, mem->iovcnt);
		for (i = 0; i < n; i++) {
			pieces[i].addr = (uint64_t)(uintptr_t)sl[i].iov_base;
			pieces[i].len = sl[i].iov_len;
		}
		ans.niov = (uint32_t)n;
		ans.len = req->len;
		/* and the ring from the front while we progress */
		rma = p4t_shm_coop_offer(conn, req, mem);
		ans.flags = rma ? P4T_SHM_CTL_COOP : 0;
		ret = p4t_shm_ctl_send(conn, P4T_SHM_F_PULL_GRANT, &ans,
				       pieces, n * sizeof(*pieces));
		free(sl);
		if (rma && ret)
			p4t_shm_stream_drop(rma);
		else if (rma)
			p4t_shm_coop_next(conn, true);
		return ret;
	}
	rma = p4t_shm_rma_alloc(conn, P4T_SHM_RMA_STREAM, NULL, 0);
	if (!rma) {
		ans.status = -FI_ENOMEM;
		return p4t_shm_ctl_send(conn, P4T_SHM_F_PULL_DONE, &ans,
					NULL, 0);
	}
	rma->id = req->id;
	rma->len = req->len;
	rma->mem = mem;
	rma->mem_off = req->off;
	p4u_list_insert_tail(&mem->streams, &rma->link);
	p4t_shm_rma_stream(rma, true);
	return 0;
}

/*
 * Read the next step of a granted pull; true once it is over (completed,
 * failed, or handed to the ring because the kernel refused attaching).
 */
static bool p4t_shm_pull_step(struct p4t_shm_rma *rma, size_t step)
{
	struct p4t_shm_conn *conn = rma->conn;
	size_t n = P4U_MIN(step, rma->len - rma->pos);
	int ret;

	ret = p4t_shm_cma_read(conn, rma->iov, rma->iovcnt, rma->pos,
			       rma->granted, rma->ngranted, rma->pos, n);
	if (p4t_shm_cma_refused(ret)) {
		p4t_shm_cma_forget(rma);
		p4t_shm_cma_off(conn);
		rma->ring = true;
		if (p4t_shm_pull_ask(rma))
			p4t_shm_rma_complete(rma, -FI_ENOMEM);
		return true;
	}
	if (ret) {
		p4t_shm_rma_complete(rma, p4t_shm_cma_fail_status(ret));
		return true;
	}
	rma->pos += n;
	if (rma->pos < rma->len)
		return false;
	p4t_shm_rma_complete(rma, 0);
	return true;
}

/*
 * Read the next step of the peer's push into our exposure. 1: more to
 * read; 0: over, freed, PUSH_DONE sent (its status: done, "use the ring"
 * when the kernel refused, or the error); < 0: PUSH_DONE could not be
 * sent (the link must fail).
 */
static int p4t_shm_fill_step(struct p4t_shm_rma *rma, size_t step)
{
	struct p4t_shm_conn *conn = rma->conn;
	struct p4t_shm_mem *mem = rma->mem;
	struct p4t_shm_ctl ans = { .id = rma->id };
	size_t n = P4U_MIN(step, rma->len - rma->pos);
	int ret;

	ret = p4t_shm_cma_read(conn, mem->iov, mem->iovcnt,
			       rma->mem_off + rma->pos, rma->granted,
			       rma->ngranted, rma->pos, n);
	if (!ret) {
		rma->pos += n;
		if (rma->pos < rma->len)
			return 1;
	}
	ans.status = p4t_shm_fill_status(conn, ret);
	p4t_shm_rma_free(conn->iface, rma);
	return p4t_shm_ctl_send(conn, P4T_SHM_F_PUSH_DONE, &ans, NULL, 0);
}

/* rma (a granted pull, or a fill) is read by p4t_shm_cma_run from now. */
void p4t_shm_cma_queue(struct p4t_shm_rma *rma)
{
	struct p4t_shm_iface *iface = rma->conn->iface;

	/* the gap p4t_shm_cma_run measures starts here, not at its last
	 * call, which may be long ago */
	if (p4u_list_empty(&iface->cma_reads))
		iface->cma_last_ns = p4u_time_ns();
	p4u_list_insert_tail(&iface->cma_reads, &rma->cma_node);
}

/*
 * One step of every pull and fill being read (p4t_shm_progress); the
 * count of steps. A step may fail a link, which frees that link's fills:
 * the list is walked from its head, each entry moved to the tail and
 * marked with this round's generation before its step. Pulls read from
 * both ends share one step a call: P4T_SHM_COOP_STEP while the ring
 * brings their chunks (a chunk or a grant came within the last
 * P4T_SHM_COOP_PATIENCE calls), else P4T_SHM_CMA_STEP: the ring is the
 * faster copy, and a long read here would leave it full and its writer
 * waiting (a 256 KiB pull read whole at once, just after its grant,
 * took longer than by cross-memory attach alone).
 *
 * Unless this process was kept from progressing: after more than
 * P4T_SHM_CMA_STARVED_NS since the last call ended, each read takes up to
 * P4T_SHM_CMA_STARVED_STEP. With more processes than cores, a process
 * runs once per scheduler round (milliseconds: its peer, blocked in a
 * send that waits for this pull, spins through its time slice), and at
 * one step per round a 16 MiB message took hundreds of milliseconds.
 */
int p4t_shm_cma_run(struct p4t_shm_iface *iface)
{
	uint64_t now = p4u_time_ns();
	bool starved = now - iface->cma_last_ns > iface->cma_starved_ns;
	size_t step = starved ? P4T_SHM_CMA_STARVED_STEP : P4T_SHM_CMA_STEP;
	size_t coop_left = starved ? SIZE_MAX :
			   iface->coop_quiet < P4T_SHM_COOP_PATIENCE ?
			   P4T_SHM_COOP_STEP : P4T_SHM_CMA_STEP;
	struct p4t_shm_rma *rma;
	int done = 0;

	if (starved)
		iface->stats.cma_starved++;
	if (iface->coop_quiet < P4T_SHM_COOP_PATIENCE)
		iface->coop_quiet++;
	iface->cma_gen++;
	while (!p4u_list_empty(&iface->cma_reads)) {
		rma = container_of(iface->cma_reads.next, struct p4t_shm_rma,
				   cma_node);
		if (rma->cma_gen == iface->cma_gen)
			break;		/* every one had its step */
		rma->cma_gen = iface->cma_gen;
		p4u_list_remove(&rma->cma_node);
		p4u_list_insert_tail(&iface->cma_reads, &rma->cma_node);
		if (rma->coop && !coop_left)
			continue;
		done++;
		if (rma->coop) {
			/* reads at most what it is given */
			coop_left -= p4t_shm_coop_step(rma, P4U_MIN(coop_left,
								    step));
		} else if (rma->kind == P4T_SHM_RMA_PULL) {
			(void)p4t_shm_pull_step(rma, step);
		} else if (p4t_shm_fill_step(rma, step) < 0) {
			p4t_shm_conn_step(rma->conn, P4T_SHM_IN_FAIL,
					  -FI_ENOMEM);
		}
	}
	/* the pause is counted from here: a long step of this call is not
	 * one (or one starved step would make every later one starved) */
	iface->cma_last_ns = p4u_time_ns();
	return done;
}

static int p4t_shm_rx_grant(struct p4t_shm_conn *conn,
			    const struct p4t_shm_ctl *ans, const uint8_t *more,
			    size_t more_len)
{
	struct p4t_shm_rma *rma = p4t_shm_rma_find(conn, ans->id,
						   P4T_SHM_RMA_PULL);
	struct iovec *remote;

	if (!rma || ans->len != rma->len || rma->granted)
		return -FI_EPROTO;
	remote = p4t_shm_pieces(ans, more, more_len, rma->len);
	if (!remote)
		return -FI_EPROTO;
	rma->granted = remote;
	rma->ngranted = ans->niov;
	rma->pos = 0;
	if (ans->flags & P4T_SHM_CTL_COOP) {
		/* the owner's first chunks are behind the grant: read them
		 * before attaching */
		p4t_shm_coop_granted(rma);
		return 0;
	}
	/* the first step at once: most pulls are one step */
	if (!p4t_shm_pull_step(rma, P4T_SHM_CMA_STEP))
		p4t_shm_cma_queue(rma);
	return 0;
}

static int p4t_shm_rx_pull_data(struct p4t_shm_conn *conn, uint16_t type,
				const struct p4t_shm_ctl *ctl,
				const uint8_t *data, size_t n)
{
	struct p4t_shm_rma *rma = p4t_shm_rma_find(conn, ctl->id,
						   P4T_SHM_RMA_PULL);

	if (!rma || rma->coop || (ctl->flags & P4T_SHM_CTL_COOP))
		return p4t_shm_coop_data(conn, rma, type, ctl, data, n);
	if (type == P4T_SHM_F_PULL_DONE) {
		p4t_shm_rma_complete(rma, ctl->status > 0 ? -FI_EIO :
					  ctl->status);
		return 0;
	}
	if (ctl->len != n || ctl->off > rma->len || n > rma->len - ctl->off)
		return -FI_EPROTO;
	p4t_shm_iov_put(rma->iov, rma->iovcnt, ctl->off, data, n);
	conn->iface->stats.ring_rma_bytes += n;
	if (ctl->flags & P4T_SHM_CTL_LAST)
		p4t_shm_rma_complete(rma, 0);
	return 0;
}

static int p4t_shm_rx_push_req(struct p4t_shm_conn *conn,
			       const struct p4t_shm_ctl *req,
			       const uint8_t *more, size_t more_len)
{
	struct p4t_shm_ctl ans = { .id = req->id };
	struct p4t_shm_mem *mem;
	struct p4t_shm_rma *rma;
	struct iovec *remote;
	int ret;

	remote = p4t_shm_pieces(req, more, more_len, req->len);
	if (!remote)
		return -FI_EPROTO;
	ans.status = p4t_shm_mem_lookup(conn, req->key, req->off, req->len,
					P4T_ACCESS_WRITE, &mem);
	if (!ans.status && !conn->cma) {
		ans.status = P4T_SHM_ST_RING;
	} else if (!ans.status &&
		   (rma = p4t_shm_rma_alloc(conn, P4T_SHM_RMA_FILL, NULL, 0))) {
		/* read by steps; unexposing refuses the rest */
		rma->id = req->id;
		rma->len = req->len;
		rma->pos = 0;
		rma->mem = mem;
		rma->mem_off = req->off;
		rma->granted = remote;
		rma->ngranted = req->niov;
		p4u_list_insert_tail(&mem->streams, &rma->link);
		ret = p4t_shm_fill_step(rma, P4T_SHM_CMA_STEP);
		if (ret > 0)
			p4t_shm_cma_queue(rma);
		return ret < 0 ? ret : 0;
	} else if (!ans.status) {
		/* no rma left: all of it now */
		ret = p4t_shm_cma_read(conn, mem->iov, mem->iovcnt, req->off,
				       remote, req->niov, 0, req->len);
		ans.status = p4t_shm_fill_status(conn, ret);
	}
	free(remote);
	return p4t_shm_ctl_send(conn, P4T_SHM_F_PUSH_DONE, &ans, NULL, 0);
}

static int p4t_shm_rx_push_done(struct p4t_shm_conn *conn,
				const struct p4t_shm_ctl *ans)
{
	struct p4t_shm_rma *rma = p4t_shm_rma_find(conn, ans->id,
						   P4T_SHM_RMA_PUSH);

	if (!rma || rma->in_txq)
		return -FI_EPROTO;
	if (ans->status == P4T_SHM_ST_RING && !rma->ring) {
		conn->peer_reads = false;
		p4t_shm_rma_stream(rma, true);
		return 0;
	}
	p4t_shm_rma_complete(rma, ans->status > 0 ? -FI_EIO : ans->status);
	return 0;
}

/* Ring-mode push data: each chunk checked against the exposure. */
static int p4t_shm_rx_push_data(struct p4t_shm_conn *conn,
				const struct p4t_shm_ctl *ctl,
				const uint8_t *data, size_t n)
{
	struct p4t_shm_ctl ans = { .id = ctl->id };
	struct p4t_shm_mem *mem;
	int ret;

	if (ctl->len != n)
		return -FI_EPROTO;
	if (ctl->flags & P4T_SHM_CTL_FIRST) {
		conn->push_id = ctl->id;
		conn->push_status = 0;
	} else if (conn->push_id != ctl->id) {
		return -FI_EPROTO;
	}
	if (!conn->push_status) {
		ret = p4t_shm_mem_lookup(conn, ctl->key, ctl->off, n,
					 P4T_ACCESS_WRITE, &mem);
		if (ret)
			conn->push_status = ret;
		else
			p4t_shm_iov_put(mem->iov, mem->iovcnt, ctl->off, data,
					n);
		conn->iface->stats.ring_rma_bytes += ret ? 0 : n;
	}
	if (!(ctl->flags & P4T_SHM_CTL_LAST))
		return 0;
	ans.status = conn->push_status;
	conn->push_id = 0;
	return p4t_shm_ctl_send(conn, P4T_SHM_F_PUSH_DONE, &ans, NULL, 0);
}

/* An RMA frame from the peer: 0, or < 0 when it is malformed. */
int p4t_shm_rma_frame(struct p4t_shm_conn *conn, uint16_t type,
		      const uint8_t *body, size_t len)
{
	struct p4t_shm_ctl ctl;
	const uint8_t *more = body + sizeof(ctl);
	size_t more_len = len - sizeof(ctl);

	if (len < sizeof(ctl))
		return -FI_EPROTO;
	memcpy(&ctl, body, sizeof(ctl));
	switch (type) {
	case P4T_SHM_F_PULL_REQ:
		return p4t_shm_rx_pull_req(conn, &ctl);
	case P4T_SHM_F_PULL_GRANT:
		return p4t_shm_rx_grant(conn, &ctl, more, more_len);
	case P4T_SHM_F_PULL_DATA:
	case P4T_SHM_F_PULL_DONE:
		return p4t_shm_rx_pull_data(conn, type, &ctl, more, more_len);
	case P4T_SHM_F_PUSH_REQ:
		return p4t_shm_rx_push_req(conn, &ctl, more, more_len);
	case P4T_SHM_F_PUSH_DATA:
		return p4t_shm_rx_push_data(conn, &ctl, more, more_len);
	case P4T_SHM_F_PUSH_DONE:
		return p4t_shm_rx_push_done(conn, &ctl);
	case P4T_SHM_F_PULL_STOP:
		return p4t_shm_coop_stop(conn, &ctl);
	default:
		return -FI_EPROTO;
	}
}
