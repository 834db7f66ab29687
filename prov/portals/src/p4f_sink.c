/*
 * p4f_sink.c - where engine events become libfabric completions: the
 * endpoint's two event sinks (receives: events of its PTs; sends: events
 * of its MDs) write CQ entries and count on the bound counters straight
 * from the event (docs/design.md §2), and the overflow buffers that hold
 * unexpected eager data go back to the engine once it has freed them.
 *
 * Sinks run inside engine calls with the endpoint's worker lock held: they
 * must not call back into the engine. What needs the engine (reposting a
 * buffer) is queued and done by the worker's progress afterwards
 * (p4f_worker.c). CQs and counters take their own locks.
 */
#include <config.h>

#include <stdlib.h>

#include "p4f.h"

/* Flags a completion entry may carry (fi_cq(3)). */
/* What of an operation's flags a CQ entry reports. FI_REMOTE_CQ_DATA is
 * added by the receive side only when data arrived; FI_CLAIM, FI_PEEK and
 * the completion levels are requests, not news (tcp;ofi_rxm agrees). */
#define P4F_CQ_FLAGS (FI_SEND | FI_RECV | FI_RMA | FI_ATOMIC | FI_MSG | \
		      FI_TAGGED | FI_READ | FI_WRITE | FI_REMOTE_READ | \
		      FI_REMOTE_WRITE | FI_MULTI_RECV)

static int p4f_sink_errno(uint8_t fail)
{
	switch (fail) {
	case P4E_NI_OK:
		return 0;
	case P4E_NI_CANCELED:
		return FI_ECANCELED;
	case P4E_NI_PERM_VIOLATION:
	case P4E_NI_OP_VIOLATION:
		return FI_EACCES;
	case P4E_NI_NO_MATCH:
		return FI_ENOMSG;
	case P4E_NI_SEGV:
		return FI_EFAULT;
	case P4E_NI_CONN_REFUSED:	/* nothing listens there */
		return FI_ECONNREFUSED;
	case P4E_NI_UNDELIVERABLE:
	case P4E_NI_DROPPED:
	case P4E_NI_PT_DISABLED:
	default:
		return FI_EIO;
	}
}

fi_addr_t p4f_ep_src_addr(struct p4f_ep *ep, uint32_t peer)
{
	return ep->av ? p4f_av_peer_addr(ep->av, peer) :
			FI_ADDR_NOTAVAIL;
}

static void p4f_sink_error(struct p4f_cq *cq, void *context, uint64_t flags,
			   int err, uint64_t len, uint64_t olen, uint64_t tag,
			   uint64_t data, uint8_t fail)
{
	struct fi_cq_err_entry e = {
		.op_context = context,
		.flags = flags & P4F_CQ_FLAGS,
		.len = len,
		.data = data,
		.tag = tag,
		.olen = olen,
		.err = err,
		.prov_errno = fail,
	};

	if (cq)
		p4f_cq_write_error(cq, &e);
}

static bool p4f_sink_wanted(uint64_t cq_flags, uint64_t op_flags)
{
	return !(cq_flags & FI_SELECTIVE_COMPLETION) ||
	       (op_flags & FI_COMPLETION);
}

static void p4f_sink_cntr(struct p4f_ep *ep, enum p4f_ep_cntr_slot slot,
			  bool ok)
{
	struct p4f_cntr *cntr = ep->cntrs[slot];

	if (!cntr)
		return;
	if (ok)
		p4f_cntr_inc(cntr, 1);
	else
		p4f_cntr_inc_err(cntr, 1);
}

/* ---- receives ------------------------------------------------------------ */

static uint64_t p4f_sink_rx_flags(const struct p4e_event *ev)
{
	uint64_t flags = ev->user_flags & P4F_CQ_FLAGS & ~FI_MULTI_RECV;

	if (ev->flags & P4E_EVENT_F_HDR_DATA)
		flags |= FI_REMOTE_CQ_DATA;
	return flags;
}

/* A message was placed (PUT) or an unexpected one delivered (_OVERFLOW). */
static void p4f_sink_recv(struct p4f_ep *ep, const struct p4e_event *ev)
{
	uint64_t flags = p4f_sink_rx_flags(ev);
	uint64_t data = (ev->flags & P4E_EVENT_F_HDR_DATA) ? ev->hdr_data : 0;
	uint64_t tag = (flags & FI_TAGGED) ? ev->match_bits : 0;
	bool multi = ev->user_flags & FI_MULTI_RECV;
	fi_addr_t src = FI_ADDR_NOTAVAIL;
	int err = p4f_sink_errno(ev->ni_fail_type);

	if (!multi)
		ep->rx_pending--;
	if (!err && ev->mlength < ev->rlength)
		err = FI_ETRUNC;	/* an error here, a success for Portals */
	p4f_sink_cntr(ep, P4F_CNTR_RECV, !err);
	if (err) {
		/* olen is what did not fit: only a truncation has any */
		p4f_sink_error(ep->rx_cq, ev->user_ptr, flags, err,
			       ev->mlength, err == FI_ETRUNC ?
			       ev->rlength - ev->mlength : 0, tag, data,
			       ev->ni_fail_type);
		return;
	}
	if (!ep->rx_cq || !p4f_sink_wanted(ep->rx_cq_flags, ev->user_flags))
		return;
	if (ep->caps & FI_SOURCE)
		src = p4f_ep_src_addr(ep, ev->initiator);
	p4f_cq_write(ep->rx_cq, ev->user_ptr, flags, ev->mlength,
			    ev->start, data, tag, src);
}

/* FI_PEEK: the result of a search, and FI_CLAIM's parking of a message. */
static void p4f_sink_peek(struct p4f_ep *ep, const struct p4e_event *ev)
{
	uint64_t flags = p4f_sink_rx_flags(ev);
	fi_addr_t src = FI_ADDR_NOTAVAIL;
	struct fi_context *ctx = ev->user_ptr;

	if (ev->ni_fail_type != P4E_NI_OK) {
		p4f_sink_error(ep->rx_cq, ev->user_ptr, flags, FI_ENOMSG, 0, 0,
			       0, 0, ev->ni_fail_type);
		return;
	}
	if (ev->user_flags & FI_CLAIM) {
		/* the claimed message waits under the caller's context */
		if (ctx)
			ctx->internal[0] = (void *)(uintptr_t)ev->uh_handle;
	}
	if (ev->user_flags & FI_DISCARD)
		ep->peek_discard = ev->uh_handle;
	if (ep->caps & FI_SOURCE)
		src = p4f_ep_src_addr(ep, ev->initiator);
	if (ep->rx_cq)
		p4f_cq_write(ep->rx_cq, ev->user_ptr, flags, ev->rlength,
				    NULL,
				    (ev->flags & P4E_EVENT_F_HDR_DATA) ?
					    ev->hdr_data : 0,
				    (flags & FI_TAGGED) ? ev->match_bits : 0,
				    src);
}

/* A receive left its list: cancelled, or a multi-recv buffer used up. */
static void p4f_sink_unlinked(struct p4f_ep *ep, const struct p4e_event *ev)
{
	uint64_t flags = ev->user_flags & P4F_CQ_FLAGS;

	if (ev->ni_fail_type == P4E_NI_CANCELED) {
		ep->rx_pending--;
		p4f_sink_error(ep->rx_cq, ev->user_ptr, flags & ~FI_MULTI_RECV,
			       FI_ECANCELED, 0, 0, 0, 0, ev->ni_fail_type);
		return;
	}
	if (!(ev->user_flags & FI_MULTI_RECV))
		return;
	/*
	 * Written even under FI_SELECTIVE_COMPLETION: the buffer is free.
	 * FI_MULTI_RECV alone: fi_cq(3) reads FI_RECV on an entry as "this
	 * entry reports a received message" (whose len and buf are then
	 * meaningful), and this one reports none.
	 */
	ep->rx_pending--;
	if (ep->rx_cq)
		p4f_cq_write(ep->rx_cq, ev->user_ptr, FI_MULTI_RECV, 0,
				    NULL, 0, 0, FI_ADDR_NOTAVAIL);
}

static void p4f_sink_oflow_event(struct p4f_ep *ep, const struct p4e_event *ev)
{
	struct p4f_oflow *ob = ev->user_ptr;

	/* free means no unexpected header points into it any more */
	if (ev->type == P4E_EVENT_AUTO_FREE && ob)
		p4u_list_insert_tail(&ep->oflow_repost, &ob->link);
}

static void p4f_sink_rx_deliver(struct p4e_eq *eq, const struct p4e_event *ev)
{
	struct p4f_ep *ep = container_of(eq, struct p4f_sink, eq)->ep;

	if (ev->list == P4E_OVERFLOW_LIST && ev->type != P4E_EVENT_SEARCH) {
		p4f_sink_oflow_event(ep, ev);
		return;
	}
	switch (ev->type) {
	case P4E_EVENT_PUT:
	case P4E_EVENT_PUT_OVERFLOW:
		p4f_sink_recv(ep, ev);
		break;
	case P4E_EVENT_SEARCH:
		p4f_sink_peek(ep, ev);
		break;
	case P4E_EVENT_AUTO_UNLINK:
		p4f_sink_unlinked(ep, ev);
		break;
	default:
		break;
	}
}

/* The CQ never overruns (it queues what does not fit), so never full. */
static size_t p4f_sink_space(struct p4e_eq *eq)
{
	(void)eq;
	return SIZE_MAX;
}

const struct p4e_eq_ops p4f_sink_rx_ops = {
	.deliver = p4f_sink_rx_deliver,
	.space = p4f_sink_space,
};

/* ---- sends -------------------------------------------------------------- */

static void p4f_sink_send_done(struct p4f_ep *ep, const struct p4e_event *ev)
{
	uint64_t flags = ev->user_flags;
	int err = p4f_sink_errno(ev->ni_fail_type);

	ep->tx_pending--;
	p4f_sink_cntr(ep, P4F_CNTR_SEND, !err);
	if (err) {
		p4f_sink_error(ep->tx_cq, ev->user_ptr, flags, err, 0, 0, 0, 0,
			       ev->ni_fail_type);
		return;
	}
	/* fi_inject and friends never complete; FI_INJECT given to
	 * fi_sendmsg or in the op_flags does (fi_msg(3)) */
	if ((flags & P4F_XFER_INJECT_CALL) || !ep->tx_cq ||
	    !p4f_sink_wanted(ep->tx_cq_flags, flags))
		return;
	p4f_cq_write(ep->tx_cq, ev->user_ptr, flags & P4F_CQ_FLAGS, 0,
			    NULL, 0, 0, FI_ADDR_NOTAVAIL);
}

static void p4f_sink_tx_deliver(struct p4e_eq *eq, const struct p4e_event *ev)
{
	struct p4f_ep *ep = container_of(eq, struct p4f_sink, eq)->ep;
	bool on_ack = ev->user_flags &
		      (FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE);

	/* an op completes on exactly one event: SEND (buffer free) by
	 * default, ACK (accepted / placed at the target) when asked */
	if ((ev->type == P4E_EVENT_SEND && !on_ack) ||
	    (ev->type == P4E_EVENT_ACK && on_ack))
		p4f_sink_send_done(ep, ev);
}

const struct p4e_eq_ops p4f_sink_tx_ops = {
	.deliver = p4f_sink_tx_deliver,
	.space = p4f_sink_space,
};

/* ---- overflow buffers ------------------------------------------------- */

/*
 * Unexpected eager messages land in these (locally managed offsets, no
 * truncation: a message that does not fit goes to the next buffer, or
 * flow control holds its sender). Rendezvous messages leave only their
 * header. A buffer unlinks when less than an eager message fits, and
 * returns here once every message in it was received.
 */
static int p4f_oflow_append(struct p4f_ep *ep, struct p4f_oflow *ob)
{
	struct p4e_me_desc d = {
		.start = ob->buf,
		.length = p4f_params.oflow_buf_size,
		.ct = P4E_HANDLE_NONE,
		.uid = P4E_UID_ANY,
		.options = P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL |
			   P4E_ME_NO_TRUNCATE | P4E_ME_EVENT_COMM_DISABLE |
			   P4E_ME_EVENT_LINK_DISABLE | P4E_ME_RDZV_HDR_ONLY,
		.match_id = P4E_ID_ANY,
		.match_bits = 0,
		.ignore_bits = UINT64_MAX,
		.min_free = p4f_params.eager_size + 1,
	};

	return p4e_me_append(ep->ni, ob->pt, &d, P4E_OVERFLOW_LIST, ob, 0,
			     &ob->me);
}

/*
 * Behind the buffers, a header keeper per portal: when none of them has
 * room, an unexpected rendezvous (or empty) message still leaves its
 * header, and an eager one is sent back to come again as rendezvous
 * (P4E_ME_HDR_ONLY). The flood then costs the receiver headers, not
 * payload, and a receive posted for a message behind it is served;
 * only when the unexpected-header budget is spent does flow control
 * hold the sender.
 */
static int p4f_oflow_keeper(struct p4f_ep *ep, uint32_t pt)
{
	struct p4e_me_desc d = {
		.ct = P4E_HANDLE_NONE,
		.uid = P4E_UID_ANY,
		.options = P4E_ME_OP_PUT | P4E_ME_HDR_ONLY |
			   P4E_ME_EVENT_COMM_DISABLE | P4E_ME_EVENT_LINK_DISABLE,
		.match_id = P4E_ID_ANY,
		.match_bits = 0,
		.ignore_bits = UINT64_MAX,
	};
	uint64_t handle;

	return p4e_me_append(ep->ni, pt, &d, P4E_OVERFLOW_LIST, NULL, 0,
			     &handle);
}

int p4f_oflow_post_all(struct p4f_ep *ep)
{
	size_t per_pt = P4U_MAX(p4f_params.oflow_buf_count, (size_t)1), i;
	uint32_t pt;
	int ret;

	ep->noflow = per_pt * P4F_PT_COUNT;
	ep->oflow = calloc(ep->noflow, sizeof(*ep->oflow));
	if (!ep->oflow)
		return -FI_ENOMEM;
	for (i = 0; i < ep->noflow; i++) {
		struct p4f_oflow *ob = &ep->oflow[i];

		p4u_list_init(&ob->link);
		ob->pt = (uint32_t)(i / per_pt);
		ob->buf = malloc(p4f_params.oflow_buf_size);
		if (!ob->buf)
			return -FI_ENOMEM;
		ret = p4f_oflow_append(ep, ob);
		if (ret)
			return ret;
	}
	for (pt = 0; pt < P4F_PT_COUNT; pt++) {
		ret = p4f_oflow_keeper(ep, pt);
		if (ret)
			return ret;
	}
	return 0;
}

void p4f_oflow_repost_locked(struct p4f_ep *ep)
{
	struct p4f_oflow *ob, *tmp;

	p4u_list_foreach_entry_safe(&ep->oflow_repost, ob, tmp,
				    struct p4f_oflow, link) {
		if (p4f_oflow_append(ep, ob))
			break;	/* try again at the next progress */
		p4u_list_remove(&ob->link);
	}
}

/* After the NI is gone: nothing refers to the buffers any more. */
void p4f_oflow_free_all(struct p4f_ep *ep)
{
	size_t i;

	for (i = 0; ep->oflow && i < ep->noflow; i++)
		free(ep->oflow[i].buf);
	free(ep->oflow);
	ep->oflow = NULL;
	ep->noflow = 0;
	p4u_list_init(&ep->oflow_repost);
}
