/*
 * p4f_sink_rma.c - the event sink of one-sided operations, one per
 * endpoint (ep->rma_sink), fed by two sources:
 *
 *  - the RMA PT (target side): every access to one of the domain's MRs
 *    through this endpoint, successful or refused (P4E_ME_EVENT_FAIL).
 *    It counts on the endpoint's FI_REMOTE_WRITE / FI_REMOTE_READ
 *    counters and on the MR's bound counter (errors on their error
 *    value), and writes an FI_REMOTE_CQ_DATA entry to the rx CQ for a
 *    write that carried data.
 *  - the RMA MDs (initiator side): the completion of fi_write*, fi_read*
 *    and atomics: a CQ entry (or error entry) and the FI_WRITE / FI_READ
 *    counter. Writes and plain atomics complete on ACK, reads and fetching
 *    atomics on REPLY; SEND events are ignored.
 *
 * Error numbers at the initiator (documented in fi_portals.7): the target
 * matched no MR (bad key, closed MR, no RMA PT) or refused the access
 * rights: FI_EACCES; the range is outside the MR, or an atomic spans two
 * of its iovs: FI_EINVAL; the peer is gone: FI_EIO. prov_errno is the
 * engine's failure kind.
 *
 * Runs inside engine calls with the endpoint's worker lock held: no
 * engine calls.
 */
#include <config.h>

#include "p4f.h"

/* What of an operation's flags a CQ entry reports. */
#define P4F_RMA_CQ_FLAGS (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE)

static int p4f_sink_rma_errno(uint8_t fail)
{
	switch (fail) {
	case P4E_NI_OK:
		return 0;
	case P4E_NI_DROPPED:		/* no MR with that key */
	case P4E_NI_PERM_VIOLATION:
	case P4E_NI_OP_VIOLATION:
		return FI_EACCES;
	case P4E_NI_SEGV:		/* outside the MR */
		return FI_EINVAL;
	case P4E_NI_CANCELED:
		return FI_ECANCELED;
	case P4E_NI_CONN_REFUSED:	/* nothing listens there */
		return FI_ECONNREFUSED;
	default:
		return FI_EIO;
	}
}

static void p4f_sink_rma_count(struct p4f_cntr *cntr, bool ok)
{
	if (!cntr)
		return;
	if (ok)
		p4f_cntr_inc(cntr, 1);
	else
		p4f_cntr_inc_err(cntr, 1);
}

/* ---- target ------------------------------------------------------------- */

/* Which remote access an event is: reads leave the target unchanged. */
static uint64_t p4f_sink_rma_access(const struct p4e_event *ev)
{
	if (ev->type == P4E_EVENT_GET)
		return FI_REMOTE_READ;
	if (ev->type == P4E_EVENT_FETCH_ATOMIC &&
	    ev->atomic_op == P4E_ATOMIC_READ)
		return FI_REMOTE_READ;
	return FI_REMOTE_WRITE;
}

static void p4f_sink_rma_target(struct p4f_ep *ep, const struct p4e_event *ev)
{
	uint64_t access = p4f_sink_rma_access(ev);
	bool ok = ev->ni_fail_type == P4E_NI_OK;

	p4f_sink_rma_count(ep->cntrs[access == FI_REMOTE_READ ?
				     P4F_CNTR_REMOTE_READ :
				     P4F_CNTR_REMOTE_WRITE], ok);
	/* by key: O(1), and an MR closed meanwhile is simply not found */
	p4f_mr_count_remote(ep->domain, ev->match_bits, access, ok);
	/* fi_cq(3): remote CQ data always makes an entry on the rx CQ */
	if (ok && ev->type == P4E_EVENT_PUT &&
	    (ev->flags & P4E_EVENT_F_HDR_DATA) && ep->rx_cq)
		p4f_cq_write(ep->rx_cq, NULL,
				    FI_REMOTE_WRITE | FI_RMA |
				    FI_REMOTE_CQ_DATA,
				    ev->mlength, NULL, ev->hdr_data, 0,
				    FI_ADDR_NOTAVAIL);
}

/* ---- initiator --------------------------------------------------------- */

static void p4f_sink_rma_done(struct p4f_ep *ep, const struct p4e_event *ev)
{
	uint64_t flags = ev->user_flags;
	int err = p4f_sink_rma_errno(ev->ni_fail_type);
	struct fi_cq_err_entry e = {
		.op_context = ev->user_ptr,
		.flags = flags & P4F_RMA_CQ_FLAGS,
		.err = err,
		.prov_errno = ev->ni_fail_type,
	};

	ep->tx_pending--;
	p4f_sink_rma_count(ep->cntrs[(flags & FI_READ) ? P4F_CNTR_READ :
						       P4F_CNTR_WRITE], !err);
	if (err) {
		/* an inject call has no completion, but its failure is
		 * still news the application must get */
		if (ep->tx_cq)
			p4f_cq_write_error(ep->tx_cq, &e);
		return;
	}
	if ((flags & P4F_XFER_INJECT_CALL) || !ep->tx_cq ||
	    ((ep->tx_cq_flags & FI_SELECTIVE_COMPLETION) &&
	     !(flags & FI_COMPLETION)))
		return;
	p4f_cq_write(ep->tx_cq, ev->user_ptr, flags & P4F_RMA_CQ_FLAGS,
			    0, NULL, 0, 0, FI_ADDR_NOTAVAIL);
}

static void p4f_sink_rma_deliver(struct p4e_eq *eq, const struct p4e_event *ev)
{
	struct p4f_ep *ep = container_of(eq, struct p4f_sink, eq)->ep;

	switch (ev->type) {
	case P4E_EVENT_PUT:
	case P4E_EVENT_GET:
	case P4E_EVENT_ATOMIC:
	case P4E_EVENT_FETCH_ATOMIC:
		p4f_sink_rma_target(ep, ev);
		break;
	case P4E_EVENT_ACK:
		/* writes and plain atomics: the target applied them */
		if (!(ev->user_flags & FI_READ))
			p4f_sink_rma_done(ep, ev);
		break;
	case P4E_EVENT_REPLY:
		/* reads and fetching atomics: the data is here */
		if (ev->user_flags & FI_READ)
			p4f_sink_rma_done(ep, ev);
		break;
	default:
		break;	/* SEND: the buffer is free, nothing to report */
	}
}

/* The CQ never overruns (it queues what does not fit), so never full. */
static size_t p4f_sink_rma_space(struct p4e_eq *eq)
{
	(void)eq;
	return SIZE_MAX;
}

const struct p4e_eq_ops p4f_sink_rma_ops = {
	.deliver = p4f_sink_rma_deliver,
	.space = p4f_sink_rma_space,
};
