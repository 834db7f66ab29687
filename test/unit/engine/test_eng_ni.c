/*
 * test_eng_ni.c - portal table and NI rules through two NIs on the loop
 * transport: PT options (ONLY_USE_ONCE, ONLY_TRUNCATE, ALLOC_DISABLED),
 * disable / enable, PT_ANY, pt_free while in use, unallocated indexes;
 * non-matching and logical NIs; limits honoured and reported; status
 * registers; names and peer ids; destroying NIs with work pending (leaks
 * show under --enable-sanitize).
 */
#include "p4e_test.h"
#include "p4e_priv.h"

static struct eng e;

#define PRI ((void *)0x9a1)
#define PRI2 ((void *)0x9a2)
#define OFL ((void *)0x0f1)

static uint8_t src[16384];
static uint8_t obuf[16384], pbuf[16384];

static void setup(void)
{
	size_t i;

	eng_open(&e);
	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	memset(obuf, 0, sizeof(obuf));
	memset(pbuf, 0, sizeof(pbuf));
}

static void teardown(void)
{
	eng_close(&e);
}

TestSuite(eng_ni, .init = setup, .fini = teardown, .timeout = 30);

/* ---- helpers ------------------------------------------------------------ */

/* Like eng_open_opts, with desired limits for both NIs. */
static void reopen(unsigned ni_options, const struct p4e_ni_limits *desired)
{
	struct p4e_ni_attr attr;
	char addr[64];
	size_t len;
	int i;

	eng_close(&e);
	memset(&e, 0, sizeof(e));
	cr_assert_eq(p4e_dom_create(NULL, &e.dom), 0);
	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.options = ni_options;
		attr.transport = &p4t_loop_ops;
		attr.eager_size = 4096;
		attr.uid = 1000 + i;
		if (desired)
			attr.desired = *desired;
		cr_assert_eq(p4e_ni_create(e.dom, &attr, &e.ni[i]), 0);
		len = sizeof(addr);
		cr_assert_eq(p4e_ni_getname(e.ni[i], addr, &len), 0);
		cr_assert_eq(p4e_peer_lookup(e.dom, addr, len, &e.id[i]), 0);
		cr_assert_eq(p4e_eq_ring_create(256, &e.eq[i]), 0);
		cr_assert_eq(p4e_pt_alloc(e.ni[i], 0, e.eq[i], P4E_PT_ANY,
					  &e.pt[i]), 0);
	}
}

#define ev_is(side, type) eng_ev_is(&e, side, type)
#define ini_done(fail, mlength) eng_ini_done(&e, 0, fail, mlength)
#define ack_next() eng_ack_next(&e, 0)
#define sr(side, i) eng_sr(&e, side, i)

/* A put of len bytes from side 0 to side 1's PT pt (target: as named). */
static void put_to(uint32_t target, uint32_t pt, size_t len, uint64_t bits,
		   uint64_t hdr_data)
{
	uint64_t md = eng_md(&e, 0, src, len, 0, P4E_HANDLE_NONE);
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, bits);

	x.target = target;
	x.pt_index = pt;
	x.hdr_data = hdr_data;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
}

static void put(size_t len, uint64_t bits, uint64_t hdr_data)
{
	put_to(e.id[1], e.pt[1], len, bits, hdr_data);
}

static int append_pt(uint32_t pt, enum p4e_list list, unsigned opt,
		     uint64_t bits, uint64_t *me_p)
{
	struct p4e_me_desc d = eng_me_desc(list == P4E_OVERFLOW_LIST ? obuf :
					   pbuf, 4096, opt, bits, 0);

	return p4e_me_append(e.ni[1], pt, &d, list,
			     list == P4E_OVERFLOW_LIST ? OFL : PRI, 0, me_p);
}

static uint64_t append(enum p4e_list list, unsigned opt, uint64_t bits)
{
	uint64_t me;

	cr_assert_eq(append_pt(e.pt[1], list, opt, bits, &me), 0);
	return me;
}

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

Test(eng_ni, only_use_once_refuses_persistent_entries)
{
	uint32_t pt;
	uint64_t me;

	cr_assert_eq(p4e_pt_alloc(e.ni[1], P4E_PT_ONLY_USE_ONCE, e.eq[1],
				  P4E_PT_ANY, &pt), 0);
	cr_expect_eq(append_pt(pt, P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 1, &me),
		     -FI_EINVAL);
	cr_expect_eq(append_pt(pt, P4E_OVERFLOW_LIST, P4E_ME_OP_PUT, 1, &me),
		     -FI_EINVAL);
	cr_expect_eq(append_pt(pt, P4E_PRIORITY_LIST, P4E_ME_OP_PUT |
			       P4E_ME_USE_ONCE, 1, &me), 0);
	ev_is(1, P4E_EVENT_LINK);
	eng_no_event(&e, 1);
}

Test(eng_ni, only_truncate_refuses_no_truncate)
{
	uint32_t pt;
	uint64_t me;

	cr_assert_eq(p4e_pt_alloc(e.ni[1], P4E_PT_ONLY_TRUNCATE, e.eq[1],
				  P4E_PT_ANY, &pt), 0);
	cr_expect_eq(append_pt(pt, P4E_PRIORITY_LIST, P4E_ME_OP_PUT |
			       P4E_ME_NO_TRUNCATE, 1, &me), -FI_EINVAL);
	cr_expect_eq(append_pt(pt, P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 1, &me),
		     0);
	ev_is(1, P4E_EVENT_LINK);
	/* and the plain entry truncates */
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

/* ---- limits ------------------------------------------------------------------ */

Test(eng_ni, default_limits_reported)
{
	struct p4e_ni_limits l;

	p4e_ni_limits_get(e.ni[0], &l);
	cr_expect_geq(l.max_pt_index, 63);
	cr_expect_gt(l.max_entries, 0);
	cr_expect_gt(l.max_unexpected_headers, 0);
	cr_expect_gt(l.max_list_size, 0);
	cr_expect_leq(l.max_list_size, l.max_entries);
	cr_expect_gt(l.max_mds, 0);
	cr_expect_gt(l.max_cts, 0);
	cr_expect_gt(l.max_msg_size, 4096);
	cr_expect_geq(l.max_waw_ordered_size, 64);
	cr_expect_geq(l.max_war_ordered_size, 8);
	cr_expect_gt(l.max_ops, 0);
	cr_expect_gt(l.max_iovecs, 0);
}

Test(eng_ni, max_entries_honoured)
{
	struct p4e_ni_limits want = { .max_entries = 4 }, got;
	uint64_t me[4], extra;
	int i;

	reopen(P4E_NI_MATCHING | P4E_NI_PHYSICAL, &want);
	p4e_ni_limits_get(e.ni[1], &got);
	cr_expect_eq(got.max_entries, 4);
	for (i = 0; i < 4; i++)
		cr_assert_eq(append_pt(e.pt[1], i % 2, P4E_ME_OP_PUT, i,
				       &me[i]), 0);
	cr_expect_eq(append_pt(e.pt[1], P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 9,
			       &extra), -FI_ENOSPC);
	cr_expect_eq(append_pt(e.pt[1], P4E_OVERFLOW_LIST, P4E_ME_OP_PUT, 9,
			       &extra), -FI_ENOSPC);
	cr_assert_eq(p4e_me_unlink(e.ni[1], me[1], 0), 0);
	cr_expect_eq(append_pt(e.pt[1], P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 9,
			       &extra), 0);
}

Test(eng_ni, max_list_size_honoured)
{
	struct p4e_ni_limits want = { .max_entries = 16, .max_list_size = 3 };
	struct p4e_ni_limits got;
	uint64_t me;
	uint32_t pt;
	int i;

	reopen(P4E_NI_MATCHING | P4E_NI_PHYSICAL, &want);
	p4e_ni_limits_get(e.ni[1], &got);
	cr_expect_eq(got.max_list_size, 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(append_pt(e.pt[1], P4E_PRIORITY_LIST, 0, i, &me),
			     0);
		cr_assert_eq(append_pt(e.pt[1], P4E_OVERFLOW_LIST, 0, i, &me),
			     0);
	}
	cr_expect_eq(append_pt(e.pt[1], P4E_PRIORITY_LIST, 0, 9, &me),
		     -FI_ENOSPC);
	cr_expect_eq(append_pt(e.pt[1], P4E_OVERFLOW_LIST, 0, 9, &me),
		     -FI_ENOSPC);
	/* per list: another PT has its own */
	cr_assert_eq(p4e_pt_alloc(e.ni[1], 0, e.eq[1], P4E_PT_ANY, &pt), 0);
	cr_expect_eq(append_pt(pt, P4E_PRIORITY_LIST, 0, 9, &me), 0);
}

Test(eng_ni, max_unexpected_headers_drops_without_flow_control)
{
	struct p4e_ni_limits want = { .max_unexpected_headers = 2 }, got;
	struct p4e_event ev;
	int i;

	reopen(P4E_NI_MATCHING | P4E_NI_PHYSICAL, &want);
	p4e_ni_limits_get(e.ni[1], &got);
	cr_expect_eq(got.max_unexpected_headers, 2);
	{
		struct p4e_me_desc d = eng_me_desc(obuf, 1024, P4E_ME_OP_PUT |
						   P4E_ME_MANAGE_LOCAL, 0, 0);

		eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);
	}
	ev_is(1, P4E_EVENT_LINK);
	for (i = 0; i < 3; i++)
		put(8, 0, i);
	eng_progress(&e);
	for (i = 0; i < 2; i++) {
		ev = ev_is(1, P4E_EVENT_PUT);
		cr_expect_eq(ev.hdr_data, i);
		ev = ack_next();
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	}
	eng_no_event(&e, 1);
	ev = ack_next();
	cr_expect_eq(ev.ni_fail_type, P4E_NI_DROPPED);
	cr_expect_eq(ev.hdr_data, 2);
	cr_expect_eq(sr(1, P4E_SR_DROP_COUNT), 1);
	/* the drop changed nothing: a header freed, the next put lands
	 * right after the second */
	append(P4E_PRIORITY_LIST, P4E_ME_USE_ONCE, 0);
	ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	put(8, 0, 9);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.start, obuf + 16);
	ini_done(P4E_NI_OK, 8);
}

Test(eng_ni, max_mds_honoured)
{
	struct p4e_ni_limits want = { .max_mds = 2 };
	struct p4e_md_desc d = { .start = src, .length = 8 };
	uint64_t md;

	reopen(P4E_NI_MATCHING | P4E_NI_PHYSICAL, &want);
	cr_assert_eq(p4e_md_bind(e.ni[0], &d, &md), 0);
	cr_assert_eq(p4e_md_bind(e.ni[0], &d, &md), 0);
	cr_expect_neq(p4e_md_bind(e.ni[0], &d, &md), 0);
	cr_assert_eq(p4e_md_release(e.ni[0], md), 0);
	cr_expect_eq(p4e_md_bind(e.ni[0], &d, &md), 0);
}

/* ---- status registers, names, peers -------------------------------------------- */

Test(eng_ni, status_registers)
{
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT, 0x1, 0);
	int64_t v;
	uint64_t me;

	d.uid = 1000;			/* the initiator's */
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   PRI, 0, &me), 0);
	d.uid = 7;
	d.match_bits = 0x2;
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   PRI, 0, &me), 0);
	ev_is(1, P4E_EVENT_LINK);
	ev_is(1, P4E_EVENT_LINK);
	put(8, 0x1, 0);			/* ok */
	put(8, 0x2, 0);			/* uid */
	put(8, 0x3, 0);			/* no match */
	{
		uint64_t md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
		struct p4e_xfer x = eng_xfer(&e, 0, md, 8, 0x1);

		cr_assert_eq(p4e_get(e.ni[0], &x), 0);	/* no OP_GET */
	}
	eng_progress(&e);
	cr_expect_eq(ack_next().ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ack_next().ni_fail_type, P4E_NI_PERM_VIOLATION);
	cr_expect_eq(ack_next().ni_fail_type, P4E_NI_DROPPED);
	cr_expect_eq(ev_is(0, P4E_EVENT_REPLY).ni_fail_type,
		     P4E_NI_OP_VIOLATION);
	cr_expect_eq(sr(1, P4E_SR_DROP_COUNT), 1);
	cr_expect_eq(sr(1, P4E_SR_PERMISSION_VIOLATIONS), 1);
	cr_expect_eq(sr(1, P4E_SR_OPERATION_VIOLATIONS), 1);
	cr_expect_eq(sr(1, P4E_SR_MALFORMED), 0);
	/* counted where it happened, not at the initiator */
	cr_expect_eq(sr(0, P4E_SR_DROP_COUNT), 0);
	cr_expect_eq(sr(0, P4E_SR_PERMISSION_VIOLATIONS), 0);
	cr_expect_eq(sr(0, P4E_SR_OPERATION_VIOLATIONS), 0);
	cr_expect_eq(p4e_ni_status(e.ni[0], P4E_SR_LAST, &v), -FI_EINVAL);
	cr_expect_eq(p4e_ni_status(e.ni[0], (enum p4e_sr_index)-1, &v),
		     -FI_EINVAL);
	cr_expect_eq(p4e_ni_status(e.ni[0], P4E_SR_DROP_COUNT, NULL),
		     -FI_EINVAL);
}

Test(eng_ni, rejected_operation_changes_nothing)
{
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT |
					   P4E_ME_USE_ONCE |
					   P4E_ME_MANAGE_LOCAL |
					   P4E_ME_EVENT_CT_COMM, 0x1, 0);
	struct p4e_ct_event v;
	struct p4e_event ev;
	uint64_t me;

	/* pitfall 2: no offset advance, no use-once use, no count */
	cr_assert_eq(p4e_ct_alloc(e.dom, &d.ct), 0);
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   PRI, 0, &me), 0);
	ev_is(1, P4E_EVENT_LINK);
	{
		uint64_t md = eng_md(&e, 0, obuf, 8, 0, P4E_HANDLE_NONE);
		struct p4e_xfer x = eng_xfer(&e, 0, md, 8, 0x1);

		cr_assert_eq(p4e_get(e.ni[0], &x), 0);	/* no OP_GET */
	}
	eng_progress(&e);
	cr_expect_eq(ev_is(0, P4E_EVENT_REPLY).ni_fail_type,
		     P4E_NI_OP_VIOLATION);
	eng_no_event(&e, 1);
	v = eng_ct(e.dom, d.ct);
	cr_expect(v.success == 0 && v.failure == 0);
	put(8, 0x1, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.start, pbuf, "the offset did not move");
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(eng_ct(e.dom, d.ct).success, 1);
}

Test(eng_ni, domain_limits)
{
	struct p4e_dom_attr attr = { .max_peers = 2 };
	struct p4e_dom *dom;
	uint32_t id, first;
	char addr[16] = { 1 };

	cr_expect_eq(p4e_dom_destroy(e.dom), -FI_EBUSY, "NIs are open");
	cr_assert_eq(p4e_dom_create(&attr, &dom), 0);
	cr_assert_eq(p4e_peer_lookup(dom, addr, sizeof(addr), &first), 0);
	addr[0] = 2;
	cr_assert_eq(p4e_peer_lookup(dom, addr, sizeof(addr), &id), 0);
	addr[0] = 3;
	cr_expect_eq(p4e_peer_lookup(dom, addr, sizeof(addr), &id), -FI_ENOSPC);
	addr[0] = 1;
	cr_expect_eq(p4e_peer_lookup(dom, addr, sizeof(addr), &id), 0,
		     "known addresses still resolve");
	cr_expect_eq(id, first);
	cr_expect_eq(p4e_dom_destroy(dom), 0);
}

Test(eng_ni, getname)
{
	char a0[64], a1[64], small[2];
	size_t l0 = sizeof(a0), l1 = sizeof(a1), ls = sizeof(small);
	uint32_t id;

	cr_assert_eq(p4e_ni_getname(e.ni[0], a0, &l0), 0);
	cr_assert_eq(p4e_ni_getname(e.ni[1], a1, &l1), 0);
	cr_expect(l0 != l1 || memcmp(a0, a1, l0), "two NIs, two names");
	cr_assert_eq(p4e_peer_lookup(e.dom, a1, l1, &id), 0);
	cr_expect_eq(id, e.id[1]);
	cr_expect_eq(p4e_ni_getname(e.ni[0], small, &ls), -FI_ETOOSMALL);
	cr_expect_eq(ls, l0, "the size it needs");
	cr_expect_eq(p4e_ni_getname(NULL, a0, &l0), -FI_EINVAL);
}

Test(eng_ni, peer_ids_stable_per_address)
{
	char a[64], back[64], tiny[1];
	size_t la = sizeof(a), lb = sizeof(back), lt = sizeof(tiny);
	uint32_t id, again;

	cr_assert_eq(p4e_ni_getname(e.ni[0], a, &la), 0);
	cr_assert_eq(p4e_peer_lookup(e.dom, a, la, &id), 0);
	cr_expect_eq(id, e.id[0]);
	cr_assert_eq(p4e_peer_lookup(e.dom, a, la, &again), 0);
	cr_expect_eq(again, id);
	cr_expect_neq(e.id[0], e.id[1]);
	cr_assert_eq(p4e_peer_addr(e.dom, id, back, &lb), 0);
	cr_expect_eq(lb, la);
	cr_expect_eq(memcmp(a, back, la), 0);
	cr_expect_eq(p4e_peer_addr(e.dom, id, tiny, &lt), -FI_ETOOSMALL);
	cr_expect_eq(lt, la);
	cr_expect_eq(p4e_peer_addr(e.dom, 999999, back, &lb), -FI_EINVAL);
	cr_expect_eq(p4e_peer_lookup(e.dom, a, 0, &id), -FI_EINVAL);
	/* a different address is a different peer, for good */
	a[la - 1] ^= 0x5a;
	cr_assert_eq(p4e_peer_lookup(e.dom, a, la, &id), 0);
	cr_expect(id != e.id[0] && id != e.id[1]);
	cr_assert_eq(p4e_peer_lookup(e.dom, a, la, &again), 0);
	cr_expect_eq(again, id);
}

Test(eng_ni, initiator_id_learned_by_the_target_matches_lookup)
{
	struct p4e_ni_attr attr = {
		.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL,
		.transport = &p4t_loop_ops, .uid = 1002,
	};
	struct p4e_md_desc md = { .start = src, .length = 8 };
	struct p4e_xfer x = {
		.length = 8, .ack_req = P4E_NO_ACK_REQ, .target = e.id[1],
		.pt_index = e.pt[1], .match_bits = 0x1,
		.get_md = P4E_HANDLE_NONE,
	};
	struct p4e_event ev;
	struct p4e_ni *ni;
	char addr[64];
	size_t len = sizeof(addr);
	uint32_t id;

	append(P4E_PRIORITY_LIST, P4E_ME_OP_PUT, 0x1);
	ev_is(1, P4E_EVENT_LINK);
	/* nobody looks the new NI up before it sends */
	cr_assert_eq(p4e_ni_create(e.dom, &attr, &ni), 0);
	cr_assert_eq(p4e_md_bind(ni, &md, &x.md), 0);
	cr_assert_eq(p4e_put(ni, &x), 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_assert_eq(p4e_ni_getname(ni, addr, &len), 0);
	cr_assert_eq(p4e_peer_lookup(e.dom, addr, len, &id), 0);
	cr_expect_eq(ev.initiator, id);
	cr_expect_eq(ev.uid, 1002);
	cr_assert_eq(p4e_ni_destroy(ni), 0);
}

/* ---- destroy with work pending ------------------------------------------------- */

/* Leave a bit of everything on NI 1 and in flight from NI 0. */
static void leave_everything(void)
{
	struct p4e_me_desc d;
	struct p4e_trig trig = { .threshold = 5 };
	struct p4e_event ev;
	uint64_t me, ct;
	uint32_t pt2;

	cr_assert_eq(p4e_pt_alloc(e.ni[1], 0, e.eq[1], P4E_PT_ANY, &pt2), 0);
	d = eng_me_desc(obuf, 8192, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL, 0x10,
			0xf);
	eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);
	d = eng_me_desc(obuf + 8192, 64, P4E_ME_OP_PUT | P4E_ME_RDZV_HDR_ONLY,
			0x20, 0xf);
	eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);
	d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0x30, 0);
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	cr_assert_eq(p4e_me_append(e.ni[1], pt2, &d, P4E_PRIORITY_LIST, PRI, 0,
				   &me), 0);
	d = eng_me_desc(pbuf + 64, 8192, P4E_ME_OP_PUT, 0x40, 0);
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	/* eager and rendezvous headers, one of them claimed */
	put(8, 0x11, 1);
	put(16, 0x12, 2);
	put(10000, 0x21, 3);
	put(10000, 0x22, 4);
	eng_progress(&e);
	d = eng_me_desc(NULL, 0, 0, 0x12, 0);
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_CLAIM,
				   NULL, 0), 0);
	/* a triggered append that will never fire */
	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	trig.ct = ct;
	d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT, 0x50, 0);
	cr_assert_eq(p4e_trig_me_append(e.ni[1], e.pt[1], &d,
					P4E_PRIORITY_LIST, NULL, 0, &trig,
					&me), 0);
	/* a pull in flight into a priority entry ... */
	put(8192, 0x40, 5);
	cr_assert_eq(p4e_ni_progress(e.ni[1], 1), 1);
	/* ... and messages queued behind a held NI */
	p4t_loop_hold(e.ni[1]->iface, true);
	put(8, 0x30, 6);
	put(10000, 0x40, 7);
	while (p4e_eq_ring_get(e.eq[1], &ev) == 0)
		;
	while (p4e_eq_ring_get(e.eq[0], &ev) == 0)
		;
}

Test(eng_ni, destroy_target_with_everything_pending)
{
	struct p4e_event ev;
	int fails = 0;

	leave_everything();
	cr_assert_eq(p4e_ni_destroy(e.ni[1]), 0);
	e.ni[1] = NULL;
	eng_progress(&e);
	/* every put still owed something completes, with a failure */
	while (p4e_eq_ring_get(e.eq[0], &ev) == 0) {
		cr_expect(ev.type == P4E_EVENT_SEND || ev.type == P4E_EVENT_ACK,
			  "event %d", ev.type);
		if (ev.type == P4E_EVENT_ACK) {
			cr_expect_neq(ev.ni_fail_type, P4E_NI_OK,
				      "put %lu", (unsigned long)ev.hdr_data);
			fails++;
		}
	}
	/* the two unexpected rendezvous, the pull and the queued two */
	cr_expect_eq(fails, 5);
}

Test(eng_ni, destroy_initiator_with_everything_pending)
{
	struct p4e_event ev;

	leave_everything();
	p4t_loop_hold(e.ni[1]->iface, false);
	cr_assert_eq(p4e_ni_destroy(e.ni[0]), 0);
	e.ni[0] = NULL;
	eng_progress(&e);
	/* the pull found its source gone */
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.hdr_data, 5);
	cr_expect_neq(ev.ni_fail_type, P4E_NI_OK);
}
