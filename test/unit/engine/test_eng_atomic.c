/*
 * test_eng_atomic.c - atomics end to end between two NIs: every op x
 * datatype through p4e_atomic, p4e_fetch_atomic and p4e_swap (a
 * parameterized matrix), results and fetched old values checked element
 * by element against a plain C reference (p4e_atomic_ref_test.h);
 * combinations that do not exist, or go through the wrong call, refused
 * at the initiator with nothing sent; the events of both sides; argument
 * errors. Cases with a rule of their own (sizes, offsets, permissions,
 * remote atomicity) are in test_eng_atomic_rules.c.
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

/* criterion.h (through p4e_atomic_test.h) must come before parameterized.h */
#include "p4e_atomic_test.h"
#include "p4e_atomic_ref_test.h"
#include "p4e_priv.h"

#include <criterion/parameterized.h>

TestSuite(eng_atomic, .init = atomic_setup, .fini = atomic_teardown,
	  .timeout = 60);

#define GUARD	0x5a
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

/* Messages side has sent (loop transport; elsewhere 0, not checked). */
static uint64_t msgs_sent(int side)
{
	struct p4t_loop_stats st;

	if (!eng_is_loop())
		return 0;
	p4t_loop_stats_get(e.ni[side]->xp[P4E_XP_NET].iface, &st);
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
