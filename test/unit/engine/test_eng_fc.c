/*
 * test_eng_fc.c - Portals flow control and link failures:
 *   - Portals flow control (P4E_PT_FLOWCTRL): exhausted unexpected headers,
 *     overflow space or event space disable the PT with one PT_DISABLED
 *     event, initiators see P4E_NI_PT_DISABLED, enable brings it back;
 *     without it, drops are counted and a full EQ overwrites;
 *   - link failure and peer close: pending ops end P4E_NI_UNDELIVERABLE, a
 *     pull in flight fails its receive, others go on, new links work.
 * Several NIs of one domain; the loop hooks (hold, fail_link) order what
 * happens.
 *
 * Not here: flow control that loses nothing (P4E_PT_FC_RESEND: NACK and
 * resume) is in test_eng_fc_resend.c; acceptance and the acknowledgement
 * policy (SEQ_ACK, lazy acks, forged acks) in test_eng_fc_ack.c; the
 * header keeper in test_eng_fc_keeper.c; the ring EQ in test_eng_ct.c.
 * The fixture is eng_fc_test.h.
 */
#include "eng_fc_test.h"

TestSuite(eng_fc, .init = setup, .fini = teardown, .timeout = 60);

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
	p4t_loop_hold(nb.ni->xp[P4E_XP_NET].iface, true);
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
	p4t_loop_hold(nb.ni->xp[P4E_XP_NET].iface, false);
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
