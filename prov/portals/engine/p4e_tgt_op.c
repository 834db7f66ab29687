/*
 * p4e_tgt_op.c - the life of a target operation (docs/design.md §4.2,
 * §7.1): work that outlives its request message, a rendezvous put's pull
 * or a get's pushed reply. Its state (enum p4e_tgt_state, p4e_priv.h)
 * changes only in p4e_tgt_step():
 *
 *         MATCH             PULL                RMA_DONE
 *   FREE -------> MATCHED -------> PULLING ---------------------+
 *    ^              |  |     PUSH               RMA_DONE         |
 *    |         DONE |  +---------> PUSHING ---> [REPLY header] --+
 *    +------------ end <-----------------------------------------+
 *
 * A refused transfer ends at once (RMA_DONE, UNDELIVERABLE), those of a
 * failed link before it is reported. The end sends what the initiator
 * waits for (a rendezvous put's ACK, failed or not; a failed get's
 * REPLY), the entry's event (rule 5), the header the pull filled
 * (p4e_uh_filled), and releases the entry.
 */
#include <config.h>

#include <assert.h>
#include <inttypes.h>

#include "p4e_priv.h"

void p4e_tgt_event_fill(const struct p4e_tgt_op *top, struct p4e_event *ev,
			uint8_t fail)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = top->event_type;
	ev->ni_fail_type = fail;
	ev->initiator = p4e_ni_event_id(top->ni, top->initiator);
	ev->uid = top->uid;
	ev->start = top->start;
	ev->match_bits = top->match_bits;
	ev->rlength = top->rlength;
	ev->mlength = fail == P4E_NI_OK ? top->mlength : 0;
	ev->remote_offset = top->remote_offset;
	ev->hdr_data = top->hdr_data;
	ev->atomic_op = top->atomic_op;
	ev->atomic_type = top->atomic_type;
	ev->flags = top->ev_flags;
}

static const char *const p4e_tgt_state_names[P4E_TGTS_MAX] = {
	[P4E_TGTS_FREE] = "free", [P4E_TGTS_MATCHED] = "matched",
	[P4E_TGTS_PULLING] = "pulling", [P4E_TGTS_PUSHING] = "pushing",
};

static const char *const p4e_tgt_event_names[P4E_TGTE_MAX] = {
	[P4E_TGTE_MATCH] = "match", [P4E_TGTE_PULL] = "pull",
	[P4E_TGTE_PUSH] = "push", [P4E_TGTE_DONE] = "done",
	[P4E_TGTE_RMA_DONE] = "rma_done",
};

const char *p4e_tgt_state_name(enum p4e_tgt_state state)
{
	return (unsigned)state < P4E_TGTS_MAX ? p4e_tgt_state_names[state] :
						"invalid";
}

/* An event the state does not expect: a bug of ours, never input. */
static int p4e_tgt_refuse(const struct p4e_tgt_op *top, enum p4e_tgt_event ev)
{
	p4u_warn(P4U_LOG_ENGINE,
		 "target op %#" PRIx64 " of peer %u: %s refused in state %s",
		 top->op_id, top->initiator,
		 (unsigned)ev < P4E_TGTE_MAX ? p4e_tgt_event_names[ev] :
					       "invalid",
		 p4e_tgt_state_name(top->state));
	assert(!"invalid target operation transition");
	return -FI_EINVAL;
}

/* A pushed reply's data is in place: now its header. */
static void p4e_tgt_reply_pushed(struct p4e_tgt_op *top)
{
	struct p4w_resp resp = {
		.op_id = top->op_id, .mlength = top->mlength,
		.offset = top->offset, .list = top->list, .pushed = 1,
	};

	if (top->peer && top->peer->conn)
		p4e_tgt_respond(top->ni, top->peer, P4W_REPLY, &resp, NULL, 0);
}

/* The end: what the initiator waits for, the event, the entry released. */
static void p4e_tgt_end(struct p4e_tgt_op *top, uint8_t fail)
{
	struct p4e_ni *ni = top->ni;
	struct p4e_npeer *np = top->peer;
	struct p4e_me *me = top->me;
	struct p4e_event ev;
	struct p4w_resp resp = {
		.op_id = top->op_id, .offset = top->offset,
		/* the no-ack mark goes on a put's ACK only, never a REPLY */
		.list = top->list | (top->type == P4W_PUT && me &&
				     (me->options & P4E_ME_ACK_DISABLE) ?
				     P4E_RESP_NO_ACK : 0),
		.mlength = fail == P4E_NI_OK ? top->mlength : 0, .fail = fail,
	};

	p4e_tgt_event_fill(top, &ev, fail);
	if (top->type == P4W_PUT) {
		/* rendezvous: the data is in place (or failed) */
		if (top->uh) {
			p4e_uh_free(ni, top->uh);
			top->uh = NULL;
		}
		if (np && np->conn)
			p4e_tgt_respond(ni, np, P4W_ACK, &resp, NULL, 0);
	} else if (p4e_wants_reply(top->type) && fail != P4E_NI_OK &&
		   np && np->conn) {
		p4e_tgt_respond(ni, np, P4W_REPLY, &resp, NULL, 0);
	}
	p4e_me_emit(me, &ev);
	if (top->filling_uh)	/* after the overflow entry's own event */
		p4e_uh_filled(ni, top->filling_uh, fail);
	top->state = P4E_TGTS_FREE;
	p4u_pool_free(&ni->tops, top);
	p4e_me_use_done(me);
}

int p4e_tgt_step(struct p4e_tgt_op *top, enum p4e_tgt_event ev, uint8_t fail)
{
	enum p4e_tgt_state state = top->state;

	switch (ev) {
	case P4E_TGTE_MATCH:
		if (state != P4E_TGTS_FREE)
			break;
		top->state = P4E_TGTS_MATCHED;
		return 0;
	case P4E_TGTE_PULL:	/* a rendezvous put's data */
	case P4E_TGTE_PUSH:	/* a get's reply */
		if (state != P4E_TGTS_MATCHED ||
		    top->type != (ev == P4E_TGTE_PULL ? P4W_PUT : P4W_GET))
			break;
		top->state = ev == P4E_TGTE_PULL ? P4E_TGTS_PULLING :
						   P4E_TGTS_PUSHING;
		return 0;
	case P4E_TGTE_DONE:
		if (state != P4E_TGTS_MATCHED)
			break;
		p4e_tgt_end(top, fail);
		return 0;
	case P4E_TGTE_RMA_DONE:
		if (state != P4E_TGTS_PULLING && state != P4E_TGTS_PUSHING)
			break;
		if (state == P4E_TGTS_PUSHING && fail == P4E_NI_OK)
			p4e_tgt_reply_pushed(top);
		p4e_tgt_end(top, fail);
		return 0;
	default:
		break;
	}
	return p4e_tgt_refuse(top, ev);
}

int p4e_tgt_start_pull(struct p4e_ni *ni, struct p4e_tgt_op *top,
		       const struct p4w_cookie *src)
{
	struct iovec iov[P4E_IOV_MAX];
	size_t cnt;
	int ret;

	p4e_tgt_step(top, P4E_TGTE_MATCH, P4E_NI_OK);
	/* nothing to move, or no link to move it on */
	if (!top->mlength || !top->peer || !top->peer->conn) {
		p4e_tgt_step(top, P4E_TGTE_DONE, top->mlength ?
			     P4E_NI_UNDELIVERABLE : P4E_NI_OK);
		return 0;
	}
	cnt = p4e_region_iov(top->me->start, top->me->iovcnt, top->offset,
			     top->mlength, iov, P4E_IOV_MAX);
	/* pulling before the call: its completion finds the state it needs */
	p4e_tgt_step(top, P4E_TGTE_PULL, P4E_NI_OK);
	p4e_fc_pull_started(top->peer);	/* acks wait for the stream */
	ret = p4t_pull(top->peer->xp->iface, top->peer->conn, src, 0, iov, cnt,
		       top->mlength, p4e_ctx_make(top, P4E_CTX_TOP));
	if (ret) {
		p4e_fc_pull_ended(top->peer);
		p4u_warn_sparse(P4U_LOG_ENGINE, "pull from peer %u failed: %d",
				top->initiator, ret);
		p4e_tgt_step(top, P4E_TGTE_RMA_DONE, P4E_NI_UNDELIVERABLE);
	}
	return 0;
}

void p4e_tgt_rma_done(struct p4e_ni *ni, struct p4e_tgt_op *top, int status)
{
	(void)ni;
	/* a pull (puts: rendezvous; a get's reply is pushed) ended */
	if (top->type == P4W_PUT && top->peer)
		p4e_fc_pull_ended(top->peer);
	p4e_tgt_step(top, P4E_TGTE_RMA_DONE,
		     status ? P4E_NI_UNDELIVERABLE : P4E_NI_OK);
}

