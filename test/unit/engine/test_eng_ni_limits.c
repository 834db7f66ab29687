/*
 * test_eng_ni_limits.c - NI rules through two NIs on the loop transport
 * (suite eng_ni, fixture p4e_ni_test.h, as test_eng_ni.c): limits
 * honoured and reported; status registers; names and peer ids;
 * destroying NIs with work pending (leaks show under --enable-sanitize).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "p4e_ni_test.h"
#include "p4e_priv.h"
#include "p4u_addr.h"

TestSuite(eng_ni, .init = ni_setup, .fini = ni_teardown,
	  .timeout = 30);

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

	/* rule 2: no offset advance, no use-once use, no count */
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

/*
 * A peer's name with a host token (p4u_addr.h) and without one are the
 * same peer; the address kept is without it, the token kept as a hint.
 */
Test(eng_ni, host_token_does_not_split_a_peer)
{
	struct p4e_dom_attr attr = { 0 };
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(5000) };
	struct sockaddr_in b;
	struct p4e_dom *dom;
	uint32_t plain, stamped;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	b = a;
	p4u_addr_stamp(&b, sizeof(b), 0x0102030405060708ull);
	cr_assert_eq(p4e_dom_create(&attr, &dom), 0);
	cr_assert_eq(p4e_peer_lookup(dom, &a, sizeof(a), &plain), 0);
	cr_expect_eq(p4e_dom_peer(dom, plain)->token, 0);
	cr_assert_eq(p4e_peer_lookup(dom, &b, sizeof(b), &stamped), 0);
	cr_expect_eq(stamped, plain);
	cr_expect_eq(p4e_dom_peer(dom, plain)->token, 0x0102030405060708ull,
		     "the token seen later is kept");
	cr_expect_eq(memcmp(p4e_dom_peer(dom, plain)->addr, &a, sizeof(a)), 0,
		     "kept without the token");
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
	/* a different address (another port) is a different peer, for
	 * good; the last bytes of a sockaddr_in (sin_zero) would not do:
	 * they carry a host token, which identity ignores */
	a[3] ^= 0x5a;
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

	eng_need_loop("its steps assume the loop's delivery order");
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
	p4t_loop_hold(e.ni[1]->xp[P4E_XP_NET].iface, true);
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

	eng_need_loop("its steps assume the loop's delivery order");
	leave_everything();
	p4t_loop_hold(e.ni[1]->xp[P4E_XP_NET].iface, false);
	cr_assert_eq(p4e_ni_destroy(e.ni[0]), 0);
	e.ni[0] = NULL;
	eng_progress(&e);
	/* the pull found its source gone */
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.hdr_data, 5);
	cr_expect_neq(ev.ni_fail_type, P4E_NI_OK);
}
