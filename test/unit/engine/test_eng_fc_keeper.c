/*
 * test_eng_fc_keeper.c - the header keeper (P4E_ME_HDR_ONLY) at the end of
 * a P4E_PT_FC_RESEND portal's overflow list: when the overflow buffers are
 * full, eager puts are sent back to come again as rendezvous and leave
 * only their header, so a receive posted for a message queued behind the
 * flood is served (before the keeper, flow control held the sender and
 * that receive waited for ever); only a spent header budget still holds
 * the sender. Every message arrives once, in order, with its data, and its
 * initiator sees each event once.
 */
#include "eng_fc_test.h"

TestSuite(eng_fc_keeper, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t keeper(struct eng_node *n)
{
	return append(n, NULL, 0, P4E_ME_OP_PUT | P4E_ME_HDR_ONLY, 0, ~0ULL,
		      P4E_OVERFLOW_LIST, 0, (void *)(intptr_t)ENG_LOG_OTHER);
}

/* b: FC_RESEND, max_uh headers, an overflow buffer of oflow bytes (none
 * if 0) for three 3000-byte messages at most, then the keeper. */
static uint64_t keeper_setup(uint32_t max_uh, size_t oflow)
{
	open_node(&nb, max_uh, 0, P4E_PT_FC_RESEND, 1024);
	if (oflow)
		append(&nb, obuf, oflow, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL |
		       P4E_ME_NO_TRUNCATE | P4E_ME_RDZV_HDR_ONLY, 0, ~0ULL,
		       P4E_OVERFLOW_LIST, 3000,
		       (void *)(intptr_t)ENG_LOG_OTHER);
	keeper(&nb);
	return md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
}

/* A receive for message i alone: bits 0x100 + i. */
static void put_tagged(uint64_t md, int i, size_t len, enum p4e_ack_req ack)
{
	struct p4e_xfer x = xfer_to(&nb, md, len, 0x100 + (uint64_t)i, ack);

	fill_msg(i, len);
	x.local_offset = (uint64_t)i * SSLOT;
	x.hdr_data = i;
	x.user_ptr = (void *)(intptr_t)i;
	cr_assert_eq(p4e_put(na.ni, &x), 0);
}

static void post_receive_for(int i)
{
	append(&nb, rbuf + i * SSLOT, SSLOT, P4E_ME_OP_PUT | P4E_ME_USE_ONCE |
	       P4E_ME_UH_COPY, 0x100 + (uint64_t)i, 0, P4E_PRIORITY_LIST, 0,
	       (void *)(intptr_t)i);
}

static size_t mixed_len(int i)
{
	static const size_t lens[] = { 100, 2000, 3000, 64, 5000 };

	return lens[i % 5];
}

Test(eng_fc_keeper, options_checked)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, P4E_ME_OP_PUT |
					   P4E_ME_HDR_ONLY, 0, ~0ULL);
	uint64_t me;

	open_node(&nb, 0, 0, P4E_PT_FC_RESEND, 64);
	cr_expect_eq(p4e_me_append(nb.ni, nb.pt, &d, P4E_PRIORITY_LIST, NULL,
				   0, &me), -FI_EINVAL, "priority list");
	d.options |= P4E_ME_MANAGE_LOCAL;
	cr_expect_eq(p4e_me_append(nb.ni, nb.pt, &d, P4E_OVERFLOW_LIST, NULL,
				   0, &me), -FI_EINVAL, "locally managed");
	d.options &= ~P4E_ME_MANAGE_LOCAL;
	d.start = obuf;
	d.length = 64;
	cr_expect_eq(p4e_me_append(nb.ni, nb.pt, &d, P4E_OVERFLOW_LIST, NULL,
				   0, &me), -FI_EINVAL, "with memory");
	d.start = NULL;
	d.length = 0;
	cr_expect_eq(p4e_me_append(nb.ni, nb.pt, &d, P4E_OVERFLOW_LIST, NULL,
				   0, &me), 0);
}

/* The deadlock the keeper removes: the receiver waits for the last of a
 * flood its overflow buffer cannot hold, posting nothing for the rest. */
Test(eng_fc_keeper, receive_behind_flood_is_served)
{
	enum { N = 40 };
	uint64_t md;
	int i;

	md = keeper_setup(1024, 8000);
	for (i = 0; i < N; i++)
		put_tagged(md, i, mixed_len(i), P4E_ACK_REQ);
	progress();
	post_receive_for(N - 1);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_assert_eq(rx.got[N - 1], 1, "the message behind the flood");
	cr_expect_eq(memcmp(rbuf + (N - 1) * SSLOT, src + (N - 1) * SSLOT,
			    mixed_len(N - 1)), 0);
	cr_expect_eq(rx.delivered, 1);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 0, "nobody held");
	cr_expect_gt(status_of(&nb, P4E_SR_FC_AS_RDZV), 0);
	cr_expect_gt(status_of(&na, P4E_SR_RESENT_AS_RDZV), 0);
	/* the rest, received late, still arrive whole and once */
	for (i = 0; i < N - 1; i++)
		post_receive_for(i);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, mixed_len, &rx, &tx, P4E_ACK_REQ);
	cr_expect_eq(status_of(&nb, P4E_SR_DROP_COUNT), 0);
	cr_expect_eq(p4e_md_release(na.ni, md), 0, "every op ended");
}

/* Same-bits flood in send order, ACCEPT acks: converted ops report SEND
 * and ACK once, after the pull, and matching order is the send order. */
Test(eng_fc_keeper, flood_in_order_accept_acks)
{
	enum { N = 30 };
	uint64_t md;

	md = keeper_setup(1024, 8000);
	flood_mixed(&na, md, 0, N, mixed_len, P4E_ACK_ACCEPT);
	progress();
	post_receives(0, N, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, mixed_len, &rx, &tx, P4E_ACK_ACCEPT);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 0);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

static size_t empty_or_small(int i)
{
	return i % 2 ? 100 : 0;
}

/* Without any overflow buffer: an empty put leaves its header at once, a
 * put with data comes back as rendezvous. */
Test(eng_fc_keeper, empty_puts_need_no_resend)
{
	enum { N = 6 };
	uint64_t md;

	md = keeper_setup(64, 0);
	flood_mixed(&na, md, 0, N, empty_or_small, P4E_ACK_REQ);
	progress();
	cr_expect_eq(status_of(&na, P4E_SR_RESENT_AS_RDZV), N / 2);
	post_receives(0, N, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, empty_or_small, &rx, &tx, P4E_ACK_REQ);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 0);
}

static size_t small_len(int i)
{
	return 40 + (size_t)i;
}

/* Headers are the keeper's budget: once spent, flow control holds the
 * sender as before, and resumes it when receives take headers away. */
Test(eng_fc_keeper, header_budget_spent_holds)
{
	enum { N = 12 };
	uint64_t md;

	md = keeper_setup(4, 0);
	flood_mixed(&na, md, 0, N, small_len, P4E_ACK_REQ);
	progress();
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 1, "held at the 5th");
	post_receives(0, N, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, small_len, &rx, &tx, P4E_ACK_REQ);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/* A portal without P4E_PT_FC_RESEND cannot ask for a resend: the keeper
 * keeps what needs no payload room and the rest is refused as before. */
Test(eng_fc_keeper, without_resend_no_conversion)
{
	uint64_t md;

	open_node(&nb, 64, 0, 0, 64);
	keeper(&nb);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 2, empty_or_small, P4E_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[0][P4E_NI_OK], 1, "the empty put");
	cr_expect_eq(tx.ack[1][P4E_NI_DROPPED], 1, "no room, no resend");
	cr_expect_eq(status_of(&na, P4E_SR_RESENT_AS_RDZV), 0);
}
