/*
 * test_eng_states.c - the state machines of initiator and target
 * operations (enum p4e_op_state, p4e_tgt_state; p4e_ini.c, p4e_tgt_op.c),
 * driven through the public API one progress call at a time on the loop
 * transport: a put copied or not, accepted; a rendezvous acked once its
 * data is pulled; a put nacked, rewound and resent, and one resent
 * as rendezvous; operations failed by a link failure in each state; a
 * get replied inline and one pushed; a response to an operation that
 * cannot have one; a response, a counted ack, an atomic's ACK and a
 * fetching atomic's REPLY before the transport's SEND_DONE; a REPLY
 * with the no-ack mark; and an invalid transition refused (asserted in
 * debug builds).
 *
 * The engine's private header gives the states: an operation is found
 * by its user_ptr in the NI's pool, and is FREE once back in it.
 * Includes config.h to know whether the engine asserts.
 */
#include <config.h>

#include <signal.h>

#include "p4e_put_test.h"

static void states_setup(void)
{
	/* FC_RESEND: a put that finds no entry is nacked, not dropped */
	eng_open_opts(&e, P4E_NI_MATCHING | P4E_NI_PHYSICAL,
		      P4E_PT_FC_RESEND, 4096);
}

TestSuite(eng_states, .init = states_setup, .fini = put_teardown,
	  .timeout = 60);

/* Payload sizes: copied (engine default copy_size 1 KiB), eager with the
 * caller's buffer held, rendezvous (eager size 4096). */
#define COPIED	8
#define HELD	2048
#define RDZV	8192

#define OP_A	((void *)0xa)
#define OP_B	((void *)0xb)

static struct p4e_op *op_find(void *ctx)
{
	struct p4e_ni *ni = e.ni[0];
	struct p4e_op *op;
	uint32_t i;

	for (i = 0; i < p4u_pool_capacity(&ni->ops); i++) {
		op = p4u_pool_at(&ni->ops, i);
		if (op && op->user_ptr == ctx)
			return op;
	}
	return NULL;
}

/* The state of side 0's operation ctx; FREE once it left the pool. */
static enum p4e_op_state op_state(void *ctx)
{
	struct p4e_op *op = op_find(ctx);

	return op ? op->state : P4E_OPS_FREE;
}

/* The state of side 1's target operation (one at most); FREE: none. */
static enum p4e_tgt_state tgt_state(void)
{
	struct p4e_ni *ni = e.ni[1];
	struct p4e_tgt_op *top, *found = NULL;
	uint32_t i;

	for (i = 0; i < p4u_pool_capacity(&ni->tops); i++) {
		top = p4u_pool_at(&ni->tops, i);
		if (!top)
			continue;
		cr_assert_null(found, "more than one target op");
		found = top;
	}
	return found ? found->state : P4E_TGTS_FREE;
}

#define expect_op(ctx, want)						\
	do {								\
		enum p4e_op_state s_ = op_state(ctx);			\
		cr_assert_eq(s_, want, "op %s: %s, expected %s", #ctx,	\
			     p4e_op_state_name(s_),			\
			     p4e_op_state_name(want));			\
	} while (0)

#define expect_tgt(want)						\
	do {								\
		enum p4e_tgt_state s_ = tgt_state();			\
		cr_assert_eq(s_, want, "target op: %s, expected %s",	\
			     p4e_tgt_state_name(s_),			\
			     p4e_tgt_state_name(want));			\
	} while (0)

/* One progress call of side (budget: messages it may take). */
static void step(int side, int budget)
{
	p4e_ni_progress(e.ni[side], budget);
}

static uint64_t src_md(void)
{
	return eng_md(&e, 0, src, sizeof(src), 0, P4E_HANDLE_NONE);
}

static void post_put(uint64_t md, size_t len, uint64_t bits,
		     enum p4e_ack_req ack, void *ctx)
{
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, bits);

	x.ack_req = ack;
	x.user_ptr = ctx;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
}

/* side 0's next event: type, for ctx, with fail */
static struct p4e_event expect_ev(int type, void *ctx, int fail)
{
	struct p4e_event ev = eng_ev_is(&e, 0, type);

	cr_expect_eq(ev.user_ptr, ctx);
	cr_expect_eq(ev.ni_fail_type, fail, "event %d: fail %d, expected %d",
		     type, ev.ni_fail_type, fail);
	return ev;
}

/* ---- puts accepted ------------------------------------------------------- */

/* A copy: SENT with its SEND out at once, over at the cumulative ack. */
Test(eng_states, put_copied_accepted)
{
	need_loop();
	append_me(1, dst, 64, P4E_ME_OP_PUT, 0x1, 0, NULL, 0);
	fill(src, COPIED, 1);
	post_put(src_md(), COPIED, 0x1, P4E_NO_ACK_REQ, OP_A);
	expect_op(OP_A, P4E_OPS_SENT);
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_OK);
	eng_no_event(&e, 0);
	step(1, 64);		/* matched, accepted; the SEQ_ACK goes */
	expect_op(OP_A, P4E_OPS_SENT);
	eng_ev_is(&e, 1, P4E_EVENT_PUT);
	step(0, 64);		/* accepted: nothing due, freed */
	expect_op(OP_A, P4E_OPS_FREE);
	eng_no_event(&e, 0);
	cr_expect_eq(memcmp(dst, src, COPIED), 0);
}

/* The caller's buffer held: SEND and the ACCEPT ack come at acceptance. */
Test(eng_states, put_held_accepted)
{
	struct p4e_event ev;

	need_loop();
	append_me(1, dst, HELD, P4E_ME_OP_PUT, 0x1, 0, NULL, 0);
	post_put(src_md(), HELD, 0x1, P4E_ACK_ACCEPT, OP_A);
	expect_op(OP_A, P4E_OPS_SENT);
	eng_no_event(&e, 0);
	step(1, 64);
	step(0, 64);
	expect_op(OP_A, P4E_OPS_FREE);
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_OK);
	ev = expect_ev(P4E_EVENT_ACK, OP_A, P4E_NI_OK);
	cr_expect_eq(ev.mlength, HELD);
	eng_no_event(&e, 0);
}

/*
 * A rendezvous while the target pulls (PULLING): the cumulative ack waits
 * for the stream (p4e_fc.c's ack policy), so the op stays SENT; the pull's
 * end sends both, and SEND and ACK come together.
 */
Test(eng_states, rdzv_acked_after_pull)
{
	need_loop();
	append_me(1, dst, RDZV, P4E_ME_OP_PUT, 0x2, 0, NULL, 0);
	fill(src, RDZV, 2);
	post_put(src_md(), RDZV, 0x2, P4E_ACK_REQ, OP_A);
	expect_op(OP_A, P4E_OPS_SENT);
	expect_tgt(P4E_TGTS_FREE);
	step(1, 1);		/* the header: matched, accepted, pull */
	expect_tgt(P4E_TGTS_PULLING);
	eng_no_event(&e, 1);	/* the event comes after the data */
	step(0, 64);		/* no ack yet: it waits for the pull */
	expect_op(OP_A, P4E_OPS_SENT);
	eng_no_event(&e, 0);
	eng_progress(&e);
	expect_tgt(P4E_TGTS_FREE);
	expect_op(OP_A, P4E_OPS_FREE);
	eng_ev_is(&e, 1, P4E_EVENT_PUT);
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_OK);
	expect_ev(P4E_EVENT_ACK, OP_A, P4E_NI_OK);
	eng_no_event(&e, 0);
	cr_expect_eq(memcmp(dst, src, RDZV), 0);
}

/* ---- nacked and resent --------------------------------------------------- */

/*
 * No entry on the FC_RESEND portal: the put is nacked, REWOUND and held;
 * one posted meanwhile stays QUEUED, its copy's SEND not out yet (it was
 * never handed over). An entry appended resumes both, in order.
 */
Test(eng_states, put_nacked_rewound_resent)
{
	uint64_t md = src_md();

	need_loop();
	fill(src, COPIED, 3);
	post_put(md, COPIED, 0x3, P4E_ACK_REQ, OP_A);
	expect_op(OP_A, P4E_OPS_SENT);
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_OK);
	step(1, 64);		/* no entry: NACK, the sender held */
	cr_expect_eq(status_reg(1, P4E_SR_FLOWCTRL), 1);
	step(0, 64);
	expect_op(OP_A, P4E_OPS_REWOUND);
	post_put(md, COPIED, 0x3, P4E_ACK_REQ, OP_B);
	expect_op(OP_B, P4E_OPS_QUEUED);
	eng_no_event(&e, 0);
	eng_progress(&e);	/* nothing moves while held */
	expect_op(OP_A, P4E_OPS_REWOUND);
	expect_op(OP_B, P4E_OPS_QUEUED);

	append_me(1, dst, 64, P4E_ME_OP_PUT, 0x3, 0, NULL, 0);
	append_me(1, dst + 64, 64, P4E_ME_OP_PUT, 0x3, 0, NULL, 0);
	eng_progress(&e);	/* RESUME, both sent, delivered, acked */
	expect_op(OP_A, P4E_OPS_FREE);
	expect_op(OP_B, P4E_OPS_FREE);
	/* A's SEND went with its first send, B's with its only one */
	expect_ev(P4E_EVENT_SEND, OP_B, P4E_NI_OK);
	expect_ev(P4E_EVENT_ACK, OP_A, P4E_NI_OK);
	expect_ev(P4E_EVENT_ACK, OP_B, P4E_NI_OK);
	eng_no_event(&e, 0);
	cr_expect_eq(eng_ev_is(&e, 1, P4E_EVENT_PUT).user_ptr, NULL);
	eng_ev_is(&e, 1, P4E_EVENT_PUT);
	eng_no_event(&e, 1);
	cr_expect_eq(memcmp(dst, src, COPIED), 0);
}

/*
 * Only the header keeper takes an eager put with data: NACK AS_RDZV, and
 * the put goes again at once as rendezvous (SENT, exposed, a response
 * due), leaves its header (WAIT_RESP) and is pulled by the receive
 * appended later (p4e_tgt_start_pull from the header: PULLING).
 */
Test(eng_states, put_resent_as_rdzv)
{
	struct p4e_me_desc keeper = eng_me_desc(NULL, 0, P4E_ME_OP_PUT |
						P4E_ME_HDR_ONLY, 0, ~0ULL);
	struct p4e_op *op;
	uint64_t me;

	need_loop();
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &keeper,
				   P4E_OVERFLOW_LIST, NULL, 0, &me), 0);
	eng_ev_is(&e, 1, P4E_EVENT_LINK);
	fill(src, HELD, 4);
	post_put(src_md(), HELD, 0x4, P4E_ACK_ACCEPT, OP_A);
	op = op_find(OP_A);
	cr_assert_eq(op->proto, P4W_PROTO_EAGER);
	cr_assert_not(op->want_resp);
	step(1, 1);		/* keeper: NACK AS_RDZV */
	step(0, 64);		/* rewound and sent again, converted */
	expect_op(OP_A, P4E_OPS_SENT);
	cr_expect_eq(op->proto, P4W_PROTO_RDZV);
	cr_expect(op->want_resp && !op->to_rdzv);
	cr_expect_eq(status_reg(0, P4E_SR_RESENT_AS_RDZV), 1);
	eng_no_event(&e, 0);
	eng_progress(&e);	/* its header kept: accepted */
	expect_op(OP_A, P4E_OPS_WAIT_RESP);
	eng_no_event(&e, 0);
	expect_tgt(P4E_TGTS_FREE);

	append_me(1, dst, HELD, P4E_ME_OP_PUT | P4E_ME_UH_COPY, 0x4, 0, NULL,
		  0);
	expect_tgt(P4E_TGTS_PULLING);
	eng_progress(&e);
	expect_tgt(P4E_TGTS_FREE);
	expect_op(OP_A, P4E_OPS_FREE);
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_OK);
	expect_ev(P4E_EVENT_ACK, OP_A, P4E_NI_OK);
	eng_no_event(&e, 0);
	eng_ev_is(&e, 1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(memcmp(dst, src, HELD), 0);
}

/* ---- link failures ------------------------------------------------------- */

static void fail_link_of(int side)
{
	char addr[64];
	size_t len = sizeof(addr);

	cr_assert_eq(p4e_ni_getname(e.ni[!side], addr, &len), 0);
	cr_assert_eq(p4t_loop_fail_link(iface_of(side), addr, len,
					-FI_ECONNRESET), 0);
}

/*
 * SENT and QUEUED (the link's queue full) fail together: each reports
 * what it still owed, UNDELIVERABLE: A its ACK (its copy's SEND went), B
 * its SEND and its ACK.
 */
Test(eng_states, link_failed_sent_and_queued)
{
	uint64_t md = src_md();

	need_loop();
	p4t_loop_set_queue_limit(iface_of(1), 1);	/* one message */
	post_put(md, COPIED, 0x5, P4E_ACK_REQ, OP_A);
	post_put(md, COPIED, 0x5, P4E_ACK_REQ, OP_B);
	expect_op(OP_A, P4E_OPS_SENT);
	expect_op(OP_B, P4E_OPS_QUEUED);
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_OK);
	eng_no_event(&e, 0);
	fail_link_of(0);
	step(0, 64);
	expect_op(OP_A, P4E_OPS_FREE);
	expect_op(OP_B, P4E_OPS_FREE);
	expect_ev(P4E_EVENT_ACK, OP_A, P4E_NI_UNDELIVERABLE);
	expect_ev(P4E_EVENT_SEND, OP_B, P4E_NI_UNDELIVERABLE);
	expect_ev(P4E_EVENT_ACK, OP_B, P4E_NI_UNDELIVERABLE);
	eng_no_event(&e, 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0, "every op ended");
}

/*
 * A rendezvous whose pull runs (PULLING), its ack held for it (SENT): the
 * link fails; the pull ends with it (RMA_DONE, UNDELIVERABLE: the
 * target's event says so) and the initiator's op fails. The acceptance
 * is held for the pull at most P4E_ACK_HOLD_NS (200 us): a target step
 * slower than that (a loaded host, a sanitizer build) sends it, and the
 * op waits for its ACK (WAIT_RESP) instead; it fails the same way.
 */
Test(eng_states, link_failed_during_pull)
{
	struct p4e_event ev;
	uint64_t md = src_md();

	need_loop();
	append_me(1, dst, RDZV, P4E_ME_OP_PUT, 0x6, 0, NULL, 0);
	post_put(md, RDZV, 0x6, P4E_ACK_REQ, OP_A);
	step(1, 1);
	expect_tgt(P4E_TGTS_PULLING);
	step(0, 64);
	cr_assert(op_state(OP_A) == P4E_OPS_SENT ||
		  op_state(OP_A) == P4E_OPS_WAIT_RESP, "op OP_A: %s",
		  p4e_op_state_name(op_state(OP_A)));
	fail_link_of(0);
	eng_progress(&e);
	expect_tgt(P4E_TGTS_FREE);
	expect_op(OP_A, P4E_OPS_FREE);
	ev = eng_ev_is(&e, 1, P4E_EVENT_PUT);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_UNDELIVERABLE);
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_UNDELIVERABLE);
	expect_ev(P4E_EVENT_ACK, OP_A, P4E_NI_UNDELIVERABLE);
	eng_no_event(&e, 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0, "every op ended");
}

/* ---- gets ---------------------------------------------------------------- */

static void post_get(uint64_t md, size_t len, uint64_t bits, void *ctx)
{
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, bits);

	x.ack_req = P4E_NO_ACK_REQ;
	x.user_ptr = ctx;
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
}

/* A reply inline: the target op ends within the message. */
Test(eng_states, get_replied_inline)
{
	struct p4e_event ev;

	need_loop();
	fill(dst, 64, 7);
	append_me(1, dst, 64, P4E_ME_OP_GET, 0x7, 0, NULL, 0);
	memset(src, 0, 64);
	post_get(src_md(), 64, 0x7, OP_A);
	expect_op(OP_A, P4E_OPS_SENT);
	step(1, 64);
	expect_tgt(P4E_TGTS_FREE);
	eng_ev_is(&e, 1, P4E_EVENT_GET);
	expect_op(OP_A, P4E_OPS_SENT);	/* the reply is on its way */
	step(0, 64);
	expect_op(OP_A, P4E_OPS_FREE);
	ev = expect_ev(P4E_EVENT_REPLY, OP_A, P4E_NI_OK);
	cr_expect_eq(ev.mlength, 64);
	eng_no_event(&e, 0);
	cr_expect_eq(memcmp(src, dst, 64), 0);
}

/* A reply larger than the eager size is pushed (PUSHING), then its
 * header follows. */
Test(eng_states, get_replied_pushed)
{
	struct p4e_event ev;

	need_loop();
	fill(dst, RDZV, 8);
	append_me(1, dst, RDZV, P4E_ME_OP_GET, 0x8, 0, NULL, 0);
	memset(src, 0, RDZV);
	post_get(src_md(), RDZV, 0x8, OP_A);
	expect_op(OP_A, P4E_OPS_SENT);
	step(1, 1);
	expect_tgt(P4E_TGTS_PUSHING);
	eng_no_event(&e, 1);
	eng_progress(&e);
	expect_tgt(P4E_TGTS_FREE);
	expect_op(OP_A, P4E_OPS_FREE);
	eng_ev_is(&e, 1, P4E_EVENT_GET);
	ev = expect_ev(P4E_EVENT_REPLY, OP_A, P4E_NI_OK);
	cr_expect_eq(ev.mlength, RDZV);
	eng_no_event(&e, 0);
	cr_expect_eq(memcmp(src, dst, RDZV), 0);
}

/* ---- what a state does not take ------------------------------------------ */

/*
 * A response for an operation the target does not have (REWOUND: nacked,
 * not resent) is a lie: the link fails with it, and the op reports
 * UNDELIVERABLE, never the success the response claimed.
 */
Test(eng_states, response_to_rewound_op_fails_link)
{
	uint8_t msg[sizeof(struct p4w_hdr) + sizeof(struct p4w_resp)];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION, .type = P4W_ACK,
		.length = sizeof(msg),
	};
	struct p4w_resp resp = { .mlength = COPIED };
	char addr[64];
	size_t len = sizeof(addr);

	need_loop();
	post_put(src_md(), COPIED, 0x9, P4E_ACK_REQ, OP_A);
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_OK);
	step(1, 64);
	step(0, 64);
	expect_op(OP_A, P4E_OPS_REWOUND);
	resp.op_id = p4u_pool_handle(&e.ni[0]->ops, op_find(OP_A));
	p4w_hdr_pack(msg, &hdr);
	p4w_resp_pack(msg + sizeof(hdr), &resp);
	cr_assert_eq(p4e_ni_getname(e.ni[1], addr, &len), 0);
	cr_assert_eq(p4t_loop_inject(iface_of(0), addr, len, msg,
				     sizeof(msg)), 0);
	eng_progress(&e);
	cr_expect_eq(status_reg(0, P4E_SR_MALFORMED), 1);
	expect_op(OP_A, P4E_OPS_FREE);
	expect_ev(P4E_EVENT_ACK, OP_A, P4E_NI_UNDELIVERABLE);
	eng_no_event(&e, 0);
}

/*
 * An event a state does not expect is a bug of the engine's: logged and
 * asserted in debug builds; with asserts compiled out refused, nothing
 * changed, and the operation goes on as if it had not happened.
 */
#if ENABLE_DEBUG
/* libinfinipath (loaded with libfabric) catches SIGABRT to print a
 * backtrace and exit otherwise: the abort must be the test's outcome */
static void abort_plain(void)
{
	cr_assert_neq(signal(SIGABRT, SIG_DFL), SIG_ERR);
}

Test(eng_states, invalid_op_step_asserts, .signal = SIGABRT)
{
	abort_plain();
	post_put(src_md(), COPIED, 0xa, P4E_NO_ACK_REQ, OP_A);
	expect_op(OP_A, P4E_OPS_SENT);
	p4e_op_step(op_find(OP_A), P4E_OPE_POST, NULL);
}

Test(eng_states, invalid_tgt_step_asserts, .signal = SIGABRT)
{
	struct p4e_tgt_op top;

	abort_plain();
	memset(&top, 0, sizeof(top));
	p4e_tgt_step(&top, P4E_TGTE_RMA_DONE, P4E_NI_OK);
}
#else
Test(eng_states, invalid_op_step_refused)
{
	struct p4w_resp resp = { .mlength = COPIED };
	struct p4e_op *op;

	append_me(1, dst, 64, P4E_ME_OP_PUT, 0xa, 0, NULL, 0);
	post_put(src_md(), COPIED, 0xa, P4E_ACK_REQ, OP_A);
	op = op_find(OP_A);
	cr_assert_eq(op->state, P4E_OPS_SENT);
	cr_expect_eq(p4e_op_step(op, P4E_OPE_POST, NULL), -FI_EINVAL);
	cr_expect_eq(p4e_op_step(op, P4E_OPE_XMIT_OK, NULL), -FI_EINVAL);
	cr_expect_eq(p4e_op_step(op, P4E_OPE_SEND_DONE, NULL), -FI_EINVAL);
	cr_expect_eq(p4e_op_step(op, P4E_OPE_RESPONSE, NULL), -FI_EINVAL);
	cr_expect_eq(p4e_op_step(op, P4E_OPE_MAX, &resp), -FI_EINVAL);
	cr_expect_eq(op->state, P4E_OPS_SENT);
	cr_expect_eq(op->xmit_refs, 0);
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_OK);
	eng_no_event(&e, 0);
	eng_progress(&e);
	expect_op(OP_A, P4E_OPS_FREE);
	expect_ev(P4E_EVENT_ACK, OP_A, P4E_NI_OK);
	eng_no_event(&e, 0);
}

Test(eng_states, invalid_tgt_step_refused)
{
	struct p4e_tgt_op top;

	memset(&top, 0, sizeof(top));
	cr_expect_eq(p4e_tgt_step(&top, P4E_TGTE_RMA_DONE, P4E_NI_OK),
		     -FI_EINVAL);
	cr_expect_eq(p4e_tgt_step(&top, P4E_TGTE_PULL, P4E_NI_OK),
		     -FI_EINVAL);
	cr_expect_eq(p4e_tgt_step(&top, P4E_TGTE_DONE, P4E_NI_OK),
		     -FI_EINVAL);
	cr_expect_eq(top.state, P4E_TGTS_FREE);
	/* a get does not pull */
	top.type = P4W_GET;
	cr_expect_eq(p4e_tgt_step(&top, P4E_TGTE_MATCH, P4E_NI_OK), 0);
	cr_expect_eq(p4e_tgt_step(&top, P4E_TGTE_PULL, P4E_NI_OK),
		     -FI_EINVAL);
	cr_expect_eq(top.state, P4E_TGTS_MATCHED);
}
#endif

/* Every state and target state has a name (logs, asserts). */
Test(eng_states, names)
{
	int s;

	for (s = 0; s < P4E_OPS_MAX; s++)
		cr_expect_neq(strcmp(p4e_op_state_name(s), "invalid"), 0);
	for (s = 0; s < P4E_TGTS_MAX; s++)
		cr_expect_neq(strcmp(p4e_tgt_state_name(s), "invalid"), 0);
	cr_expect_str_eq(p4e_op_state_name(P4E_OPS_MAX), "invalid");
	cr_expect_str_eq(p4e_op_state_name(P4E_OPS_REWOUND), "rewound");
	cr_expect_str_eq(p4e_tgt_state_name(P4E_TGTS_PULLING), "pulling");
}

/*
 * The response comes before the transport's SEND_DONE (over TCP a write it
 * queued completes after the peer answered it): the op waits in DRAINING
 * for that upcall, but its last event went, so its MD is free at once
 * (issue 22: PtlMDRelease said PTL_IN_USE after an atomic's final event,
 * about half the runs). Queued here by hand: the loop never queues.
 */
Test(eng_states, response_before_send_done_frees_the_md)
{
	struct p4w_resp ok = { .fail = P4E_NI_OK };
	struct p4e_op *op;
	uint64_t md = src_md();

	append_me(1, dst, 64, P4E_ME_OP_PUT, 0xa, 0, NULL, 0);
	post_put(md, COPIED, 0xa, P4E_ACK_REQ, OP_A);
	op = op_find(OP_A);
	cr_assert_eq(op->state, P4E_OPS_SENT);
	op->xmit_refs = 1;	/* as if P4T_QUEUED: SEND_DONE to come */
	expect_ev(P4E_EVENT_SEND, OP_A, P4E_NI_OK);
	eng_progress(&e);
	expect_ev(P4E_EVENT_ACK, OP_A, P4E_NI_OK);
	expect_op(OP_A, P4E_OPS_DRAINING);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0, "the ACK was its last");
	/* the upcall frees the op, which no longer touches the MD */
	cr_expect_eq(p4e_op_step(op, P4E_OPE_SEND_DONE, &ok), 0);
	expect_op(OP_A, P4E_OPS_FREE);
	eng_no_event(&e, 0);
}

/* One more: ctx's op is queued at the transport (SEND_DONE to come). */
static struct p4e_op *hold_send(void *ctx)
{
	struct p4e_op *op = op_find(ctx);

	cr_assert_not_null(op);
	cr_assert_eq(op->state, P4E_OPS_SENT, "op %p: %s", ctx,
		     p4e_op_state_name(op->state));
	op->xmit_refs = 1;
	return op;
}

/*
 * The same race for the other last events issue 22 names: a counted ack
 * (all a triggered put's initiator may see), an atomic's ACK and a
 * fetching atomic's REPLY (two MDs): once it is visible, the MDs are free.
 */
Test(eng_states, counted_ack_and_atomic_before_send_done_free_the_mds)
{
	struct p4w_resp ok = { .fail = P4E_NI_OK };
	struct p4e_op *op;
	struct p4e_xfer x;
	uint64_t ct, md, gmd;

	need_loop();
	append_me(1, dst, 64, P4E_ME_OP_PUT | P4E_ME_OP_GET |
		  P4E_ME_EVENT_COMM_DISABLE, 0xa, 0, NULL, 0);
	/* a counted ack */
	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	md = eng_md(&e, 0, src, COPIED, P4E_MD_EVENT_CT_ACK |
		    P4E_MD_EVENT_SEND_DISABLE, ct);
	post_put(md, COPIED, 0xa, P4E_CT_ACK_REQ, OP_A);
	op = hold_send(OP_A);
	eng_progress(&e);
	cr_assert_eq(eng_ct(e.dom, ct).success, 1);
	expect_op(OP_A, P4E_OPS_DRAINING);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0, "the count was its last");
	cr_expect_eq(p4e_op_step(op, P4E_OPE_SEND_DONE, &ok), 0);
	expect_op(OP_A, P4E_OPS_FREE);
	/* an atomic's ACK */
	md = eng_md(&e, 0, src, 8, P4E_MD_EVENT_SEND_DISABLE, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0xa);
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	x.user_ptr = OP_B;
	cr_assert_eq(p4e_atomic(e.ni[0], &x), 0);
	op = hold_send(OP_B);
	eng_progress(&e);
	expect_ev(P4E_EVENT_ACK, OP_B, P4E_NI_OK);
	expect_op(OP_B, P4E_OPS_DRAINING);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0, "the ACK was its last");
	cr_expect_eq(p4e_op_step(op, P4E_OPE_SEND_DONE, &ok), 0);
	expect_op(OP_B, P4E_OPS_FREE);
	/* a fetching atomic's REPLY */
	md = eng_md(&e, 0, src, 8, P4E_MD_EVENT_SEND_DISABLE, P4E_HANDLE_NONE);
	gmd = eng_md(&e, 0, src + 8, 8, P4E_MD_EVENT_SEND_DISABLE,
		     P4E_HANDLE_NONE);
	x.md = md;
	x.get_md = gmd;
	x.user_ptr = OP_A;
	cr_assert_eq(p4e_fetch_atomic(e.ni[0], &x), 0);
	op = hold_send(OP_A);
	eng_progress(&e);
	expect_ev(P4E_EVENT_REPLY, OP_A, P4E_NI_OK);
	expect_op(OP_A, P4E_OPS_DRAINING);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0, "the REPLY was its last");
	cr_expect_eq(p4e_md_release(e.ni[0], gmd), 0);
	cr_expect_eq(p4e_op_step(op, P4E_OPE_SEND_DONE, &ok), 0);
	expect_op(OP_A, P4E_OPS_FREE);
	eng_no_event(&e, 0);
}

/*
 * P4E_RESP_NO_ACK (an entry with P4E_ME_ACK_DISABLE) drops the ACK event
 * of a put or atomic only: a REPLY that carries it still ends its get in
 * a REPLY event, whose list is a list (0 or 1), not the bit.
 */
Test(eng_states, reply_with_the_no_ack_bit_is_a_reply)
{
	struct p4w_resp r = {
		.fail = P4E_NI_DROPPED,
		.list = P4E_OVERFLOW_LIST | P4E_RESP_NO_ACK,
	};
	struct p4e_event ev;

	need_loop();
	post_get(src_md(), 64, 0x7, OP_A);	/* side 1 never looks */
	expect_op(OP_A, P4E_OPS_SENT);
	cr_assert_eq(p4e_op_step(op_find(OP_A), P4E_OPE_RESPONSE, &r), 0);
	expect_op(OP_A, P4E_OPS_FREE);
	ev = expect_ev(P4E_EVENT_REPLY, OP_A, P4E_NI_DROPPED);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	eng_no_event(&e, 0);
}
