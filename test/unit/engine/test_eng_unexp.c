/*
 * test_eng_unexp.c - unexpected messages through two NIs on the loop
 * transport: headers of gets and atomics on the overflow list,
 * NO_TRUNCATE at the target and at append, moving the data of unexpected
 * messages (UH_COPY, RDZV_HDR_ONLY rendezvous), and matching order through
 * the engine (rule 1, list order across ignore masks and sources).
 * Same suite (eng_search) and fixture as test_eng_search.c.
 */
#include "p4e_list_test.h"
#include "p4u_compiler.h"

TestSuite(eng_search, .init = list_setup, .fini = list_teardown, .timeout = 30);

/* ---- gets and atomics on the overflow list, truncation -------------------- */

Test(eng_search, get_on_overflow_leaves_header)
{
	static uint8_t sink[64];
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	memcpy(obuf, src[1], 64);
	append(P4E_OVERFLOW_LIST, obuf, 64, P4E_ME_OP_GET, 0x6, OFL);
	ev_is(1, P4E_EVENT_LINK);
	md = eng_md(&e, 0, sink, sizeof(sink), 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 32, 0x6);
	x.remote_offset = 8;
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_GET);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	ev = ev_is(0, P4E_EVENT_REPLY);
	cr_expect_eq(ev.mlength, 32);
	cr_expect_eq(memcmp(sink, src[1] + 8, 32), 0);

	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_USE_ONCE, 0x6, PRI);
	ev = ev_is(1, P4E_EVENT_GET_OVERFLOW);
	cr_expect_eq(ev.mlength, 32);
	cr_expect_eq(ev.remote_offset, 8);
	cr_expect_eq(ev.start, obuf + 8);
	cr_expect_eq(ev.initiator, e.id[0]);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
}

static void atomic_on_overflow(bool fetch)
{
	static uint64_t operand = 3, old;
	uint64_t *target = (uint64_t *)(void *)obuf;
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	*target = 5;
	append(P4E_OVERFLOW_LIST, obuf, 8, P4E_ME_OP_PUT | P4E_ME_OP_GET, 0xa,
	       OFL);
	ev_is(1, P4E_EVENT_LINK);
	md = eng_md(&e, 0, &operand, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0xa);
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	if (fetch) {
		x.get_md = eng_md(&e, 0, &old, 8, 0, P4E_HANDLE_NONE);
		cr_assert_eq(p4e_fetch_atomic(e.ni[0], &x), 0);
	} else {
		cr_assert_eq(p4e_atomic(e.ni[0], &x), 0);
	}
	eng_progress(&e);
	ev = ev_is(1, fetch ? P4E_EVENT_FETCH_ATOMIC : P4E_EVENT_ATOMIC);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	cr_expect_eq(*target, 8);

	append(P4E_PRIORITY_LIST, pbuf, 8, P4E_ME_USE_ONCE, 0xa, PRI);
	ev = ev_is(1, fetch ? P4E_EVENT_FETCH_ATOMIC_OVERFLOW :
			      P4E_EVENT_ATOMIC_OVERFLOW);
	cr_expect_eq(ev.atomic_op, P4E_SUM);
	cr_expect_eq(ev.atomic_type, P4E_UINT64);
	cr_expect_eq(ev.mlength, 8);
	cr_expect_eq(ev.start, obuf);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	if (fetch)
		cr_expect_eq(old, 5);
}

Test(eng_search, atomic_on_overflow_leaves_header)
{
	atomic_on_overflow(false);
}

Test(eng_search, fetch_atomic_on_overflow_leaves_header)
{
	atomic_on_overflow(true);
}

Test(eng_search, no_truncate_entries_need_room)
{
	struct p4e_event ev;

	/* at the target: a too small NO_TRUNCATE entry is passed over */
	append(P4E_PRIORITY_LIST, pbuf, 8, P4E_ME_OP_PUT | P4E_ME_NO_TRUNCATE,
	       0x1, PRI);
	append(P4E_PRIORITY_LIST, pbuf + 64, 64, P4E_ME_OP_PUT, 0x1, PRI2);
	ev_is(1, P4E_EVENT_LINK);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 16, 0x1, 0);
	put(1, 8, 0x1, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_ptr, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_ptr, PRI);
	eng_drain(&e, 0);

	/* at append: a header longer than the entry is left alone */
	oflow(0, 256, 0x3);
	land(0, 32, 0x3, 1);
	append(P4E_PRIORITY_LIST, pbuf, 16, P4E_ME_NO_TRUNCATE |
	       P4E_ME_USE_ONCE, 0x3, PRI);
	ev_is(1, P4E_EVENT_LINK);
	append(P4E_PRIORITY_LIST, pbuf, 32, P4E_ME_NO_TRUNCATE |
	       P4E_ME_USE_ONCE, 0x3, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.user_ptr, PRI2);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
}

/* ---- moving the data of unexpected messages ----------------------------- */

Test(eng_search, uh_copy_moves_data_into_the_entry)
{
	struct p4e_event ev;

	oflow(0, 256, 0x9);
	put_x(0, 100, 0x9, 7, 16);	/* lands at obuf + 16 */
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.start, obuf + 16);
	ini_done(P4E_NI_OK, 100);

	append(P4E_PRIORITY_LIST, pbuf, 512,
	       P4E_ME_OP_PUT | P4E_ME_USE_ONCE | P4E_ME_UH_COPY, 0x9, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf + 16, "start points into the new entry");
	cr_expect_eq(ev.mlength, 100);
	cr_expect_eq(ev.remote_offset, 16);
	cr_expect_eq(memcmp(pbuf + 16, src[0], 100), 0);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
}

Test(eng_search, uh_copy_moves_only_put_data)
{
	static uint8_t sink[16];
	struct p4e_xfer x;
	struct p4e_event ev;
	size_t i;

	memcpy(obuf, src[1], 64);
	memset(pbuf, 0xee, 64);
	append(P4E_OVERFLOW_LIST, obuf, 64, P4E_ME_OP_GET, 0x6, OFL);
	ev_is(1, P4E_EVENT_LINK);
	x = eng_xfer(&e, 0, eng_md(&e, 0, sink, sizeof(sink), 0,
				   P4E_HANDLE_NONE), 16, 0x6);
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_GET);
	/* a get read the overflow entry: the new entry gets nothing */
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_USE_ONCE | P4E_ME_UH_COPY,
	       0x6, PRI);
	ev = ev_is(1, P4E_EVENT_GET_OVERFLOW);
	cr_expect_eq(ev.start, obuf);
	cr_expect_eq(ev.mlength, 16);
	for (i = 0; i < 64; i++)
		cr_assert_eq(pbuf[i], 0xee, "byte %zu of the entry written", i);
}

Test(eng_search, uh_copy_truncates_to_the_entry)
{
	struct p4e_event ev;

	oflow(0, 256, 0x9);
	land(0, 100, 0x9, 1);
	memset(pbuf, 0xee, 64);
	append(P4E_PRIORITY_LIST, pbuf, 10, P4E_ME_USE_ONCE | P4E_ME_UH_COPY,
	       0x9, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 10);
	cr_expect_eq(ev.rlength, 100);
	cr_expect_eq(memcmp(pbuf, src[0], 10), 0);
	cr_expect_eq(pbuf[10], 0xee);
}

Test(eng_search, uh_copy_between_iovecs)
{
	struct iovec oiov[3] = {
		{ obuf, 100 }, { obuf + 200, 5000 }, { obuf + 6000, 9000 },
	};
	struct iovec piov[2] = { { pbuf, 3000 }, { pbuf + 4000, 8000 } };
	struct p4e_me_desc d;
	struct p4e_event ev;

	/* a rendezvous put is pulled into a scattered overflow entry */
	d = eng_me_desc(oiov, 3, P4E_ME_OP_PUT | P4E_ME_IOVEC, 0x2, 0);
	eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(2, 10000, 0x2, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, 10000);
	ini_done(P4E_NI_OK, 10000);
	d = eng_me_desc(piov, 2, P4E_ME_OP_PUT | P4E_ME_IOVEC |
			P4E_ME_USE_ONCE | P4E_ME_UH_COPY, 0x2, 0);
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 10000);
	cr_expect_eq(ev.start, pbuf);
	cr_expect_eq(memcmp(pbuf, src[2], 3000), 0);
	cr_expect_eq(memcmp(pbuf + 4000, src[2] + 3000, 7000), 0);
	cr_expect_eq(pbuf[3000], 0, "the gap between segments untouched");
}

/* ---- rendezvous and the overflow list ----------------------------------- */

Test(eng_search, rdzv_hdr_only_keeps_the_header_and_pulls_later)
{
	struct p4e_event ev;

	oflow(P4E_ME_RDZV_HDR_ONLY, 64, 0x77);
	put(0, 10000, 0x77, 0x1d);
	eng_progress(&e);
	eng_no_event(&e, 1);
	eng_no_event(&e, 0);	/* no SEND, no ACK: nothing moved yet */
	cr_expect_eq(obuf[0], 0, "no overflow space used");

	append(P4E_PRIORITY_LIST, pbuf, sizeof(pbuf),
	       P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0x77, PRI);
	eng_no_event(&e, 1);	/* events after the work */
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf, "the data went straight into the entry");
	cr_expect_eq(ev.mlength, 10000);
	cr_expect_eq(ev.rlength, 10000);
	cr_expect_eq(ev.hdr_data, 0x1d);
	cr_expect_eq(memcmp(pbuf, src[0], 10000), 0);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
	ini_done(P4E_NI_OK, 10000);
	eng_no_event(&e, 0);
}

Test(eng_search, remote_offsets_past_the_entry_move_nothing)
{
	struct p4e_event ev;

	/* rule 4 on the unexpected paths: an offset past the new entry
	 * leaves nothing to move (UBSan: and no pointer formed past it) */
	oflow(P4E_ME_RDZV_HDR_ONLY, 64, 0x5);
	put_x(0, 10000, 0x5, 1, UINT64_MAX - 100);
	eng_progress(&e);
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE,
	       0x5, PRI);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 0);
	cr_expect_eq(ev.remote_offset, UINT64_MAX - 100);
	ini_done(P4E_NI_OK, 0);
	eng_drain(&e, 1);
	/* an eager one copied by UH_COPY */
	oflow(0, 64, 0x6);
	put_x(1, 8, 0x6, 2, 8);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	append(P4E_PRIORITY_LIST, pbuf, 4, P4E_ME_USE_ONCE | P4E_ME_UH_COPY,
	       0x6, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 0);
	cr_expect_eq(pbuf[0], 0);
}

Test(eng_search, remote_offset_past_an_entry_at_the_target)
{
	struct p4e_event ev;

	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT, 0x5, PRI);
	ev_is(1, P4E_EVENT_LINK);
	put_x(0, 8, 0x5, 1, UINT64_MAX - 100);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, 0);
	ini_done(P4E_NI_OK, 0);
}

Test(eng_search, rdzv_without_hdr_only_is_pulled_into_the_overflow_entry)
{
	struct p4e_event ev;

	oflow(0, 64, 0x78);
	put(0, 10000, 0x78, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	cr_expect_eq(ev.mlength, 64);
	cr_expect_eq(ev.rlength, 10000);
	cr_expect_eq(memcmp(obuf, src[0], 64), 0);
	ini_done(P4E_NI_OK, 64);

	append(P4E_PRIORITY_LIST, pbuf, sizeof(pbuf),
	       P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0x78, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, obuf);
	cr_expect_eq(ev.mlength, 64);
	cr_expect_eq(ev.rlength, 10000);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
}

Test(eng_search, rdzv_header_not_matchable_before_its_data_is_in)
{
	struct p4e_event ev;

	eng_need_loop("its steps assume the loop's delivery order");
	oflow(0, 64, 0x79);
	put(0, 10000, 0x79, 0);
	/* the header reaches the target, the pull is still pending */
	cr_assert_eq(p4e_ni_progress(e.ni[1], 1), 1);
	append(P4E_PRIORITY_LIST, pbuf, sizeof(pbuf),
	       P4E_ME_OP_PUT | P4E_ME_USE_ONCE | P4E_ME_UH_COPY, 0x79, PRI);
	eng_progress(&e);
	/* the overflow entry got its data first, then the priority entry */
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(memcmp(pbuf, src[0], 64), 0);
}

/* The same through a claim: the delivery waits for the data. */
Test(eng_search, claimed_rdzv_header_delivered_once_its_data_is_in)
{
	struct p4e_event ev;
	uint64_t uh;

	eng_need_loop("its steps assume the loop's delivery order");
	oflow(0, 64, 0x7a);
	put(0, 10000, 0x7a, 0);
	cr_assert_eq(p4e_ni_progress(e.ni[1], 1), 1);
	uh = claim(0x7a);
	cr_assert_eq(deliver(uh, pbuf, sizeof(pbuf)), 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(ev.mlength, 64);
	cr_expect_eq(memcmp(pbuf, src[0], 64), 0);
	eng_no_event(&e, 1);
}

/* ---- matching order ------------------------------------------------------------ */

/* A third NI on the domain, to have two initiators. */
static struct p4e_ni *third_open(uint32_t *id_p)
{
	struct p4e_ni_attr attr = {
		.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL,
		.transport = &p4t_loop_ops,
		.eager_size = 4096,
		.uid = 1002,
	};
	struct p4e_ni *ni;
	char addr[64];
	size_t len = sizeof(addr);

	cr_assert_eq(p4e_ni_create(e.dom, &attr, &ni), 0);
	cr_assert_eq(p4e_ni_getname(ni, addr, &len), 0);
	cr_assert_eq(p4e_peer_lookup(e.dom, addr, len, id_p), 0);
	return ni;
}

static void third_put(struct p4e_ni *ni, uint64_t bits, uint64_t hdr_data)
{
	struct p4e_md_desc d = {
		.start = src[2], .length = 8, .eq = NULL, .ct = P4E_HANDLE_NONE,
	};
	struct p4e_xfer x = {
		.length = 8, .ack_req = P4E_ACK_REQ, .target = e.id[1],
		.pt_index = e.pt[1], .match_bits = bits, .hdr_data = hdr_data,
		.get_md = P4E_HANDLE_NONE,
	};

	cr_assert_eq(p4e_md_bind(ni, &d, &x.md), 0);
	cr_assert_eq(p4e_put(ni, &x), 0);
}

static uint64_t append_id(uint64_t bits, uint64_t ignore, uint32_t id,
			  unsigned opt, void *user_ptr)
{
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT | opt, bits,
					   ignore);

	d.match_id = id;
	return eng_append(&e, 1, &d, P4E_PRIORITY_LIST, user_ptr);
}

Test(eng_search, match_rule_uses_xor_not_and)
{
	struct p4e_event ev;

	/* rule 1: bits set in ignored positions do not stop a match */
	append_id(0xff, 0xf0, P4E_ID_ANY, 0, PRI);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x0f, 1);
	put(0, 8, 0xaf, 2);
	put(0, 8, 0x0e, 3);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.hdr_data, 1);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.hdr_data, 2);
	eng_no_event(&e, 1);
	cr_expect_eq(sr(1, P4E_SR_DROP_COUNT), 1);
}

Test(eng_search, list_order_with_mixed_masks_and_sources)
{
	static const struct {
		uint64_t bits;
		int from;		/* 0: ni[0], 2: the third NI */
		void *want;
	} plan[] = {
		{ 0x10f, 0, (void *)0xb },	/* A is for the third NI */
		{ 0x10f, 0, (void *)0xc },
		{ 0x10f, 0, (void *)0xd },
		{ 0x1ab, 2, (void *)0xa },
		{ 0x1ab, 2, (void *)0xa },	/* A is persistent */
		{ 0x200, 0, (void *)0xd },	/* E came later than D */
		{ 0x0ff, 2, (void *)0xd },
	};
	struct p4e_event ev;
	struct p4e_ni *ni2;
	uint32_t id2;
	size_t i;

	eng_need_loop("its steps assume the loop's delivery order");
	ni2 = third_open(&id2);
	append_id(0x100, 0x0ff, id2, 0, (void *)0xa);
	append_id(0x1ff, 0x0f0, P4E_ID_ANY, P4E_ME_USE_ONCE, (void *)0xb);
	append_id(0x100, 0x0ff, e.id[0], P4E_ME_USE_ONCE, (void *)0xc);
	append_id(0, UINT64_MAX, P4E_ID_ANY, 0, (void *)0xd);
	append_id(0x200, 0, P4E_ID_ANY, 0, (void *)0xe);
	for (i = 0; i < 5; i++)
		ev_is(1, P4E_EVENT_LINK);
	for (i = 0; i < P4U_ARRAY_SIZE(plan); i++) {
		if (plan[i].from)
			third_put(ni2, plan[i].bits, i);
		else
			put(0, 8, plan[i].bits, i);
		eng_progress(&e);
		ev = ev_is(1, P4E_EVENT_PUT);
		cr_expect_eq(ev.user_ptr, plan[i].want, "put %zu went to %p",
			     i, ev.user_ptr);
		cr_expect_eq(ev.initiator, plan[i].from ? id2 : e.id[0]);
		cr_expect_eq(ev.uid, plan[i].from ? 1002 : 1000);
		while (p4e_eq_ring_get(e.eq[1], &ev) == 0)
			cr_assert_eq(ev.type, P4E_EVENT_AUTO_UNLINK);
	}
	cr_assert_eq(p4e_ni_destroy(ni2), 0);
}

Test(eng_search, unexpected_order_with_masks_and_sources)
{
	struct p4e_event ev;
	struct p4e_ni *ni2;
	uint32_t id2;

	eng_need_loop("its steps assume the loop's delivery order");
	ni2 = third_open(&id2);
	oflow_all(4096);
	put(0, 8, 0x1, 1);
	eng_progress(&e);
	third_put(ni2, 0x2, 2);
	eng_progress(&e);
	put(0, 8, 0x3, 3);
	eng_progress(&e);
	third_put(ni2, 0x1, 4);
	eng_progress(&e);
	while (p4e_eq_ring_get(e.eq[1], &ev) == 0)
		cr_assert_eq(ev.type, P4E_EVENT_PUT);

	/* from the third NI only, any bits: 2 then 4, in arrival order */
	append_id(0, UINT64_MAX, id2, 0, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 2);
	cr_expect_eq(ev.initiator, id2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 4);
	ev_is(1, P4E_EVENT_LINK);
	/* bit 0 set, bit 1 ignored, anyone: the oldest left is 1, then 3 */
	append_id(0x1, 0x2, P4E_ID_ANY, P4E_ME_USE_ONCE, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 1);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	append_id(0x3, 0, e.id[0], P4E_ME_USE_ONCE, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 3);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	append_id(0, UINT64_MAX, P4E_ID_ANY, P4E_ME_USE_ONCE, PRI2);
	ev_is(1, P4E_EVENT_LINK);	/* none left */
	cr_assert_eq(p4e_ni_destroy(ni2), 0);
}
