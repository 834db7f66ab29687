/*
 * test_eng_atomic_rules.c - engine atomics cases with a rule of their
 * own, between two NIs: a read keeps negative zero, the largest sizes the
 * NI's limits allow (copies and old values must fit), offsets past the
 * end, permissions (fetch and swap need OP_PUT and OP_GET), and remote
 * atomicity with two initiators, and with two target NIs applying to one
 * word from two threads. Same suite (eng_atomic) as test_eng_atomic.c,
 * which has the op x datatype matrix.
 *
 * p4e_priv.h gives the NI's transport instance, for the loop's hold hook.
 */
#include <complex.h>
#include <math.h>
#include <pthread.h>

#include "p4e_atomic_test.h"
#include "p4e_priv.h"

TestSuite(eng_atomic, .init = atomic_setup, .fini = atomic_teardown,
	  .timeout = 60);

/* ---- single cases with a rule of their own ------------------------------- */

/* ATOMIC_READ is a load: -0.0 comes back as -0.0, the target unchanged. */
Test(eng_atomic, read_keeps_negative_zero)
{
	double tgt = -0.0, res = 1.0, dummy = 0.0;
	struct p4e_me_desc d = eng_me_desc(&tgt, sizeof(tgt), P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0, 0);
	struct p4e_xfer x;
	uint64_t me;

	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	x = eng_xfer(&e, 0, eng_md(&e, 0, &dummy, 8, 0, P4E_HANDLE_NONE), 8,
		     0);
	x.get_md = eng_md(&e, 0, &res, 8, 0, P4E_HANDLE_NONE);
	x.atomic_op = P4E_ATOMIC_READ;
	x.atomic_type = P4E_DOUBLE;
	cr_assert_eq(p4e_fetch_atomic(e.ni[0], &x), 0);
	eng_progress(&e);
	cr_expect(res == 0.0 && signbit(res), "fetched %g", res);
	cr_expect(signbit(tgt), "target still -0.0");
	cr_expect_eq(ini_event(P4E_EVENT_REPLY).mlength, 8);
}

/* The largest atomic of the fixture: 512 elements in one message. */
Test(eng_atomic, max_size)
{
	static uint64_t tgt[512], opnd[512], res[512];
	struct p4e_me_desc d = eng_me_desc(tgt, sizeof(tgt), P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0, 0);
	struct p4e_xfer x;
	uint64_t me;
	int i;

	for (i = 0; i < 512; i++) {
		tgt[i] = (uint64_t)i << 20;
		opnd[i] = (uint64_t)i + 1;
	}
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	x = eng_xfer(&e, 0, eng_md(&e, 0, opnd, sizeof(opnd), 0,
				   P4E_HANDLE_NONE), sizeof(opnd), 0);
	x.get_md = eng_md(&e, 0, res, sizeof(res), 0, P4E_HANDLE_NONE);
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	cr_assert_eq(p4e_atomic(e.ni[0], &x), 0);
	cr_assert_eq(p4e_fetch_atomic(e.ni[0], &x), 0);
	eng_progress(&e);
	for (i = 0; i < 512; i++) {
		cr_expect_eq(tgt[i], ((uint64_t)i << 20) + 2 * (i + 1));
		cr_expect_eq(res[i], ((uint64_t)i << 20) + i + 1);
	}
}

/*
 * With the engine's default sizes (eager 16 KiB) an atomic may be as large
 * as the NI's limits say; the initiator's copies and the target's buffer
 * for old values must hold that much. Three fetches in flight at once
 * need three copies side by side; then a compare-and-swap,
 * which carries compare values as well.
 */
Test(eng_atomic, max_fetch_size_default_limits)
{
	static uint64_t tgt[4096], opnd[4096], cmpv[4096], res[3][4096];
	struct p4e_ni_limits lim;
	struct p4e_me_desc d;
	struct p4e_xfer x;
	uint64_t me, n;
	int ret, k;
	size_t i;

	eng_close(&e);
	eng_open_opts(&e, P4E_NI_MATCHING | P4E_NI_PHYSICAL, 0, 16384);
	p4e_ni_limits_get(e.ni[0], &lim);
	n = lim.max_fetch_atomic_size / 8;
	cr_assert(n >= 2 && n <= 4096);
	for (i = 0; i < n; i++) {
		tgt[i] = i;
		opnd[i] = 1000;
	}
	d = eng_me_desc(tgt, n * 8, P4E_ME_OP_PUT | P4E_ME_OP_GET, 0, 0);
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	x = eng_xfer(&e, 0, eng_md(&e, 0, opnd, n * 8, 0, P4E_HANDLE_NONE),
		     n * 8, 0);
	x.get_md = eng_md(&e, 0, res, sizeof(res), 0, P4E_HANDLE_NONE);
	x.atomic_type = P4E_UINT64;
	x.atomic_op = P4E_SUM;
	/* no progress in between: all three are in flight together */
	for (k = 0; k < 3; k++) {
		x.get_local_offset = (uint64_t)k * sizeof(res[0]);
		cr_assert_eq(p4e_fetch_atomic(e.ni[0], &x), 0);
	}
	eng_progress(&e);
	for (k = 0; k < 3; k++)
		cr_expect_eq(ini_event(P4E_EVENT_REPLY).mlength, n * 8);
	for (i = 0; i < n; i++) {
		for (k = 0; k < 3; k++)
			cr_expect_eq(res[k][i], i + 1000 * (uint64_t)k,
				     "fetch %d element %zu", k, i);
		cr_expect_eq(tgt[i], i + 3000);
	}
	/* a CSWAP carries compare values too: accepted whole, or refused
	 * as too large, never overrunning anything */
	x.atomic_op = P4E_CSWAP;
	x.operand = cmpv;
	x.get_local_offset = 0;
	for (i = 0; i < n; i++)
		cmpv[i] = i % 2 ? i + 3000 : 7;	/* odd ones are swapped */
	ret = p4e_swap(e.ni[0], &x);
	cr_assert(ret == 0 || ret == -FI_EMSGSIZE, "swap: %d", ret);
	if (ret)
		return;
	eng_progress(&e);
	for (i = 0; i < n; i++) {
		cr_expect_eq(res[0][i], i + 3000);
		cr_expect_eq(tgt[i], i % 2 ? 1000 : i + 3000);
	}
}

/*
 * Separate limits for atomics and fetching atomics: a fetch larger than
 * max_atomic_size but within max_fetch_atomic_size is fine, both at the
 * initiator and at the target.
 */
Test(eng_atomic, fetch_limit_separate)
{
	static uint64_t tgt[32], opnd[32], res[32];
	struct p4e_ni_attr attr = eng_ni_attr(4096);
	struct p4e_me_desc d = eng_me_desc(tgt, sizeof(tgt), P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0, 0);
	struct p4e_md_desc mdd = { .start = opnd, .length = sizeof(opnd) };
	struct eng_node a, b;
	struct p4e_xfer x;
	uint64_t me;
	int i;

	attr.desired.max_atomic_size = 64;
	attr.desired.max_fetch_atomic_size = 256;
	eng_node_open(&a, NULL, &attr, 0, 64);
	eng_node_open(&b, a.dom, &attr, 0, 64);
	for (i = 0; i < 32; i++) {
		tgt[i] = (uint64_t)i;
		opnd[i] = 100;
	}
	cr_assert_eq(p4e_me_append(b.ni, b.pt, &d, P4E_PRIORITY_LIST, NULL, 0,
				   &me), 0);
	memset(&x, 0, sizeof(x));
	cr_assert_eq(p4e_md_bind(a.ni, &mdd, &x.md), 0);
	mdd.start = res;
	mdd.eq = a.eq;
	cr_assert_eq(p4e_md_bind(a.ni, &mdd, &x.get_md), 0);
	x.length = 256;
	x.target = eng_peer_of(a.dom, b.ni);
	x.pt_index = b.pt;
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	cr_expect_eq(p4e_atomic(a.ni, &x), -FI_EMSGSIZE);
	cr_assert_eq(p4e_fetch_atomic(a.ni, &x), 0);
	eng_progress_doms(&a.dom, 1);
	cr_expect_eq(eng_eq_event_type(a.eq, P4E_EVENT_REPLY).ni_fail_type,
		     P4E_NI_OK);
	for (i = 0; i < 32; i++) {
		cr_expect_eq(res[i], (uint64_t)i);
		cr_expect_eq(tgt[i], (uint64_t)i + 100);
	}
	eng_node_close(&b);
	eng_node_close(&a);
}

/* Pitfall 4 for atomics: an offset past the entry touches nothing. */
Test(eng_atomic, offset_past_end)
{
	static const uint64_t offs[] = { 32, 40, UINT64_MAX - 7 };
	static uint64_t tgt[4], opnd = 1, res = 9;
	struct p4e_me_desc d = eng_me_desc(tgt, sizeof(tgt), P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0, 0);
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t me;
	size_t i;
	int k;

	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	cr_assert_eq(eng_event(&e, 1).type, P4E_EVENT_LINK);
	x = eng_xfer(&e, 0, eng_md(&e, 0, &opnd, 8, 0, P4E_HANDLE_NONE), 8, 0);
	x.get_md = eng_md(&e, 0, &res, 8, 0, P4E_HANDLE_NONE);
	x.atomic_type = P4E_UINT64;
	x.atomic_op = P4E_SUM;
	for (i = 0; i < 3; i++) {
		x.remote_offset = offs[i];
		for (k = 0; k < 2; k++) {
			cr_assert_eq(k ? p4e_fetch_atomic(e.ni[0], &x) :
					 p4e_atomic(e.ni[0], &x), 0);
			eng_progress(&e);
			ev = ini_event(k ? P4E_EVENT_REPLY : P4E_EVENT_ACK);
			cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
			cr_expect_eq(ev.mlength, 0);
			ev = eng_event(&e, 1);
			cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
			cr_expect_eq(ev.mlength, 0);
			cr_expect_eq(ev.start, offs[i] == 32 ?
				     (void *)(tgt + 4) : NULL);
		}
	}
	cr_expect(!tgt[0] && !tgt[1] && !tgt[2] && !tgt[3]);
	cr_expect_eq(res, 9, "nothing fetched");
}

/*
 * The target's side of the same: while the target NI has copies of its
 * own sends in flight, a maximal fetch's old values must not overrun the
 * buffers around them (seen when the target allocates more afterwards).
 */
Test(eng_atomic, target_old_values_fit)
{
	static uint64_t tgt[4096], opnd[4096], res[4096], small[8];
	struct p4e_ni_limits lim;
	struct p4e_me_desc d;
	struct p4e_xfer x, px;
	uint64_t me, n, pmd;
	size_t i;
	int k;

	if (!eng_is_loop())
		cr_skip_test("uses the loop transport's test hooks");
	eng_close(&e);
	eng_open_opts(&e, P4E_NI_MATCHING | P4E_NI_PHYSICAL, 0, 16384);
	p4e_ni_limits_get(e.ni[1], &lim);
	n = lim.max_fetch_atomic_size / 8;
	for (i = 0; i < n; i++) {
		tgt[i] = 77;
		opnd[i] = 1;
	}
	d = eng_me_desc(tgt, n * 8, P4E_ME_OP_PUT | P4E_ME_OP_GET, 0, 0);
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	d = eng_me_desc(small, sizeof(small), P4E_ME_OP_PUT, 0, 0);
	cr_assert_eq(p4e_me_append(e.ni[0], e.pt[0], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	/* side 1 sends small (copied) puts side 0 will not read for now */
	pmd = eng_md(&e, 1, small, 8, 0, P4E_HANDLE_NONE);
	px = eng_xfer(&e, 1, pmd, 8, 0);
	p4t_loop_hold(e.ni[0]->xp[P4E_XP_NET].iface, true);
	for (k = 0; k < 2; k++)
		cr_assert_eq(p4e_put(e.ni[1], &px), 0);
	x = eng_xfer(&e, 0, eng_md(&e, 0, opnd, n * 8, 0, P4E_HANDLE_NONE),
		     n * 8, 0);
	x.get_md = eng_md(&e, 0, res, n * 8, 0, P4E_HANDLE_NONE);
	x.atomic_type = P4E_UINT64;
	x.atomic_op = P4E_SUM;
	cr_assert_eq(p4e_fetch_atomic(e.ni[0], &x), 0);
	for (k = 0; k < 10; k++)
		p4e_ni_progress(e.ni[1], 64);
	/* the fetch is done at the target; it copies more of its own */
	for (k = 0; k < 3; k++)
		cr_assert_eq(p4e_put(e.ni[1], &px), 0);
	p4t_loop_hold(e.ni[0]->xp[P4E_XP_NET].iface, false);
	eng_progress(&e);
	for (i = 0; i < n; i++) {
		cr_expect_eq(res[i], 77);
		cr_expect_eq(tgt[i], 78);
	}
}

/* ---- permissions: fetch and swap need OP_PUT and OP_GET ------------------- */

static void atomic_perm(unsigned me_opts, enum call call, uint8_t want_fail)
{
	static uint64_t tgt[4], opnd[4] = { 1, 2, 3, 4 }, res[4];
	int64_t opv = status_reg(1, P4E_SR_OPERATION_VIOLATIONS);
	struct p4e_me_desc d = eng_me_desc(tgt, sizeof(tgt), me_opts, 0, 0);
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t me, ct;
	int i;

	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	d.ct = ct;
	d.options |= P4E_ME_EVENT_CT_COMM;
	for (i = 0; i < 4; i++) {
		tgt[i] = 100 + i;
		res[i] = 7;
	}
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	cr_assert_eq(eng_event(&e, 1).type, P4E_EVENT_LINK);
	x = eng_xfer(&e, 0, eng_md(&e, 0, opnd, sizeof(opnd), 0,
				   P4E_HANDLE_NONE), sizeof(opnd), 0);
	x.get_md = eng_md(&e, 0, res, sizeof(res), 0, P4E_HANDLE_NONE);
	x.atomic_type = P4E_UINT64;
	x.atomic_op = call == CALL_SWAP ? P4E_SWAP : P4E_SUM;
	cr_assert_eq(call_op(call, e.ni[0], &x), 0);
	eng_progress(&e);
	ev = ini_event(call == CALL_ATOMIC ? P4E_EVENT_ACK : P4E_EVENT_REPLY);
	cr_expect_eq(ev.ni_fail_type, want_fail, "opts %#x call %d: %d",
		     me_opts, call, ev.ni_fail_type);
	if (want_fail == P4E_NI_OK) {
		cr_expect_eq(tgt[0], call == CALL_SWAP ? 1 : 101);
		cr_expect_eq(eng_ct(e.dom, ct).success, 1);
		cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
		drain(1);
		return;
	}
	cr_expect_eq(ev.mlength, 0);
	eng_no_event(&e, 1);
	for (i = 0; i < 4; i++) {
		cr_expect_eq(tgt[i], 100 + (uint64_t)i, "target unchanged");
		cr_expect_eq(res[i], 7, "nothing fetched");
	}
	cr_expect_eq(status_reg(1, P4E_SR_OPERATION_VIOLATIONS) - opv, 1);
	cr_expect_eq(eng_ct(e.dom, ct).success, 0);
	/* the entry is still there */
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
}

Test(eng_atomic, permissions)
{
	atomic_perm(P4E_ME_OP_GET, CALL_ATOMIC, P4E_NI_OP_VIOLATION);
	atomic_perm(P4E_ME_OP_PUT, CALL_ATOMIC, P4E_NI_OK);
	atomic_perm(P4E_ME_OP_PUT, CALL_FETCH, P4E_NI_OP_VIOLATION);
	atomic_perm(P4E_ME_OP_GET, CALL_FETCH, P4E_NI_OP_VIOLATION);
	atomic_perm(P4E_ME_OP_PUT, CALL_SWAP, P4E_NI_OP_VIOLATION);
	atomic_perm(P4E_ME_OP_GET, CALL_SWAP, P4E_NI_OP_VIOLATION);
	atomic_perm(P4E_ME_OP_PUT | P4E_ME_OP_GET, CALL_FETCH, P4E_NI_OK);
	atomic_perm(P4E_ME_OP_PUT | P4E_ME_OP_GET, CALL_SWAP, P4E_NI_OK);
}

/* ---- remote atomicity ------------------------------------------------------ */

/* Two initiator NIs sum into one target word, interleaved. */
Test(eng_atomic, two_initiators_one_word)
{
	enum { N = 300 };
	static uint64_t word, one = 1, two = 2, fetched[2][N];
	static bool seen[3 * N + 1];
	struct p4e_ni_attr attr = eng_ni_attr(4096);
	struct p4e_me_desc d = eng_me_desc(&word, 8, P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0, 0);
	struct p4e_md_desc mdd = { .length = 8 };
	struct p4e_ni *ini[2];
	struct eng_node c;
	struct p4e_xfer x;
	uint64_t me, md[2], res[2];
	int i, k;

	eng_node_open(&c, e.dom, &attr, 0, 64);
	ini[0] = e.ni[0];
	ini[1] = c.ni;
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	for (k = 0; k < 2; k++) {
		mdd.start = k ? &two : &one;
		cr_assert_eq(p4e_md_bind(ini[k], &mdd, &md[k]), 0);
		mdd.start = fetched[k];
		mdd.length = sizeof(fetched[k]);
		cr_assert_eq(p4e_md_bind(ini[k], &mdd, &res[k]), 0);
		mdd.length = 8;
	}
	for (i = 0; i < N; i++) {
		for (k = 0; k < 2; k++) {
			x = eng_xfer(&e, 0, md[k], 8, 0);
			x.ack_req = P4E_NO_ACK_REQ;
			x.atomic_type = P4E_UINT64;
			x.atomic_op = P4E_SUM;
			x.get_md = res[k];
			x.get_local_offset = (uint64_t)i * 8;
			cr_assert_eq(i % 2 ? p4e_atomic(ini[k], &x) :
					     p4e_fetch_atomic(ini[k], &x), 0);
		}
		if (i % 7 == 0)
			p4e_dom_progress(e.dom, 16);
	}
	eng_progress(&e);
	cr_expect_eq(word, 3 * (uint64_t)N);
	/* every fetch saw a distinct value: no two updates overlapped */
	for (k = 0; k < 2; k++)
		for (i = 0; i < N; i += 2) {
			cr_assert_leq(fetched[k][i], 3 * (uint64_t)N);
			cr_expect_not(seen[fetched[k][i]], "value %lu twice",
				      (unsigned long)fetched[k][i]);
			seen[fetched[k][i]] = true;
		}
	eng_node_close(&c);
}

/*
 * Two domains in two threads, each an initiator and a target NI whose
 * entries cover the same word: the targets apply concurrently, and the
 * total must still be exact.
 */
enum { THR_N = 3000 };
static uint64_t shared_word;

static void *thr_sum(void *arg)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);
	struct p4e_dom *dom;
	struct p4e_ni *ni[2];
	struct p4e_me_desc d = eng_me_desc(&shared_word, 8, P4E_ME_OP_PUT,
					   0, 0);
	uint64_t one = 1, me, md;
	struct p4e_md_desc mdd = { .start = &one, .length = 8 };
	uint32_t pt, peer;
	struct p4e_xfer x;
	int i, ret = 0, idle;
	intptr_t err = 0;

	(void)arg;
	if (p4e_dom_create(NULL, &dom))
		return (void *)1;
	if (p4e_ni_create(dom, &attr, &ni[0]) ||
	    p4e_ni_create(dom, &attr, &ni[1]) ||
	    p4e_pt_alloc(ni[1], 0, NULL, P4E_PT_ANY, &pt) ||
	    p4e_me_append(ni[1], pt, &d, P4E_PRIORITY_LIST, NULL, 0, &me) ||
	    p4e_md_bind(ni[0], &mdd, &md))
		return (void *)2;
	{
		char addr[64];
		size_t len = sizeof(addr);

		if (p4e_ni_getname(ni[1], addr, &len) ||
		    p4e_peer_lookup(dom, addr, len, &peer))
			return (void *)3;
	}
	memset(&x, 0, sizeof(x));
	x.md = md;
	x.length = 8;
	x.ack_req = P4E_NO_ACK_REQ;
	x.target = peer;
	x.pt_index = pt;
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	for (i = 0; i < THR_N; i++) {
		while ((ret = p4e_atomic(ni[0], &x)) == -FI_EAGAIN)
			p4e_dom_progress(dom, 64);
		if (ret)
			err = 4;
		if (i % 16 == 0)
			p4e_dom_progress(dom, 64);
	}
	for (idle = 0; idle < 3;)
		idle = p4e_dom_progress(dom, 64) ? 0 : idle + 1;
	if (p4e_ni_destroy(ni[0]) || p4e_ni_destroy(ni[1]) ||
	    p4e_dom_destroy(dom))
		err = 5;
	return (void *)err;
}

Test(eng_atomic, concurrent_targets_one_word)
{
	pthread_t t[2];
	void *ret[2];
	int k;

	shared_word = 0;
	for (k = 0; k < 2; k++)
		cr_assert_eq(pthread_create(&t[k], NULL, thr_sum, NULL), 0);
	for (k = 0; k < 2; k++) {
		cr_assert_eq(pthread_join(t[k], &ret[k]), 0);
		cr_expect_null(ret[k], "thread %d failed at step %ld", k,
			       (long)(intptr_t)ret[k]);
	}
	cr_expect_eq(shared_word, 2 * (uint64_t)THR_N);
}
