/*
 * p4f_stubs.h - "-FI_ENOSYS" for the libfabric ops slots the provider
 * leaves unimplemented.
 *
 * libfabric does not export its fi_no_* helpers to external providers, so
 * the provider carries its own, and only those its ops tables use: each
 * p4f_no_<table>_<slot>() has the exact signature of its slot and returns
 * -FI_ENOSYS. p4f_no_collective_ops is a complete "nothing supported"
 * collective table; endpoints install it. A table that needs another stub
 * adds it here.
 */
#ifndef P4F_STUBS_H
#define P4F_STUBS_H

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

int p4f_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int p4f_no_control(struct fid *fid, int command, void *arg);
int p4f_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context);
int p4f_no_tostr(const struct fid *fid, char *buf, size_t len);
int p4f_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops,
		   void *context);
int p4f_no_fabric_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
			     struct fid_pep **pep, void *context);
int p4f_no_domain_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **sep, void *context);
int p4f_no_domain_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
			  struct fid_stx **stx, void *context);
int p4f_no_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
			  struct fid_ep **rx_ep, void *context);
int p4f_no_domain_query_collective(struct fid_domain *domain,
				   enum fi_collective_op coll,
				   struct fi_collective_attr *attr,
				   uint64_t flags);
int p4f_no_ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **tx_ep, void *context);
int p4f_no_ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **rx_ep, void *context);
int p4f_no_cm_setname(fid_t fid, void *addr, size_t addrlen);
int p4f_no_cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int p4f_no_cm_connect(struct fid_ep *ep, const void *addr, const void *param,
		      size_t paramlen);
int p4f_no_cm_listen(struct fid_pep *pep);
int p4f_no_cm_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int p4f_no_cm_reject(struct fid_pep *pep, fid_t handle, const void *param,
		     size_t paramlen);
int p4f_no_cm_shutdown(struct fid_ep *ep, uint64_t flags);
int p4f_no_cm_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		   struct fid_mc **mc, void *context);
int p4f_no_av_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		     struct fid_av_set **av_set, void *context);
extern const struct fi_ops_collective p4f_no_collective_ops;

#endif /* P4F_STUBS_H */
