/*
 * p4f_stubs.c - the -FI_ENOSYS stubs declared in p4f_stubs.h, and the
 * collective table's own.
 *
 * Generated once from the ops structs of the libfabric 1.17 headers; kept
 * by hand since, and cut down to the slots the provider's ops tables use.
 * Every function ignores its arguments.
 */
#include <config.h>

#include "p4f_stubs.h"

int p4f_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int p4f_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int p4f_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	return -FI_ENOSYS;
}

int p4f_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	return -FI_ENOSYS;
}

int p4f_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops,
		   void *context)
{
	return -FI_ENOSYS;
}

int p4f_no_fabric_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
			     struct fid_pep **pep, void *context)
{
	return -FI_ENOSYS;
}

int p4f_no_domain_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **sep, void *context)
{
	return -FI_ENOSYS;
}

int p4f_no_domain_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
			  struct fid_stx **stx, void *context)
{
	return -FI_ENOSYS;
}

int p4f_no_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
			  struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

int p4f_no_domain_query_collective(struct fid_domain *domain,
				   enum fi_collective_op coll,
				   struct fi_collective_attr *attr,
				   uint64_t flags)
{
	return -FI_ENOSYS;
}

int p4f_no_ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

int p4f_no_ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

int p4f_no_cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	return -FI_ENOSYS;
}

int p4f_no_cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int p4f_no_cm_connect(struct fid_ep *ep, const void *addr, const void *param,
		      size_t paramlen)
{
	return -FI_ENOSYS;
}

int p4f_no_cm_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

int p4f_no_cm_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int p4f_no_cm_reject(struct fid_pep *pep, fid_t handle, const void *param,
		     size_t paramlen)
{
	return -FI_ENOSYS;
}

int p4f_no_cm_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

int p4f_no_cm_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		   struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

int p4f_no_av_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		     struct fid_av_set **av_set, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
					 void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_broadcast(struct fid_ep *ep, void *buf,
					   size_t count, void *desc,
					   fi_addr_t coll_addr,
					   fi_addr_t root_addr,
					   enum fi_datatype datatype,
					   uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_alltoall(struct fid_ep *ep, const void *buf,
					  size_t count, void *desc,
					  void *result, void *result_desc,
					  fi_addr_t coll_addr,
					  enum fi_datatype datatype,
					  uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_allreduce(struct fid_ep *ep, const void *buf,
					   size_t count, void *desc,
					   void *result, void *result_desc,
					   fi_addr_t coll_addr,
					   enum fi_datatype datatype,
					   enum fi_op op, uint64_t flags,
					   void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_allgather(struct fid_ep *ep, const void *buf,
					   size_t count, void *desc,
					   void *result, void *result_desc,
					   fi_addr_t coll_addr,
					   enum fi_datatype datatype,
					   uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_reduce_scatter(struct fid_ep *ep,
						const void *buf, size_t count,
						void *desc, void *result,
						void *result_desc,
						fi_addr_t coll_addr,
						enum fi_datatype datatype,
						enum fi_op op, uint64_t flags,
						void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_reduce(struct fid_ep *ep, const void *buf,
					size_t count, void *desc, void *result,
					void *result_desc, fi_addr_t coll_addr,
					fi_addr_t root_addr,
					enum fi_datatype datatype,
					enum fi_op op, uint64_t flags,
					void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_scatter(struct fid_ep *ep, const void *buf,
					 size_t count, void *desc, void *result,
					 void *result_desc, fi_addr_t coll_addr,
					 fi_addr_t root_addr,
					 enum fi_datatype datatype,
					 uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_gather(struct fid_ep *ep, const void *buf,
					size_t count, void *desc, void *result,
					void *result_desc, fi_addr_t coll_addr,
					fi_addr_t root_addr,
					enum fi_datatype datatype,
					uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_msg(struct fid_ep *ep,
				     const struct fi_msg_collective *msg,
				     struct fi_ioc *resultv, void **result_desc,
				     size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t p4f_no_collective_barrier2(struct fid_ep *ep,
					  fi_addr_t coll_addr, uint64_t flags,
					  void *context)
{
	return -FI_ENOSYS;
}

const struct fi_ops_collective p4f_no_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = p4f_no_collective_barrier,
	.broadcast = p4f_no_collective_broadcast,
	.alltoall = p4f_no_collective_alltoall,
	.allreduce = p4f_no_collective_allreduce,
	.allgather = p4f_no_collective_allgather,
	.reduce_scatter = p4f_no_collective_reduce_scatter,
	.reduce = p4f_no_collective_reduce,
	.scatter = p4f_no_collective_scatter,
	.gather = p4f_no_collective_gather,
	.msg = p4f_no_collective_msg,
	.barrier2 = p4f_no_collective_barrier2,
};
