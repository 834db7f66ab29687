/*
 * test_eng_search.c - how unexpected headers are found: searches
 * (SEARCH_ONLY, SEARCH_DELETE, no match; never a status register) and the
 * claim extension (P4E_SEARCH_CLAIM with p4e_uh_deliver / p4e_uh_discard,
 * eager and rendezvous, stale handles). Headers of gets and atomics,
 * NO_TRUNCATE, moving the data of unexpected messages and matching order
 * are in test_eng_unexp.c.
 */
#include "p4e_list_test.h"
#include "p4u_compiler.h"

TestSuite(eng_search, .init = list_setup, .fini = list_teardown, .timeout = 30);

/* ---- SEARCH_ONLY ------------------------------------------------------------ */

Test(eng_search, search_only_reports_and_keeps_the_header)
{
	struct p4e_event ev;
	int i;

	oflow_ml(0);
	land(1, 16, 0x10, 1);
	land(0, 24, 0x22, 0x4d);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(search(0x22, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
		ev = ev_is(1, P4E_EVENT_SEARCH);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
		cr_expect_eq(ev.match_bits, 0x22);
		cr_expect_eq(ev.hdr_data, 0x4d);
		cr_expect_eq(ev.rlength, 24);
		cr_expect_eq(ev.mlength, 24);
		cr_expect_eq(ev.initiator, e.id[0]);
		cr_expect_eq(ev.uid, 1000);
		cr_expect_eq(ev.start, obuf + 16, "where its data sits");
		cr_expect_eq(ev.user_ptr, SRCH);
		cr_expect_eq(ev.user_flags, 0x77);
		cr_expect_eq(ev.pt_index, e.pt[1]);
		cr_expect_eq(ev.uh_handle, 0);
		eng_no_event(&e, 1);
	}
	/* still there for an append */
	{
		struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_USE_ONCE,
						   0x22, 0);

		eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
		ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
		cr_expect_eq(ev.hdr_data, 0x4d);
	}
	expect_clean_registers();
}

/*
 * A search reports the first match (libfabric's FI_PEEK). A Portals one
 * (P4E_ME_SEARCH_EACH): "event generation for the search functions works
 * just as it would for an append function", so a persistent entry, which
 * would match every one of these headers, reports each, in arrival order;
 * a use-once entry only the first (issue 22).
 */
Test(eng_search, search_only_first_or_each_match_in_arrival_order)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, P4E_ME_SEARCH_EACH, 0x30,
					   0x3);
	struct p4e_event ev;

	oflow_ml(0);
	land(0, 8, 0x31, 1);
	land(1, 8, 0x32, 2);
	land(0, 8, 0x44, 3);
	cr_assert_eq(search(0x30, 0x3, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 1);
	eng_no_event(&e, 1);
	d.match_id = P4E_ID_ANY;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_ONLY,
				   SRCH, 0x77), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 1);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 2);
	eng_no_event(&e, 1);
	d.options |= P4E_ME_USE_ONCE;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_ONLY,
				   SRCH, 0x77), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 1);
	eng_no_event(&e, 1);
	cr_assert_eq(search(0x32, 0, e.id[0], P4E_SEARCH_ONLY), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 2);
}

Test(eng_search, search_no_match)
{
	oflow_ml(0);
	cr_assert_eq(search(0x1, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	expect_no_match();		/* nothing at all yet */
	land(0, 8, 0x1, 1);
	cr_assert_eq(search(0x2, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	expect_no_match();		/* other bits */
	cr_assert_eq(search(0x1, 0, e.id[1], P4E_SEARCH_ONLY), 0);
	expect_no_match();		/* another initiator */
	cr_assert_eq(search(0x2, 0, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	expect_no_match();
	cr_assert_eq(search(0x2, 0, P4E_ID_ANY, P4E_SEARCH_CLAIM), 0);
	expect_no_match();
	eng_no_event(&e, 1);
	expect_clean_registers();
}

Test(eng_search, search_arguments_checked)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, 0, 0);
	uint64_t me;

	cr_expect_eq(p4e_me_search(e.ni[1], e.pt[1], NULL, P4E_SEARCH_ONLY,
				   NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4e_me_search(e.ni[1], e.pt[1], &d,
				   (enum p4e_search_op)7, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4e_me_search(e.ni[1], e.pt[1] + 1, &d, P4E_SEARCH_ONLY,
				   NULL, 0), -FI_EINVAL, "unallocated PT");
	cr_expect_eq(p4e_me_search(NULL, e.pt[1], &d, P4E_SEARCH_ONLY, NULL,
				   0), -FI_EINVAL);
	/* an id filter needs the NI's id_filter (none here) and ID_ANY */
	d.id_filtered = true;
	cr_expect_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_ONLY,
				   NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), -FI_EINVAL);
	eng_no_event(&e, 1);
}

Test(eng_search, searches_never_bump_status_registers)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, 0x5, 0);

	oflow_ml(0);
	land(0, 8, 0x5, 1);
	/* neither the uid nor the op would be allowed on an append */
	d.uid = 4242;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_ONLY, NULL,
				   0), 0);
	cr_expect_eq(ev_is(1, P4E_EVENT_SEARCH).ni_fail_type, P4E_NI_OK);
	d.match_bits = 0x6;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_DELETE,
				   NULL, 0), 0);
	cr_expect_eq(ev_is(1, P4E_EVENT_SEARCH).ni_fail_type, P4E_NI_NO_MATCH);
	d.match_bits = 0x5;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_DELETE,
				   NULL, 0), 0);
	ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	expect_clean_registers();
}

/* ---- SEARCH_DELETE ------------------------------------------------------------ */

Test(eng_search, search_delete_removes_every_match)
{
	struct p4e_me_desc d;
	struct p4e_event ev;

	oflow_ml(0);
	land(0, 8, 0x41, 1);
	land(1, 16, 0x50, 2);
	land(2, 24, 0x42, 3);
	cr_assert_eq(search(0x40, 0x3, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 1);
	cr_expect_eq(ev.start, obuf);
	cr_expect_eq(ev.mlength, 8);
	cr_expect_eq(ev.user_ptr, SRCH);
	cr_expect_eq(ev.initiator, e.id[0]);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 3);
	cr_expect_eq(ev.start, obuf + 24);
	eng_no_event(&e, 1);

	cr_assert_eq(search(0x40, 0x3, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	expect_no_match();
	/* an append finds only the header that did not match */
	d = eng_me_desc(pbuf, 64, 0, 0, UINT64_MAX);
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 2);
	ev_is(1, P4E_EVENT_LINK);
	eng_no_event(&e, 1);
}

/*
 * A use-once entry deletes as its append would consume: the first match
 * only (Open MPI's MPI_Improbe searches with USE_ONCE | SEARCH_DELETE and
 * lost every later message of the same tag when all went).
 */
Test(eng_search, search_delete_use_once_takes_the_first_match)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, P4E_ME_USE_ONCE, 0x40,
					   0x3);
	struct p4e_event ev;

	oflow_ml(0);
	land(0, 8, 0x41, 1);
	land(1, 16, 0x42, 2);
	land(2, 24, 0x43, 3);
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_DELETE,
				   SRCH, 0x77), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 1);
	eng_no_event(&e, 1);
	/* the other two are still there, in order */
	d.options = 0;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_DELETE,
				   SRCH, 0x77), 0);
	cr_expect_eq(ev_is(1, P4E_EVENT_PUT_OVERFLOW).hdr_data, 2);
	cr_expect_eq(ev_is(1, P4E_EVENT_PUT_OVERFLOW).hdr_data, 3);
	eng_no_event(&e, 1);
}

Test(eng_search, search_delete_completes_a_rendezvous_initiator)
{
	struct p4e_event ev;

	oflow_ml(P4E_ME_RDZV_HDR_ONLY);
	land_rdzv(0, 10000, 0x9, 1);
	cr_assert_eq(search(0x9, 0, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.rlength, 10000);
	cr_expect_eq(ev.hdr_data, 1);
	eng_no_event(&e, 1);
	eng_progress(&e);
	ev = ini_done(P4E_NI_OK, 0);	/* nothing was taken */
	eng_no_event(&e, 0);
	eng_no_event(&e, 1);
}

Test(eng_search, search_delete_frees_an_unlinked_overflow_entry)
{
	struct p4e_me_desc d = eng_me_desc(obuf, 64, P4E_ME_OP_PUT |
					   P4E_ME_USE_ONCE, 0x3, 0);
	struct p4e_event ev;

	eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x3, 1);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
	cr_assert_eq(search(0x3, 0, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	ev = ev_is(1, P4E_EVENT_AUTO_FREE);
	cr_expect_eq(ev.user_ptr, OFL);
	eng_no_event(&e, 1);
}

/* ---- claim, deliver, discard ------------------------------------------------- */

Test(eng_search, claim_takes_the_first_match_off_the_list)
{
	struct p4e_event ev;
	uint64_t uh;

	oflow_ml(0);
	land(0, 8, 0x7, 1);
	land(1, 8, 0x7, 2);
	uh = claim(0x7);
	eng_no_event(&e, 1);
	/* the first is gone from searches and appends, the second is not */
	cr_assert_eq(search(0x7, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 2);
	cr_assert_eq(search(0x7, 0, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 2);
	eng_no_event(&e, 1);
	/* the claimed one is still deliverable */
	cr_assert_eq(deliver(uh, pbuf, 64), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 1);
}

Test(eng_search, claim_then_deliver_eager)
{
	struct p4e_event ev;
	uint64_t uh;

	oflow_ml(0);
	land(1, 32, 0x7, 0);
	land(0, 100, 0x8, 0x3e);
	uh = claim(0x8);
	cr_assert_eq(deliver(uh, pbuf, 256), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.start, pbuf, "the data is in the new buffer");
	cr_expect_eq(ev.mlength, 100);
	cr_expect_eq(ev.rlength, 100);
	cr_expect_eq(ev.hdr_data, 0x3e);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(ev.user_flags, 0x99);
	cr_expect_eq(ev.initiator, e.id[0]);
	cr_expect_eq(memcmp(pbuf, src[0], 100), 0);
	eng_no_event(&e, 1);		/* no LINK, no AUTO_UNLINK */
	/* used: the handle is stale now */
	cr_expect_eq(deliver(uh, pbuf, 256), -FI_EINVAL);
	cr_expect_eq(p4e_uh_discard(e.ni[1], uh), -FI_EINVAL);
	eng_no_event(&e, 1);
}

Test(eng_search, claim_then_deliver_truncates_to_the_buffer)
{
	struct p4e_event ev;
	uint64_t uh;

	oflow_ml(0);
	land(0, 100, 0x8, 1);
	uh = claim(0x8);
	cr_assert_eq(deliver(uh, pbuf, 10), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 10);
	cr_expect_eq(ev.rlength, 100);
	cr_expect_eq(memcmp(pbuf, src[0], 10), 0);
	cr_expect_eq(pbuf[10], 0, "nothing written past the buffer");
}

Test(eng_search, claim_then_deliver_rendezvous)
{
	struct p4e_event ev;
	uint64_t uh;

	oflow_ml(P4E_ME_RDZV_HDR_ONLY);
	land_rdzv(2, 12000, 0x8, 5);
	uh = claim(0x8);
	cr_assert_eq(deliver(uh, pbuf, sizeof(pbuf)), 0);
	eng_no_event(&e, 1);		/* after the pull */
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf);
	cr_expect_eq(ev.mlength, 12000);
	cr_expect_eq(ev.hdr_data, 5);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(memcmp(pbuf, src[2], 12000), 0);
	eng_no_event(&e, 1);
	ini_done(P4E_NI_OK, 12000);
	eng_no_event(&e, 0);
	cr_expect_eq(p4e_uh_discard(e.ni[1], uh), -FI_EINVAL);
}

Test(eng_search, claim_then_discard_eager)
{
	struct p4e_me_desc d = eng_me_desc(obuf, 64, P4E_ME_OP_PUT |
					   P4E_ME_USE_ONCE, 0x3, 0);
	struct p4e_event ev;
	uint64_t uh;

	eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x3, 1);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	uh = claim(0x3);
	eng_no_event(&e, 1);		/* the claimed header holds the entry */
	cr_assert_eq(p4e_uh_discard(e.ni[1], uh), 0);
	ev = ev_is(1, P4E_EVENT_AUTO_FREE);
	cr_expect_eq(ev.user_ptr, OFL);
	eng_no_event(&e, 1);
	cr_expect_eq(p4e_uh_discard(e.ni[1], uh), -FI_EINVAL);
	cr_expect_eq(deliver(uh, pbuf, 64), -FI_EINVAL);
	cr_assert_eq(search(0x3, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	expect_no_match();
}

Test(eng_search, claim_then_discard_rendezvous_completes_the_put)
{
	uint64_t uh;

	oflow_ml(P4E_ME_RDZV_HDR_ONLY);
	land_rdzv(0, 10000, 0x8, 1);
	uh = claim(0x8);
	cr_assert_eq(p4e_uh_discard(e.ni[1], uh), 0);
	eng_progress(&e);
	ini_done(P4E_NI_OK, 0);
	eng_no_event(&e, 0);
	eng_no_event(&e, 1);
	cr_expect_eq(pbuf[0], 0);
}

Test(eng_search, stale_uh_handles_refused)
{
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, 0, 0, 0);
	uint64_t uh;

	cr_expect_eq(p4e_uh_deliver(e.ni[1], 0, &d, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4e_uh_discard(e.ni[1], 0), -FI_EINVAL);
	cr_expect_eq(p4e_uh_discard(e.ni[1], 0xdeadbeef00000001ULL),
		     -FI_EINVAL);
	oflow_ml(0);
	land(0, 8, 0x1, 1);
	uh = claim(0x1);
	cr_expect_eq(p4e_uh_deliver(e.ni[1], uh, NULL, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4e_uh_discard(e.ni[0], uh), -FI_EINVAL,
		     "another NI's handle");
	cr_assert_eq(p4e_uh_discard(e.ni[1], uh), 0);
	/* the slot is reused by the next header: the old handle stays dead */
	land(1, 8, 0x1, 2);
	cr_expect_eq(p4e_uh_discard(e.ni[1], uh), -FI_EINVAL);
	cr_expect_eq(p4e_uh_deliver(e.ni[1], uh, &d, NULL, 0), -FI_EINVAL);
	/* and a header that was never claimed is no handle to use */
	cr_assert_eq(search(0x1, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	cr_expect_eq(ev_is(1, P4E_EVENT_SEARCH).hdr_data, 2);
	eng_no_event(&e, 1);
}

