/*
 * p4f_atomic.c - fi_atomic(3) on the engine's atomics (docs/design.md §3.3):
 * fi_atomic* is an engine atomic, fi_fetch_atomic* a fetch-atomic and
 * fi_compare_atomic* a swap to the peer's RMA PT, where the MR with the
 * key matches (p4f_mr.c). FI_ATOMIC_READ and FI_ATOMIC_WRITE are the
 * engine's native READ and WRITE ops (a READ emulated by fetch-SUM(0)
 * would turn -0.0 into +0.0).
 *
 * Which op x datatype exists is the engine's table (p4e_atomic_valid);
 * fi_atomicvalid, fi_fetch_atomicvalid, fi_compare_atomicvalid and
 * fi_query_atomic answer from it, and the operations refuse the rest with
 * -FI_EOPNOTSUPP. FI_INT128 / FI_UINT128 are not supported. Counts:
 * atomics travel in one message, so a plain atomic carries at most
 * max_atomic_size bytes (the eager size) and a fetching one at most
 * max_fetch_atomic_size (the smaller of the eager and inject sizes);
 * fi_*valid report those as element counts.
 *
 * Buffers: the operands may be up to P4F_IOV_LIMIT fi_ioc elements; the
 * compare values and the results one contiguous fi_ioc each (the engine
 * gathers operands, but fetches into one place).
 *
 * Completion as for writes (p4f_rma.c): on the target's acceptance for
 * plain atomics, on the reply for fetching ones; FI_FENCE likewise.
 */
#include <config.h>

#include <string.h>

#include "p4f.h"

#define P4F_ATOMIC_OP_FLAGS (FI_COMPLETION | FI_INJECT | \
			     FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
			     FI_DELIVERY_COMPLETE | FI_FENCE | \
			     FI_MORE | P4F_XFER_INJECT_CALL)

/* ---- op and datatype mapping -------------------------------------------- */

static const struct {
	enum p4e_atomic_op op;
	unsigned kinds;		/* 1 << enum p4f_atomic_kind */
} p4f_atomic_op_map[FI_ATOMIC_OP_LAST] = {
#define P4F_K_PF	((1u << P4F_ATOMIC_PLAIN) | (1u << P4F_ATOMIC_FETCH))
	[FI_MIN] = { P4E_MIN, P4F_K_PF },
	[FI_MAX] = { P4E_MAX, P4F_K_PF },
	[FI_SUM] = { P4E_SUM, P4F_K_PF },
	[FI_PROD] = { P4E_PROD, P4F_K_PF },
	[FI_LOR] = { P4E_LOR, P4F_K_PF },
	[FI_LAND] = { P4E_LAND, P4F_K_PF },
	[FI_BOR] = { P4E_BOR, P4F_K_PF },
	[FI_BAND] = { P4E_BAND, P4F_K_PF },
	[FI_LXOR] = { P4E_LXOR, P4F_K_PF },
	[FI_BXOR] = { P4E_BXOR, P4F_K_PF },
	[FI_ATOMIC_READ] = { P4E_ATOMIC_READ, 1u << P4F_ATOMIC_FETCH },
	[FI_ATOMIC_WRITE] = { P4E_ATOMIC_WRITE, P4F_K_PF },
	[FI_CSWAP] = { P4E_CSWAP, 1u << P4F_ATOMIC_COMPARE },
	[FI_CSWAP_NE] = { P4E_CSWAP_NE, 1u << P4F_ATOMIC_COMPARE },
	[FI_CSWAP_LE] = { P4E_CSWAP_LE, 1u << P4F_ATOMIC_COMPARE },
	[FI_CSWAP_LT] = { P4E_CSWAP_LT, 1u << P4F_ATOMIC_COMPARE },
	[FI_CSWAP_GE] = { P4E_CSWAP_GE, 1u << P4F_ATOMIC_COMPARE },
	[FI_CSWAP_GT] = { P4E_CSWAP_GT, 1u << P4F_ATOMIC_COMPARE },
	[FI_MSWAP] = { P4E_MSWAP, 1u << P4F_ATOMIC_COMPARE },
#undef P4F_K_PF
};

static const enum p4e_atomic_type p4f_atomic_type_map[FI_DATATYPE_LAST] = {
	[FI_INT8] = P4E_INT8,
	[FI_UINT8] = P4E_UINT8,
	[FI_INT16] = P4E_INT16,
	[FI_UINT16] = P4E_UINT16,
	[FI_INT32] = P4E_INT32,
	[FI_UINT32] = P4E_UINT32,
	[FI_INT64] = P4E_INT64,
	[FI_UINT64] = P4E_UINT64,
	[FI_FLOAT] = P4E_FLOAT,
	[FI_DOUBLE] = P4E_DOUBLE,
	[FI_FLOAT_COMPLEX] = P4E_FLOAT_COMPLEX,
	[FI_DOUBLE_COMPLEX] = P4E_DOUBLE_COMPLEX,
	[FI_LONG_DOUBLE] = P4E_LONG_DOUBLE,
	[FI_LONG_DOUBLE_COMPLEX] = P4E_LONG_DOUBLE_COMPLEX,
};

/*
 * The engine's op and type for (op, datatype) used as kind: 0, or
 * -FI_EOPNOTSUPP for a combination that does not exist here (INT128 and
 * UINT128 included, and an op of another kind, e.g. FI_CSWAP through
 * fi_atomic), -FI_EINVAL for values libfabric does not define.
 */
static int p4f_atomic_map(enum fi_op op, enum fi_datatype datatype,
			  enum p4f_atomic_kind kind,
			  enum p4e_atomic_op *eop_p,
			  enum p4e_atomic_type *etype_p)
{
	enum p4e_atomic_op eop;
	enum p4e_atomic_type etype;

	if ((unsigned)op >= FI_ATOMIC_OP_LAST)
		return -FI_EINVAL;
	if (datatype == FI_INT128 || datatype == FI_UINT128)
		return -FI_EOPNOTSUPP;
	if ((unsigned)datatype >= FI_DATATYPE_LAST)
		return -FI_EINVAL;
	if (!(p4f_atomic_op_map[op].kinds & (1u << kind)))
		return -FI_EOPNOTSUPP;
	eop = p4f_atomic_op_map[op].op;
	etype = p4f_atomic_type_map[datatype];
	if (!p4e_atomic_valid(eop, etype, kind != P4F_ATOMIC_PLAIN))
		return -FI_EOPNOTSUPP;
	*eop_p = eop;
	*etype_p = etype;
	return 0;
}

/* The source of an FI_ATOMIC_READ (see p4f_atomic_prep_locked); .bss,
 * never written, so it costs no memory. */
static uint8_t p4f_atomic_zero[1 << 16];

/* Byte ceilings of one atomic with these engine limits. */
static uint64_t p4f_atomic_max_bytes(const struct p4e_ni_limits *lim,
				     enum p4f_atomic_kind kind)
{
	return kind == P4F_ATOMIC_PLAIN ? lim->max_atomic_size :
					  lim->max_fetch_atomic_size;
}

/* The limits an endpoint of default attributes gets (fi_query_atomic is a
 * domain call): the engine's rules over the FI_PORTALS_* sizes. */
static void p4f_atomic_default_limits(struct p4e_ni_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->max_atomic_size = p4f_eager_min();
	lim->max_fetch_atomic_size = P4U_MIN(p4f_eager_min(),
					     p4f_params.inject_size);
}

static int p4f_atomic_valid_count(const struct p4e_ni_limits *lim,
				  enum fi_op op, enum fi_datatype datatype,
				  enum p4f_atomic_kind kind, size_t *count_p)
{
	enum p4e_atomic_op eop;
	enum p4e_atomic_type etype;
	int ret;

	ret = p4f_atomic_map(op, datatype, kind, &eop, &etype);
	if (ret)
		return ret;
	if (count_p)
		*count_p = (size_t)(p4f_atomic_max_bytes(lim, kind) /
				    p4e_atomic_type_size(etype));
	return 0;
}

int p4f_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr,
		     uint64_t flags)
{
	enum p4f_atomic_kind kind = P4F_ATOMIC_PLAIN;
	struct p4e_ni_limits lim;
	size_t count;
	int ret;

	(void)domain;
	if (!attr)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC |
				FI_TAGGED))
		return -FI_EBADFLAGS;
	if ((flags & FI_FETCH_ATOMIC) && (flags & FI_COMPARE_ATOMIC))
		return -FI_EINVAL;
	if (flags & FI_TAGGED)
		return -FI_EOPNOTSUPP;	/* no tagged atomics */
	if (flags & FI_FETCH_ATOMIC)
		kind = P4F_ATOMIC_FETCH;
	else if (flags & FI_COMPARE_ATOMIC)
		kind = P4F_ATOMIC_COMPARE;
	p4f_atomic_default_limits(&lim);
	ret = p4f_atomic_valid_count(&lim, op, datatype, kind, &count);
	if (ret)
		return ret;
	attr->size = p4e_atomic_type_size(p4f_atomic_type_map[datatype]);
	attr->count = count;
	return 0;
}

/* ---- posting ------------------------------------------------------------ */

/* Elements in iov[count], each ioc checked; false on a bad one. */
static bool p4f_atomic_ioc_ok(const struct fi_ioc *iov, size_t count,
			      size_t limit, size_t *elems_p)
{
	size_t i, n = 0;

	if (count > limit || (count && !iov))
		return false;
	for (i = 0; i < count; i++) {
		if (iov[i].count && !iov[i].addr)
			return false;
		if (n + iov[i].count < n)
			return false;
		n += iov[i].count;
	}
	*elems_p = n;
	return true;
}

static uint64_t p4f_atomic_cq_flags(enum p4f_atomic_kind kind)
{
	return FI_ATOMIC | (kind == P4F_ATOMIC_PLAIN ? FI_WRITE : FI_READ);
}

/* Operands, compare values and results of a: element counts agree. */
static int p4f_atomic_bufs(const struct p4f_atomic_args *a, bool read_op,
			   size_t *elems_p)
{
	size_t n = 0, m;

	if (!read_op && !p4f_atomic_ioc_ok(a->iov, a->count, P4F_IOV_LIMIT,
					   &n))
		return -FI_EINVAL;
	if (a->kind != P4F_ATOMIC_PLAIN) {
		if (!p4f_atomic_ioc_ok(a->result, a->result_count, 1, &m) ||
		    a->result_count != 1)
			return -FI_EINVAL;
		if (read_op)
			n = m;	/* FI_ATOMIC_READ: the operand is ignored */
		if (m != n)
			return -FI_EINVAL;
	}
	if (a->kind == P4F_ATOMIC_COMPARE &&
	    (!p4f_atomic_ioc_ok(a->compare, a->compare_count, 1, &m) ||
	     a->compare_count != 1 || m != n))
		return -FI_EINVAL;
	if (!n)
		return -FI_EINVAL;
	*elems_p = n;
	return 0;
}

int p4f_atomic_prep_locked(struct p4f_ep *ep, const struct p4f_atomic_args *a,
			   struct iovec *iov_buf, struct p4e_xfer *x)
{
	uint64_t flags = a->flags | p4f_atomic_cq_flags(a->kind);
	enum p4e_atomic_op eop;
	enum p4e_atomic_type etype;
	size_t n, esize, i;
	int ret;

	p4f_worker_assert_held(ep->worker);
	if (a->flags & ~P4F_ATOMIC_OP_FLAGS & ~(uint64_t)FI_TRIGGER)
		return -FI_EBADFLAGS;
	ret = p4f_atomic_map(a->op, a->datatype, a->kind, &eop, &etype);
	if (ret)
		return ret;
	ret = p4f_atomic_bufs(a, eop == P4E_ATOMIC_READ, &n);
	if (ret)
		return ret;
	esize = p4e_atomic_type_size(etype);
	if (n > SIZE_MAX / esize)
		return -FI_EINVAL;
	if ((flags & FI_INJECT) &&
	    (a->kind != P4F_ATOMIC_PLAIN || n * esize > ep->inject_size))
		return -FI_EINVAL;
	memset(x, 0, sizeof(*x));
	ret = p4f_av_peer(ep->av, a->addr, &x->target);
	if (ret)
		return ret;
	x->pt_index = P4F_PT_RMA;
	x->match_bits = a->key;
	x->remote_offset = a->raddr;
	x->user_ptr = a->context;
	x->user_flags = flags;
	x->length = n * esize;
	x->atomic_op = eop;
	x->atomic_type = etype;
	if (flags & FI_MORE)	/* may wait for the next one (§8.5) */
		x->flags = P4E_XFER_MORE;
	x->md = (flags & FI_INJECT) ? ep->md_rma_volatile : ep->md_rma;
	x->get_md = P4E_HANDLE_NONE;
	/* plain atomics complete on the target's acceptance, fetching ones
	 * on their reply */
	x->ack_req = a->kind == P4F_ATOMIC_PLAIN ? P4E_ACK_ACCEPT :
						   P4E_NO_ACK_REQ;
	if (a->kind != P4F_ATOMIC_PLAIN) {
		x->get_md = ep->md_rma;
		x->get_local_offset = (uint64_t)(uintptr_t)a->result[0].addr;
	}
	if (a->kind == P4F_ATOMIC_COMPARE)
		x->operand = a->compare[0].addr;
	if (eop == P4E_ATOMIC_READ) {
		/*
		 * Nothing to send, but the engine sends length bytes from
		 * the source: zeros, never the result buffer, which is
		 * output only (its old bytes may be uninitialised or
		 * private; valgrind.sh caught them on the wire). Fetching
		 * atomics are at most FI_PORTALS_INJECT_SIZE (<= 64 KiB).
		 */
		if (x->length > sizeof(p4f_atomic_zero))
			return -FI_EINVAL;
		x->local_offset = (uint64_t)(uintptr_t)p4f_atomic_zero;
	} else if (a->count == 1) {
		x->local_offset = (uint64_t)(uintptr_t)a->iov[0].addr;
	} else {
		for (i = 0; i < a->count; i++) {
			iov_buf[i].iov_base = a->iov[i].addr;
			iov_buf[i].iov_len = a->iov[i].count * esize;
		}
		x->iov = iov_buf;
		x->iovcnt = a->count;
	}
	return 0;
}

int p4f_atomic_engine_post(struct p4e_ni *ni, enum p4f_atomic_kind kind,
			   const struct p4e_xfer *x)
{
	switch (kind) {
	case P4F_ATOMIC_PLAIN:
		return p4e_atomic(ni, x);
	case P4F_ATOMIC_FETCH:
		return p4e_fetch_atomic(ni, x);
	default:
		return p4e_swap(ni, x);
	}
}

ssize_t p4f_atomic_post_args(struct p4f_ep *ep,
			     const struct p4f_atomic_args *a)
{
	struct iovec iov[P4F_IOV_LIMIT];
	struct p4e_xfer x;
	ssize_t ret;

	/* triggered atomics are built by p4f_atomic_prep_locked too, but
	 * handed to the engine's triggered list (p4f_trigger.c) */
	if (a->flags & FI_TRIGGER)
		return p4f_trigger_atomic(ep, a);
	ep = p4f_ep_data(ep);	/* an alias: its flags are in a already */
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	p4f_ep_lock(ep);
	ret = p4f_atomic_prep_locked(ep, a, iov, &x);
	if (ret)
		goto out;
	if (ep->tx_pending >= ep->tx_size ||
	    ((a->flags & FI_FENCE) && ep->tx_pending)) {
		p4f_worker_progress_locked(ep->worker);
		ret = -FI_EAGAIN;
		goto out;
	}
	/* counted first: the completion may come before the call returns */
	ep->tx_pending++;
	ret = p4f_atomic_engine_post(ep->ni, a->kind, &x);
	if (ret)
		ep->tx_pending--;
	if (ret == -FI_EAGAIN)
		p4f_worker_progress_locked(ep->worker);
out:
	p4f_ep_unlock(ep);
	return ret;
}

/* ---- fi_ops_atomic ------------------------------------------------------ */

static struct p4f_ep *p4f_atomic_ep(struct fid_ep *fid)
{
	return container_of(fid, struct p4f_ep, ep_fid);
}

static uint64_t p4f_atomic_def_flags(struct p4f_ep *ep)
{
	return ep->tx_op_flags & P4F_ATOMIC_OP_FLAGS & ~(uint64_t)FI_INJECT;
}

/* The common part of every call: one remote range. */
static ssize_t p4f_atomic_call(struct fid_ep *fid, struct p4f_atomic_args *a,
			       fi_addr_t addr, uint64_t raddr, uint64_t key,
			       enum fi_datatype datatype, enum fi_op op,
			       void *context)
{
	a->addr = addr;
	a->raddr = raddr;
	a->key = key;
	a->datatype = datatype;
	a->op = op;
	a->context = context;
	return p4f_atomic_post_args(p4f_atomic_ep(fid), a);
}

static ssize_t p4f_atomic_msg(struct fid_ep *fid, struct p4f_atomic_args *a,
			      const struct fi_msg_atomic *msg, uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	a->iov = msg->msg_iov;
	a->count = msg->iov_count;
	a->data = msg->data;
	a->flags = flags;
	return p4f_atomic_call(fid, a, msg->addr, msg->rma_iov[0].addr,
			       msg->rma_iov[0].key, msg->datatype, msg->op,
			       msg->context);
}

static ssize_t p4f_atomic_write(struct fid_ep *fid, const void *buf,
				size_t count, void *desc, fi_addr_t dest_addr,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct p4f_atomic_args a = {
		.kind = P4F_ATOMIC_PLAIN, .iov = &ioc, .count = 1,
		.flags = p4f_atomic_ep(fid)->tx_op_flags & P4F_ATOMIC_OP_FLAGS,
	};

	(void)desc;
	return p4f_atomic_call(fid, &a, dest_addr, addr, key, datatype, op,
			       context);
}

static ssize_t p4f_atomic_writev(struct fid_ep *fid, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key, enum fi_datatype datatype,
				 enum fi_op op, void *context)
{
	struct p4f_atomic_args a = {
		.kind = P4F_ATOMIC_PLAIN, .iov = iov, .count = count,
		.flags = p4f_atomic_ep(fid)->tx_op_flags & P4F_ATOMIC_OP_FLAGS,
	};

	(void)desc;
	return p4f_atomic_call(fid, &a, dest_addr, addr, key, datatype, op,
			       context);
}

static ssize_t p4f_atomic_writemsg(struct fid_ep *fid,
				   const struct fi_msg_atomic *msg,
				   uint64_t flags)
{
	struct p4f_atomic_args a = { .kind = P4F_ATOMIC_PLAIN };

	return p4f_atomic_msg(fid, &a, msg, flags);
}

static ssize_t p4f_atomic_inject(struct fid_ep *fid, const void *buf,
				 size_t count, fi_addr_t dest_addr,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct p4f_atomic_args a = {
		.kind = P4F_ATOMIC_PLAIN, .iov = &ioc, .count = 1,
		.flags = FI_INJECT | P4F_XFER_INJECT_CALL,
	};

	return p4f_atomic_call(fid, &a, dest_addr, addr, key, datatype, op,
			       NULL);
}

static ssize_t p4f_atomic_readwrite(struct fid_ep *fid, const void *buf,
				    size_t count, void *desc, void *result,
				    void *result_desc, fi_addr_t dest_addr,
				    uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op,
				    void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct p4f_atomic_args a = {
		.kind = P4F_ATOMIC_FETCH, .iov = &ioc, .count = 1,
		.result = &res, .result_count = 1,
		.flags = p4f_atomic_def_flags(p4f_atomic_ep(fid)),
	};

	(void)desc;
	(void)result_desc;
	return p4f_atomic_call(fid, &a, dest_addr, addr, key, datatype, op,
			       context);
}

static ssize_t p4f_atomic_readwritev(struct fid_ep *fid,
				     const struct fi_ioc *iov, void **desc,
				     size_t count, struct fi_ioc *resultv,
				     void **result_desc, size_t result_count,
				     fi_addr_t dest_addr, uint64_t addr,
				     uint64_t key, enum fi_datatype datatype,
				     enum fi_op op, void *context)
{
	struct p4f_atomic_args a = {
		.kind = P4F_ATOMIC_FETCH, .iov = iov, .count = count,
		.result = resultv, .result_count = result_count,
		.flags = p4f_atomic_def_flags(p4f_atomic_ep(fid)),
	};

	(void)desc;
	(void)result_desc;
	return p4f_atomic_call(fid, &a, dest_addr, addr, key, datatype, op,
			       context);
}

static ssize_t p4f_atomic_readwritemsg(struct fid_ep *fid,
				       const struct fi_msg_atomic *msg,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	struct p4f_atomic_args a = {
		.kind = P4F_ATOMIC_FETCH,
		.result = resultv, .result_count = result_count,
	};

	(void)result_desc;
	return p4f_atomic_msg(fid, &a, msg, flags);
}

static ssize_t p4f_atomic_compwrite(struct fid_ep *fid, const void *buf,
				    size_t count, void *desc,
				    const void *compare, void *compare_desc,
				    void *result, void *result_desc,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype,
				    enum fi_op op, void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc cmp = { .addr = (void *)compare, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct p4f_atomic_args a = {
		.kind = P4F_ATOMIC_COMPARE, .iov = &ioc, .count = 1,
		.compare = &cmp, .compare_count = 1,
		.result = &res, .result_count = 1,
		.flags = p4f_atomic_def_flags(p4f_atomic_ep(fid)),
	};

	(void)desc;
	(void)compare_desc;
	(void)result_desc;
	return p4f_atomic_call(fid, &a, dest_addr, addr, key, datatype, op,
			       context);
}

static ssize_t p4f_atomic_compwritev(struct fid_ep *fid,
				     const struct fi_ioc *iov, void **desc,
				     size_t count,
				     const struct fi_ioc *comparev,
				     void **compare_desc, size_t compare_count,
				     struct fi_ioc *resultv,
				     void **result_desc, size_t result_count,
				     fi_addr_t dest_addr, uint64_t addr,
				     uint64_t key, enum fi_datatype datatype,
				     enum fi_op op, void *context)
{
	struct p4f_atomic_args a = {
		.kind = P4F_ATOMIC_COMPARE, .iov = iov, .count = count,
		.compare = comparev, .compare_count = compare_count,
		.result = resultv, .result_count = result_count,
		.flags = p4f_atomic_def_flags(p4f_atomic_ep(fid)),
	};

	(void)desc;
	(void)compare_desc;
	(void)result_desc;
	return p4f_atomic_call(fid, &a, dest_addr, addr, key, datatype, op,
			       context);
}

static ssize_t p4f_atomic_compwritemsg(struct fid_ep *fid,
				       const struct fi_msg_atomic *msg,
				       const struct fi_ioc *comparev,
				       void **compare_desc,
				       size_t compare_count,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	struct p4f_atomic_args a = {
		.kind = P4F_ATOMIC_COMPARE,
		.compare = comparev, .compare_count = compare_count,
		.result = resultv, .result_count = result_count,
	};

	(void)compare_desc;
	(void)result_desc;
	return p4f_atomic_msg(fid, &a, msg, flags);
}

static int p4f_atomic_ep_valid(struct fid_ep *fid, enum fi_datatype datatype,
			       enum fi_op op, enum p4f_atomic_kind kind,
			       size_t *count)
{
	struct p4f_ep *ep = p4f_atomic_ep(fid);
	struct p4e_ni_limits lim;

	/* the NI's limits are fixed at fi_endpoint: no lock needed */
	p4e_ni_limits_get(ep->ni, &lim);
	return p4f_atomic_valid_count(&lim, op, datatype, kind, count);
}

static int p4f_atomic_writevalid(struct fid_ep *fid,
				 enum fi_datatype datatype, enum fi_op op,
				 size_t *count)
{
	return p4f_atomic_ep_valid(fid, datatype, op, P4F_ATOMIC_PLAIN, count);
}

static int p4f_atomic_readwritevalid(struct fid_ep *fid,
				     enum fi_datatype datatype, enum fi_op op,
				     size_t *count)
{
	return p4f_atomic_ep_valid(fid, datatype, op, P4F_ATOMIC_FETCH, count);
}

static int p4f_atomic_compwritevalid(struct fid_ep *fid,
				     enum fi_datatype datatype, enum fi_op op,
				     size_t *count)
{
	return p4f_atomic_ep_valid(fid, datatype, op, P4F_ATOMIC_COMPARE,
				   count);
}

struct fi_ops_atomic p4f_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = p4f_atomic_write,
	.writev = p4f_atomic_writev,
	.writemsg = p4f_atomic_writemsg,
	.inject = p4f_atomic_inject,
	.readwrite = p4f_atomic_readwrite,
	.readwritev = p4f_atomic_readwritev,
	.readwritemsg = p4f_atomic_readwritemsg,
	.compwrite = p4f_atomic_compwrite,
	.compwritev = p4f_atomic_compwritev,
	.compwritemsg = p4f_atomic_compwritemsg,
	.writevalid = p4f_atomic_writevalid,
	.readwritevalid = p4f_atomic_readwritevalid,
	.compwritevalid = p4f_atomic_compwritevalid,
};
