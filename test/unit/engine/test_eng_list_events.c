/*
 * test_eng_list_events.c - what list entries report, through two NIs on
 * the loop transport: the EVENT_*_DISABLE options, the EVENT_CT_* options
 * (counting events and bytes), and unlink (plain, in use, cancel, stale
 * handles). Same suite (eng_list) and fixture as test_eng_list.c.
 */
#include "p4e_list_test.h"
#include "p4e_priv.h"

TestSuite(eng_list, .init = list_setup, .fini = list_teardown, .timeout = 30);

/* ---- event options -------------------------------------------------------- */

Test(eng_list, event_link_and_unlink_disable)
{
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE |
	       P4E_ME_EVENT_LINK_DISABLE | P4E_ME_EVENT_UNLINK_DISABLE, 0x1,
	       PRI);
	eng_no_event(&e, 1);
	put(0, 8, 0x1, 0);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	eng_no_event(&e, 1);
	/* it was consumed all the same */
	put(1, 8, 0x1, 0);
	eng_progress(&e);
	ini_done(P4E_NI_OK, 8);
	ini_done(P4E_NI_DROPPED, 0);
}

Test(eng_list, unlink_disable_covers_auto_free)
{
	append(P4E_OVERFLOW_LIST, obuf, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE |
	       P4E_ME_EVENT_UNLINK_DISABLE, 0x8, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x8, 1);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	eng_no_event(&e, 1);
	append(P4E_PRIORITY_LIST, NULL, 0, P4E_ME_USE_ONCE |
	       P4E_ME_EVENT_UNLINK_DISABLE, 0x8, PRI);
	ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	eng_no_event(&e, 1);
}

Test(eng_list, event_comm_disable_still_counts)
{
	uint64_t ct = ct_alloc();
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT |
					   P4E_ME_EVENT_COMM_DISABLE |
					   P4E_ME_EVENT_CT_COMM, 0x1, 0);

	d.ct = ct;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x1, 0);
	put(1, 8, 0x1, 0);
	eng_progress(&e);
	eng_no_event(&e, 1);
	cr_expect_eq(ct_val(ct).success, 2);
	cr_expect_eq(ct_val(ct).failure, 0);
	cr_expect_eq(memcmp(pbuf, src[1], 8), 0, "the data still landed");
}

/* LINK is not a success event: SUCCESS_DISABLE keeps it. */
static void skip_link(void)
{
	struct p4e_event ev;

	cr_assert_eq(p4e_eq_ring_get(e.eq[1], &ev), 0,
		     "no LINK event with SUCCESS_DISABLE");
	cr_assert_eq(ev.type, P4E_EVENT_LINK);
}

Test(eng_list, event_success_disable)
{
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT |
	       P4E_ME_EVENT_SUCCESS_DISABLE, 0x1, PRI);
	skip_link();
	put(0, 8, 0x1, 0);
	eng_progress(&e);
	ini_done(P4E_NI_OK, 8);
	eng_no_event(&e, 1);
	cr_expect_eq(memcmp(pbuf, src[0], 8), 0);
}

Test(eng_list, event_success_disable_reports_failures)
{
	uint64_t ct = ct_alloc();
	struct p4e_me_desc d = eng_me_desc(pbuf, sizeof(pbuf), P4E_ME_OP_PUT |
					   P4E_ME_EVENT_SUCCESS_DISABLE |
					   P4E_ME_EVENT_CT_COMM, 0x1, 0);
	char addr[64];
	size_t len = sizeof(addr);
	struct p4e_event ev;

	eng_need_loop("its steps assume the loop's delivery order");
	d.ct = ct;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	skip_link();
	put(0, 10000, 0x1, 0);
	/* the header arrives and the pull is posted, not run */
	cr_assert_eq(p4e_ni_progress(e.ni[1], 1), 1);
	cr_assert_eq(p4e_ni_getname(e.ni[0], addr, &len), 0);
	cr_assert_eq(p4t_loop_fail_link(e.ni[1]->xp[P4E_XP_NET].iface, addr, len,
					-FI_ECONNRESET), 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_UNDELIVERABLE);
	cr_expect_eq(ev.mlength, 0);
	eng_no_event(&e, 1);
	cr_expect_eq(ct_val(ct).success, 0);
	cr_expect_eq(ct_val(ct).failure, 1);
	ev = ev_is(0, P4E_EVENT_SEND);
	cr_expect_neq(ev.ni_fail_type, P4E_NI_OK);
}

Test(eng_list, event_over_disable_still_counts)
{
	uint64_t ct = ct_alloc();
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_USE_ONCE |
					   P4E_ME_EVENT_OVER_DISABLE |
					   P4E_ME_EVENT_CT_OVERFLOW, 0x1, 0);

	oflow(0, 64, 0x1);
	land(0, 8, 0x1, 0);
	d.ct = ct;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
	cr_expect_eq(ct_val(ct).success, 1);
}

/* ---- counting events -------------------------------------------------------- */

Test(eng_list, ct_comm_counts_events_and_bytes)
{
	uint64_t ct1 = ct_alloc(), ct2 = ct_alloc();
	struct p4e_me_desc d1 = eng_me_desc(pbuf, 10, P4E_ME_OP_PUT |
					    P4E_ME_EVENT_CT_COMM, 0x1, 0);
	struct p4e_me_desc d2 = eng_me_desc(obuf, 10, P4E_ME_OP_PUT |
					    P4E_ME_EVENT_CT_COMM |
					    P4E_ME_EVENT_CT_BYTES, 0x2, 0);

	d1.ct = ct1;
	d2.ct = ct2;
	eng_append(&e, 1, &d1, P4E_PRIORITY_LIST, PRI);
	eng_append(&e, 1, &d2, P4E_PRIORITY_LIST, PRI2);
	put(0, 4, 0x1, 0);
	put(0, 16, 0x1, 0);		/* truncated: still one event */
	put(1, 4, 0x2, 0);
	put(1, 16, 0x2, 0);		/* truncated: 10 bytes, not 16 */
	eng_progress(&e);
	cr_expect_eq(ct_val(ct1).success, 2);
	cr_expect_eq(ct_val(ct2).success, 14);
	cr_expect_eq(ct_val(ct1).failure, 0);
	cr_expect_eq(ct_val(ct2).failure, 0);
}

Test(eng_list, ct_overflow_counts_only_overflow_events)
{
	uint64_t ct_o = ct_alloc(), ct_p = ct_alloc(), ct_c = ct_alloc();
	struct p4e_me_desc od = eng_me_desc(obuf, 256, P4E_ME_OP_PUT |
					    P4E_ME_EVENT_CT_COMM, 0, UINT64_MAX);
	struct p4e_me_desc pd = eng_me_desc(pbuf, 256, P4E_ME_OP_PUT |
					    P4E_ME_EVENT_CT_OVERFLOW |
					    P4E_ME_EVENT_CT_BYTES, 0x1, 0);
	struct p4e_me_desc cd = eng_me_desc(pbuf, 256, P4E_ME_OP_PUT |
					    P4E_ME_EVENT_CT_COMM, 0x2, 0);

	od.ct = ct_o;
	eng_append(&e, 1, &od, P4E_OVERFLOW_LIST, OFL);
	ev_is(1, P4E_EVENT_LINK);
	land(0, 8, 0x1, 0);
	land(1, 24, 0x1, 0);
	land(2, 8, 0x2, 0);
	cr_expect_eq(ct_val(ct_o).success, 3, "the overflow entry's puts");

	pd.ct = ct_p;
	eng_append(&e, 1, &pd, P4E_PRIORITY_LIST, PRI);
	cr_expect_eq(ct_val(ct_p).success, 32, "bytes of both headers");
	/* a direct put is a comm event: not counted here */
	put(0, 8, 0x1, 0);
	eng_progress(&e);
	cr_expect_eq(ct_val(ct_p).success, 32);

	/* CT_COMM alone does not count overflow events */
	cd.ct = ct_c;
	eng_append(&e, 1, &cd, P4E_PRIORITY_LIST, PRI2);
	cr_expect_eq(ct_val(ct_c).success, 0);
	put(0, 8, 0x2, 0);
	eng_progress(&e);
	cr_expect_eq(ct_val(ct_c).success, 1);
	cr_expect_eq(ct_val(ct_o).success, 3);
}

/* ---- unlink ------------------------------------------------------------------ */

Test(eng_list, unlink_makes_no_event)
{
	uint64_t p, o;

	p = append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT, 0x1, PRI);
	o = append(P4E_OVERFLOW_LIST, obuf, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE,
		   0x1, OFL);
	ev_is(1, P4E_EVENT_LINK);
	ev_is(1, P4E_EVENT_LINK);
	cr_assert_eq(p4e_me_unlink(e.ni[1], p, 0), 0);
	cr_assert_eq(p4e_me_unlink(e.ni[1], o, 0), 0);
	eng_no_event(&e, 1);		/* neither AUTO_UNLINK nor AUTO_FREE */
	cr_expect_eq(p4e_me_unlink(e.ni[1], p, 0), -FI_EINVAL);
	cr_expect_eq(p4e_me_unlink(e.ni[1], o, 0), -FI_EINVAL);
	put(0, 8, 0x1, 0);
	eng_progress(&e);
	ini_done(P4E_NI_DROPPED, 0);
	eng_no_event(&e, 1);
}

Test(eng_list, unlink_overflow_entry_keeps_its_headers)
{
	struct p4e_event ev;
	uint64_t o;

	o = oflow(0, 64, 0x1);
	land(0, 16, 0x1, 9);
	cr_assert_eq(p4e_me_unlink(e.ni[1], o, 0), 0);
	eng_no_event(&e, 1);
	cr_expect_eq(p4e_me_unlink(e.ni[1], o, 0), -FI_EINVAL,
		     "unlinked once is unlinked");
	/* the header and its data outlive the entry's link */
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_USE_ONCE | P4E_ME_UH_COPY,
	       0x1, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 9);
	cr_expect_eq(memcmp(pbuf, src[0], 16), 0);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);		/* an explicit unlink has no AUTO_FREE */
	/* and nothing takes new puts */
	put(1, 8, 0x1, 0);
	eng_progress(&e);
	ini_done(P4E_NI_DROPPED, 0);
}

Test(eng_list, unlink_busy_while_a_pull_uses_the_entry)
{
	struct p4e_event ev;
	uint64_t me;

	eng_need_loop("its steps assume the loop's delivery order");
	me = append(P4E_PRIORITY_LIST, pbuf, sizeof(pbuf), P4E_ME_OP_PUT, 0x1,
		    PRI);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 10000, 0x1, 0);
	/* one unit of progress: the target takes the header and posts its
	 * pull, which the loop transport runs in the target's next progress
	 * (a hold would not help: held NIs still run their pulls) */
	cr_assert_eq(p4e_ni_progress(e.ni[1], 1), 1);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), -FI_EBUSY);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, P4E_UNLINK_CANCEL), -FI_EBUSY);
	eng_no_event(&e, 1);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, 10000);
	cr_expect_eq(memcmp(pbuf, src[0], 10000), 0);
	ini_done(P4E_NI_OK, 10000);
	/* refused means still linked: now it goes */
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
	eng_no_event(&e, 1);
}

Test(eng_list, unlink_busy_while_pulling_an_unexpected_rdzv)
{
	struct p4e_event ev;
	uint64_t me;

	oflow(P4E_ME_RDZV_HDR_ONLY, 64, 0x1);
	put(0, 10000, 0x1, 0);
	eng_progress(&e);
	/* a persistent entry starts the pull when appended */
	me = append(P4E_PRIORITY_LIST, pbuf, sizeof(pbuf), P4E_ME_OP_PUT, 0x1,
		    PRI);
	ev_is(1, P4E_EVENT_LINK);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), -FI_EBUSY);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf);
	cr_expect_eq(memcmp(pbuf, src[0], 10000), 0);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
	ini_done(P4E_NI_OK, 10000);
}

/* A NO_TRUNCATE overflow entry keeps only a rendezvous header, so a
 * message larger than the whole entry still lands there (it was refused
 * as "does not fit" once, which held unexpected large sends forever). */
Test(eng_list, rdzv_larger_than_a_no_truncate_overflow_entry)
{
	struct p4e_event ev;

	oflow(P4E_ME_RDZV_HDR_ONLY | P4E_ME_NO_TRUNCATE | P4E_ME_MANAGE_LOCAL,
	      64, 0x1);
	put(0, 10000, 0x1, 0);
	eng_progress(&e);
	append(P4E_PRIORITY_LIST, pbuf, sizeof(pbuf), P4E_ME_OP_PUT, 0x1, PRI);
	ev_is(1, P4E_EVENT_LINK);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf);
	cr_expect_eq(ev.mlength, 10000);
	cr_expect_eq(memcmp(pbuf, src[0], 10000), 0);
	ini_done(P4E_NI_OK, 10000);
}

Test(eng_list, unlink_cancel_makes_one_event)
{
	struct p4e_event ev;
	uint64_t me;

	me = append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT |
		    P4E_ME_USE_ONCE | P4E_ME_EVENT_UNLINK_DISABLE, 0x1, PRI);
	ev_is(1, P4E_EVENT_LINK);
	cr_assert_eq(p4e_me_unlink(e.ni[1], me, P4E_UNLINK_CANCEL), 0);
	ev = ev_is(1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_CANCELED);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(ev.list, P4E_PRIORITY_LIST);
	eng_no_event(&e, 1);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, P4E_UNLINK_CANCEL), -FI_EINVAL);
	eng_no_event(&e, 1);
	put(0, 8, 0x1, 0);
	eng_progress(&e);
	ini_done(P4E_NI_DROPPED, 0);
}

Test(eng_list, cancel_by_user_ptr_takes_the_oldest)
{
	struct p4e_event ev;

	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT, 0x1, PRI);
	append(P4E_PRIORITY_LIST, pbuf + 64, 64, P4E_ME_OP_PUT, 0x1, PRI2);
	append(P4E_PRIORITY_LIST, pbuf + 128, 64, P4E_ME_OP_PUT, 0x1, PRI);
	eng_drain(&e, 1);
	cr_assert_eq(p4e_me_cancel(e.ni[1], e.pt[1], PRI), 0);
	ev = ev_is(1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_CANCELED);
	cr_expect_eq(ev.start, pbuf, "the oldest one");
	eng_no_event(&e, 1);
	put(0, 8, 0x1, 0);
	eng_progress(&e);
	cr_expect_eq(ev_is(1, P4E_EVENT_PUT).user_ptr, PRI2);
	cr_assert_eq(p4e_me_cancel(e.ni[1], e.pt[1], PRI), 0);
	cr_expect_eq(ev_is(1, P4E_EVENT_AUTO_UNLINK).start, pbuf + 128);
	cr_expect_eq(p4e_me_cancel(e.ni[1], e.pt[1], PRI), -FI_ENOENT);
	cr_expect_eq(p4e_me_cancel(e.ni[1], e.pt[1] + 1, PRI2), -FI_EINVAL);
	/* in use: refused, still linked */
	put(1, 10000, 0x1, 0);
	cr_assert_eq(p4e_ni_progress(e.ni[1], 1), 1);
	cr_expect_eq(p4e_me_cancel(e.ni[1], e.pt[1], PRI2), -FI_EBUSY);
	eng_progress(&e);
	cr_expect_eq(ev_is(1, P4E_EVENT_PUT).user_ptr, PRI2);
	cr_expect_eq(p4e_me_cancel(e.ni[1], e.pt[1], PRI2), 0);
}

Test(eng_list, stale_handles_refused)
{
	struct p4e_event ev;
	uint64_t a, b;

	cr_expect_eq(p4e_me_unlink(e.ni[1], P4E_HANDLE_NONE, 0), -FI_EINVAL);
	cr_expect_eq(p4e_me_unlink(e.ni[1], 0x123456789ULL, 0), -FI_EINVAL);
	a = append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT, 0x1, PRI);
	cr_expect_eq(p4e_me_unlink(e.ni[1], a, 0x80), -FI_EINVAL, "bad flags");
	cr_assert_eq(p4e_me_unlink(e.ni[1], a, 0), 0);
	/* rule 11: the slot is reused, the old handle must not reach it */
	b = append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT, 0x1, PRI2);
	cr_expect_neq(a, b);
	cr_expect_eq(p4e_me_unlink(e.ni[1], a, 0), -FI_EINVAL);
	cr_expect_eq(p4e_me_unlink(e.ni[1], a, P4E_UNLINK_CANCEL), -FI_EINVAL);
	cr_expect_eq(p4e_me_unlink(e.ni[0], b, 0), -FI_EINVAL,
		     "another NI's handle");
	ev_is(1, P4E_EVENT_LINK);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x1, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_ptr, PRI2, "b is still linked");
}
