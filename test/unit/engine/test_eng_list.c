/*
 * test_eng_list.c - priority and overflow lists through two NIs on the
 * loop transport: what a put that matches only an overflow entry leaves
 * (an unexpected header) and what a later priority append makes of it
 * (overflow events, USE_ONCE entries never linked, one event per header
 * for persistent ones, no permission check, no search on overflow
 * appends), and the entry life cycle (LINK, AUTO_UNLINK, AUTO_FREE,
 * locally managed offsets and LOCAL_INC_UH_RLENGTH). Event options,
 * counting events and unlink are in test_eng_list_events.c; searches,
 * moving unexpected data and matching order in test_eng_search.c and
 * test_eng_unexp.c; PT and NI rules in test_eng_ni.c.
 */
#include "p4e_list_test.h"
#include "p4e_priv.h"

TestSuite(eng_list, .init = list_setup, .fini = list_teardown, .timeout = 30);

/* ---- overflow list and unexpected headers ------------------------------- */

Test(eng_list, overflow_put_then_use_once_append)
{
	struct p4e_event ev;
	uint64_t me;
	size_t i;

	oflow(0, 256, 0x55);
	put(0, 40, 0x55, 0xabc);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	cr_expect_eq(ev.start, obuf);
	cr_expect_eq(ev.mlength, 40);
	cr_expect_eq(ev.user_ptr, OFL);
	eng_no_event(&e, 1);
	cr_expect_eq(memcmp(obuf, src[0], 40), 0);
	ini_done(P4E_NI_OK, 40);

	/* the header waits for a priority entry */
	me = append(P4E_PRIORITY_LIST, pbuf, 256,
		    P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0x55, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.start, obuf, "start is where the data sits");
	cr_expect_eq(ev.mlength, 40);
	cr_expect_eq(ev.rlength, 40);
	cr_expect_eq(ev.match_bits, 0x55);
	cr_expect_eq(ev.hdr_data, 0xabc);
	cr_expect_eq(ev.initiator, e.id[0]);
	cr_expect_eq(ev.uid, 1000);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(ev.pt_index, e.pt[1]);
	/* not linked, but unlinked all the same */
	ev = ev_is(1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(ev.user_ptr, PRI);
	eng_no_event(&e, 1);
	for (i = 0; i < 256; i++)
		cr_assert_eq(pbuf[i], 0, "no UH_COPY: the entry is untouched");
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), -FI_EINVAL,
		     "the entry is gone: its handle is stale");

	/* the header was consumed; the entry never took the next put */
	put(1, 8, 0x55, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	cr_expect_eq(ev.start, obuf);
	eng_no_event(&e, 1);
}

Test(eng_list, persistent_entry_one_event_per_header_in_order)
{
	static const uint64_t order[] = { 1, 3, 4 };
	struct p4e_event ev;
	int i;

	oflow_all(4096);
	land(0, 8, 0x7, 1);
	land(1, 8, 0x8, 2);		/* matches nothing below */
	land(2, 8, 0x7, 3);
	land(0, 8, 0x7, 4);

	append(P4E_PRIORITY_LIST, pbuf, 256, P4E_ME_OP_PUT, 0x7, PRI);
	for (i = 0; i < 3; i++) {
		ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
		cr_expect_eq(ev.hdr_data, order[i], "arrival order (%d)", i);
		cr_expect_eq(ev.match_bits, 0x7);
	}
	ev = ev_is(1, P4E_EVENT_LINK);
	cr_expect_eq(ev.user_ptr, PRI);
	eng_no_event(&e, 1);

	/* the 0x8 header is still there, and only it */
	append(P4E_PRIORITY_LIST, pbuf, 256, P4E_ME_OP_PUT, 0x8, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 2);
	ev_is(1, P4E_EVENT_LINK);
	eng_no_event(&e, 1);
}

Test(eng_list, overflow_append_does_no_search)
{
	struct p4e_event ev;

	oflow(0, 256, 0x3);
	land(0, 16, 0x3, 5);
	/* another overflow entry that would match the header */
	append(P4E_OVERFLOW_LIST, pbuf, 256, P4E_ME_OP_PUT, 0x3, OFL);
	ev_is(1, P4E_EVENT_LINK);
	eng_no_event(&e, 1);
	/* the header is still unexpected and points at the first entry */
	append(P4E_PRIORITY_LIST, NULL, 0, P4E_ME_USE_ONCE, 0x3, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 5);
	cr_expect_eq(ev.start, obuf);
}

Test(eng_list, no_permission_check_on_unexpected_match)
{
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, 0, 0x21, 0);
	struct p4e_event ev;

	oflow(0, 256, 0x21);
	land(0, 8, 0x21, 1);
	/* neither OP_PUT nor the initiator's uid: still matches the header */
	d.uid = 4242;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.hdr_data, 1);
	ev_is(1, P4E_EVENT_LINK);
	cr_expect_eq(sr(1, P4E_SR_PERMISSION_VIOLATIONS), 0);
	cr_expect_eq(sr(1, P4E_SR_OPERATION_VIOLATIONS), 0);

	/* a message that arrives now is checked: uid first */
	put(1, 8, 0x21, 2);
	eng_progress(&e);
	ini_done(P4E_NI_PERM_VIOLATION, 0);
	eng_no_event(&e, 1);
	cr_expect_eq(sr(1, P4E_SR_PERMISSION_VIOLATIONS), 1);
}

Test(eng_list, unexpected_hdr_disable_leaves_no_header)
{
	struct p4e_event ev;

	oflow(P4E_ME_UNEXPECTED_HDR_DISABLE, 256, 0x4);
	put(0, 8, 0x4, 1);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	cr_expect_eq(memcmp(obuf, src[0], 8), 0);
	ini_done(P4E_NI_OK, 8);
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE,
	       0x4, PRI);
	ev_is(1, P4E_EVENT_LINK);
	eng_no_event(&e, 1);
	/* the entry is linked and takes the next put */
	put(1, 8, 0x4, 2);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_PRIORITY_LIST);
	cr_expect_eq(ev.start, pbuf);
}

Test(eng_list, user_ptr_and_flags_reach_every_event)
{
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT |
					   P4E_ME_USE_ONCE, 0x1, 0);
	struct p4e_event ev;
	uint64_t me;

	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   PRI, 0xf1a9, &me), 0);
	ev = ev_is(1, P4E_EVENT_LINK);
	cr_expect_eq(ev.user_flags, 0xf1a9);
	cr_expect_eq(ev.start, pbuf);
	cr_expect_eq(ev.pt_index, e.pt[1]);
	put(0, 8, 0x1, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_flags, 0xf1a9);
	ev = ev_is(1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(ev.user_flags, 0xf1a9);
	cr_expect_eq(ev.user_ptr, PRI);
}

Test(eng_list, append_arguments_checked)
{
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT, 0, 0);
	struct iovec iov[2] = { { pbuf, 8 }, { pbuf + 8, 8 } };
	uint64_t me = 0x77, ct;

	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1], NULL, P4E_PRIORITY_LIST,
				   NULL, 0, &me), -FI_EINVAL);
	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1], &d, (enum p4e_list)2,
				   NULL, 0, &me), -FI_EINVAL);
	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1] + 1, &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), -FI_EINVAL, "unallocated PT");
	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, NULL), -FI_EINVAL);
	d.options = 0x40000000;
	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), -FI_EINVAL, "unknown option");
	d = eng_me_desc(iov, 65, P4E_ME_OP_PUT | P4E_ME_IOVEC, 0, 0);
	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), -FI_EINVAL, "too many iovecs");
	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	cr_assert_eq(p4e_ct_free(e.dom, ct), 0);
	d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT | P4E_ME_EVENT_CT_COMM, 0, 0);
	d.ct = ct;
	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), -FI_EINVAL, "stale CT");
	cr_expect_eq(me, 0x77, "no output on failure");
	eng_no_event(&e, 1);
	/* nothing half-made is left: a put finds no entry */
	put(0, 8, 0, 0);
	eng_progress(&e);
	ini_done(P4E_NI_DROPPED, 0);
}

/* ---- life cycle ---------------------------------------------------------- */

Test(eng_list, use_once_and_link_events)
{
	struct p4e_event ev;
	uint64_t me;

	me = append(P4E_PRIORITY_LIST, pbuf, 64,
		    P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0x1, PRI);
	ev = ev_is(1, P4E_EVENT_LINK);
	cr_expect_eq(ev.list, P4E_PRIORITY_LIST);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	put(0, 8, 0x1, 0);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev = ev_is(1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), -FI_EINVAL);
	/* the next put finds nothing */
	put(1, 8, 0x1, 0);
	eng_progress(&e);
	ini_done(P4E_NI_OK, 8);
	ini_done(P4E_NI_DROPPED, 0);
	eng_no_event(&e, 1);
}

static uint64_t append_ml(enum p4e_list list, void *buf, size_t len,
			  unsigned opt, uint64_t bits, uint64_t min_free,
			  void *user_ptr)
{
	struct p4e_me_desc d = eng_me_desc(buf, len, opt | P4E_ME_MANAGE_LOCAL,
					   bits, 0);

	d.min_free = min_free;
	return eng_append(&e, 1, &d, list, user_ptr);
}

Test(eng_list, created_empty_is_not_unlinked)
{
	struct p4e_event ev;

	/* rule 3: free space 0 < min_free at creation is no use */
	append_ml(P4E_PRIORITY_LIST, pbuf, 0, P4E_ME_OP_PUT, 0x2, 1, PRI);
	ev_is(1, P4E_EVENT_LINK);
	eng_no_event(&e, 1);
	/* a use is: a zero-byte put leaves it below min_free */
	put(0, 0, 0x2, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, 0);
	ev = ev_is(1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(ev.user_ptr, PRI);
	eng_no_event(&e, 1);
}

Test(eng_list, manage_local_advances_by_mlength)
{
	static const uint64_t start[] = { 0, 8, 10, 10 };
	static const uint64_t mlen[] = { 8, 2, 0, 0 };
	struct p4e_event ev;
	int i;

	append_ml(P4E_PRIORITY_LIST, pbuf, 10, P4E_ME_OP_PUT, 0x3, 0, PRI);
	ev_is(1, P4E_EVENT_LINK);
	for (i = 0; i < 4; i++) {
		/* the remote offset is ignored on a locally managed entry */
		put_x(i % 3, 8, 0x3, 0, 1000);
		eng_progress(&e);
		ev = ev_is(1, P4E_EVENT_PUT);
		cr_expect_eq(ev.start, pbuf + start[i], "put %d", i);
		cr_expect_eq(ev.mlength, mlen[i], "put %d", i);
		cr_expect_eq(ev.rlength, 8);
		ev = ini_done(P4E_NI_OK, mlen[i]);
		cr_expect_eq(ev.remote_offset, start[i], "offset used, put %d",
			     i);
	}
	eng_no_event(&e, 1);	/* min_free 0: never unlinked */
	cr_expect_eq(memcmp(pbuf, src[0], 8), 0);
	cr_expect_eq(memcmp(pbuf + 8, src[1], 2), 0);
}

Test(eng_list, manage_local_min_free_unlinks_on_use)
{
	struct p4e_event ev;

	append_ml(P4E_PRIORITY_LIST, pbuf, 32, P4E_ME_OP_PUT, 0x3, 8, PRI);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 16, 0x3, 0);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	eng_no_event(&e, 1);		/* 16 free >= 8 */
	put(1, 10, 0x3, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.start, pbuf + 16);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);	/* 6 free < 8 */
	eng_no_event(&e, 1);
}

Test(eng_list, may_align_accepted)
{
	struct p4e_event ev;

	append_ml(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT | P4E_ME_MAY_ALIGN,
		  0x3, 0, PRI);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 5, 0x3, 0);
	put(1, 5, 0x3, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, 5);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, 5);
	/* placement is the engine's choice; no overlap is not */
	cr_expect_geq((uint8_t *)ev.start, pbuf + 5);
	cr_expect_eq(memcmp(ev.start, src[1], 5), 0);
	cr_expect_eq(memcmp(pbuf, src[0], 5), 0);
}

Test(eng_list, overflow_manage_local_packs_headers)
{
	struct p4e_event ev;

	append_ml(P4E_OVERFLOW_LIST, obuf, 1024, P4E_ME_OP_PUT, 0, 0, OFL);
	ev_is(1, P4E_EVENT_LINK);
	land(0, 24, 0, 1);
	land(1, 40, 0, 2);
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_USE_ONCE, 0, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, obuf);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_USE_ONCE, 0, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, obuf + 24);
	cr_expect_eq(memcmp(obuf + 24, src[1], 40), 0);
}

Test(eng_list, local_inc_uh_rlength_on_overflow_entry)
{
	struct p4e_event ev;

	/* 8 bytes of room: the first put is truncated to 8 of 12 */
	append_ml(P4E_OVERFLOW_LIST, obuf, 8,
		  P4E_ME_OP_PUT | P4E_ME_LOCAL_INC_UH_RLENGTH, 0, 0, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 12, 0, 1);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, 8);
	cr_expect_eq(ev.rlength, 12);
	ini_done(P4E_NI_OK, 8);
	/* the offset went past the end: nothing left, and no overrun */
	land_m(1, 4, 0, 2, 0);
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_USE_ONCE, 0, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 8);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_USE_ONCE, 0, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 2);
	cr_expect_eq(ev.mlength, 0);
	cr_expect_eq(memcmp(obuf, src[0], 8), 0);
}

Test(eng_list, local_inc_uh_rlength_on_priority_append)
{
	struct p4e_event ev;

	/* the overflow entry keeps 4 bytes of each 8-byte message */
	append(P4E_OVERFLOW_LIST, obuf, 4, P4E_ME_OP_PUT, 0x5, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x5, 1);
	put(1, 8, 0x5, 2);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_PUT);
	/* a persistent managed entry moves by rlength per header */
	append_ml(P4E_PRIORITY_LIST, pbuf, 64,
		  P4E_ME_OP_PUT | P4E_ME_UH_COPY | P4E_ME_LOCAL_INC_UH_RLENGTH,
		  0x5, 0, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf);
	cr_expect_eq(ev.mlength, 4);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf + 8, "offset advanced by rlength");
	ev_is(1, P4E_EVENT_LINK);
	put(2, 1, 0x5, 3);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.start, pbuf + 16);
}

Test(eng_list, local_inc_uh_rlength_min_free_per_header)
{
	struct p4e_event ev;

	append(P4E_OVERFLOW_LIST, obuf, 4, P4E_ME_OP_PUT, 0x5, OFL);
	ev_is(1, P4E_EVENT_LINK);
	land_m(0, 8, 0x5, 1, 4);
	land_m(1, 8, 0x5, 2, 4);
	land_m(2, 8, 0x5, 3, 4);
	/* 20 bytes, min_free 8: 12 free after one header, 4 after two */
	append_ml(P4E_PRIORITY_LIST, pbuf, 20,
		  P4E_ME_OP_PUT | P4E_ME_LOCAL_INC_UH_RLENGTH, 0x5, 8, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 1);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 2);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);	/* not linked */
	eng_no_event(&e, 1);
	/* the third header is still there */
	append(P4E_PRIORITY_LIST, NULL, 0, P4E_ME_USE_ONCE, 0x5, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 3);
}

Test(eng_list, auto_free_when_last_header_consumed)
{
	struct p4e_event ev;

	/* 16 bytes, min_free 8: unlinked by the second 8-byte put */
	append_ml(P4E_OVERFLOW_LIST, obuf, 16, P4E_ME_OP_PUT, 0x8, 8, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x8, 1);
	put(1, 8, 0x8, 2);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_PUT);
	ev = ev_is(1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(ev.user_ptr, OFL);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	eng_no_event(&e, 1);	/* headers still point into it */

	append(P4E_PRIORITY_LIST, NULL, 0, P4E_ME_USE_ONCE, 0x8, PRI);
	ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);	/* one header left */
	append(P4E_PRIORITY_LIST, NULL, 0, P4E_ME_USE_ONCE, 0x8, PRI2);
	ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	ev = ev_among(1, P4E_EVENT_AUTO_FREE, 2, EV_BIT(P4E_EVENT_AUTO_UNLINK));
	cr_expect_eq(ev.user_ptr, OFL);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	eng_no_event(&e, 1);
}

Test(eng_list, auto_free_at_once_without_headers)
{
	struct p4e_event ev;

	append(P4E_OVERFLOW_LIST, obuf, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE |
	       P4E_ME_UNEXPECTED_HDR_DISABLE, 0x8, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x8, 1);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	ev = ev_is(1, P4E_EVENT_AUTO_FREE);
	cr_expect_eq(ev.user_ptr, OFL);
	eng_no_event(&e, 1);
}

Test(eng_list, unlink_of_auto_unlinked_overflow_entry_refused)
{
	struct p4e_event ev;
	uint64_t me;

	me = oflow(P4E_ME_USE_ONCE, 64, 0x8);
	put(0, 8, 0x8, 1);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	/* it is unlinked already: the handle is no entry to unlink */
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), -FI_EINVAL);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, P4E_UNLINK_CANCEL),
		     -FI_EINVAL);
	eng_no_event(&e, 1);
	/* and its AUTO_FREE still comes */
	append(P4E_PRIORITY_LIST, NULL, 0, P4E_ME_USE_ONCE, 0x8, PRI);
	ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	ev = ev_among(1, P4E_EVENT_AUTO_FREE, 2, EV_BIT(P4E_EVENT_AUTO_UNLINK));
	cr_expect_eq(ev.user_ptr, OFL);
}

