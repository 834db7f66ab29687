/*
 * test_eng_trig.c - triggered operations: every kind (put, get, atomic,
 * fetch-atomic, swap, CT inc, CT set, ME append, ME unlink) fires exactly
 * when its CT reaches the threshold, under both rules; firing order
 * (threshold, then post order, across rules); a met threshold fires before
 * the post returns; buffers read at fire time, arguments copied at post;
 * cancel; chains across counters; a ring broadcast between three domains
 * driven only by triggered puts; CT-set resets between iterations; MDs
 * held while ops wait; ops the NI cannot take yet (-FI_EAGAIN) fire at the
 * next progress, in order; limits and bad arguments.
 */
#include "p4e_test.h"

static struct eng e;
static uint8_t src[16384], dst[16384];

static void setup(void)
{
	eng_open(&e);
	memset(src, 0, sizeof(src));
	memset(dst, 0, sizeof(dst));
}

static void teardown(void)
{
	eng_close(&e);
}

TestSuite(eng_trig, .init = setup, .fini = teardown, .timeout = 30);

static uint64_t ct_new(void)
{
	uint64_t ct;

	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	return ct;
}

/* A CT update outside progress: what it made due runs before the next
 * step of the test (as PtlCTInc does), not later with progress. */
static void ct_inc(uint64_t ct, uint64_t success, uint64_t failure)
{
	struct p4e_ct_event inc = { success, failure };

	cr_assert_eq(p4e_ct_inc(e.dom, ct, inc), 0);
	p4e_worker_run_triggered(p4e_dom_worker(e.dom));
}

static struct p4e_trig trig_of(uint64_t ct, uint64_t threshold,
			       unsigned flags)
{
	struct p4e_trig t = { .ct = ct, .threshold = threshold,
			      .flags = flags };

	return t;
}

/* A log of fired CT ops: each "logged" CT appends its id when it changes. */
static int fire_log[64];
static int fire_n;
static int log_ids[64];

static void log_cb(void *ctx, uint64_t ct,
			 const struct p4e_ct_event *val)
{
	(void)ct;
	if (fire_n < 64)
		fire_log[fire_n++] = *(int *)ctx;
}

static uint64_t logged_ct(int id)
{
	uint64_t ct = ct_new();

	log_ids[id] = id;
	cr_assert_eq(p4e_ct_set_notify(e.dom, ct, log_cb, &log_ids[id]), 0);
	return ct;
}

static void log_expect(const int *ids, int n)
{
	int i;

	cr_assert_eq(fire_n, n, "%d ops fired, expected %d", fire_n, n);
	for (i = 0; i < n; i++)
		cr_expect_eq(fire_log[i], ids[i],
			     "fired #%d: op %d, expected %d", i, fire_log[i],
			     ids[i]);
}

/* A persistent put/get entry on side 1 over dst, bits 0x7. */
static void target_me(void)
{
	struct p4e_me_desc d = eng_me_desc(dst, sizeof(dst), P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0x7, 0);

	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
	cr_assert_eq(eng_event(&e, 1).type, P4E_EVENT_LINK);
}

/* How many events of type side's EQ holds (all popped). */
static int count_events(int side, int type)
{
	struct p4e_event ev;
	int n = 0;

	while (p4e_eq_ring_get(e.eq[side], &ev) != -FI_EAGAIN)
		n += ev.type == type;
	return n;
}

/* ---- thresholds and rules ----------------------------------------------- */

Test(eng_trig, put_fires_when_sum_reaches_threshold)
{
	uint64_t ct = ct_new(), md;
	struct p4e_trig t = trig_of(ct, 3, 0);
	struct p4e_xfer x;

	target_me();
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	cr_assert_eq(p4e_trig_put(e.ni[0], &x, &t), 0);
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	ct_inc(ct, 0, 1);
	eng_progress(&e);
	cr_expect_eq(count_events(1, P4E_EVENT_PUT), 0,
		     "fired below threshold");
	ct_inc(ct, 0, 1);		/* success + failure = 3 */
	eng_progress(&e);
	cr_expect_eq(count_events(1, P4E_EVENT_PUT), 1);
	ct_inc(ct, 5, 5);
	eng_progress(&e);
	cr_expect_eq(count_events(1, P4E_EVENT_PUT), 0, "fired twice");
}

Test(eng_trig, success_only_rule_ignores_failures)
{
	uint64_t ct = ct_new(), md;
	struct p4e_trig t = trig_of(ct, 2, P4E_TRIG_SUCCESS_ONLY);
	struct p4e_xfer x;

	target_me();
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	cr_assert_eq(p4e_trig_put(e.ni[0], &x, &t), 0);
	ct_inc(ct, 1, 10);
	eng_progress(&e);
	cr_expect_eq(count_events(1, P4E_EVENT_PUT), 0,
		     "failures fired a success-only op");
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(count_events(1, P4E_EVENT_PUT), 1);
}

Test(eng_trig, get_fires_at_threshold)
{
	uint64_t ct = ct_new(), md;
	struct p4e_trig t = trig_of(ct, 2, 0);
	struct p4e_xfer x;

	target_me();
	memset(dst, 0x5a, 32);
	md = eng_md(&e, 0, src, 32, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 32, 0x7);
	cr_assert_eq(p4e_trig_get(e.ni[0], &x, &t), 0);
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(src[0], 0, "get fired below threshold");
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(src[0], 0x5a);
	cr_expect_eq(src[31], 0x5a);
	cr_expect_eq(eng_event_type(&e, 0, P4E_EVENT_REPLY).ni_fail_type,
		     P4E_NI_OK);
}

Test(eng_trig, atomics_fire_at_threshold)
{
	uint64_t ct = ct_new(), md, gmd;
	uint64_t *tgt = (uint64_t *)dst, *opnd = (uint64_t *)src;
	uint64_t old[3] = { 0 }, cmp = 110;
	struct p4e_trig t = trig_of(ct, 1, 0);
	struct p4e_xfer x;

	target_me();
	tgt[0] = 100;
	opnd[0] = 5;
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	gmd = eng_md(&e, 0, old, sizeof(old), 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	cr_assert_eq(p4e_trig_atomic(e.ni[0], &x, &t), 0);
	t.threshold = 2;
	x.get_md = gmd;
	cr_assert_eq(p4e_trig_fetch_atomic(e.ni[0], &x, &t), 0);
	t.threshold = 3;
	x.get_local_offset = 8;
	x.atomic_op = P4E_CSWAP;
	x.operand = &cmp;
	opnd[0] = 5;
	cr_assert_eq(p4e_trig_swap(e.ni[0], &x, &t), 0);
	eng_progress(&e);
	cr_expect_eq(tgt[0], 100, "an atomic fired at 0");

	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(tgt[0], 105);
	cr_expect_eq(old[0], 0, "fetch fired early");
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(tgt[0], 110);
	cr_expect_eq(old[0], 105);
	cr_expect_eq(old[1], 0, "swap fired early");
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(old[1], 110);
	cr_expect_eq(tgt[0], 5);
}

Test(eng_trig, ct_inc_and_set_fire_at_threshold)
{
	uint64_t ct = ct_new(), a = ct_new(), b = ct_new();
	struct p4e_trig t = trig_of(ct, 2, 0);
	struct p4e_ct_event v;

	cr_assert_eq(p4e_trig_ct_inc(e.dom, a, (struct p4e_ct_event){ 3, 1 },
				     &t), 0);
	t.threshold = 3;
	cr_assert_eq(p4e_trig_ct_set(e.dom, b, (struct p4e_ct_event){ 9, 8 },
				     &t), 0);
	ct_inc(ct, 1, 0);
	v = eng_ct(e.dom, a);
	cr_expect_eq(v.success + v.failure, 0);
	ct_inc(ct, 0, 1);
	v = eng_ct(e.dom, a);
	cr_expect_eq(v.success, 3);
	cr_expect_eq(v.failure, 1);
	v = eng_ct(e.dom, b);
	cr_expect_eq(v.success + v.failure, 0, "set fired early");
	ct_inc(ct, 1, 0);
	v = eng_ct(e.dom, b);
	cr_expect_eq(v.success, 9);
	cr_expect_eq(v.failure, 8);
	/* fired once: a later increment does not repeat it */
	ct_inc(ct, 1, 0);
	v = eng_ct(e.dom, a);
	cr_expect_eq(v.success, 3);
}

Test(eng_trig, me_append_fires_at_threshold)
{
	uint64_t ct = ct_new(), md, me;
	struct p4e_me_desc d = eng_me_desc(dst, 64, P4E_ME_OP_PUT, 0x7, 0);
	struct p4e_trig t = trig_of(ct, 1, 0);
	struct p4e_xfer x;
	struct p4e_event ev;

	cr_assert_eq(p4e_trig_me_append(e.ni[1], e.pt[1], &d,
					P4E_PRIORITY_LIST, (void *)0x55, 0,
					&t, &me), 0);
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
	eng_no_event(&e, 1);
	cr_expect_eq(eng_event_skip(e.eq[0], P4E_EVENT_ACK,
				    1u << P4E_EVENT_SEND).ni_fail_type,
		     P4E_NI_DROPPED, "an entry not appended yet matched");
	ct_inc(ct, 1, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_LINK);
	cr_expect_eq(ev.user_ptr, (void *)0x55);
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_ptr, (void *)0x55);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
}

Test(eng_trig, me_append_searches_unexpected_at_fire)
{
	uint64_t ct = ct_new(), md, me;
	struct p4e_me_desc o = eng_me_desc(dst + 8192, 4096, P4E_ME_OP_PUT,
					   0, ~0ULL);
	struct p4e_me_desc d = eng_me_desc(dst, 64, P4E_ME_OP_PUT, 0x7, 0);
	struct p4e_trig t = trig_of(ct, 1, 0);
	struct p4e_xfer x;
	struct p4e_event ev;

	eng_append(&e, 1, &o, P4E_OVERFLOW_LIST, NULL);
	cr_assert_eq(p4e_trig_me_append(e.ni[1], e.pt[1], &d,
					P4E_PRIORITY_LIST, (void *)0x66, 0, &t,
					&me), 0);
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = eng_event_type(&e, 1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	eng_no_event(&e, 1);
	ct_inc(ct, 1, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.user_ptr, (void *)0x66);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_LINK);
	eng_no_event(&e, 1);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
}

/* A use-once entry used up by an unexpected header is never linked. */
Test(eng_trig, use_once_append_consumed_at_fire_not_linked)
{
	uint64_t ct = ct_new(), md, me;
	struct p4e_me_desc o = eng_me_desc(dst + 8192, 4096, P4E_ME_OP_PUT,
					   0, ~0ULL);
	struct p4e_me_desc d = eng_me_desc(dst, 64, P4E_ME_OP_PUT |
					   P4E_ME_USE_ONCE, 0x7, 0);
	struct p4e_trig t = trig_of(ct, 1, 0);
	struct p4e_xfer x;
	struct p4e_event ev;

	eng_append(&e, 1, &o, P4E_OVERFLOW_LIST, NULL);
	cr_assert_eq(p4e_trig_me_append(e.ni[1], e.pt[1], &d,
					P4E_PRIORITY_LIST, NULL, 0, &t, &me),
		     0);
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
	count_events(1, P4E_EVENT_PUT);
	ct_inc(ct, 1, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT_OVERFLOW);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
	/* the second header is still there for the next receive */
	d.match_bits = 0x7;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), -FI_EINVAL);
}

Test(eng_trig, me_unlink_fires_at_threshold)
{
	uint64_t ct = ct_new(), md, me;
	struct p4e_me_desc d = eng_me_desc(dst, 64, P4E_ME_OP_PUT, 0x7, 0);
	struct p4e_trig t = trig_of(ct, 2, P4E_TRIG_SUCCESS_ONLY);
	struct p4e_xfer x;

	me = eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
	cr_assert_eq(p4e_trig_me_unlink(e.ni[1], me, &t), 0);
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	ct_inc(ct, 1, 3);
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
	cr_expect_eq(count_events(1, P4E_EVENT_PUT), 1);
	ct_inc(ct, 1, 0);
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
	cr_expect_eq(count_events(1, P4E_EVENT_PUT), 0,
		     "unlinked entry matched");
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), -FI_EINVAL);
}

/* ---- order -------------------------------------------------------------- */

Test(eng_trig, due_together_fire_by_threshold_then_post_order)
{
	static const struct { uint64_t threshold; unsigned flags; } ops[] = {
		{ 3, 0 }, { 2, P4E_TRIG_SUCCESS_ONLY }, { 2, 0 },
		{ 3, P4E_TRIG_SUCCESS_ONLY }, { 1, 0 },
		{ 2, P4E_TRIG_SUCCESS_ONLY }, { 4, 0 },
		{ 1, P4E_TRIG_SUCCESS_ONLY },
	};
	static const int first[] = { 4, 7, 1, 2, 5, 0 };
	static const int second[] = { 3, 6 };
	uint64_t ct = ct_new(), target[8];
	struct p4e_trig t;
	int i;

	for (i = 0; i < 8; i++)
		target[i] = logged_ct(i);
	for (i = 0; i < 8; i++) {
		t = trig_of(ct, ops[i].threshold, ops[i].flags);
		cr_assert_eq(p4e_trig_ct_inc(e.dom, target[i],
					     (struct p4e_ct_event){ 1, 0 }, &t),
			     0);
	}
	fire_n = 0;
	/* sum 3, success 2: all at once */
	ct_inc(ct, 2, 1);
	log_expect(first, 6);
	fire_n = 0;
	ct_inc(ct, 1, 0);
	log_expect(second, 2);
}

Test(eng_trig, met_threshold_fires_before_post_returns)
{
	uint64_t ct = ct_new(), target = logged_ct(0), md;
	struct p4e_trig t = trig_of(ct, 5, 0);
	struct p4e_xfer x;
	struct p4e_event ev;

	cr_assert_eq(p4e_ct_set(e.dom, ct, (struct p4e_ct_event){ 2, 3 }), 0);
	fire_n = 0;
	cr_assert_eq(p4e_trig_ct_inc(e.dom, target,
				     (struct p4e_ct_event){ 1, 0 }, &t), 0);
	cr_expect_eq(fire_n, 1, "a met threshold did not fire at post");
	/* a success-only op is not met by failures */
	t = trig_of(ct, 3, P4E_TRIG_SUCCESS_ONLY);
	cr_assert_eq(p4e_trig_ct_inc(e.dom, target,
				     (struct p4e_ct_event){ 1, 0 }, &t), 0);
	cr_expect_eq(fire_n, 1);
	/* threshold 0 is always met; a put has left before the return */
	target_me();
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	t = trig_of(ct, 0, 0);
	cr_assert_eq(p4e_trig_put(e.ni[0], &x, &t), 0);
	/* on a new TCP link the copy's SEND waits for the handshake's
	 * answer (docs/design.md §7.6) */
	if (!eng_is_loop())
		eng_progress(&e);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_SEND);
	eng_progress(&e);
	cr_expect_eq(count_events(1, P4E_EVENT_PUT), 1);
}

/* ---- buffers at fire, arguments at post --------------------------------- */

static void buffer_read_at_fire(size_t len)
{
	uint64_t ct = ct_new(), md;
	struct p4e_trig t = trig_of(ct, 1, 0);
	struct p4e_xfer x;

	target_me();
	memset(src, 'A', len);
	md = eng_md(&e, 0, src, len, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, len, 0x7);
	cr_assert_eq(p4e_trig_put(e.ni[0], &x, &t), 0);
	eng_progress(&e);
	memset(src, 'B', len);
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(dst[0], 'B', "the put sent what was there at post");
	cr_expect_eq(dst[len - 1], 'B');
	cr_expect_eq(dst[len], 0);
}

Test(eng_trig, buffer_read_at_fire_eager)
{
	buffer_read_at_fire(64);
}

Test(eng_trig, buffer_read_at_fire_rendezvous)
{
	buffer_read_at_fire(10000);
}

Test(eng_trig, arguments_copied_at_post)
{
	uint64_t ct = ct_new(), md;
	struct p4e_me_desc d;
	struct p4e_event ev;
	int i;

	for (i = 0; i < 4; i++) {
		d = eng_me_desc(dst + 64 * i, 64, P4E_ME_OP_PUT |
				P4E_ME_USE_ONCE, 0x100 + i, 0);
		eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
		src[i * 8] = (uint8_t)(0x10 + i);
	}
	md = eng_md(&e, 0, src, sizeof(src), 0, P4E_HANDLE_NONE);
	for (i = 0; i < 4; i++) {
		/* fresh stack structs each round, overwritten after the call */
		struct p4e_xfer x = eng_xfer(&e, 0, md, 8, 0x100 + i);
		struct p4e_trig t = trig_of(ct, 1 + i, 0);

		x.local_offset = 8 * i;
		x.hdr_data = 1000 + i;
		cr_assert_eq(p4e_trig_put(e.ni[0], &x, &t), 0);
		memset(&x, 0xee, sizeof(x));
		memset(&t, 0xee, sizeof(t));
	}
	eng_progress(&e);
	count_events(1, P4E_EVENT_LINK);
	ct_inc(ct, 4, 0);
	eng_progress(&e);
	for (i = 0; i < 4; i++) {
		ev = eng_event(&e, 1);
		cr_expect_eq(ev.type, P4E_EVENT_PUT);
		cr_expect_eq(ev.match_bits, 0x100 + (uint64_t)i);
		cr_expect_eq(ev.hdr_data, 1000 + (uint64_t)i);
		cr_expect_eq(ev.start, dst + 64 * i);
		cr_expect_eq(ev.mlength, 8);
		cr_expect_eq(dst[64 * i], 0x10 + i);
		cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_AUTO_UNLINK);
	}
}

/* ---- cancel, held MDs --------------------------------------------------- */

Test(eng_trig, cancel_discards_pending)
{
	uint64_t ct = ct_new(), other = ct_new(), target = logged_ct(0), md, me;
	struct p4e_me_desc d = eng_me_desc(dst, 64, P4E_ME_OP_PUT, 0x7, 0);
	struct p4e_trig t = trig_of(ct, 1, 0), to = trig_of(other, 1, 0);
	struct p4e_xfer x;

	target_me();
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	cr_assert_eq(p4e_trig_put(e.ni[0], &x, &t), 0);
	cr_assert_eq(p4e_trig_ct_inc(e.dom, target,
				     (struct p4e_ct_event){ 1, 0 }, &t), 0);
	cr_assert_eq(p4e_trig_me_append(e.ni[1], e.pt[1], &d,
					P4E_PRIORITY_LIST, NULL, 0, &t, &me),
		     0);
	cr_assert_eq(p4e_trig_ct_inc(e.dom, target,
				     (struct p4e_ct_event){ 1, 0 }, &to), 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), -FI_EBUSY);
	cr_assert_eq(p4e_ct_cancel_triggered(e.dom, ct), 0);
	fire_n = 0;
	ct_inc(ct, 5, 0);
	eng_progress(&e);
	cr_expect_eq(fire_n, 0, "a cancelled op fired");
	eng_no_event(&e, 1);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), -FI_EINVAL);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	/* another counter's ops are not cancelled */
	ct_inc(other, 1, 0);
	cr_expect_eq(fire_n, 1);
}

Test(eng_trig, md_held_until_fired_and_done)
{
	uint64_t ct = ct_new(), md, gmd;
	uint64_t old = 0;
	struct p4e_trig t = trig_of(ct, 1, 0);
	struct p4e_xfer x;

	target_me();
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	gmd = eng_md(&e, 0, &old, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	x.get_md = gmd;
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	cr_assert_eq(p4e_trig_fetch_atomic(e.ni[0], &x, &t), 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), -FI_EBUSY);
	cr_expect_eq(p4e_md_release(e.ni[0], gmd), -FI_EBUSY);
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	cr_expect_eq(p4e_md_release(e.ni[0], gmd), 0);
}

/* A put's get_md is not its business (a reused xfer may carry one). */
Test(eng_trig, put_ignores_get_md)
{
	uint64_t ct = ct_new(), md, other;
	struct p4e_trig t = trig_of(ct, 1, 0);
	struct p4e_xfer x;

	target_me();
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	other = eng_md(&e, 0, dst + 8192, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	x.get_md = other;
	cr_assert_eq(p4e_trig_put(e.ni[0], &x, &t), 0);
	cr_assert_eq(p4e_trig_get(e.ni[0], &x, &t), 0);
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(p4e_md_release(e.ni[0], other), 0,
		     "a triggered put released its unused get_md");
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

/* ---- chains ------------------------------------------------------------- */

Test(eng_trig, chain_across_counters)
{
	uint64_t a = ct_new(), b = ct_new();
	uint64_t l0 = logged_ct(0), l1 = logged_ct(1), l2 = logged_ct(2);
	struct p4e_trig ta = trig_of(a, 1, 0), tb = trig_of(b, 1, 0);
	static const int expect[] = { 0, 1 };

	/* B's op is posted first, but only A's increment of B makes it due */
	cr_assert_eq(p4e_trig_ct_inc(e.dom, l1, (struct p4e_ct_event){ 1, 0 },
				     &tb), 0);
	tb.threshold = 2;
	cr_assert_eq(p4e_trig_ct_inc(e.dom, l2, (struct p4e_ct_event){ 1, 0 },
				     &tb), 0);
	cr_assert_eq(p4e_trig_ct_inc(e.dom, b, (struct p4e_ct_event){ 1, 0 },
				     &ta), 0);
	cr_assert_eq(p4e_trig_ct_inc(e.dom, l0, (struct p4e_ct_event){ 1, 0 },
				     &ta), 0);
	fire_n = 0;
	ct_inc(a, 1, 0);
	log_expect(expect, 2);
	cr_expect_eq(eng_ct(e.dom, b).success, 1);
}

Test(eng_trig, ct_set_resets_between_iterations)
{
	uint64_t c = ct_new(), d = ct_new(), md0, md1;
	struct p4e_me_desc m;
	struct p4e_trig t = trig_of(c, 2, 0);
	struct p4e_xfer x0, x1;
	int it;

	/* side 1 counts arrivals on c; side 0 counts the answers on d */
	m = eng_me_desc(dst, 64, P4E_ME_OP_PUT | P4E_ME_EVENT_CT_COMM |
			P4E_ME_EVENT_COMM_DISABLE | P4E_ME_EVENT_LINK_DISABLE,
			0x7, 0);
	m.ct = c;
	eng_append(&e, 1, &m, P4E_PRIORITY_LIST, NULL);
	m = eng_me_desc(dst + 64, 64, P4E_ME_OP_PUT | P4E_ME_EVENT_CT_COMM |
			P4E_ME_EVENT_COMM_DISABLE | P4E_ME_EVENT_LINK_DISABLE,
			0x8, 0);
	m.ct = d;
	eng_append(&e, 0, &m, P4E_PRIORITY_LIST, NULL);
	md0 = eng_md(&e, 0, src, 8, P4E_MD_EVENT_SEND_DISABLE, P4E_HANDLE_NONE);
	md1 = eng_md(&e, 1, src + 8, 8, P4E_MD_EVENT_SEND_DISABLE,
		     P4E_HANDLE_NONE);
	x0 = eng_xfer(&e, 0, md0, 8, 0x7);
	x0.ack_req = P4E_NO_ACK_REQ;
	x1 = eng_xfer(&e, 1, md1, 8, 0x8);
	x1.ack_req = P4E_NO_ACK_REQ;
	for (it = 0; it < 4; it++) {
		/* the same threshold every time: the reset makes it work */
		cr_assert_eq(p4e_trig_put(e.ni[1], &x1, &t), 0);
		cr_assert_eq(p4e_trig_ct_set(e.dom, c,
					     (struct p4e_ct_event){ 0, 0 }, &t),
			     0);
		cr_assert_eq(p4e_put(e.ni[0], &x0), 0);
		eng_progress(&e);
		cr_expect_eq(eng_ct(e.dom, d).success, (uint64_t)it,
			     "fired after one arrival (iteration %d)", it);
		cr_expect_eq(eng_ct(e.dom, c).success, 1);
		cr_assert_eq(p4e_put(e.ni[0], &x0), 0);
		eng_progress(&e);
		cr_expect_eq(eng_ct(e.dom, d).success, (uint64_t)it + 1);
		cr_expect_eq(eng_ct(e.dom, c).success, 0, "not reset");
	}
}

/*
 * A ring broadcast between three "processes" (domains), as Portals
 * collectives do it: the root puts iteration k's block to rank 1; every
 * rank forwards from its receive buffer with a triggered put on the
 * counter of that buffer; the root's counter reaching k starts iteration
 * k + 1. Only the root's first put is not triggered.
 */
Test(eng_trig, ring_broadcast_three_domains)
{
	enum { NODES = 3, ITERS = 5, BLK = 16 };
	static uint8_t buf[NODES][ITERS * BLK];
	struct p4e_ni_attr attr = eng_ni_attr(4096);
	struct eng_node n[NODES];
	struct p4e_dom *doms[NODES];
	uint64_t ct[NODES], md[NODES];
	struct p4e_me_desc m;
	struct p4e_xfer x;
	struct p4e_trig t;
	int i, k;

	memset(buf, 0, sizeof(buf));
	for (i = 0; i < ITERS * BLK; i++)
		buf[0][i] = (uint8_t)(i * 13 + 1);
	for (i = 0; i < NODES; i++) {
		eng_node_open(&n[i], NULL, &attr, 0, 64);
		doms[i] = n[i].dom;
		cr_assert_eq(p4e_ct_alloc(n[i].dom, &ct[i]), 0);
	}
	for (i = 0; i < NODES; i++) {
		/* the root's entry only counts the blocks coming home */
		m = eng_me_desc(buf[i], sizeof(buf[i]),
				P4E_ME_OP_PUT | P4E_ME_EVENT_CT_COMM |
				P4E_ME_EVENT_COMM_DISABLE, 0x77, 0);
		m.ct = ct[i];
		if (!i)
			m.length = 0;
		cr_assert_eq(p4e_me_append(n[i].ni, n[i].pt, &m,
					   P4E_PRIORITY_LIST, NULL, 0,
					   &(uint64_t){ 0 }), 0);
		cr_assert_eq(p4e_md_bind(n[i].ni, &(struct p4e_md_desc){
					 .start = buf[i],
					 .length = sizeof(buf[i]) }, &md[i]),
			     0);
	}
	for (k = 0; k < ITERS; k++) {
		for (i = 0; i < NODES; i++) {
			int next = (i + 1) % NODES;

			memset(&x, 0, sizeof(x));
			x.md = md[i];
			x.local_offset = k * BLK;
			x.length = BLK;
			x.ack_req = P4E_NO_ACK_REQ;
			x.target = eng_peer_of(n[i].dom, n[next].ni);
			x.pt_index = n[next].pt;
			x.match_bits = 0x77;
			x.remote_offset = k * BLK;
			/* ranks forward block k when it arrived; the root
			 * sends block k when block k - 1 came home */
			t = trig_of(ct[i], i ? k + 1 : k, 0);
			if (!i && !k)
				cr_assert_eq(p4e_put(n[i].ni, &x), 0);
			else
				cr_assert_eq(p4e_trig_put(n[i].ni, &x, &t), 0);
		}
	}
	eng_progress_doms(doms, NODES);
	for (i = 0; i < NODES; i++) {
		struct p4e_ct_event v = eng_ct(n[i].dom, ct[i]);

		cr_expect_eq(v.success, ITERS, "rank %d counted %lu", i,
			     (unsigned long)v.success);
		cr_expect_eq(v.failure, 0);
		cr_expect_eq(memcmp(buf[i], buf[0], sizeof(buf[0])), 0,
			     "rank %d has other data", i);
	}
	for (i = 0; i < NODES; i++)
		eng_node_close(&n[i]);
}

/* ---- ops the NI cannot take yet ----------------------------------------- */

Test(eng_trig, eagain_stays_pending_and_fires_in_order)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096), battr = attr;
	struct eng_node a, b;
	struct p4e_me_desc m = eng_me_desc(dst, sizeof(dst), P4E_ME_OP_PUT |
					   P4E_ME_EVENT_LINK_DISABLE, 0x7, 0);
	struct p4e_xfer x;
	struct p4e_trig t;
	struct p4e_event ev;
	uint64_t ct, md, me, t0;
	int i, ret;

	attr.desired.max_ops = 2;
	eng_node_open(&a, e.dom, &attr, 0, 64);
	eng_node_open(&b, e.dom, &battr, 0, 64);
	cr_assert_eq(p4e_me_append(b.ni, b.pt, &m, P4E_PRIORITY_LIST, NULL, 0,
				   &me), 0);
	ct = ct_new();
	cr_assert_eq(p4e_md_bind(a.ni, &(struct p4e_md_desc){ .start = src,
				 .length = 8, .eq = a.eq }, &md), 0);
	memset(&x, 0, sizeof(x));
	x.md = md;
	x.length = 8;
	x.ack_req = P4E_ACK_REQ;
	x.target = eng_peer_of(e.dom, b.ni);
	x.pt_index = b.pt;
	x.match_bits = 0x7;
	for (i = 0; i < 2; i++) {
		x.hdr_data = i;
		cr_assert_eq(p4e_put(a.ni, &x), 0);
	}
	x.hdr_data = 99;
	cr_assert_eq(p4e_put(a.ni, &x), -FI_EAGAIN, "max_ops not in force");
	for (i = 2; i < 6; i++) {
		x.hdr_data = i;
		t = trig_of(ct, 1, i & 1 ? P4E_TRIG_SUCCESS_ONLY : 0);
		cr_assert_eq(p4e_trig_put(a.ni, &x, &t), 0);
	}
	ct_inc(ct, 1, 0);		/* due now, but no slot */
	cr_expect_eq(p4e_md_release(a.ni, md), -FI_EBUSY);
	for (i = 0; i < 6; i++) {
		ev = eng_eq_await(e.dom, b.eq);
		cr_expect_eq(ev.type, P4E_EVENT_PUT);
		cr_expect_eq(ev.hdr_data, (uint64_t)i, "put %d arrived as %lu",
			     i, (unsigned long)ev.hdr_data);
	}
	eng_eq_empty(b.eq);
	/* the MD is busy until the last ack is back (in flight over TCP) */
	t0 = eng_now_ms();
	while ((ret = p4e_md_release(a.ni, md)) == -FI_EBUSY &&
	       eng_now_ms() - t0 < 10000)
		p4e_dom_progress(e.dom, 64);
	cr_expect_eq(ret, 0);
	eng_node_close(&a);
	eng_node_close(&b);
}

/* ---- limits and bad arguments ------------------------------------------- */

Test(eng_trig, bad_arguments_hold_nothing)
{
	uint64_t ct = ct_new(), md, me = 0x4242;
	struct p4e_me_desc d = eng_me_desc(dst, 64, P4E_ME_OP_PUT, 0x7, 0);
	struct p4e_trig t = trig_of(ct, 1, 0);
	struct p4e_xfer x;

	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	cr_expect_eq(p4e_trig_put(e.ni[0], &x, NULL), -FI_EINVAL);
	t.flags = 0x80;
	cr_expect_eq(p4e_trig_put(e.ni[0], &x, &t), -FI_EINVAL);
	t = trig_of(ct + 1, 1, 0);
	cr_expect_eq(p4e_trig_put(e.ni[0], &x, &t), -FI_EINVAL);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0,
		     "a refused post held the MD");
	t = trig_of(ct, 1, 0);
	cr_expect_eq(p4e_trig_put(e.ni[0], &x, &t), -FI_EINVAL, "released MD");
	x.md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x.length = 9;
	cr_expect_eq(p4e_trig_put(e.ni[0], &x, &t), -FI_EINVAL);
	t.flags = 0x80;
	cr_expect_eq(p4e_trig_me_append(e.ni[1], e.pt[1], &d,
					P4E_PRIORITY_LIST, NULL, 0, &t, &me),
		     -FI_EINVAL);
	cr_expect_eq(me, 0x4242, "output written on failure");
	t = trig_of(ct + 1, 1, 0);
	cr_expect_eq(p4e_trig_me_unlink(e.ni[1], 0x1234, &t), -FI_EINVAL);
	cr_expect_eq(p4e_trig_ct_set(e.dom, ct, (struct p4e_ct_event){ 0, 0 },
				     &t), -FI_EINVAL);
	/* nothing was left pending on the counter */
	ct_inc(ct, 10, 0);
	eng_progress(&e);
	eng_no_event(&e, 1);
}

Test(eng_trig, pool_limit)
{
	struct p4e_dom_attr attr = { .max_triggered_ops = 2 };
	struct p4e_dom *dom;
	struct p4e_trig t;
	uint64_t ct, tgt;
	struct p4e_ct_event one = { 1, 0 }, v;

	cr_assert_eq(p4e_dom_create(&attr, &dom), 0);
	cr_assert_eq(p4e_ct_alloc(dom, &ct), 0);
	cr_assert_eq(p4e_ct_alloc(dom, &tgt), 0);
	t = trig_of(ct, 1, 0);
	cr_assert_eq(p4e_trig_ct_inc(dom, tgt, one, &t), 0);
	cr_assert_eq(p4e_trig_ct_inc(dom, tgt, one, &t), 0);
	cr_expect_eq(p4e_trig_ct_inc(dom, tgt, one, &t), -FI_ENOSPC);
	cr_assert_eq(p4e_ct_inc(dom, ct, one), 0);
	cr_assert_eq(p4e_ct_get(dom, tgt, &v), 0);
	cr_expect_eq(v.success, 2);
	/* fired ops gave their slots back */
	t = trig_of(ct, 5, 0);
	cr_expect_eq(p4e_trig_ct_inc(dom, tgt, one, &t), 0);
	cr_expect_eq(p4e_trig_ct_inc(dom, tgt, one, &t), 0);
	cr_expect_eq(p4e_dom_destroy(dom), 0);
}

Test(eng_trig, ni_destroy_drops_only_its_ops)
{
	uint64_t ct = ct_new(), target = logged_ct(0), md;
	struct p4e_trig t = trig_of(ct, 1, 0);
	struct p4e_xfer x;

	target_me();
	md = eng_md(&e, 0, src, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0x7);
	cr_assert_eq(p4e_trig_put(e.ni[0], &x, &t), 0);
	cr_assert_eq(p4e_trig_ct_inc(e.dom, target,
				     (struct p4e_ct_event){ 1, 0 }, &t), 0);
	cr_assert_eq(p4e_ni_destroy(e.ni[0]), 0);
	e.ni[0] = NULL;
	fire_n = 0;
	ct_inc(ct, 1, 0);
	eng_progress(&e);
	cr_expect_eq(fire_n, 1, "the CT op went with the NI");
	eng_no_event(&e, 1);
}
