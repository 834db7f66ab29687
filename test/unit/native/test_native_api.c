/*
 * test_native_api.c - libportals control path and ABI on the loop
 * transport: PTL_NO_INIT before PtlInit, handle values and generations,
 * NI reference counts, limits honoured and enforced, portal table
 * allocation, argument checking of every call, maps and ids, bundles,
 * timeouts and PtlAbort.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>

#include "ptl_test.h"

static void fini(void)
{
	PtlFini();
}

TestSuite(native_api, .fini = fini, .timeout = 60);

Test(native_api, no_init)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_ct_event_t ct = { 0, 0 };
	ptl_event_t ev;
	ptl_process_t id;
	ptl_uid_t uid;
	ptl_md_t md;
	unsigned which;

	memset(&md, 0, sizeof(md));
	memset(&id, 0, sizeof(id));
	/* handles compare without the library */
	cr_assert(PtlHandleIsEqual(PTL_INVALID_HANDLE, PTL_INVALID_HANDLE));
	cr_assert(!PtlHandleIsEqual(PTL_EQ_NONE, PTL_CT_NONE));
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			       NULL, NULL, &ni), PTL_NO_INIT);
	cr_assert_eq(PtlNIFini(0xa0000000u), PTL_NO_INIT);
	cr_assert_eq(PtlEQAlloc(0xa0000000u, 8, &eq), PTL_NO_INIT);
	cr_assert_eq(PtlEQGet(PTL_EQ_NONE, &ev), PTL_NO_INIT);
	cr_assert_eq(PtlEQPoll(&eq, 1, 0, &ev, &which), PTL_NO_INIT);
	cr_assert_eq(PtlCTGet(PTL_CT_NONE, &ct), PTL_NO_INIT);
	cr_assert_eq(PtlCTInc(PTL_CT_NONE, ct), PTL_NO_INIT);
	cr_assert_eq(PtlMDBind(0xa0000000u, &md, &eq), PTL_NO_INIT);
	cr_assert_eq(PtlPut(0, 0, 0, PTL_NO_ACK_REQ, id, 0, 0, 0, NULL, 0),
		     PTL_NO_INIT);
	cr_assert_eq(PtlGetUid(0xa0000000u, &uid), PTL_NO_INIT);
	cr_assert_eq(PtlGetId(0xa0000000u, &id), PTL_NO_INIT);
	cr_assert_eq(PtlAtomicSync(), PTL_NO_INIT);
	cr_assert_eq(PtlStartBundle(0xa0000000u), PTL_NO_INIT);
	cr_assert_eq(PtlNIHandle(PTL_EQ_NONE, &ni), PTL_NO_INIT);
	PtlAbort();	/* harmless */
	/* and again after the last PtlFini */
	t_init_loop();
	cr_assert_eq(PtlInit(), PTL_OK);
	PtlFini();
	cr_assert_eq(PtlAtomicSync(), PTL_OK);	/* one reference left */
	PtlFini();
	cr_assert_eq(PtlAtomicSync(), PTL_NO_INIT);
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			       NULL, NULL, &ni), PTL_NO_INIT);
}

Test(native_api, ni_init_args)
{
	ptl_handle_ni_t ni;

	t_init_loop();
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			       PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL,
			       PTL_PID_ANY, NULL, NULL, &ni), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING,
			       PTL_PID_ANY, NULL, NULL, &ni), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			       PTL_NI_PHYSICAL | PTL_NI_LOGICAL, PTL_PID_ANY,
			       NULL, NULL, &ni), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			       PTL_NI_PHYSICAL | 0x10, PTL_PID_ANY, NULL,
			       NULL, &ni), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIInit(5, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
			       PTL_PID_ANY, NULL, NULL, &ni), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_MAX,
			       NULL, NULL, &ni), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			       NULL, NULL, NULL), PTL_ARG_INVALID);
	/* one physical id per process: a second pid is refused */
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, 3, NULL,
			       NULL, &ni), PTL_OK);
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, 4, NULL,
			       NULL, &ni), PTL_ARG_INVALID);
}

/* The same sequence of calls gives the same values in every process. */
Test(native_api, ni_handles_deterministic)
{
	ptl_handle_ni_t a, b, c, d, a2, any;
	ptl_handle_eq_t eq;

	t_init_loop();
	a = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	b = t_ni(PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
	c = t_ni(PTL_NI_MATCHING | PTL_NI_LOGICAL);
	d = t_ni(PTL_NI_NO_MATCHING | PTL_NI_LOGICAL);
	cr_assert_eq(a, 0xa0000000u);
	cr_assert_eq(b, 0xa8000000u);
	cr_assert_eq(c, 0xb0000000u);
	cr_assert_eq(d, 0xb8000000u);
	/* reference counted: the same handle, two finis needed */
	a2 = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	cr_assert(PtlHandleIsEqual(a, a2));
	cr_assert_eq(PtlNIFini(a), PTL_OK);
	cr_assert_eq(PtlEQAlloc(a, 4, &eq), PTL_OK);
	cr_assert_eq(PtlNIHandle(eq, &any), PTL_OK);
	cr_assert_eq(any, a);
	cr_assert_eq(PtlNIFini(a), PTL_OK);
	/* gone: the handle and its objects' handles are stale */
	cr_assert_eq(PtlEQAlloc(a, 4, &eq), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIHandle(eq, &any), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIFini(a), PTL_ARG_INVALID);
	/* a new NI of that kind gets a new generation */
	a2 = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_neq(a2, a);
	cr_assert_eq(PtlNIFini(a), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIHandle(PTL_EQ_NONE, &any), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIHandle(PTL_INVALID_HANDLE, &any), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIHandle(a2, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlNIHandle(a2, &any), PTL_OK);
	cr_assert_eq(any, a2);
}

Test(native_api, limits_honoured_and_enforced)
{
	ptl_ni_limits_t want, got, dflt;
	ptl_handle_ni_t ni, ni2;
	ptl_handle_eq_t eq[4];
	ptl_handle_ct_t ct[6];
	ptl_handle_md_t md[5];
	ptl_handle_me_t me;
	ptl_pt_index_t pt;
	ptl_me_t desc;
	char buf[8];
	int i;

	t_init_loop();
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL,
			       PTL_PID_ANY, NULL, &dflt, &ni2), PTL_OK);
	cr_assert_geq(dflt.max_pt_index, 63);
	cr_assert_geq(dflt.max_waw_ordered_size, 64);
	cr_assert_geq(dflt.max_war_ordered_size, 8);
	memset(&want, 0, sizeof(want));
	want.max_entries = 10;
	want.max_list_size = 3;
	want.max_pt_index = 100;
	want.max_eqs = 3;
	want.max_cts = 5;
	want.max_mds = 4;
	want.max_triggered_ops = 7;
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			       &want, &got, &ni), PTL_OK);
	cr_assert_eq(got.max_entries, 10);
	cr_assert_eq(got.max_list_size, 3);
	cr_assert_eq(got.max_pt_index, 100);
	cr_assert_eq(got.max_eqs, 3);
	cr_assert_eq(got.max_cts, 5);
	cr_assert_eq(got.max_mds, 4);
	cr_assert_eq(got.max_triggered_ops, 7);
	for (i = 0; i < 3; i++)
		cr_assert_eq(PtlEQAlloc(ni, 4, &eq[i]), PTL_OK);
	cr_assert_eq(PtlEQAlloc(ni, 4, &eq[3]), PTL_NO_SPACE);
	for (i = 0; i < 5; i++)
		cr_assert_eq(PtlCTAlloc(ni, &ct[i]), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &ct[5]), PTL_NO_SPACE);
	for (i = 0; i < 5; i++)
		cr_assert_eq(PtlCTFree(ct[i]), PTL_OK);
	for (i = 0; i < 4; i++)
		md[i] = t_md(ni, buf, sizeof(buf), PTL_EQ_NONE, PTL_CT_NONE, 0);
	cr_assert_eq(PtlMDRelease(md[0]), PTL_OK);
	md[0] = t_md(ni, buf, sizeof(buf), PTL_EQ_NONE, PTL_CT_NONE, 0);
	{
		ptl_md_t d = { buf, 8, 0, PTL_EQ_NONE, PTL_CT_NONE };

		cr_assert_eq(PtlMDBind(ni, &d, &md[4]), PTL_NO_SPACE);
	}
	/* list length, then entries */
	cr_assert_eq(PtlPTAlloc(ni, 0, PTL_EQ_NONE, 100, &pt), PTL_OK);
	cr_assert_eq(PtlPTAlloc(ni, 0, PTL_EQ_NONE, 101, &pt),
		     PTL_ARG_INVALID);
	desc = t_me_desc(buf, 8, PTL_ME_OP_PUT, 0, PTL_CT_NONE);
	for (i = 0; i < 3; i++)
		cr_assert_eq(PtlMEAppend(ni, 100, &desc, PTL_PRIORITY_LIST,
					 NULL, &me), PTL_OK);
	cr_assert_eq(PtlMEAppend(ni, 100, &desc, PTL_PRIORITY_LIST, NULL,
				 &me), PTL_LIST_TOO_LONG);
	for (i = 0; i < 3; i++)
		cr_assert_eq(PtlMEAppend(ni, 100, &desc, PTL_OVERFLOW_LIST,
					 NULL, &me), PTL_OK);
	cr_assert_eq(PtlPTAlloc(ni, 0, PTL_EQ_NONE, 0, &pt), PTL_OK);
	for (i = 0; i < 4; i++)
		cr_assert_eq(PtlMEAppend(ni, 0, &desc, PTL_PRIORITY_LIST + (i & 1),
					 NULL, &me), PTL_OK);
	cr_assert_eq(PtlMEAppend(ni, 0, &desc, PTL_OVERFLOW_LIST, NULL, &me),
		     PTL_NO_SPACE);
}

Test(native_api, pt_alloc)
{
	ptl_ni_limits_t want;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_me_t me;
	ptl_pt_index_t pt;
	char buf[8];

	t_init_loop();
	memset(&want, 0, sizeof(want));
	want.max_pt_index = 3;
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			       &want, NULL, &ni), PTL_OK);
	cr_assert_eq(PtlEQAlloc(ni, 8, &eq), PTL_OK);
	cr_assert_eq(PtlPTAlloc(ni, 0, PTL_EQ_NONE, 1, &pt), PTL_OK);
	cr_assert_eq(PtlPTAlloc(ni, 0, PTL_EQ_NONE, 1, &pt), PTL_PT_IN_USE);
	cr_assert_eq(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt), PTL_OK);
	cr_assert_eq(pt, 0);	/* the lowest free index */
	cr_assert_eq(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt), PTL_OK);
	cr_assert_eq(pt, 2);
	cr_assert_eq(PtlPTAlloc(ni, PTL_PT_FLOWCTRL, PTL_EQ_NONE, 3, &pt),
		     PTL_PT_EQ_NEEDED);
	cr_assert_eq(PtlPTAlloc(ni, PTL_PT_ALLOC_OPTIONS_MASK + 1, eq, 3, &pt),
		     PTL_ARG_INVALID);
	cr_assert_eq(PtlPTAlloc(ni, 0, eq + 1, 3, &pt), PTL_ARG_INVALID);
	cr_assert_eq(PtlPTAlloc(ni, 0, PTL_CT_NONE, 3, &pt), PTL_ARG_INVALID);
	cr_assert_eq(PtlPTAlloc(ni, 0, eq, 3, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlPTAlloc(ni, PTL_PT_FLOWCTRL | PTL_PT_ONLY_USE_ONCE |
				PTL_PT_ONLY_TRUNCATE | PTL_PT_MATCH_UNORDERED,
				eq, PTL_PT_ANY, &pt), PTL_OK);
	cr_assert_eq(pt, 3);
	cr_assert_eq(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt), PTL_PT_FULL);
	/* (an EQ PTs use may still be freed: test_native_fidelity.c) */
	/* a PT with entries is busy */
	me = t_me(ni, 0, buf, 8, PTL_ME_OP_PUT, 0, PTL_PRIORITY_LIST,
		  PTL_CT_NONE);
	cr_assert_eq(PtlPTFree(ni, 0), PTL_PT_IN_USE);
	cr_assert_eq(PtlMEUnlink(me), PTL_OK);
	cr_assert_eq(PtlMEUnlink(me), PTL_ARG_INVALID);
	cr_assert_eq(PtlPTFree(ni, 0), PTL_OK);
	cr_assert_eq(PtlPTFree(ni, 0), PTL_ARG_INVALID);
	cr_assert_eq(PtlPTFree(ni, 4), PTL_ARG_INVALID);
	cr_assert_eq(PtlPTDisable(ni, 0), PTL_ARG_INVALID);
	cr_assert_eq(PtlPTDisable(ni, 2), PTL_OK);
	cr_assert_eq(PtlPTEnable(ni, 2), PTL_OK);
	cr_assert_eq(PtlPTEnable(ni + 1, 2), PTL_ARG_INVALID);
	cr_assert_eq(PtlPTFree(ni, 2), PTL_OK);
	cr_assert_eq(PtlPTFree(ni, 3), PTL_OK);
	cr_assert_eq(PtlEQFree(eq), PTL_OK);
	cr_assert_eq(PtlEQFree(eq), PTL_ARG_INVALID);
}

Test(native_api, object_args_and_stale_handles)
{
	ptl_handle_ni_t ni, lni;
	ptl_handle_eq_t eq;
	ptl_handle_ct_t ct;
	ptl_handle_md_t md;
	ptl_handle_me_t me_h;
	ptl_ct_event_t cev = { 0, 0 };
	ptl_pt_index_t pt;
	ptl_event_t ev;
	ptl_md_t d;
	ptl_me_t me;
	ptl_le_t le;
	char buf[16];

	t_init_loop();
	ni = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	lni = t_ni(PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlEQAlloc(ni, 0, &eq), PTL_ARG_INVALID);
	cr_assert_eq(PtlEQAlloc(ni, 8, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlEQAlloc(ni, 8, &eq), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlCTAlloc(ni, &ct), PTL_OK);
	cr_assert_eq(PtlPTAlloc(ni, 0, eq, 0, &pt), PTL_OK);
	/* MD */
	memset(&d, 0, sizeof(d));
	d.start = buf;
	d.length = sizeof(buf);
	d.eq_handle = PTL_EQ_NONE;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_OPTIONS_MASK + 1;
	cr_assert_eq(PtlMDBind(ni, &d, &md), PTL_ARG_INVALID);
	d.options = 0x80000000u;
	cr_assert_eq(PtlMDBind(ni, &d, &md), PTL_ARG_INVALID);
	d.options = 0;
	cr_assert_eq(PtlMDBind(ni, NULL, &md), PTL_ARG_INVALID);
	cr_assert_eq(PtlMDBind(ni, &d, NULL), PTL_ARG_INVALID);
	d.ct_handle = ct + 1;	/* another generation */
	cr_assert_eq(PtlMDBind(ni, &d, &md), PTL_ARG_INVALID);
	d.ct_handle = PTL_CT_NONE;
	d.eq_handle = ct;	/* a CT is no EQ */
	cr_assert_eq(PtlMDBind(ni, &d, &md), PTL_ARG_INVALID);
	d.eq_handle = eq;
	cr_assert_eq(PtlMDBind(lni, &d, &md), PTL_ARG_INVALID); /* other NI */
	d.options = PTL_IOVEC;
	d.length = 100000;	/* more iovecs than max_iovecs */
	cr_assert_eq(PtlMDBind(ni, &d, &md), PTL_ARG_INVALID);
	d.options = 0;
	d.length = sizeof(buf);
	cr_assert_eq(PtlMDBind(ni, &d, &md), PTL_OK);
	cr_assert_eq(PtlMDRelease(md), PTL_OK);
	cr_assert_eq(PtlMDRelease(md), PTL_ARG_INVALID);
	cr_assert_eq(PtlPut(md, 0, 1, PTL_NO_ACK_REQ, t_phys(0, 0), 0, 0, 0,
			    NULL, 0), PTL_ARG_INVALID);
	/* ME */
	me = t_me_desc(buf, 8, PTL_ME_APPEND_OPTIONS_MASK + 1, 0, PTL_CT_NONE);
	cr_assert_eq(PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &me_h),
		     PTL_ARG_INVALID);
	me.options = PTL_ME_OP_PUT;
	cr_assert_eq(PtlMEAppend(ni, 0, &me, 2, NULL, &me_h), PTL_ARG_INVALID);
	cr_assert_eq(PtlMEAppend(ni, 1, &me, 0, NULL, &me_h), PTL_ARG_INVALID);
	cr_assert_eq(PtlMEAppend(ni, 100000, &me, 0, NULL, &me_h),
		     PTL_ARG_INVALID);
	cr_assert_eq(PtlMEAppend(ni, 0, NULL, 0, NULL, &me_h), PTL_ARG_INVALID);
	cr_assert_eq(PtlMEAppend(ni, 0, &me, 0, NULL, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlMEAppend(lni, 0, &me, 0, NULL, &me_h),
		     PTL_ARG_INVALID);
	me.match_id = t_phys(PTL_NID_ANY, PTL_PID_MAX);	/* no such pid */
	cr_assert_eq(PtlMEAppend(ni, 0, &me, 0, NULL, &me_h), PTL_ARG_INVALID);
	me.match_id = t_any();
	me.ct_handle = eq;
	cr_assert_eq(PtlMEAppend(ni, 0, &me, 0, NULL, &me_h), PTL_ARG_INVALID);
	me.ct_handle = ct;
	cr_assert_eq(PtlMESearch(ni, 0, &me, 2, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlMESearch(ni, 0, NULL, 0, NULL), PTL_ARG_INVALID);
	/* LE calls belong to non-matching NIs, LE options only */
	memset(&le, 0, sizeof(le));
	le.start = buf;
	le.length = 8;
	le.ct_handle = PTL_CT_NONE;
	le.options = PTL_LE_OP_PUT;
	cr_assert_eq(PtlLEAppend(ni, 0, &le, 0, NULL, &me_h), PTL_ARG_INVALID);
	cr_assert_eq(PtlPTAlloc(lni, 0, PTL_EQ_NONE, 0, &pt), PTL_OK);
	le.options = PTL_ME_MANAGE_LOCAL;
	cr_assert_eq(PtlLEAppend(lni, 0, &le, 0, NULL, &me_h),
		     PTL_ARG_INVALID);
	le.options = PTL_LE_OP_PUT;
	cr_assert_eq(PtlLEAppend(lni, 0, &le, 0, NULL, &me_h), PTL_OK);
	cr_assert_eq(PtlMEUnlink(me_h), PTL_ARG_INVALID);	/* an LE */
	cr_assert_eq(PtlLEUnlink(me_h), PTL_OK);
	cr_assert_eq(PtlLEUnlink(me_h), PTL_ARG_INVALID);
	/* CT and EQ */
	cr_assert_eq(PtlCTGet(ct, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlCTGet(PTL_CT_NONE, &cev), PTL_ARG_INVALID);
	cr_assert_eq(PtlCTFree(ct), PTL_OK);
	cr_assert_eq(PtlCTFree(ct), PTL_ARG_INVALID);
	cr_assert_eq(PtlCTGet(ct, &cev), PTL_ARG_INVALID);
	cr_assert_eq(PtlCTSet(ct, cev), PTL_ARG_INVALID);
	cr_assert_eq(PtlCTInc(ct, cev), PTL_ARG_INVALID);
	cr_assert_eq(PtlCTCancelTriggered(ct), PTL_ARG_INVALID);
	cr_assert_eq(PtlCTWait(ct, 1, &cev), PTL_ARG_INVALID);
	cr_assert_eq(PtlEQGet(eq, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlEQGet(eq + 1, &ev), PTL_ARG_INVALID);
	cr_assert_eq(PtlEQGet(PTL_EQ_NONE, &ev), PTL_ARG_INVALID);
	cr_assert_eq(PtlEQGet(PTL_INVALID_HANDLE, &ev), PTL_ARG_INVALID);
	cr_assert_eq(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
	cr_assert_eq(PtlEQPoll(&eq, 0, 0, &ev, NULL), PTL_ARG_INVALID);
	/* status registers */
	{
		ptl_sr_value_t v = -1;

		cr_assert_eq(PtlNIStatus(ni, PTL_SR_DROP_COUNT, &v), PTL_OK);
		cr_assert_eq(v, 0);
		cr_assert_eq(PtlNIStatus(ni, PTL_SR_LAST, &v),
			     PTL_ARG_INVALID);
		cr_assert_eq(PtlNIStatus(ni, PTL_SR_DROP_COUNT, NULL),
			     PTL_ARG_INVALID);
		cr_assert_eq(PtlNIStatus(eq, PTL_SR_DROP_COUNT, &v),
			     PTL_ARG_INVALID);
	}
}

Test(native_api, data_args)
{
	ptl_handle_ni_t ni;
	ptl_handle_md_t md, md2;
	ptl_handle_ct_t ct;
	ptl_process_t me_id;
	uint64_t buf[4] = { 0 }, opnd = 0;

	t_init_loop();
	ni = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlGetPhysId(ni, &me_id), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &ct), PTL_OK);
	md = t_md(ni, buf, sizeof(buf), PTL_EQ_NONE, PTL_CT_NONE, 0);
	md2 = t_md(ni, buf, sizeof(buf), PTL_EQ_NONE, PTL_CT_NONE, 0);
	cr_assert_eq(PtlPut(md, 0, 8, 4, me_id, 0, 0, 0, NULL, 0),
		     PTL_ARG_INVALID);	/* ack_req */
	cr_assert_eq(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, t_any(), 0, 0, 0, NULL,
			    0), PTL_ARG_INVALID);	/* wildcard target */
	cr_assert_eq(PtlPut(md, 0, 8, PTL_NO_ACK_REQ,
			    t_phys(me_id.phys.nid, PTL_PID_MAX), 0, 0, 0, NULL,
			    0), PTL_ARG_INVALID);
	cr_assert_eq(PtlPut(ct, 0, 8, PTL_NO_ACK_REQ, me_id, 0, 0, 0, NULL, 0),
		     PTL_ARG_INVALID);
	/* op x type pairs Portals does not define */
	cr_assert_eq(PtlAtomic(md, 0, 8, PTL_NO_ACK_REQ, me_id, 0, 0, 0, NULL,
			       0, PTL_SWAP, PTL_UINT64_T), PTL_ARG_INVALID);
	cr_assert_eq(PtlAtomic(md, 0, 8, PTL_NO_ACK_REQ, me_id, 0, 0, 0, NULL,
			       0, PTL_BOR, PTL_DOUBLE), PTL_ARG_INVALID);
	cr_assert_eq(PtlAtomic(md, 0, 4, PTL_NO_ACK_REQ, me_id, 0, 0, 0, NULL,
			       0, PTL_LOR, PTL_FLOAT), PTL_ARG_INVALID);
	cr_assert_eq(PtlAtomic(md, 0, 8, PTL_NO_ACK_REQ, me_id, 0, 0, 0, NULL,
			       0, PTL_OP_LAST, PTL_UINT64_T), PTL_ARG_INVALID);
	cr_assert_eq(PtlAtomic(md, 0, 8, PTL_NO_ACK_REQ, me_id, 0, 0, 0, NULL,
			       0, PTL_SUM, PTL_DATATYPE_LAST), PTL_ARG_INVALID);
	cr_assert_eq(PtlFetchAtomic(md2, 0, md, 0, 8, me_id, 0, 0, 0, NULL, 0,
				    PTL_MSWAP, PTL_UINT64_T), PTL_ARG_INVALID);
	cr_assert_eq(PtlFetchAtomic(md2, 0, PTL_INVALID_HANDLE, 0, 8, me_id,
				    0, 0, 0, NULL, 0, PTL_SUM, PTL_UINT64_T),
		     PTL_ARG_INVALID);
	cr_assert_eq(PtlSwap(md2, 0, md, 0, 8, me_id, 0, 0, 0, NULL, 0, &opnd,
			     PTL_SUM, PTL_UINT64_T), PTL_ARG_INVALID);
	cr_assert_eq(PtlSwap(md2, 0, md, 0, 8, me_id, 0, 0, 0, NULL, 0, NULL,
			     PTL_CSWAP, PTL_UINT64_T), PTL_ARG_INVALID);
	cr_assert_eq(PtlSwap(md2, 0, md, 0, 8, me_id, 0, 0, 0, NULL, 0, &opnd,
			     PTL_MSWAP, PTL_DOUBLE), PTL_ARG_INVALID);
	/* triggered forms check their CT too */
	cr_assert_eq(PtlTriggeredPut(md, 0, 8, PTL_NO_ACK_REQ, me_id, 0, 0, 0,
				     NULL, 0, PTL_CT_NONE, 1), PTL_ARG_INVALID);
	cr_assert_eq(PtlTriggeredGet(md, 0, 8, me_id, 0, 0, 0, NULL, md, 1),
		     PTL_ARG_INVALID);
	cr_assert_eq(PtlTriggeredCTInc(ct, (ptl_ct_event_t){ 1, 0 },
				       PTL_CT_NONE, 1), PTL_ARG_INVALID);
	cr_assert_eq(PtlTriggeredCTSet(PTL_CT_NONE, (ptl_ct_event_t){ 1, 0 },
				       ct, 1), PTL_ARG_INVALID);
	cr_assert_eq(PtlTriggeredMEUnlink(PTL_INVALID_HANDLE, ct, 1),
		     PTL_ARG_INVALID);
	cr_assert_eq(PtlTriggeredMEAppend(ni, 0, NULL, 0, NULL, &md, ct, 1),
		     PTL_ARG_INVALID);
}

Test(native_api, ids_and_maps)
{
	ptl_handle_ni_t pni, lni;
	ptl_process_t id, map[3], out[3];
	ptl_size_t n = 0;
	ptl_uid_t uid;

	t_init_loop();
	pni = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	lni = t_ni(PTL_NI_MATCHING | PTL_NI_LOGICAL);
	cr_assert_eq(PtlGetUid(pni, &uid), PTL_OK);
	cr_assert_eq(uid, (ptl_uid_t)getuid());
	cr_assert_eq(PtlGetUid(pni, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlGetPhysId(pni, &id), PTL_OK);
	cr_assert_eq(id.phys.nid, 0x7f000001u);	/* 127.0.0.1 */
	cr_assert_eq(id.phys.pid, 7);		/* PTL_PID */
	cr_assert_eq(PtlGetPhysId(lni, &id), PTL_OK);
	cr_assert_eq(id.phys.pid, 7);		/* one id per process */
	cr_assert_eq(PtlGetId(pni, &id), PTL_OK);
	cr_assert_eq(id.phys.pid, 7);
	cr_assert_eq(PtlSetMap(pni, 1, &id), PTL_ARG_INVALID);
	cr_assert_eq(PtlGetMap(lni, 3, out, &n), PTL_FAIL);	/* none yet */
	cr_assert_eq(PtlGetId(lni, &id), PTL_FAIL);
	map[0] = t_phys(0x7f000001u, 5);
	map[1] = t_phys(0x7f000001u, 7);	/* this process: rank 1 */
	map[2] = t_phys(0x7f000001u, 9);
	cr_assert_eq(PtlSetMap(lni, 0, map), PTL_ARG_INVALID);
	cr_assert_eq(PtlSetMap(lni, 3, NULL), PTL_ARG_INVALID);
	map[2].phys.nid = PTL_NID_ANY;
	cr_assert_eq(PtlSetMap(lni, 3, map), PTL_ARG_INVALID);
	map[2].phys.nid = 0x7f000001u;
	cr_assert_eq(PtlSetMap(lni, 3, map), PTL_OK);
	cr_assert_eq(PtlGetMap(lni, 3, out, &n), PTL_OK);
	cr_assert_eq(n, 3);
	cr_assert_eq(memcmp(out, map, sizeof(map)), 0);
	cr_assert_eq(PtlGetMap(lni, 0, NULL, &n), PTL_OK);
	cr_assert_eq(n, 3);
	cr_assert_eq(PtlGetMap(lni, 3, out, NULL), PTL_ARG_INVALID);
	cr_assert_eq(PtlGetId(lni, &id), PTL_OK);
	cr_assert_eq(id.rank, 1);
	/* a later map replaces it */
	cr_assert_eq(PtlSetMap(lni, 2, &map[1]), PTL_OK);
	cr_assert_eq(PtlGetId(lni, &id), PTL_OK);
	cr_assert_eq(id.rank, 0);
	/* bundles nest */
	cr_assert_eq(PtlEndBundle(lni), PTL_ARG_INVALID);
	cr_assert_eq(PtlStartBundle(lni), PTL_OK);
	cr_assert_eq(PtlStartBundle(lni), PTL_OK);
	cr_assert_eq(PtlEndBundle(lni), PTL_OK);
	cr_assert_eq(PtlEndBundle(lni), PTL_OK);
	cr_assert_eq(PtlEndBundle(lni), PTL_ARG_INVALID);
	cr_assert_eq(PtlStartBundle(PTL_INVALID_HANDLE), PTL_ARG_INVALID);
}

Test(native_api, timeouts)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq[2];
	ptl_handle_ct_t ct[2];
	ptl_size_t tests[2] = { 1, 1 };
	ptl_ct_event_t cev;
	ptl_event_t ev;
	unsigned which = 99;

	t_init_loop();
	ni = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlEQAlloc(ni, 4, &eq[0]), PTL_OK);
	cr_assert_eq(PtlEQAlloc(ni, 4, &eq[1]), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &ct[0]), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &ct[1]), PTL_OK);
	cr_assert_eq(PtlEQPoll(eq, 2, 0, &ev, &which), PTL_EQ_EMPTY);
	cr_assert_eq(PtlEQPoll(eq, 2, 30, &ev, &which), PTL_EQ_EMPTY);
	cr_assert_eq(PtlCTPoll(ct, tests, 2, 30, &cev, &which),
		     PTL_CT_NONE_REACHED);
	cr_assert_eq(PtlCTInc(ct[1], (ptl_ct_event_t){ 0, 1 }), PTL_OK);
	/* success + failure reaches the test */
	cr_assert_eq(PtlCTPoll(ct, tests, 2, 30, &cev, &which), PTL_OK);
	cr_assert_eq(which, 1);
	cr_assert_eq(cev.failure, 1);
	cr_assert_eq(PtlCTPoll(ct, tests, 0, 30, &cev, &which),
		     PTL_ARG_INVALID);
}

static ptl_handle_eq_t abort_eq;
static ptl_handle_ct_t abort_ct;

static void *abort_waiter(void *arg)
{
	ptl_event_t ev;
	ptl_ct_event_t cev;

	if (arg)
		return (void *)(intptr_t)PtlCTWait(abort_ct, 5, &cev);
	return (void *)(intptr_t)PtlEQWait(abort_eq, &ev);
}

Test(native_api, abort_wakes_waiters)
{
	pthread_t t1, t2;
	ptl_handle_ni_t ni;
	void *r1, *r2;

	t_init_loop();
	ni = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlEQAlloc(ni, 4, &abort_eq), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &abort_ct), PTL_OK);
	cr_assert_eq(pthread_create(&t1, NULL, abort_waiter, NULL), 0);
	cr_assert_eq(pthread_create(&t2, NULL, abort_waiter, (void *)1), 0);
	usleep(100 * 1000);	/* let them block (not needed for correctness) */
	PtlAbort();
	/* a waiter that had not blocked yet still waits: abort again until
	 * both are out */
	for (;;) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		if (!pthread_timedjoin_np(t1, &r1, &ts))
			break;
		PtlAbort();
	}
	for (;;) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		if (!pthread_timedjoin_np(t2, &r2, &ts))
			break;
		PtlAbort();
	}
	cr_assert_eq((intptr_t)r1, PTL_ABORTED);
	cr_assert_eq((intptr_t)r2, PTL_ABORTED);
}
