/*
 * test_native_fidelity.c - libportals against the comments of the
 * reference header (Portals 4.3, Sandia's portals4.h), the behaviours of
 * issue 22: PtlEQFree while a PT or MD still reports to the EQ,
 * PtlMDRelease once an operation's last event is visible, one event per
 * matching message for searches with a persistent entry, and every
 * ptl_ni_limits_t limit that constrains a call, at and over the limit.
 * One process on the loop transport.
 */
#include <stddef.h>
#include <unistd.h>

#include "ptl_test.h"

T_PT_SUITE(native_fidelity);

/* ---- PtlEQFree with users left -------------------------------------------- */

/*
 * "It is up to the user to ensure that no memory descriptors or match
 * list entries are associated with the event queue once it is freed": the
 * free succeeds; what would have gone to it is dropped, and a new EQ that
 * reuses its slot sees none of it.
 */
Test(native_fidelity, eq_free_while_pt_and_md_use_it)
{
	static char src[16], dst[16];
	ptl_handle_eq_t old, fresh;
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	ptl_handle_ct_t ct;
	ptl_pt_index_t opt;
	ptl_ct_event_t cev;
	ptl_event_t ev;
	int i;

	cr_assert_eq(PtlEQAlloc(ni, 8, &old), PTL_OK);
	cr_assert_eq(PtlPTAlloc(ni, 0, old, PTL_PT_ANY, &opt), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &ct), PTL_OK);
	md = t_md(ni, src, sizeof(src), old, ct, PTL_MD_EVENT_CT_ACK);
	me = t_me(ni, opt, dst, sizeof(dst), PTL_ME_OP_PUT |
		  PTL_ME_EVENT_CT_COMM, 1, PTL_PRIORITY_LIST, ct);
	cr_assert_eq(PtlEQFree(old), PTL_OK);
	cr_assert_eq(PtlEQGet(old, &ev), PTL_ARG_INVALID);
	cr_assert_eq(PtlEQAlloc(ni, 8, &fresh), PTL_OK);
	for (i = 0; i < 3; i++) {
		memset(src, 'a' + i, sizeof(src));
		cr_assert_eq(PtlPut(md, 0, sizeof(src), PTL_ACK_REQ, self, opt,
				    1, 0, NULL, 0), PTL_OK);
		/* the target's count and the ack's count: both done */
		cr_assert_eq(PtlCTWait(ct, 2 * (i + 1), &cev), PTL_OK);
		cr_assert_eq(cev.failure, 0);
		cr_assert_eq(dst[0], 'a' + i);
	}
	t_no_event(fresh);
	t_no_event(eq);
	/* the unlink and the release report to nobody; the last user of
	 * the freed EQ lets it go */
	cr_assert_eq(PtlMEUnlink(me), PTL_OK);
	cr_assert_eq(PtlPTFree(ni, opt), PTL_OK);
	cr_assert_eq(PtlMDRelease(md), PTL_OK);
	t_no_event(fresh);
}

/* ---- PtlMDRelease once the last event is visible ------------------------ */

/* Puts without ack, small (copied) and large (held): SEND is the last. */
Test(native_fidelity, md_release_after_send_of_unacked_put)
{
	static char src[65536], dst[65536];
	static const ptl_size_t sizes[] = { 1, 8, 256, 4096, 65536 };
	ptl_handle_md_t md;
	ptl_event_t ev;
	unsigned i, k;

	t_me(ni, pt, dst, sizeof(dst), PTL_ME_OP_PUT |
	     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE, 3,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	for (k = 0; k < 10; k++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			md = t_md(ni, src, sizes[i], eq, PTL_CT_NONE, 0);
			cr_assert_eq(PtlPut(md, 0, sizes[i], PTL_NO_ACK_REQ,
					    self, pt, 3, 0, NULL, 0), PTL_OK);
			ev = t_event(eq);
			cr_assert_eq(ev.type, PTL_EVENT_SEND);
			cr_assert_eq(PtlMDRelease(md), PTL_OK,
				     "size %lu round %u",
				     (unsigned long)sizes[i], k);
		}
	}
}

/* A triggered put whose ack is only counted: the count is the last. */
Test(native_fidelity, md_release_after_counted_ack_of_triggered_put)
{
	static char src[64], dst[64];
	ptl_handle_ct_t trig, acks;
	ptl_handle_md_t md;
	ptl_ct_event_t cev, one = { 1, 0 };
	int k;

	cr_assert_eq(PtlCTAlloc(ni, &trig), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &acks), PTL_OK);
	t_me(ni, pt, dst, sizeof(dst), PTL_ME_OP_PUT |
	     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE, 4,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	for (k = 0; k < 20; k++) {
		md = t_md(ni, src, sizeof(src), PTL_EQ_NONE, acks,
			  PTL_MD_EVENT_CT_ACK);
		cr_assert_eq(PtlTriggeredPut(md, 0, sizeof(src),
					     PTL_CT_ACK_REQ, self, pt, 4, 0,
					     NULL, 0, trig, k + 1), PTL_OK);
		cr_assert_eq(PtlCTInc(trig, one), PTL_OK);
		cr_assert_eq(PtlCTWait(acks, k + 1, &cev), PTL_OK);
		cr_assert_eq(cev.success, k + 1);
		cr_assert_eq(PtlMDRelease(md), PTL_OK, "round %d", k);
	}
}

/* An atomic's ACK, a fetching atomic's REPLY: many rounds (it raced). */
Test(native_fidelity, md_release_after_final_event_of_atomic)
{
	static uint64_t src[4], old[4], dst[4];
	ptl_handle_md_t md, gmd;
	ptl_event_t ev;
	int k;

	t_me(ni, pt, dst, sizeof(dst), PTL_ME_OP_PUT | PTL_ME_OP_GET |
	     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE, 5,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	for (k = 0; k < 200; k++) {
		md = t_md(ni, src, sizeof(src), eq, PTL_CT_NONE,
			  PTL_MD_EVENT_SEND_DISABLE);
		cr_assert_eq(PtlAtomic(md, 0, sizeof(src), PTL_ACK_REQ, self,
				       pt, 5, 0, NULL, 0, PTL_SUM, PTL_UINT64_T),
			     PTL_OK);
		ev = t_event(eq);
		cr_assert_eq(ev.type, PTL_EVENT_ACK);
		cr_assert_eq(PtlMDRelease(md), PTL_OK, "atomic round %d", k);
		md = t_md(ni, src, sizeof(src), eq, PTL_CT_NONE,
			  PTL_MD_EVENT_SEND_DISABLE);
		gmd = t_md(ni, old, sizeof(old), eq, PTL_CT_NONE,
			   PTL_MD_EVENT_SEND_DISABLE);
		cr_assert_eq(PtlFetchAtomic(gmd, 0, md, 0, sizeof(src), self,
					    pt, 5, 0, NULL, 0, PTL_SUM,
					    PTL_UINT64_T), PTL_OK);
		ev = t_event(eq);
		cr_assert_eq(ev.type, PTL_EVENT_REPLY);
		cr_assert_eq(PtlMDRelease(md), PTL_OK, "fetch round %d", k);
		cr_assert_eq(PtlMDRelease(gmd), PTL_OK, "fetch round %d", k);
	}
}

/* ---- searches with a persistent entry ------------------------------------ */

/* Five unexpected messages with bits 9 and one (the fourth) with bits 10. */
static void six_unexpected(ptl_handle_ni_t n, ptl_handle_eq_t q,
			   ptl_pt_index_t p, ptl_process_t to, bool le)
{
	static char src[8], ovf[4096];
	ptl_handle_md_t md;
	ptl_handle_me_t h;
	ptl_me_t me;
	ptl_le_t l;
	int i;

	me = t_me_desc(ovf, sizeof(ovf), PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
		       PTL_ME_EVENT_LINK_DISABLE, 0, PTL_CT_NONE);
	me.ignore_bits = ~(ptl_match_bits_t)0;
	if (le) {
		/* no MANAGE_LOCAL on an LE: room for all six */
		memset(&l, 0, sizeof(l));
		l.start = ovf;
		l.length = sizeof(ovf);
		l.ct_handle = PTL_CT_NONE;
		l.uid = PTL_UID_ANY;
		l.options = PTL_LE_OP_PUT | PTL_LE_EVENT_LINK_DISABLE;
		cr_assert_eq(PtlLEAppend(n, p, &l, PTL_OVERFLOW_LIST, NULL, &h),
			     PTL_OK);
	} else {
		cr_assert_eq(PtlMEAppend(n, p, &me, PTL_OVERFLOW_LIST, NULL,
					 &h), PTL_OK);
	}
	md = t_md(n, src, sizeof(src), PTL_EQ_NONE, PTL_CT_NONE, 0);
	for (i = 0; i < 6; i++)
		cr_assert_eq(PtlPut(md, 0, sizeof(src), PTL_NO_ACK_REQ, to, p,
				    i == 3 ? 10 : 9, 0, NULL, i), PTL_OK);
	for (i = 0; i < 6; i++)
		cr_assert_eq(t_event_type(q, PTL_EVENT_PUT).ptl_list,
			     PTL_OVERFLOW_LIST);
}

/* The events of a search over the headers whose hdr_data are want[]. */
static void expect_each(ptl_handle_eq_t q, ptl_event_kind_t type,
			const int *want, int k, void *user_ptr)
{
	ptl_event_t ev;
	int i;

	for (i = 0; i < k; i++) {
		ev = t_event(q);
		cr_assert_eq(ev.type, type, "event %d: type %d", i, ev.type);
		cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
		cr_assert_eq(ev.user_ptr, user_ptr);
		/* in arrival order */
		cr_assert_eq(ev.hdr_data, (ptl_hdr_data_t)want[i],
			     "event %d: hdr_data %lu", i,
			     (unsigned long)ev.hdr_data);
	}
	t_no_event(q);
}

static void expect_no_match(ptl_handle_eq_t q)
{
	ptl_event_t ev = t_event(q);

	cr_assert_eq(ev.type, PTL_EVENT_SEARCH);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_NO_MATCH);
	t_no_event(q);
}

static const int nine[] = { 0, 1, 2, 4, 5 };
static const int all[] = { 0, 1, 2, 3, 4, 5 };

Test(native_fidelity, me_search_persistent_one_event_per_message)
{
	static char buf[8];
	ptl_me_t me;

	six_unexpected(ni, eq, pt, self, false);
	me = t_me_desc(buf, sizeof(buf), PTL_ME_OP_PUT, 9, PTL_CT_NONE);
	cr_assert_eq(PtlMESearch(ni, pt, &me, PTL_SEARCH_ONLY, (void *)1),
		     PTL_OK);
	expect_each(eq, PTL_EVENT_SEARCH, nine, 5, (void *)1);
	/* again: searching took nothing */
	cr_assert_eq(PtlMESearch(ni, pt, &me, PTL_SEARCH_ONLY, (void *)2),
		     PTL_OK);
	expect_each(eq, PTL_EVENT_SEARCH, nine, 5, (void *)2);
	/* a use-once entry stops at the first, as an append would */
	me.options |= PTL_ME_USE_ONCE;
	cr_assert_eq(PtlMESearch(ni, pt, &me, PTL_SEARCH_ONLY, (void *)3),
		     PTL_OK);
	expect_each(eq, PTL_EVENT_SEARCH, nine, 1, (void *)3);
	me.options &= ~PTL_ME_USE_ONCE;
	cr_assert_eq(PtlMESearch(ni, pt, &me, PTL_SEARCH_DELETE, (void *)4),
		     PTL_OK);
	expect_each(eq, PTL_EVENT_PUT_OVERFLOW, nine, 5, (void *)4);
	cr_assert_eq(PtlMESearch(ni, pt, &me, PTL_SEARCH_ONLY, NULL), PTL_OK);
	expect_no_match(eq);
	/* the odd one is still there */
	me.match_bits = 10;
	cr_assert_eq(PtlMESearch(ni, pt, &me, PTL_SEARCH_ONLY, (void *)5),
		     PTL_OK);
	expect_each(eq, PTL_EVENT_SEARCH, all + 3, 1, (void *)5);
}

Test(native_fidelity, le_search_persistent_one_event_per_message)
{
	ptl_handle_ni_t lni;
	ptl_handle_eq_t leq;
	ptl_pt_index_t lpt;
	ptl_process_t lself;
	ptl_le_t le;

	lni = t_ni(PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlEQAlloc(lni, 64, &leq), PTL_OK);
	cr_assert_eq(PtlPTAlloc(lni, 0, leq, PTL_PT_ANY, &lpt), PTL_OK);
	cr_assert_eq(PtlGetId(lni, &lself), PTL_OK);
	six_unexpected(lni, leq, lpt, lself, true);
	memset(&le, 0, sizeof(le));
	le.ct_handle = PTL_CT_NONE;
	le.uid = PTL_UID_ANY;
	le.options = PTL_LE_OP_PUT;
	/* no matching: every message is a match */
	cr_assert_eq(PtlLESearch(lni, lpt, &le, PTL_SEARCH_ONLY, (void *)1),
		     PTL_OK);
	expect_each(leq, PTL_EVENT_SEARCH, all, 6, (void *)1);
	cr_assert_eq(PtlLESearch(lni, lpt, &le, PTL_SEARCH_DELETE, (void *)2),
		     PTL_OK);
	expect_each(leq, PTL_EVENT_PUT_OVERFLOW, all, 6, (void *)2);
	cr_assert_eq(PtlLESearch(lni, lpt, &le, PTL_SEARCH_ONLY, NULL),
		     PTL_OK);
	expect_no_match(leq);
}

/*
 * Many acked puts and atomics in flight at once (over TCP, writes may
 * queue and their completions come after the ack): each MD is released
 * as soon as its operation's last event is seen. A regression guard: in
 * one process it passed before the fix too; the race it guards against
 * is pinned down in test_eng_states.c (response_before_send_done...).
 */
Test(native_fidelity, md_release_after_last_event_many_in_flight)
{
	enum { N = 48, LEN = 8192 };
	static char src[N][LEN], dst[N * LEN];
	ptl_handle_md_t md[N];
	ptl_event_t ev;
	int i, k, round;

	t_me(ni, pt, dst, sizeof(dst), PTL_ME_OP_PUT |
	     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE, 8,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	for (round = 0; round < 4; round++) {
		for (i = 0; i < N; i++) {
			md[i] = t_md(ni, src[i], LEN, eq, PTL_CT_NONE,
				     PTL_MD_EVENT_SEND_DISABLE);
			if (round & 1)
				cr_assert_eq(PtlAtomic(md[i], 0, 8,
						       PTL_ACK_REQ, self, pt,
						       8, i * LEN, (void *)
						       (intptr_t)i, 0, PTL_BOR,
						       PTL_UINT64_T), PTL_OK);
			else
				cr_assert_eq(PtlPut(md[i], 0, LEN,
						    PTL_ACK_REQ, self, pt, 8,
						    i * LEN, (void *)
						    (intptr_t)i, 0), PTL_OK);
		}
		for (k = 0; k < N; k++) {
			ev = t_event(eq);
			cr_assert_eq(ev.type, PTL_EVENT_ACK);
			i = (int)(intptr_t)ev.user_ptr;
			cr_assert_eq(PtlMDRelease(md[i]), PTL_OK,
				     "round %d op %d", round, i);
		}
	}
}
