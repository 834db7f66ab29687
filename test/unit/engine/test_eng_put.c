/*
 * test_eng_put.c - put and get through two NIs: data lands byte for
 * byte, the events of both sides come in order with the right fields,
 * every size (eager, rendezvous, pushed replies) and every ack kind.
 * SEND semantics, matching, ordering, limits and late responses are in
 * test_eng_send.c (same suite and fixture, p4e_put_test.h). The fixture
 * runs on the loop transport (or TCP with P4E_TEST_TRANSPORT=tcp: tests
 * that need the loop's hooks or its delivery order skip or relax there).
 *
 * Offsets, truncation, permissions and MD options are in test_eng_data.c;
 * atomics in test_eng_atomic.c.
 *
 * The engine's private header is included for the NI's transport
 * instance (for the loop's hold / inject / stats hooks).
 */
#include "p4e_put_test.h"
#include "p4e_priv.h"

TestSuite(eng_put, .init = put_setup, .fini = put_teardown,
	  .timeout = 60);

/* ---- put: sizes, every field of both sides' events -------------------- */

static void put_and_check(size_t len, enum p4e_ack_req ack_req)
{
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	fill(src, len, (uint8_t)len);
	memset(dst, 0, len + 64);
	append_me(1, dst, len + 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0x42, 0,
		  (void *)0x1111, 0x77);
	md = eng_md(&e, 0, src, len, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, len, 0x42);
	x.ack_req = ack_req;
	x.user_ptr = (void *)0x2222;
	x.user_flags = 0x99;
	x.hdr_data = 0xdeadbeefcafef00dULL;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);

	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.list, P4E_PRIORITY_LIST);
	cr_expect_eq(ev.pt_index, e.pt[1]);
	cr_expect_eq(ev.mlength, len);
	cr_expect_eq(ev.rlength, len);
	cr_expect_eq(ev.remote_offset, 0);
	cr_expect_eq(ev.match_bits, 0x42);
	cr_expect_eq(ev.hdr_data, 0xdeadbeefcafef00dULL);
	cr_expect_eq(ev.user_ptr, (void *)0x1111);
	cr_expect_eq(ev.user_flags, 0x77);
	cr_expect_eq(ev.initiator, e.id[0]);
	cr_expect_eq(ev.uid, 1000);
	cr_expect_eq(ev.start, dst);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
	cr_expect_eq(memcmp(src, dst, len), 0, "data of %zu bytes", len);
	cr_expect_eq(dst[len], 0, "nothing past the message");

	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_SEND);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.user_ptr, (void *)0x2222);
	cr_expect_eq(ev.user_flags, 0x99);
	cr_expect_eq(ev.start, src);
	cr_expect_eq(ev.rlength, len);
	cr_expect_eq(ev.match_bits, 0x42);
	cr_expect_eq(ev.hdr_data, 0xdeadbeefcafef00dULL);
	cr_expect_eq(ev.pt_index, e.pt[1]);
	if (ack_req != P4E_NO_ACK_REQ) {
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_ACK);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
		cr_expect_eq(ev.mlength, len);
		cr_expect_eq(ev.rlength, len);
		cr_expect_eq(ev.remote_offset, 0);
		cr_expect_eq(ev.list, P4E_PRIORITY_LIST);
		cr_expect_eq(ev.user_ptr, (void *)0x2222);
		cr_expect_eq(ev.user_flags, 0x99);
		cr_expect_eq(ev.start, src);
		cr_expect_eq(ev.match_bits, 0x42);
		cr_expect_eq(ev.hdr_data, 0xdeadbeefcafef00dULL);
		cr_expect_eq(ev.pt_index, e.pt[1]);
	}
	eng_no_event(&e, 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_put, small)
{
	put_and_check(1, P4E_ACK_REQ);
	put_and_check(8, P4E_ACK_REQ);
}

Test(eng_put, zero_bytes)
{
	put_and_check(0, P4E_ACK_REQ);
}

Test(eng_put, eager_limit)
{
	put_and_check(4096, P4E_ACK_REQ);
}

Test(eng_put, rendezvous)
{
	put_and_check(4097, P4E_ACK_REQ);
	put_and_check(1 << 20, P4E_ACK_REQ);
	/* the data came by pulls, not in the request */
	if (eng_is_loop())
		cr_expect_eq(loop_stats(1).pulls, 2);
}

Test(eng_put, no_ack_req_every_size)
{
	static const size_t sizes[] = { 0, 1, 64, 3000, 4096, 4097, 1 << 20 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		put_and_check(sizes[i], P4E_NO_ACK_REQ);
}

Test(eng_put, ack_accept_every_size)
{
	static const size_t sizes[] = { 0, 64, 3000, 4097, 1 << 20 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		put_and_check(sizes[i], P4E_ACK_ACCEPT);
}

/* ---- get: sizes, eager reply and pushed reply ------------------------- */

static void get_and_check(size_t len)
{
	uint64_t pushes = eng_is_loop() ? loop_stats(1).pushes : 0;
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	fill(dst, len, (uint8_t)(len + 1));
	memset(src, 0, len + 64);
	append_me(1, dst, len, P4E_ME_OP_GET | P4E_ME_USE_ONCE, 0x7, 0,
		  (void *)0x3333, 0x55);
	md = eng_md(&e, 0, src, len + 64, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, len, 0x7);
	x.user_ptr = (void *)0x4444;
	x.user_flags = 0x66;
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);

	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_GET);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.list, P4E_PRIORITY_LIST);
	cr_expect_eq(ev.pt_index, e.pt[1]);
	cr_expect_eq(ev.mlength, len);
	cr_expect_eq(ev.rlength, len);
	cr_expect_eq(ev.match_bits, 0x7);
	cr_expect_eq(ev.initiator, e.id[0]);
	cr_expect_eq(ev.uid, 1000);
	cr_expect_eq(ev.start, dst);
	cr_expect_eq(ev.user_ptr, (void *)0x3333);
	cr_expect_eq(ev.user_flags, 0x55);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);

	/* a get sends nothing of the caller's: REPLY only */
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_REPLY);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.mlength, len);
	cr_expect_eq(ev.rlength, len);
	cr_expect_eq(ev.remote_offset, 0);
	cr_expect_eq(ev.start, src);
	cr_expect_eq(ev.user_ptr, (void *)0x4444);
	cr_expect_eq(ev.user_flags, 0x66);
	cr_expect_eq(ev.match_bits, 0x7);
	cr_expect_eq(ev.pt_index, e.pt[1]);
	eng_no_event(&e, 0);
	cr_expect_eq(memcmp(src, dst, len), 0, "data of %zu bytes", len);
	cr_expect_eq(src[len], 0, "nothing past the reply");
	/* replies above eager_size are pushed into the initiator's buffer */
	if (eng_is_loop())
		cr_expect_eq(loop_stats(1).pushes - pushes, len > 4096 ? 1 : 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_put, get_sizes)
{
	get_and_check(0);
	get_and_check(1);
	get_and_check(4096);
}

Test(eng_put, get_large_reply_pushed)
{
	get_and_check(4097);
	get_and_check(1 << 20);
}

/* ---- ack kinds ---------------------------------------------------------- */

/* Put len bytes with ack_req from an MD counting acks on a fresh CT. */
static uint64_t put_counted(size_t len, enum p4e_ack_req ack_req,
			    unsigned md_opts, unsigned me_opts, uint64_t *ct_p)
{
	struct p4e_xfer x;
	uint64_t md;

	cr_assert_eq(p4e_ct_alloc(e.dom, ct_p), 0);
	fill(src, len, 9);
	append_me(1, dst, 100, me_opts, 1, 0, NULL, 0);
	md = eng_md(&e, 0, src, len, md_opts, *ct_p);
	x = eng_xfer(&e, 0, md, len, 1);
	x.ack_req = ack_req;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
	return md;
}

Test(eng_put, ct_ack_req_counts_without_event)
{
	static const size_t sizes[] = { 10, 3000, 8000 };
	struct p4e_ct_event v;
	uint64_t ct;
	size_t i;

	for (i = 0; i < 3; i++) {
		/* the ME holds 100 bytes: mlength, not rlength, is counted */
		put_counted(sizes[i], P4E_CT_ACK_REQ,
			    P4E_MD_EVENT_CT_ACK | P4E_MD_EVENT_CT_BYTES,
			    P4E_ME_OP_PUT | P4E_ME_USE_ONCE, &ct);
		v = eng_ct(e.dom, ct);
		cr_expect_eq(v.success, sizes[i] < 100 ? sizes[i] : 100);
		cr_expect_eq(v.failure, 0);
		cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
		eng_no_event(&e, 0);	/* no full ACK event */
		cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT);
		cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_AUTO_UNLINK);
	}
	/* a failed operation counts as a failure, still without an event */
	put_counted(10, P4E_CT_ACK_REQ, P4E_MD_EVENT_CT_ACK,
		    P4E_ME_OP_GET | P4E_ME_USE_ONCE, &ct);
	v = eng_ct(e.dom, ct);
	cr_expect_eq(v.success, 0);
	cr_expect_eq(v.failure, 1);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
	eng_no_event(&e, 0);
}

/*
 * PTL_OC_ACK_REQ: "a counting type of acknowledgment, but it can only
 * count operations", sent even when the target dropped the message: one
 * per operation, never bytes, never a full event.
 */
Test(eng_put, oc_ack_req_counts_operations)
{
	struct p4e_ct_event v;
	uint64_t ct;

	put_counted(50, P4E_OC_ACK_REQ,
		    P4E_MD_EVENT_CT_ACK | P4E_MD_EVENT_CT_BYTES,
		    P4E_ME_OP_PUT | P4E_ME_USE_ONCE, &ct);
	v = eng_ct(e.dom, ct);
	cr_expect_eq(v.success, 1, "counted %lu", (unsigned long)v.success);
	cr_expect_eq(v.failure, 0);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
	eng_no_event(&e, 0);
	cr_expect_eq(memcmp(dst, src, 50), 0);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_AUTO_UNLINK);

	/* rejected at the target (no OP_PUT): still one completed op */
	put_counted(50, P4E_OC_ACK_REQ, P4E_MD_EVENT_CT_ACK,
		    P4E_ME_OP_GET | P4E_ME_USE_ONCE, &ct);
	v = eng_ct(e.dom, ct);
	cr_expect_eq(v.success, 1);
	cr_expect_eq(v.failure, 0);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
	eng_no_event(&e, 0);
}

/* No operation-completed ack arrives over a failed link: a failure. */
Test(eng_put, oc_ack_req_link_failure)
{
	struct p4e_ct_event v;
	struct p4e_xfer x;
	uint64_t md, ct;
	char addr[64];
	size_t alen = sizeof(addr);

	need_loop();
	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	append_me(1, dst, 100, P4E_ME_OP_PUT, 1, 0, NULL, 0);
	md = eng_md(&e, 0, src, 50, P4E_MD_EVENT_CT_ACK, ct);
	x = eng_xfer(&e, 0, md, 50, 1);
	x.ack_req = P4E_OC_ACK_REQ;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	cr_assert_eq(p4e_ni_getname(e.ni[1], addr, &alen), 0);
	cr_assert_eq(p4t_loop_fail_link(iface_of(0), addr, alen,
					-FI_ECONNRESET), 0);
	eng_progress(&e);
	v = eng_ct(e.dom, ct);
	cr_expect_eq(v.success, 0);
	cr_expect_eq(v.failure, 1);
	eng_no_event(&e, 1);
}

Test(eng_put, ack_req_reports_remote_offset)
{
	static const size_t sizes[] = { 64, 3000, 9000 };
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;
	size_t i;

	for (i = 0; i < 3; i++) {
		fill(src, sizes[i], (uint8_t)i);
		memset(dst, 0, 20000);
		append_me(1, dst, 20000, P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 3, 0,
			  NULL, 0);
		md = eng_md(&e, 0, src, sizes[i], 0, P4E_HANDLE_NONE);
		x = eng_xfer(&e, 0, md, sizes[i], 3);
		x.remote_offset = 777;
		cr_assert_eq(p4e_put(e.ni[0], &x), 0);
		eng_progress(&e);
		cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_ACK);
		cr_expect_eq(ev.mlength, sizes[i]);
		cr_expect_eq(ev.remote_offset, 777);
		ev = eng_event(&e, 1);
		cr_expect_eq(ev.start, dst + 777);
		cr_expect_eq(ev.remote_offset, 777);
		cr_expect_eq(memcmp(dst + 777, src, sizes[i]), 0);
		cr_expect_eq(dst[776], 0);
		cr_expect_eq(dst[777 + sizes[i]], 0);
		eng_event_type(&e, 1, P4E_EVENT_AUTO_UNLINK);
		cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	}
}

/* ACK_ACCEPT: the ACK comes when the target has taken the message. */
Test(eng_put, ack_accept_after_acceptance)
{
	static const size_t sizes[] = { 64, 3000, 9000 };
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;
	size_t i;
	int k;

	for (i = 0; i < 3; i++) {
		fill(src, sizes[i], 2);
		append_me(1, dst, 10000, P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 6, 0,
			  NULL, 0);
		md = eng_md(&e, 0, src, sizes[i], P4E_MD_EVENT_SEND_DISABLE,
			    P4E_HANDLE_NONE);
		x = eng_xfer(&e, 0, md, sizes[i], 6);
		x.ack_req = P4E_ACK_ACCEPT;
		cr_assert_eq(p4e_put(e.ni[0], &x), 0);
		for (k = 0; k < 10; k++)
			p4e_ni_progress(e.ni[0], 64);
		eng_no_event(&e, 0);
		eng_progress(&e);
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_ACK);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
		cr_expect_eq(ev.mlength, sizes[i]);
		eng_no_event(&e, 0);
		cr_expect_eq(memcmp(dst, src, sizes[i]), 0);
		eng_event_type(&e, 1, P4E_EVENT_PUT);
		cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_AUTO_UNLINK);
		cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	}
}

/* ACK_ACCEPT: a failed operation gives one ACK with the failure. */
Test(eng_put, ack_accept_failure_never_success_first)
{
	static const size_t sizes[] = { 64, 3000, 9000 };
	int64_t opv = status_reg(1, P4E_SR_OPERATION_VIOLATIONS);
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md, me;
	size_t i;

	for (i = 0; i < 3; i++) {
		fill(src, sizes[i], 1);
		memset(dst, 0, sizes[i]);
		me = append_me(1, dst, 10000, P4E_ME_OP_GET | P4E_ME_USE_ONCE,
			       5, 0, NULL, 0);
		md = eng_md(&e, 0, src, sizes[i], 0, P4E_HANDLE_NONE);
		x = eng_xfer(&e, 0, md, sizes[i], 5);
		x.ack_req = P4E_ACK_ACCEPT;
		cr_assert_eq(p4e_put(e.ni[0], &x), 0);
		eng_progress(&e);
		/* SEND only frees the buffer, whatever the size: the
		 * target's verdict is the ACK's */
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_SEND);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK, "size %zu", sizes[i]);
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_ACK);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OP_VIOLATION,
			     "size %zu: fail %d", sizes[i], ev.ni_fail_type);
		cr_expect_eq(ev.mlength, 0);
		eng_no_event(&e, 0);
		eng_no_event(&e, 1);
		cr_expect_eq(dst[0], 0);
		cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
		cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	}
	cr_expect_eq(status_reg(1, P4E_SR_OPERATION_VIOLATIONS) - opv, 3);
}
