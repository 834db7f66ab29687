/*
 * test_eng_ct.c - counting events: alloc / free / get / set / inc, stale
 * handles, the domain limit, success and failure counts from operations
 * on MDs (SEND, ACK, REPLY) and MEs (COMM, OVERFLOW), bytes mode, failures
 * always +1, the [ext] notify callback on every change, and rule 2 (a
 * rejected operation counts no success and changes nothing); and the
 * ring event queue for full events (order, wrap, PTL_EQ_DROPPED).
 */
#include "p4e_test.h"

static struct eng e;
static uint8_t src[4096], dst[4096];

static void setup(void)
{
	eng_open(&e);
	memset(src, 0xab, sizeof(src));
	memset(dst, 0, sizeof(dst));
}

static void teardown(void)
{
	eng_close(&e);
}

TestSuite(eng_ct, .init = setup, .fini = teardown, .timeout = 30);

static uint64_t ct_new(void)
{
	uint64_t ct;

	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	return ct;
}

#define CT_EQ(ct, s, f)							\
	do {								\
		struct p4e_ct_event v_ = eng_ct(e.dom, (ct));		\
		cr_expect_eq(v_.success, (uint64_t)(s),			\
			     "success %lu, expected %lu",		\
			     (unsigned long)v_.success,		\
			     (unsigned long)(s));			\
		cr_expect_eq(v_.failure, (uint64_t)(f),			\
			     "failure %lu, expected %lu",		\
			     (unsigned long)v_.failure,		\
			     (unsigned long)(f));			\
	} while (0)

/* ---- the object --------------------------------------------------------- */

Test(eng_ct, alloc_set_inc_get)
{
	uint64_t ct = ct_new(), ct2 = ct_new();
	struct p4e_ct_event v = { 5, 2 }, inc = { 3, 4 };

	cr_expect_neq(ct, P4E_HANDLE_NONE);
	cr_expect_neq(ct, ct2);
	CT_EQ(ct, 0, 0);
	cr_assert_eq(p4e_ct_set(e.dom, ct, v), 0);
	CT_EQ(ct, 5, 2);
	cr_assert_eq(p4e_ct_inc(e.dom, ct, inc), 0);
	CT_EQ(ct, 8, 6);
	/* the other counter is untouched */
	CT_EQ(ct2, 0, 0);
	v.success = 1;
	v.failure = 0;
	cr_assert_eq(p4e_ct_set(e.dom, ct, v), 0);
	CT_EQ(ct, 1, 0);
	cr_expect_eq(p4e_ct_free(e.dom, ct), 0);
	cr_expect_eq(p4e_ct_free(e.dom, ct2), 0);
}

Test(eng_ct, bad_arguments)
{
	uint64_t ct = ct_new();
	struct p4e_ct_event v = { 1, 1 };

	cr_expect_eq(p4e_ct_alloc(NULL, &ct), -FI_EINVAL);
	cr_expect_eq(p4e_ct_alloc(e.dom, NULL), -FI_EINVAL);
	cr_expect_eq(p4e_ct_get(e.dom, ct, NULL), -FI_EINVAL);
	cr_expect_eq(p4e_ct_get(e.dom, P4E_HANDLE_NONE, &v), -FI_EINVAL);
	cr_expect_eq(p4e_ct_set(e.dom, P4E_HANDLE_NONE, v), -FI_EINVAL);
	cr_expect_eq(p4e_ct_inc(e.dom, P4E_HANDLE_NONE, v), -FI_EINVAL);
	cr_expect_eq(p4e_ct_free(e.dom, P4E_HANDLE_NONE), -FI_EINVAL);
	cr_expect_eq(p4e_ct_get(e.dom, ct ^ 0x100000000ULL, &v), -FI_EINVAL);
	/* a failed get writes nothing */
	v.success = 77;
	cr_expect_eq(p4e_ct_get(e.dom, ct + 1000, &v), -FI_EINVAL);
	cr_expect_eq(v.success, 77);
}

static int notify_calls;
static uint64_t notify_last_ct;
static void *notify_last_ctx;

static void notify_cb(void *ctx, uint64_t ct,
			 const struct p4e_ct_event *val)
{
	notify_calls++;
	notify_last_ct = ct;
	notify_last_ctx = ctx;
}

Test(eng_ct, stale_handle_refused)
{
	struct p4e_ct_event v = { 1, 0 };
	struct p4e_trig trig;
	struct p4e_me_desc d;
	struct p4e_md_desc md = { .start = src, .length = 8 };
	uint64_t old = ct_new(), fresh, h;

	cr_assert_eq(p4e_ct_set_notify(e.dom, old, notify_cb, NULL), 0);
	cr_assert_eq(p4e_ct_set(e.dom, old, v), 0);
	notify_calls = 0;
	cr_assert_eq(p4e_ct_free(e.dom, old), 0);
	/* the slot is reused: a new generation, a fresh counter */
	fresh = ct_new();
	cr_expect_neq(fresh, old);
	cr_expect_eq(p4e_ct_get(e.dom, old, &v), -FI_EINVAL);
	cr_expect_eq(p4e_ct_set(e.dom, old, v), -FI_EINVAL);
	cr_expect_eq(p4e_ct_inc(e.dom, old, v), -FI_EINVAL);
	cr_expect_eq(p4e_ct_free(e.dom, old), -FI_EINVAL);
	cr_expect_eq(p4e_ct_cancel_triggered(e.dom, old), -FI_EINVAL);
	cr_expect_eq(p4e_ct_set_notify(e.dom, old, notify_cb, NULL),
		     -FI_EINVAL);
	trig = (struct p4e_trig){ .ct = old, .threshold = 0 };
	cr_expect_eq(p4e_trig_ct_inc(e.dom, fresh, v, &trig), -FI_EINVAL);
	trig.ct = fresh;
	cr_expect_eq(p4e_trig_ct_inc(e.dom, old, v, &trig), -FI_EINVAL);
	md.ct = old;
	cr_expect_eq(p4e_md_bind(e.ni[0], &md, &h), -FI_EINVAL);
	d = eng_me_desc(dst, 8, P4E_ME_OP_PUT, 0, 0);
	d.ct = old;
	cr_expect_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &h), -FI_EINVAL);
	/* nothing of the old counter leaked into the new one */
	CT_EQ(fresh, 0, 0);
	cr_assert_eq(p4e_ct_inc(e.dom, fresh, v), 0);
	cr_expect_eq(notify_calls, 0, "the freed counter's notify was kept");
	CT_EQ(fresh, 1, 0);
}

Test(eng_ct, domain_limit)
{
	struct p4e_dom_attr attr = { .max_cts = 3 };
	struct p4e_dom *dom;
	uint64_t ct[4];
	int i;

	cr_assert_eq(p4e_dom_create(&attr, &dom), 0);
	for (i = 0; i < 3; i++)
		cr_assert_eq(p4e_ct_alloc(dom, &ct[i]), 0);
	ct[3] = 0x1234;
	cr_expect_eq(p4e_ct_alloc(dom, &ct[3]), -FI_ENOSPC);
	cr_expect_eq(ct[3], 0x1234, "output written on failure");
	cr_assert_eq(p4e_ct_free(dom, ct[1]), 0);
	cr_expect_eq(p4e_ct_alloc(dom, &ct[3]), 0);
	cr_expect_eq(p4e_dom_destroy(dom), 0);
}

/* ---- counts from operations --------------------------------------------- */

static uint64_t me_with_ct(unsigned options, size_t len, uint64_t ct,
			   enum p4e_list list)
{
	struct p4e_me_desc d = eng_me_desc(dst, len, options, 0x7, 0);

	d.ct = ct;
	return eng_append(&e, 1, &d, list, NULL);
}

static void put_from_0(uint64_t md, size_t len, enum p4e_ack_req ack)
{
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, 0x7);

	x.ack_req = ack;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
}

Test(eng_ct, put_counts_send_ack_and_comm)
{
	uint64_t cmd = ct_new(), cme = ct_new(), md;

	me_with_ct(P4E_ME_OP_PUT | P4E_ME_EVENT_CT_COMM, 64, cme,
		   P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 64, P4E_MD_EVENT_CT_SEND | P4E_MD_EVENT_CT_ACK,
		    cmd);
	put_from_0(md, 16, P4E_ACK_REQ);
	CT_EQ(cmd, 2, 0);
	CT_EQ(cme, 1, 0);
	put_from_0(md, 16, P4E_ACK_REQ);
	CT_EQ(cmd, 4, 0);
	CT_EQ(cme, 2, 0);
	/* no ack requested: only the send counts */
	put_from_0(md, 16, P4E_NO_ACK_REQ);
	CT_EQ(cmd, 5, 0);
	CT_EQ(cme, 3, 0);
}

Test(eng_ct, ct_ack_req_counts_without_event)
{
	uint64_t ct = ct_new(), md;
	struct p4e_event ev;

	me_with_ct(P4E_ME_OP_PUT, 64, P4E_HANDLE_NONE, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 64, P4E_MD_EVENT_CT_ACK, ct);
	put_from_0(md, 8, P4E_CT_ACK_REQ);
	CT_EQ(ct, 1, 0);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_SEND);
	eng_no_event(&e, 0);
}

Test(eng_ct, counting_ignores_success_disable)
{
	uint64_t ct = ct_new(), md;

	me_with_ct(P4E_ME_OP_PUT, 64, P4E_HANDLE_NONE, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 64, P4E_MD_EVENT_CT_SEND | P4E_MD_EVENT_CT_ACK |
		    P4E_MD_EVENT_SUCCESS_DISABLE, ct);
	put_from_0(md, 8, P4E_ACK_REQ);
	CT_EQ(ct, 2, 0);
	eng_no_event(&e, 0);
}

Test(eng_ct, bytes_mode_md_and_me_with_truncation)
{
	uint64_t cmd = ct_new(), cme = ct_new(), md;

	/* the entry takes 60 of 100 bytes: a success of 60 bytes */
	me_with_ct(P4E_ME_OP_PUT | P4E_ME_EVENT_CT_COMM | P4E_ME_EVENT_CT_BYTES,
		   60, cme, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 100, P4E_MD_EVENT_CT_SEND |
		    P4E_MD_EVENT_CT_ACK | P4E_MD_EVENT_CT_BYTES, cmd);
	put_from_0(md, 100, P4E_ACK_REQ);
	CT_EQ(cmd, 100 + 60, 0);
	CT_EQ(cme, 60, 0);
}

Test(eng_ct, bytes_mode_reply)
{
	uint64_t cmd = ct_new(), cme = ct_new(), md;
	struct p4e_xfer x;

	me_with_ct(P4E_ME_OP_GET | P4E_ME_EVENT_CT_COMM | P4E_ME_EVENT_CT_BYTES,
		   50, cme, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 80, P4E_MD_EVENT_CT_REPLY |
		    P4E_MD_EVENT_CT_BYTES, cmd);
	x = eng_xfer(&e, 0, md, 80, 0x7);
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);
	CT_EQ(cmd, 50, 0);
	CT_EQ(cme, 50, 0);
}

Test(eng_ct, bytes_mode_failure_counts_one)
{
	uint64_t cmd = ct_new(), md;
	struct p4e_event ev;

	/* nothing to match at the target: dropped */
	md = eng_md(&e, 0, src, 100, P4E_MD_EVENT_CT_SEND |
		    P4E_MD_EVENT_CT_ACK | P4E_MD_EVENT_CT_BYTES, cmd);
	put_from_0(md, 100, P4E_ACK_REQ);
	CT_EQ(cmd, 100, 1);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_SEND);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_ACK);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_DROPPED);
}

Test(eng_ct, overflow_counts)
{
	uint64_t cof = ct_new(), cpr = ct_new(), md;
	struct p4e_me_desc d;
	struct p4e_event ev;

	me_with_ct(P4E_ME_OP_PUT | P4E_ME_EVENT_CT_COMM, 4096, cof,
		   P4E_OVERFLOW_LIST);
	md = eng_md(&e, 0, src, 40, 0, P4E_HANDLE_NONE);
	put_from_0(md, 40, P4E_ACK_REQ);
	CT_EQ(cof, 1, 0);
	ev = eng_event_type(&e, 1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	/* the receive meets the unexpected header: an overflow count */
	d = eng_me_desc(dst + 1024, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE |
			P4E_ME_EVENT_CT_OVERFLOW | P4E_ME_EVENT_CT_COMM |
			P4E_ME_EVENT_CT_BYTES, 0x7, 0);
	d.ct = cpr;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
	ev = eng_event_type(&e, 1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 40);
	CT_EQ(cpr, 40, 0);
	CT_EQ(cof, 1, 0);
}

/* ---- rule 2: a rejected operation changes nothing -------------------- */

Test(eng_ct, rejected_get_counts_no_success)
{
	uint64_t cmd = ct_new(), cme = ct_new(), md;
	struct p4e_me_desc d;
	struct p4e_xfer x;
	struct p4e_event ev;
	int64_t sr;

	/* put-only, use-once, locally managed */
	d = eng_me_desc(dst, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE |
			P4E_ME_MANAGE_LOCAL | P4E_ME_EVENT_CT_COMM, 0x7, 0);
	d.ct = cme;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, (void *)0x99);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_LINK);
	md = eng_md(&e, 0, src, 64, P4E_MD_EVENT_CT_REPLY |
		    P4E_MD_EVENT_CT_SEND | P4E_MD_EVENT_CT_ACK, cmd);
	x = eng_xfer(&e, 0, md, 16, 0x7);
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = eng_event_type(&e, 0, P4E_EVENT_REPLY);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OP_VIOLATION);
	CT_EQ(cmd, 0, 1);
	CT_EQ(cme, 0, 0);
	cr_expect_eq(p4e_ni_status(e.ni[1], P4E_SR_OPERATION_VIOLATIONS, &sr),
		     0);
	cr_expect_eq(sr, 1);
	eng_no_event(&e, 1);

	/* the entry is still there, its offset still 0 */
	put_from_0(md, 16, P4E_ACK_REQ);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.start, dst);
	cr_expect_eq(ev.user_ptr, (void *)0x99);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_AUTO_UNLINK);
	CT_EQ(cme, 1, 0);
	CT_EQ(cmd, 2, 1);
}

Test(eng_ct, permission_violation_counts_failure_only)
{
	uint64_t cmd = ct_new(), cme = ct_new(), md;
	struct p4e_me_desc d;
	struct p4e_event ev;
	int64_t sr;

	/* only uid 7 may write; ni[0] has uid 1000 */
	d = eng_me_desc(dst, 64, P4E_ME_OP_PUT | P4E_ME_EVENT_CT_COMM |
			P4E_ME_EVENT_CT_BYTES, 0x7, 0);
	d.ct = cme;
	d.uid = 7;
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, NULL);
	md = eng_md(&e, 0, src, 64, P4E_MD_EVENT_CT_ACK | P4E_MD_EVENT_CT_BYTES,
		    cmd);
	put_from_0(md, 32, P4E_ACK_REQ);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_SEND);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_ACK);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_PERM_VIOLATION);
	cr_expect_eq(ev.mlength, 0);
	/* bytes mode: a failure is still 1, never the length */
	CT_EQ(cmd, 0, 1);
	CT_EQ(cme, 0, 0);
	cr_expect_eq(p4e_ni_status(e.ni[1], P4E_SR_PERMISSION_VIOLATIONS, &sr),
		     0);
	cr_expect_eq(sr, 1);
	cr_expect_eq(dst[0], 0, "a rejected put wrote data");
}

/* ---- [ext] notify ------------------------------------------------------- */

Test(eng_ct, notify_on_every_change)
{
	uint64_t ct = ct_new(), other = ct_new(), md;
	struct p4e_ct_event one = { 1, 0 };
	struct p4e_trig trig = { .ct = other, .threshold = 1 };
	int ctx_tag;

	notify_calls = 0;
	cr_assert_eq(p4e_ct_set_notify(e.dom, ct, notify_cb, &ctx_tag), 0);
	cr_assert_eq(p4e_ct_set(e.dom, ct, one), 0);
	cr_expect_eq(notify_calls, 1);
	cr_expect_eq(notify_last_ct, ct);
	cr_expect_eq(notify_last_ctx, &ctx_tag);
	cr_assert_eq(p4e_ct_inc(e.dom, ct, one), 0);
	cr_expect_eq(notify_calls, 2);
	/* a change of another counter does not call it */
	cr_assert_eq(p4e_ct_inc(e.dom, other, (struct p4e_ct_event){ 0, 0 }),
		     0);
	cr_expect_eq(notify_calls, 2);

	/* counts by the engine: a success (ACK) and a failure (ACK) */
	md = eng_md(&e, 0, src, 64, P4E_MD_EVENT_CT_ACK |
		    P4E_MD_EVENT_CT_BYTES, ct);
	put_from_0(md, 8, P4E_ACK_REQ);		/* no entry: dropped */
	cr_expect_eq(notify_calls, 3);
	CT_EQ(ct, 2, 1);
	me_with_ct(P4E_ME_OP_PUT, 64, P4E_HANDLE_NONE, P4E_PRIORITY_LIST);
	put_from_0(md, 8, P4E_ACK_REQ);
	cr_expect_eq(notify_calls, 4);
	CT_EQ(ct, 10, 1);

	/* triggered changes notify too */
	cr_assert_eq(p4e_trig_ct_inc(e.dom, ct, one, &trig), 0);
	trig.threshold = 2;
	cr_assert_eq(p4e_trig_ct_set(e.dom, ct,
				     (struct p4e_ct_event){ 100, 0 }, &trig),
		     0);
	cr_expect_eq(notify_calls, 4);
	cr_assert_eq(p4e_ct_inc(e.dom, other, one), 0);
	cr_expect_eq(notify_calls, 5);
	CT_EQ(ct, 11, 1);
	cr_assert_eq(p4e_ct_inc(e.dom, other, one), 0);
	cr_expect_eq(notify_calls, 6);
	cr_expect_eq(notify_last_ct, ct);
	CT_EQ(ct, 100, 0);

	/* switched off */
	cr_assert_eq(p4e_ct_set_notify(e.dom, ct, NULL, NULL), 0);
	cr_assert_eq(p4e_ct_inc(e.dom, ct, one), 0);
	cr_expect_eq(notify_calls, 6);
}

/* ---- the ring EQ -------------------------------------------------------- */

static void ring_put(struct p4e_eq *eq, uint64_t id)
{
	struct p4e_event ev = { .type = P4E_EVENT_PUT, .hdr_data = id };

	eq->ops->deliver(eq, &ev);
}

static void ring_expect(struct p4e_eq *eq, uint64_t id, int ret)
{
	struct p4e_event ev;

	cr_assert_eq(p4e_eq_ring_get(eq, &ev), ret, "event %lu",
		     (unsigned long)id);
	cr_expect_eq(ev.hdr_data, id);
}

Test(eng_ct, ring_order_space_and_wrap)
{
	struct p4e_eq *eq;
	struct p4e_event ev;
	uint64_t i;

	cr_assert_eq(p4e_eq_ring_create(4, &eq), 0);
	cr_expect_eq(p4e_eq_ring_get(eq, &ev), -FI_EAGAIN);
	cr_expect_eq(eq->ops->space(eq), 4);
	for (i = 0; i < 3; i++)
		ring_put(eq, i);
	cr_expect_eq(eq->ops->space(eq), 1);
	for (i = 0; i < 3; i++)
		ring_expect(eq, i, 0);
	cr_expect_eq(p4e_eq_ring_get(eq, &ev), -FI_EAGAIN);
	/* many times round the ring, never full: nothing reported lost */
	for (i = 0; i < 50; i++) {
		ring_put(eq, 100 + i);
		ring_put(eq, 200 + i);
		ring_expect(eq, 100 + i, 0);
		ring_expect(eq, 200 + i, 0);
	}
	cr_expect_eq(eq->ops->space(eq), 4);
	p4e_eq_ring_destroy(eq);
}

Test(eng_ct, ring_overwrite_reports_dropped_once)
{
	struct p4e_eq *eq;
	struct p4e_event ev;
	uint64_t i;

	cr_assert_eq(p4e_eq_ring_create(3, &eq), 0);
	for (i = 0; i < 5; i++)
		ring_put(eq, i);
	cr_expect_eq(eq->ops->space(eq), 0);
	/* the oldest two were overwritten: the next read says so */
	ring_expect(eq, 2, P4E_EQ_DROPPED);
	ring_expect(eq, 3, 0);
	ring_put(eq, 5);
	ring_expect(eq, 4, 0);
	ring_expect(eq, 5, 0);
	cr_expect_eq(p4e_eq_ring_get(eq, &ev), -FI_EAGAIN);
	p4e_eq_ring_destroy(eq);

	cr_assert_eq(p4e_eq_ring_create(1, &eq), 0);
	ring_put(eq, 7);
	ring_put(eq, 8);
	ring_expect(eq, 8, P4E_EQ_DROPPED);
	ring_put(eq, 9);
	ring_expect(eq, 9, 0);
	p4e_eq_ring_destroy(eq);
}

static void other_deliver(struct p4e_eq *eq, const struct p4e_event *ev)
{
	(void)eq;
	(void)ev;
}

Test(eng_ct, ring_bad_arguments)
{
	static const struct p4e_eq_ops other_ops = { .deliver = other_deliver };
	struct p4e_eq other = { .ops = &other_ops };
	struct p4e_eq *eq = (struct p4e_eq *)0x1;
	struct p4e_event ev;

	cr_expect_eq(p4e_eq_ring_create(0, &eq), -FI_EINVAL);
	cr_expect_eq(eq, (struct p4e_eq *)0x1, "output written on failure");
	cr_expect_eq(p4e_eq_ring_create(4, NULL), -FI_EINVAL);
	/* not a ring: refused, never taken apart */
	cr_expect_eq(p4e_eq_ring_get(NULL, &ev), -FI_EINVAL);
	cr_expect_eq(p4e_eq_ring_get(&other, &ev), -FI_EINVAL);
	p4e_eq_ring_destroy(NULL);
	p4e_eq_ring_destroy(&other);
	cr_assert_eq(p4e_eq_ring_create(2, &eq), 0);
	ring_put(eq, 1);
	cr_expect_eq(p4e_eq_ring_get(eq, NULL), -FI_EINVAL);
	ring_expect(eq, 1, 0);
	p4e_eq_ring_destroy(eq);
}
