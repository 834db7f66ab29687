/*
 * p4f_rma.h - one-sided operations (p4f_rma.c, p4f_atomic.c) and their
 * event sink (p4f_sink_rma.c). Included from p4f.h.
 *
 * The *_args entry points take a descriptor the fi_* wrappers built and
 * post it with the domain lock taken inside; the *_prep_locked functions
 * validate a descriptor and fill the engine transfer without posting, so
 * a triggered or deferred operation (p4f_trigger.c) builds the very same
 * transfer and hands it to p4e_trig_*. Descriptors are read during the
 * call only.
 */
#ifndef P4F_RMA_H
#define P4F_RMA_H

/* fi_read* / fi_write* (rma_iov_limit 1: one remote range). */
struct p4f_rma_args {
	const struct iovec *iov;	/* local buffers */
	size_t count;
	fi_addr_t addr;
	uint64_t raddr;			/* remote address or offset */
	uint64_t key;
	uint64_t data;			/* FI_REMOTE_CQ_DATA */
	void *context;
	uint64_t flags;			/* op flags, P4F_XFER_INJECT_CALL */
};

ssize_t p4f_rma_write_args(struct p4f_ep *ep, const struct p4f_rma_args *a);
ssize_t p4f_rma_read_args(struct p4f_ep *ep, const struct p4f_rma_args *a);
/*
 * Validate and fill x (no post); domain lock held. x->iov may point to
 * a->iov (the engine copies it when the transfer is posted). The caller
 * that posts x counts ep->tx_pending first: the sink releases one per
 * completion.
 */
int p4f_rma_prep_locked(struct p4f_ep *ep, const struct p4f_rma_args *a,
			bool write, struct p4e_xfer *x);

enum p4f_atomic_kind {
	P4F_ATOMIC_PLAIN,	/* fi_atomic */
	P4F_ATOMIC_FETCH,	/* fi_fetch_atomic */
	P4F_ATOMIC_COMPARE,	/* fi_compare_atomic */
};

/* fi_atomic* / fi_fetch_atomic* / fi_compare_atomic*. */
struct p4f_atomic_args {
	enum p4f_atomic_kind kind;
	const struct fi_ioc *iov;	/* operands (ATOMIC_READ: none) */
	size_t count;
	const struct fi_ioc *compare;	/* COMPARE only, one element */
	size_t compare_count;
	struct fi_ioc *result;		/* FETCH / COMPARE, one element */
	size_t result_count;
	fi_addr_t addr;
	uint64_t raddr;
	uint64_t key;
	enum fi_datatype datatype;
	enum fi_op op;
	uint64_t data;
	void *context;
	uint64_t flags;
};

ssize_t p4f_atomic_post_args(struct p4f_ep *ep,
			     const struct p4f_atomic_args *a);
/* Validate and fill x (no post); domain lock held. x->operand points into
 * a's compare buffer, x->iov may point to iov_buf (P4F_IOV_LIMIT). */
int p4f_atomic_prep_locked(struct p4f_ep *ep, const struct p4f_atomic_args *a,
			   struct iovec *iov_buf, struct p4e_xfer *x);
/* Which p4e_* call posts an atomic of this kind and op. */
int p4f_atomic_engine_post(struct p4e_ni *ni, enum p4f_atomic_kind kind,
			   const struct p4e_xfer *x);

/* fi_query_atomic (a domain op): the limits of a default endpoint. */
int p4f_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr,
		     uint64_t flags);

extern struct fi_ops_rma p4f_rma_ops;
extern struct fi_ops_atomic p4f_atomic_ops;

/*
 * p4f_sink_rma.c: events of the RMA PT (target: remote counters, MR
 * counters, FI_REMOTE_CQ_DATA entries) and of the RMA MDs (initiator:
 * completions and local counters).
 */
extern const struct p4e_eq_ops p4f_sink_rma_ops;

/*
 * p4f_mr.c: every enabled MR has entries on every enabled endpoint's RMA
 * PT. attach when an endpoint is enabled (all MRs), detach before its NI
 * is destroyed. Domain lock held.
 */
int p4f_mr_ep_attach_locked(struct p4f_ep *ep);
void p4f_mr_ep_detach_locked(struct p4f_ep *ep);

#endif /* P4F_RMA_H */
