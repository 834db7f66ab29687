/*
 * test_eng_atomic.c - atomics end to end between two NIs: every op x
 * datatype through p4e_atomic, p4e_fetch_atomic and p4e_swap (a
 * parameterized matrix), results and fetched old values checked element
 * by element against a plain C reference written here from fi_atomic(3);
 * combinations that do not exist, or go through the wrong call, refused
 * at the initiator with nothing sent; the events of both sides;
 * permissions (fetch and swap need OP_PUT and OP_GET); offsets past
 * the end; the largest sizes the NI's limits allow (copies and old
 * values must fit); and remote atomicity with two initiators, and with
 * two target NIs applying to one word from two threads.
 *
 * p4e_priv.h gives the NI's transport instance, for the loop's counters
 * (nothing sent) and hold hook.
 *
 * test_atomic.c checks the executor on its own with hostile values (NaN,
 * infinities, extremes); here the values are plain ones every type holds
 * exactly, because the point is the path through the engine.
 */
#include <complex.h>
#include <math.h>
#include <pthread.h>

/* criterion.h (through p4e_test.h) must come before parameterized.h */
#include "p4e_test.h"
#include "p4e_priv.h"

#include <criterion/parameterized.h>

static struct eng e;

static void setup(void)
{
	eng_open(&e);
}

static void teardown(void)
{
	eng_close(&e);
}

TestSuite(eng_atomic, .init = setup, .fini = teardown, .timeout = 60);

#define GUARD	0x5a
#define NE	6		/* elements per operation */
#define ESZ_MAX	32		/* long double complex */

/* ---- what exists, written independently of the engine's tables ---------- */

enum cls { C_INT, C_REAL, C_CPLX };

static const struct {
	bool in[3];		/* C_INT, C_REAL, C_CPLX */
	bool fetch_only;
	bool swap;		/* goes through p4e_swap */
} ops[P4E_ATOMIC_OP_MAX] = {
	[P4E_MIN] = { { 1, 1, 0 } },	[P4E_MAX] = { { 1, 1, 0 } },
	[P4E_SUM] = { { 1, 1, 1 } },	[P4E_PROD] = { { 1, 1, 1 } },
	[P4E_LOR] = { { 1, 1, 1 } },	[P4E_LAND] = { { 1, 1, 1 } },
	[P4E_BOR] = { { 1, 0, 0 } },	[P4E_BAND] = { { 1, 0, 0 } },
	[P4E_LXOR] = { { 1, 1, 1 } },	[P4E_BXOR] = { { 1, 0, 0 } },
	[P4E_SWAP] = { { 1, 1, 1 }, true, true },
	[P4E_CSWAP] = { { 1, 1, 1 }, true, true },
	[P4E_CSWAP_NE] = { { 1, 1, 1 }, true, true },
	[P4E_CSWAP_LE] = { { 1, 1, 0 }, true, true },
	[P4E_CSWAP_LT] = { { 1, 1, 0 }, true, true },
	[P4E_CSWAP_GE] = { { 1, 1, 0 }, true, true },
	[P4E_CSWAP_GT] = { { 1, 1, 0 }, true, true },
	[P4E_MSWAP] = { { 1, 0, 0 }, true, true },
	[P4E_ATOMIC_READ] = { { 1, 1, 1 }, true, false },
	[P4E_ATOMIC_WRITE] = { { 1, 1, 1 } },
};

static const struct {
	size_t size;
	enum cls cls;
	bool ldbl;		/* compared by value: padding is not data */
} types[P4E_ATOMIC_TYPE_MAX] = {
	[P4E_INT8] = { 1, C_INT },	[P4E_UINT8] = { 1, C_INT },
	[P4E_INT16] = { 2, C_INT },	[P4E_UINT16] = { 2, C_INT },
	[P4E_INT32] = { 4, C_INT },	[P4E_UINT32] = { 4, C_INT },
	[P4E_FLOAT] = { 4, C_REAL },	[P4E_INT64] = { 8, C_INT },
	[P4E_UINT64] = { 8, C_INT },	[P4E_DOUBLE] = { 8, C_REAL },
	[P4E_FLOAT_COMPLEX] = { 8, C_CPLX },
	[P4E_DOUBLE_COMPLEX] = { 16, C_CPLX },
	[P4E_LONG_DOUBLE] = { sizeof(long double), C_REAL, true },
	[P4E_LONG_DOUBLE_COMPLEX] = { 2 * sizeof(long double), C_CPLX, true },
};

static bool exists(int op, int type)
{
	return ops[op].in[types[type].cls];
}

/* ---- values: small numbers every type holds exactly ----------------------- */

/* target, operand, compare; compare equals target at 0, 3 and 4, is below
 * it at 1 and above it at 2 and 5; 120 + 100 wraps an int8 */
static const double val_t[NE] = { 5, 2, 0, 120, 7, 1 };
static const double val_o[NE] = { 3, 2, 7, 100, 9, 0 };
static const double val_c[NE] = { 5, 1, 4, 120, 7, 3 };
/* imaginary parts: compare equals target at 0, 3 and 4 again */
static const double im_t[NE] = { 1, 0, 3, 2, 0, 1 };
static const double im_o[NE] = { 2, 1, 0, 1, 5, 0 };
static const double im_c[NE] = { 1, 1, 1, 2, 0, 0 };

#define SET(T, v) do { T v_ = (T)(v); memcpy(p, &v_, sizeof(v_)); } while (0)

static void set_elem(int type, void *p, double re, double im)
{
	switch (type) {
	case P4E_INT8: SET(int8_t, re); break;
	case P4E_UINT8: SET(uint8_t, re); break;
	case P4E_INT16: SET(int16_t, re); break;
	case P4E_UINT16: SET(uint16_t, re); break;
	case P4E_INT32: SET(int32_t, re); break;
	case P4E_UINT32: SET(uint32_t, re); break;
	case P4E_INT64: SET(int64_t, re); break;
	case P4E_UINT64: SET(uint64_t, re); break;
	case P4E_FLOAT: SET(float, re); break;
	case P4E_DOUBLE: SET(double, re); break;
	case P4E_LONG_DOUBLE: SET(long double, re); break;
	case P4E_FLOAT_COMPLEX: SET(float _Complex, re + im * I); break;
	case P4E_DOUBLE_COMPLEX: SET(double _Complex, re + im * I); break;
	case P4E_LONG_DOUBLE_COMPLEX:
		SET(long double _Complex, re + im * I);
		break;
	}
}

static void set_vals(int type, uint8_t *buf, const double *re,
		     const double *im)
{
	size_t es = types[type].size;
	int i;

	for (i = 0; i < NE; i++)
		set_elem(type, buf + i * es, re[i], im[i]);
}

/* ---- the reference: fi_atomic(3)'s pseudo-code per C type ---------------- */

/* what every class has but arithmetic */
#define REF_LOGIC(t, o, c, r)						\
	case P4E_LOR: r = t || o; break;				\
	case P4E_LAND: r = t && o; break;				\
	case P4E_LXOR: r = (t && !o) || (!t && o); break;		\
	case P4E_SWAP:							\
	case P4E_ATOMIC_WRITE: r = o; break;				\
	case P4E_ATOMIC_READ: break;					\
	case P4E_CSWAP: if (c == t) r = o; break;			\
	case P4E_CSWAP_NE: if (c != t) r = o; break

#define REF_COMMON(t, o, c, r)						\
	case P4E_SUM: r = t + o; break;					\
	case P4E_PROD: r = t * o; break;				\
	REF_LOGIC(t, o, c, r)

#define REF_ORDERED(t, o, c, r)						\
	case P4E_MIN: if (o < t) r = o; break;				\
	case P4E_MAX: if (o > t) r = o; break;				\
	case P4E_CSWAP_LE: if (c <= t) r = o; break;			\
	case P4E_CSWAP_LT: if (c < t) r = o; break;			\
	case P4E_CSWAP_GE: if (c >= t) r = o; break;			\
	case P4E_CSWAP_GT: if (c > t) r = o; break

/* integers wrap (sums and products done in uint64_t, then truncated) */
#define REF_INT_EXTRA(T, t, o, c, r)					\
	case P4E_BOR: r = t | o; break;					\
	case P4E_BAND: r = t & o; break;				\
	case P4E_BXOR: r = t ^ o; break;				\
	case P4E_MSWAP: r = (T)((o & c) | (t & ~c)); break

#define REF(name, T, EXTRA)						\
static void ref_##name(int op, const void *tp, const void *op_,		\
		       const void *cp, void *out)			\
{									\
	T t, o, c, r;							\
	memcpy(&t, tp, sizeof(T));					\
	memcpy(&o, op_, sizeof(T));					\
	memcpy(&c, cp, sizeof(T));					\
	r = t;								\
	switch (op) {							\
	EXTRA(T, t, o, c, r);						\
	default: cr_assert_fail("no reference for op %d", op);		\
	}								\
	memcpy(out, &r, sizeof(T));					\
}

#define X_INT(T, t, o, c, r)						\
	case P4E_SUM: r = (T)((uint64_t)t + (uint64_t)o); break;	\
	case P4E_PROD: r = (T)((uint64_t)t * (uint64_t)o); break;	\
	REF_LOGIC(t, o, c, r);						\
	REF_ORDERED(t, o, c, r);					\
	REF_INT_EXTRA(T, t, o, c, r)
#define X_REAL(T, t, o, c, r) REF_COMMON(t, o, c, r); REF_ORDERED(t, o, c, r)
#define X_CPLX(T, t, o, c, r) REF_COMMON(t, o, c, r)

REF(int8, int8_t, X_INT)
REF(uint8, uint8_t, X_INT)
REF(int16, int16_t, X_INT)
REF(uint16, uint16_t, X_INT)
REF(int32, int32_t, X_INT)
REF(uint32, uint32_t, X_INT)
REF(int64, int64_t, X_INT)
REF(uint64, uint64_t, X_INT)
REF(flt, float, X_REAL)
REF(dbl, double, X_REAL)
REF(ldbl, long double, X_REAL)
REF(cflt, float _Complex, X_CPLX)
REF(cdbl, double _Complex, X_CPLX)
REF(cldbl, long double _Complex, X_CPLX)

typedef void (*ref_func_t)(int op, const void *t, const void *o,
			   const void *c, void *out);

static const ref_func_t refs[P4E_ATOMIC_TYPE_MAX] = {
	[P4E_INT8] = ref_int8, [P4E_UINT8] = ref_uint8,
	[P4E_INT16] = ref_int16, [P4E_UINT16] = ref_uint16,
	[P4E_INT32] = ref_int32, [P4E_UINT32] = ref_uint32,
	[P4E_INT64] = ref_int64, [P4E_UINT64] = ref_uint64,
	[P4E_FLOAT] = ref_flt, [P4E_DOUBLE] = ref_dbl,
	[P4E_LONG_DOUBLE] = ref_ldbl, [P4E_FLOAT_COMPLEX] = ref_cflt,
	[P4E_DOUBLE_COMPLEX] = ref_cdbl, [P4E_LONG_DOUBLE_COMPLEX] = ref_cldbl,
};

/* Equal values; long doubles by value (their padding carries none). */
static bool same_elem(int type, const void *a, const void *b)
{
	long double x[2], y[2];

	if (!types[type].ldbl)
		return !memcmp(a, b, types[type].size);
	memset(x, 0, sizeof(x));
	memset(y, 0, sizeof(y));
	memcpy(x, a, types[type].size);
	memcpy(y, b, types[type].size);
	return x[0] == y[0] &&
	       (type == P4E_LONG_DOUBLE || x[1] == y[1]);
}

static bool guarded(const uint8_t *buf, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		if (buf[i] != GUARD)
			return false;
	return true;
}

static int64_t status_reg(int side, enum p4e_sr_index idx)
{
	int64_t v;

	cr_assert_eq(p4e_ni_status(e.ni[side], idx, &v), 0);
	return v;
}

/* The initiator's next event of type, after its SEND. */
static struct p4e_event ini_event(int type)
{
	struct p4e_event ev = eng_event(&e, 0);

	/* copied payloads report SEND at post: skip those ahead */
	while (ev.type == P4E_EVENT_SEND && type != P4E_EVENT_SEND)
		ev = eng_event(&e, 0);
	cr_assert_eq(ev.type, type, "event %d (fail %d), expected %d", ev.type,
		     ev.ni_fail_type, type);
	return ev;
}

static void drain(int side)
{
	struct p4e_event ev;

	while (p4e_eq_ring_get(e.eq[side], &ev) != -FI_EAGAIN)
		;
}

/* Messages side has sent (loop transport; elsewhere 0, not checked). */
static uint64_t msgs_sent(int side)
{
	struct p4t_loop_stats st;

	if (!eng_is_loop())
		return 0;
	p4t_loop_stats_get(e.ni[side]->iface, &st);
	return st.msgs_sent;
}

/* ---- one operation through the engine ------------------------------------ */

/* aligned for every type; room for NE elements and guards around them */
static long double tgt_mem[(NE + 3) * 2], src_mem[(NE + 3) * 2],
	res_mem[(NE + 4) * 2], cmp_mem[NE * 2];
#define TGT ((uint8_t *)tgt_mem)
#define SRC ((uint8_t *)src_mem)
#define RES ((uint8_t *)res_mem)
#define CMP ((uint8_t *)cmp_mem)

enum call { CALL_ATOMIC, CALL_FETCH, CALL_SWAP };

static int call_op(enum call call, struct p4e_ni *ni, const struct p4e_xfer *x)
{
	switch (call) {
	case CALL_ATOMIC:
		return p4e_atomic(ni, x);
	case CALL_FETCH:
		return p4e_fetch_atomic(ni, x);
	default:
		return p4e_swap(ni, x);
	}
}

/*
 * Prepare target, operand and compare values; bind; fill *x for op x type
 * at element offset 1 remotely and locally (2 for fetched values).
 */
static void op_setup(int op, int type, struct p4e_xfer *x, uint64_t *me_p)
{
	size_t es = types[type].size;
	struct p4e_me_desc d = eng_me_desc(TGT, (NE + 2) * es, P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0, 0);

	memset(TGT, GUARD, sizeof(tgt_mem));
	memset(SRC, GUARD, sizeof(src_mem));
	memset(RES, GUARD, sizeof(res_mem));
	set_vals(type, TGT + es, val_t, im_t);
	set_vals(type, SRC + es, val_o, im_o);
	set_vals(type, CMP, val_c, im_c);
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, me_p), 0);
	cr_assert_eq(eng_event(&e, 1).type, P4E_EVENT_LINK);
	*x = eng_xfer(&e, 0, eng_md(&e, 0, SRC, (NE + 2) * es, 0,
				    P4E_HANDLE_NONE), NE * es, 0);
	x->get_md = eng_md(&e, 0, RES, (NE + 3) * es, 0, P4E_HANDLE_NONE);
	x->local_offset = es;
	x->remote_offset = es;
	x->get_local_offset = 2 * es;
	x->operand = CMP;
	x->atomic_op = op;
	x->atomic_type = type;
	x->user_ptr = (void *)0xa70;
}

static void op_cleanup(const struct p4e_xfer *x, uint64_t me)
{
	cr_expect_eq(p4e_md_release(e.ni[0], x->md), 0);
	cr_expect_eq(p4e_md_release(e.ni[0], x->get_md), 0);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
}

static void run_op(int op, int type, enum call call)
{
	size_t es = types[type].size, n = NE * es;
	uint8_t want[NE * ESZ_MAX], old[NE * ESZ_MAX];
	bool fetch = call != CALL_ATOMIC;
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t me;
	int i;

	op_setup(op, type, &x, &me);
	memcpy(old, TGT + es, n);
	for (i = 0; i < NE; i++)
		refs[type](op, old + i * es, SRC + es + i * es, CMP + i * es,
			   want + i * es);
	cr_assert_eq(call_op(call, e.ni[0], &x), 0, "op %d type %d call %d",
		     op, type, call);
	eng_progress(&e);

	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, fetch ? P4E_EVENT_FETCH_ATOMIC :
				      P4E_EVENT_ATOMIC);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.atomic_op, op);
	cr_expect_eq(ev.atomic_type, type);
	cr_expect_eq(ev.mlength, n);
	cr_expect_eq(ev.rlength, n);
	cr_expect_eq(ev.remote_offset, es);
	cr_expect_eq(ev.start, TGT + es);
	cr_expect_eq(ev.initiator, e.id[0]);
	eng_no_event(&e, 1);

	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_SEND);
	cr_expect_eq(ev.start, SRC + es);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, fetch ? P4E_EVENT_REPLY : P4E_EVENT_ACK);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.mlength, n);
	cr_expect_eq(ev.remote_offset, es);
	cr_expect_eq(ev.atomic_op, op);
	cr_expect_eq(ev.atomic_type, type);
	cr_expect_eq(ev.user_ptr, (void *)0xa70);
	/* a fetch's REPLY points at the fetched values, not the operand */
	cr_expect_eq(ev.start, fetch ? RES + 2 * es : SRC + es,
		     "op %d type %d call %d", op, type, call);
	eng_no_event(&e, 0);

	for (i = 0; i < NE; i++) {
		cr_expect(same_elem(type, TGT + es + i * es, want + i * es),
			  "op %d type %d call %d: element %d", op, type, call,
			  i);
		if (fetch)
			cr_expect(same_elem(type, RES + 2 * es + i * es,
					    old + i * es),
				  "op %d type %d: fetched element %d", op,
				  type, i);
	}
	cr_expect(guarded(TGT, 0, es));
	cr_expect(guarded(TGT, es + n, sizeof(tgt_mem)));
	cr_expect(guarded(RES, 0, 2 * es));
	cr_expect(guarded(RES, 2 * es + (fetch ? n : 0), sizeof(res_mem)));
	op_cleanup(&x, me);
}

/* A refused call returns ret and leaves no trace anywhere. */
static void refused(int op, int type, enum call call, int ret)
{
	size_t es = types[type].size;
	uint64_t sent = msgs_sent(0), me;
	struct p4e_xfer x;

	op_setup(op, type, &x, &me);
	cr_expect_eq(call_op(call, e.ni[0], &x), ret,
		     "op %d type %d call %d", op, type, call);
	cr_expect_eq(msgs_sent(0), sent, "nothing sent");
	eng_progress(&e);
	eng_no_event(&e, 0);
	eng_no_event(&e, 1);
	cr_expect(guarded(TGT, 0, es));
	cr_expect(guarded(RES, 0, sizeof(res_mem)));
	op_cleanup(&x, me);
}

/* ---- the matrix ----------------------------------------------------------- */

struct combo {
	int op;
	int type;
};

ParameterizedTestParameters(eng_atomic, matrix)
{
	static struct combo c[P4E_ATOMIC_OP_MAX * P4E_ATOMIC_TYPE_MAX];
	size_t n = 0;
	int op, type;

	for (op = 0; op < P4E_ATOMIC_OP_MAX; op++)
		for (type = 0; type < P4E_ATOMIC_TYPE_MAX; type++)
			c[n++] = (struct combo){ op, type };
	return cr_make_param_array(struct combo, c, n);
}

ParameterizedTest(struct combo *cb, eng_atomic, matrix)
{
	int op = cb->op, type = cb->type;

	if (!exists(op, type)) {
		refused(op, type, CALL_ATOMIC, -FI_EOPNOTSUPP);
		refused(op, type, CALL_FETCH, -FI_EOPNOTSUPP);
		refused(op, type, CALL_SWAP, -FI_EOPNOTSUPP);
		return;
	}
	if (ops[op].swap) {
		run_op(op, type, CALL_SWAP);
		refused(op, type, CALL_ATOMIC, -FI_EOPNOTSUPP);
		refused(op, type, CALL_FETCH, -FI_EINVAL);
		return;
	}
	if (ops[op].fetch_only)
		refused(op, type, CALL_ATOMIC, -FI_EOPNOTSUPP);
	else
		run_op(op, type, CALL_ATOMIC);
	run_op(op, type, CALL_FETCH);
	refused(op, type, CALL_SWAP, -FI_EINVAL);
}

/* ---- argument errors, refused before anything is sent -------------------- */

Test(eng_atomic, bad_arguments)
{
	const int T = P4E_UINT64;
	uint64_t sent = msgs_sent(0), me, get_md;
	struct p4e_xfer x;

	op_setup(P4E_SUM, T, &x, &me);
	get_md = x.get_md;
	x.length = 12;		/* not a whole number of elements */
	cr_expect_eq(p4e_atomic(e.ni[0], &x), -FI_EINVAL);
	cr_expect_eq(p4e_fetch_atomic(e.ni[0], &x), -FI_EINVAL);
	x.length = 8;
	x.atomic_op = P4E_ATOMIC_OP_MAX;
	cr_expect_eq(p4e_atomic(e.ni[0], &x), -FI_EINVAL);
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_ATOMIC_TYPE_MAX;
	cr_expect_eq(p4e_atomic(e.ni[0], &x), -FI_EINVAL);
	x.atomic_type = T;
	x.get_md = P4E_HANDLE_NONE;	/* nowhere for old values */
	cr_expect_eq(p4e_fetch_atomic(e.ni[0], &x), -FI_EINVAL);
	x.atomic_op = P4E_CSWAP;
	cr_expect_eq(p4e_swap(e.ni[0], &x), -FI_EINVAL);
	x.get_md = get_md;
	op_cleanup(&x, me);

	op_setup(P4E_CSWAP, T, &x, &me);
	x.operand = NULL;	/* compare values missing */
	cr_expect_eq(p4e_swap(e.ni[0], &x), -FI_EINVAL);
	x.operand = CMP;
	x.get_local_offset = (NE + 3) * 8 - 4;	/* past the fetch MD */
	cr_expect_eq(p4e_swap(e.ni[0], &x), -FI_EINVAL);
	op_cleanup(&x, me);

	/* more than max_atomic_size (eager_size, 4096 here) */
	{
		static uint64_t big[520];
		uint64_t md = eng_md(&e, 0, big, sizeof(big), 0,
				     P4E_HANDLE_NONE);

		x = eng_xfer(&e, 0, md, 513 * 8, 0);
		x.atomic_op = P4E_SUM;
		x.atomic_type = T;
		cr_expect_eq(p4e_atomic(e.ni[0], &x), -FI_EMSGSIZE);
		x.get_md = md;
		cr_expect_eq(p4e_fetch_atomic(e.ni[0], &x), -FI_EMSGSIZE);
		cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	}
	cr_expect_eq(msgs_sent(0), sent);
	eng_progress(&e);
	eng_no_event(&e, 0);
	eng_no_event(&e, 1);
}

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
	p4t_loop_hold(e.ni[0]->iface, true);
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
	p4t_loop_hold(e.ni[0]->iface, false);
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
