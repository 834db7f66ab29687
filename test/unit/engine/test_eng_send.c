/*
 * test_eng_send.c - more of put through two NIs (suite eng_put, fixture
 * p4e_put_test.h, as test_eng_put.c): SEND semantics (copied, held,
 * rendezvous), running out of operations, a response through a full link,
 * match and ignore bits, directed match_id, ordering across eager and
 * rendezvous, and late or lying responses (rules 6, 14).
 *
 * The engine's private header is included for two things only: the NI's
 * transport instance (for the loop's hold / inject / stats hooks) and the
 * wire op id of an operation in flight (to forge a stale response).
 */
#include "p4e_put_test.h"
#include "p4e_priv.h"

TestSuite(eng_put, .init = put_setup, .fini = put_teardown,
	  .timeout = 60);

/* ---- SEND semantics ----------------------------------------------------- */

/*
 * A copied payload (small, or from a VOLATILE MD) gives SEND before
 * p4e_put returns; the caller may overwrite the buffer at once and the
 * target still gets what was there at the call.
 */
static void send_at_once(size_t len, unsigned md_opts)
{
	static uint8_t want[4096];
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	fill(src, len, 0x21);
	memcpy(want, src, len);
	memset(dst, 0, len);
	append_me(1, dst, len, P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0, 0, NULL, 0);
	md = eng_md(&e, 0, src, len, md_opts, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, len, 0);
	/*
	 * Nothing has progressed: the target has not seen the put yet. On a
	 * link that is up (loop) SEND comes at once; on a new TCP link the
	 * copy left with the HELLO and SEND waits for the peer's answer
	 * (docs/design.md §7.6): the buffer is reusable either way.
	 */
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	if (eng_is_loop()) {
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_SEND);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	}
	memset(src, 0xff, len);
	eng_progress(&e);
	if (!eng_is_loop()) {
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_SEND);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	}
	cr_expect_eq(memcmp(dst, want, len), 0, "target got the buffer as "
		     "it was at the call (%zu bytes)", len);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_ACK);
	eng_no_event(&e, 0);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_put, send_small_copied)
{
	send_at_once(1, 0);
	send_at_once(1024, 0);
}

Test(eng_put, send_volatile_copied)
{
	send_at_once(3000, P4E_MD_VOLATILE);
	send_at_once(4096, P4E_MD_VOLATILE);
}

/*
 * With the engine's default sizes (eager 16 KiB) a VOLATILE payload may be
 * larger than the engine copies; it must still arrive whole, and several
 * in flight at once must not overrun each other.
 */
Test(eng_put, volatile_larger_than_copy)
{
	enum { N = 16000 };
	struct p4e_xfer x;
	uint64_t md;
	int k, sends = 0;

	eng_close(&e);
	eng_open_opts(&e, P4E_NI_MATCHING | P4E_NI_PHYSICAL, 0, 16384);
	fill(src, 3 * N, 0x17);
	memset(dst, 0, 3 * N);
	append_me(1, dst, 3 * N, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL, 0, 0,
		  NULL, 0);
	md = eng_md(&e, 0, src, 3 * N, P4E_MD_VOLATILE, P4E_HANDLE_NONE);
	/* no progress in between: all three are in flight together */
	for (k = 0; k < 3; k++) {
		x = eng_xfer(&e, 0, md, N, 0);
		x.local_offset = (uint64_t)k * N;
		cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	}
	eng_progress(&e);
	cr_expect_eq(memcmp(dst, src, 3 * N), 0);
	for (k = 0; k < 3; k++)
		cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT);
	/* SEND comes at once or at acceptance: count, not order */
	for (k = 0; k < 6; k++) {
		struct p4e_event ev = eng_event(&e, 0);

		cr_expect(ev.type == P4E_EVENT_SEND || ev.type == P4E_EVENT_ACK);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
		sends += ev.type == P4E_EVENT_SEND;
	}
	cr_expect_eq(sends, 3);
	eng_no_event(&e, 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

/* Larger eager (and rendezvous) payloads: SEND only once accepted. */
static void send_after_accept(size_t len)
{
	struct p4e_xfer x;
	uint64_t md;
	int i;

	fill(src, len, 0x5);
	append_me(1, dst, len, P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0, 0, NULL, 0);
	md = eng_md(&e, 0, src, len, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, len, 0);
	x.ack_req = P4E_NO_ACK_REQ;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	/* the initiator alone can do nothing: the target has not seen it */
	for (i = 0; i < 10; i++)
		p4e_ni_progress(e.ni[0], 64);
	eng_no_event(&e, 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), -FI_EBUSY);
	eng_progress(&e);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
	eng_no_event(&e, 0);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(memcmp(dst, src, len), 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_put, send_after_acceptance)
{
	send_after_accept(1025);
	send_after_accept(4096);
	send_after_accept(4097);
	send_after_accept(100000);
}

/* Out of operation slots (max_ops): -FI_EAGAIN, and fine after progress. */
Test(eng_put, eagain_when_ops_exhausted)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);
	struct p4e_md_desc mdd = { .start = src, .length = 64 };
	struct eng_node c;
	struct p4e_xfer x;
	uint64_t md;
	int k;

	attr.desired.max_ops = 4;
	eng_node_open(&c, e.dom, &attr, 0, 64);
	append_me(1, dst, 64, P4E_ME_OP_PUT, 0, 0, NULL, 0);
	cr_assert_eq(p4e_md_bind(c.ni, &mdd, &md), 0);
	x = eng_xfer(&e, 0, md, 8, 0);
	/* no progress: all four slots stay taken */
	for (k = 0; k < 4; k++)
		cr_assert_eq(p4e_put(c.ni, &x), 0);
	cr_expect_eq(p4e_put(c.ni, &x), -FI_EAGAIN);
	eng_progress(&e);
	cr_expect_eq(p4e_put(c.ni, &x), 0);
	eng_progress(&e);
	for (k = 0; k < 5; k++)
		cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT);
	eng_no_event(&e, 1);
	cr_expect_eq(p4e_md_release(c.ni, md), 0);
	eng_node_close(&c);
}

/*
 * A response the transport cannot take right now (-FI_EAGAIN: the link's
 * queue is full) must still reach the initiator later.
 */
Test(eng_put, response_survives_full_link)
{
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;
	int k;

	need_loop();
	fill(dst, 4096, 0x66);
	append_me(1, dst, 4096, P4E_ME_OP_GET, 0, 0, NULL, 0);
	md = eng_md(&e, 0, src, 4 * 4096, 0, P4E_HANDLE_NONE);
	/* side 0 takes one message at a time; it reads nothing meanwhile */
	p4t_loop_set_queue_limit(iface_of(0), 1);
	p4t_loop_hold(iface_of(0), true);
	for (k = 0; k < 4; k++) {
		x = eng_xfer(&e, 0, md, 4096, 0);
		x.local_offset = (uint64_t)k * 4096;
		cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	}
	eng_progress(&e);
	p4t_loop_hold(iface_of(0), false);
	eng_progress(&e);
	for (k = 0; k < 4; k++) {
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_REPLY);
		cr_expect_eq(memcmp(src + k * 4096, dst, 4096), 0);
	}
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

/* ---- matching: bits, ignore bits, directed match_id --------------------- */

/* Put 8 bytes with bits; returns the ACK's failure kind. */
static uint8_t put_bits(uint64_t bits, struct p4e_ni *from, struct p4e_eq *eq)
{
	struct p4e_md_desc d = { .start = src, .length = 8, .eq = eq };
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	cr_assert_eq(p4e_md_bind(from, &d, &md), 0);
	x = eng_xfer(&e, 0, md, 8, bits);
	cr_assert_eq(p4e_put(from, &x), 0);
	eng_progress(&e);
	ev = eng_eq_event(eq);
	cr_expect_eq(ev.type, P4E_EVENT_SEND);
	ev = eng_eq_event(eq);
	cr_expect_eq(ev.type, P4E_EVENT_ACK);
	eng_eq_empty(eq);
	cr_expect_eq(p4e_md_release(from, md), 0);
	return ev.ni_fail_type;
}

Test(eng_put, match_and_ignore_bits)
{
	int64_t drops = status_reg(1, P4E_SR_DROP_COUNT);
	struct p4e_event ev;

	/* rule 1: the entry has bits set in ignored positions */
	append_me(1, dst, 64, P4E_ME_OP_PUT, 0xab77, 0x00ff, NULL, 0);
	cr_expect_eq(put_bits(0xab42, e.ni[0], e.eq[0]), P4E_NI_OK);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.match_bits, 0xab42, "the initiator's bits");
	cr_expect_eq(put_bits(0xab00, e.ni[0], e.eq[0]), P4E_NI_OK);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT);
	/* a bit outside the ignore mask differs: no match, dropped */
	cr_expect_eq(put_bits(0xac42, e.ni[0], e.eq[0]), P4E_NI_DROPPED);
	cr_expect_eq(put_bits(0x1ab42, e.ni[0], e.eq[0]), P4E_NI_DROPPED);
	eng_no_event(&e, 1);
	cr_expect_eq(status_reg(1, P4E_SR_DROP_COUNT) - drops, 2);
}

Test(eng_put, directed_match_id)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);
	struct eng_node c;
	struct p4e_event ev;
	uint32_t cid;
	uint64_t me;

	eng_node_open(&c, e.dom, &attr, 0, 64);
	cid = eng_peer_of(e.dom, c.ni);
	{
		struct p4e_me_desc d = eng_me_desc(dst, 64, P4E_ME_OP_PUT,
						   9, 0);

		d.match_id = cid;
		cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d,
					   P4E_PRIORITY_LIST, NULL, 0, &me),
			     0);
		cr_assert_eq(eng_event(&e, 1).type, P4E_EVENT_LINK);
	}
	/* ni[0] is not the named peer: no match */
	cr_expect_eq(put_bits(9, e.ni[0], e.eq[0]), P4E_NI_DROPPED);
	eng_no_event(&e, 1);
	/* the named peer matches */
	cr_expect_eq(put_bits(9, c.ni, c.eq), P4E_NI_OK);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.initiator, cid);
	cr_expect_eq(ev.uid, 2000);
	eng_node_close(&c);
}

/* ---- ordering ------------------------------------------------------------ */

/*
 * Many puts of mixed eager and rendezvous sizes into one locally managed
 * entry: the offsets they got follow send order (matching order, on every
 * transport); on the loop, which completes a pull before it delivers the
 * next message, the target's events and the initiator's ACKs come in
 * send order too.
 */
Test(eng_put, ordering_eager_and_rendezvous)
{
	static const size_t sizes[] = { 8, 5000, 100, 4097, 4096, 20000,
					0, 3000, 1, 70000 };
	enum { N = 40 };
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md, off = 0, offs[N];
	bool seen[N] = { false }, acked[N] = { false };
	size_t total = 0;
	int i, k;

	for (i = 0; i < N; i++)
		total += sizes[i % 10];
	cr_assert(total <= sizeof(dst));
	fill(src, 70000, 0x33);
	memset(dst, 0, total);
	append_me(1, dst, total, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL, 4, 0,
		  NULL, 0);
	md = eng_md(&e, 0, src, 70000, P4E_MD_EVENT_SEND_DISABLE,
		    P4E_HANDLE_NONE);
	for (i = 0; i < N; i++) {
		x = eng_xfer(&e, 0, md, sizes[i % 10], 4);
		x.hdr_data = (uint64_t)i;
		x.user_ptr = (void *)(uintptr_t)i;
		cr_assert_eq(p4e_put(e.ni[0], &x), 0);
		offs[i] = off;
		off += sizes[i % 10];
	}
	eng_progress(&e);
	for (i = 0; i < N; i++) {
		ev = eng_event(&e, 1);
		cr_assert_eq(ev.type, P4E_EVENT_PUT);
		k = (int)ev.hdr_data;
		cr_assert(k >= 0 && k < N && !seen[k]);
		seen[k] = true;
		if (eng_is_loop())
			cr_expect_eq(k, i, "target event %d out of order", i);
		cr_expect_eq(ev.start, dst + offs[k], "offset of put %d", k);
		cr_expect_eq(memcmp(dst + offs[k], src, sizes[k % 10]), 0,
			     "data of put %d", k);
	}
	eng_no_event(&e, 1);
	for (i = 0; i < N; i++) {
		ev = eng_event(&e, 0);
		cr_assert_eq(ev.type, P4E_EVENT_ACK);
		k = (int)(uintptr_t)ev.user_ptr;
		cr_assert(k >= 0 && k < N && !acked[k]);
		acked[k] = true;
		if (eng_is_loop())
			cr_expect_eq(k, i, "ack %d out of order", i);
		cr_expect_eq(ev.remote_offset, offs[k]);
	}
	eng_no_event(&e, 0);
}

/* ---- late responses (rule 6) ------------------------------------------ */

/* The wire op id of the operation the initiator sent last to side 1. */
static uint64_t last_op_id(void)
{
	struct p4e_npeer *np = e.ni[0]->npeers[e.id[1]];
	struct p4u_list *lists[] = { &np->tx_sent, &np->tx_wait };
	struct p4e_op *op, *last = NULL;
	size_t i;

	for (i = 0; i < 2; i++)
		p4u_list_foreach_entry(lists[i], op, struct p4e_op, link)
			last = op;
	cr_assert_not_null(last);
	return p4u_pool_handle(&e.ni[0]->ops, last);	/* the wire op id */
}

/* Queue a response at side 0 as if side 1 had sent it. */
static void inject_response_mlen(uint8_t type, uint64_t op_id,
				 const void *data, size_t len,
				 uint64_t mlength)
{
	uint8_t msg[sizeof(struct p4w_hdr) + sizeof(struct p4w_resp) + 64];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = type,
		.length = (uint32_t)(sizeof(struct p4w_hdr) +
				     sizeof(struct p4w_resp) + len),
	};
	struct p4w_resp resp = { .op_id = op_id, .mlength = mlength };
	char addr[64];
	size_t alen = sizeof(addr);

	cr_assert(len <= 64);
	p4w_hdr_pack(msg, &hdr);
	p4w_resp_pack(msg + sizeof(hdr), &resp);
	if (len)
		memcpy(msg + sizeof(hdr) + sizeof(resp), data, len);
	cr_assert_eq(p4e_ni_getname(e.ni[1], addr, &alen), 0);
	cr_assert_eq(p4t_loop_inject(iface_of(0), addr, alen, msg, hdr.length),
		     0);
}

static void inject_response(uint8_t type, uint64_t op_id,
			    const void *data, size_t len)
{
	inject_response_mlen(type, op_id, data, len, len);
}

Test(eng_put, late_reply_dropped)
{
	static const uint8_t forged[16] = { 0xee, 0xee, 0xee, 0xee };
	int64_t drops = status_reg(0, P4E_SR_DROP_COUNT);
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md, stale;

	need_loop();
	/* get A completes; its op slot is then reused by get B */
	fill(dst, 16, 0x40);
	append_me(1, dst, 16, P4E_ME_OP_GET, 0, 0, NULL, 0);
	md = eng_md(&e, 0, src, 16, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 16, 0);
	memset(src, 0, 16);
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	stale = last_op_id();
	eng_progress(&e);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_REPLY);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_GET);

	memset(src, 0, 16);
	p4t_loop_hold(iface_of(1), true);
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	cr_expect_neq(last_op_id(), stale);
	cr_expect_eq((uint32_t)last_op_id(), (uint32_t)stale,
		     "the slot was reused (same index)");
	inject_response(P4W_REPLY, stale, forged, sizeof(forged));
	inject_response(P4W_ACK, stale, NULL, 0);
	eng_progress(&e);
	/* dropped and counted, nothing written into B's buffer */
	cr_expect_eq(status_reg(0, P4E_SR_DROP_COUNT) - drops, 2);
	cr_expect_eq(src[0], 0);
	eng_no_event(&e, 0);
	cr_expect_eq(status_reg(0, P4E_SR_MALFORMED), 0);

	/* B itself still completes, with the real data */
	p4t_loop_hold(iface_of(1), false);
	eng_progress(&e);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_REPLY);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(memcmp(src, dst, 16), 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_put, late_ack_for_freed_put_dropped)
{
	int64_t drops = status_reg(0, P4E_SR_DROP_COUNT);
	struct p4e_xfer x;
	uint64_t md, stale;

	need_loop();
	append_me(1, dst, 64, P4E_ME_OP_PUT, 0, 0, NULL, 0);
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0);
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	stale = last_op_id();
	eng_progress(&e);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_ACK);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	inject_response(P4W_ACK, stale, NULL, 0);
	eng_progress(&e);
	eng_no_event(&e, 0);
	cr_expect_eq(status_reg(0, P4E_SR_DROP_COUNT) - drops, 1);
}

/*
 * Rule 14: an ACK that claims more than was sent is malformed: the
 * link goes, the operation fails, and no event carries the claim.
 */
Test(eng_put, ack_mlength_beyond_rlength_refused)
{
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	need_loop();
	append_me(1, dst, 64, P4E_ME_OP_PUT, 0, 0, NULL, 0);
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0);
	p4t_loop_hold(iface_of(1), true);
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	inject_response_mlen(P4W_ACK, last_op_id(), NULL, 0, 1ULL << 36);
	p4e_ni_progress(e.ni[0], 64);
	cr_expect_eq(status_reg(0, P4E_SR_MALFORMED), 1);
	p4t_loop_hold(iface_of(1), false);
	eng_progress(&e);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_ACK);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_UNDELIVERABLE);
	cr_expect_leq(ev.mlength, 8);
	eng_no_event(&e, 0);
}
