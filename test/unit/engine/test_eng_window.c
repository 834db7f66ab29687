/*
 * test_eng_window.c - the engine extensions that make persistent entries
 * behave as libfabric RMA windows: P4E_ME_BOUNDS_FAIL (an access that does
 * not fit fails on the entry instead of passing on), P4E_ME_EVENT_FAIL
 * (refused accesses still produce an event and count as CT failures),
 * P4E_PT_NO_MATCH_DROP (no match is dropped even on a resend-flow-
 * controlled PT) and the entry's base (offsets relative to it).
 */
#include "p4e_test.h"

static struct eng e;
static uint8_t win[256], src[256], dst[256];

static void setup(void)
{
	eng_open_opts(&e, P4E_NI_MATCHING | P4E_NI_PHYSICAL,
		      P4E_PT_FC_RESEND | P4E_PT_NO_MATCH_DROP, 4096);
	memset(win, 0xee, sizeof(win));
	memset(src, 0x5a, sizeof(src));
	memset(dst, 0, sizeof(dst));
}

static void teardown(void)
{
	eng_close(&e);
}

TestSuite(eng_window, .init = setup, .fini = teardown, .timeout = 60);

static const unsigned win_opts = P4E_ME_OP_PUT | P4E_ME_OP_GET |
	P4E_ME_NO_TRUNCATE | P4E_ME_BOUNDS_FAIL | P4E_ME_EVENT_FAIL |
	P4E_ME_EVENT_LINK_DISABLE;

/* A put of len bytes at offset with an ACK; returns the ACK's failure. */
static uint8_t put_at(uint64_t bits, uint64_t offset, size_t len)
{
	uint64_t md = eng_md(&e, 0, src, sizeof(src), 0, P4E_HANDLE_NONE);
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, bits);
	struct p4e_event ev;

	x.remote_offset = offset;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = eng_event(&e, 0);
	cr_assert_eq(ev.type, P4E_EVENT_SEND);
	ev = eng_event(&e, 0);
	cr_assert_eq(ev.type, P4E_EVENT_ACK);
	cr_assert_eq(p4e_md_release(e.ni[0], md), 0);
	return ev.ni_fail_type;
}

Test(eng_window, bounds_fail_refuses_and_reports)
{
	struct p4e_me_desc d = eng_me_desc(win, 64, win_opts, 7, 0);
	struct p4e_me_desc d2 = eng_me_desc(win + 128, 64,
					    P4E_ME_OP_PUT |
					    P4E_ME_EVENT_LINK_DISABLE, 7, 0);
	struct p4e_ct_event ct;
	struct p4e_event ev;

	cr_assert_eq(p4e_ct_alloc(e.dom, &d.ct), 0);
	d.options |= P4E_ME_EVENT_CT_COMM;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, &d);
	/* a second entry with the same bits would take what the first lets
	 * pass: BOUNDS_FAIL must stop the search at the first */
	eng_append(&e, 1, &d2, P4E_PRIORITY_LIST, &d2);

	cr_assert_eq(put_at(7, 60, 8), P4E_NI_SEGV);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_SEGV);
	cr_expect_eq(ev.user_ptr, &d);
	cr_expect_eq(ev.mlength, 0);
	cr_expect_eq(ev.rlength, 8);
	eng_no_event(&e, 1);
	cr_assert_eq(p4e_ct_get(e.dom, d.ct, &ct), 0);
	cr_expect_eq(ct.success, 0);
	cr_expect_eq(ct.failure, 1);
	for (size_t i = 0; i < sizeof(win); i++)
		cr_assert_eq(win[i], 0xee, "byte %zu touched", i);

	/* what fits lands, and counts as a success */
	cr_assert_eq(put_at(7, 56, 8), P4E_NI_OK);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.mlength, 8);
	cr_expect_eq(win[56], 0x5a);
	cr_expect_eq(win[55], 0xee);
	cr_assert_eq(p4e_ct_get(e.dom, d.ct, &ct), 0);
	cr_expect_eq(ct.success, 1);
}

Test(eng_window, permission_failure_event)
{
	struct p4e_me_desc d = eng_me_desc(win, 64, win_opts & ~P4E_ME_OP_PUT,
					   9, 0);
	struct p4e_event ev;

	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
	cr_assert_eq(put_at(9, 0, 8), P4E_NI_OP_VIOLATION);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OP_VIOLATION);
	cr_expect_eq(win[0], 0xee);

	/* without EVENT_FAIL a refusal stays silent at the target */
	d.options &= ~P4E_ME_EVENT_FAIL;
	d.match_bits = 10;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
	cr_assert_eq(put_at(10, 0, 8), P4E_NI_OP_VIOLATION);
	eng_no_event(&e, 1);
}

Test(eng_window, no_match_is_dropped_not_held)
{
	struct p4e_me_desc d = eng_me_desc(win, 64, win_opts, 7, 0);
	int64_t fc;

	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
	/* on a P4E_PT_FC_RESEND PT this would be nacked and resent forever */
	cr_assert_eq(put_at(8, 0, 8), P4E_NI_DROPPED);
	cr_assert_eq(p4e_ni_status(e.ni[1], P4E_SR_FLOWCTRL, &fc), 0);
	cr_expect_eq(fc, 0);
	eng_no_event(&e, 1);
	/* the peer is not held back: the next one lands */
	cr_assert_eq(put_at(7, 0, 8), P4E_NI_OK);
	cr_expect_eq(win[0], 0x5a);
}

Test(eng_window, base_offsets)
{
	struct p4e_me_desc d = eng_me_desc(win, 64, win_opts, 7, 0);
	uint64_t md;
	struct p4e_xfer x;
	struct p4e_event ev;

	d.base = 1000;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
	cr_assert_eq(put_at(7, 1010, 4), P4E_NI_OK);
	(void)eng_event(&e, 1);
	cr_expect_eq(win[10], 0x5a);
	cr_expect_eq(win[9], 0xee);
	cr_expect_eq(win[14], 0xee);
	/* below the base, or past its end: refused, untouched */
	cr_assert_eq(put_at(7, 999, 4), P4E_NI_SEGV);
	(void)eng_event(&e, 1);
	cr_assert_eq(put_at(7, 1062, 4), P4E_NI_SEGV);
	(void)eng_event(&e, 1);
	cr_expect_eq(win[63], 0xee);

	/* a get at base + 8 */
	md = eng_md(&e, 0, dst, sizeof(dst), 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 4, 7);
	x.remote_offset = 1008;
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_REPLY);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(dst[0], 0xee);
	cr_expect_eq(dst[2], 0x5a);	/* win[10] */
}
