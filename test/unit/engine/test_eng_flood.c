/*
 * test_eng_flood.c - a flood of copied puts the target takes only later
 * (docs/design.md §7.2, §7.5): past the target's payload room it keeps
 * headers and pulls the payloads the initiator kept, whose copies
 * completed at once; the initiator's copies are sized to their payload,
 * bounded (max_held, then the caller's buffer is held instead) and given
 * back; a spent header budget holds the sender and is counted; and a
 * response naming an operation whose pool chunk went back is refused.
 */
#include <inttypes.h>

#include "eng_fc_test.h"

TestSuite(eng_flood, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t keeper(struct eng_node *n)
{
	return append(n, NULL, 0, P4E_ME_OP_PUT | P4E_ME_HDR_ONLY, 0, ~0ULL,
		      P4E_OVERFLOW_LIST, 0, (void *)(intptr_t)ENG_LOG_OTHER);
}

/* b: FC_RESEND, max_uh headers, an overflow buffer of oflow bytes (none
 * if 0) taking messages while more than min_free is left, the keeper. */
static void target_setup(uint32_t max_uh, size_t oflow, uint64_t min_free)
{
	open_node(&nb, max_uh, 0, P4E_PT_FC_RESEND, 1024);
	if (oflow)
		append(&nb, obuf, oflow, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL |
		       P4E_ME_NO_TRUNCATE | P4E_ME_RDZV_HDR_ONLY, 0, ~0ULL,
		       P4E_OVERFLOW_LIST, min_free,
		       (void *)(intptr_t)ENG_LOG_OTHER);
	keeper(&nb);
}

/* a again, with these bounds (0: the defaults) */
static void initiator_setup(uint32_t max_ops, uint32_t max_held,
			    size_t copy_size, size_t copy_mem)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);

	eng_node_close(&na);
	attr.desired.max_ops = max_ops;
	attr.desired.max_held = max_held;
	attr.copy_size = copy_size;
	attr.copy_mem_max = copy_mem;
	eng_node_open(&na, dom, &attr, 0, 1024);
}

static size_t len_1000(int i)
{
	(void)i;
	return 1000;
}

static size_t len_100(int i)
{
	(void)i;
	return 100;
}

static size_t len_40(int i)
{
	(void)i;
	return 40;
}

static size_t len_8(int i)
{
	(void)i;
	return 8;
}

static void expect_sends(int first, int n, int want)
{
	for (; n--; first++)
		cr_expect_eq(tx.send[first][P4E_NI_OK], want,
			     "op %d: %d SEND events, expected %d", first,
			     tx.send[first][P4E_NI_OK], want);
}

/* Past the overflow buffer's room the target keeps only headers: the
 * copies completed at once all the same, the initiator keeps them until
 * the receives, posted later, pull them; nobody is held. */
Test(eng_flood, past_payload_room_copies_complete_and_are_pulled)
{
	enum { N = 40 };
	uint64_t md;

	target_setup(1024, 4000, 1001);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, N, len_1000, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	expect_sends(0, N, 1);
	cr_expect_eq(status_of(&nb, P4E_SR_FLOWCTRL), 0, "nobody held");
	cr_expect_gt(status_of(&nb, P4E_SR_FC_AS_RDZV), 0);
	cr_expect_geq(status_of(&na, P4E_SR_RESENT_AS_RDZV), N - 4);
	/* completed to the caller, kept for the target */
	cr_expect_geq(na.ni->held, N - 4);
	cr_expect_gt(na.ni->copies.bytes, 0);
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.delivered, 0);
	post_receives(0, N, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, len_1000, &rx, &tx, P4E_NO_ACK_REQ);
	cr_expect_eq(na.ni->held, 0);
	cr_expect_eq(na.ni->copies.bytes, 0);
	cr_expect_eq(p4u_pool_in_use(&na.ni->ops), 0);
	cr_expect_eq(status_of(&na, P4E_SR_COPY_REFUSED), 0);
	cr_expect_eq(p4e_md_release(na.ni, md), 0, "every op ended");
}

/*
 * max_held operations live on after their SEND: further payloads are not
 * copied, their operations hold the caller's buffer and complete when
 * the target has the data; a volatile payload, which must be copied,
 * waits (-FI_EAGAIN) till the target takes some.
 */
Test(eng_flood, past_held_bound_buffers_are_held)
{
	enum { N = 10, HELD = 4 };
	struct p4e_xfer x;
	uint64_t md, vmd;

	initiator_setup(64, HELD, 0, 0);
	target_setup(1024, 0, 0);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	vmd = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE,
		      P4E_MD_VOLATILE);
	flood_mixed(&na, md, 0, N, len_100, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	expect_sends(0, HELD, 1);
	expect_sends(HELD, N - HELD, 0);
	cr_expect_eq(na.ni->held, HELD);
	cr_expect_eq(status_of(&na, P4E_SR_COPY_REFUSED), N - HELD);
	x = xfer_to(&nb, vmd, 100, 0x5, P4E_NO_ACK_REQ);
	x.user_ptr = (void *)(intptr_t)ENG_LOG_OTHER;
	cr_expect_eq(p4e_put(na.ni, &x), -FI_EAGAIN, "volatile past the bound");
	post_receives(0, N, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N, len_100, &rx, &tx, P4E_NO_ACK_REQ);
	cr_expect_eq(na.ni->held, 0);
	/* taken away: copies again */
	append(&nb, rbuf + N * SSLOT, SSLOT, P4E_ME_OP_PUT | P4E_ME_USE_ONCE,
	       0x5, 0, P4E_PRIORITY_LIST, 0, (void *)(intptr_t)N);
	cr_expect_eq(p4e_put(na.ni, &x), 0);
	progress();
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
	cr_expect_eq(p4e_md_release(na.ni, vmd), 0);
}

/*
 * The header budget spent: the sender is held (and what it posts then
 * waits, its SEND too: it was not handed over), the target counts it;
 * receives taking headers resume it and everything arrives in order.
 */
Test(eng_flood, header_budget_spent_holds_and_counts)
{
	enum { N = 12, LATE = 4 };
	uint64_t md;

	target_setup(4, 0, 0);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, N, len_40, P4E_NO_ACK_REQ);
	progress();
	cr_expect_geq(status_of(&nb, P4E_SR_UH_FULL), 1);
	cr_expect_geq(status_of(&nb, P4E_SR_FLOWCTRL), 1);
	flood_mixed(&na, md, N, LATE, len_40, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	expect_sends(0, N, 1);
	expect_sends(N, LATE, 0);
	post_receives(0, N + LATE, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(N + LATE, len_40, &rx, &tx, P4E_NO_ACK_REQ);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/*
 * A copy takes a block sized to its payload (the next power of two from
 * 64 bytes), a small one none (it lives in its operation), and the
 * blocks' chunks go back once the target took them.
 */
Test(eng_flood, copies_sized_to_payload_and_given_back)
{
	enum { N = 20 };
	struct p4e_copies *c;
	uint64_t md;

	loop_only();
	initiator_setup(0, 0, 4096, 0);
	c = &na.ni->copies;
	open_node(&nb, 0, 0, 0, 1024);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	p4t_loop_hold(nb.ni->xp[P4E_XP_NET].iface, true);
	flood_mixed(&na, md, 0, N, len_1000, P4E_NO_ACK_REQ);
	cr_expect_eq(c->bytes, N * 1024, "%" PRIu64 " bytes for %d copies",
		     c->bytes, N);
	cr_expect_lt(c->bytes, N * c->max_len);
	flood_mixed(&na, md, N, N, len_8, P4E_NO_ACK_REQ);
	cr_expect_eq(c->bytes, N * 1024, "8-byte copies took blocks");
	eng_txlog_drain(na.eq, &tx);
	expect_sends(0, 2 * N, 1);
	p4t_loop_hold(nb.ni->xp[P4E_XP_NET].iface, false);
	post_receives(0, 2 * N, SSLOT);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	cr_expect_eq(rx.delivered, 2 * N);
	expect_data(0, N, 1000);
	expect_data(N, N, 8);
	cr_expect_eq(c->bytes, 0);
	cr_expect_eq(na.ni->held, 0);
	cr_expect_leq(p4u_pool_bytes(&c->cls[4]),
		      (size_t)P4U_POOL_SPARE_CHUNKS * 65536 + 4096);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/*
 * Rule 6 across a returned chunk: a flood's operations fill several
 * chunks of the operation pool, which go back as a lighter load follows
 * it; a response naming one of them is dropped and counted, and reaches
 * nothing.
 */
Test(eng_flood, response_to_returned_op_chunk_dropped)
{
	enum { N = 1200 };
	struct p4e_npeer *np;
	struct p4e_op *op;
	struct p4e_event ev;
	int64_t drops;
	uint8_t msg[sizeof(struct p4w_hdr) + sizeof(struct p4w_resp)];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION, .type = P4W_ACK, .length = sizeof(msg),
	};
	struct p4w_resp resp = { .mlength = 8 };
	struct p4e_xfer x;
	char addr[64];
	size_t alen;
	uint64_t md, stale = 0;
	int i;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	append(&nb, obuf, sizeof(obuf), P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL |
	       P4E_ME_EVENT_COMM_DISABLE, 0x5, 0, P4E_PRIORITY_LIST, 0, NULL);
	/* no events: 1200 would overrun the EQ */
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE,
		     P4E_MD_EVENT_SEND_DISABLE);
	p4t_loop_hold(nb.ni->xp[P4E_XP_NET].iface, true);
	x = xfer_to(&nb, md, 8, 0x5, P4E_NO_ACK_REQ);
	x.user_ptr = (void *)(intptr_t)ENG_LOG_OTHER;
	for (i = 0; i < N; i++)
		cr_assert_eq(p4e_put(na.ni, &x), 0);
	np = na.ni->npeers[eng_peer_of(dom, nb.ni)];
	p4u_list_foreach_entry(&np->tx_sent, op, struct p4e_op, link)
		stale = p4u_pool_handle(&na.ni->ops, op);
	cr_assert_geq(p4u_handle_index(stale), 1024, "not in a late chunk");
	p4t_loop_hold(nb.ni->xp[P4E_XP_NET].iface, false);
	progress();
	cr_expect_eq(p4u_pool_in_use(&na.ni->ops), 0, "ops still live");
	/* a light load after the flood: its peak decays, its chunks go
	 * (util/p4u_pool.h); one op at a time, taken from the pool */
	for (i = 0; i < 8 * N; i++)
		p4u_pool_free(&na.ni->ops, p4u_pool_alloc(&na.ni->ops));
	cr_expect_gt(na.ni->ops.returned, 0, "no chunk went back");
	cr_expect_null(p4u_pool_lookup(&na.ni->ops, stale));
	/* the stale ACK, as if b had sent it again */
	resp.op_id = stale;
	p4w_hdr_pack(msg, &hdr);
	p4w_resp_pack(msg + sizeof(hdr), &resp);
	addr_of(&nb, addr, &alen);
	cr_assert_eq(p4t_loop_inject(na.ni->xp[P4E_XP_NET].iface, addr, alen, msg,
				     sizeof(msg)), 0);
	drops = status_of(&na, P4E_SR_DROP_COUNT);
	progress();
	cr_expect_eq(status_of(&na, P4E_SR_DROP_COUNT), drops + 1);
	cr_expect_eq(status_of(&na, P4E_SR_MALFORMED), 0);
	cr_expect_eq(p4e_eq_ring_get(na.eq, &ev), -FI_EAGAIN, "an event");
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}
