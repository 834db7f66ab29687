/*
 * p4e_me.c - list entries (MEs, and LEs on non-matching NIs): append with
 * the search of unexpected headers it implies, unlink with "in use"
 * protection, the claimed-message extension, and the life cycle that ends
 * in LINK / AUTO_UNLINK / AUTO_FREE events. PtlMESearch is p4e_search.c.
 *
 * Life of an entry: linked (matchable) -> unlinked with events pending
 * while operations still use it (rendezvous pulls) -> AUTO_UNLINK once
 * the last use is done -> for overflow entries AUTO_FREE once no
 * unexpected header points into it -> freed. Events come after the work
 * they report (rule 5).
 */
#include <config.h>

#include "p4e_priv.h"

#define P4E_ME_OPTIONS (P4E_ME_OP_PUT | P4E_ME_OP_GET | P4E_ME_USE_ONCE | \
	P4E_ME_UNEXPECTED_HDR_DISABLE | P4E_ME_IS_ACCESSIBLE | \
	P4E_ME_EVENT_LINK_DISABLE | P4E_ME_EVENT_COMM_DISABLE | \
	P4E_ME_EVENT_FLOWCTRL_DISABLE | P4E_ME_EVENT_SUCCESS_DISABLE | \
	P4E_ME_EVENT_OVER_DISABLE | P4E_ME_EVENT_UNLINK_DISABLE | \
	P4E_ME_EVENT_CT_COMM | P4E_ME_EVENT_CT_OVERFLOW | \
	P4E_ME_EVENT_CT_BYTES | P4E_ME_MANAGE_LOCAL | P4E_ME_NO_TRUNCATE | \
	P4E_ME_MAY_ALIGN | P4E_ME_LOCAL_INC_UH_RLENGTH | P4E_ME_IOVEC | \
	P4E_ME_UH_COPY | P4E_ME_VIRT_ADDR | P4E_ME_RDZV_HDR_ONLY | \
	P4E_ME_BOUNDS_FAIL | P4E_ME_EVENT_FAIL | P4E_ME_HDR_ONLY | \
	P4E_ME_ACK_DISABLE)
/* Options only a matching entry has (Portals LEs lack them). */
#define P4E_ME_ONLY_OPTIONS (P4E_ME_MANAGE_LOCAL | P4E_ME_NO_TRUNCATE | \
	P4E_ME_MAY_ALIGN | P4E_ME_LOCAL_INC_UH_RLENGTH)

/* ---- events and counts ------------------------------------------------- */

static bool p4e_event_is_overflow(uint8_t type)
{
	return type == P4E_EVENT_PUT_OVERFLOW ||
	       type == P4E_EVENT_GET_OVERFLOW ||
	       type == P4E_EVENT_ATOMIC_OVERFLOW ||
	       type == P4E_EVENT_FETCH_ATOMIC_OVERFLOW;
}

static bool p4e_event_is_comm(uint8_t type)
{
	return type == P4E_EVENT_PUT || type == P4E_EVENT_GET ||
	       type == P4E_EVENT_ATOMIC || type == P4E_EVENT_FETCH_ATOMIC;
}

/* Count and (unless the entry's options say no) deliver ev. */
void p4e_me_emit(struct p4e_me *me, struct p4e_event *ev)
{
	struct p4e_ni *ni = me->ni;
	struct p4e_pt *pt = &ni->pts[me->pt_index];
	bool ok = ev->ni_fail_type == P4E_NI_OK;
	bool deliver = true;

	if (p4e_event_is_comm(ev->type)) {
		if (me->options & P4E_ME_EVENT_CT_COMM)
			p4e_ct_count(ni->dom, me->ct,
				     ok, me->options & P4E_ME_EVENT_CT_BYTES,
				     ev->mlength);
		if (me->options & P4E_ME_EVENT_COMM_DISABLE)
			deliver = false;
	} else if (p4e_event_is_overflow(ev->type)) {
		if (me->options & P4E_ME_EVENT_CT_OVERFLOW)
			p4e_ct_count(ni->dom, me->ct,
				     ok, me->options & P4E_ME_EVENT_CT_BYTES,
				     ev->mlength);
		if (me->options & P4E_ME_EVENT_OVER_DISABLE)
			deliver = false;
	} else if (ev->type == P4E_EVENT_LINK) {
		deliver = !(me->options & P4E_ME_EVENT_LINK_DISABLE);
	} else if (ev->type == P4E_EVENT_AUTO_UNLINK ||
		   ev->type == P4E_EVENT_AUTO_FREE) {
		deliver = !(me->options & P4E_ME_EVENT_UNLINK_DISABLE) ||
			  ev->ni_fail_type == P4E_NI_CANCELED;
	}
	/*
	 * LINK is LINK_DISABLE's alone: "a call to PtlLEAppend() will always
	 * result in either an overflow or PTL_EVENT_LINK event" (the
	 * reference header); Open MPI's osc portals4 waits for the LINK of
	 * entries it appends with SUCCESS_DISABLE.
	 */
	if (ok && (me->options & P4E_ME_EVENT_SUCCESS_DISABLE) &&
	    ev->type != P4E_EVENT_AUTO_UNLINK &&
	    ev->type != P4E_EVENT_AUTO_FREE && ev->type != P4E_EVENT_LINK)
		deliver = false;
	if (!deliver)
		return;
	ev->pt_index = me->pt_index;
	ev->list = me->list;
	if (!ev->user_ptr)
		ev->user_ptr = me->user_ptr;
	ev->user_flags = me->user_flags;
	p4e_event_deliver(pt->eq, ev);
}

static void p4e_me_simple_event(struct p4e_me *me, uint8_t type, uint8_t fail)
{
	struct p4e_event ev = {
		.type = type,
		.ni_fail_type = fail,
		.start = me->start,
		.initiator = P4E_ID_ANY,
		.match_bits = me->ment.match_bits,
	};

	p4e_me_emit(me, &ev);
}

/* ---- life cycle ---------------------------------------------------------- */

static void p4e_me_destroy(struct p4e_me *me)
{
	struct p4e_ni *ni = me->ni;

	if (me->iovbuf)
		p4u_pool_free(&ni->iovbufs, me->iovbuf);
	ni->entries--;
	p4u_pool_free(&ni->mes, me);
}

/* The entry is off its list and no operation uses it any more. */
static void p4e_me_finish_unlink(struct p4e_me *me)
{
	me->unlink_pending = false;
	p4e_me_simple_event(me, P4E_EVENT_AUTO_UNLINK,
			    me->cancel_event ? P4E_NI_CANCELED : P4E_NI_OK);
	if (me->list == P4E_OVERFLOW_LIST && me->uh_refs) {
		/* unexpected headers still point at its data */
		me->freed_pending = true;
		return;
	}
	if (me->list == P4E_OVERFLOW_LIST)
		p4e_me_simple_event(me, P4E_EVENT_AUTO_FREE, P4E_NI_OK);
	p4e_me_destroy(me);
}

static void p4e_me_delist(struct p4e_me *me)
{
	struct p4e_pt *pt = &me->ni->pts[me->pt_index];

	if (!me->linked)
		return;
	p4e_mlist_remove(me->list == P4E_PRIORITY_LIST ? &pt->prio : &pt->oflow,
			 &me->ment);
	me->linked = false;
}

void p4e_me_auto_unlink(struct p4e_me *me)
{
	if (me->unlink_pending)
		return;
	p4e_me_delist(me);
	me->unlink_pending = true;
	if (!me->pending)
		p4e_me_finish_unlink(me);
}

void p4e_me_use_done(struct p4e_me *me)
{
	if (--me->pending == 0 && me->unlink_pending)
		p4e_me_finish_unlink(me);
}

/* A header that pointed into overflow entry me is gone. */
static void p4e_me_uh_released(struct p4e_me *me)
{
	if (--me->uh_refs || !me->freed_pending)
		return;
	p4e_me_simple_event(me, P4E_EVENT_AUTO_FREE, P4E_NI_OK);
	p4e_me_destroy(me);
}

void p4e_uh_free(struct p4e_ni *ni, struct p4e_uh *uh)
{
	struct p4e_pt *pt = &ni->pts[uh->pt_index];

	if (!uh->claimed && p4u_list_node_linked(&uh->uent.order))
		p4e_uindex_remove(&pt->uhs, &uh->uent);
	if (p4e_uh_filling(uh))	/* discarded before its data was in */
		uh->filling->filling_uh = NULL;
	if (uh->oflow_me)
		p4e_me_uh_released(uh->oflow_me);
	p4u_pool_free(&ni->uhs, uh);
	/* a header came back (overflow space comes back by an append) */
	p4e_fc_uh_freed(ni, pt);
}

/* ---- placement ----------------------------------------------------------- */

/* Where offset falls in me; its end if past it (rule 4: a remote offset
 * may point anywhere, and no pointer may be formed beyond the entry). */
static void *p4e_me_addr(const struct p4e_me *me, uint64_t offset)
{
	return p4e_region_addr(me->start, me->iovcnt,
			       P4U_MIN(offset, me->length));
}

void p4e_me_place(struct p4e_me *me, uint64_t remote_offset,
		  uint64_t rlength, bool unexpected, uint64_t *offset_p,
		  uint64_t *mlength_p)
{
	uint64_t offset, avail;

	(void)unexpected;
	if (me->options & P4E_ME_MANAGE_LOCAL)
		offset = me->local_offset;
	else if (me->options & P4E_ME_VIRT_ADDR)
		offset = remote_offset - (uint64_t)(uintptr_t)me->start;
	else
		offset = remote_offset - me->base;
	/* rule 4: a remote offset past the end leaves no room at all */
	if (me->options & P4E_ME_VIRT_ADDR &&
	    remote_offset < (uint64_t)(uintptr_t)me->start)
		avail = 0;
	else if (!(me->options & (P4E_ME_VIRT_ADDR | P4E_ME_MANAGE_LOCAL)) &&
		 remote_offset < me->base)
		avail = 0;
	else
		avail = offset < me->length ? me->length - offset : 0;
	*offset_p = offset;
	*mlength_p = P4U_MIN(rlength, avail);
}

/* After a use: advance a locally managed offset, maybe auto-unlink. */
void p4e_me_used(struct p4e_me *me, uint64_t mlength, uint64_t rlength)
{
	if (me->options & P4E_ME_MANAGE_LOCAL) {
		bool uh_rlength = (me->options & P4E_ME_LOCAL_INC_UH_RLENGTH) &&
				  me->list == P4E_OVERFLOW_LIST;

		/* rule 4: by mlength, or it runs past the end */
		me->local_offset += uh_rlength ? rlength : mlength;
		if (me->local_offset > me->length)
			me->local_offset = me->length;
		if (me->length - me->local_offset < me->min_free) {
			p4e_me_auto_unlink(me);
			return;
		}
	}
	if (me->options & P4E_ME_USE_ONCE)
		p4e_me_auto_unlink(me);
}

bool p4e_me_perm_ok(struct p4e_ni *ni, struct p4e_me *me, uint8_t type,
		    uint32_t uid, uint8_t *fail_p)
{
	unsigned need;

	if (me->uid != P4E_UID_ANY && me->uid != uid) {
		ni->sr[P4E_SR_PERMISSION_VIOLATIONS]++;
		*fail_p = P4E_NI_PERM_VIOLATION;
		return false;
	}
	switch (type) {
	case P4W_PUT:
	case P4W_ATOMIC:
		need = P4E_ME_OP_PUT;
		break;
	case P4W_GET:
		need = P4E_ME_OP_GET;
		break;
	default:
		need = P4E_ME_OP_PUT | P4E_ME_OP_GET;
		break;
	}
	if ((me->options & need) != need) {
		ni->sr[P4E_SR_OPERATION_VIOLATIONS]++;
		*fail_p = P4E_NI_OP_VIOLATION;
		return false;
	}
	return true;
}

/* ---- unexpected headers meet a new entry ------------------------------- */

static const uint8_t p4e_overflow_event[] = {
	[P4W_PUT] = P4E_EVENT_PUT_OVERFLOW,
	[P4W_GET] = P4E_EVENT_GET_OVERFLOW,
	[P4W_ATOMIC] = P4E_EVENT_ATOMIC_OVERFLOW,
	[P4W_FETCH] = P4E_EVENT_FETCH_ATOMIC_OVERFLOW,
	[P4W_SWAP] = P4E_EVENT_FETCH_ATOMIC_OVERFLOW,
};

void p4e_uh_event_fill(struct p4e_ni *ni, const struct p4e_uh *uh,
		       struct p4e_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = p4e_overflow_event[uh->type];
	ev->initiator = p4e_ni_event_id(ni, uh->uent.source);
	ev->uid = uh->uid;
	ev->match_bits = uh->uent.bits;
	ev->rlength = uh->rlength;
	ev->mlength = uh->mlength;
	ev->remote_offset = uh->remote_offset;
	ev->hdr_data = uh->hdr_data;
	ev->atomic_op = uh->atomic_op;
	ev->atomic_type = uh->atomic_type;
	ev->flags = uh->ev_flags;
	ev->ni_fail_type = uh->fail;
	if (uh->oflow_me)
		ev->start = p4e_me_addr(uh->oflow_me, uh->oflow_offset);
}

/* How far a managed entry moves for an unexpected header it consumed:
 * LOCAL_INC_UH_RLENGTH says by the header's rlength (Portals 4). */
static uint64_t p4e_me_uh_advance(const struct p4e_me *me,
				  const struct p4e_uh *uh, uint64_t mlength)
{
	return (me->options & P4E_ME_LOCAL_INC_UH_RLENGTH) ? uh->rlength :
							      mlength;
}

/* A rendezvous header: pull the data into me now (header-only overflow). */
static int p4e_uh_deliver_rdzv(struct p4e_ni *ni, struct p4e_uh *uh,
			       struct p4e_me *me, struct p4e_tgt_op *top)
{
	uint64_t offset, mlength;

	p4e_me_place(me, uh->remote_offset, uh->rlength, true, &offset,
		     &mlength);
	top->ni = ni;
	top->peer = ni->npeers[uh->uent.source];
	top->me = me;
	top->uh = uh;
	top->type = uh->type;
	top->ack_req = uh->ack_req;
	top->list = P4E_PRIORITY_LIST;
	top->event_type = p4e_overflow_event[uh->type];
	top->pt_index = uh->pt_index;
	top->initiator = uh->uent.source;
	top->uid = uh->uid;
	top->op_id = uh->op_id;
	top->match_bits = uh->uent.bits;
	top->rlength = uh->rlength;
	top->mlength = mlength;
	top->offset = offset;
	top->remote_offset = uh->remote_offset;
	top->hdr_data = uh->hdr_data;
	top->ev_flags = uh->ev_flags;
	top->start = p4e_me_addr(me, offset);
	me->pending++;
	p4e_me_used(me, p4e_me_uh_advance(me, uh, mlength), uh->rlength);
	return p4e_tgt_start_pull(ni, top, &uh->src);
}

int p4e_uh_deliver_into(struct p4e_ni *ni, struct p4e_uh *uh,
			struct p4e_me *me, void *user_ptr,
			uint64_t user_flags, bool claimed)
{
	struct p4e_pt *pt = &ni->pts[uh->pt_index];
	struct p4e_tgt_op *top = NULL;
	struct p4e_event ev;
	uint64_t offset, mlength;

	(void)claimed;
	/* take what can fail first: a refusal changes nothing */
	if (uh->proto == P4W_PROTO_RDZV && !uh->oflow_me) {
		top = p4u_pool_alloc(&ni->tops);
		if (!top)
			return -FI_EAGAIN;
	}
	if (!uh->claimed && p4u_list_node_linked(&uh->uent.order))
		p4e_uindex_remove(&pt->uhs, &uh->uent);
	uh->claimed = true;	/* off the index from here on */
	if (user_ptr)
		me->user_ptr = user_ptr;
	if (user_flags)
		me->user_flags = user_flags;
	if (p4e_uh_filling(uh)) {
		/* matched in arrival order, but its data is not in yet:
		 * me holds it (in use) till p4e_uh_filled */
		uh->waiter = me;
		me->pending++;
		return P4E_UH_WAITING;
	}

	if (top)
		return p4e_uh_deliver_rdzv(ni, uh, me, top);

	p4e_uh_event_fill(ni, uh, &ev);
	/* only a put brought data to move: a get or an atomic acted on the
	 * overflow entry, and the new entry's memory is not theirs */
	if ((me->options & P4E_ME_UH_COPY) && uh->type == P4W_PUT) {
		p4e_me_place(me, uh->remote_offset, uh->mlength, true, &offset,
			     &mlength);
		if (uh->oflow_me) {
			void *tmp_src = p4e_me_addr(uh->oflow_me,
						    uh->oflow_offset);
			if (!uh->oflow_me->iovcnt) {
				p4e_region_copy_in(me->start, me->iovcnt,
						   offset, tmp_src, mlength);
			} else {
				uint8_t buf[4096];
				uint64_t done = 0, n;

				while (done < mlength) {
					n = P4U_MIN(sizeof(buf), mlength - done);
					p4e_region_copy_out(uh->oflow_me->start,
							    uh->oflow_me->iovcnt,
							    uh->oflow_offset +
								    done,
							    buf, n);
					p4e_region_copy_in(me->start, me->iovcnt,
							   offset + done, buf,
							   n);
					done += n;
				}
			}
		}
		ev.start = p4e_me_addr(me, offset);
		ev.mlength = mlength;
	} else {
		mlength = uh->mlength;
	}
	mlength = p4e_me_uh_advance(me, uh, mlength);
	p4e_me_emit(me, &ev);
	p4e_uh_free(ni, uh);
	p4e_me_used(me, mlength, ev.rlength);
	return 0;
}

static bool p4e_me_uh_accept(struct p4e_uentry *u, void *ctx)
{
	struct p4e_me *me = ctx;
	struct p4e_uh *uh = container_of(u, struct p4e_uh, uent);
	uint64_t offset, mlength;

	if (!p4e_id_filter_ok(me->ni, me->id_filtered, me->id_filter,
			      u->source))
		return false;
	if (!(me->options & P4E_ME_NO_TRUNCATE))
		return true;
	p4e_me_place(me, uh->remote_offset, uh->rlength, true, &offset,
		     &mlength);
	return mlength >= uh->rlength;
}

/* Append semantics: consume matching headers, then link if still alive. */
static int p4e_me_link(struct p4e_ni *ni, struct p4e_me *me)
{
	struct p4e_pt *pt = &ni->pts[me->pt_index];
	struct p4e_uentry *u;
	int ret = 0;

	if (me->list == P4E_PRIORITY_LIST) {
		/* the append uses the entry: a use that unlinks it must not
		 * free it under this loop */
		me->pending++;
		while (!me->unlink_pending &&
		       (u = p4e_uindex_find(&pt->uhs, me->ment.match_bits,
					    me->ment.ignore_bits,
					    me->ment.match_id,
					    p4e_me_uh_accept, me))) {
			ret = p4e_uh_deliver_into(
				ni, container_of(u, struct p4e_uh, uent), me,
				NULL, 0, false);
			if (ret == P4E_UH_WAITING) {
				/* later headers wait behind this one, and
				 * so does the link: p4e_uh_filled resumes */
				me->link_waiting = true;
				me->pending--;
				return 0;
			}
			if (ret) {
				/* the caller gets no handle: end it quietly
				 * once pulls it started are done */
				me->options |= P4E_ME_EVENT_UNLINK_DISABLE;
				me->unlink_pending = true;
				break;
			}
		}
		if (me->unlink_pending) {
			/* used up before it was linked */
			p4e_me_use_done(me);
			return ret;
		}
		me->pending--;
		p4e_mlist_append(&pt->prio, &me->ment);
		/* a new receive may be what an initiator held by flow control
		 * is waiting for: let it resend */
		p4e_fc_pt_freed(ni, pt);
	} else {
		p4e_mlist_append(&pt->oflow, &me->ment);
		/* new overflow space: held initiators may resend */
		p4e_fc_pt_freed(ni, pt);
	}
	me->linked = true;
	p4e_me_simple_event(me, P4E_EVENT_LINK, P4E_NI_OK);
	return 0;
}

void p4e_uh_filled(struct p4e_ni *ni, struct p4e_uh *uh, uint8_t fail)
{
	struct p4e_me *me = uh->waiter;
	bool resume;

	uh->filling = NULL;
	if (fail != P4E_NI_OK) {
		uh->fail = fail;
		uh->mlength = 0;
	}
	if (!me)
		return;
	uh->waiter = NULL;
	resume = me->link_waiting;
	me->link_waiting = false;
	/* the data is in the overflow entry now: nothing left to refuse */
	p4e_uh_deliver_into(ni, uh, me, NULL, 0, true);
	if (resume && !me->unlink_pending)
		p4e_me_link(ni, me);	/* the headers that queued behind */
	p4e_me_use_done(me);		/* the hold taken when it waited */
}

/* ---- append / unlink ----------------------------------------------------- */

/* An entry on a logical NI names its initiator by rank; matching compares
 * the peer ids messages come from. */
int p4e_me_match_peer(struct p4e_ni *ni, uint32_t match_id, uint32_t *peer_p)
{
	if (match_id == P4E_ID_ANY || !(ni->options & P4E_NI_LOGICAL) ||
	    !(ni->options & P4E_NI_MATCHING)) {
		*peer_p = match_id;
		return 0;
	}
	return p4e_ni_target_peer(ni, match_id, peer_p);
}

static int p4e_me_check(struct p4e_ni *ni, uint32_t pt_index,
			const struct p4e_me_desc *desc, enum p4e_list list)
{
	struct p4e_pt *pt = p4e_pt_get(ni, pt_index);
	unsigned opt = desc ? desc->options : 0;
	uint32_t peer;

	if (!pt || !desc || (opt & ~P4E_ME_OPTIONS))
		return -FI_EINVAL;
	if (list != P4E_PRIORITY_LIST && list != P4E_OVERFLOW_LIST)
		return -FI_EINVAL;
	if (!(ni->options & P4E_NI_MATCHING) && (opt & P4E_ME_ONLY_OPTIONS))
		return -FI_EINVAL;
	if ((opt & P4E_ME_IOVEC) &&
	    (desc->length > ni->limits.max_iovecs ||
	     (desc->length && !desc->start) || (opt & P4E_ME_VIRT_ADDR)))
		return -FI_EINVAL;
	if (desc->ct != P4E_HANDLE_NONE && !p4e_ct_exists(ni->dom, desc->ct))
		return -FI_EINVAL;
	if (p4e_me_match_peer(ni, desc->match_id, &peer))
		return -FI_EINVAL;
	if (desc->id_filtered &&
	    (desc->match_id != P4E_ID_ANY || !ni->id_filter ||
	     !(ni->options & P4E_NI_MATCHING)))
		return -FI_EINVAL;
	/*
	 * P4E_PT_ONLY_USE_ONCE and P4E_PT_ONLY_TRUNCATE are hints (the
	 * reference header's word): an entry that does not fit them is
	 * taken as it is. Open MPI's mtl portals4 appends a persistent
	 * overflow entry to its ONLY_USE_ONCE receive table.
	 */
	/* a header keeper holds no data and never fills up */
	if ((opt & P4E_ME_HDR_ONLY) &&
	    (list != P4E_OVERFLOW_LIST || desc->length ||
	     (opt & (P4E_ME_MANAGE_LOCAL | P4E_ME_USE_ONCE |
		     P4E_ME_UNEXPECTED_HDR_DISABLE))))
		return -FI_EINVAL;
	if ((list == P4E_PRIORITY_LIST ? pt->prio.count : pt->oflow.count) >=
	    ni->limits.max_list_size)
		return -FI_ENOSPC;
	return 0;
}

static int p4e_me_create(struct p4e_ni *ni, uint32_t pt_index,
			 const struct p4e_me_desc *desc, enum p4e_list list,
			 void *user_ptr, uint64_t user_flags,
			 struct p4e_me **me_p)
{
	struct p4e_me *me;
	int ret;

	ret = p4e_me_check(ni, pt_index, desc, list);
	if (ret)
		return ret;
	me = p4u_pool_alloc(&ni->mes);
	if (!me)
		return -FI_ENOSPC;
	ni->entries++;
	p4u_list_node_init(&me->ment.order);
	me->ni = ni;
	me->pt_index = pt_index;
	me->list = list;
	me->options = desc->options;
	me->start = desc->start;
	if (desc->options & P4E_ME_IOVEC) {
		me->iovcnt = (uint32_t)desc->length;
		me->length = p4e_iov_total(desc->start, desc->length);
		if (!me->iovcnt)
			me->start = NULL;
		/* short arrays are copied: libfabric callers reuse theirs */
		if (me->iovcnt && me->iovcnt <= P4E_XFER_IOV_MAX) {
			me->iovbuf = p4u_pool_alloc(&ni->iovbufs);
			if (!me->iovbuf) {
				ni->entries--;
				p4u_pool_free(&ni->mes, me);
				return -FI_ENOSPC;
			}
			memcpy(me->iovbuf->iov, desc->start,
			       me->iovcnt * sizeof(struct iovec));
			me->start = me->iovbuf->iov;
		}
	} else {
		me->length = desc->length;
	}
	me->ct = desc->ct;
	me->uid = desc->uid;
	me->min_free = desc->min_free;
	me->base = desc->base;
	me->user_ptr = user_ptr;
	me->user_flags = user_flags;
	if (ni->options & P4E_NI_MATCHING) {
		me->ment.match_bits = desc->match_bits;
		me->ment.ignore_bits = desc->ignore_bits;
		/* checked by p4e_me_check */
		(void)p4e_me_match_peer(ni, desc->match_id,
					&me->ment.match_id);
		me->id_filtered = desc->id_filtered;
		me->id_filter = desc->id_filter;
	} else {
		me->ment.match_bits = 0;
		me->ment.ignore_bits = UINT64_MAX;
		me->ment.match_id = P4E_ID_ANY;
	}
	*me_p = me;
	return 0;
}

int p4e_me_append(struct p4e_ni *ni, uint32_t pt_index,
		  const struct p4e_me_desc *desc, enum p4e_list list,
		  void *user_ptr, uint64_t user_flags, uint64_t *me_p)
{
	struct p4e_me *me;
	uint64_t handle;
	int ret;

	P4E_NI_ASSERT(ni);
	if (!ni || !me_p)
		return -FI_EINVAL;
	ret = p4e_me_create(ni, pt_index, desc, list, user_ptr, user_flags,
			    &me);
	if (ret)
		return ret;
	/* the handle is valid until the entry is freed, which the link may
	 * already do (a use-once entry consumed by an unexpected header) */
	handle = p4u_pool_handle(&ni->mes, me);
	ret = p4e_me_link(ni, me);
	if (ret)
		return ret;
	*me_p = handle;
	return 0;
}

/* Unlink a linked entry (the caller checked it is one) on request. */
static int p4e_me_unlink_entry(struct p4e_me *me, unsigned flags)
{
	if (me->pending)
		return -FI_EBUSY;	/* an operation is using it */
	p4e_me_delist(me);
	if (flags & P4E_UNLINK_CANCEL) {
		me->cancel_event = true;
		p4e_me_simple_event(me, P4E_EVENT_AUTO_UNLINK,
				    P4E_NI_CANCELED);
	}
	if (me->list == P4E_OVERFLOW_LIST && me->uh_refs) {
		/* headers still point into it: freed (silently) with them */
		me->freed_pending = true;
		me->options |= P4E_ME_EVENT_UNLINK_DISABLE;
		return 0;
	}
	p4e_me_destroy(me);
	return 0;
}

int p4e_me_unlink(struct p4e_ni *ni, uint64_t handle, unsigned flags)
{
	struct p4e_me *me;

	P4E_NI_ASSERT(ni);
	if (!ni || (flags & ~P4E_UNLINK_CANCEL))
		return -FI_EINVAL;
	me = p4u_pool_lookup(&ni->mes, handle);
	/* an entry off its list (unlinking, or an overflow entry kept for
	 * its headers) is no longer the caller's to unlink */
	if (!me || me->triggered || me->unlink_pending || me->freed_pending)
		return -FI_EINVAL;
	return p4e_me_unlink_entry(me, flags);
}

int p4e_me_cancel(struct p4e_ni *ni, uint32_t pt_index, void *user_ptr)
{
	struct p4e_pt *pt = ni ? p4e_pt_get(ni, pt_index) : NULL;
	struct p4e_mentry *ent;

	P4E_NI_ASSERT(ni);
	if (!pt)
		return -FI_EINVAL;
	/* list order: the oldest such entry (a rare call: a walk is fine) */
	p4u_list_foreach_entry(&pt->prio.order, ent, struct p4e_mentry,
			       order) {
		struct p4e_me *me = container_of(ent, struct p4e_me, ment);

		if (me->user_ptr == user_ptr)
			return p4e_me_unlink_entry(me, P4E_UNLINK_CANCEL);
	}
	return -FI_ENOENT;
}

/* ---- triggered append ---------------------------------------------------- */

int p4e_me_trig_create(struct p4e_ni *ni, uint32_t pt_index,
		       const struct p4e_me_desc *desc, enum p4e_list list,
		       void *user_ptr, uint64_t user_flags, uint64_t *me_p)
{
	struct p4e_me *me;
	int ret;

	ret = p4e_me_create(ni, pt_index, desc, list, user_ptr, user_flags,
			    &me);
	if (ret)
		return ret;
	me->triggered = true;
	*me_p = p4u_pool_handle(&ni->mes, me);
	return 0;
}

int p4e_me_trig_link(struct p4e_ni *ni, uint64_t handle)
{
	struct p4e_me *me = p4u_pool_lookup(&ni->mes, handle);

	if (!me || !me->triggered)
		return -FI_EINVAL;
	me->triggered = false;
	return p4e_me_link(ni, me);
}

void p4e_me_trig_cancel(struct p4e_ni *ni, uint64_t handle)
{
	struct p4e_me *me = p4u_pool_lookup(&ni->mes, handle);

	if (me && me->triggered)
		p4e_me_destroy(me);
}

/* ---- claimed messages (the search is in p4e_search.c) ------------------ */

static struct p4e_uh *p4e_uh_claimed(struct p4e_ni *ni, uint64_t handle)
{
	struct p4e_uh *uh = ni ? p4u_pool_lookup(&ni->uhs, handle) : NULL;

	return uh && uh->claimed ? uh : NULL;
}

int p4e_uh_deliver(struct p4e_ni *ni, uint64_t handle,
		   const struct p4e_me_desc *desc, void *user_ptr,
		   uint64_t user_flags)
{
	struct p4e_uh *uh = p4e_uh_claimed(ni, handle);
	struct p4e_me_desc d;
	struct p4e_me *me;
	int ret;

	P4E_NI_ASSERT(ni);
	if (!uh || !desc)
		return -FI_EINVAL;
	d = *desc;
	d.options |= P4E_ME_USE_ONCE | P4E_ME_UH_COPY |
		     P4E_ME_EVENT_UNLINK_DISABLE | P4E_ME_EVENT_LINK_DISABLE;
	d.options &= ~P4E_ME_MANAGE_LOCAL;
	ret = p4e_me_create(ni, uh->pt_index, &d, P4E_PRIORITY_LIST, user_ptr,
			    user_flags, &me);
	if (ret)
		return ret;
	ret = p4e_uh_deliver_into(ni, uh, me, NULL, 0, true);
	if (ret < 0) {
		p4e_me_destroy(me);	/* refused before any change */
		return ret;
	}
	return 0;	/* delivered, or when its data is in */
}

int p4e_uh_discard(struct p4e_ni *ni, uint64_t handle)
{
	struct p4e_uh *uh = p4e_uh_claimed(ni, handle);

	P4E_NI_ASSERT(ni);
	if (!uh)
		return -FI_EINVAL;
	p4e_tgt_uh_dropped(ni, uh);
	p4e_uh_free(ni, uh);
	return 0;
}
