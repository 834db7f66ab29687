/*
 * test_native_data.c - libportals data path in one process on the loop
 * transport (an NI talking to itself): event fields of put / get / ack /
 * reply, truncation, NO_TRUNCATE, permission and operation violations and
 * their status registers, locally managed offsets, use-once and unlink
 * events, counters in bytes mode, EQ overflow (PTL_EQ_DROPPED), flow
 * control and re-enable, triggered ME append / unlink, LE search,
 * half-wildcard match ids, logical addressing, complex and long double
 * atomics, concurrent threads.
 */
#include <complex.h>
#include <stddef.h>
#include <pthread.h>
#include <unistd.h>

#include "ptl_test.h"

T_PT_SUITE(native_data);

Test(native_data, put_events_all_fields)
{
	char src[32], dst[64];
	ptl_handle_md_t md;
	ptl_event_t ev;
	ptl_uid_t uid;
	int i;

	for (i = 0; i < 32; i++)
		src[i] = (char)(i + 1);
	memset(dst, 0, sizeof(dst));
	t_me(ni, pt, dst, sizeof(dst), PTL_ME_OP_PUT, 0xabc, PTL_PRIORITY_LIST,
	     PTL_CT_NONE);
	ev = t_event(eq);
	cr_assert_eq(ev.type, PTL_EVENT_LINK);
	md = t_md(ni, src, sizeof(src), eq, PTL_CT_NONE, 0);
	cr_assert_eq(PtlPut(md, 4, 20, PTL_ACK_REQ, self, pt, 0xabc, 8,
			    (void *)0x77, 0x5555), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_PUT);
	cr_assert_eq(PtlGetUid(ni, &uid), PTL_OK);
	cr_assert_eq(ev.start, dst + 8);
	cr_assert_eq(ev.user_ptr, NULL);
	cr_assert_eq(ev.hdr_data, 0x5555);
	cr_assert_eq(ev.match_bits, 0xabc);
	cr_assert_eq(ev.rlength, 20);
	cr_assert_eq(ev.mlength, 20);
	cr_assert_eq(ev.remote_offset, 8);
	cr_assert_eq(ev.initiator.phys.nid, self.phys.nid);
	cr_assert_eq(ev.initiator.phys.pid, self.phys.pid);
	cr_assert_eq(ev.uid, uid);
	cr_assert_eq(ev.pt_index, pt);
	cr_assert_eq(ev.ptl_list, PTL_PRIORITY_LIST);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
	cr_assert_eq(memcmp(dst + 8, src + 4, 20), 0);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.user_ptr, (void *)0x77);
	cr_assert_eq(ev.mlength, 20);
	cr_assert_eq(ev.remote_offset, 8);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
	cr_assert_eq(PtlMDRelease(md), PTL_OK);
}

Test(native_data, get_truncation_and_violations)
{
	char src[16] = "0123456789abcdef", dst[64];
	ptl_handle_md_t md;
	ptl_sr_value_t v;
	ptl_event_t ev;

	t_me(ni, pt, src, 8, PTL_ME_OP_PUT | PTL_ME_OP_GET, 1,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	t_me(ni, pt, src, 16, PTL_ME_OP_PUT, 2, PTL_PRIORITY_LIST,
	     PTL_CT_NONE);
	t_me(ni, pt, dst, 4, PTL_ME_OP_PUT | PTL_ME_NO_TRUNCATE, 3,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	md = t_md(ni, dst, sizeof(dst), eq, PTL_CT_NONE,
		  PTL_MD_EVENT_SEND_DISABLE);
	/* get of 16 from an 8-byte entry: truncated to 8 */
	cr_assert_eq(PtlGet(md, 0, 16, self, pt, 1, 0, (void *)1), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_REPLY);
	cr_assert_eq(ev.mlength, 8);
	cr_assert_eq(ev.rlength, 16);
	cr_assert_eq(ev.user_ptr, (void *)1);
	cr_assert_eq(memcmp(dst, "01234567", 8), 0);
	/* get from an entry without OP_GET: an operation violation */
	cr_assert_eq(PtlGet(md, 0, 4, self, pt, 2, 0, NULL), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_REPLY);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_OP_VIOLATION);
	cr_assert_eq(PtlNIStatus(ni, PTL_SR_OPERATION_VIOLATIONS, &v), PTL_OK);
	cr_assert_eq(v, 1);
	/* NO_TRUNCATE: a put that does not fit does not match: dropped */
	cr_assert_eq(PtlPut(md, 0, 8, PTL_ACK_REQ, self, pt, 3, 0, NULL, 0),
		     PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_DROPPED);
	cr_assert_eq(PtlNIStatus(ni, PTL_SR_DROP_COUNT, &v), PTL_OK);
	cr_assert_eq(v, 1);
	/* no entry at all */
	cr_assert_eq(PtlPut(md, 0, 8, PTL_ACK_REQ, self, pt, 99, 0, NULL, 0),
		     PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_DROPPED);
	cr_assert_eq(PtlNIStatus(ni, PTL_SR_DROP_COUNT, &v), PTL_OK);
	cr_assert_eq(v, 2);
}

Test(native_data, permission_violation)
{
	char buf[8];
	ptl_handle_md_t md;
	ptl_sr_value_t v;
	ptl_event_t ev;
	ptl_me_t me = t_me_desc(buf, 8, PTL_ME_OP_PUT, 5, PTL_CT_NONE);
	ptl_handle_me_t h;

	me.uid = (ptl_uid_t)getuid() + 1;	/* somebody else */
	cr_assert_eq(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h),
		     PTL_OK);
	md = t_md(ni, buf, 8, eq, PTL_CT_NONE, PTL_MD_EVENT_SEND_DISABLE);
	cr_assert_eq(PtlPut(md, 0, 8, PTL_ACK_REQ, self, pt, 5, 0, NULL, 0),
		     PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_PERM_VIOLATION);
	cr_assert_eq(PtlNIStatus(ni, PTL_SR_PERMISSION_VIOLATIONS, &v),
		     PTL_OK);
	cr_assert_eq(v, 1);
}

Test(native_data, manage_local_use_once_and_unlink_events)
{
	char src[8] = "abcdefgh", dst[32];
	ptl_handle_me_t h, h2;
	ptl_handle_md_t md;
	ptl_event_t ev;

	memset(dst, 0, sizeof(dst));
	h = t_me(ni, pt, dst, sizeof(dst),
		 PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
		 PTL_ME_EVENT_LINK_DISABLE, 1, PTL_PRIORITY_LIST, PTL_CT_NONE);
	md = t_md(ni, src, 8, eq, PTL_CT_NONE, PTL_MD_EVENT_SEND_DISABLE);
	cr_assert_eq(PtlPut(md, 0, 3, PTL_NO_ACK_REQ, self, pt, 1, 0, NULL, 0),
		     PTL_OK);
	cr_assert_eq(PtlPut(md, 3, 5, PTL_NO_ACK_REQ, self, pt, 1, 0, NULL, 0),
		     PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_PUT);
	cr_assert_eq(ev.start, dst);
	ev = t_event_type(eq, PTL_EVENT_PUT);
	cr_assert_eq(ev.start, dst + 3);	/* advanced by mlength */
	cr_assert_eq(memcmp(dst, "abcdefgh", 8), 0);
	cr_assert_eq(PtlMEUnlink(h), PTL_OK);
	/* use once: consumed, AUTO_UNLINK, the handle goes stale */
	h = t_me(ni, pt, dst, 8, PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
		 PTL_ME_EVENT_LINK_DISABLE, 2, PTL_PRIORITY_LIST, PTL_CT_NONE);
	/* the same without the unlink event */
	h2 = t_me(ni, pt, dst, 8, PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
		  PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE, 3,
		  PTL_PRIORITY_LIST, PTL_CT_NONE);
	cr_assert_eq(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, self, pt, 2, 0, NULL, 0),
		     PTL_OK);
	ev = t_event(eq);
	cr_assert_eq(ev.type, PTL_EVENT_PUT);
	ev = t_event(eq);
	cr_assert_eq(ev.type, PTL_EVENT_AUTO_UNLINK);
	cr_assert_eq(PtlMEUnlink(h), PTL_ARG_INVALID);
	cr_assert_eq(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, self, pt, 3, 0, NULL, 0),
		     PTL_OK);
	ev = t_event(eq);
	cr_assert_eq(ev.type, PTL_EVENT_PUT);
	t_no_event(eq);
	cr_assert_eq(PtlMEUnlink(h2), PTL_ARG_INVALID);
}

Test(native_data, counters_bytes_mode)
{
	char src[100], dst[100];
	ptl_handle_ct_t ct, mct;
	ptl_handle_md_t md;
	ptl_ct_event_t c;

	cr_assert_eq(PtlCTAlloc(ni, &ct), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &mct), PTL_OK);
	t_me(ni, pt, dst, sizeof(dst), PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
	     PTL_ME_EVENT_CT_BYTES | PTL_ME_EVENT_COMM_DISABLE |
	     PTL_ME_EVENT_LINK_DISABLE, 1, PTL_PRIORITY_LIST, ct);
	md = t_md(ni, src, sizeof(src), PTL_EQ_NONE, mct,
		  PTL_MD_EVENT_CT_ACK);
	cr_assert_eq(PtlPut(md, 0, 30, PTL_CT_ACK_REQ, self, pt, 1, 0, NULL, 0),
		     PTL_OK);
	cr_assert_eq(PtlPut(md, 0, 12, PTL_CT_ACK_REQ, self, pt, 1, 0, NULL, 0),
		     PTL_OK);
	cr_assert_eq(PtlCTWait(mct, 2, &c), PTL_OK);
	cr_assert_eq(c.success, 2);
	cr_assert_eq(PtlCTWait(ct, 42, &c), PTL_OK);
	cr_assert_eq(c.success, 42);	/* bytes, not operations */
	cr_assert_eq(c.failure, 0);
	cr_assert_eq(PtlCTSet(ct, (ptl_ct_event_t){ 5, 1 }), PTL_OK);
	cr_assert_eq(PtlCTInc(ct, (ptl_ct_event_t){ 2, 3 }), PTL_OK);
	cr_assert_eq(PtlCTGet(ct, &c), PTL_OK);
	cr_assert_eq(c.success, 7);
	cr_assert_eq(c.failure, 4);
	t_no_event(eq);
}

Test(native_data, eq_overflow_drops)
{
	char src[8] = { 0 }, dst[8];
	ptl_handle_eq_t small;
	ptl_handle_md_t md;
	ptl_pt_index_t pt2;
	ptl_event_t ev;
	int i;

	cr_assert_eq(PtlEQAlloc(ni, 2, &small), PTL_OK);
	cr_assert_eq(PtlPTAlloc(ni, 0, small, PTL_PT_ANY, &pt2), PTL_OK);
	t_me(ni, pt2, dst, 8, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, 0,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	md = t_md(ni, src, 8, eq, PTL_CT_NONE, 0);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(PtlPut(md, 0, 1, PTL_NO_ACK_REQ, self, pt2, 0,
				    0, NULL, (ptl_hdr_data_t)i), PTL_OK);
		ev = t_event_type(eq, PTL_EVENT_SEND);
	}
	/* the queue kept the last two; the first get reports the loss */
	usleep(10000);
	cr_assert_eq(PtlEQGet(small, &ev), PTL_EQ_DROPPED);
	cr_assert_eq(ev.hdr_data, 2);
	cr_assert_eq(PtlEQGet(small, &ev), PTL_OK);
	cr_assert_eq(ev.hdr_data, 3);
	cr_assert_eq(PtlEQGet(small, &ev), PTL_EQ_EMPTY);
}

Test(native_data, flow_control_disable_and_enable)
{
	char src[8] = { 0 }, dst[8];
	ptl_handle_eq_t feq;
	ptl_handle_md_t md;
	ptl_pt_index_t fpt;
	ptl_event_t ev;
	int i, disabled = 0, n = 0;

	cr_assert_eq(PtlEQAlloc(ni, 4, &feq), PTL_OK);
	cr_assert_eq(PtlPTAlloc(ni, PTL_PT_FLOWCTRL, feq, PTL_PT_ANY, &fpt),
		     PTL_OK);
	t_me(ni, fpt, dst, 8, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, 0,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	md = t_md(ni, src, 8, eq, PTL_CT_NONE, PTL_MD_EVENT_SEND_DISABLE);
	/* more puts than the EQ holds: the PT disables itself rather than
	 * lose events; initiators see PT_DISABLED */
	for (i = 0; i < 8; i++) {
		cr_assert_eq(PtlPut(md, 0, 1, PTL_ACK_REQ, self, fpt, 0, 0,
				    NULL, 0), PTL_OK);
		ev = t_event_type(eq, PTL_EVENT_ACK);
		if (ev.ni_fail_type == PTL_NI_PT_DISABLED)
			disabled++;
		else
			cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
	}
	cr_assert_gt(disabled, 0);
	/* nothing was lost: drain, see PT_DISABLED, re-enable, it works */
	while (PtlEQGet(feq, &ev) == PTL_OK) {
		if (ev.type == PTL_EVENT_PT_DISABLED)
			n++;
	}
	cr_assert_eq(n, 1);
	cr_assert_eq(PtlPTEnable(ni, fpt), PTL_OK);
	cr_assert_eq(PtlPut(md, 0, 1, PTL_ACK_REQ, self, fpt, 0, 0, NULL, 0),
		     PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
	ev = t_event(feq);
	cr_assert_eq(ev.type, PTL_EVENT_PUT);
}

Test(native_data, triggered_me_append_and_unlink)
{
	char src[8] = "12345678", dst[8];
	ptl_handle_ct_t ct;
	ptl_handle_md_t md;
	ptl_handle_me_t h;
	ptl_event_t ev;
	ptl_me_t me;

	cr_assert_eq(PtlCTAlloc(ni, &ct), PTL_OK);
	me = t_me_desc(dst, 8, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, 4,
		       PTL_CT_NONE);
	cr_assert_eq(PtlTriggeredMEAppend(ni, pt, &me, PTL_PRIORITY_LIST,
					  NULL, &h, ct, 1), PTL_OK);
	md = t_md(ni, src, 8, eq, PTL_CT_NONE, PTL_MD_EVENT_SEND_DISABLE);
	/* not appended yet */
	cr_assert_eq(PtlPut(md, 0, 8, PTL_ACK_REQ, self, pt, 4, 0, NULL, 0),
		     PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_DROPPED);
	cr_assert_eq(PtlCTInc(ct, (ptl_ct_event_t){ 1, 0 }), PTL_OK);
	cr_assert_eq(PtlPut(md, 0, 8, PTL_ACK_REQ, self, pt, 4, 0, NULL, 0),
		     PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_PUT);
	cr_assert_eq(memcmp(dst, src, 8), 0);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
	/* unlinked when the counter reaches 2 */
	cr_assert_eq(PtlTriggeredMEUnlink(h, ct, 2), PTL_OK);
	cr_assert_eq(PtlCTInc(ct, (ptl_ct_event_t){ 0, 1 }), PTL_OK);
	cr_assert_eq(PtlPut(md, 0, 8, PTL_ACK_REQ, self, pt, 4, 0, NULL, 0),
		     PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_DROPPED);
}

Test(native_data, le_search_on_non_matching_ni)
{
	ptl_handle_ni_t lni;
	ptl_handle_eq_t leq;
	ptl_pt_index_t lpt;
	ptl_event_t ev;
	ptl_le_t le;

	lni = t_ni(PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlEQAlloc(lni, 8, &leq), PTL_OK);
	cr_assert_eq(PtlPTAlloc(lni, 0, leq, 0, &lpt), PTL_OK);
	memset(&le, 0, sizeof(le));
	le.ct_handle = PTL_CT_NONE;
	le.uid = PTL_UID_ANY;
	le.options = PTL_LE_OP_PUT;
	cr_assert_eq(PtlLESearch(lni, lpt, &le, PTL_SEARCH_ONLY, (void *)9),
		     PTL_OK);
	ev = t_event(leq);
	cr_assert_eq(ev.type, PTL_EVENT_SEARCH);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_NO_MATCH);
	cr_assert_eq(ev.user_ptr, (void *)9);
	cr_assert_eq(PtlLESearch(ni, pt, &le, PTL_SEARCH_ONLY, NULL),
		     PTL_ARG_INVALID);	/* matching NI */
}

/* Release md once its operations are done (PTL_IN_USE until their SEND
 * events, which the caller may have skipped past), progressing eq. */
static void md_release_when_done(ptl_handle_md_t md)
{
	ptl_event_t ev;
	unsigned which;
	int ret, n;

	for (n = 0; n < 1000; n++) {
		ret = PtlMDRelease(md);
		if (ret != PTL_IN_USE)
			break;
		(void)PtlEQPoll(&eq, 1, 10, &ev, &which);
	}
	cr_assert_eq(ret, PTL_OK);
}

/* The next search result on eq: its user_ptr, and whether it found one. */
static bool search_found(void *user_ptr)
{
	ptl_event_t ev = t_event_type(eq, PTL_EVENT_SEARCH);

	cr_assert_eq(ev.user_ptr, user_ptr);
	return ev.ni_fail_type == PTL_NI_OK;
}

/*
 * Half wildcards: {nid, PTL_PID_ANY} matches every process of that node,
 * {PTL_NID_ANY, pid} that pid on any node, and nothing else, whether a
 * message meets the entry on the priority list, the entry meets an
 * unexpected header at append, or a search looks for one.
 */
Test(native_data, half_wildcard_match_ids)
{
	ptl_pid_t other_pid = (self.phys.pid + 1) % PTL_PID_MAX;
	ptl_process_t ids[4] = {
		t_phys(PTL_NID_ANY, other_pid),		/* another pid */
		t_phys(self.phys.nid + 1, PTL_PID_ANY),	/* another node */
		t_phys(PTL_NID_ANY, self.phys.pid),	/* ours */
		t_phys(self.phys.nid, PTL_PID_ANY),	/* our node */
	};
	char src[8] = "halfwld", dst[4][8], oflow[64];
	ptl_handle_me_t h[4], oh, ph;
	ptl_handle_md_t md;
	ptl_event_t ev;
	ptl_me_t me;
	int i;

	memset(dst, 0, sizeof(dst));
	for (i = 0; i < 4; i++) {
		me = t_me_desc(dst[i], 8, PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
			       PTL_ME_EVENT_LINK_DISABLE, 0x5, PTL_CT_NONE);
		me.match_id = ids[i];
		cr_assert_eq(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST,
					 (void *)(uintptr_t)(i + 1), &h[i]),
			     PTL_OK);
	}
	md = t_md(ni, src, sizeof(src), eq, PTL_CT_NONE, 0);
	/* the first two entries are passed over, in list order */
	for (i = 0; i < 2; i++) {
		cr_assert_eq(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, self, pt, 0x5, 0,
				    NULL, 0), PTL_OK);
		ev = t_event_type(eq, PTL_EVENT_PUT);
		cr_assert_eq(ev.user_ptr, (void *)(uintptr_t)(i + 3));
		cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
		cr_assert_eq(memcmp(dst[i + 2], src, 8), 0);
	}
	cr_assert_eq(memcmp(dst[0], "\0\0\0\0\0\0\0\0", 8), 0);
	cr_assert_eq(memcmp(dst[1], "\0\0\0\0\0\0\0\0", 8), 0);
	for (i = 0; i < 2; i++)
		cr_assert_eq(PtlMEUnlink(h[i]), PTL_OK);

	/* an unexpected message, searched for and then matched at append */
	me = t_me_desc(oflow, sizeof(oflow), PTL_ME_OP_PUT |
		       PTL_ME_MANAGE_LOCAL | PTL_ME_EVENT_LINK_DISABLE, 0,
		       PTL_CT_NONE);
	me.ignore_bits = ~(ptl_match_bits_t)0;
	cr_assert_eq(PtlMEAppend(ni, pt, &me, PTL_OVERFLOW_LIST, NULL, &oh),
		     PTL_OK);
	cr_assert_eq(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, self, pt, 0x6, 0, NULL,
			    0), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_PUT);
	cr_assert_eq(ev.ptl_list, PTL_OVERFLOW_LIST);
	me = t_me_desc(dst[0], 8, PTL_ME_OP_PUT | PTL_ME_USE_ONCE, 0x6,
		       PTL_CT_NONE);
	for (i = 0; i < 4; i++) {
		me.match_id = ids[i];
		cr_assert_eq(PtlMESearch(ni, pt, &me, PTL_SEARCH_ONLY,
					 (void *)(uintptr_t)(10 + i)), PTL_OK);
		cr_expect_eq(search_found((void *)(uintptr_t)(10 + i)), i >= 2,
			     "search with match_id %d", i);
	}
	me.match_id = ids[0];		/* another pid: stays linked */
	cr_assert_eq(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, (void *)20,
				 &ph), PTL_OK);
	ev = t_event(eq);
	cr_assert_eq(ev.type, PTL_EVENT_LINK);
	cr_assert_eq(ev.user_ptr, (void *)20);
	cr_assert_eq(PtlMEUnlink(ph), PTL_OK);
	me.start = dst[1];
	me.match_id = ids[3];		/* our node: takes the header */
	cr_assert_eq(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, (void *)21,
				 &ph), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_PUT_OVERFLOW);
	cr_assert_eq(ev.user_ptr, (void *)21);
	cr_assert_eq(ev.initiator.phys.pid, self.phys.pid);
	cr_assert_eq(PtlMEUnlink(oh), PTL_OK);
	md_release_when_done(md);
}

Test(native_data, logical_ni_addresses_ranks)
{
	ptl_handle_ni_t lni;
	ptl_handle_eq_t leq;
	ptl_handle_md_t md;
	ptl_handle_me_t h;
	ptl_process_t map[2], id;
	ptl_pt_index_t lpt;
	ptl_event_t ev;
	ptl_me_t me;
	char src[4] = "xyz", dst[4];

	lni = t_ni(PTL_NI_MATCHING | PTL_NI_LOGICAL);
	map[0] = t_phys(0x7f000001u, 3);
	map[1] = self;
	cr_assert_eq(PtlSetMap(lni, 2, map), PTL_OK);
	cr_assert_eq(PtlGetId(lni, &id), PTL_OK);
	cr_assert_eq(id.rank, 1);
	cr_assert_eq(PtlEQAlloc(lni, 16, &leq), PTL_OK);
	cr_assert_eq(PtlPTAlloc(lni, 0, leq, 0, &lpt), PTL_OK);
	me = t_me_desc(dst, 4, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, 0,
		       PTL_CT_NONE);
	me.match_id = t_rank(1);
	cr_assert_eq(PtlMEAppend(lni, lpt, &me, PTL_PRIORITY_LIST, NULL, &h),
		     PTL_OK);
	me.match_id = t_rank(2);	/* beyond the map */
	cr_assert_eq(PtlMEAppend(lni, lpt, &me, PTL_PRIORITY_LIST, NULL, &h),
		     PTL_ARG_INVALID);
	md = t_md(lni, src, 4, leq, PTL_CT_NONE, PTL_MD_EVENT_SEND_DISABLE);
	cr_assert_eq(PtlPut(md, 0, 4, PTL_NO_ACK_REQ, t_rank(2), lpt, 0, 0,
			    NULL, 0), PTL_ARG_INVALID);
	cr_assert_eq(PtlPut(md, 0, 4, PTL_NO_ACK_REQ, t_rank(1), lpt, 0, 0,
			    NULL, 0), PTL_OK);
	ev = t_event_type(leq, PTL_EVENT_PUT);
	cr_assert_eq(ev.initiator.rank, 1);
	cr_assert_eq(memcmp(dst, "xyz", 4), 0);
}

Test(native_data, complex_and_long_double_atomics)
{
	struct {
		float complex fc;
		double complex dc;
		long double ld;
		long double complex ldc;
	} tgt, opnd, got;
	ptl_handle_md_t md, gmd;
	ptl_handle_ct_t ct;
	ptl_ct_event_t c;

	memset(&tgt, 0, sizeof(tgt));
	tgt.fc = 1.0f + 2.0f * I;
	tgt.dc = 3.0 - 1.0 * I;
	tgt.ld = 2.5L;
	tgt.ldc = 1.0L + 1.0L * I;
	memset(&opnd, 0, sizeof(opnd));
	opnd.fc = 0.5f + 0.5f * I;
	opnd.dc = 2.0 + 1.0 * I;
	opnd.ld = 4.0L;
	opnd.ldc = 0.0L + 1.0L * I;
	cr_assert_eq(PtlCTAlloc(ni, &ct), PTL_OK);
	t_me(ni, pt, &tgt, sizeof(tgt), PTL_ME_OP_PUT | PTL_ME_OP_GET |
	     PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_LINK_DISABLE, 9,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	md = t_md(ni, &opnd, sizeof(opnd), PTL_EQ_NONE, ct,
		  PTL_MD_EVENT_CT_ACK | PTL_MD_EVENT_CT_REPLY);
	gmd = t_md(ni, &got, sizeof(got), PTL_EQ_NONE, ct,
		   PTL_MD_EVENT_CT_ACK | PTL_MD_EVENT_CT_REPLY);
	cr_assert_eq(PtlAtomic(md, offsetof(typeof(opnd), fc), sizeof(tgt.fc),
			       PTL_CT_ACK_REQ, self, pt, 9,
			       offsetof(typeof(tgt), fc), NULL, 0, PTL_SUM,
			       PTL_FLOAT_COMPLEX), PTL_OK);
	cr_assert_eq(PtlAtomic(md, offsetof(typeof(opnd), dc), sizeof(tgt.dc),
			       PTL_CT_ACK_REQ, self, pt, 9,
			       offsetof(typeof(tgt), dc), NULL, 0, PTL_PROD,
			       PTL_DOUBLE_COMPLEX), PTL_OK);
	cr_assert_eq(PtlFetchAtomic(gmd, offsetof(typeof(got), ld), md,
				    offsetof(typeof(opnd), ld), sizeof(tgt.ld),
				    self, pt, 9, offsetof(typeof(tgt), ld),
				    NULL, 0, PTL_MAX, PTL_LONG_DOUBLE), PTL_OK);
	cr_assert_eq(PtlAtomic(md, offsetof(typeof(opnd), ldc),
			       sizeof(tgt.ldc), PTL_CT_ACK_REQ, self, pt, 9,
			       offsetof(typeof(tgt), ldc), NULL, 0, PTL_PROD,
			       PTL_LONG_DOUBLE_COMPLEX), PTL_OK);
	cr_assert_eq(PtlCTWait(ct, 4, &c), PTL_OK);
	cr_assert_eq(c.failure, 0);
	cr_assert(tgt.fc == 1.5f + 2.5f * I);
	cr_assert(tgt.dc == (3.0 - 1.0 * I) * (2.0 + 1.0 * I));
	cr_assert(got.ld == 2.5L);
	cr_assert(tgt.ld == 4.0L);
	cr_assert(tgt.ldc == (1.0L + 1.0L * I) * (1.0L * I));
	/* min / max are not defined on complex numbers */
	cr_assert_eq(PtlAtomic(md, 0, sizeof(tgt.fc), PTL_NO_ACK_REQ, self,
			       pt, 9, 0, NULL, 0, PTL_MIN, PTL_FLOAT_COMPLEX),
		     PTL_ARG_INVALID);
}

/* Several threads post and wait on one NI at once. */
#define TH_N	4
#define TH_OPS	200
static ptl_handle_md_t th_md;
static ptl_handle_ct_t th_ct[TH_N];

static void *th_main(void *arg)
{
	intptr_t t = (intptr_t)arg;
	ptl_ct_event_t c;
	int i;

	for (i = 0; i < TH_OPS; i++) {
		if (PtlPut(th_md, 0, 8, PTL_NO_ACK_REQ, self, pt,
			   (ptl_match_bits_t)(100 + t), 0, NULL, 0) != PTL_OK)
			return (void *)1;
		if (i % 16 == 15 &&
		    PtlCTWait(th_ct[t], (ptl_size_t)i + 1, &c) != PTL_OK)
			return (void *)2;
	}
	if (PtlCTWait(th_ct[t], TH_OPS, &c) != PTL_OK || c.success != TH_OPS)
		return (void *)3;
	return NULL;
}

Test(native_data, concurrent_threads)
{
	static uint64_t src, dst[TH_N];
	pthread_t th[TH_N];
	void *r;
	intptr_t t;

	th_md = t_md(ni, &src, 8, PTL_EQ_NONE, PTL_CT_NONE, 0);
	for (t = 0; t < TH_N; t++) {
		cr_assert_eq(PtlCTAlloc(ni, &th_ct[t]), PTL_OK);
		t_me(ni, pt, &dst[t], 8, PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		     PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_LINK_DISABLE,
		     (ptl_match_bits_t)(100 + t), PTL_PRIORITY_LIST, th_ct[t]);
	}
	for (t = 0; t < TH_N; t++)
		cr_assert_eq(pthread_create(&th[t], NULL, th_main,
					    (void *)t), 0);
	for (t = 0; t < TH_N; t++) {
		cr_assert_eq(pthread_join(th[t], &r), 0);
		cr_assert_null(r, "thread %d: %p", (int)t, r);
	}
}
