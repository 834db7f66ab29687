/*
 * test_eng_fc.c - flow control and failures:
 *   - Portals flow control (P4E_PT_FLOWCTRL): exhausted unexpected headers,
 *     overflow space or event space disable the PT with one PT_DISABLED
 *     event, initiators see P4E_NI_PT_DISABLED, enable brings it back;
 *     without it, drops are counted and a full EQ overwrites;
 *   - flow control that loses nothing (P4E_PT_FC_RESEND): floods of eager
 *     and rendezvous messages beyond the overflow space and the header
 *     budget arrive exactly once and in order, other initiators go on, the
 *     race of messages sent after the NACK, lost control messages, episode
 *     counts;
 *   - acceptance: SEQ_ACKs complete ACCEPT-acked ops, forged acks ignored;
 *   - link failure and peer close: pending ops end P4E_NI_UNDELIVERABLE, a
 *     pull in flight fails its receive, others go on, new links work.
 * Several NIs of one domain; the loop hooks (hold, inject, fail_link, queue
 * limit) order what happens. The ring EQ is in test_eng_ct.c.
 */
#include "eng_fc_test.h"

TestSuite(eng_fc, .init = setup, .fini = teardown, .timeout = 60);

static void loop_only(void)
{
	if (!eng_is_loop())
		cr_skip_test("needs the loop transport's hooks");
}

static void addr_of(struct eng_node *n, char *addr, size_t *len)
{
	*len = 64;
	cr_assert_eq(p4e_ni_getname(n->ni, addr, len), 0);
}

/* Fail from's link to to, as a network fault would. */
static void fail_link(struct eng_node *from, struct eng_node *to)
{
	char addr[64];
	size_t len;

	addr_of(to, addr, &len);
	cr_assert_eq(p4t_loop_fail_link(from->ni->iface, addr, len,
					-FI_ECONNRESET), 0);
}


/* A new op from a to b (looked up again) works. */
static void expect_new_op_fine(void)
{
	struct p4e_xfer x;
	uint64_t md;

	append(&nb, obuf + 1024, 64, P4E_ME_OP_PUT, 0x77, 0, P4E_PRIORITY_LIST,
	       0, NULL);
	md = md_bind(&na, src, 64, P4E_HANDLE_NONE, 0);
	x = xfer_to(&nb, md, 16, 0x77, P4E_ACK_REQ);
	x.user_ptr = (void *)5;
	cr_assert_eq(p4e_put(na.ni, &x), 0);
	progress();
	logs_reset();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[5][P4E_NI_OK], 1, "new op after the failure");
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/* ---- Portals flow control ----------------------------------------------- */

/* The PT is disabled with one event; later ops fail PT_DISABLED; after
 * draining and enable, ops work again. */
static void flowctrl_episode(int ok_before, int refused)
{
	int i;

	logs_reset();
	eng_txlog_drain(na.eq, &tx);
	eng_rxlog_drain(nb.eq, &rx);
	for (i = 0; i < ok_before; i++)
		cr_expect_eq(tx.ack[i][P4E_NI_OK], 1, "op %d not acked", i);
	for (; i < ok_before + refused; i++)
		cr_expect_eq(tx.ack[i][P4E_NI_PT_DISABLED], 1,
			     "op %d not refused", i);
	cr_expect_eq(rx.pt_disabled, 1);
	cr_expect_not(rx.dropped, "events lost under flow control");
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
	cr_expect_eq(status_of(&nb, P4E_SR_DROP_COUNT), 0);
}

Test(eng_fc, flowctrl_unexpected_headers)
{
	uint64_t md;

	open_node(&nb, 2, 0, P4E_PT_FLOWCTRL, 64);
	append(&nb, obuf, sizeof(obuf), P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL,
	       0, ~0ULL, P4E_OVERFLOW_LIST, 0, NULL);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood(0, 4, 16, md);
	progress();
	flowctrl_episode(2, 2);
	/* drain: the two headers go to receives; enable; it works again */
	post_receives(0, 2, 16);
	cr_assert_eq(p4e_pt_enable(nb.ni, nb.pt), 0);
	flood(4, 1, 16, md);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[4][P4E_NI_OK], 1);
	expect_data(0, 2, 16);
}

Test(eng_fc, flowctrl_overflow_space)
{
	uint64_t md;

	open_node(&nb, 0, 0, P4E_PT_FLOWCTRL, 64);
	/* room for four 64-byte messages, then it unlinks */
	append(&nb, obuf, 256, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL, 0, ~0ULL,
	       P4E_OVERFLOW_LIST, 64, NULL);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood(0, 6, 64, md);
	progress();
	flowctrl_episode(4, 2);
	post_receives(0, 4, 64);
	append(&nb, obuf + 1024, 1024, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL, 0,
	       ~0ULL, P4E_OVERFLOW_LIST, 64, NULL);
	cr_assert_eq(p4e_pt_enable(nb.ni, nb.pt), 0);
	flood(6, 1, 64, md);
	progress();
	logs_reset();
	eng_txlog_drain(na.eq, &tx);
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(tx.ack[6][P4E_NI_OK], 1);
	cr_expect_eq(rx.delivered, 4);
	cr_expect_eq(rx.oflow_puts, 1);
	expect_data(0, 4, 64);
}

Test(eng_fc, flowctrl_event_space)
{
	uint64_t md;

	/* four events: three PUTs, then the PT_DISABLED still fits */
	open_node(&nb, 0, 0, P4E_PT_FLOWCTRL, 4);
	append(&nb, rbuf, 4096, P4E_ME_OP_PUT | P4E_ME_EVENT_LINK_DISABLE,
	       0x5, 0, P4E_PRIORITY_LIST, 0, (void *)(intptr_t)ENG_LOG_OTHER);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood(0, 5, 8, md);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.other, 3);
	cr_expect_eq(rx.pt_disabled, 1);
	cr_expect_not(rx.dropped, "events lost under flow control");
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[2][P4E_NI_OK], 1);
	cr_expect_eq(tx.ack[3][P4E_NI_PT_DISABLED], 1);
	cr_expect_eq(tx.ack[4][P4E_NI_PT_DISABLED], 1);
	cr_assert_eq(p4e_pt_enable(nb.ni, nb.pt), 0);
	flood(5, 1, 8, md);
	progress();
	logs_reset();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[5][P4E_NI_OK], 1);
}

/* An op makes two events (PUT, AUTO_UNLINK): PT_DISABLED must still fit. */
Test(eng_fc, flowctrl_event_space_use_once)
{
	uint64_t md;
	int i;

	open_node(&nb, 0, 0, P4E_PT_FLOWCTRL, 4);
	for (i = 0; i < 3; i++)
		append(&nb, rbuf + i * SSLOT, 64, P4E_ME_OP_PUT |
		       P4E_ME_USE_ONCE | P4E_ME_EVENT_LINK_DISABLE, 0x5, 0,
		       P4E_PRIORITY_LIST, 0, (void *)(intptr_t)i);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood(0, 3, 8, md);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_not(rx.dropped, "events lost under flow control");
	cr_expect_eq(rx.pt_disabled, 1);
}

Test(eng_fc, no_flowctrl_drops_and_overwrites)
{
	uint64_t md;
	struct p4e_event ev;

	open_node(&nb, 1, 0, 0, 2);
	append(&nb, obuf, sizeof(obuf), P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL |
	       P4E_ME_EVENT_LINK_DISABLE, 0, ~0ULL, P4E_OVERFLOW_LIST, 0,
	       (void *)0x1);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	/* one header fits; the second message has nowhere to go */
	flood(0, 2, 8, md);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[0][P4E_NI_OK], 1);
	cr_expect_eq(tx.ack[1][P4E_NI_DROPPED], 1);
	cr_expect_eq(status_of(&nb, P4E_SR_DROP_COUNT), 1);
	ev = eng_eq_event(nb.eq);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	eng_eq_empty(nb.eq);
	/* a full EQ overwrites: three events into two slots */
	append(&nb, rbuf, 4096, P4E_ME_OP_PUT | P4E_ME_EVENT_LINK_DISABLE, 0x5,
	       0, P4E_PRIORITY_LIST, 0, (void *)0x2);
	flood(2, 3, 8, md);
	progress();
	cr_assert_eq(p4e_eq_ring_get(nb.eq, &ev), P4E_EQ_DROPPED);
	cr_expect_eq(ev.hdr_data, 3);
	cr_assert_eq(p4e_eq_ring_get(nb.eq, &ev), 0);
	cr_expect_eq(ev.hdr_data, 4);
	eng_eq_empty(nb.eq);
	cr_expect_eq(status_of(&nb, P4E_SR_DROP_COUNT), 1);
}

Test(eng_fc, plain_drop_is_no_flowctrl_episode)
{
	uint64_t md;

	open_node(&nb, 0, 0, 0, 64);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood(0, 3, 8, md);
	progress();
	cr_expect_eq(status_of(&nb, P4E_SR_DROP_COUNT), 3);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 0);
}

/* ---- flow control that loses nothing ------------------------------------ */

static size_t mixed_len(int i)
{
	static const size_t lens[] = { 100, 2000, 3000, 64 };

	return lens[i % 4];
}

/* b: FC_RESEND PT, max_uh headers, overflow for bits 0-0xf; a's MD. */
static uint64_t resend_setup(uint32_t max_uh)
{
	open_node(&nb, max_uh, 0, P4E_PT_FC_RESEND, 1024);
	append(&nb, obuf, sizeof(obuf), P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL,
	       0, 0x0f, P4E_OVERFLOW_LIST, 0, (void *)(intptr_t)ENG_LOG_OTHER);
	return md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
}

Test(eng_fc, resend_flood_beyond_overflow_space)
{
	enum { N = 32 };
	uint64_t md;

	open_node(&nb, 0, 0, P4E_PT_FC_RESEND, 1024);
	/* 8000 bytes of overflow space: three messages, then it unlinks */
	append(&nb, obuf, 8000, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL, 0, ~0ULL,
	       P4E_OVERFLOW_LIST, 3000, (void *)(intptr_t)ENG_LOG_OTHER);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, N, mixed_len, P4E_ACK_REQ);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.oflow_puts, 3, "%d messages buffered", rx.oflow_puts);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
	cr_expect_eq(status_of(&nb, P4E_SR_DROP_COUNT), 0);
	cr_expect_eq(p4e_md_release(na.ni, md), -FI_EBUSY, "held ops ended");
	/* the receives come: everything arrives, once, in order */
	post_receives(0, N, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, mixed_len, &rx, &tx, P4E_ACK_REQ);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

static size_t small_len(int i)
{
	return 40 + (size_t)i;
}

Test(eng_fc, resend_flood_beyond_header_budget_two_episodes)
{
	enum { N = 24 };
	uint64_t md;

	md = resend_setup(4);
	flood_mixed(&na, md, 0, N, small_len, P4E_ACK_ACCEPT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.oflow_puts, 4, "headers beyond the budget");
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
	/* two receives free two headers: two more get in, then a new nack */
	post_receives(0, 2, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.oflow_puts, 6);
	cr_expect_eq(rx.delivered, 2);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 2);
	post_receives(2, N - 2, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, small_len, &rx, &tx, P4E_ACK_ACCEPT);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 2);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/* Headers come back one receive at a time: the held sender resumes only
 * once a sixteenth of the budget is free, not to resend its whole backlog
 * for each single header. */
Test(eng_fc, resend_resumes_at_a_sixteenth_of_headers)
{
	enum { N = 40 };
	uint64_t md;

	md = resend_setup(32);
	flood_mixed(&na, md, 0, N, small_len, P4E_ACK_REQ);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.oflow_puts, 32);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
	post_receives(0, 1, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.oflow_puts, 32, "resumed for one header");
	post_receives(1, 1, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.oflow_puts, 34, "two headers free: two more in");
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 2);
	post_receives(2, N - 2, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, small_len, &rx, &tx, P4E_ACK_REQ);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

static size_t rdzv_len(int i)
{
	return i % 2 ? 6000 : 200;
}

Test(eng_fc, resend_flood_with_rendezvous)
{
	enum { N = 20 };
	uint64_t md;

	/* rendezvous headers take no overflow space, only the budget */
	open_node(&nb, 5, 0, P4E_PT_FC_RESEND, 1024);
	append(&nb, obuf, 1000, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL |
	       P4E_ME_RDZV_HDR_ONLY, 0, ~0ULL, P4E_OVERFLOW_LIST, 200,
	       (void *)(intptr_t)ENG_LOG_OTHER);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, N, rdzv_len, P4E_ACK_REQ);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	/* three eager ones in the overflow space, two headers only */
	cr_expect_eq(rx.oflow_puts, 3);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
	post_receives(0, N, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, rdzv_len, &rx, &tx, P4E_ACK_REQ);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

Test(eng_fc, resend_other_initiator_not_stalled)
{
	enum { N = 12 };
	uint64_t md, mdc;
	struct p4e_xfer x;
	int i;

	md = resend_setup(2);
	open_node(&nc, 0, 0, 0, 1024);
	/* c's messages have a receive waiting */
	append(&nb, rbuf + (NMAX - 2) * SSLOT, 4096, P4E_ME_OP_PUT |
	       P4E_ME_MANAGE_LOCAL, 0x90, 0, P4E_PRIORITY_LIST, 0,
	       (void *)(intptr_t)(ENG_LOG_OTHER + 1));
	mdc = md_bind(&nc, src, 64, P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, N, small_len, P4E_ACK_REQ);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.oflow_puts, 2);
	/* a is held; c goes on */
	for (i = 0; i < 4; i++) {
		x = xfer_to(&nb, mdc, 16, 0x90, P4E_ACK_REQ);
		x.user_ptr = (void *)(intptr_t)(40 + i);
		cr_assert_eq(p4e_put(nc.ni, &x), 0);
	}
	progress();
	eng_txlog_drain(nc.eq, &tx);
	eng_txlog_drain(na.eq, &tx);
	for (i = 40; i < 44; i++)
		cr_expect_eq(tx.ack[i][P4E_NI_OK], 1, "c's op %d stalled", i);
	cr_expect_eq(tx.ack[2][P4E_NI_OK], 0, "a was not held");
	post_receives(0, N, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, small_len, &rx, &tx, P4E_ACK_REQ);
}

/*
 * The race: messages sent after the NACKed one reach the target before
 * and after its RESUME; a posts more while the NACK is still on its way.
 * All must be dropped and resent, none processed twice or out of order.
 */
Test(eng_fc, resend_race_messages_after_nack)
{
	enum { N = 10 };
	uint64_t md;

	loop_only();
	md = resend_setup(2);
	/* a does not see the NACK yet */
	p4t_loop_hold(na.ni->iface, true);
	flood_mixed(&na, md, 0, 5, small_len, P4E_ACK_REQ);
	progress();		/* b: 0, 1 buffered, NACK 2, drops 3, 4 */
	flood_mixed(&na, md, 5, 2, small_len, P4E_ACK_REQ);
	progress();		/* b drops 5, 6 (held) */
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.oflow_puts, 2);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
	/* b drains: RESUME leaves while a still holds the NACK */
	post_receives(0, N, SSLOT);
	progress();
	/* sent before a saw NACK and RESUME: stale at b, dropped */
	flood_mixed(&na, md, 7, 3, small_len, P4E_ACK_REQ);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.delivered, 2, "a stale message was processed");
	p4t_loop_hold(na.ni->iface, false);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, small_len, &rx, &tx, P4E_ACK_REQ);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
}

/*
 * Receives posted one at a time, as an application that progresses
 * between them: the message the initiator holds must come once its
 * receive is there, even when no unexpected header is left to free.
 */
Test(eng_fc, resend_receive_posted_last_resumes)
{
	enum { N = 6 };
	uint64_t md;
	int i;

	open_node(&nb, 0, 0, P4E_PT_FC_RESEND, 1024);
	/* four messages fit, then the overflow space is gone for good */
	append(&nb, obuf, 256, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL, 0, ~0ULL,
	       P4E_OVERFLOW_LIST, 64, (void *)(intptr_t)ENG_LOG_OTHER);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, N, small_len, P4E_ACK_REQ);
	progress();
	for (i = 0; i < N; i++) {
		post_receives(i, 1, SSLOT);
		progress();
	}
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, small_len, &rx, &tx, P4E_ACK_REQ);
}

/* A PT disabled by its owner holds initiators instead of failing them. */
Test(eng_fc, resend_disabled_pt_holds_until_enable)
{
	uint64_t md;
	int i, acks = 0;

	md = resend_setup(0);
	post_receives(0, 4, SSLOT);
	cr_assert_eq(p4e_pt_disable(nb.ni, nb.pt), 0);
	flood_mixed(&na, md, 0, 4, small_len, P4E_ACK_REQ);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	for (i = 0; i < 4; i++)
		acks += tx.ack[i][P4E_NI_PT_DISABLED] + tx.ack[i][P4E_NI_OK];
	cr_expect_eq(acks + rx.delivered + rx.pt_disabled, 0);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
	cr_assert_eq(p4e_pt_enable(nb.ni, nb.pt), 0);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(4, small_len, &rx, &tx, P4E_ACK_REQ);
}

/* A held initiator whose link fails: its ops end, none stays held. */
Test(eng_fc, resend_held_peer_link_failure)
{
	uint64_t md;
	int i;

	loop_only();
	md = resend_setup(2);
	flood_mixed(&na, md, 0, 6, small_len, P4E_ACK_REQ);
	progress();
	fail_link(&na, &nb);
	progress();
	eng_txlog_drain(na.eq, &tx);
	for (i = 0; i < 6; i++) {
		int want = i < 2 ? P4E_NI_OK : P4E_NI_UNDELIVERABLE;

		cr_expect_eq(tx.ack[i][want], 1, "op %d", i);
		cr_expect_eq(tx.ack[i][P4E_NI_OK] +
			     tx.ack[i][P4E_NI_UNDELIVERABLE], 1);
	}
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
	expect_new_op_fine();
}

/*
 * Control messages that do not fit on the link at once (a full queue, as
 * a TCP socket can be) are not lost: a RESUME is retried, and a RESUME
 * alone (its NACK lost) still makes the initiator resend from its seq.
 */
static void resend_with_full_link(bool lose_nack)
{
	enum { N = 6 };
	uint64_t md;

	loop_only();
	md = resend_setup(2);
	/* a reads nothing; its queue takes one small message */
	p4t_loop_hold(na.ni->iface, true);
	p4t_loop_set_queue_limit(na.ni->iface, 24);
	/* with lose_nack, op 0's ACK fills the queue before the NACK */
	flood_mixed(&na, md, 0, 1, small_len,
		    lose_nack ? P4E_ACK_REQ : P4E_ACK_ACCEPT);
	flood_mixed(&na, md, 1, N - 1, small_len, P4E_ACK_ACCEPT);
	progress();
	post_receives(0, N, SSLOT);
	progress();		/* RESUME due, no room for it */
	p4t_loop_set_queue_limit(na.ni->iface, 0);
	p4t_loop_hold(na.ni->iface, false);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, small_len, &rx, &tx, P4E_ACK_ACCEPT);
}

Test(eng_fc, resend_resume_retried_on_full_link)
{
	resend_with_full_link(false);
}

Test(eng_fc, resend_resume_without_nack)
{
	resend_with_full_link(true);
}

/* ---- acceptance --------------------------------------------------------- */

Test(eng_fc, seq_ack_completes_accept_ops)
{
	struct p4t_loop_stats st;
	uint64_t md;
	struct p4e_xfer x;
	int i;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	eng_node_close(&na);
	open_node(&na, 0, 4, 0, 1024);
	append(&nb, rbuf, sizeof(rbuf), P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL,
	       0x5, 0, P4E_PRIORITY_LIST, 0, NULL);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	/* not copied: the buffer is held until the target accepts */
	flood_mixed(&na, md, 0, 4, mixed_len, P4E_ACK_ACCEPT);
	x = xfer_to(&nb, md, 8, 0x5, P4E_ACK_ACCEPT);
	cr_expect_eq(p4e_put(na.ni, &x), -FI_EAGAIN, "max_ops not in force");
	progress();
	eng_txlog_drain(na.eq, &tx);
	for (i = 0; i < 4; i++) {
		cr_expect_eq(tx.send[i][P4E_NI_OK], 1);
		cr_expect_eq(tx.ack[i][P4E_NI_OK], 1, "op %d not completed", i);
	}
	/* no per-operation ack travelled, and the slots are free again */
	p4t_loop_stats_get(nb.ni->iface, &st);
	cr_expect_lt(st.msgs_sent, 4, "%lu messages for 4 accept acks",
		     (unsigned long)st.msgs_sent);
	flood_mixed(&na, md, 4, 4, mixed_len, P4E_ACK_ACCEPT);
	progress();
	eng_txlog_drain(na.eq, &tx);
	for (i = 4; i < 8; i++)
		cr_expect_eq(tx.ack[i][P4E_NI_OK], 1);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/* b acknowledges lazily (one second: the timer never decides here). */
static void open_lazy_b(void)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);

	attr.ack_delay_ns = 1000000000ULL;
	eng_node_open(&nb, dom, &attr, 0, 1024);
	append(&nb, rbuf, sizeof(rbuf), P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL,
	       0x5, 0, P4E_PRIORITY_LIST, 0, NULL);
}

static uint64_t msgs_sent_by(struct eng_node *n)
{
	struct p4t_loop_stats st;

	p4t_loop_stats_get(n->ni->iface, &st);
	return st.msgs_sent;
}

static size_t copied_len(int i)
{
	return 8 + (size_t)i;
}

/*
 * Copied payloads: their initiator does not wait for acceptance, so a
 * lazy target sends no SEQ_ACK for them (they stay the initiator's until
 * one comes), but does so at the 16th and before its worker sleeps
 * (p4e_worker_prepare_sleep).
 */
Test(eng_fc, lazy_ack_held_for_copied_payloads)
{
	uint64_t md;

	loop_only();
	open_lazy_b();
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 4, copied_len, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.send[3][P4E_NI_OK], 1, "copied: SEND at once");
	cr_expect_eq(msgs_sent_by(&nb), 0, "an ack nobody waits for");
	cr_expect(p4e_ni_ack_held(nb.ni));
	cr_expect_eq(p4e_md_release(na.ni, md), -FI_EBUSY, "ops kept");
	p4e_worker_prepare_sleep(p4e_dom_worker(dom));
	progress();
	cr_expect_eq(msgs_sent_by(&nb), 1);
	cr_expect_not(p4e_ni_ack_held(nb.ni));
	cr_expect_eq(p4e_md_release(na.ni, md), 0, "acceptance freed them");
	/* at most 16 wait for their ack */
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 24, copied_len, P4E_NO_ACK_REQ);
	progress();
	cr_expect_eq(msgs_sent_by(&nb), 2, "one ack for the first 16");
}

/* The initiator waits: a held buffer (SEND at acceptance) or an ACCEPT
 * ack. Those requests are acknowledged at once; so are copied ones when
 * the initiator runs short of operations. */
Test(eng_fc, lazy_ack_not_for_waited_requests)
{
	uint64_t md;

	loop_only();
	open_lazy_b();
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	fill_msg(0, 2000);
	put_msg(&na, md, 0, 2000, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.send[0][P4E_NI_OK], 1, "held buffer: acked at once");
	fill_msg(1, 8);
	put_msg(&na, md, 1, 8, P4E_ACK_ACCEPT);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[1][P4E_NI_OK], 1, "ACCEPT ack: acked at once");
	cr_expect_eq(msgs_sent_by(&nb), 2);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
	/* a's last free operations: every request says "ack now" */
	eng_node_close(&na);
	open_node(&na, 0, 4, 0, 1024);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 4, copied_len, P4E_NO_ACK_REQ);
	progress();
	cr_expect_eq(p4e_md_release(na.ni, md), 0, "acked under pressure");
}

/* copy_size: an initiator that copies 2000-byte payloads completes them
 * at once and, not waiting, lets the target hold its ack back; a larger
 * payload is held (and acked at once). Bounce blocks grow to copy_size
 * (here above twice max_volatile_size). */
Test(eng_fc, copy_size_copies_up_to_copy_size)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);
	uint64_t md;

	loop_only();
	open_lazy_b();
	eng_node_close(&na);
	attr.copy_size = 2000;
	attr.desired.max_volatile_size = 256;	/* 512-byte blocks if not */
	eng_node_open(&na, dom, &attr, 0, 1024);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	fill_msg(0, 2000);
	put_msg(&na, md, 0, 2000, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.send[0][P4E_NI_OK], 1, "copied: SEND at once");
	cr_expect_eq(msgs_sent_by(&nb), 0, "nobody waits: no ack yet");
	fill_msg(1, 3000);
	put_msg(&na, md, 1, 3000, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.send[1][P4E_NI_OK], 1, "held: SEND at acceptance");
	cr_expect_eq(msgs_sent_by(&nb), 1, "acked at once");
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/* A message going back carries the acknowledgement: no SEQ_ACK at all. */
Test(eng_fc, lazy_ack_rides_on_reverse_traffic)
{
	struct p4e_xfer x;
	uint64_t md, mdb;

	loop_only();
	open_lazy_b();
	append(&na, obuf, 64, P4E_ME_OP_PUT, 0x9, 0, P4E_PRIORITY_LIST, 0,
	       NULL);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	mdb = md_bind(&nb, src, 64, P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 3, copied_len, P4E_NO_ACK_REQ);
	progress();
	x = xfer_to(&na, mdb, 8, 0x9, P4E_NO_ACK_REQ);
	cr_assert_eq(p4e_put(nb.ni, &x), 0);
	progress();
	cr_expect_eq(msgs_sent_by(&nb), 1, "only the reply travelled");
	cr_expect_eq(p4e_md_release(na.ni, md), 0, "its ack_seq accepted all");
	cr_expect_not(p4e_ni_ack_held(nb.ni));
}

/* A SEQ_ACK that does not fit on the link is sent later, not lost. */
Test(eng_fc, seq_ack_retried_on_full_link)
{
	uint64_t md;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	post_receives(0, 3, SSLOT);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	/* a reads nothing: op 0's ACK (48 bytes) fills its queue */
	p4t_loop_hold(na.ni->iface, true);
	p4t_loop_set_queue_limit(na.ni->iface, 48);
	flood_mixed(&na, md, 0, 1, small_len, P4E_ACK_REQ);
	flood_mixed(&na, md, 1, 2, small_len, P4E_ACK_ACCEPT);
	progress();
	p4t_loop_set_queue_limit(na.ni->iface, 0);
	p4t_loop_hold(na.ni->iface, false);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(3, small_len, &rx, &tx, P4E_ACK_ACCEPT);
}

static void inject_seq_ack(struct eng_node *to, struct eng_node *from,
			   uint32_t ack_seq)
{
	uint8_t buf[sizeof(struct p4w_hdr)];
	struct p4w_hdr h = {
		.version = P4W_VERSION, .type = P4W_SEQ_ACK,
		.flags = P4W_F_ACK_SEQ, .length = sizeof(buf),
		.ack_seq = ack_seq,
	};
	char addr[64];
	size_t len;

	addr_of(from, addr, &len);
	p4w_hdr_pack(buf, &h);
	cr_assert_eq(p4t_loop_inject(to->ni->iface, addr, len, buf,
				     sizeof(buf)), 0);
}

static void accept_acked_once(int n)
{
	int i;

	logs_reset();
	eng_txlog_drain(na.eq, &tx);
	eng_rxlog_drain(nb.eq, &rx);
	for (i = 0; i < n; i++) {
		cr_expect_eq(tx.ack[i][P4E_NI_OK], 1, "op %d acked %d times",
			     i, tx.ack[i][P4E_NI_OK]);
		cr_expect_eq(rx.got[i], 1);
	}
}

/*
 * A forged SEQ_ACK is ignored: for seqs never assigned, or (queue_limit:
 * the second message does not fit in b's queue and waits at a) for an op
 * still queued, never sent. The real acks then complete each op once.
 */
static void forged_ack_ignored(uint32_t forged, size_t queue_limit)
{
	uint64_t md;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	post_receives(0, 2, SSLOT);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	p4t_loop_hold(nb.ni->iface, true);
	p4t_loop_set_queue_limit(nb.ni->iface, queue_limit);
	flood_mixed(&na, md, 0, 2, mixed_len, P4E_ACK_ACCEPT);
	inject_seq_ack(&na, &nb, forged);
	cr_assert_eq(p4e_ni_progress(na.ni, 64), 1);
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[0][P4E_NI_OK] + tx.ack[1][P4E_NI_OK], 0,
		     "a forged ack completed an op");
	p4t_loop_set_queue_limit(nb.ni->iface, 0);
	p4t_loop_hold(nb.ni->iface, false);
	progress();
	accept_acked_once(2);
}

Test(eng_fc, forged_ack_beyond_sent_ignored)
{
	forged_ack_ignored(1000, 0);
}

Test(eng_fc, forged_ack_for_unsent_ignored)
{
	forged_ack_ignored(2, 1000);
}

/* A response that does not fit on the link at once is not lost. */
Test(eng_fc, response_not_lost_on_full_link)
{
	uint64_t md;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	post_receives(0, 3, SSLOT);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	/* a reads nothing and takes one ACK (48 bytes) at a time */
	p4t_loop_hold(na.ni->iface, true);
	p4t_loop_set_queue_limit(na.ni->iface, 48);
	flood_mixed(&na, md, 0, 3, small_len, P4E_ACK_REQ);
	progress();
	p4t_loop_set_queue_limit(na.ni->iface, 0);
	p4t_loop_hold(na.ni->iface, false);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(3, small_len, &rx, &tx, P4E_ACK_REQ);
}

/* ---- link failure ------------------------------------------------------- */

static uint64_t fail_ct;

/* put (ACK_REQ), get, fetch, rendezvous put from a to b: ops 0..3. */
static uint64_t post_four(void)
{
	uint64_t md, *operand = (uint64_t *)(src + 3 * SSLOT);
	struct p4e_xfer x;

	cr_assert_eq(p4e_ct_alloc(dom, &fail_ct), 0);
	md = md_bind(&na, src, sizeof(src), fail_ct, P4E_MD_EVENT_CT_ACK |
		  P4E_MD_EVENT_CT_REPLY);
	fill_msg(0, 8);
	put_msg(&na, md, 0, 8, P4E_ACK_REQ);
	x = xfer_to(&nb, md, 32, 0x5, P4E_ACK_REQ);
	x.local_offset = SSLOT;
	x.user_ptr = (void *)1;
	cr_assert_eq(p4e_get(na.ni, &x), 0);
	*operand = 1;
	x = xfer_to(&nb, md, 8, 0x5, P4E_ACK_REQ);
	x.local_offset = 3 * SSLOT;
	x.get_md = md;
	x.get_local_offset = 2 * SSLOT;
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	x.user_ptr = (void *)2;
	cr_assert_eq(p4e_fetch_atomic(na.ni, &x), 0);
	put_msg(&na, md, 3, 6000, P4E_ACK_REQ);
	return md;
}

/* b with entries for the four (bits 0x5) and for 0x77, reading nothing. */
static uint64_t fail_setup(void)
{
	open_node(&nb, 0, 0, 0, 1024);
	append(&nb, rbuf, sizeof(rbuf), P4E_ME_OP_PUT | P4E_ME_OP_GET, 0x5, 0,
	       P4E_PRIORITY_LIST, 0, NULL);
	append(&nb, obuf, 64, P4E_ME_OP_PUT, 0x77, 0, P4E_PRIORITY_LIST, 0,
	       NULL);
	p4t_loop_hold(nb.ni->iface, true);
	return post_four();
}

static void expect_four_failed(uint64_t md)
{
	struct p4e_ct_event v;

	logs_reset();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[0][P4E_NI_UNDELIVERABLE], 1);
	cr_expect_eq(tx.reply[1][P4E_NI_UNDELIVERABLE], 1);
	cr_expect_eq(tx.reply[2][P4E_NI_UNDELIVERABLE], 1);
	cr_expect_eq(tx.send[3][P4E_NI_UNDELIVERABLE], 1);
	cr_expect_eq(tx.ack[3][P4E_NI_UNDELIVERABLE], 1);
	cr_expect_eq(tx.ack[0][P4E_NI_OK] + tx.reply[1][P4E_NI_OK] +
		     tx.reply[2][P4E_NI_OK] + tx.ack[3][P4E_NI_OK], 0);
	v = eng_ct(dom, fail_ct);
	cr_expect_eq(v.failure, 4);
	cr_expect_eq(v.success, 0);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

Test(eng_fc, link_failure_fails_pending_ops)
{
	struct p4e_xfer x;
	uint64_t md, mdc;

	loop_only();
	md = fail_setup();
	open_node(&nc, 0, 0, 0, 1024);
	mdc = md_bind(&nc, src, 64, P4E_HANDLE_NONE, 0);
	x = xfer_to(&nb, mdc, 16, 0x77, P4E_ACK_REQ);
	x.user_ptr = (void *)7;
	cr_assert_eq(p4e_put(nc.ni, &x), 0);
	fail_link(&na, &nb);
	p4t_loop_hold(nb.ni->iface, false);
	progress();
	expect_four_failed(md);
	eng_txlog_drain(nc.eq, &tx);
	cr_expect_eq(tx.ack[7][P4E_NI_OK], 1, "another peer was hit");
	cr_expect_eq(rbuf[4], 0, "a message of the failed link was processed");
	expect_new_op_fine();
}

Test(eng_fc, pull_in_flight_fails_receive)
{
	uint64_t md, ct;
	struct p4e_me_desc d;
	struct p4e_event ev;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	cr_assert_eq(p4e_ct_alloc(dom, &ct), 0);
	d = eng_me_desc(rbuf, 8192, P4E_ME_OP_PUT | P4E_ME_USE_ONCE |
			P4E_ME_EVENT_CT_COMM | P4E_ME_EVENT_LINK_DISABLE, 0x5,
			0);
	d.ct = ct;
	cr_assert_eq(p4e_me_append(nb.ni, nb.pt, &d, P4E_PRIORITY_LIST,
				   (void *)0x44, 0, &(uint64_t){ 0 }), 0);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	fill_msg(0, 6000);
	put_msg(&na, md, 0, 6000, P4E_ACK_REQ);
	/* b takes the request and starts pulling, nothing more */
	cr_assert_eq(p4e_ni_progress(nb.ni, 1), 1);
	fail_link(&nb, &na);
	progress();
	ev = eng_eq_event(nb.eq);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_UNDELIVERABLE);
	cr_expect_eq(ev.user_ptr, (void *)0x44);
	cr_expect_eq(ev.mlength, 0);
	cr_expect_eq(eng_ct(dom, ct).failure, 1);
	cr_expect_eq(eng_ct(dom, ct).success, 0);
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[0][P4E_NI_UNDELIVERABLE], 1);
	cr_expect_eq(tx.ack[0][P4E_NI_OK], 0);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

Test(eng_fc, peer_close_fails_pending_ops)
{
	uint64_t md;

	loop_only();
	md = fail_setup();
	cr_assert_eq(p4e_ni_destroy(nb.ni), 0);
	nb.ni = NULL;
	progress();
	expect_four_failed(md);
	/* the peer restarts as a new NI (a new address): found again */
	eng_node_close(&nb);
	open_node(&nb, 0, 0, 0, 1024);
	expect_new_op_fine();
}
