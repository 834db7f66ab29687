/*
 * p4t_shm_mem.c - the shared-memory transport's exposures (behaviour:
 * p4t_shm.h): what a peer may read or write, named by a cookie whose key
 * is a pool handle under the iface's salt, checked by the owner for every
 * pull and push before a byte moves; unexposing refuses what a peer's
 * pull or push still had to move there.
 *
 * Not here: the pulls and pushes themselves (p4t_shm_rma.c).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "p4t_shm_priv.h"

int p4t_shm_mem_expose(struct p4t_iface *iface_, struct p4t_conn *conn_,
		       const struct iovec *iov, size_t iovcnt, unsigned access,
		       struct p4w_cookie *cookie, struct p4t_mem **mem_p)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_mem *mem;
	struct iovec *copy;
	size_t len;

	if (!conn_ || !cookie || !mem_p || !access ||
	    (access & ~(unsigned)(P4T_ACCESS_READ | P4T_ACCESS_WRITE)) ||
	    iovcnt > P4T_SHM_MAX_IOV || p4u_iov_len(iov, iovcnt, &len))
		return -FI_EINVAL;
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
	mem->conn = p4t_shm_conn_of(conn_);
	mem->access = access;
	mem->len = len;
	mem->iovcnt = iovcnt;
	mem->iov = copy;
	p4u_list_init(&mem->streams);
	cookie->addr = 0;	/* offset addressing */
	cookie->key = p4u_pool_handle(&iface->mems, mem) ^ iface->salt;
	cookie->length = len;
	*mem_p = (struct p4t_mem *)mem;
	return 0;
}

void p4t_shm_mem_unexpose(struct p4t_iface *iface_, struct p4t_mem *mem_)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_mem *mem = (struct p4t_shm_mem *)mem_;
	struct p4t_shm_rma *rma, *tmp;

	if (!mem)
		return;
	/* ring-mode pulls reading it stop: the rest is refused */
	p4u_list_foreach_entry_safe(&mem->streams, rma, tmp,
				    struct p4t_shm_rma, link)
		p4t_shm_stream_cut(rma, -FI_EACCES);
	free(mem->iov);
	/* the generation moves on: the cookie is refused from now on */
	p4u_pool_free(&iface->mems, mem);
}

void p4t_shm_mem_forget_conn(struct p4t_shm_conn *conn)
{
	struct p4u_pool *mems = &conn->iface->mems;
	struct p4t_shm_mem *mem;
	uint32_t i;

	for (i = 0; p4u_pool_in_use(mems) && i < p4u_pool_capacity(mems); i++) {
		mem = p4u_pool_at(mems, i);
		if (mem && mem->conn == conn)
			mem->conn = NULL;
	}
}

void p4t_shm_mem_free_all(struct p4t_shm_iface *iface)
{
	struct p4t_shm_mem *mem;
	uint32_t i;

	for (i = 0; i < p4u_pool_capacity(&iface->mems); i++) {
		mem = p4u_pool_at(&iface->mems, i);
		if (mem)
			free(mem->iov);
	}
}

/* The exposure key names, usable by conn's peer for [off, off + len). */
int p4t_shm_mem_lookup(struct p4t_shm_conn *conn, uint64_t key, uint64_t off,
		       uint64_t len, unsigned access,
		       struct p4t_shm_mem **mem_p)
{
	struct p4t_shm_iface *iface = conn->iface;
	struct p4t_shm_mem *mem = p4u_pool_lookup(&iface->mems,
						  key ^ iface->salt);

	if (!mem || !(mem->access & access) || mem->conn != conn) {
		iface->stats.rma_refused++;
		p4u_warn_sparse(P4U_LOG_TRANSPORT,
				"shm: rma refused: key 0x%llx %s",
				(unsigned long long)key,
				!mem ? "unknown" : !(mem->access & access) ?
				"access" : "other peer");
		return -FI_EACCES;
	}
	if (off > mem->len || len > mem->len - off) {
		iface->stats.rma_refused++;
		p4u_warn_sparse(P4U_LOG_TRANSPORT,
				"shm: rma out of range: off %llu len %llu of %zu",
				(unsigned long long)off,
				(unsigned long long)len, mem->len);
		return -FI_EINVAL;
	}
	*mem_p = mem;
	return 0;
}
