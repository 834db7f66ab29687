/*
 * p4f_trigger.c - triggered operations (fi_trigger(3)) on the engine's
 * triggered-op lists (DESIGN.md §3):
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
 * The engine cannot cancel one triggered operation, only every one
 * waiting on a CT; and it does not say when one fired. So each pending
 * operation also has a record here: in domain->trig_recs in post order,
 * and in its counter's list for its rule, by threshold (FIFO among
 * equals), which the counter's CT notification walks exactly as the
 * engine collects what is due: a record that becomes due is dropped (its
 * operation fired). FI_CANCEL_WORK cancels the CT's operations in the
 * engine and posts the survivors again, in their post order. Records also
 * give back the tx/rx slots of operations cancelled before they fire.
 * Domain lock held throughout.
 *
 * RMA and atomics are built by the RMA layer's *_prep_locked functions
 * (p4f_rma.h), as for an immediate post. Not here: more than one remote
 * range for RMA and atomics (-FI_ENOSYS).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "p4f.h"

enum p4f_trig_kind {
	P4F_TRIG_XFER,		/* put / get / atomic / fetch / swap */
	P4F_TRIG_APPEND,	/* a receive */
	P4F_TRIG_CT_INC,
	P4F_TRIG_CT_SET,
};

struct p4f_trig_rec {
	struct p4u_list link;		/* in domain->trig_recs */
	struct p4u_list clink;		/* in the counter's list, by threshold */
	enum p4f_trig_kind kind;
	struct p4f_cntr *cntr;		/* triggering counter */
	struct p4e_trig trig;
	const void *work;		/* fi_deferred_work, or NULL */
	struct p4f_ep *ep;		/* data ops: the data endpoint */
	bool counted_tx, counted_rx;	/* holds a tx / rx slot */
	/* P4F_TRIG_XFER */
	enum p4f_trig_xfer_op op;
	struct p4e_xfer xfer;
	/* P4F_TRIG_APPEND: desc.start points into iov when it is an iovec */
	uint32_t pt;
	struct p4e_me_desc desc;
	struct iovec iov[P4F_IOV_LIMIT];	/* and xfer.iov, for XFER */
	void *user_ptr;
	uint64_t user_flags;
	uint64_t me;
	/* P4F_TRIG_CT_*: a handle, not a pointer: the target may close */
	uint64_t target_ct;
	struct p4e_ct_event val;
};

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

/* ---- records ------------------------------------------------------------ */

static bool p4f_trig_rec_due(const struct p4f_trig_rec *rec,
			     const struct p4e_ct_event *ev)
{
	uint64_t value = ev->success;

	if (!(rec->trig.flags & P4E_TRIG_SUCCESS_ONLY))
		value += ev->failure;
	return value >= rec->trig.threshold;
}

/* Forget a record; an op that never fired gives its slot back. */
static void p4f_trig_rec_free(struct p4f_trig_rec *rec, bool fired)
{
	if (!fired && rec->counted_tx)
		rec->ep->tx_pending--;
	if (!fired && rec->counted_rx)
		rec->ep->rx_pending--;
	p4u_list_remove(&rec->link);
	p4u_list_remove(&rec->clink);
	free(rec);
}

/* Into the counter's list for its rule, after every equal threshold. */
static void p4f_trig_rec_link_cntr(struct p4f_trig_rec *rec)
{
	struct p4u_list *list = p4f_cntr_trig_list(rec->cntr,
		rec->trig.flags & P4E_TRIG_SUCCESS_ONLY);
	struct p4u_list *pos = list->prev;

	while (pos != list &&
	       container_of(pos, struct p4f_trig_rec, clink)->trig.threshold >
		       rec->trig.threshold)
		pos = pos->prev;
	p4u_list_insert_between(&rec->clink, pos, pos->next);
}

void p4f_trigger_cntr_changed_locked(struct p4f_cntr *cntr,
				     const struct p4e_ct_event *ev)
{
	struct p4f_trig_rec *rec;
	int rule;

	for (rule = 0; rule < 2; rule++)
		while ((rec = p4u_list_first_entry(p4f_cntr_trig_list(cntr,
							rule), struct p4f_trig_rec,
						   clink)) &&
		       p4f_trig_rec_due(rec, ev))
			p4f_trig_rec_free(rec, true);
}

static int p4f_trig_rec_post(struct p4f_domain *domain,
			     struct p4f_trig_rec *rec)
{
	struct p4e_ni *ni = rec->ep ? rec->ep->ni : NULL;

	switch (rec->kind) {
	case P4F_TRIG_XFER:
		switch (rec->op) {
		case P4F_TRIG_OP_PUT:
			return p4e_trig_put(ni, &rec->xfer, &rec->trig);
		case P4F_TRIG_OP_GET:
			return p4e_trig_get(ni, &rec->xfer, &rec->trig);
		case P4F_TRIG_OP_ATOMIC:
			return p4e_trig_atomic(ni, &rec->xfer, &rec->trig);
		case P4F_TRIG_OP_FETCH:
			return p4e_trig_fetch_atomic(ni, &rec->xfer,
						     &rec->trig);
		case P4F_TRIG_OP_SWAP:
			return p4e_trig_swap(ni, &rec->xfer, &rec->trig);
		}
		return -FI_EINVAL;
	case P4F_TRIG_APPEND:
		return p4e_trig_me_append(ni, rec->pt, &rec->desc,
					  P4E_PRIORITY_LIST, rec->user_ptr,
					  rec->user_flags, &rec->trig,
					  &rec->me);
	case P4F_TRIG_CT_INC:
		return p4e_trig_ct_inc(domain->edom, rec->target_ct, rec->val,
				       &rec->trig);
	case P4F_TRIG_CT_SET:
		return p4e_trig_ct_set(domain->edom, rec->target_ct, rec->val,
				       &rec->trig);
	}
	return -FI_EINVAL;
}

/*
 * Post a new record's op. The sinks' pending counts go onto the CTs
 * first, so "already met" is judged on the real value; an op met at post
 * fires before the call returns and needs no record. The record joins
 * the lists only after the post: what the post fires may change CTs, and
 * their notifications must not see it. On failure the record is freed
 * and its slot given back.
 */
static int p4f_trig_rec_submit(struct p4f_domain *domain,
			       struct p4f_trig_rec *rec)
{
	struct p4e_ct_event ev;
	int ret;

	p4u_lock_assert_held(&domain->lock);
	p4f_cntr_flush_locked(domain);
	ret = p4f_trig_rec_post(domain, rec);
	if (ret == -FI_ENOSPC)
		ret = -FI_EAGAIN;
	if (!ret && !p4e_ct_get(domain->edom, rec->trig.ct, &ev) &&
	    p4f_trig_rec_due(rec, &ev)) {
		p4f_trig_rec_free(rec, true);	/* fired */
	} else if (ret) {
		p4f_trig_rec_free(rec, false);
		return ret;
	} else {
		p4u_list_insert_tail(&domain->trig_recs, &rec->link);
		p4f_trig_rec_link_cntr(rec);
	}
	/* what it completed at once counts, and may fire more */
	p4f_cntr_flush_locked(domain);
	return 0;
}

static struct p4f_trig_rec *p4f_trig_rec_alloc(struct p4f_ep *ep,
					       const struct p4f_trig_req *req,
					       void *context, uint64_t flags,
					       int *ret_p)
{
	struct fi_triggered_context *tc = context;
	struct p4f_trig_rec *rec;
	struct p4f_cntr *cntr;
	uint64_t threshold;

	if (req) {
		cntr = req->cntr;
		threshold = req->threshold;
	} else {
		if (!tc || !(flags & FI_TRIGGER)) {
			*ret_p = -FI_EINVAL;
			return NULL;
		}
		if (tc->event_type != FI_TRIGGER_THRESHOLD) {
			*ret_p = -FI_ENOSYS;
			return NULL;
		}
		if (!tc->trigger.threshold.cntr) {
			*ret_p = -FI_EINVAL;
			return NULL;
		}
		cntr = p4f_cntr_of(tc->trigger.threshold.cntr);
		threshold = tc->trigger.threshold.threshold;
	}
	if (!cntr || p4f_cntr_domain(cntr) != ep->domain) {
		*ret_p = -FI_EINVAL;
		return NULL;
	}
	rec = calloc(1, sizeof(*rec));
	if (!rec) {
		*ret_p = -FI_ENOMEM;
		return NULL;
	}
	p4u_list_init(&rec->link);
	p4u_list_init(&rec->clink);
	rec->cntr = cntr;
	rec->trig.ct = p4f_cntr_ct(cntr);
	rec->trig.threshold = threshold;
	/* FI_TRIGGER: success only (fi_portals.7); deferred: success+error */
	rec->trig.flags = req ? 0 : P4E_TRIG_SUCCESS_ONLY;
	rec->work = req ? req->work : NULL;
	rec->ep = ep;
	return rec;
}

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
	struct p4f_trig_rec *rec, *tmp;

	/* the NI is gone and took its triggered ops along */
	p4u_list_foreach_entry_safe(&ep->domain->trig_recs, rec, tmp,
				    struct p4f_trig_rec, link)
		if (rec->ep == ep)
			p4f_trig_rec_free(rec, true);	/* no slots to fix */
	if (ep->trig)
		free(ep->trig->mds);
	free(ep->trig);
	ep->trig = NULL;
}

void p4f_trigger_cntr_fini_locked(struct p4f_cntr *cntr)
{
	struct p4f_domain *domain = p4f_cntr_domain(cntr);
	struct p4f_trig_rec *rec, *tmp;

	/* the CT is about to be freed with its pending ops */
	p4u_list_foreach_entry_safe(&domain->trig_recs, rec, tmp,
				    struct p4f_trig_rec, link)
		if (rec->cntr == cntr)
			p4f_trig_rec_free(rec, false);
}

/* ---- data operations ---------------------------------------------------- */

ssize_t p4f_trigger_xfer_locked(struct p4f_ep *ep, enum p4f_trig_xfer_op op,
				struct p4e_xfer *x, void *context,
				uint64_t flags, const struct p4f_trig_req *req)
{
	struct p4f_trig_rec *rec;
	bool eq = true;
	int ret;

	p4u_lock_assert_held(&ep->domain->lock);
	if (x->iovcnt > P4F_IOV_LIMIT)
		return -FI_EINVAL;
	rec = p4f_trig_rec_alloc(ep, req, context, flags, &ret);
	if (!rec)
		return ret;
	if (req) {
		eq = flags & FI_COMPLETION;
		ret = p4f_trig_deferred_mds(ep, op, x, flags, req);
		if (ret) {
			free(rec);
			return ret;
		}
	}
	rec->kind = P4F_TRIG_XFER;
	rec->op = op;
	rec->xfer = *x;
	/* FI_CANCEL_WORK may post it again: keep the iovec array (the
	 * engine copies it too, for when the op fires) */
	if (x->iovcnt) {
		memcpy(rec->iov, x->iov, x->iovcnt * sizeof(*x->iov));
		rec->xfer.iov = rec->iov;
	}
	/* a sink event will give the slot back */
	rec->counted_tx = eq;
	if (eq)
		ep->tx_pending++;
	return p4f_trig_rec_submit(ep->domain, rec);
}

ssize_t p4f_trigger_append_locked(struct p4f_ep *ep, uint32_t pt,
				  const struct p4e_me_desc *d, void *context,
				  uint64_t flags, const struct p4f_trig_req *req)
{
	struct p4f_trig_rec *rec;
	bool events = true;
	int ret;

	p4u_lock_assert_held(&ep->domain->lock);
	if (flags & (FI_PEEK | FI_CLAIM | FI_MULTI_RECV))
		return -FI_ENOSYS;
	if ((d->options & P4E_ME_IOVEC) && d->length > P4F_IOV_LIMIT)
		return -FI_EINVAL;
	rec = p4f_trig_rec_alloc(ep, req, context, flags, &ret);
	if (!rec)
		return ret;
	rec->kind = P4F_TRIG_APPEND;
	rec->pt = pt;
	rec->desc = *d;
	if (d->options & P4E_ME_IOVEC) {
		memcpy(rec->iov, d->start, d->length * sizeof(struct iovec));
		rec->desc.start = rec->iov;
	}
	if (req) {
		events = flags & FI_COMPLETION;
		if (req->completion_cntr) {
			rec->desc.ct = p4f_cntr_ct(req->completion_cntr);
			rec->desc.options |= P4E_ME_EVENT_CT_COMM |
					     P4E_ME_EVENT_CT_OVERFLOW;
		}
		if (!events)
			rec->desc.options |= P4E_ME_EVENT_COMM_DISABLE |
					     P4E_ME_EVENT_OVER_DISABLE;
	}
	rec->user_ptr = context;
	rec->user_flags = flags;
	rec->counted_rx = events;
	if (events)
		ep->rx_pending++;
	return p4f_trig_rec_submit(ep->domain, rec);
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
	p4u_lock_acquire(&ep->domain->lock);
	ret = p4f_trig_rma_locked(ep, a, write, NULL);
	p4u_lock_release(&ep->domain->lock);
	return ret;
}

ssize_t p4f_trigger_atomic(struct p4f_ep *ep, const struct p4f_atomic_args *a)
{
	ssize_t ret;

	ep = p4f_ep_data(ep);
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	p4u_lock_acquire(&ep->domain->lock);
	ret = p4f_trig_atomic_locked(ep, a, NULL);
	p4u_lock_release(&ep->domain->lock);
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
	p4u_lock_acquire(&domain->lock);
	ret = (int)p4f_trig_rma_locked(ep, &a, work->op_type == FI_OP_WRITE,
				       req);
	p4u_lock_release(&domain->lock);
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
	p4u_lock_acquire(&domain->lock);
	ret = (int)p4f_trig_atomic_locked(ep, &a, req);
	p4u_lock_release(&domain->lock);
	return ret;
}

static int p4f_trig_queue_cntr(struct p4f_domain *domain,
			       const struct fi_deferred_work *work,
			       const struct p4f_trig_req *req)
{
	const struct fi_op_cntr *op = work->op.cntr;
	struct p4f_trig_rec *rec;
	struct p4f_cntr *target;
	int ret;

	/* fi_trigger(3): counter operations have no completion counter */
	if (!op || !op->cntr || work->completion_cntr)
		return -FI_EINVAL;
	target = p4f_cntr_of(op->cntr);
	if (p4f_cntr_domain(target) != domain)
		return -FI_EINVAL;
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return -FI_ENOMEM;
	p4u_list_init(&rec->link);
	p4u_list_init(&rec->clink);
	rec->kind = work->op_type == FI_OP_CNTR_SET ? P4F_TRIG_CT_SET :
						       P4F_TRIG_CT_INC;
	rec->cntr = req->cntr;
	rec->trig.ct = p4f_cntr_ct(req->cntr);
	rec->trig.threshold = req->threshold;
	rec->work = work;
	rec->target_ct = p4f_cntr_ct(target);
	rec->val.success = op->value;
	/* like fi_cntr_set: the error value stays */
	if (rec->kind == P4F_TRIG_CT_SET)
		rec->trig.flags |= P4E_TRIG_SET_SUCCESS;
	p4u_lock_acquire(&domain->lock);
	ret = p4f_trig_rec_submit(domain, rec);
	p4u_lock_release(&domain->lock);
	return ret;
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
 * Cancel the pending ops waiting on cntr that match (all when work is
 * NULL): the engine drops every op of the CT, the others are posted
 * again in their order (their thresholds are not met: nothing fires).
 */
static void p4f_trig_cancel_cntr_locked(struct p4f_domain *domain,
					struct p4f_cntr *cntr,
					const struct fi_deferred_work *work)
{
	struct p4f_trig_rec *rec, *tmp;
	struct p4u_list keep;

	p4u_list_init(&keep);
	p4e_ct_cancel_triggered(domain->edom, p4f_cntr_ct(cntr));
	p4u_list_foreach_entry_safe(&domain->trig_recs, rec, tmp,
				    struct p4f_trig_rec, link) {
		if (rec->cntr != cntr)
			continue;
		if (!work || (rec->work == work &&
			      rec->trig.threshold == work->threshold)) {
			p4f_trig_rec_free(rec, false);
			continue;
		}
		p4u_list_remove(&rec->link);
		p4u_list_insert_tail(&keep, &rec->link);
	}
	p4u_list_foreach_entry_safe(&keep, rec, tmp, struct p4f_trig_rec,
				    link) {
		p4u_list_remove(&rec->link);
		p4u_list_insert_tail(&domain->trig_recs, &rec->link);
		if (p4f_trig_rec_post(domain, rec)) {
			FI_WARN(&p4f_prov, FI_LOG_DOMAIN,
				"triggered operation lost at cancel\n");
			p4f_trig_rec_free(rec, false);
		}
	}
}

static int p4f_trig_cancel(struct p4f_domain *domain,
			   const struct fi_deferred_work *work, bool flush)
{
	struct p4f_trig_rec *rec;
	bool again = true;

	if (!flush && (!work || !work->triggering_cntr))
		return -FI_EINVAL;
	p4u_lock_acquire(&domain->lock);
	if (work && work->triggering_cntr) {
		struct p4f_cntr *cntr = p4f_cntr_of(work->triggering_cntr);

		if (p4f_cntr_domain(cntr) != domain) {
			p4u_lock_release(&domain->lock);
			return -FI_EINVAL;
		}
		p4f_trig_cancel_cntr_locked(domain, cntr,
					    flush ? NULL : work);
	} else {
		/* FI_FLUSH_WORK without a counter: everything queued */
		while (again) {
			again = false;
			rec = p4u_list_first_entry(&domain->trig_recs,
						   struct p4f_trig_rec, link);
			if (rec) {
				p4f_trig_cancel_cntr_locked(domain, rec->cntr,
							    NULL);
				again = true;
			}
		}
	}
	p4u_lock_release(&domain->lock);
	return 0;
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
