/*
 * test_eng_fc_resend.c - flow control that loses nothing
 * (P4E_PT_FC_RESEND): floods of eager and rendezvous messages beyond the
 * overflow space and the header budget arrive exactly once and in order
 * (the NACK, the RESUME at a sixteenth of the headers, episode counts),
 * other initiators go on, the race of messages sent after the NACK, a
 * receive posted last, a PT disabled by its owner, a held initiator whose
 * link fails, and control messages that do not fit on the link (a RESUME
 * retried, a RESUME whose NACK was lost).
 * Several NIs of one domain; the loop hooks (hold, fail_link, queue
 * limit) order what happens.
 *
 * Not here: Portals flow control (P4E_PT_FLOWCTRL) and link failures are
 * in test_eng_fc.c; acceptance and the acknowledgement policy in
 * test_eng_fc_ack.c; the header keeper (eager puts turned rendezvous) in
 * test_eng_fc_keeper.c. The fixture is eng_fc_test.h.
 */
#include "eng_fc_test.h"

TestSuite(eng_fc, .init = setup, .fini = teardown, .timeout = 60);

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
	p4t_loop_hold(na.ni->xp[P4E_XP_NET].iface, true);
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
	p4t_loop_hold(na.ni->xp[P4E_XP_NET].iface, false);
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
	p4t_loop_hold(na.ni->xp[P4E_XP_NET].iface, true);
	p4t_loop_set_queue_limit(na.ni->xp[P4E_XP_NET].iface, 24);
	/* with lose_nack, op 0's ACK fills the queue before the NACK */
	flood_mixed(&na, md, 0, 1, small_len,
		    lose_nack ? P4E_ACK_REQ : P4E_ACK_ACCEPT);
	flood_mixed(&na, md, 1, N - 1, small_len, P4E_ACK_ACCEPT);
	progress();
	post_receives(0, N, SSLOT);
	progress();		/* RESUME due, no room for it */
	p4t_loop_set_queue_limit(na.ni->xp[P4E_XP_NET].iface, 0);
	p4t_loop_hold(na.ni->xp[P4E_XP_NET].iface, false);
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
