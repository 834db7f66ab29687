/*
 * p4e_fc.c - sequence numbers, acceptance, the acknowledgement policy and
 * the flow control that loses nothing (docs/design.md §7).
 *
 * Every request to a peer carries the next sequence number of that
 * (initiator, target) pair; the target processes them strictly in order
 * and reports the first one it has not accepted yet in the ack_seq field
 * of every message it sends back (or in a SEQ_ACK when it has nothing else
 * to send). An initiator keeps each request's payload until it is
 * accepted.
 *
 * When a PT with P4E_PT_FC_RESEND runs out of resources for a request from
 * P, the target NACKs that sequence number and drops everything later
 * from P (P sent it before the NACK arrived: P still has it). P puts every
 * unaccepted request back at the head of its queue and holds. When the PT
 * gets resources back (an overflow entry appended, an unexpected header
 * consumed, the PT re-enabled), the target sends RESUME and P resends from
 * there, in order. Only P waits; other initiators are not stalled.
 *
 * When the PT is short of payload room but can still keep headers (its
 * P4E_ME_HDR_ONLY entry took the message), the NACK says AS_RDZV instead:
 * P resends at once, its eager puts to that PT as rendezvous, and the
 * target keeps their headers until receives match them and pull the data.
 * A receiver waiting for a message behind a flood thus gets it.
 *
 * Control messages may meet a full link (-FI_EAGAIN) too: a SEQ_ACK or
 * RESUME that was not sent stays owed and is retried from progress, and
 * a RESUME alone rewinds P as its NACK would have, so a NACK that did not
 * fit costs only time. Resources freed while nobody waits resume nobody.
 *
 * Acknowledgements have one policy, here (p4e_fc_ack_wait_until): what a
 * target owes a peer is the acceptance of its requests (ack_seq, carried
 * by every message we send it, or a SEQ_ACK of its own) and the ACK that
 * ends each rendezvous. Both leave at the end of the progress call unless
 * they may wait:
 *  - acceptance nobody waits for (no P4W_F_ACK_NOW: copied payloads,
 *    whose acceptance only frees the initiator's copy) waits up to
 *    ack_delay_ns, or P4E_ACK_EVERY requests;
 *  - while a rendezvous streams in from the peer (our pulls from it in
 *    flight), its acknowledgements wait for the stream to end, up to
 *    P4E_ACK_HOLD_MAX of them or P4E_ACK_HOLD_NS: sent one by one they
 *    would each be a segment the peer's kernel must take in the middle
 *    of its stream (on loopback, on the sending CPU), which halves
 *    rendezvous bandwidth; held, they leave in one write.
 * Anything else we send the peer takes them along, a worker about to
 * sleep sends them all (p4e_fc_ack_all), and the NI's ack_timer, on its
 * worker's timer queue, fires at the earliest deadline. Transports only
 * batch what the engine lets wait (P4T_SEND_BATCH); they hold nothing.
 */
#include <config.h>

#include <stdlib.h>

#include "p4e_priv.h"
#include "p4u_time.h"

/* A held-back acknowledgement goes at the latest after this many
 * requests: the initiator keeps each one's copy until then. */
#define P4E_ACK_EVERY	16
/* Acknowledgements held while a rendezvous streams in: at most this many,
 * for at most this long. */
#define P4E_ACK_HOLD_MAX	16
#define P4E_ACK_HOLD_NS		200000u

/*
 * What a message to np asks of the transport (docs/design.md §9). Inside
 * progress everything may wait for the flush at its end: what one call
 * produces (acknowledgements, pull requests, replies, resent requests)
 * leaves together. Between calls a request goes at once unless its
 * caller said more follow at once (P4E_XFER_MORE, libfabric's FI_MORE):
 * a message handed over leaves without a further call from the
 * application (fi_portals.7, Progress), so nothing is held on a guess
 * that the application will come back.
 */
unsigned p4e_fc_send_flags(struct p4e_npeer *np, bool request, bool more)
{
	unsigned flags = request ? P4T_SEND_SEQ : 0;

	if (np->ni->in_progress || (request && more))
		return flags | P4T_SEND_BATCH;
	return flags;
}

/* np owes acknowledgements now: on the NI's list, since when. */
static void p4e_fc_owe(struct p4e_npeer *np)
{
	struct p4e_ni *ni = np->ni;

	if (p4u_list_node_linked(&np->ack_link))
		return;
	/* the clock only when a deadline may apply */
	np->ack_since_ns = ni->ack_delay_ns || np->pulls ?
			   p4e_worker_now(ni->worker) : 0;
	p4u_list_insert_tail(&ni->ack_pending, &np->ack_link);
}

/* Off the NI's list once nothing is owed. */
static void p4e_fc_owed_none(struct p4e_npeer *np)
{
	if (np->rx_told == np->rx_expect && !np->nheld) {
		np->ack_now = false;
		p4u_list_remove(&np->ack_link);
	}
}

void p4e_fc_stamp(struct p4e_npeer *np, struct p4w_hdr *hdr)
{
	hdr->flags |= P4W_F_ACK_SEQ;
	hdr->ack_seq = np->rx_expect;
	np->rx_told = np->rx_expect;
	p4e_fc_owed_none(np);
}

static int p4e_npeer_send_copy(struct p4e_npeer *np, const void *hdr,
			       size_t hdr_len, const struct iovec *iov,
			       size_t iovcnt);

int p4e_npeer_send_msg(struct p4e_npeer *np, const void *hdr, size_t hdr_len,
		       const struct iovec *iov, size_t iovcnt)
{
	if (!np->conn)
		return -FI_ENOTCONN;
	/* it takes the held acknowledgements along, ahead of it */
	if (np->nheld)
		p4e_fc_release(np);
	return p4e_npeer_send_copy(np, hdr, hdr_len, iov, iovcnt);
}

/* Send now, or (full link) keep a copy for progress, in order. */
static int p4e_npeer_send_copy(struct p4e_npeer *np, const void *hdr,
			       size_t hdr_len, const struct iovec *iov,
			       size_t iovcnt)
{
	struct p4e_ni *ni = np->ni;
	struct p4e_defer *d;
	size_t i, off;
	int ret;

	if (p4u_list_empty(&np->deferred)) {
		ret = p4t_send(np->xp->iface, np->conn, hdr, hdr_len, iov, iovcnt,
			       NULL, p4e_fc_send_flags(np, false, false));
		if (ret != -FI_EAGAIN)
			return ret < 0 ? ret : 0;
	}
	/* the rare overload path: a copy, sent from progress in order */
	d = malloc(sizeof(*d) + hdr_len + p4e_iov_total(iov, iovcnt));
	if (!d)
		return -FI_ENOMEM;
	memcpy(d->data, hdr, hdr_len);
	for (i = 0, off = hdr_len; i < iovcnt; off += iov[i].iov_len, i++)
		memcpy(d->data + off, iov[i].iov_base, iov[i].iov_len);
	d->len = off;
	p4u_list_insert_tail(&np->deferred, &d->link);
	if (!p4u_list_node_linked(&np->defer_link))
		p4u_list_insert_tail(&ni->deferring, &np->defer_link);
	return 0;
}

void p4e_npeer_flush_deferred(struct p4e_npeer *np)
{
	struct p4e_defer *d;

	while ((d = p4u_list_first_entry(&np->deferred, struct p4e_defer,
					 link))) {
		if (!np->conn ||
		    p4t_send(np->xp->iface, np->conn, d->data, d->len, NULL, 0,
			     NULL, p4e_fc_send_flags(np, false, false)) == -FI_EAGAIN)
			return;
		p4u_list_remove(&d->link);
		free(d);
	}
	p4u_list_remove(&np->defer_link);
	/* requests waited behind the deferred messages */
	p4e_ini_flush(np);
}

void p4e_npeer_drop_deferred(struct p4e_npeer *np)
{
	struct p4e_defer *d;

	while ((d = p4u_list_first_entry(&np->deferred, struct p4e_defer,
					 link))) {
		p4u_list_remove(&d->link);
		free(d);
	}
	p4u_list_remove(&np->defer_link);
}

void p4e_fc_unblock(struct p4e_npeer *np)
{
	if (p4u_list_node_linked(&np->block_link)) {
		p4u_list_remove(&np->block_link);
		np->ni->fc_blocked--;
	}
	np->rx_blocked = false;
}

static int p4e_fc_send(struct p4e_npeer *np, uint8_t type, uint32_t seq,
		       uint32_t flags)
{
	uint8_t buf[sizeof(struct p4w_hdr) + sizeof(struct p4w_fc)];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = type,
	};
	struct p4w_fc fc = { .seq = seq, .flags = flags };
	size_t len = sizeof(hdr);
	int ret;

	if (!np->conn)
		return -FI_ENOTCONN;
	if (type == P4W_NACK || type == P4W_RESUME) {
		p4w_fc_pack(buf + sizeof(hdr), &fc);
		len += sizeof(fc);
	}
	hdr.length = (uint32_t)len;
	/* stamped like p4e_fc_stamp, but the ack counts as told only once
	 * the message is on its way: a full link leaves it owed */
	hdr.flags |= P4W_F_ACK_SEQ;
	hdr.ack_seq = np->rx_expect;
	p4w_hdr_pack(buf, &hdr);
	ret = p4e_npeer_send_msg(np, buf, len, NULL, 0);
	if (ret < 0)
		return ret;
	np->rx_told = hdr.ack_seq;
	p4e_fc_owed_none(np);
	return 0;
}

int p4e_fc_send_ctrl(struct p4e_npeer *np, uint8_t type, uint32_t seq)
{
	return p4e_fc_send(np, type, seq, 0);
}

/* ---- target side ------------------------------------------------------ */

void p4e_fc_accepted(struct p4e_npeer *np)
{
	np->rx_expect++;
	p4e_fc_owe(np);
}

void p4e_fc_nack(struct p4e_npeer *np, struct p4e_pt *pt)
{
	if (np->rx_blocked)
		return;
	np->rx_blocked = true;
	p4u_list_remove(&np->block_link);
	p4u_list_insert_tail(&pt->blocked, &np->block_link);
	np->ni->fc_blocked++;
	p4u_info(P4U_LOG_ENGINE, "flow control: holding peer %u from seq %u",
		 np->id, np->rx_expect);
	p4e_fc_send_ctrl(np, P4W_NACK, np->rx_expect);
}

void p4e_fc_nack_rdzv(struct p4e_npeer *np)
{
	/*
	 * Not held: what P sent after this message is dropped as stale (its
	 * seq is not rx_expect) and comes again right behind it. A NACK that
	 * meets a full link is queued (p4e_npeer_send_msg), never lost.
	 */
	p4u_dbg(P4U_LOG_ENGINE, "flow control: peer %u to resend from seq %u "
		"as rendezvous", np->id, np->rx_expect);
	p4e_fc_send(np, P4W_NACK, np->rx_expect, P4W_FC_AS_RDZV);
}

/*
 * Headers come back one receive at a time. A held initiator resumed for
 * each would resend its whole backlog to get one message in, and be held
 * again: wait till a sixteenth of the budget is free (with other
 * resources short, a header is not what it waits for anyway).
 */
void p4e_fc_uh_freed(struct p4e_ni *ni, struct p4e_pt *pt)
{
	uint32_t max = ni->uhs.max_objs;

	if (max - p4u_pool_in_use(&ni->uhs) >= P4U_MAX(max / 16, 1u))
		p4e_fc_pt_freed(ni, pt);
}

void p4e_fc_pt_freed(struct p4e_ni *ni, struct p4e_pt *pt)
{
	(void)ni;
	/* only what comes back while someone waits can end a wait: a stale
	 * flag from before a nack would resume at once into a second nack */
	if (!p4u_list_empty(&pt->blocked))
		pt->resources_freed = true;
}

static void p4e_fc_resume_pt(struct p4e_ni *ni, struct p4e_pt *pt)
{
	struct p4e_npeer *np, *tmp;

	pt->resources_freed = false;
	p4u_list_foreach_entry_safe(&pt->blocked, np, tmp, struct p4e_npeer,
				    block_link) {
		/* a RESUME that does not fit now is tried again at the
		 * next progress; till then the peer stays held */
		if (p4e_fc_send_ctrl(np, P4W_RESUME, np->rx_expect) ==
		    -FI_EAGAIN) {
			pt->resources_freed = true;
			continue;
		}
		p4u_list_remove(&np->block_link);
		ni->fc_blocked--;
		np->rx_blocked = false;
	}
}

/* ---- acknowledgements ------------------------------------------------- */

/*
 * The policy (top of the file): 0 when what np is owed must go now, else
 * the time until which it may wait.
 */
static uint64_t p4e_fc_ack_wait_until(const struct p4e_npeer *np)
{
	const struct p4e_ni *ni = np->ni;

	if (np->ack_now || np->nheld >= P4E_ACK_HOLD_MAX ||
	    np->rx_expect - np->rx_told >= P4E_ACK_EVERY)
		return 0;
	if (np->pulls)
		return np->ack_since_ns + P4E_ACK_HOLD_NS;
	if (np->nheld || !ni->ack_delay_ns)
		return 0;
	return np->ack_since_ns + ni->ack_delay_ns;
}

void p4e_fc_pull_started(struct p4e_npeer *np)
{
	/* a stream begins: what is owed waits for it from now on */
	if (!np->pulls++ && p4u_list_node_linked(&np->ack_link))
		np->ack_since_ns = p4u_time_ns();
}

void p4e_fc_pull_ended(struct p4e_npeer *np)
{
	if (np->pulls)
		np->pulls--;
}

int p4e_fc_send_ack(struct p4e_npeer *np, const void *msg, size_t len)
{
	if (!np->conn)
		return -FI_ENOTCONN;
	if (!np->pulls || len > sizeof(*np->held) ||
	    !p4u_list_empty(&np->deferred) || np->nheld >= P4E_ACK_HOLD_MAX)
		return p4e_npeer_send_msg(np, msg, len, NULL, 0);
	if (!np->held) {
		np->held = malloc(P4E_ACK_HOLD_MAX * sizeof(*np->held));
		if (!np->held)
			return p4e_npeer_send_msg(np, msg, len, NULL, 0);
	}
	memcpy(np->held[np->nheld++], msg, len);
	p4e_fc_owe(np);
	return 0;
}

void p4e_fc_release(struct p4e_npeer *np)
{
	uint32_t i, n = np->nheld;
	struct p4w_hdr hdr;

	if (!n)
		return;
	np->nheld = 0;
	/* the last one tells the acceptance as it is now */
	if (!p4w_hdr_unpack(np->held[n - 1], sizeof(*np->held), &hdr)) {
		p4e_fc_stamp(np, &hdr);
		p4w_hdr_pack(np->held[n - 1], &hdr);
	}
	for (i = 0; i < n; i++)
		if (p4e_npeer_send_copy(np, np->held[i], sizeof(*np->held),
					NULL, 0) < 0)
			p4u_warn_sparse(P4U_LOG_ENGINE, "acknowledgement to "
					"peer %u not sent", np->id);
	p4e_fc_owed_none(np);
}

void p4e_fc_drop_held(struct p4e_npeer *np)
{
	free(np->held);
	np->held = NULL;
	np->nheld = 0;
	np->pulls = 0;
}

/* What np is owed goes: the held ACKs, then a SEQ_ACK if still owed. */
static void p4e_fc_ack_go(struct p4e_npeer *np)
{
	p4e_fc_release(np);
	if (np->rx_told != np->rx_expect)
		p4e_fc_send_ctrl(np, P4W_SEQ_ACK, 0);
	else
		p4e_fc_owed_none(np);
}

/*
 * Send what must go (now: the clock, or 0 to read it if needed); the
 * timer keeps a deadline no later than the earliest of the rest. It is
 * not moved later, nor cancelled when what it was armed for left with a
 * reply: it fires, looks again here and re-arms for what is still owed
 * (once per ack delay at most). Re-arming on every request cost a heap
 * removal and insertion per message in a ping-pong, where each request
 * owes an ack and each reply pays it.
 */
static void p4e_fc_acks(struct p4e_ni *ni, uint64_t now)
{
	uint64_t until, next = P4U_TIMER_NEVER;
	bool armed = p4u_timer_armed(&ni->ack_timer);
	struct p4e_npeer *np, *tmp;

	p4u_list_foreach_entry_safe(&ni->ack_pending, np, tmp,
				    struct p4e_npeer, ack_link) {
		if (np->rx_told == np->rx_expect && !np->nheld) {
			p4e_fc_owed_none(np);
			continue;
		}
		until = p4e_fc_ack_wait_until(np);
		/* the timer fires first and decides then: no clock needed */
		if (until && armed && ni->ack_timer.deadline_ns <= until)
			continue;
		if (until && !now)
			now = p4e_worker_now(ni->worker);
		if (until > now) {
			next = P4U_MIN(next, until);
			continue;
		}
		p4e_fc_ack_go(np);
	}
	if (next != P4U_TIMER_NEVER &&
	    (!armed || ni->ack_timer.deadline_ns > next))
		p4u_timer_arm(&ni->worker->timers, &ni->ack_timer, next);
}

void p4e_fc_ack_timer(struct p4u_timer *timer, uint64_t now_ns)
{
	struct p4e_ni *ni = container_of(timer, struct p4e_ni, ack_timer);

	/* the time the queue ran at: what is re-armed lies after it */
	p4e_fc_acks(ni, now_ns);
	/* what the expiry sent leaves now: nobody may progress again soon */
	p4e_ni_flush(ni);
}

void p4e_fc_progress(struct p4e_ni *ni)
{
	uint32_t i;

	if (ni->fc_blocked) {
		for (i = 0; i <= ni->limits.max_pt_index; i++) {
			struct p4e_pt *pt = &ni->pts[i];

			if (pt->allocated && pt->enabled &&
			    pt->resources_freed && !p4u_list_empty(&pt->blocked))
				p4e_fc_resume_pt(ni, pt);
		}
	}
	if (!p4u_list_empty(&ni->ack_pending))
		p4e_fc_acks(ni, 0);
}

void p4e_fc_ack_now(struct p4e_npeer *np)
{
	if (p4u_list_node_linked(&np->ack_link))
		np->ack_now = true;
}

void p4e_fc_ack_all(struct p4e_ni *ni)
{
	struct p4e_npeer *np, *tmp;

	p4u_list_foreach_entry_safe(&ni->ack_pending, np, tmp,
				    struct p4e_npeer, ack_link)
		p4e_fc_ack_go(np);
	p4u_timer_cancel(&ni->worker->timers, &ni->ack_timer);
}

/* ---- initiator side ------------------------------------------------------ */

void p4e_fc_tx_acked(struct p4e_npeer *np, uint32_t ack_seq)
{
	struct p4e_op *op;
	uint32_t sent_end = np->tx_seq;

	/*
	 * Ignore acks for what we never sent (hostile or confused peer):
	 * the queue holds what is not (re)sent yet, in seq order after
	 * everything on tx_sent, and no target can have accepted it.
	 */
	op = p4u_list_first_entry(&np->tx_queue, struct p4e_op, link);
	if (op)
		sent_end = op->seq;
	if (!p4e_seq_before(np->tx_acked, ack_seq) ||
	    p4e_seq_before(sent_end, ack_seq))
		return;
	np->tx_acked = ack_seq;
	while ((op = p4u_list_first_entry(&np->tx_sent, struct p4e_op, link)) &&
	       p4e_seq_before(op->seq, ack_seq))
		p4e_ini_accepted(op);
}

/* Everything before seq was accepted; seq and later go again, in order. */
static void p4e_fc_rewind(struct p4e_npeer *np, uint32_t seq)
{
	struct p4u_list later;
	struct p4e_op *op;

	p4e_fc_tx_acked(np, seq);
	p4u_list_init(&later);
	p4u_list_splice_tail(&later, &np->tx_queue);
	/* each sent one to the tail of tx_queue, in order (p4e_op_step) */
	while ((op = p4u_list_first_entry(&np->tx_sent, struct p4e_op, link)))
		p4e_op_step(op, P4E_OPE_REWIND, NULL);
	p4u_list_splice_tail(&np->tx_queue, &later);
}

void p4e_fc_nacked(struct p4e_npeer *np, uint32_t seq)
{
	struct p4e_ni *ni = np->ni;

	/* our sends to it now wait, and so do their completions: said once */
	if (!(ni->warned & P4E_WARN_HELD_BY_PEER)) {
		ni->warned |= P4E_WARN_HELD_BY_PEER;
		p4u_warn(P4U_LOG_ENGINE, "peer %u holds our requests from seq "
			 "%u (flow control: it is out of resources for them, "
			 "e.g. its unexpected-message budget is spent): they "
			 "wait until it resumes us", np->id, seq);
	}
	p4e_fc_rewind(np, seq);
	np->tx_held = true;
	p4u_list_remove(&np->flush_link);
}

void p4e_fc_nacked_rdzv(struct p4e_npeer *np, uint32_t seq)
{
	struct p4e_op *op;
	uint32_t pt_index;

	p4e_fc_rewind(np, seq);
	op = p4u_list_first_entry(&np->tx_queue, struct p4e_op, link);
	if (!op || op->seq != seq)
		return;		/* nothing of ours at seq: a confused peer */
	/*
	 * The portal is short of payload room, not of headers: every eager
	 * put to it still unaccepted goes again as rendezvous (converted
	 * when sent: p4e_ini_xmit). Puts posted later try eager first.
	 */
	pt_index = op->pt_index;
	p4u_list_foreach_entry(&np->tx_queue, op, struct p4e_op, link) {
		if (op->type == P4W_PUT && op->proto == P4W_PROTO_EAGER &&
		    op->length && op->pt_index == pt_index)
			op->to_rdzv = true;
	}
	np->tx_held = false;
	p4e_ini_flush(np);
}

void p4e_fc_resume_req(struct p4e_npeer *np, uint32_t seq)
{
	/*
	 * Resend from seq. After a NACK everything unaccepted is queued
	 * already; if the NACK never came (it did not fit on the link),
	 * what we sent since was dropped as stale and goes again too.
	 */
	p4e_fc_rewind(np, seq);
	np->tx_held = false;
	p4e_ini_flush(np);
}
