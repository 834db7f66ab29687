/*
 * p4t_verbs_data.c - the verbs transport's data path (behaviour:
 * p4t_verbs.h): registered send and receive buffers, the shared receive
 * queue and its reposting, sends (inline or copied), RDMA READ / WRITE for
 * pull and push with registration for the time of a transfer, exposures,
 * work queued until a QP can take it, and the completion queue.
 *
 * Not here: devices, links, bootstrap, failure and progress
 * (p4t_verbs.c).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "p4t_verbs_priv.h"
#include "p4u_compiler.h"
#include "p4u_log.h"

/* ---- buffers ---------------------------------------------------------- */

int p4t_verbs_data_init(struct p4t_verbs_iface *iface)
{
	size_t i;

	iface->recv_mem = aligned_alloc(4096, P4T_VERBS_RECV_BUFS *
					P4T_VERBS_BUF_SIZE);
	iface->send_mem = aligned_alloc(4096, P4T_VERBS_SEND_BUFS *
					P4T_VERBS_BUF_SIZE);
	iface->recv_free = calloc(P4T_VERBS_RECV_BUFS,
				  sizeof(*iface->recv_free));
	iface->wrs = calloc(P4T_VERBS_WRS, sizeof(*iface->wrs));
	if (!iface->recv_mem || !iface->send_mem || !iface->recv_free ||
	    !iface->wrs)
		return -FI_ENOMEM;
	iface->recv_mr = ibv_reg_mr(iface->pd, iface->recv_mem,
				    P4T_VERBS_RECV_BUFS * P4T_VERBS_BUF_SIZE,
				    IBV_ACCESS_LOCAL_WRITE);
	iface->send_mr = ibv_reg_mr(iface->pd, iface->send_mem,
				    P4T_VERBS_SEND_BUFS * P4T_VERBS_BUF_SIZE, 0);
	if (!iface->recv_mr || !iface->send_mr) {
		p4u_warn(P4U_LOG_TRANSPORT, "verbs: buffer registration "
			 "failed: %s", strerror(errno));
		return -FI_ENOMEM;
	}
	for (i = 0; i < P4T_VERBS_RECV_BUFS; i++)
		iface->recv_free[i] = (uint32_t)i;
	iface->recv_nfree = P4T_VERBS_RECV_BUFS;
	for (i = 0; i < P4T_VERBS_SEND_BUFS; i++)
		iface->send_free[i] = (int)i;
	iface->send_nfree = P4T_VERBS_SEND_BUFS;
	/* free list of WR slots through next_free (index + 1, 0 ends) */
	for (i = 0; i < P4T_VERBS_WRS; i++)
		iface->wrs[i].next_free = i + 1 < P4T_VERBS_WRS ?
					  (uint32_t)(i + 2) : 0;
	iface->wr_free = 1;
	return 0;
}

void p4t_verbs_data_fini(struct p4t_verbs_iface *iface)
{
	if (iface->recv_mr)
		ibv_dereg_mr(iface->recv_mr);
	if (iface->send_mr)
		ibv_dereg_mr(iface->send_mr);
	free(iface->recv_mem);
	free(iface->send_mem);
	free(iface->recv_free);
	free(iface->wrs);
}

/* Post the free receive buffers: all, or only once a batch is due. */
int p4t_verbs_recv_repost(struct p4t_verbs_iface *iface, bool all)
{
	struct ibv_recv_wr wr[P4T_VERBS_REPOST_BATCH], *bad;
	struct ibv_sge sge[P4T_VERBS_REPOST_BATCH];
	size_t n, i;
	uint32_t idx;
	int posted = 0, ret;

	if (!all && iface->recv_nfree < P4T_VERBS_REPOST_BATCH)
		return 0;
	while (iface->recv_nfree) {
		n = P4U_MIN(iface->recv_nfree, (size_t)P4T_VERBS_REPOST_BATCH);
		for (i = 0; i < n; i++) {
			idx = iface->recv_free[iface->recv_nfree - 1 - i];
			sge[i].addr = (uintptr_t)(iface->recv_mem +
						  idx * P4T_VERBS_BUF_SIZE);
			sge[i].length = P4T_VERBS_BUF_SIZE;
			sge[i].lkey = iface->recv_mr->lkey;
			wr[i].wr_id = P4T_VERBS_RECV_TAG | idx;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		}
		ret = ibv_post_srq_recv(iface->srq, wr, &bad);
		iface->stats.srq_reposts++;
		if (ret) {
			p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: srq post "
					"failed: %s", strerror(ret));
			/* what went in before bad is posted */
			for (i = 0; &wr[i] != bad && i < n; i++)
				iface->recv_nfree--;
			return -FI_EIO;
		}
		iface->recv_nfree -= n;
		posted += (int)n;
	}
	return posted;
}

/* ---- work request slots ------------------------------------------------ */

static struct p4t_verbs_wr *p4t_verbs_wr_alloc(struct p4t_verbs_iface *iface,
					       struct p4t_verbs_conn *conn)
{
	struct p4t_verbs_wr *wr;

	if (!iface->wr_free || conn->sq_posted >= P4T_VERBS_QP_WR)
		return NULL;
	wr = &iface->wrs[iface->wr_free - 1];
	iface->wr_free = wr->next_free;
	memset(wr, 0, offsetof(struct p4t_verbs_wr, next_free));
	wr->conn = conn;
	wr->sendbuf = -1;
	return wr;
}

static void p4t_verbs_wr_free(struct p4t_verbs_iface *iface,
			      struct p4t_verbs_wr *wr)
{
	size_t i;

	for (i = 0; i < wr->nmr; i++)
		ibv_dereg_mr(wr->mr[i]);
	for (i = 0; i < wr->nreg; i++)
		p4t_verbs_mr_put(wr->reg[i]);
	free(wr->bounce);
	if (wr->sendbuf >= 0)
		iface->send_free[iface->send_nfree++] = wr->sendbuf;
	wr->kind = P4T_VERBS_WR_FREE;
	wr->bounce = NULL;
	wr->nmr = 0;
	wr->nreg = 0;
	wr->next_free = iface->wr_free;
	iface->wr_free = (uint32_t)(wr - iface->wrs) + 1;
}

static int p4t_verbs_wr_post(struct p4t_verbs_iface *iface,
			     struct p4t_verbs_wr *wr, struct ibv_send_wr *swr)
{
	struct ibv_send_wr *bad;
	int ret;

	swr->wr_id = (uint64_t)(wr - iface->wrs) + 1;
	swr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(wr->conn->qp, swr, &bad);
	if (ret) {
		/* the send queue is full (ENOMEM) or the QP is in error */
		p4t_verbs_wr_free(iface, wr);
		return ret == ENOMEM ? -FI_EAGAIN : -FI_EIO;
	}
	wr->conn->sq_posted++;
	iface->wrs_posted++;
	return 0;
}

/* ---- sends ------------------------------------------------------------- */

static size_t p4t_verbs_iov_len(const struct iovec *iov, size_t iovcnt)
{
	size_t len = 0, i;

	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	return len;
}

/* Post hdr + iov as one SEND; -FI_EAGAIN when a resource is short. */
static int p4t_verbs_post_send(struct p4t_verbs_conn *conn, const void *hdr,
			       size_t hdr_len, const struct iovec *iov,
			       size_t iovcnt, size_t total)
{
	struct p4t_verbs_iface *iface = conn->iface;
	struct ibv_sge sge[P4T_VERBS_MAX_SGE];
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND, .sg_list = sge };
	struct p4t_verbs_wr *wr;
	uint8_t *buf;
	size_t i, off;
	int ret;

	wr = p4t_verbs_wr_alloc(iface, conn);
	if (!wr)
		return -FI_EAGAIN;
	wr->kind = P4T_VERBS_WR_SEND;
	if (total <= iface->max_inline && iovcnt + 1 <= iface->max_sge) {
		/* inline: the device copies at post time */
		sge[0] = (struct ibv_sge){ (uintptr_t)hdr, (uint32_t)hdr_len, 0 };
		swr.num_sge = 1;
		for (i = 0; i < iovcnt; i++)
			if (iov[i].iov_len)
				sge[swr.num_sge++] = (struct ibv_sge){
					(uintptr_t)iov[i].iov_base,
					(uint32_t)iov[i].iov_len, 0 };
		swr.send_flags = IBV_SEND_INLINE;
		iface->stats.inline_sent++;
	} else {
		if (!iface->send_nfree) {
			p4t_verbs_wr_free(iface, wr);
			return -FI_EAGAIN;
		}
		wr->sendbuf = iface->send_free[--iface->send_nfree];
		buf = iface->send_mem + (size_t)wr->sendbuf * P4T_VERBS_BUF_SIZE;
		memcpy(buf, hdr, hdr_len);
		off = hdr_len;
		for (i = 0; i < iovcnt; i++) {
			memcpy(buf + off, iov[i].iov_base, iov[i].iov_len);
			off += iov[i].iov_len;
		}
		sge[0] = (struct ibv_sge){ (uintptr_t)buf, (uint32_t)total,
					   iface->send_mr->lkey };
		swr.num_sge = 1;
	}
	ret = p4t_verbs_wr_post(iface, wr, &swr);
	if (!ret) {
		iface->stats.msgs_sent++;
		iface->stats.bytes_sent += total;
	}
	return ret;
}

static struct p4t_verbs_pend *p4t_verbs_pend_alloc(size_t data)
{
	struct p4t_verbs_pend *pend = calloc(1, sizeof(*pend) + data);

	if (pend)
		p4u_list_node_init(&pend->link);
	return pend;
}

static int p4t_verbs_send_queue(struct p4t_verbs_conn *conn, const void *hdr,
				size_t hdr_len, const struct iovec *iov,
				size_t iovcnt, size_t total, unsigned flags)
{
	struct p4t_verbs_iface *iface = conn->iface;
	struct p4t_verbs_pend *pend;
	size_t i, off;

	/* requests may be refused (the engine holds and resends them);
	 * responses and control messages never are */
	if (iface->pending_bytes > P4T_VERBS_QUEUE_LIMIT &&
	    (flags & P4T_SEND_SEQ)) {
		iface->stats.eagain++;
		return -FI_EAGAIN;
	}
	pend = p4t_verbs_pend_alloc(total);
	if (!pend)
		return -FI_ENOMEM;
	pend->kind = P4T_VERBS_PEND_SEND;
	pend->len = total;
	memcpy(pend->data, hdr, hdr_len);
	off = hdr_len;
	for (i = 0; i < iovcnt; i++) {
		memcpy(pend->data + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	p4u_list_insert_tail(&conn->pending, &pend->link);
	iface->pending_bytes += total;
	iface->stats.queued++;
	return P4T_DONE;
}

int p4t_verbs_send(struct p4t_iface *iface_, struct p4t_conn *conn_,
		   const void *hdr, size_t hdr_len, const struct iovec *iov,
		   size_t iovcnt, void *op_ctx, unsigned flags)
{
	struct p4t_verbs_iface *iface = p4t_verbs_iface_of(iface_);
	struct p4t_verbs_conn *conn = (struct p4t_verbs_conn *)conn_;
	size_t total;
	int ret;

	/* nothing is layered on verbs (it is layered on tcp) */
	if (flags & P4T_SEND_XPORT)
		return -FI_EINVAL;
	if (conn->state == P4T_VERBS_CONN_SELF)
		return p4t_send(iface->tcp, conn->tcp, hdr, hdr_len, iov,
				iovcnt, op_ctx, flags);
	if (hdr_len < 2)
		return -FI_EINVAL;
	total = hdr_len + p4t_verbs_iov_len(iov, iovcnt);
	if (total > P4T_VERBS_BUF_SIZE)
		return -FI_EMSGSIZE;
	if (conn->state == P4T_VERBS_CONN_FAILING)
		return P4T_DONE;	/* dropped: the link's failure is due */
	if (conn->state == P4T_VERBS_CONN_UP && p4u_list_empty(&conn->pending)) {
		ret = p4t_verbs_post_send(conn, hdr, hdr_len, iov, iovcnt,
					  total);
		if (ret != -FI_EAGAIN)
			return ret ? ret : P4T_DONE;
	}
	return p4t_verbs_send_queue(conn, hdr, hdr_len, iov, iovcnt, total,
				    flags);
}

/* ---- RDMA READ / WRITE ------------------------------------------------- */

/* Trim local to exactly len bytes of non-empty pieces; count or < 0. */
static int p4t_verbs_iov_trim(const struct iovec *local, size_t iovcnt,
			      size_t len, struct iovec *out, size_t max)
{
	size_t i, n = 0, left = len, take;

	for (i = 0; i < iovcnt && left; i++) {
		take = P4U_MIN(left, local[i].iov_len);
		if (!take)
			continue;
		if (n == max)
			return -FI_EINVAL;
		out[n].iov_base = local[i].iov_base;
		out[n++].iov_len = take;
		left -= take;
	}
	return left ? -FI_EINVAL : (int)n;	/* local shorter than len */
}

/*
 * Register the pieces of [off, off + clen) of iov into wr and sge: a piece
 * inside an application MR uses its registration, any other is
 * registered for the time of the transfer.
 */
static int p4t_verbs_chunk_reg(struct p4t_verbs_iface *iface,
			       struct p4t_verbs_wr *wr, const struct iovec *iov,
			       size_t n, size_t off, size_t clen, int access,
			       struct ibv_sge *sge)
{
	size_t i, skip = off, take, nsge = 0;
	struct p4t_verbs_reg *reg;
	uint8_t *base;

	for (i = 0; i < n && clen; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		base = (uint8_t *)iov[i].iov_base + skip;
		take = P4U_MIN(clen, iov[i].iov_len - skip);
		skip = 0;
		sge[nsge].addr = (uintptr_t)base;
		sge[nsge].length = (uint32_t)take;
		reg = p4t_verbs_mr_find(iface, base, take, access);
		if (reg) {
			iface->stats.app_mr_hits++;
			wr->reg[wr->nreg++] = reg;
			sge[nsge++].lkey = reg->mr->lkey;
		} else {
			wr->mr[wr->nmr] = ibv_reg_mr(iface->pd, base, take,
						     access);
			iface->stats.regs++;
			if (!wr->mr[wr->nmr])
				return -FI_EFAULT;
			sge[nsge++].lkey = wr->mr[wr->nmr++]->lkey;
		}
		clen -= take;
	}
	return (int)nsge;
}

/*
 * Post one pull (READ) or push (WRITE) as one or more work requests of
 * at most max_rma bytes, chained in one post; only the last makes the
 * rma_done upcall (an RC send queue completes in order). -FI_EAGAIN: no
 * room yet.
 */
static int p4t_verbs_post_rma(struct p4t_verbs_conn *conn, bool read,
			      const struct p4w_cookie *remote,
			      uint64_t remote_off, const struct iovec *local,
			      size_t iovcnt, size_t len, void *op_ctx)
{
	struct p4t_verbs_iface *iface = conn->iface;
	int access = read ? IBV_ACCESS_LOCAL_WRITE : 0;
	size_t nchunks = len ? (len + iface->max_rma - 1) / iface->max_rma : 1;
	struct ibv_sge sge[P4T_VERBS_QP_WR][P4T_VERBS_MAX_SGE];
	struct ibv_send_wr swr[P4T_VERBS_QP_WR], *bad;
	struct p4t_verbs_wr *wrs[P4T_VERBS_QP_WR], *last;
	struct iovec iov[P4T_VERBS_MAX_SGE * 4], bounce_iov;
	const struct iovec *src;
	size_t c, off, clen, nsrc, i;
	int n, ret;

	n = p4t_verbs_iov_trim(local, iovcnt, len, iov, P4U_ARRAY_SIZE(iov));
	if (n < 0)
		return n;
	if (nchunks > P4T_VERBS_QP_WR)
		return -FI_EMSGSIZE;
	if (conn->sq_posted + nchunks > P4T_VERBS_QP_WR ||
	    iface->wrs_posted + nchunks > P4T_VERBS_WRS)
		return -FI_EAGAIN;
	memset(wrs, 0, sizeof(wrs));
	for (c = 0; c < nchunks; c++) {
		wrs[c] = p4t_verbs_wr_alloc(iface, conn);
		if (!wrs[c]) {
			ret = -FI_EAGAIN;
			goto err_free;
		}
		wrs[c]->kind = P4T_VERBS_WR_PART;
	}
	last = wrs[nchunks - 1];
	last->kind = read ? P4T_VERBS_WR_READ : P4T_VERBS_WR_WRITE;
	last->op_ctx = op_ctx;
	last->len = len;
	src = iov;
	nsrc = (size_t)n;
	if ((size_t)n > iface->max_sge) {
		/* more pieces than the device gathers: one bounce buffer,
		 * owned by the last request */
		last->bounce = malloc(len);
		if (!last->bounce) {
			ret = -FI_ENOMEM;
			goto err_free;
		}
		memcpy(last->iov, iov, (size_t)n * sizeof(*iov));
		last->iovcnt = (size_t)n;
		if (!read)
			for (i = 0, off = 0; i < (size_t)n; i++) {
				memcpy((uint8_t *)last->bounce + off,
				       iov[i].iov_base, iov[i].iov_len);
				off += iov[i].iov_len;
			}
		iface->stats.bounced++;
		bounce_iov.iov_base = last->bounce;
		bounce_iov.iov_len = len;
		src = &bounce_iov;
		nsrc = 1;
	}
	for (c = 0, off = 0; c < nchunks; c++, off += clen) {
		clen = P4U_MIN(len - off, iface->max_rma);
		ret = p4t_verbs_chunk_reg(iface, wrs[c], src, nsrc, off, clen,
					  access, sge[c]);
		if (ret < 0) {
			p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: registering "
					"%zu bytes failed: %s", clen,
					strerror(errno));
			goto err_free;
		}
		memset(&swr[c], 0, sizeof(swr[c]));
		swr[c].wr_id = (uint64_t)(wrs[c] - iface->wrs) + 1;
		swr[c].opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
		swr[c].send_flags = IBV_SEND_SIGNALED;
		swr[c].sg_list = sge[c];
		swr[c].num_sge = ret;
		swr[c].wr.rdma.remote_addr = remote->addr + remote_off + off;
		swr[c].wr.rdma.rkey = (uint32_t)remote->key;
		swr[c].next = c + 1 < nchunks ? &swr[c + 1] : NULL;
	}
	ret = ibv_post_send(conn->qp, swr, &bad);
	if (ret) {
		/* nothing before bad can be taken back: those complete
		 * (as parts, no upcall); the rest is freed */
		for (c = 0; &swr[c] != bad; c++) {
			wrs[c]->kind = P4T_VERBS_WR_PART;
			conn->sq_posted++;
			iface->wrs_posted++;
		}
		if (c) {
			/* the op is gone: fail the link rather than let
			 * half a transfer look like a whole one */
			p4t_verbs_conn_fail(conn, -FI_EIO);
			ret = EIO;
		}
		for (; c < nchunks; c++)
			p4t_verbs_wr_free(iface, wrs[c]);
		return ret == ENOMEM ? -FI_EAGAIN : -FI_EIO;
	}
	conn->sq_posted += nchunks;
	iface->wrs_posted += nchunks;
	if (read) {
		iface->stats.reads += nchunks;
		iface->stats.read_bytes += len;
	} else {
		iface->stats.writes += nchunks;
		iface->stats.write_bytes += len;
	}
	return 0;

err_free:
	for (c = 0; c < nchunks; c++)
		if (wrs[c])
			p4t_verbs_wr_free(iface, wrs[c]);
	return ret;
}

static int p4t_verbs_rma(struct p4t_verbs_iface *iface,
			 struct p4t_verbs_conn *conn, bool read,
			 const struct p4w_cookie *remote, uint64_t remote_off,
			 const struct iovec *local, size_t iovcnt, size_t len,
			 void *op_ctx)
{
	struct p4t_verbs_pend *pend;
	int ret;

	if (remote_off > remote->length || len > remote->length - remote_off ||
	    len > iface->max_rma * P4T_VERBS_QP_WR ||
	    iovcnt > P4T_VERBS_MAX_SGE * 4)
		return -FI_EINVAL;
	if (conn->state == P4T_VERBS_CONN_FAILING)
		return -FI_ECONNABORTED;
	if (conn->state == P4T_VERBS_CONN_UP && p4u_list_empty(&conn->pending)) {
		ret = p4t_verbs_post_rma(conn, read, remote, remote_off, local,
					 iovcnt, len, op_ctx);
		if (ret != -FI_EAGAIN)
			return ret;
	}
	pend = p4t_verbs_pend_alloc(iovcnt * sizeof(struct iovec));
	if (!pend)
		return -FI_ENOMEM;
	pend->kind = read ? P4T_VERBS_PEND_PULL : P4T_VERBS_PEND_PUSH;
	pend->op_ctx = op_ctx;
	pend->len = len;
	pend->remote = *remote;
	pend->remote_off = remote_off;
	pend->iovcnt = iovcnt;
	pend->iov = (struct iovec *)pend->data;
	memcpy(pend->iov, local, iovcnt * sizeof(*local));
	p4u_list_insert_tail(&conn->pending, &pend->link);
	iface->stats.queued++;
	return 0;
}

int p4t_verbs_pull(struct p4t_iface *iface_, struct p4t_conn *conn_,
		   const struct p4w_cookie *remote, uint64_t remote_off,
		   const struct iovec *local, size_t iovcnt, size_t len,
		   void *op_ctx)
{
	struct p4t_verbs_iface *iface = p4t_verbs_iface_of(iface_);
	struct p4t_verbs_conn *conn = (struct p4t_verbs_conn *)conn_;

	if (conn->state == P4T_VERBS_CONN_SELF)
		return p4t_pull(iface->tcp, conn->tcp, remote, remote_off,
				local, iovcnt, len, op_ctx);
	return p4t_verbs_rma(iface, conn, true, remote, remote_off, local,
			     iovcnt, len, op_ctx);
}

int p4t_verbs_push(struct p4t_iface *iface_, struct p4t_conn *conn_,
		   const struct iovec *local, size_t iovcnt, size_t len,
		   const struct p4w_cookie *remote, uint64_t remote_off,
		   void *op_ctx)
{
	struct p4t_verbs_iface *iface = p4t_verbs_iface_of(iface_);
	struct p4t_verbs_conn *conn = (struct p4t_verbs_conn *)conn_;

	if (conn->state == P4T_VERBS_CONN_SELF)
		return p4t_push(iface->tcp, conn->tcp, local, iovcnt, len,
				remote, remote_off, op_ctx);
	return p4t_verbs_rma(iface, conn, false, remote, remote_off, local,
			     iovcnt, len, op_ctx);
}

/* ---- queued work ------------------------------------------------------- */

static void p4t_verbs_pend_free(struct p4t_verbs_iface *iface,
				struct p4t_verbs_pend *pend)
{
	p4u_list_remove(&pend->link);
	if (pend->kind == P4T_VERBS_PEND_SEND)
		iface->pending_bytes -= pend->len;
	free(pend);
}

/* Post what waited on conn, in order, while the QP takes it. */
void p4t_verbs_pend_flush(struct p4t_verbs_conn *conn)
{
	struct p4t_verbs_iface *iface = conn->iface;
	struct p4t_verbs_pend *pend;
	int ret;

	while (conn->state == P4T_VERBS_CONN_UP &&
	       !p4u_list_empty(&conn->pending)) {
		pend = p4u_list_first_entry(&conn->pending,
					    struct p4t_verbs_pend, link);
		if (pend->kind == P4T_VERBS_PEND_SEND)
			ret = p4t_verbs_post_send(conn, pend->data, pend->len,
						  NULL, 0, pend->len);
		else
			ret = p4t_verbs_post_rma(conn,
						 pend->kind == P4T_VERBS_PEND_PULL,
						 &pend->remote, pend->remote_off,
						 pend->iov, pend->iovcnt,
						 pend->len, pend->op_ctx);
		if (ret == -FI_EAGAIN)
			return;
		if (ret && pend->kind != P4T_VERBS_PEND_SEND)
			iface->upcalls->rma_done(iface->upcall_ctx,
						 pend->op_ctx, ret);
		else if (ret)
			p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: queued send "
					"dropped: %d", ret);
		p4t_verbs_pend_free(iface, pend);
	}
}

/* The link failed: queued pulls and pushes complete with status. */
void p4t_verbs_pend_fail(struct p4t_verbs_conn *conn, int status)
{
	struct p4t_verbs_iface *iface = conn->iface;
	struct p4t_verbs_pend *pend;

	while (!p4u_list_empty(&conn->pending)) {
		pend = p4u_list_first_entry(&conn->pending,
					    struct p4t_verbs_pend, link);
		if (pend->kind != P4T_VERBS_PEND_SEND)
			iface->upcalls->rma_done(iface->upcall_ctx,
						 pend->op_ctx, status);
		p4t_verbs_pend_free(iface, pend);
	}
}

/* ---- exposures --------------------------------------------------------- */

int p4t_verbs_mem_expose(struct p4t_iface *iface_, struct p4t_conn *conn_,
			 const struct iovec *iov, size_t iovcnt,
			 unsigned access, struct p4w_cookie *cookie,
			 struct p4t_mem **mem_p)
{
	struct p4t_verbs_iface *iface = p4t_verbs_iface_of(iface_);
	struct p4t_verbs_conn *conn = (struct p4t_verbs_conn *)conn_;
	size_t total = p4t_verbs_iov_len(iov, iovcnt), used = 0, i, off;
	const struct iovec *one = NULL;
	struct p4t_verbs_mem *mem;
	int flags = 0, ret;
	void *base;

	if (!access || (access & ~(P4T_ACCESS_READ | P4T_ACCESS_WRITE)))
		return -FI_EINVAL;
	mem = calloc(1, sizeof(*mem));
	if (!mem)
		return -FI_ENOMEM;
	p4u_list_node_init(&mem->link);
	mem->access = access;
	if (conn && conn->state == P4T_VERBS_CONN_SELF) {
		ret = p4t_mem_expose(iface->tcp, conn->tcp, iov, iovcnt, access,
				     cookie, &mem->tcp_mem);
		if (ret) {
			free(mem);
			return ret;
		}
		*mem_p = (struct p4t_mem *)mem;
		return 0;
	}
	for (i = 0; i < iovcnt; i++)
		if (iov[i].iov_len) {
			used++;
			one = &iov[i];
		}
	if (access & P4T_ACCESS_READ)
		flags |= IBV_ACCESS_REMOTE_READ;
	if (access & P4T_ACCESS_WRITE)
		flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	if (used == 1) {
		base = one->iov_base;
	} else {
		/*
		 * Pieces (or nothing): a contiguous copy. A pushed-into copy
		 * would reach the user's iovecs only at unexpose, after the
		 * engine reported the data: refuse that case.
		 */
		if (used > 1 && (access & P4T_ACCESS_WRITE)) {
			free(mem);
			return -FI_ENOSYS;
		}
		mem->bounce = malloc(total ? total : 1);
		if (!mem->bounce) {
			free(mem);
			return -FI_ENOMEM;
		}
		for (i = 0, off = 0; i < iovcnt; i++) {
			memcpy((uint8_t *)mem->bounce + off, iov[i].iov_base,
			       iov[i].iov_len);
			off += iov[i].iov_len;
		}
		base = mem->bounce;
		iface->stats.bounced++;
	}
	mem->reg = mem->bounce ? NULL :
		   p4t_verbs_mr_find(iface, base, total, flags);
	if (mem->reg) {
		iface->stats.app_mr_hits++;
		mem->mr = mem->reg->mr;
	} else {
		mem->mr = ibv_reg_mr(iface->pd, base, total ? total : 1,
				     flags);
		iface->stats.regs++;
	}
	if (!mem->mr) {
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: exposing %zu bytes "
				"failed: %s", total, strerror(errno));
		free(mem->bounce);
		free(mem);
		return -FI_EFAULT;
	}
	cookie->addr = (uintptr_t)base;
	cookie->key = mem->mr->rkey;
	cookie->length = total;
	p4u_list_insert_tail(&iface->mems, &mem->link);
	*mem_p = (struct p4t_mem *)mem;
	return 0;
}

void p4t_verbs_mem_release(struct p4t_verbs_iface *iface,
			   struct p4t_verbs_mem *mem)
{
	if (mem->tcp_mem)
		p4t_mem_unexpose(iface->tcp, mem->tcp_mem);
	if (mem->reg)
		p4t_verbs_mr_put(mem->reg);
	else if (mem->mr)
		ibv_dereg_mr(mem->mr);
	if (p4u_list_node_linked(&mem->link))
		p4u_list_remove(&mem->link);
	free(mem->bounce);
	free(mem);
}

void p4t_verbs_mem_unexpose(struct p4t_iface *iface_, struct p4t_mem *mem_)
{
	if (mem_)
		p4t_verbs_mem_release(p4t_verbs_iface_of(iface_),
				      (struct p4t_verbs_mem *)mem_);
}

/* ---- completions ------------------------------------------------------- */

int p4t_verbs_wc_status(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_WR_FLUSH_ERR:
		return -FI_ECONNABORTED;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return -FI_ETIMEDOUT;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_LOC_PROT_ERR:
		return -FI_EACCES;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_LOC_LEN_ERR:
		return -FI_EINVAL;
	default:
		return -FI_EIO;
	}
}

static void p4t_verbs_wc_recv(struct p4t_verbs_iface *iface,
			      const struct ibv_wc *wc)
{
	struct p4t_verbs_conn *conn;
	uint32_t idx = (uint32_t)(wc->wr_id & ~P4T_VERBS_RECV_TAG);
	int ret;

	if (idx >= P4T_VERBS_RECV_BUFS)
		return;		/* cannot happen: we set wr_id */
	conn = p4t_verbs_conn_by_qpn(iface, wc->qp_num);
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR) {
			iface->stats.wc_errors++;
			p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: receive "
					"failed: %s",
					ibv_wc_status_str(wc->status));
			if (conn)
				p4t_verbs_conn_fail(conn, p4t_verbs_wc_status(
							  wc->status));
		}
	} else if (conn && !iface->closing &&
		   (conn->state == P4T_VERBS_CONN_UP ||
		    conn->state == P4T_VERBS_CONN_READY_WAIT)) {
		iface->stats.msgs_recv++;
		iface->stats.bytes_recv += wc->byte_len;
		ret = iface->upcalls->recv(iface->upcall_ctx, &conn->base,
					   iface->recv_mem +
					   (size_t)idx * P4T_VERBS_BUF_SIZE,
					   wc->byte_len);
		if (ret < 0)
			p4t_verbs_conn_fail(conn, ret);
	}
	iface->recv_free[iface->recv_nfree++] = idx;
}

static void p4t_verbs_wc_send(struct p4t_verbs_iface *iface,
			      const struct ibv_wc *wc)
{
	struct p4t_verbs_wr *wr;
	struct p4t_verbs_conn *conn;
	int status = p4t_verbs_wc_status(wc->status);
	size_t i, off;

	if (!wc->wr_id || wc->wr_id > P4T_VERBS_WRS)
		return;
	wr = &iface->wrs[wc->wr_id - 1];
	if (wr->kind == P4T_VERBS_WR_FREE)
		return;
	conn = wr->conn;
	conn->sq_posted--;
	iface->wrs_posted--;
	if (status && wc->status != IBV_WC_WR_FLUSH_ERR) {
		iface->stats.wc_errors++;
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: work request "
				"failed: %s", ibv_wc_status_str(wc->status));
		p4t_verbs_conn_fail(conn, status);
	}
	if (wr->kind == P4T_VERBS_WR_READ && !status && wr->bounce)
		for (i = 0, off = 0; i < wr->iovcnt; i++) {
			memcpy(wr->iov[i].iov_base, (uint8_t *)wr->bounce + off,
			       wr->iov[i].iov_len);
			off += wr->iov[i].iov_len;
		}
	if (wr->kind == P4T_VERBS_WR_READ || wr->kind == P4T_VERBS_WR_WRITE) {
		void *op_ctx = wr->op_ctx;

		/* free first: the upcall may post again */
		p4t_verbs_wr_free(iface, wr);
		iface->upcalls->rma_done(iface->upcall_ctx, op_ctx, status);
	} else {
		p4t_verbs_wr_free(iface, wr);
	}
	if (conn->state == P4T_VERBS_CONN_UP && !p4u_list_empty(&conn->pending))
		p4t_verbs_pend_flush(conn);
}

/* Handle up to budget completions; returns how many. */
int p4t_verbs_cq_poll(struct p4t_verbs_iface *iface, int budget)
{
	struct ibv_wc wc[32];
	int done = 0, n, i;

	while (done < budget) {
		n = ibv_poll_cq(iface->cq, P4U_MIN(budget - done, 32), wc);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			/* opcode is undefined in an error completion */
			if (wc[i].wr_id & P4T_VERBS_RECV_TAG)
				p4t_verbs_wc_recv(iface, &wc[i]);
			else
				p4t_verbs_wc_send(iface, &wc[i]);
		}
		done += n;
	}
	return done;
}
