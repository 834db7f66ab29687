/*
 * p4f_trigger.c - triggered operations (fi_trigger(3)) on the engine's
 * triggered-op lists (docs/design.md §3):
 *
 *   - the FI_TRIGGER flag with a struct fi_triggered_context
 *     (FI_TRIGGER_THRESHOLD): fires when the counter's *success* value
 *     reaches the threshold (P4E_TRIG_SUCCESS_ONLY), completes like the
 *     same operation posted without the flag;
 *   - deferred work, fi_control(domain, FI_QUEUE_WORK): fires when success
 *     + error reaches the threshold, writes CQ entries and counts on the
 *     endpoint's counters only with FI_COMPLETION, and increments
 *     completion_cntr once per data operation (the engine counts on the
 *     CT of a per-endpoint MD, or of the receive's ME). Everything the
 *     request points to is copied before the call returns.
 *
 * The engine keeps every pending operation: each is posted with the
 * deferred-work descriptor as its cookie, so FI_CANCEL_WORK cancels
 * exactly the matching ones (p4e_trig_cancel) and FI_FLUSH_WORK every one
 * of a counter. An operation that will report a completion takes a tx
 * (rx) slot at post, marked P4F_XFER_SLOT in its flags; one cancelled
 * before it fires gives the slot back through the NI's trig_dropped
 * callback. The data-path entry points run with the endpoint's worker
 * lock held.
 *
 * RMA and atomics are built by the RMA layer's *_prep_locked functions
 * (p4f_rma.h), as for an immediate post. Not here: more than one remote
 * range for RMA and atomics (-FI_ENOSYS).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "p4f.h"

/* The engine's description of when an op fires. */
static int p4f_trig_of(struct p4f_ep *ep, const struct p4f_trig_req *req,
		       void *context, uint64_t flags, struct p4e_trig *trig)
{
	struct fi_triggered_context *tc = context;
	struct p4f_cntr *cntr;
	uint64_t threshold;

	if (req) {
		cntr = req->cntr;
		threshold = req->threshold;
	} else {
		if (!tc || !(flags & FI_TRIGGER))
			return -FI_EINVAL;
		if (tc->event_type != FI_TRIGGER_THRESHOLD)
			return -FI_ENOSYS;
		if (!tc->trigger.threshold.cntr)
			return -FI_EINVAL;
		cntr = p4f_cntr_of(tc->trigger.threshold.cntr);
		threshold = tc->trigger.threshold.threshold;
	}
	if (!cntr || p4f_cntr_domain(cntr) != ep->domain)
		return -FI_EINVAL;
	*trig = (struct p4e_trig){
		.ct = p4f_cntr_ct(cntr),
		.threshold = threshold,
		/* FI_TRIGGER: success only (fi_portals.7); deferred:
		 * success + error */
		.flags = req ? 0 : P4E_TRIG_SUCCESS_ONLY,
		/* FI_CANCEL_WORK names the descriptor */
		.cookie = req ? (uint64_t)(uintptr_t)req->work : 0,
	};
	return 0;
}

void p4f_trigger_dropped(void *ctx, void *user_ptr, uint64_t user_flags)
{
	struct p4f_ep *ep = ctx;

	(void)user_ptr;
	if (!(user_flags & P4F_XFER_SLOT))
		return;
	if (user_flags & FI_RECV)
		ep->rx_pending--;
	else
		ep->tx_pending--;
}

/* The MDs deferred sends use: eq and completion CT differ per request. */
struct p4f_trig_md {
	uint64_t ct;
	unsigned options;
	struct p4e_eq *eq;
	uint64_t md;
};

struct p4f_ep_trig {
	struct p4f_trig_md *mds;
	size_t nmds, cap;
};

/* ---- the MDs of deferred sends ---------------------------------------- */

/*
 * Deferred work without FI_COMPLETION must not reach the endpoint's CQ or
 * counters: its MD has no event queue. completion_cntr is the MD's CT,
 * counting the event that completes the op (SEND, or ACK when a
 * completion level asks for the target's acceptance). Cached per
 * endpoint; the NI releases them when it goes.
 */
static int p4f_trig_md_get(struct p4f_ep *ep, uint64_t ct, unsigned options,
			   struct p4e_eq *eq, uint64_t *md_p)
{
	struct p4f_ep_trig *et = ep->trig;
	struct p4e_md_desc desc = {
		.start = NULL,
		.length = P4E_SIZE_MAX,
		.options = options,
		.eq = eq,
		.ct = ct,
	};
	struct p4f_trig_md *mds;
	size_t i;
	int ret;

	if (!et) {
		et = calloc(1, sizeof(*et));
		if (!et)
			return -FI_ENOMEM;
		ep->trig = et;
	}
	for (i = 0; i < et->nmds; i++)
		if (et->mds[i].ct == ct && et->mds[i].options == options &&
		    et->mds[i].eq == eq) {
			*md_p = et->mds[i].md;
			return 0;
		}
	if (et->nmds == et->cap) {
		mds = realloc(et->mds, (et->cap * 2 + 4) * sizeof(*mds));
		if (!mds)
			return -FI_ENOMEM;
		et->mds = mds;
		et->cap = et->cap * 2 + 4;
	}
	ret = p4e_md_bind(ep->ni, &desc, &et->mds[et->nmds].md);
	if (ret)
		return ret;
	et->mds[et->nmds].ct = ct;
	et->mds[et->nmds].options = options;
	et->mds[et->nmds].eq = eq;
	*md_p = et->mds[et->nmds++].md;
	return 0;
}

/*
 * Point x at MDs that report what deferred work wants: the event that
 * completes the op (SEND or ACK for puts and atomics, REPLY for gets and
 * fetches) goes to the sink only with FI_COMPLETION and counts on the
 * completion counter's CT; a fetch's source MD reports nothing.
 */
static int p4f_trig_deferred_mds(struct p4f_ep *ep, enum p4f_trig_xfer_op op,
				 struct p4e_xfer *x, uint64_t flags,
				 const struct p4f_trig_req *req)
{
	struct p4e_eq *eq = NULL;
	uint64_t ct = P4E_HANDLE_NONE;
	unsigned options;
	int ret;

	if (flags & FI_COMPLETION)
		eq = x->pt_index == P4F_PT_RMA ? &ep->rma_sink.eq :
						  &ep->tx_sink.eq;
	if (req->completion_cntr)
		ct = p4f_cntr_ct(req->completion_cntr);
	switch (op) {
	case P4F_TRIG_OP_GET:
		options = P4E_MD_EVENT_CT_REPLY;
		return p4f_trig_md_get(ep, ct, ct ? options : 0, eq, &x->md);
	case P4F_TRIG_OP_FETCH:
	case P4F_TRIG_OP_SWAP:
		options = P4E_MD_EVENT_CT_REPLY;
		ret = p4f_trig_md_get(ep, ct, ct ? options : 0, eq,
				      &x->get_md);
		if (ret)
			return ret;
		return p4f_trig_md_get(ep, P4E_HANDLE_NONE, 0, NULL, &x->md);
	default:
		options = x->ack_req == P4E_ACK_ACCEPT ? P4E_MD_EVENT_CT_ACK :
							 P4E_MD_EVENT_CT_SEND;
		return p4f_trig_md_get(ep, ct, ct ? options : 0, eq, &x->md);
	}
}

void p4f_trigger_ep_fini_locked(struct p4f_ep *ep)
{
	/* the NI is gone and took its triggered ops and MDs along */
	if (ep->trig)
		free(ep->trig->mds);
	free(ep->trig);
	ep->trig = NULL;
}

/* ---- data operations ---------------------------------------------------- */

ssize_t p4f_trigger_xfer_locked(struct p4f_ep *ep, enum p4f_trig_xfer_op op,
				struct p4e_xfer *x, void *context,
				uint64_t flags, const struct p4f_trig_req *req)
{
	struct p4e_trig trig;
	bool slot = true;
	int ret;

	p4f_worker_assert_held(ep->worker);
	if (x->iovcnt > P4F_IOV_LIMIT)
		return -FI_EINVAL;
	ret = p4f_trig_of(ep, req, context, flags, &trig);
	if (ret)
		return ret;
	if (req) {
		slot = flags & FI_COMPLETION;
		ret = p4f_trig_deferred_mds(ep, op, x, flags, req);
		if (ret)
			return ret;
	}
	/* a sink event will give the slot back (or trig_dropped) */
	if (slot) {
		x->user_flags |= P4F_XFER_SLOT;
		ep->tx_pending++;
	}
	switch (op) {
	case P4F_TRIG_OP_PUT:
		ret = p4e_trig_put(ep->ni, x, &trig);
		break;
	case P4F_TRIG_OP_GET:
		ret = p4e_trig_get(ep->ni, x, &trig);
		break;
	case P4F_TRIG_OP_ATOMIC:
		ret = p4e_trig_atomic(ep->ni, x, &trig);
		break;
	case P4F_TRIG_OP_FETCH:
		ret = p4e_trig_fetch_atomic(ep->ni, x, &trig);
		break;
	default:
		ret = p4e_trig_swap(ep->ni, x, &trig);
		break;
	}
	if (ret && slot)
		ep->tx_pending--;
	return ret == -FI_ENOSPC ? -FI_EAGAIN : ret;
}

ssize_t p4f_trigger_append_locked(struct p4f_ep *ep, uint32_t pt,
				  const struct p4e_me_desc *d, void *context,
				  uint64_t flags, const struct p4f_trig_req *req)
{
	struct p4e_me_desc desc = *d;
	struct p4e_trig trig;
	bool events = true;
	uint64_t me;
	int ret;

	p4f_worker_assert_held(ep->worker);
	if (flags & (FI_PEEK | FI_CLAIM | FI_MULTI_RECV))
		return -FI_ENOSYS;
	if ((d->options & P4E_ME_IOVEC) && d->length > P4F_IOV_LIMIT)
		return -FI_EINVAL;
	ret = p4f_trig_of(ep, req, context, flags, &trig);
	if (ret)
		return ret;
	if (req) {
		events = flags & FI_COMPLETION;
		if (req->completion_cntr) {
			desc.ct = p4f_cntr_ct(req->completion_cntr);
			desc.options |= P4E_ME_EVENT_CT_COMM |
					P4E_ME_EVENT_CT_OVERFLOW;
		}
		if (!events)
			desc.options |= P4E_ME_EVENT_COMM_DISABLE |
					P4E_ME_EVENT_OVER_DISABLE;
	}
	if (events) {
		flags |= P4F_XFER_SLOT;
		ep->rx_pending++;
	}
	/* the engine copies a short iovec (P4E_XFER_IOV_MAX) with the entry */
	ret = p4e_trig_me_append(ep->ni, pt, &desc, P4E_PRIORITY_LIST, context,
				 flags, &trig, &me);
	if (ret && events)
		ep->rx_pending--;
	return ret == -FI_ENOSPC ? -FI_EAGAIN : ret;
}

/* ---- deferred work ------------------------------------------------------- */

static struct p4f_ep *p4f_trig_work_ep(struct p4f_domain *domain,
				       struct fid_ep *fid)
{
	struct p4f_ep *ep;

	if (!fid || fid->fid.fclass != FI_CLASS_EP)
		return NULL;
	ep = p4f_ep_data(p4f_ep_of(fid));
	return ep->domain == domain ? ep : NULL;
}

static int p4f_trig_queue_msg(struct p4f_domain *domain,
			      const struct fi_deferred_work *work,
			      const struct p4f_trig_req *req)
{
	bool tagged = work->op_type == FI_OP_TSEND ||
		      work->op_type == FI_OP_TRECV;
	bool send = work->op_type == FI_OP_SEND ||
		    work->op_type == FI_OP_TSEND;
	struct p4f_xfer_args a = { .trig = req };
	struct fid_ep *fid;
	struct p4f_ep *ep;

	if (tagged) {
		const struct fi_op_tagged *op = work->op.tagged;

		if (!op)
			return -FI_EINVAL;
		fid = op->ep;
		a.iov = op->msg.msg_iov;
		a.count = op->msg.iov_count;
		a.addr = op->msg.addr;
		a.tag = op->msg.tag;
		a.ignore = op->msg.ignore;
		a.data = op->msg.data;
		a.context = op->msg.context;
		a.flags = op->flags;
	} else {
		const struct fi_op_msg *op = work->op.msg;

		if (!op)
			return -FI_EINVAL;
		fid = op->ep;
		a.iov = op->msg.msg_iov;
		a.count = op->msg.iov_count;
		a.addr = op->msg.addr;
		a.data = op->msg.data;
		a.context = op->msg.context;
		a.flags = op->flags;
	}
	ep = p4f_trig_work_ep(domain, fid);
	if (!ep)
		return -FI_EINVAL;
	/* FI_TRIGGER names the other mechanism */
	a.flags &= ~FI_TRIGGER;
	/* the data path copies what it needs before it returns */
	if (send)
		return (int)p4f_xfer_send(ep, tagged ? P4F_PT_TAG : P4F_PT_MSG,
					  &a);
	return (int)p4f_xfer_recv(ep, tagged ? P4F_PT_TAG : P4F_PT_MSG, &a);
}

/* ---- one-sided: FI_TRIGGER entry points and deferred work ------------- */

/* With the lock held: build the transfer as an immediate post would. */
static ssize_t p4f_trig_rma_locked(struct p4f_ep *ep,
				   const struct p4f_rma_args *a, bool write,
				   const struct p4f_trig_req *req)
{
	struct p4e_xfer x;
	int ret;

	ret = p4f_rma_prep_locked(ep, a, write, &x);
	if (ret)
		return ret;
	return p4f_trigger_xfer_locked(ep, write ? P4F_TRIG_OP_PUT :
					       P4F_TRIG_OP_GET,
				       &x, a->context, x.user_flags, req);
}

static ssize_t p4f_trig_atomic_locked(struct p4f_ep *ep,
				      const struct p4f_atomic_args *a,
				      const struct p4f_trig_req *req)
{
	static const enum p4f_trig_xfer_op ops[] = {
		[P4F_ATOMIC_PLAIN] = P4F_TRIG_OP_ATOMIC,
		[P4F_ATOMIC_FETCH] = P4F_TRIG_OP_FETCH,
		[P4F_ATOMIC_COMPARE] = P4F_TRIG_OP_SWAP,
	};
	struct iovec iov[P4F_IOV_LIMIT];
	struct p4e_xfer x;
	int ret;

	ret = p4f_atomic_prep_locked(ep, a, iov, &x);
	if (ret)
		return ret;
	return p4f_trigger_xfer_locked(ep, ops[a->kind], &x, a->context,
				       x.user_flags, req);
}

ssize_t p4f_trigger_rma(struct p4f_ep *ep, const struct p4f_rma_args *a,
			bool write)
{
	ssize_t ret;

	ep = p4f_ep_data(ep);
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	p4f_ep_lock(ep);
	ret = p4f_trig_rma_locked(ep, a, write, NULL);
	p4f_ep_unlock(ep);
	return ret;
}

ssize_t p4f_trigger_atomic(struct p4f_ep *ep, const struct p4f_atomic_args *a)
{
	ssize_t ret;

	ep = p4f_ep_data(ep);
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	p4f_ep_lock(ep);
	ret = p4f_trig_atomic_locked(ep, a, NULL);
	p4f_ep_unlock(ep);
	return ret;
}

static int p4f_trig_queue_rma(struct p4f_domain *domain,
			      const struct fi_deferred_work *work,
			      const struct p4f_trig_req *req)
{
	const struct fi_op_rma *op = work->op.rma;
	struct p4f_rma_args a;
	struct p4f_ep *ep;
	int ret;

	if (!op || op->msg.rma_iov_count != 1 || !op->msg.rma_iov)
		return op && op->msg.rma_iov_count > 1 ? -FI_ENOSYS :
							 -FI_EINVAL;
	ep = p4f_trig_work_ep(domain, op->ep);
	if (!ep)
		return -FI_EINVAL;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	a = (struct p4f_rma_args){
		.iov = op->msg.msg_iov,
		.count = op->msg.iov_count,
		.addr = op->msg.addr,
		.raddr = op->msg.rma_iov[0].addr,
		.key = op->msg.rma_iov[0].key,
		.data = op->msg.data,
		.context = op->msg.context,
		.flags = op->flags & ~(uint64_t)FI_TRIGGER,
	};
	p4f_ep_lock(ep);
	ret = (int)p4f_trig_rma_locked(ep, &a, work->op_type == FI_OP_WRITE,
				       req);
	p4f_ep_unlock(ep);
	return ret;
}

static int p4f_trig_queue_atomic(struct p4f_domain *domain,
				 const struct fi_deferred_work *work,
				 const struct p4f_trig_req *req)
{
	const struct fi_msg_atomic *msg;
	struct p4f_atomic_args a = { .kind = P4F_ATOMIC_PLAIN };
	struct fid_ep *fid;
	struct p4f_ep *ep;
	int ret;

	switch (work->op_type) {
	case FI_OP_ATOMIC:
		if (!work->op.atomic)
			return -FI_EINVAL;
		fid = work->op.atomic->ep;
		msg = &work->op.atomic->msg;
		a.flags = work->op.atomic->flags;
		break;
	case FI_OP_FETCH_ATOMIC:
		if (!work->op.fetch_atomic)
			return -FI_EINVAL;
		fid = work->op.fetch_atomic->ep;
		msg = &work->op.fetch_atomic->msg;
		a.kind = P4F_ATOMIC_FETCH;
		a.result = work->op.fetch_atomic->fetch.msg_iov;
		a.result_count = work->op.fetch_atomic->fetch.iov_count;
		a.flags = work->op.fetch_atomic->flags;
		break;
	default:
		if (!work->op.compare_atomic)
			return -FI_EINVAL;
		fid = work->op.compare_atomic->ep;
		msg = &work->op.compare_atomic->msg;
		a.kind = P4F_ATOMIC_COMPARE;
		a.result = work->op.compare_atomic->fetch.msg_iov;
		a.result_count = work->op.compare_atomic->fetch.iov_count;
		a.compare = work->op.compare_atomic->compare.msg_iov;
		a.compare_count = work->op.compare_atomic->compare.iov_count;
		a.flags = work->op.compare_atomic->flags;
		break;
	}
	if (msg->rma_iov_count != 1 || !msg->rma_iov)
		return msg->rma_iov_count > 1 ? -FI_ENOSYS : -FI_EINVAL;
	ep = p4f_trig_work_ep(domain, fid);
	if (!ep)
		return -FI_EINVAL;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	a.iov = msg->msg_iov;
	a.count = msg->iov_count;
	a.addr = msg->addr;
	a.raddr = msg->rma_iov[0].addr;
	a.key = msg->rma_iov[0].key;
	a.datatype = msg->datatype;
	a.op = msg->op;
	a.data = msg->data;
	a.context = msg->context;
	a.flags &= ~(uint64_t)FI_TRIGGER;
	p4f_ep_lock(ep);
	ret = (int)p4f_trig_atomic_locked(ep, &a, req);
	p4f_ep_unlock(ep);
	return ret;
}

static int p4f_trig_queue_cntr(struct p4f_domain *domain,
			       const struct fi_deferred_work *work,
			       const struct p4f_trig_req *req)
{
	const struct fi_op_cntr *op = work->op.cntr;
	struct p4e_ct_event val = { 0, 0 };
	struct p4f_cntr *target;
	struct p4e_trig trig;
	int ret;

	/* fi_trigger(3): counter operations have no completion counter */
	if (!op || !op->cntr || work->completion_cntr)
		return -FI_EINVAL;
	target = p4f_cntr_of(op->cntr);
	if (p4f_cntr_domain(target) != domain)
		return -FI_EINVAL;
	trig = (struct p4e_trig){
		.ct = p4f_cntr_ct(req->cntr),
		.threshold = req->threshold,
		.cookie = (uint64_t)(uintptr_t)work,
	};
	val.success = op->value;
	if (work->op_type == FI_OP_CNTR_SET) {
		/* like fi_cntr_set: the error value stays */
		trig.flags |= P4E_TRIG_SET_SUCCESS;
		ret = p4e_trig_ct_set(domain->edom, p4f_cntr_ct(target), val,
				      &trig);
	} else {
		ret = p4e_trig_ct_inc(domain->edom, p4f_cntr_ct(target), val,
				      &trig);
	}
	/* met already: what it changed may fire ops at once */
	if (!ret)
		p4f_domain_run_triggered(domain);
	return ret == -FI_ENOSPC ? -FI_EAGAIN : ret;
}

static int p4f_trig_queue(struct p4f_domain *domain,
			  const struct fi_deferred_work *work)
{
	struct p4f_trig_req req;

	if (!work || !work->triggering_cntr)
		return -FI_EINVAL;
	req = (struct p4f_trig_req){
		.cntr = p4f_cntr_of(work->triggering_cntr),
		.threshold = work->threshold,
		.completion_cntr = work->completion_cntr ?
			p4f_cntr_of(work->completion_cntr) : NULL,
		.work = work,
	};
	if (p4f_cntr_domain(req.cntr) != domain ||
	    (req.completion_cntr &&
	     p4f_cntr_domain(req.completion_cntr) != domain))
		return -FI_EINVAL;
	switch (work->op_type) {
	case FI_OP_SEND:
	case FI_OP_RECV:
	case FI_OP_TSEND:
	case FI_OP_TRECV:
		return p4f_trig_queue_msg(domain, work, &req);
	case FI_OP_READ:
	case FI_OP_WRITE:
		return p4f_trig_queue_rma(domain, work, &req);
	case FI_OP_ATOMIC:
	case FI_OP_FETCH_ATOMIC:
	case FI_OP_COMPARE_ATOMIC:
		return p4f_trig_queue_atomic(domain, work, &req);
	case FI_OP_CNTR_SET:
	case FI_OP_CNTR_ADD:
		return p4f_trig_queue_cntr(domain, work, &req);
	default:
		/* collectives, FI_OP_NONE, anything newer */
		FI_INFO(&p4f_prov, FI_LOG_DOMAIN,
			"deferred work of type %d is not supported\n",
			(int)work->op_type);
		return -FI_ENOSYS;
	}
}

/*
 * FI_CANCEL_WORK: the pending operations queued with this descriptor at
 * its threshold; FI_FLUSH_WORK: every pending operation of its counter,
 * or of every counter of the domain without one.
 */
static int p4f_trig_cancel(struct p4f_domain *domain,
			   const struct fi_deferred_work *work, bool flush)
{
	struct p4f_cntr *cntr;
	struct p4e_trig trig;
	int ret;

	if (!flush && (!work || !work->triggering_cntr))
		return -FI_EINVAL;
	if (!work || !work->triggering_cntr)
		return p4f_cntr_cancel_triggered_all(domain);
	cntr = p4f_cntr_of(work->triggering_cntr);
	if (p4f_cntr_domain(cntr) != domain)
		return -FI_EINVAL;
	if (flush) {
		ret = p4e_ct_cancel_triggered(domain->edom, p4f_cntr_ct(cntr));
	} else {
		trig = (struct p4e_trig){
			.ct = p4f_cntr_ct(cntr),
			.threshold = work->threshold,
			.cookie = (uint64_t)(uintptr_t)work,
		};
		ret = p4e_trig_cancel(domain->edom, &trig);
	}
	/* the cancelled ops' slots come back before the call returns */
	p4f_domain_run_triggered(domain);
	return ret < 0 ? ret : 0;
}

int p4f_trigger_control(struct p4f_domain *domain, int command, void *arg)
{
	switch (command) {
	case FI_QUEUE_WORK:
		return p4f_trig_queue(domain, arg);
	case FI_CANCEL_WORK:
		return p4f_trig_cancel(domain, arg, false);
	case FI_FLUSH_WORK:
		return p4f_trig_cancel(domain, arg, true);
	default:
		return -FI_ENOSYS;
	}
}
