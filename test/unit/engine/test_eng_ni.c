/*
 * test_eng_ni.c - portal table and NI rules through two NIs on the loop
 * transport: PT options (ONLY_USE_ONCE, ONLY_TRUNCATE, ALLOC_DISABLED),
 * disable / enable, PT_ANY, pt_free while in use, unallocated indexes;
 * non-matching and logical NIs. Limits, status registers, names and peer
 * ids, and destroying NIs with work pending are in test_eng_ni_limits.c
 * (same suite and fixture, p4e_ni_test.h).
 */
#include "p4e_ni_test.h"
#include "p4e_priv.h"

TestSuite(eng_ni, .init = ni_setup, .fini = ni_teardown,
	  .timeout = 30);

/* ---- portal table ---------------------------------------------------------- */

Test(eng_ni, pt_any_picks_the_lowest_free_index)
{
	uint32_t idx;

	cr_assert_eq(e.pt[1], 0);
	cr_assert_eq(p4e_pt_alloc(e.ni[1], 0, NULL, P4E_PT_ANY, &idx), 0);
	cr_expect_eq(idx, 1);
	cr_assert_eq(p4e_pt_alloc(e.ni[1], 0, NULL, 5, &idx), 0);
	cr_expect_eq(idx, 5);
	cr_assert_eq(p4e_pt_alloc(e.ni[1], 0, NULL, P4E_PT_ANY, &idx), 0);
	cr_expect_eq(idx, 2);
	cr_assert_eq(p4e_pt_free(e.ni[1], 1), 0);
	cr_assert_eq(p4e_pt_alloc(e.ni[1], 0, NULL, P4E_PT_ANY, &idx), 0);
	cr_expect_eq(idx, 1);
	cr_assert_eq(p4e_pt_alloc(e.ni[1], 0, NULL, P4E_PT_ANY, &idx), 0);
	cr_expect_eq(idx, 3);
	idx = 77;
	cr_expect_eq(p4e_pt_alloc(e.ni[1], 0, NULL, 5, &idx), -FI_EBUSY);
	cr_expect_eq(idx, 77, "no output on failure");
	cr_expect_eq(p4e_pt_free(e.ni[1], 4), -FI_EINVAL, "not allocated");
	cr_expect_eq(p4e_pt_alloc(e.ni[1], 0x8000, NULL, P4E_PT_ANY, &idx),
		     -FI_EINVAL);
	/* Portals: flow control needs an EQ */
	cr_expect_eq(p4e_pt_alloc(e.ni[1], P4E_PT_FLOWCTRL, NULL, P4E_PT_ANY,
				  &idx), -FI_EINVAL);
	cr_expect_eq(p4e_pt_alloc(e.ni[1], P4E_PT_FLOWCTRL, e.eq[1],
				  P4E_PT_ANY, &idx), 0);
	cr_expect_eq(idx, 4);
}

Test(eng_ni, max_pt_index_honoured)
{
	struct p4e_ni_limits want = { .max_pt_index = 3 }, got;
	uint32_t idx;

	reopen(P4E_NI_MATCHING | P4E_NI_PHYSICAL, &want);
	p4e_ni_limits_get(e.ni[1], &got);
	cr_expect_eq(got.max_pt_index, 3);
	cr_expect_eq(p4e_pt_alloc(e.ni[1], 0, NULL, 4, &idx), -FI_EINVAL);
	cr_expect_eq(p4e_pt_alloc(e.ni[1], 0, NULL, 3, &idx), 0);
	cr_expect_eq(p4e_pt_alloc(e.ni[1], 0, NULL, P4E_PT_ANY, &idx), 0);
	cr_expect_eq(p4e_pt_alloc(e.ni[1], 0, NULL, P4E_PT_ANY, &idx), 0);
	cr_expect_eq(idx, 2);
	cr_expect_eq(p4e_pt_alloc(e.ni[1], 0, NULL, P4E_PT_ANY, &idx),
		     -FI_ENOSPC);
	/* a message to an index past the table is dropped */
	put_to(e.id[1], 200, 8, 0, 0);
	eng_progress(&e);
	ini_done(P4E_NI_DROPPED, 0);
	cr_expect_eq(sr(1, P4E_SR_DROP_COUNT), 1);
}

/* ONLY_USE_ONCE is a hint: persistent entries are taken, and stay. */
Test(eng_ni, only_use_once_is_a_hint)
{
	uint32_t pt;
	uint64_t me, oflow;

	cr_assert_eq(p4e_pt_alloc(e.ni[1], P4E_PT_ONLY_USE_ONCE, e.eq[1],
				  P4E_PT_ANY, &pt), 0);
	cr_expect_eq(append_pt(pt, P4E_OVERFLOW_LIST, P4E_ME_OP_PUT, 2,
			       &oflow), 0);
	ev_is(1, P4E_EVENT_LINK);
	cr_expect_eq(append_pt(pt, P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 1, &me),
		     0);
	ev_is(1, P4E_EVENT_LINK);
	put_to(e.id[1], pt, 8, 1, 0);
	put_to(e.id[1], pt, 8, 1, 0);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_PUT);
	eng_no_event(&e, 1);
}

/* ONLY_TRUNCATE is a hint: a NO_TRUNCATE entry is taken and does not
 * truncate; a plain one does. */
Test(eng_ni, only_truncate_is_a_hint)
{
	uint32_t pt;
	uint64_t me;

	cr_assert_eq(p4e_pt_alloc(e.ni[1], P4E_PT_ONLY_TRUNCATE, e.eq[1],
				  P4E_PT_ANY, &pt), 0);
	cr_expect_eq(append_pt(pt, P4E_PRIORITY_LIST, P4E_ME_OP_PUT |
			       P4E_ME_NO_TRUNCATE, 1, &me), 0);
	ev_is(1, P4E_EVENT_LINK);
	cr_expect_eq(append_pt(pt, P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 1, &me),
		     0);
	ev_is(1, P4E_EVENT_LINK);
	/* too long for the first: the plain entry takes it, truncated */
	put_to(e.id[1], pt, 8000, 1, 0);
	eng_progress(&e);
	cr_expect_eq(ev_is(1, P4E_EVENT_PUT).mlength, 4096);
}

Test(eng_ni, alloc_disabled_then_enable)
{
	struct p4e_event ev;
	uint32_t pt;
	uint64_t me;

	cr_assert_eq(p4e_pt_alloc(e.ni[1], P4E_PT_ALLOC_DISABLED, e.eq[1],
				  P4E_PT_ANY, &pt), 0);
	cr_assert_eq(append_pt(pt, P4E_PRIORITY_LIST, P4E_ME_OP_PUT |
			       P4E_ME_USE_ONCE, 1, &me), 0);
	ev_is(1, P4E_EVENT_LINK);
	put_to(e.id[1], pt, 8, 1, 0);
	eng_progress(&e);
	ini_done(P4E_NI_PT_DISABLED, 0);
	eng_no_event(&e, 1);
	cr_expect_eq(pbuf[0], 0, "nothing delivered");
	cr_expect_eq(p4e_pt_enable(e.ni[1], pt), 0);
	put_to(e.id[1], pt, 8, 1, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.pt_index, pt);
	cr_expect_eq(memcmp(pbuf, src, 8), 0);
	ini_done(P4E_NI_OK, 8);
}

Test(eng_ni, disable_and_enable)
{
	append(P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 1);
	ev_is(1, P4E_EVENT_LINK);
	cr_assert_eq(p4e_pt_disable(e.ni[1], e.pt[1]), 0);
	put(8, 1, 0);
	eng_progress(&e);
	ini_done(P4E_NI_PT_DISABLED, 0);
	eng_no_event(&e, 1);
	cr_assert_eq(p4e_pt_enable(e.ni[1], e.pt[1]), 0);
	put(8, 1, 0);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ini_done(P4E_NI_OK, 8);
	cr_expect_eq(p4e_pt_disable(e.ni[1], 9), -FI_EINVAL);
	cr_expect_eq(p4e_pt_enable(e.ni[1], 9), -FI_EINVAL);
}

Test(eng_ni, pt_free_refused_while_entries_are_attached)
{
	uint64_t p, o;

	p = append(P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 1);
	o = append(P4E_OVERFLOW_LIST, P4E_ME_OP_PUT, 2);
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), -FI_EBUSY);
	cr_assert_eq(p4e_me_unlink(e.ni[1], p, 0), 0);
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), -FI_EBUSY);
	cr_assert_eq(p4e_me_unlink(e.ni[1], o, 0), 0);
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), 0);
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), -FI_EINVAL);
	/* an unallocated index drops */
	put(8, 1, 0);
	eng_progress(&e);
	ini_done(P4E_NI_DROPPED, 0);
	cr_expect_eq(sr(1, P4E_SR_DROP_COUNT), 1);
	cr_expect_eq(p4e_pt_alloc(e.ni[1], 0, e.eq[1], P4E_PT_ANY, &e.pt[1]),
		     0);
}

Test(eng_ni, pt_free_refused_while_headers_remain)
{
	struct p4e_ni_limits want = { .max_entries = 2 };
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, 2, 0);
	uint64_t o, me;

	reopen(P4E_NI_MATCHING | P4E_NI_PHYSICAL, &want);
	o = append(P4E_OVERFLOW_LIST, P4E_ME_OP_PUT, 2);
	put(8, 2, 0);
	eng_progress(&e);
	cr_assert_eq(p4e_me_unlink(e.ni[1], o, 0), 0);
	/* the header still points into the unlinked entry */
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), -FI_EBUSY);
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_DELETE,
				   NULL, 0), 0);
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), 0);
	/* nothing of it is left: both entries can be had again */
	cr_assert_eq(p4e_pt_alloc(e.ni[1], 0, e.eq[1], P4E_PT_ANY, &e.pt[1]),
		     0);
	cr_expect_eq(append_pt(e.pt[1], P4E_PRIORITY_LIST, 0, 1, &me), 0);
	cr_expect_eq(append_pt(e.pt[1], P4E_PRIORITY_LIST, 0, 1, &me), 0);
}

Test(eng_ni, pt_free_refused_while_a_claimed_header_lives)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, 2, 0);
	struct p4e_event ev;
	uint64_t o;

	o = append(P4E_OVERFLOW_LIST, P4E_ME_OP_PUT, 2);
	ev_is(1, P4E_EVENT_LINK);
	put(8, 2, 0);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_CLAIM,
				   NULL, 0), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_assert_neq(ev.uh_handle, 0);
	cr_assert_eq(p4e_me_unlink(e.ni[1], o, 0), 0);
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), -FI_EBUSY);
	cr_assert_eq(p4e_uh_discard(e.ni[1], ev.uh_handle), 0);
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), 0);
}

Test(eng_ni, pt_free_refused_while_a_pull_uses_an_unlinked_entry)
{
	eng_need_loop("its steps assume the loop's delivery order");
	append(P4E_PRIORITY_LIST, P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 1);
	ev_is(1, P4E_EVENT_LINK);
	put(10000, 1, 0);
	/* the header is in, the entry unlinked, its pull not run yet */
	cr_assert_eq(p4e_ni_progress(e.ni[1], 1), 1);
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), -FI_EBUSY);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(p4e_pt_free(e.ni[1], e.pt[1]), 0);
	ini_done(P4E_NI_OK, 4096);
}

Test(eng_ni, pt_free_lets_flow_controlled_initiators_go)
{
	struct p4e_event ev;
	uint32_t fc_pt, pt;
	uint64_t me;
	int i;

	cr_assert_eq(p4e_pt_alloc(e.ni[1], P4E_PT_FC_RESEND, e.eq[1],
				  P4E_PT_ANY, &fc_pt), 0);
	cr_assert_eq(p4e_pt_alloc(e.ni[1], 0, e.eq[1], P4E_PT_ANY, &pt), 0);
	cr_assert_eq(append_pt(pt, P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 1, &me),
		     0);
	ev_is(1, P4E_EVENT_LINK);
	/* nothing matches on the flow-controlled PT: the initiator waits */
	put_to(e.id[1], fc_pt, 8, 1, 1);
	eng_progress(&e);
	ev_is(0, P4E_EVENT_SEND);
	eng_no_event(&e, 0);
	cr_expect_eq(sr(1, P4E_SR_FLOWCTRL), 1);
	/* the PT goes away: what was held is dropped, what follows lands */
	cr_assert_eq(p4e_pt_free(e.ni[1], fc_pt), 0);
	put_to(e.id[1], pt, 8, 1, 2);
	eng_progress(&e);
	for (i = 0; i < 2; i++) {
		ev = ack_next();
		cr_expect_eq(ev.ni_fail_type, ev.hdr_data == 1 ?
			     P4E_NI_DROPPED : P4E_NI_OK, "put %lu",
			     (unsigned long)ev.hdr_data);
	}
	cr_expect_eq(ev_is(1, P4E_EVENT_PUT).hdr_data, 2);
}

/* ---- kinds of NI ------------------------------------------------------------- */

Test(eng_ni, non_matching_ni_first_entry_wins)
{
	static const unsigned me_only[] = {
		P4E_ME_MANAGE_LOCAL, P4E_ME_NO_TRUNCATE, P4E_ME_MAY_ALIGN,
		P4E_ME_LOCAL_INC_UH_RLENGTH,
	};
	struct p4e_me_desc d;
	struct p4e_event ev;
	uint64_t a, me;
	size_t i;

	reopen(P4E_NI_NO_MATCHING | P4E_NI_PHYSICAL, NULL);
	for (i = 0; i < P4U_ARRAY_SIZE(me_only); i++)
		cr_expect_eq(append_pt(e.pt[1], P4E_PRIORITY_LIST,
				       P4E_ME_OP_PUT | me_only[i], 0, &me),
			     -FI_EINVAL, "option %#x", me_only[i]);
	/* match bits, ignore bits and match_id mean nothing on an LE */
	d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT, 0x1, 0);
	d.match_id = e.id[1];
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   PRI, 0, &a), 0);
	d = eng_me_desc(pbuf + 64, 64, P4E_ME_OP_PUT, 0x999, 0);
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   PRI2, 0, &me), 0);
	ev_is(1, P4E_EVENT_LINK);
	ev_is(1, P4E_EVENT_LINK);
	put(8, 0x999, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_assert_eq(p4e_me_unlink(e.ni[1], a, 0), 0);
	put(8, 0x1, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_ptr, PRI2);
}

Test(eng_ni, non_matching_ni_unexpected_headers)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, 0x5, 0);
	struct p4e_event ev;

	reopen(P4E_NI_NO_MATCHING | P4E_NI_PHYSICAL, NULL);
	append(P4E_OVERFLOW_LIST, P4E_ME_OP_PUT, 0x1);
	ev_is(1, P4E_EVENT_LINK);
	put(8, 0x77, 1);
	put(8, 0x78, 2);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_PUT);
	/* any search finds the oldest header */
	d.match_id = e.id[1];
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_ONLY, NULL,
				   0), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.hdr_data, 1);
	/* a Portals search with a persistent entry: every header, in order */
	d.options |= P4E_ME_SEARCH_EACH;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_ONLY, NULL,
				   0), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 1);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 2);
	append(P4E_PRIORITY_LIST, P4E_ME_USE_ONCE, 0x3);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 1);
}

Test(eng_ni, logical_ni_names_by_rank)
{
	struct p4e_me_desc d;
	struct p4e_event ev;
	uint32_t map[2], got[4];
	size_t n;
	uint64_t me;
	int i;

	reopen(P4E_NI_MATCHING | P4E_NI_LOGICAL, NULL);
	/* rank 0 is NI 1, rank 1 is NI 0: ranks are not peer ids */
	map[0] = e.id[1];
	map[1] = e.id[0];
	for (i = 0; i < 2; i++)
		cr_assert_eq(p4e_ni_set_map(e.ni[i], map, 2), 0);
	cr_assert_eq(p4e_ni_get_map(e.ni[0], got, 4, &n), 0);
	cr_expect_eq(n, 2);
	cr_expect_eq(got[0], e.id[1]);
	cr_expect_eq(got[1], e.id[0]);

	/* an entry for rank 0 (not the sender) first, then for rank 1 */
	d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT, 0x1, 0);
	d.match_id = 0;
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   PRI, 0, &me), 0);
	d.match_id = 1;
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   PRI2, 0, &me), 0);
	ev_is(1, P4E_EVENT_LINK);
	ev_is(1, P4E_EVENT_LINK);
	d.match_id = 2;
	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   PRI2, 0, &me), -FI_EINVAL, "no rank 2");

	put_to(0, e.pt[1], 8, 0x1, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_ptr, PRI2);
	cr_expect_eq(ev.initiator, 1, "the initiator's rank");
	ev = ini_done(P4E_NI_OK, 8);
	cr_expect_eq(ev.initiator, 0, "the target's rank");
	{
		uint64_t md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
		struct p4e_xfer x = eng_xfer(&e, 0, md, 8, 1);

		x.target = 2;
		cr_expect_eq(p4e_put(e.ni[0], &x), -FI_EINVAL);
	}
}

Test(eng_ni, logical_ni_unexpected_headers_by_rank)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, 0x1, 0);
	struct p4e_event ev;
	uint32_t map[2];
	int i;

	reopen(P4E_NI_MATCHING | P4E_NI_LOGICAL, NULL);
	map[0] = e.id[1];
	map[1] = e.id[0];
	for (i = 0; i < 2; i++)
		cr_assert_eq(p4e_ni_set_map(e.ni[i], map, 2), 0);
	append(P4E_OVERFLOW_LIST, P4E_ME_OP_PUT, 0x1);
	ev_is(1, P4E_EVENT_LINK);
	put_to(0, e.pt[1], 8, 0x1, 3);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.initiator, 1);
	d.match_id = 0;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_ONLY, NULL,
				   0), 0);
	cr_expect_eq(ev_is(1, P4E_EVENT_SEARCH).ni_fail_type, P4E_NI_NO_MATCH);
	d.match_id = 1;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_ONLY, NULL,
				   0), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.initiator, 1);
	cr_expect_eq(ev.hdr_data, 3);
	d = eng_me_desc(pbuf, 64, P4E_ME_USE_ONCE, 0x1, 0);
	d.match_id = 1;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.initiator, 1);
}

Test(eng_ni, map_calls_checked)
{
	uint32_t ids[2] = { e.id[0], e.id[1] }, bad = 12345;
	size_t n;

	/* the fixture's NIs are physical */
	cr_expect_eq(p4e_ni_set_map(e.ni[0], ids, 2), -FI_EINVAL);
	cr_expect_eq(p4e_ni_get_map(e.ni[0], ids, 2, &n), -FI_EINVAL);
	reopen(P4E_NI_MATCHING | P4E_NI_LOGICAL, NULL);
	cr_expect_eq(p4e_ni_set_map(e.ni[0], &bad, 1), -FI_EINVAL,
		     "not a peer id");
	cr_expect_eq(p4e_ni_set_map(e.ni[0], NULL, 2), -FI_EINVAL);
	cr_assert_eq(p4e_ni_get_map(e.ni[0], NULL, 0, &n), 0);
	cr_expect_eq(n, 0);
}

Test(eng_ni, ni_create_options_checked)
{
	static const unsigned bad[] = {
		P4E_NI_MATCHING,
		P4E_NI_PHYSICAL,
		P4E_NI_MATCHING | P4E_NI_NO_MATCHING | P4E_NI_PHYSICAL,
		P4E_NI_MATCHING | P4E_NI_LOGICAL | P4E_NI_PHYSICAL,
		P4E_NI_MATCHING | P4E_NI_PHYSICAL | 0x100,
	};
	struct p4e_ni_attr attr = { .transport = &p4t_loop_ops };
	struct p4e_ni *ni = (struct p4e_ni *)&attr;
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(bad); i++) {
		attr.options = bad[i];
		cr_expect_eq(p4e_ni_create(e.dom, &attr, &ni), -FI_EINVAL,
			     "options %#x", bad[i]);
	}
	attr.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL;
	attr.transport = NULL;
	cr_expect_eq(p4e_ni_create(e.dom, &attr, &ni), -FI_EINVAL);
	cr_expect_eq(ni, (struct p4e_ni *)&attr, "no output on failure");
}
