/*
 * p4f_xfer.c - the two-sided data path shared by fi_msg and fi_tagged
 * (docs/design.md §3.3): a send is a put to the endpoint's TAG or MSG portal
 * table entry at the peer; a receive is an entry appended to the priority
 * list of our own (the engine searches the unexpected headers first).
 * Tags are match bits, ignore masks ignore bits, FI_DIRECTED_RECV a
 * match_id. The provider keeps no request object: the caller's context
 * and the operation's flags ride in the engine operation and come back in
 * its events (p4f_sink.c), so NULL contexts work (mode 0).
 */
#include <config.h>

#include "p4f.h"
#include "p4u_iov.h"

/* ---- common -------------------------------------------------------------- */

static uint64_t p4f_xfer_kind(uint32_t pt)
{
	return pt == P4F_PT_TAG ? FI_TAGGED : FI_MSG;
}

static bool p4f_xfer_iov_ok(const struct p4f_xfer_args *a, size_t *len_p)
{
	return a->count <= P4F_IOV_LIMIT &&
	       !p4u_iov_len(a->iov, a->count, len_p);
}

/* Resource limits are checked after one round of progress, so a caller
 * that spins on -FI_EAGAIN also drives completions. */
static bool p4f_xfer_room_locked(struct p4f_ep *ep, size_t pending,
				 size_t size)
{
	if (pending < size)
		return true;
	p4f_worker_progress_locked(ep->worker);
	return false;
}

/* ---- sends --------------------------------------------------------------- */

ssize_t p4f_xfer_send(struct p4f_ep *ep, uint32_t pt,
		      const struct p4f_xfer_args *a)
{
	uint64_t flags = a->flags | FI_SEND | p4f_xfer_kind(pt);
	struct p4e_xfer x = {
		.match_bits = pt == P4F_PT_TAG ? a->tag : 0,
		.hdr_data = a->data,
		.user_ptr = a->context,
		.get_md = P4E_HANDLE_NONE,
		.pt_index = pt,
	};
	size_t len;
	ssize_t ret;

	ep = p4f_ep_data(ep);	/* an alias: flags were taken already */
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!p4f_xfer_iov_ok(a, &len))
		return -FI_EINVAL;
	if ((flags & FI_INJECT) && len > ep->inject_size)
		return -FI_EINVAL;
	if (len > ep->info->ep_attr->max_msg_size)
		return -FI_EMSGSIZE;
	if (flags & FI_REMOTE_CQ_DATA)
		x.flags |= P4E_XFER_HDR_DATA;
	if (flags & FI_MORE)	/* may wait for the next send (§8.5) */
		x.flags |= P4E_XFER_MORE;
	/* completions at acceptance when the application asks for more than
	 * "the buffer is free again" (our default, documented) */
	x.ack_req = (flags & (FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)) ?
		P4E_ACK_ACCEPT : P4E_NO_ACK_REQ;
	x.user_flags = flags;
	x.length = len;
	if (a->count == 1) {
		x.local_offset = (uint64_t)(uintptr_t)a->iov[0].iov_base;
	} else if (a->count > 1) {
		x.iov = a->iov;
		x.iovcnt = a->count;
	}

	p4f_ep_lock(ep);
	if (!p4f_xfer_room_locked(ep, ep->tx_pending, ep->tx_size)) {
		ret = -FI_EAGAIN;
		goto out;
	}
	ret = p4f_av_peer(ep->av, a->addr, &x.target);
	if (ret)
		goto out;
	/* inject copies at the call: the engine's volatile MD */
	x.md = (flags & FI_INJECT) ? ep->md_volatile : ep->md_all;
	if (a->trig || (flags & FI_TRIGGER)) {
		/* p4f_trigger.c: an engine triggered put */
		ret = p4f_trigger_xfer_locked(ep, P4F_TRIG_OP_PUT, &x,
					      a->context, flags, a->trig);
		goto out;
	}
	/* counted first: the completion may come before p4e_put returns */
	ep->tx_pending++;
	ret = p4e_put(ep->ni, &x);
	if (ret)
		ep->tx_pending--;
	if (ret == -FI_EAGAIN)
		p4f_worker_progress_locked(ep->worker);
out:
	p4f_ep_unlock(ep);
	return ret;
}

/* ---- receives ------------------------------------------------------------ */

static int p4f_xfer_me_desc(struct p4f_ep *ep, uint32_t pt,
			    const struct p4f_xfer_args *a, size_t len,
			    struct p4e_me_desc *d)
{
	int ret;

	memset(d, 0, sizeof(*d));
	d->ct = P4E_HANDLE_NONE;
	d->uid = P4E_UID_ANY;
	d->match_id = P4E_ID_ANY;
	d->options = P4E_ME_OP_PUT | P4E_ME_UH_COPY |
		     P4E_ME_EVENT_LINK_DISABLE;
	if (a->count == 1) {
		d->start = a->iov[0].iov_base;
		d->length = len;
	} else if (a->count > 1) {
		d->start = (void *)a->iov;
		d->length = a->count;
		d->options |= P4E_ME_IOVEC;
	}
	if (pt == P4F_PT_TAG) {
		d->match_bits = a->tag;
		d->ignore_bits = a->ignore;
	} else {
		d->ignore_bits = UINT64_MAX;
	}
	if ((ep->caps & FI_DIRECTED_RECV) && a->addr != FI_ADDR_UNSPEC) {
		ret = p4f_av_peer(ep->av, a->addr, &d->match_id);
		if (ret)
			return ret;
	}
	if (a->flags & FI_MULTI_RECV) {
		d->options |= P4E_ME_MANAGE_LOCAL;
		d->min_free = ep->min_multi_recv;
	} else {
		d->options |= P4E_ME_USE_ONCE | P4E_ME_EVENT_UNLINK_DISABLE;
	}
	return 0;
}

/* FI_PEEK (with FI_CLAIM or FI_DISCARD): a search of the unexpected
 * messages whose result the sink writes to the CQ. */
static ssize_t p4f_xfer_peek_locked(struct p4f_ep *ep, uint32_t pt,
				    const struct p4e_me_desc *d,
				    const struct p4f_xfer_args *a,
				    uint64_t flags)
{
	enum p4e_search_op op = (flags & (FI_CLAIM | FI_DISCARD)) ?
		P4E_SEARCH_CLAIM : P4E_SEARCH_ONLY;
	ssize_t ret;

	if ((flags & FI_CLAIM) && !a->context)
		return -FI_EINVAL;	/* the claim is parked in the context */
	ep->peek_discard = 0;
	ret = p4e_me_search(ep->ni, pt, d, op, a->context, flags);
	if (!ret && ep->peek_discard) {
		p4e_uh_discard(ep->ni, ep->peek_discard);
		ep->peek_discard = 0;
	}
	return ret;
}

/* FI_CLAIM without FI_PEEK: receive (or discard) what a peek claimed. */
static ssize_t p4f_xfer_claim_locked(struct p4f_ep *ep,
				     const struct p4e_me_desc *d,
				     const struct p4f_xfer_args *a,
				     uint64_t flags)
{
	struct fi_context *ctx = a->context;
	uint64_t uh;
	ssize_t ret;

	if (!ctx)
		return -FI_EINVAL;
	uh = (uint64_t)(uintptr_t)ctx->internal[0];
	if (flags & FI_DISCARD) {
		ret = p4e_uh_discard(ep->ni, uh);
		if (!ret && ep->rx_cq)
			p4f_cq_write(ep->rx_cq, ctx,
					    flags & (FI_RECV | FI_TAGGED |
						     FI_MSG | FI_CLAIM),
					    0, NULL, 0, 0, FI_ADDR_NOTAVAIL);
		return ret;
	}
	ep->rx_pending++;
	ret = p4e_uh_deliver(ep->ni, uh, d, ctx, flags);
	if (ret)
		ep->rx_pending--;
	return ret;
}

ssize_t p4f_xfer_recv(struct p4f_ep *ep, uint32_t pt,
		      const struct p4f_xfer_args *a)
{
	uint64_t flags = a->flags | FI_RECV | p4f_xfer_kind(pt);
	struct p4e_me_desc d;
	uint64_t me;
	size_t len = 0;
	ssize_t ret;

	ep = p4f_ep_data(ep);	/* an alias: flags were taken already */
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!(flags & (FI_PEEK | FI_DISCARD)) && !p4f_xfer_iov_ok(a, &len))
		return -FI_EINVAL;
	if ((flags & FI_MULTI_RECV) && (pt != P4F_PT_MSG || a->count != 1))
		return -FI_EINVAL;

	p4f_ep_lock(ep);
	ret = p4f_xfer_me_desc(ep, pt, a, len, &d);
	if (ret)
		goto out;
	if (flags & FI_PEEK) {
		ret = p4f_xfer_peek_locked(ep, pt, &d, a, flags);
		goto out;
	}
	if (!p4f_xfer_room_locked(ep, ep->rx_pending, ep->rx_size)) {
		ret = -FI_EAGAIN;
		goto out;
	}
	if (flags & FI_CLAIM) {
		ret = p4f_xfer_claim_locked(ep, &d, a, flags);
		goto out;
	}
	if (a->trig || (flags & FI_TRIGGER)) {
		/* p4f_trigger.c: an engine triggered append */
		ret = p4f_trigger_append_locked(ep, pt, &d, a->context, flags,
						a->trig);
		goto out;
	}
	/* counted first: an unexpected message may complete it at once */
	ep->rx_pending++;
	ret = p4e_me_append(ep->ni, pt, &d, P4E_PRIORITY_LIST, a->context,
			    flags, &me);
	if (ret)
		ep->rx_pending--;
	if (ret == -FI_ENOSPC)
		ret = -FI_EAGAIN;
out:
	p4f_ep_unlock(ep);
	return ret;
}

ssize_t p4f_ep_cancel_locked(struct p4f_ep *ep, void *context)
{
	uint32_t pt;
	int ret;

	/* receives only: sends are already on their way */
	for (pt = 0; pt < P4F_PT_COUNT; pt++) {
		ret = p4e_me_cancel(ep->ni, pt, context);
		if (ret != -FI_ENOENT)
			return ret == -FI_EBUSY ? -FI_EAGAIN : ret;
	}
	return -FI_ENOENT;
}
