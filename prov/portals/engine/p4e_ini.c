/*
 * p4e_ini.c - the initiator side: put, get, atomic, fetch-atomic and
 * swap, from their post (p4e_ini_post.c) to the last event.
 *
 * An operation gets the next sequence number of its peer when posted and
 * is sent in that order (docs/design.md §4.4). Until the target accepts
 * it (a cumulative sequence ack, or its response: §7.1) the initiator
 * keeps what a resend needs (§4.1, §4.2): small and volatile payloads are
 * copied into a bounce block when one holds them (the SEND event then
 * comes at once), larger eager ones hold the caller's buffer (SEND comes
 * with acceptance), rendezvous ones are exposed to the target, which
 * pulls them (SEND and ACK come with its final ACK). A NACK or RESUME
 * (§7.2) sends everything unaccepted again, in order, eager puts to a
 * portal short of room as rendezvous.
 *
 * An operation is a state machine (enum p4e_op_state, p4e_priv.h) whose
 * state changes only in p4e_op_step(), which also moves it between its
 * peer's lists, delivers its events and frees it; the rest of this file
 * finds out what happened and says so (enum p4e_op_event):
 *
 *          POST           XMIT_OK,            ACCEPTED,
 *   FREE -------> QUEUED ------------> SENT -------------> WAIT_RESP
 *    ^              |    XMIT_QUEUED   | | ^ response due      |
 *    |              |           REWIND | | | XMIT_OK,          |
 *    |              |                  v | | XMIT_QUEUED       |
 *    |              |             REWOUND--+                   |
 *    |              v                 v  v                     v
 *    +--- no xmit_refs --- end <-------------------------------+
 *    |                      | xmit_refs
 *    +--- SEND_DONE, ---- DRAINING
 *         the last ref
 *
 * Into end: XMIT_FAIL (QUEUED, REWOUND), ACCEPTED with no response due
 * (SENT), RESPONSE (SENT, WAIT_RESP), LINK_FAILED (all four). Events go
 * at transitions: QUEUED -> SENT the SEND of a copy; ACCEPTED of an eager
 * payload its SEND, and the ACCEPT ack if it ends there; end whatever is
 * still owed (the response's ACK or REPLY, or UNDELIVERABLE), a
 * rendezvous source unexposed before its SEND. FREE releases the copy,
 * the exposure and the MDs. XMIT_EAGAIN keeps QUEUED and REWOUND as they
 * are; SEND_DONE counts xmit_refs down in any state that holds some. A
 * copied payload, an expected response, a resend as rendezvous are
 * facts (op->copied, want_resp, to_rdzv), not states.
 */
#include <config.h>

#include <assert.h>

#include "p4e_priv.h"
#include "p4e_atomic.h"

/* ---- events ----------------------------------------------------------- */

static void p4e_ini_event(struct p4e_op *op, struct p4e_md *md, uint8_t type,
			  uint8_t fail, uint64_t mlength, uint64_t offset,
			  uint8_t list)
{
	struct p4e_ni *ni = op->ni;
	bool ok = fail == P4E_NI_OK;
	bool bytes = md->options & P4E_MD_EVENT_CT_BYTES;
	bool full = true;
	unsigned ct_flag;
	struct p4e_event ev;

	switch (type) {
	case P4E_EVENT_SEND:
		ct_flag = P4E_MD_EVENT_CT_SEND;
		full = !(md->options & P4E_MD_EVENT_SEND_DISABLE);
		break;
	case P4E_EVENT_REPLY:
		ct_flag = P4E_MD_EVENT_CT_REPLY;
		break;
	default:
		ct_flag = P4E_MD_EVENT_CT_ACK;
		/* a counting ack is only counted */
		full = op->ack_req != P4E_CT_ACK_REQ &&
		       op->ack_req != P4E_OC_ACK_REQ;
		/* an operation-completed ack says only that the target is
		 * done, whatever it did: it counts operations (Portals);
		 * a message that never got there got no such ack */
		if (op->ack_req == P4E_OC_ACK_REQ) {
			ok = fail != P4E_NI_UNDELIVERABLE;
			bytes = false;
		}
		break;
	}
	if (md->options & ct_flag)
		p4e_ct_count(ni->dom, md->ct, ok,
			     bytes, mlength);
	if (!full || !md->eq ||
	    (ok && (md->options & P4E_MD_EVENT_SUCCESS_DISABLE)))
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.ni_fail_type = fail;
	ev.list = list;		/* where the target delivered it */
	ev.pt_index = op->pt_index;
	ev.initiator = op->target;
	ev.user_ptr = op->user_ptr;
	ev.user_flags = op->user_flags;
	ev.hdr_data = op->hdr_data;
	ev.match_bits = op->match_bits;
	ev.rlength = op->length;
	ev.mlength = mlength;
	ev.remote_offset = offset;
	ev.atomic_op = op->atomic_op;
	ev.atomic_type = op->atomic_type;
	/* a fetch's REPLY reports where the old values went */
	if (type == P4E_EVENT_REPLY && op->get_md) {
		ev.start = p4e_region_addr(md->start, md->iovcnt,
					   op->get_local_offset);
	} else {
		void *start;
		uint32_t iovcnt;
		uint64_t off;

		p4e_op_region(op, &start, &iovcnt, &off);
		ev.start = p4e_region_addr(start, iovcnt, off);
	}
	p4e_event_deliver(md->eq, &ev);
}

/*
 * The operation's last event or count is out: its MDs stop counting it,
 * so the caller who saw that event may release them (Portals: an MD with
 * no pending operation). The op may live on for the transport (a copy
 * kept for a resend until acceptance, sends still queued: DRAINING), but
 * it no longer reads its MDs: a copy resends from op->bounce, and
 * nothing it still does reports to them.
 */
static void p4e_op_md_done(struct p4e_op *op)
{
	if (op->md_done)
		return;
	op->md_done = true;
	op->md->pending--;
	if (op->get_md)
		op->get_md->pending--;
}

/*
 * SEND: the caller's buffer is ours no more (a get sends nothing of it).
 * From here the caller counts the operation done; what lives on (a copy
 * the target has not taken yet) is counted against limits.max_held.
 */
static void p4e_ini_send_event(struct p4e_op *op, uint8_t fail)
{
	if (op->type == P4W_GET)
		return;
	if (!op->completed) {
		op->completed = true;
		op->ni->held++;
	}
	p4e_ini_event(op, op->md, P4E_EVENT_SEND, fail,
		      fail == P4E_NI_OK ? op->length : 0, 0, P4E_PRIORITY_LIST);
	/* without an ack SEND is the last event, though a copy sent at once
	 * waits for its acceptance (it used to keep the MD pending) */
	if (op->ack_req == P4E_NO_ACK_REQ)
		p4e_op_md_done(op);
}

static void p4e_ini_ack_event(struct p4e_op *op, uint8_t fail,
			      uint64_t mlength, uint64_t offset, uint8_t list)
{
	if (op->ack_req != P4E_NO_ACK_REQ)
		p4e_ini_event(op, op->md, P4E_EVENT_ACK, fail, mlength, offset,
			      list);
}

static bool p4e_ini_acked_type(const struct p4e_op *op)
{
	return op->type == P4W_PUT || op->type == P4W_ATOMIC;
}

/*
 * The failure a SEND reports when a response ends the operation. SEND
 * says the buffer is free; what the target did is the ACK's or REPLY's
 * to report. Only a message that never got there fails its SEND, as a
 * copied payload's SEND (delivered at once) could not report more.
 */
static uint8_t p4e_ini_send_fail(uint8_t fail)
{
	return p4e_fail_undelivered(fail) ? fail : P4E_NI_OK;
}

/* ---- the state machine -------------------------------------------------- */

/* An event the state does not expect: a bug of ours, never input. */
static __attribute__((noinline, cold)) int
p4e_op_refuse(const struct p4e_op *op, enum p4e_op_event ev)
{
	p4u_warn(P4U_LOG_ENGINE,
		 "initiator op seq %u to peer %u: %s refused in state %s",
		 op->seq, op->peer ? op->peer->id : 0,
		 p4e_op_event_name(ev), p4e_op_state_name(op->state));
	assert(!"invalid initiator operation transition");
	return -FI_EINVAL;
}

/*
 * Whether the SEND event is still to come. It goes once: when a copy is
 * first handed to the transport, at acceptance for an eager payload of
 * the caller's, with the response for a rendezvous one.
 */
static bool p4e_op_send_owed(const struct p4e_op *op)
{
	switch (op->state) {
	case P4E_OPS_QUEUED:
		return true;
	case P4E_OPS_SENT:
	case P4E_OPS_REWOUND:
		return !op->copied || op->copy_unsent;
	case P4E_OPS_WAIT_RESP:
		return (!op->copied || op->copy_unsent) &&
		       op->proto == P4W_PROTO_RDZV;
	default:
		return false;
	}
}

/* What ends an operation that never got there. */
static const struct p4w_resp p4e_op_undeliverable = {
	.fail = P4E_NI_UNDELIVERABLE,
	.list = P4E_PRIORITY_LIST,
};

/*
 * The last events: the SEND still owed, then the ACK or REPLY (a reply's
 * data is in place already). A rendezvous source is unexposed before its
 * SEND says the buffer is free.
 */
static void p4e_op_last_events(struct p4e_op *op,
			       const struct p4w_resp *r)
{
	/* the list events name, without P4E_RESP_NO_ACK */
	uint8_t list = r->list & (uint8_t)~P4E_RESP_NO_ACK;

	if (p4e_ini_acked_type(op) && op->mem) {
		p4t_mem_unexpose(op->mem_iface, op->mem);
		op->mem = NULL;
	}
	if (p4e_op_send_owed(op))
		p4e_ini_send_event(op, p4e_ini_send_fail(r->fail));
	op->copy_unsent = false;
	if (p4e_ini_acked_type(op)) {
		/* an entry with P4E_ME_ACK_DISABLE: the response only ends it */
		if (!(r->list & P4E_RESP_NO_ACK))
			p4e_ini_ack_event(op, r->fail, r->mlength, r->offset,
					  list);
	} else {
		/* a REPLY is one whatever bit it carries */
		p4e_ini_event(op, op->get_md ? op->get_md : op->md,
			      P4E_EVENT_REPLY, r->fail, r->mlength, r->offset,
			      list);
	}
}

/* Back to the pool with everything the operation held. */
static void p4e_op_release(struct p4e_op *op)
{
	struct p4e_ni *ni = op->ni;

	if (op->mem)
		p4t_mem_unexpose(op->mem_iface, op->mem);
	p4e_op_copy_drop(op);
	if (op->iovbuf)
		p4u_pool_free(&ni->iovbufs, op->iovbuf);
	if (op->completed)
		ni->held--;
	p4e_op_md_done(op);
	op->state = P4E_OPS_FREE;
	p4u_pool_free(&ni->ops, op);
}

/* Its last event went: off its list, freed once the transport lets go. */
static void p4e_op_end(struct p4e_op *op)
{
	/* not at the transport's SEND_DONE, which may come later */
	p4e_op_md_done(op);
	p4u_list_remove(&op->link);
	if (op->xmit_refs)
		op->state = P4E_OPS_DRAINING;
	else
		p4e_op_release(op);
}

static void p4e_op_move(struct p4e_op *op, struct p4u_list *list,
			enum p4e_op_state state)
{
	p4u_list_remove(&op->link);
	p4u_list_insert_tail(list, &op->link);
	op->state = state;
}

/* Inlined here, where callers name the event: each keeps its case only
 * (an 8-byte put steps three times). Other files call the copy. */
__attribute__((always_inline)) inline int
p4e_op_step(struct p4e_op *op, enum p4e_op_event ev,
	    const struct p4w_resp *resp)
{
	struct p4e_npeer *np = op->peer;
	enum p4e_op_state state = op->state;

	switch (ev) {
	case P4E_OPE_POST:
		if (state != P4E_OPS_FREE)
			break;
		p4e_op_move(op, &np->tx_queue, P4E_OPS_QUEUED);
		return 0;
	case P4E_OPE_XMIT_OK:
	case P4E_OPE_XMIT_QUEUED:
		if (state != P4E_OPS_QUEUED && state != P4E_OPS_REWOUND)
			break;
		if (ev == P4E_OPE_XMIT_QUEUED)
			op->xmit_refs++;
		p4e_op_move(op, &np->tx_sent, P4E_OPS_SENT);
		/* the copy is ours: the caller's buffer is free; SEND once it
		 * left (queued: at SEND_DONE, docs/design.md §7.6) */
		if (op->copied && state == P4E_OPS_QUEUED &&
		    !(op->copy_unsent = ev == P4E_OPE_XMIT_QUEUED))
			p4e_ini_send_event(op, P4E_NI_OK);
		return 0;
	case P4E_OPE_XMIT_EAGAIN:
		if (state != P4E_OPS_QUEUED && state != P4E_OPS_REWOUND)
			break;
		return 0;
	case P4E_OPE_XMIT_FAIL:
	case P4E_OPE_LINK_FAILED:
		if (state == P4E_OPS_FREE || state == P4E_OPS_DRAINING ||
		    (ev == P4E_OPE_XMIT_FAIL && state != P4E_OPS_QUEUED &&
		     state != P4E_OPS_REWOUND))
			break;
		/* LINK_FAILED's resp says why (p4e_ini_fail_peer) */
		p4e_op_last_events(op, resp ? resp : &p4e_op_undeliverable);
		p4e_op_end(op);
		return 0;
	case P4E_OPE_SEND_DONE:
		if (!op->xmit_refs || state == P4E_OPS_FREE)
			break;
		/* written (resp): a copy's SEND that waited for it */
		if (resp && op->copy_unsent && state != P4E_OPS_DRAINING) {
			op->copy_unsent = false;
			p4e_ini_send_event(op, P4E_NI_OK);
		}
		if (--op->xmit_refs == 0 && state == P4E_OPS_DRAINING)
			p4e_op_release(op);
		return 0;
	case P4E_OPE_ACCEPTED:
		if (state != P4E_OPS_SENT)
			break;
		if (op->proto != P4W_PROTO_RDZV) {
			/* the payload is at the target: the buffer is free */
			if (p4e_op_send_owed(op))
				p4e_ini_send_event(op, P4E_NI_OK);
			op->copy_unsent = false;
			if (op->ack_req == P4E_ACK_ACCEPT &&
			    p4e_ini_acked_type(op) && !op->want_resp)
				p4e_ini_ack_event(op, P4E_NI_OK, op->length,
						  op->remote_offset,
						  P4E_PRIORITY_LIST);
		}
		if (op->want_resp)
			p4e_op_move(op, &np->tx_wait, P4E_OPS_WAIT_RESP);
		else
			p4e_op_end(op);
		return 0;
	case P4E_OPE_REWIND:
		if (state != P4E_OPS_SENT)
			break;
		p4e_op_move(op, &np->tx_queue, P4E_OPS_REWOUND);
		return 0;
	case P4E_OPE_RESPONSE:
		if ((state != P4E_OPS_SENT && state != P4E_OPS_WAIT_RESP) ||
		    !resp)
			break;
		p4e_op_last_events(op, resp);
		p4e_op_end(op);
		return 0;
	default:
		break;
	}
	return p4e_op_refuse(op, ev);
}

/* ---- what happened to operations ---------------------------------------- */

void p4e_ini_fail_peer(struct p4e_npeer *np, uint8_t fail)
{
	struct p4u_list *lists[] = { &np->tx_sent, &np->tx_wait,
				     &np->tx_queue };
	const struct p4w_resp r = { .fail = fail, .list = P4E_PRIORITY_LIST };
	struct p4e_op *op, *tmp;
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(lists); i++)
		p4u_list_foreach_entry_safe(lists[i], op, tmp, struct p4e_op,
					    link)
			p4e_op_step(op, P4E_OPE_LINK_FAILED, &r);
}

void p4e_ini_accepted(struct p4e_op *op)
{
	p4e_op_step(op, P4E_OPE_ACCEPTED, NULL);
}

void p4e_ini_send_done(struct p4e_ni *ni, struct p4e_op *op, int status)
{
	(void)ni;
	/* a failed send fails its link: conn_failed follows */
	p4e_op_step(op, P4E_OPE_SEND_DONE, status ? NULL :
		    &(const struct p4w_resp){ .fail = P4E_NI_OK });
}

void p4e_ini_rma_done(struct p4e_ni *ni, void *ctx, int status)
{
	/* initiators only expose memory; targets pull and push */
	(void)ni;
	(void)ctx;
	(void)status;
}

/* ---- sending ------------------------------------------------------------ */

/*
 * The target kept no room for this eager put's payload (p4e_fc_nacked_rdzv):
 * expose what we kept for a resend, the bounce copy or the caller's
 * buffer, and send it as rendezvous. It then ends like one, with the
 * target's ACK after its pull.
 */
static int p4e_ini_to_rdzv(struct p4e_op *op)
{
	struct iovec iov[P4E_IOV_MAX];
	size_t cnt = 1;
	int ret;

	if (op->copied) {
		iov[0].iov_base = op->bounce;
		iov[0].iov_len = op->length;
	} else {
		void *start;
		uint32_t iovcnt;
		uint64_t off;

		p4e_op_region(op, &start, &iovcnt, &off);
		cnt = p4e_region_iov(start, iovcnt, off, op->length, iov,
				     P4E_IOV_MAX);
	}
	op->mem_iface = op->peer->xp->iface;
	ret = p4t_mem_expose(op->mem_iface, op->peer->conn, iov, cnt,
			     P4T_ACCESS_READ, &op->cookie, &op->mem);
	if (ret)
		return ret;
	op->proto = P4W_PROTO_RDZV;
	op->to_rdzv = false;
	op->want_resp = true;
	op->ni->sr[P4E_SR_RESENT_AS_RDZV]++;
	return 0;
}

/*
 * Does the caller wait for this request's acceptance? Then the target
 * must not hold its acknowledgement back (P4W_F_ACK_NOW): a SEND that
 * comes with it (the caller's buffer is held), an ACCEPT ack. A request
 * that gets a response is acknowledged by it; a copied one only frees our
 * copy, unless copies and operations run short: over half of the
 * operations the caller waits for, or of those or the bytes kept after
 * completion (§7.5).
 */
static bool p4e_ini_ack_now(const struct p4e_op *op)
{
	struct p4e_ni *ni = op->ni;

	if ((p4u_pool_in_use(&ni->ops) - ni->held) * 2 > ni->ops_credit ||
	    ni->held * 2 > ni->limits.max_held ||
	    ni->copies.bytes * 2 > ni->copies.max_bytes)
		return true;
	if (op->proto == P4W_PROTO_RDZV || op->want_resp)
		return false;
	return !op->copied || op->ack_req == P4E_ACK_ACCEPT;
}

/* The request body, made at every (re)send from the op's fields. */
static void p4e_ini_req(const struct p4e_op *op, struct p4w_req *req)
{
	*req = (struct p4w_req){
		.op_id = p4u_pool_handle(&op->ni->ops, op),
		.match_bits = op->match_bits,
		.remote_offset = op->remote_offset,
		.hdr_data = op->hdr_data,
		.rlength = op->length,
		.pt_index = op->pt_index,
		.uid = op->ni->uid,
		.ack_req = op->ack_req,
		.atomic_op = op->atomic_op,
		.atomic_type = op->atomic_type,
		.proto = op->proto,
		.rflags = op->rflags,
	};
}

static int p4e_ini_xmit(struct p4e_op *op)
{
	struct p4e_npeer *np = op->peer;
	struct p4w_req req;
	uint8_t buf[P4E_REQ_HDR_MAX];
	struct iovec iov[P4E_IOV_MAX];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = op->type,
		.seq = op->seq,
	};
	size_t len = sizeof(hdr) + sizeof(struct p4w_req), cnt = 0;
	uint64_t payload = 0;
	bool offer;
	int ret;

	ret = p4e_npeer_connect(np);
	if (ret)
		return ret;
	/*
	 * A rendezvous put small enough goes with its data behind it: placed
	 * at once if it matches. Decided before the conversion below: an
	 * eager put the target had no room for (op->to_rdzv) is still
	 * eager here and does not offer; it would most likely sit unexpected
	 * there.
	 */
	offer = op->proto == P4W_PROTO_RDZV && op->type == P4W_PUT &&
		op->length <= np->xp->attr.max_offer;
	if (op->to_rdzv) {
		ret = p4e_ini_to_rdzv(op);
		if (ret)
			return ret;
	}
	if (op->proto == P4W_PROTO_RDZV) {
		p4w_cookie_pack(buf + len, &op->cookie);
		len += sizeof(struct p4w_cookie);
	}
	if (op->rflags & P4W_RF_PUSH) {
		p4w_cookie_pack(buf + len, &op->cookie);
		len += sizeof(struct p4w_cookie);
	}
	if (op->proto == P4W_PROTO_EAGER && op->type != P4W_GET) {
		if (op->copied) {
			iov[0].iov_base = op->bounce;
			iov[0].iov_len = op->bounce_len;
			cnt = op->bounce_len ? 1 : 0;
			payload = op->bounce_len;
		} else {
			void *start;
			uint32_t iovcnt;
			uint64_t off;

			p4e_op_region(op, &start, &iovcnt, &off);
			cnt = p4e_region_iov(start, iovcnt, off, op->length,
					     iov, P4E_IOV_MAX);
			payload = op->length;
		}
	}
	hdr.length = (uint32_t)(len + payload);
	if (p4e_ini_ack_now(op))
		hdr.flags |= P4W_F_ACK_NOW;
	/* held acknowledgements go first: this one carries a later ack_seq */
	if (np->nheld)
		p4e_fc_release(np);
	p4e_fc_stamp(np, &hdr);
	p4w_hdr_pack(buf, &hdr);
	p4e_ini_req(op, &req);
	p4w_req_pack(buf + sizeof(hdr), &req);
	if (offer)
		ret = p4t_send_offer(np->xp->iface, np->conn, buf, len, op->mem,
				     op->length, p4e_ctx_make(op, P4E_CTX_OP),
				     p4e_fc_send_flags(np, true,
							  op->xflags & P4E_XFER_MORE));
	else
		ret = p4t_send(np->xp->iface, np->conn, buf, len, iov, cnt,
			       p4e_ctx_make(op, P4E_CTX_OP),
			       p4e_fc_send_flags(np, true,
							  op->xflags & P4E_XFER_MORE));
	return ret;	/* P4T_DONE, P4T_QUEUED or < 0 */
}

int p4e_ini_flush(struct p4e_npeer *np)
{
	struct p4e_op *op;
	int ret = 0;

	while (!np->tx_held &&
	       (op = p4u_list_first_entry(&np->tx_queue, struct p4e_op,
					  link))) {
		/* requests never pass responses still waiting for room */
		ret = p4u_list_empty(&np->deferred) ? p4e_ini_xmit(op) :
						      -FI_EAGAIN;
		if (ret == -FI_EAGAIN) {
			p4e_op_step(op, P4E_OPE_XMIT_EAGAIN, NULL);
			if (!p4u_list_node_linked(&np->flush_link))
				p4u_list_insert_tail(&np->ni->flush,
						     &np->flush_link);
			return 0;
		}
		if (ret < 0) {
			p4u_warn_sparse(P4U_LOG_ENGINE,
					"send to peer %u failed: %d", np->id,
					ret);
			p4e_op_step(op, P4E_OPE_XMIT_FAIL, NULL);
			continue;
		}
		p4e_op_step(op, ret == P4T_QUEUED ? P4E_OPE_XMIT_QUEUED :
						    P4E_OPE_XMIT_OK, NULL);
		ret = 0;
	}
	p4u_list_remove(&np->flush_link);
	return ret;
}

/* ---- responses ---------------------------------------------------------- */

/* Rule 14: only a request the target has (SENT) or accepted
 * (WAIT_RESP) is answered; one that expects no response gets one only to
 * report a failure. */
static bool p4e_ini_resp_expected(const struct p4e_op *op, uint8_t fail)
{
	if (op->state != P4E_OPS_SENT && op->state != P4E_OPS_WAIT_RESP)
		return false;
	return op->want_resp || fail != P4E_NI_OK;
}

/* A REPLY's data into the local buffer, unless it was pushed there. */
static int p4e_ini_reply_data(struct p4e_op *op,
			      const struct p4w_resp_parts *rp)
{
	struct p4e_md *md = op->get_md ? op->get_md : op->md;
	void *start = md->start;
	uint32_t iovcnt = md->iovcnt;
	uint64_t off = op->get_local_offset;

	if (rp->resp.pushed && !(op->rflags & P4W_RF_PUSH))
		return -FI_EBADMSG;
	if (!op->get_md)
		p4e_op_region(op, &start, &iovcnt, &off);
	if (rp->resp.fail == P4E_NI_OK && !rp->resp.pushed)
		p4e_region_copy_in(start, iovcnt, off, rp->data,
				   rp->resp.mlength);
	return 0;
}

int p4e_ini_response(struct p4e_ni *ni, struct p4e_npeer *np,
		     const struct p4w_hdr *hdr, const void *msg)
{
	struct p4w_resp_parts rp;
	struct p4e_op *op;
	uint32_t seq;
	int ret;

	ret = p4w_resp_parse(hdr, msg, &rp);
	if (ret)
		return ret;
	op = p4u_pool_lookup(&ni->ops, rp.resp.op_id);
	if (!op || op->peer != np) {
		/* a late response for an operation already failed and freed
		 * (rule 6): dropped, never written anywhere */
		ni->sr[P4E_SR_DROP_COUNT]++;
		return 0;
	}
	/* puts and atomics get ACKs, the others REPLYs */
	if (p4e_ini_acked_type(op) == (hdr->type == P4W_REPLY))
		return -FI_EBADMSG;
	/* rule 14: a target never manipulates more than was sent */
	if (rp.resp.mlength > op->length)
		return -FI_EBADMSG;
	if (!p4e_ini_resp_expected(op, rp.resp.fail))
		return -FI_EBADMSG;
	if (hdr->type == P4W_REPLY) {
		ret = p4e_ini_reply_data(op, &rp);
		if (ret)
			return ret;
	}
	seq = op->seq;
	p4e_op_step(op, P4E_OPE_RESPONSE, &rp.resp);
	/*
	 * A response means the target processed this request and every
	 * earlier one. Its events went first: a failed ACCEPT-acked op must
	 * not be reported a success by the acceptance.
	 */
	p4e_fc_tx_acked(np, seq + 1);
	return 0;
}
