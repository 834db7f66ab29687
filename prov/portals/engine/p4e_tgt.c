/*
 * p4e_tgt.c - the target side: what happens to an incoming put, get,
 * atomic, fetch-atomic or swap (docs/design.md §4.2, §6, §7.2):
 *
 *   sequence check -> PT -> priority list -> overflow list -> no match
 *        |               |                |               |
 *        |          permission       permission      flow control
 *        |               |                |          or drop
 *     (stale:        deliver          deliver +
 *      dropped)                       unexpected header
 *
 * A rejected operation changes nothing but the status registers (rule
 * 2). Work that outlives the message (a rendezvous pull, a pushed get
 * reply) is a struct p4e_tgt_op: its state machine is p4e_tgt_op.c.
 */
#include <config.h>

#include <assert.h>
#include <inttypes.h>

#include "p4e_priv.h"
#include "p4e_atomic.h"

/* Per message: the parsed request and where it came from. */
struct p4e_tgt_msg {
	struct p4e_ni *ni;
	struct p4e_npeer *np;
	const struct p4w_hdr *hdr;
	struct p4w_req_parts parts;
	struct p4e_pt *pt;
};

static const uint8_t p4e_tgt_event[] = {
	[P4W_PUT] = P4E_EVENT_PUT,
	[P4W_GET] = P4E_EVENT_GET,
	[P4W_ATOMIC] = P4E_EVENT_ATOMIC,
	[P4W_FETCH] = P4E_EVENT_FETCH_ATOMIC,
	[P4W_SWAP] = P4E_EVENT_FETCH_ATOMIC,
};

/* ---- responses -------------------------------------------------------- */

int p4e_tgt_respond(struct p4e_ni *ni, struct p4e_npeer *np, uint8_t type,
		    const struct p4w_resp *resp, const struct iovec *iov,
		    size_t iovcnt)
{
	return p4e_tgt_respond_ctx(ni, np, type, resp, iov, iovcnt, NULL);
}

int p4e_tgt_respond_ctx(struct p4e_ni *ni, struct p4e_npeer *np, uint8_t type,
			const struct p4w_resp *resp, const struct iovec *iov,
			size_t iovcnt, void *op_ctx)
{
	uint8_t buf[P4E_RESP_HDR_MAX];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = type,
	};
	int ret;

	(void)ni;
	if (!np->conn)
		return -FI_ENOTCONN;
	/* held ones first: this message tells the acceptance as it is now */
	if (np->nheld)
		p4e_fc_release(np);
	hdr.length = (uint32_t)(sizeof(buf) + p4e_iov_total(iov, iovcnt));
	p4e_fc_stamp(np, &hdr);
	p4w_hdr_pack(buf, &hdr);
	p4w_resp_pack(buf + sizeof(hdr), resp);
	(void)op_ctx;	/* responses are copied when they must wait */
	/* the ACK that ends a rendezvous may wait for the stream (p4e_fc.c) */
	if (type == P4W_ACK && !iovcnt)
		ret = p4e_fc_send_ack(np, buf, sizeof(buf));
	else
		ret = p4e_npeer_send_msg(np, buf, sizeof(buf), iov, iovcnt);
	if (ret < 0)
		p4u_warn_sparse(P4U_LOG_ENGINE,
				"response to peer %u not sent: %d", np->id,
				ret);
	return ret;
}

/* Tell the initiator an operation failed (or, for NO_ACK_REQ, nothing). */
static void p4e_tgt_reject(struct p4e_tgt_msg *m, uint8_t fail)
{
	const struct p4w_req *req = &m->parts.req;
	struct p4w_resp resp = {
		.op_id = req->op_id,
		.fail = fail,
	};

	/* the response goes before the acceptance is stamped on anything,
	 * so the initiator sees the failure before the cumulative ack */
	if (p4e_wants_reply(m->hdr->type))
		p4e_tgt_respond(m->ni, m->np, P4W_REPLY, &resp, NULL, 0);
	else if (req->ack_req != P4E_NO_ACK_REQ ||
		 req->proto == P4W_PROTO_RDZV)
		p4e_tgt_respond(m->ni, m->np, P4W_ACK, &resp, NULL, 0);
	p4e_fc_accepted(m->np);
}

/* The ACK a successful put or atomic owes its initiator. */
static void p4e_tgt_ack(struct p4e_ni *ni, struct p4e_npeer *np, uint8_t ack_req,
			bool rdzv, uint64_t op_id, uint64_t mlength,
			uint64_t offset, uint8_t list, uint8_t fail)
{
	struct p4w_resp resp = {
		.op_id = op_id,
		.mlength = mlength,
		.offset = offset,
		.fail = fail,
		.list = list,
	};

	/* ACCEPT rides on the cumulative sequence ack unless it failed;
	 * a rendezvous always ends with an ACK (the initiator unexposes) */
	if (!rdzv && (ack_req == P4E_NO_ACK_REQ ||
		      (ack_req == P4E_ACK_ACCEPT && fail == P4E_NI_OK)))
		return;
	p4e_tgt_respond(ni, np, P4W_ACK, &resp, NULL, 0);
}

/* ---- flow control ------------------------------------------------------- */

/* Resources ran out for this message. Returns 0 (handled). */
static int p4e_tgt_flowctrl(struct p4e_tgt_msg *m)
{
	struct p4e_pt *pt = m->pt;
	struct p4e_event ev;

	if (pt->options & P4E_PT_FC_RESEND) {
		/* hold this initiator back; it resends from here later */
		m->ni->sr[P4E_SR_FLOWCTRL]++;
		p4e_fc_nack(m->np, pt);
		return 0;
	}
	if (pt->options & P4E_PT_FLOWCTRL) {
		m->ni->sr[P4E_SR_FLOWCTRL]++;
		if (pt->enabled) {
			pt->enabled = false;
			memset(&ev, 0, sizeof(ev));
			ev.type = P4E_EVENT_PT_DISABLED;
			ev.ni_fail_type = P4E_NI_PT_DISABLED;
			ev.pt_index = m->parts.req.pt_index;
			ev.initiator = P4E_ID_ANY;
			p4e_event_deliver(pt->eq, &ev);
		}
		p4e_tgt_reject(m, P4E_NI_PT_DISABLED);
		return 0;
	}
	m->ni->sr[P4E_SR_DROP_COUNT]++;
	p4e_tgt_reject(m, P4E_NI_DROPPED);
	return 0;
}

/*
 * The unexpected-header budget (limits.max_unexpected_headers) is spent:
 * the sender is held until receives take headers. Counted, and said once
 * per NI in the log (docs/design.md §7.2: what happens past the budget).
 */
static int p4e_tgt_uh_spent(struct p4e_tgt_msg *m)
{
	struct p4e_ni *ni = m->ni;

	ni->sr[P4E_SR_UH_FULL]++;
	if (!(ni->warned & P4E_WARN_UH)) {
		ni->warned |= P4E_WARN_UH;
		p4u_warn(P4U_LOG_ENGINE, "unexpected-message budget spent "
			 "(%u headers): holding peer %u, and any other that "
			 "sends more, until receives take some",
			 ni->limits.max_unexpected_headers, m->np->id);
	}
	return p4e_tgt_flowctrl(m);
}

/* ---- unexpected headers -------------------------------------------------- */

static void p4e_tgt_uh_fill(struct p4e_tgt_msg *m, struct p4e_uh *uh,
			    struct p4e_me *me, uint64_t offset,
			    uint64_t mlength)
{
	const struct p4w_req *req = &m->parts.req;

	uh->pt_index = (uint16_t)req->pt_index;
	uh->type = m->hdr->type;
	uh->ack_req = req->ack_req;
	uh->atomic_op = req->atomic_op;
	uh->atomic_type = req->atomic_type;
	uh->proto = req->proto;
	uh->uid = req->uid;
	uh->op_id = req->op_id;
	uh->rlength = req->rlength;
	uh->mlength = mlength;
	uh->remote_offset = req->remote_offset;
	uh->hdr_data = req->hdr_data;
	uh->ev_flags = (req->rflags & P4W_RF_HDR_DATA) ?
		P4E_EVENT_F_HDR_DATA : 0;
	if (me) {
		uh->oflow_me = me;
		uh->oflow_offset = offset;
		uh->filling = NULL;
		uh->waiter = NULL;
		me->uh_refs++;
	} else if (m->parts.has_src) {
		uh->src = m->parts.src;
	}
	/* the index keeps the match bits and the initiator for us */
	p4e_uindex_insert(&m->pt->uhs, &uh->uent, req->match_bits, m->np->id);
}

void p4e_tgt_uh_dropped(struct p4e_ni *ni, struct p4e_uh *uh)
{
	struct p4e_npeer *np = uh->uent.source < ni->npeers_cap ?
		ni->npeers[uh->uent.source] : NULL;

	/* a rendezvous initiator still exposes its buffer: release it */
	if (uh->proto == P4W_PROTO_RDZV && !uh->oflow_me && np && np->conn)
		p4e_tgt_ack(ni, np, uh->ack_req, true, uh->op_id, 0, 0,
			    P4E_OVERFLOW_LIST, P4E_NI_OK);
}

/* ---- delivery ------------------------------------------------------------- */

static void p4e_tgt_op_from_msg(struct p4e_tgt_msg *m, struct p4e_tgt_op *top,
				struct p4e_me *me, uint64_t offset,
				uint64_t mlength)
{
	const struct p4w_req *req = &m->parts.req;

	top->ni = m->ni;
	top->peer = m->np;
	top->me = me;
	top->type = m->hdr->type;
	top->ack_req = req->ack_req;
	top->list = me->list;
	top->event_type = p4e_tgt_event[m->hdr->type];
	top->atomic_op = req->atomic_op;
	top->atomic_type = req->atomic_type;
	top->pt_index = req->pt_index;
	top->initiator = m->np->id;
	top->uid = req->uid;
	top->op_id = req->op_id;
	top->match_bits = req->match_bits;
	top->rlength = req->rlength;
	top->mlength = mlength;
	top->offset = offset;
	top->remote_offset = req->remote_offset;
	top->hdr_data = req->hdr_data;
	top->ev_flags = (req->rflags & P4W_RF_HDR_DATA) ?
		P4E_EVENT_F_HDR_DATA : 0;
	/* rule 4: an offset past the entry has no address (mlength 0) */
	top->start = offset <= me->length ?
		     p4e_region_addr(me->start, me->iovcnt, offset) : NULL;
}

/* Atomics need the target bytes (len > 0) in one piece. */
static void *p4e_tgt_atomic_addr(struct p4e_me *me, uint64_t offset,
				 uint64_t len)
{
	struct iovec iov[1];

	if (p4e_region_iov(me->start, me->iovcnt, offset, len, iov, 1) != 1)
		return NULL;
	return iov[0].iov_base;
}

/* PUT, eager or rendezvous. */
static int p4e_tgt_put(struct p4e_tgt_msg *m, struct p4e_me *me,
		       struct p4e_uh *uh, uint64_t offset, uint64_t mlength)
{
	const struct p4w_req *req = &m->parts.req;
	struct p4e_tgt_op *top;
	struct p4e_tgt_op tmp;
	struct p4e_event ev;

	if (req->proto == P4W_PROTO_RDZV) {
		if (uh && (me->options &
			   (P4E_ME_RDZV_HDR_ONLY | P4E_ME_HDR_ONLY))) {
			/* unexpected and large: keep only the header */
			p4e_fc_accepted(m->np);
			p4e_tgt_uh_fill(m, uh, NULL, 0, 0);
			return 0;
		}
		top = p4u_pool_alloc(&m->ni->tops);
		if (!top) {
			if (uh)
				p4u_pool_free(&m->ni->uhs, uh);
			return p4e_tgt_flowctrl(m);
		}
		p4e_fc_accepted(m->np);
		p4e_tgt_op_from_msg(m, top, me, offset, mlength);
		if (uh) {
			p4e_tgt_uh_fill(m, uh, me, offset, mlength);
			uh->filling = top;
			top->filling_uh = uh;
		}
		me->pending++;
		/* reserve: later messages must not land on this space */
		p4e_me_used(me, mlength, req->rlength);
		return p4e_tgt_start_pull(m->ni, top, &m->parts.src);
	}

	p4e_region_copy_in(me->start, me->iovcnt, offset, m->parts.payload,
			   mlength);
	p4e_tgt_op_from_msg(m, &tmp, me, offset, mlength);
	if (uh)
		p4e_tgt_uh_fill(m, uh, me, offset, mlength);
	p4e_tgt_ack(m->ni, m->np, req->ack_req, false, req->op_id, mlength,
		    offset, P4E_RESP_LIST(me), P4E_NI_OK);
	p4e_fc_accepted(m->np);
	p4e_tgt_event_fill(&tmp, &ev, P4E_NI_OK);
	p4e_me_emit(me, &ev);
	p4e_me_used(me, mlength, req->rlength);
	return 0;
}

/* GET: reply inline, or push large replies to the initiator's cookie. */
static int p4e_tgt_get(struct p4e_tgt_msg *m, struct p4e_me *me,
		       struct p4e_uh *uh, uint64_t offset, uint64_t mlength)
{
	const struct p4w_req *req = &m->parts.req;
	struct iovec iov[P4E_IOV_MAX];
	struct p4e_tgt_op *top;
	struct p4w_resp resp = {
		.op_id = req->op_id,
		.mlength = mlength,
		.offset = offset,
		.list = me->list,
	};
	size_t cnt;
	int ret;

	top = p4u_pool_alloc(&m->ni->tops);
	if (!top) {
		if (uh)
			p4u_pool_free(&m->ni->uhs, uh);
		return p4e_tgt_flowctrl(m);
	}
	p4e_fc_accepted(m->np);
	p4e_tgt_op_from_msg(m, top, me, offset, mlength);
	if (uh)
		p4e_tgt_uh_fill(m, uh, me, offset, mlength);
	me->pending++;
	p4e_me_used(me, mlength, req->rlength);
	p4e_tgt_step(top, P4E_TGTE_MATCH, P4E_NI_OK);
	cnt = p4e_region_iov(me->start, me->iovcnt, offset, mlength, iov,
			     P4E_IOV_MAX);
	if (m->parts.has_dst && mlength) {
		p4e_tgt_step(top, P4E_TGTE_PUSH, P4E_NI_OK);
		ret = p4t_push(m->np->xp->iface, m->np->conn, iov, cnt, mlength,
			       &m->parts.dst, 0,
			       p4e_ctx_make(top, P4E_CTX_TOP));
		if (ret)
			p4e_tgt_step(top, P4E_TGTE_RMA_DONE,
				     P4E_NI_UNDELIVERABLE);
		return 0;
	}
	p4e_tgt_respond(m->ni, m->np, P4W_REPLY, &resp, iov, cnt);
	p4e_tgt_step(top, P4E_TGTE_DONE, P4E_NI_OK);
	return 0;
}

static void p4e_tgt_old_free(struct p4e_ni *ni, struct iovec *iov,
			     size_t cnt)
{
	while (cnt--)
		p4e_copy_free(&ni->copies, iov[cnt].iov_base, iov[cnt].iov_len);
}

/*
 * Copies for a fetch's old values, as many as mlength needs: the largest
 * fetch (max_atomic_size) may exceed the largest copy. -FI_EAGAIN when
 * the copies' budget is spent, -FI_EMSGSIZE when P4E_IOV_MAX copies
 * cannot hold it.
 */
static int p4e_tgt_old_alloc(struct p4e_ni *ni, uint64_t mlength,
			     size_t esize, struct iovec *iov, size_t *cnt_p)
{
	size_t chunk = ni->copies.max_len - ni->copies.max_len % esize;
	uint64_t left = mlength;
	size_t cnt = 0;

	do {
		if (cnt == P4E_IOV_MAX) {
			p4e_tgt_old_free(ni, iov, cnt);
			return -FI_EMSGSIZE;
		}
		iov[cnt].iov_len = P4U_MIN(left, chunk);
		iov[cnt].iov_base = p4e_copy_alloc(&ni->copies,
						   P4U_MAX(iov[cnt].iov_len, 1));
		if (!iov[cnt].iov_base) {
			p4e_tgt_old_free(ni, iov, cnt);
			return -FI_EAGAIN;
		}
		left -= iov[cnt].iov_len;
		cnt++;
	} while (left);
	*cnt_p = cnt;
	return 0;
}

/* Apply to target, the old values (if any) going to old[], in order. */
static int p4e_tgt_atomic_apply(const struct p4e_tgt_msg *m, void *target,
				uint64_t mlength, const struct iovec *old,
				size_t old_cnt)
{
	const struct p4w_req *req = &m->parts.req;
	const uint8_t *cmp = m->parts.compare;
	uint64_t off = 0, n;
	size_t i;
	int ret;

	if (!old_cnt)
		return p4e_atomic_apply(req->atomic_op, req->atomic_type,
					target, m->parts.payload, cmp, NULL,
					mlength);
	for (i = 0; i < old_cnt; i++, off += n) {
		n = old[i].iov_len;
		ret = p4e_atomic_apply(req->atomic_op, req->atomic_type,
				       (uint8_t *)target + off,
				       m->parts.payload + off,
				       cmp ? cmp + off : NULL,
				       old[i].iov_base, n);
		if (ret)
			return ret;
	}
	return 0;
}

/* ATOMIC, FETCH, SWAP: applied in place, old values returned for the last
 * two in as many bounce blocks as they need. */
static int p4e_tgt_atomic(struct p4e_tgt_msg *m, struct p4e_me *me,
			  struct p4e_uh *uh, uint64_t offset, uint64_t mlength)
{
	const struct p4w_req *req = &m->parts.req;
	size_t esize = p4e_atomic_type_size(req->atomic_type);
	bool fetch = m->hdr->type != P4W_ATOMIC;
	struct p4e_tgt_op tmp;
	struct p4e_event ev;
	struct iovec old[P4E_IOV_MAX];
	size_t old_cnt = 0;
	uint8_t fail = P4E_NI_OK;
	void *target;
	int ret;
	struct p4w_resp resp = {
		.op_id = req->op_id,
		.offset = offset,
		.list = me->list,
	};

	mlength -= mlength % esize;
	/* nothing to touch (an offset past the end): no address needed */
	target = mlength ? p4e_tgt_atomic_addr(me, offset, mlength) : NULL;
	if (fetch && target) {
		ret = p4e_tgt_old_alloc(m->ni, mlength, esize, old, &old_cnt);
		if (ret == -FI_EAGAIN) {
			if (uh)
				p4u_pool_free(&m->ni->uhs, uh);
			return p4e_tgt_flowctrl(m);
		}
		if (ret) {
			/* larger than this NI can ever hold old values for */
			m->ni->sr[P4E_SR_DROP_COUNT]++;
			fail = P4E_NI_DROPPED;
			mlength = 0;
		}
	}
	if (mlength && !target) {
		fail = P4E_NI_SEGV;	/* spans two iovec elements */
		mlength = 0;
	} else if (mlength &&
		   p4e_tgt_atomic_apply(m, target, mlength, old, old_cnt)) {
		/* validated on arrival: only a missing operand gets here */
		fail = P4E_NI_OP_VIOLATION;
		mlength = 0;
	}
	p4e_tgt_op_from_msg(m, &tmp, me, offset, mlength);
	if (uh)
		p4e_tgt_uh_fill(m, uh, me, offset, mlength);
	if (fetch) {
		resp.mlength = mlength;
		resp.fail = fail;
		/* the transport copies or finishes with it before we return */
		p4e_tgt_respond(m->ni, m->np, P4W_REPLY, &resp, old,
				mlength ? old_cnt : 0);
		p4e_tgt_old_free(m->ni, old, old_cnt);
	} else {
		p4e_tgt_ack(m->ni, m->np, req->ack_req, false, req->op_id,
			    mlength, offset, P4E_RESP_LIST(me), fail);
	}
	p4e_fc_accepted(m->np);
	p4e_tgt_event_fill(&tmp, &ev, fail);
	p4e_me_emit(me, &ev);
	p4e_me_used(me, mlength, req->rlength);
	return 0;
}

static int p4e_tgt_deliver(struct p4e_tgt_msg *m, struct p4e_me *me,
			   struct p4e_uh *uh)
{
	const struct p4w_req *req = &m->parts.req;
	uint64_t offset, mlength;

	p4e_me_place(me, req->remote_offset, req->rlength, false, &offset,
		     &mlength);
	switch (m->hdr->type) {
	case P4W_PUT:
		return p4e_tgt_put(m, me, uh, offset, mlength);
	case P4W_GET:
		return p4e_tgt_get(m, me, uh, offset, mlength);
	default:
		return p4e_tgt_atomic(m, me, uh, offset, mlength);
	}
}

/* ---- matching --------------------------------------------------------- */

/*
 * Only the header keeper (P4E_ME_HDR_ONLY) takes this message. A
 * rendezvous or empty put may leave its header there (true: go on with
 * that entry). An eager put with data goes back to its initiator to come
 * again as rendezvous, while a header can still be kept for it; anything
 * else is what the overflow list cannot hold (flow control).
 */
static bool p4e_tgt_last_resort(struct p4e_tgt_msg *m, int *ret_p)
{
	const struct p4w_req *req = &m->parts.req;

	*ret_p = 0;
	if (m->hdr->type == P4W_PUT &&
	    (req->proto == P4W_PROTO_RDZV || !req->rlength))
		return true;
	if (m->hdr->type != P4W_PUT || !(m->pt->options & P4E_PT_FC_RESEND)) {
		*ret_p = p4e_tgt_flowctrl(m);
		return false;
	}
	if (p4u_pool_full(&m->ni->uhs)) {
		*ret_p = p4e_tgt_uh_spent(m);
		return false;
	}
	m->ni->sr[P4E_SR_FC_AS_RDZV]++;
	p4e_fc_nack_rdzv(m->np);
	return false;
}

struct p4e_tgt_accept {
	struct p4e_ni *ni;
	uint32_t source;
	uint64_t remote_offset;
	uint64_t rlength;
	bool rdzv;
	struct p4e_mentry *last_resort;	/* a P4E_ME_HDR_ONLY entry seen */
};

static bool p4e_tgt_me_accept(struct p4e_mentry *e, void *ctx)
{
	struct p4e_me *me = container_of(e, struct p4e_me, ment);
	struct p4e_tgt_accept *a = ctx;
	uint64_t offset, mlength;

	if (!p4e_id_filter_ok(a->ni, me->id_filtered, me->id_filter,
			      a->source))
		return false;
	/* taken only when nothing else takes it: remember, look further */
	if (me->options & P4E_ME_HDR_ONLY) {
		if (!a->last_resort || e->seq < a->last_resort->seq)
			a->last_resort = e;
		return false;
	}
	/* BOUNDS_FAIL: the entry takes it, then refuses what does not fit */
	if (!(me->options & P4E_ME_NO_TRUNCATE) ||
	    (me->options & P4E_ME_BOUNDS_FAIL))
		return true;
	/* an unexpected rendezvous leaves only its header here: its size
	 * says nothing about whether it fits */
	if (a->rdzv && me->list == P4E_OVERFLOW_LIST &&
	    (me->options & P4E_ME_RDZV_HDR_ONLY))
		return true;
	p4e_me_place(me, a->remote_offset, a->rlength, false, &offset,
		     &mlength);
	return mlength >= a->rlength;
}

/* Full events an operation on me may deliver at once: its own event
 * and, if the use may unlink the entry, an AUTO_UNLINK. */
static size_t p4e_tgt_events_needed(const struct p4e_me *me)
{
	size_t n = me->options & P4E_ME_EVENT_COMM_DISABLE ? 0 : 1;

	if ((me->options & (P4E_ME_USE_ONCE | P4E_ME_MANAGE_LOCAL)) &&
	    !(me->options & P4E_ME_EVENT_UNLINK_DISABLE))
		n++;
	return n;
}

/* NO_TRUNCATE | BOUNDS_FAIL: does the operation fit the entry? */
static bool p4e_tgt_fits(struct p4e_tgt_msg *m, struct p4e_me *me,
			 uint8_t *fail_p)
{
	uint64_t offset, mlength;

	if ((me->options & (P4E_ME_NO_TRUNCATE | P4E_ME_BOUNDS_FAIL)) !=
	    (P4E_ME_NO_TRUNCATE | P4E_ME_BOUNDS_FAIL))
		return true;
	p4e_me_place(me, m->parts.req.remote_offset, m->parts.req.rlength,
		     false, &offset, &mlength);
	if (mlength >= m->parts.req.rlength)
		return true;
	m->ni->sr[P4E_SR_PERMISSION_VIOLATIONS]++;
	*fail_p = P4E_NI_SEGV;
	return false;
}

/* P4E_ME_EVENT_FAIL: the refused operation's event, after the reject. */
static void p4e_tgt_fail_event(struct p4e_tgt_msg *m, struct p4e_me *me,
			       uint8_t fail)
{
	struct p4e_tgt_op tmp;
	struct p4e_event ev;

	if (!(me->options & P4E_ME_EVENT_FAIL))
		return;
	/* offset 0: the refused offset may lie anywhere, start says nothing */
	p4e_tgt_op_from_msg(m, &tmp, me, 0, 0);
	p4e_tgt_event_fill(&tmp, &ev, fail);
	ev.start = NULL;
	p4e_me_emit(me, &ev);
}

/* Validate what the wire unpacking cannot know: our own limits. */
static int p4e_tgt_validate(struct p4e_tgt_msg *m)
{
	const struct p4w_req *req = &m->parts.req;
	uint8_t type = m->hdr->type;

	if (req->rlength > m->ni->limits.max_msg_size)
		return -FI_EMSGSIZE;
	if (type == P4W_ATOMIC || type == P4W_FETCH || type == P4W_SWAP) {
		if (!p4e_atomic_valid(req->atomic_op, req->atomic_type,
				      type != P4W_ATOMIC) ||
		    req->rlength % p4e_atomic_type_size(req->atomic_type))
			return -FI_EBADMSG;
		if (req->rlength > (type == P4W_ATOMIC ?
				    m->ni->limits.max_atomic_size :
				    m->ni->limits.max_fetch_atomic_size))
			return -FI_EMSGSIZE;
	}
	return 0;
}

int p4e_tgt_request(struct p4e_ni *ni, struct p4e_npeer *np,
		    const struct p4w_hdr *hdr, const void *msg)
{
	struct p4e_tgt_msg m = { .ni = ni, .np = np, .hdr = hdr };
	struct p4e_tgt_accept acc;
	struct p4e_mentry *e;
	struct p4e_me *me;
	struct p4e_uh *uh = NULL;
	uint8_t fail;
	int ret;

	ret = p4w_req_parse(hdr, msg, &m.parts);
	if (!ret)
		ret = p4e_tgt_validate(&m);
	if (ret)
		return ret;
	/* stale (sent before our nack reached the peer) or duplicate */
	if (np->rx_blocked || hdr->seq != np->rx_expect)
		return 0;

	m.pt = p4e_pt_get(ni, m.parts.req.pt_index);
	if (!m.pt) {
		ni->sr[P4E_SR_DROP_COUNT]++;
		p4e_tgt_reject(&m, P4E_NI_DROPPED);
		return 0;
	}
	if (!m.pt->enabled) {
		if (m.pt->options & P4E_PT_FC_RESEND)
			return p4e_tgt_flowctrl(&m);
		p4e_tgt_reject(&m, P4E_NI_PT_DISABLED);
		return 0;
	}
	acc.ni = ni;
	acc.source = np->id;
	acc.remote_offset = m.parts.req.remote_offset;
	acc.rlength = m.parts.req.rlength;
	acc.rdzv = hdr->type == P4W_PUT &&
		   m.parts.req.proto == P4W_PROTO_RDZV;
	acc.last_resort = NULL;
	e = p4e_mlist_match(&m.pt->prio, m.parts.req.match_bits, np->id,
			    p4e_tgt_me_accept, &acc);
	if (!e) {
		e = p4e_mlist_match(&m.pt->oflow, m.parts.req.match_bits,
				    np->id, p4e_tgt_me_accept, &acc);
		if (!e && (m.pt->options & P4E_PT_NO_MATCH_DROP)) {
			ni->sr[P4E_SR_DROP_COUNT]++;
			p4e_tgt_reject(&m, P4E_NI_DROPPED);
			return 0;
		}
		if (!e && acc.last_resort) {
			if (!p4e_tgt_last_resort(&m, &ret))
				return ret;
			e = acc.last_resort;
		}
		if (!e)
			return p4e_tgt_flowctrl(&m);
		me = container_of(e, struct p4e_me, ment);
		if (!(me->options & P4E_ME_UNEXPECTED_HDR_DISABLE)) {
			uh = p4u_pool_alloc(&ni->uhs);
			if (!uh)
				return p4e_tgt_uh_spent(&m);
		}
	} else {
		me = container_of(e, struct p4e_me, ment);
	}
	if (!p4e_me_perm_ok(ni, me, hdr->type, m.parts.req.uid, &fail) ||
	    !p4e_tgt_fits(&m, me, &fail)) {
		if (uh)
			p4u_pool_free(&ni->uhs, uh);
		p4e_tgt_reject(&m, fail);
		p4e_tgt_fail_event(&m, me, fail);
		return 0;
	}
	/*
	 * Portals flow control also covers event space: room for what this
	 * operation may report on the entry, and still for the PT_DISABLED
	 * event the next refusal would need.
	 */
	if ((m.pt->options & P4E_PT_FLOWCTRL) &&
	    p4e_eq_space(m.pt->eq) < p4e_tgt_events_needed(me) + 1) {
		if (uh)
			p4u_pool_free(&ni->uhs, uh);
		return p4e_tgt_flowctrl(&m);
	}
	return p4e_tgt_deliver(&m, me, uh);
}

void p4e_tgt_fail_peer(struct p4e_npeer *np)
{
	/*
	 * Pulls and pushes on the link have completed with errors before
	 * the transport reported the failure, so no target op of this peer
	 * is left. Its unexpected headers stay: eager data is here, and a
	 * rendezvous one fails when a receive matches it (no link).
	 */
	p4e_fc_unblock(np);
}
