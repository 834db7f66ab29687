/*
 * p4t_loop_rma.c - the loop transport's exposures, pull and push
 * (behaviour: p4t_loop.h; shared objects: p4t_loop_priv.h).
 *
 * Here: the exposure table (one pool per iface; a cookie key is the pool
 * handle, index | generation, xor a per-iface salt, so a stale or forged
 * key misses), the checks every pull and push passes before memory is
 * touched, and posting: a push copies at once, a pull is performed in the
 * puller's progress (p4t_loop.c runs p4t_loop_pull_exec_locked when it
 * reports the op). Not here: links, queues and progress (p4t_loop.c).
 */
#include <config.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "p4t_loop_priv.h"
#include "p4u_log.h"

/* ---- exposures, pull, push --------------------------------------------- */

/* Exposures for conn become unusable (the cookie stays until unexpose). */
void p4t_loop_conn_forget_mems_locked(struct p4t_loop_conn *conn)
{
	struct p4u_pool *mems = &conn->iface->mems;
	struct p4t_loop_mem *mem;
	uint32_t i;

	for (i = 0; p4u_pool_in_use(mems) && i < p4u_pool_capacity(mems); i++) {
		mem = p4u_pool_at(mems, i);
		if (mem && mem->conn == conn)
			mem->conn = NULL;
	}
}

int p4t_loop_mem_expose(struct p4t_iface *iface_, struct p4t_conn *conn_,
			const struct iovec *iov, size_t iovcnt,
			unsigned access, struct p4w_cookie *cookie,
			struct p4t_mem **mem_p)
{
	struct p4t_loop_iface *iface = p4t_loop_iface_of(iface_);
	struct p4t_loop_mem *mem;
	struct iovec *copy;
	size_t len;
	int ret;

	if (!conn_ || !cookie || !mem_p || !access ||
	    (access & ~(unsigned)(P4T_ACCESS_READ | P4T_ACCESS_WRITE)) ||
	    iovcnt > P4T_LOOP_MAX_IOV)
		return -FI_EINVAL;
	ret = p4u_iov_len(iov, iovcnt, &len);
	if (ret)
		return ret;
	copy = calloc(iovcnt ? iovcnt : 1, sizeof(*copy));
	if (!copy)
		return -FI_ENOMEM;
	if (iovcnt)
		memcpy(copy, iov, iovcnt * sizeof(*copy));

	p4t_loop_lock_acquire();
	assert(p4t_loop_conn_of(conn_)->iface == iface);
	mem = p4u_pool_alloc(&iface->mems);
	if (mem) {
		mem->conn = p4t_loop_conn_of(conn_);
		mem->access = access;
		mem->len = len;
		mem->iovcnt = iovcnt;
		mem->iov = copy;
		/* the salt keeps one iface's cookies from matching another's */
		cookie->addr = 0;	/* offset addressing */
		cookie->key = p4u_pool_handle(&iface->mems, mem) ^
			      iface->key_salt;
		cookie->length = len;
		*mem_p = (struct p4t_mem *)mem;
	}
	p4t_loop_lock_release();
	if (!mem) {
		free(copy);
		return -FI_EAGAIN;
	}
	return 0;
}

void p4t_loop_mem_unexpose(struct p4t_iface *iface_,
			   struct p4t_mem *mem_)
{
	struct p4t_loop_iface *iface = p4t_loop_iface_of(iface_);
	struct p4t_loop_mem *mem = (struct p4t_loop_mem *)mem_;

	if (!mem)
		return;
	p4t_loop_lock_acquire();
	free(mem->iov);
	/* the generation moves on: the cookie is refused from now on */
	p4u_pool_free(&iface->mems, mem);
	p4t_loop_lock_release();
}

/*
 * Find the exposure the cookie names at owner, usable by owner's end
 * user of the link, for [off, off + len). Trusts nothing in the cookie
 * but the key.
 */
static int p4t_loop_mem_check_locked(struct p4t_loop_iface *owner,
				     struct p4t_loop_conn *user,
				     const struct p4w_cookie *cookie,
				     uint64_t off, size_t len, unsigned access,
				     struct p4t_loop_mem **mem_p)
{
	struct p4t_loop_mem *mem;

	mem = p4u_pool_lookup(&owner->mems, cookie->key ^ owner->key_salt);
	if (!mem || !(mem->access & access) || mem->conn != user) {
		p4u_warn_sparse(P4U_LOG_TRANSPORT,
				"loop: rma refused: key 0x%llx %s",
				(unsigned long long)cookie->key,
				!mem ? "unknown" : !(mem->access & access) ?
				"access" : "other peer");
		return -FI_EACCES;
	}
	if (off > mem->len || len > mem->len - off) {
		p4u_warn_sparse(P4U_LOG_TRANSPORT,
				"loop: rma out of range: off %llu len %zu of %zu",
				(unsigned long long)off, len, mem->len);
		return -FI_EINVAL;
	}
	*mem_p = mem;
	return 0;
}

int p4t_loop_pull_exec_locked(struct p4t_loop_op *op)
{
	struct p4t_loop_conn *conn = op->conn, *peer = conn->peer;
	struct p4t_loop_mem *mem;
	int ret;

	/* attached ops belong to an ACTIVE, hence paired, end */
	assert(conn->state == P4T_LOOP_CONN_ACTIVE && peer);
	ret = p4t_loop_mem_check_locked(peer->iface, peer, &op->remote,
					op->remote_off, op->len,
					P4T_ACCESS_READ, &mem);
	if (ret)
		return ret;
	p4t_loop_iov_copy(op->iov, 0, mem->iov, op->remote_off, op->len);
	conn->iface->stats.pulls++;
	conn->iface->stats.rma_bytes += op->len;
	return 0;
}

static int p4t_loop_push_exec_locked(struct p4t_loop_conn *conn,
				     const struct iovec *local, size_t len,
				     const struct p4w_cookie *remote,
				     uint64_t remote_off)
{
	struct p4t_loop_conn *peer = conn->peer;
	struct p4t_loop_mem *mem;
	int ret;

	ret = p4t_loop_mem_check_locked(peer->iface, peer, remote, remote_off,
					len, P4T_ACCESS_WRITE, &mem);
	if (ret)
		return ret;
	p4t_loop_iov_copy(mem->iov, remote_off, local, 0, len);
	conn->iface->stats.pushes++;
	conn->iface->stats.rma_bytes += len;
	return 0;
}

static int p4t_loop_op_create(enum p4t_loop_op_kind kind,
			      const struct p4w_cookie *remote,
			      uint64_t remote_off, const struct iovec *local,
			      size_t iovcnt, size_t len, void *op_ctx,
			      struct p4t_loop_op **op_p)
{
	struct p4t_loop_op *op;
	size_t local_len, keep;
	int ret;

	if (!remote || iovcnt > P4T_LOOP_MAX_IOV)
		return -FI_EINVAL;
	ret = p4u_iov_len(local, iovcnt, &local_len);
	if (ret)
		return ret;
	if (local_len < len)
		return -FI_EINVAL;
	/* a push copies at post time: only a pull keeps the local iov */
	keep = kind == P4T_LOOP_OP_PULL ? iovcnt : 0;
	op = calloc(1, sizeof(*op) + keep * sizeof(op->iov[0]));
	if (!op)
		return -FI_ENOMEM;
	op->ev.kind = P4T_LOOP_EV_RMA;
	op->kind = kind;
	op->op_ctx = op_ctx;
	op->remote = *remote;
	op->remote_off = remote_off;
	op->len = len;
	op->iovcnt = keep;
	if (keep)
		memcpy(op->iov, local, keep * sizeof(op->iov[0]));
	p4u_list_node_init(&op->conn_node);
	*op_p = op;
	return 0;
}

/* Queue op's completion; on a failed link, ahead of its conn_failed. */
static void p4t_loop_op_post_locked(struct p4t_loop_conn *conn,
				    struct p4t_loop_op *op)
{
	struct p4t_loop_iface *iface = conn->iface;

	if (conn->state == P4T_LOOP_CONN_ACTIVE) {
		op->conn = conn;
		p4u_list_insert_tail(&conn->ops, &op->conn_node);
		p4u_list_insert_tail(&iface->evq, &op->ev.node);
	} else {
		if (!op->status)
			op->status = -FI_ECONNABORTED;
		if (p4u_list_node_linked(&conn->fail_ev.node))
			p4u_list_insert_before(&conn->fail_ev.node,
					       &op->ev.node);
		else
			p4u_list_insert_tail(&iface->evq, &op->ev.node);
	}
	p4t_loop_iface_signal_locked(iface);
}

static int p4t_loop_rma_post(struct p4t_iface *iface_, struct p4t_conn *conn_,
			     struct p4t_loop_op *op,
			     const struct iovec *local)
{
	struct p4t_loop_conn *conn = p4t_loop_conn_of(conn_);
	int ret;

	p4t_loop_lock_acquire();
	assert(conn->iface == p4t_loop_iface_of(iface_) &&
	       conn->state != P4T_LOOP_CONN_CLOSED);
	if (conn->state == P4T_LOOP_CONN_ACTIVE) {
		ret = p4t_loop_link_connect_locked(conn);
		if (ret && ret != -FI_ECONNREFUSED) {
			p4t_loop_lock_release();
			free(op);
			return ret;
		}
	}
	/* the push lands now, so a later send on the link is seen after it */
	if (op->kind == P4T_LOOP_OP_PUSH &&
	    conn->state == P4T_LOOP_CONN_ACTIVE)
		op->status = p4t_loop_push_exec_locked(conn, local, op->len,
						       &op->remote,
						       op->remote_off);
	p4t_loop_op_post_locked(conn, op);
	p4t_loop_lock_release();
	return 0;
}

int p4t_loop_pull(struct p4t_iface *iface, struct p4t_conn *conn,
		  const struct p4w_cookie *remote, uint64_t remote_off,
		  const struct iovec *local, size_t iovcnt, size_t len,
		  void *op_ctx)
{
	struct p4t_loop_op *op;
	int ret;

	if (!conn)
		return -FI_EINVAL;
	ret = p4t_loop_op_create(P4T_LOOP_OP_PULL, remote, remote_off, local,
				 iovcnt, len, op_ctx, &op);
	if (ret)
		return ret;
	return p4t_loop_rma_post(iface, conn, op, local);
}

int p4t_loop_push(struct p4t_iface *iface, struct p4t_conn *conn,
		  const struct iovec *local, size_t iovcnt, size_t len,
		  const struct p4w_cookie *remote, uint64_t remote_off,
		  void *op_ctx)
{
	struct p4t_loop_op *op;
	int ret;

	if (!conn)
		return -FI_EINVAL;
	ret = p4t_loop_op_create(P4T_LOOP_OP_PUSH, remote, remote_off, local,
				 iovcnt, len, op_ctx, &op);
	if (ret)
		return ret;
	return p4t_loop_rma_post(iface, conn, op, local);
}
