/*
 * test_atomic.c - the engine's atomic op x datatype handlers
 * (prov/portals/engine/p4e_atomic.c).
 *
 * Every op x datatype of enum p4e_atomic_op x enum p4e_atomic_type is one
 * parameterized case: a combination that exists is run over every triple
 * (target, operand, compare) of a pool of values (0, -0.0, negatives,
 * extremes, infinities, NaNs) in one multi-element call, in four buffer
 * layouts (aligned, all misaligned, only the target aligned, no
 * fetch_out), and checked element by element against a plain C reference
 * written from fi_atomic(3) (p4e_atomic_ref_test.h); one that does not
 * exist must be refused with -FI_EOPNOTSUPP and touch nothing. Which
 * combinations exist is written here, independently of the library's
 * tables. Then the cases with a rule of their own (-0.0 through
 * ATOMIC_READ, NaN in MIN/MAX, CSWAP orientation, wraparound, argument
 * errors) and two threads summing into the same elements.
 *
 * Value comparison: integers bytewise; float and double bitwise per
 * component (so -0.0 != +0.0) except that any NaN equals any NaN (payloads
 * of NaN results are the FPU's business); long double by value, sign of
 * zero and NaN-ness (its padding bytes carry no value). fetch_out must
 * hold the old target bytes exactly.
 */
#include <config.h>

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <rdma/fi_errno.h>

#include "p4e.h"
#include "p4e_atomic.h"
#include "p4e_atomic_ref_test.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

TestSuite(atomic, .timeout = 120);

/* ---- what exists (fi_atomic(3), libfabric 1.17 util_atomic.c) ---------- */

enum tclass { TC_INT, TC_REAL, TC_CPLX };

static const struct {
	bool in[3];		/* TC_INT, TC_REAL, TC_CPLX */
	bool fetch_only;
	bool compare;		/* reads the compare buffer */
	bool operand;		/* reads the operand buffer */
} expect_ops[P4E_ATOMIC_OP_MAX] = {
	[P4E_MIN]	   = { { 1, 1, 0 }, false, false, true },
	[P4E_MAX]	   = { { 1, 1, 0 }, false, false, true },
	[P4E_SUM]	   = { { 1, 1, 1 }, false, false, true },
	[P4E_PROD]	   = { { 1, 1, 1 }, false, false, true },
	[P4E_LOR]	   = { { 1, 1, 1 }, false, false, true },
	[P4E_LAND]	   = { { 1, 1, 1 }, false, false, true },
	[P4E_BOR]	   = { { 1, 0, 0 }, false, false, true },
	[P4E_BAND]	   = { { 1, 0, 0 }, false, false, true },
	[P4E_LXOR]	   = { { 1, 1, 1 }, false, false, true },
	[P4E_BXOR]	   = { { 1, 0, 0 }, false, false, true },
	[P4E_SWAP]	   = { { 1, 1, 1 }, true,  false, true },
	[P4E_CSWAP]	   = { { 1, 1, 1 }, true,  true,  true },
	[P4E_CSWAP_NE]	   = { { 1, 1, 1 }, true,  true,  true },
	[P4E_CSWAP_LE]	   = { { 1, 1, 0 }, true,  true,  true },
	[P4E_CSWAP_LT]	   = { { 1, 1, 0 }, true,  true,  true },
	[P4E_CSWAP_GE]	   = { { 1, 1, 0 }, true,  true,  true },
	[P4E_CSWAP_GT]	   = { { 1, 1, 0 }, true,  true,  true },
	[P4E_MSWAP]	   = { { 1, 0, 0 }, true,  true,  true },
	[P4E_ATOMIC_READ]  = { { 1, 1, 1 }, true,  false, false },
	[P4E_ATOMIC_WRITE] = { { 1, 1, 1 }, false, false, true },
};

enum tkind { TK_INT, TK_FLT, TK_DBL, TK_LDBL };	/* component kind */

static const struct {
	size_t size;
	enum tclass cls;
	enum tkind kind;
	unsigned parts;		/* components: 2 for complex */
} expect_types[P4E_ATOMIC_TYPE_MAX] = {
	[P4E_INT8]   = { 1, TC_INT, TK_INT, 1 },
	[P4E_UINT8]  = { 1, TC_INT, TK_INT, 1 },
	[P4E_INT16]  = { 2, TC_INT, TK_INT, 1 },
	[P4E_UINT16] = { 2, TC_INT, TK_INT, 1 },
	[P4E_INT32]  = { 4, TC_INT, TK_INT, 1 },
	[P4E_UINT32] = { 4, TC_INT, TK_INT, 1 },
	[P4E_FLOAT]  = { 4, TC_REAL, TK_FLT, 1 },
	[P4E_INT64]  = { 8, TC_INT, TK_INT, 1 },
	[P4E_UINT64] = { 8, TC_INT, TK_INT, 1 },
	[P4E_DOUBLE] = { 8, TC_REAL, TK_DBL, 1 },
	[P4E_FLOAT_COMPLEX]  = { 8, TC_CPLX, TK_FLT, 2 },
	[P4E_DOUBLE_COMPLEX] = { 16, TC_CPLX, TK_DBL, 2 },
	[P4E_LONG_DOUBLE]    = { sizeof(long double), TC_REAL, TK_LDBL, 1 },
	[P4E_LONG_DOUBLE_COMPLEX] = { 2 * sizeof(long double), TC_CPLX,
				      TK_LDBL, 2 },
};

static bool expect_valid(int op, int type)
{
	return expect_ops[op].in[expect_types[type].cls];
}

/* ---- value pools ----------------------------------------------------- */

#define POOL_MAX	16
#define ELEM_MAX	32

struct pool {
	size_t n;
	unsigned char v[POOL_MAX][ELEM_MAX];
};

static void pool_add(struct pool *pool, const void *val, size_t size)
{
	cr_assert_lt(pool->n, POOL_MAX);
	memset(pool->v[pool->n], 0, ELEM_MAX);
	memcpy(pool->v[pool->n++], val, size);
}

#define POOL_INT(pool, T, lo, hi) do {					\
	const T vals_[] = { 0, 1, (T)-1, 2, (T)-2, 7, 42, (T)-100,	\
			    (T)0x5a5a5a5a5a5a5a5aULL,			\
			    (T)0xa5a5a5a5a5a5a5a5ULL, lo, hi };		\
	for (size_t i_ = 0; i_ < ARRAY_SIZE(vals_); i_++)		\
		pool_add(pool, &vals_[i_], sizeof(T));			\
} while (0)

#define POOL_REAL(pool, T, max, min_normal) do {			\
	const T vals_[] = { 0.0, -0.0, 1.0, -1.0, 2.5, -3.75, 1e30,	\
			    (min_normal) / 4, max, -(max), INFINITY,	\
			    -INFINITY, NAN, -NAN };			\
	for (size_t i_ = 0; i_ < ARRAY_SIZE(vals_); i_++)		\
		pool_add(pool, &vals_[i_], sizeof(T));			\
} while (0)

/* complex values as (re, im) arrays: C lays complex out that way */
#define POOL_CPLX(pool, T, max) do {					\
	const T vals_[][2] = {						\
		{ 0.0, 0.0 }, { -0.0, -0.0 }, { 0.0, -0.0 },		\
		{ 1.0, 0.0 }, { 0.0, 1.0 }, { -1.0, 2.5 },		\
		{ 2.5, -3.75 }, { INFINITY, 0.0 }, { NAN, 0.0 },	\
		{ 0.0, NAN }, { 1.0, -INFINITY }, { max, max },		\
	};								\
	for (size_t i_ = 0; i_ < ARRAY_SIZE(vals_); i_++)		\
		pool_add(pool, vals_[i_], sizeof(vals_[i_]));		\
} while (0)

static void pool_make(int type, struct pool *pool)
{
	pool->n = 0;
	switch (type) {
	case P4E_INT8:   POOL_INT(pool, int8_t, INT8_MIN, INT8_MAX); break;
	case P4E_UINT8:  POOL_INT(pool, uint8_t, 0, UINT8_MAX); break;
	case P4E_INT16:  POOL_INT(pool, int16_t, INT16_MIN, INT16_MAX); break;
	case P4E_UINT16: POOL_INT(pool, uint16_t, 0, UINT16_MAX); break;
	case P4E_INT32:  POOL_INT(pool, int32_t, INT32_MIN, INT32_MAX); break;
	case P4E_UINT32: POOL_INT(pool, uint32_t, 0, UINT32_MAX); break;
	case P4E_INT64:  POOL_INT(pool, int64_t, INT64_MIN, INT64_MAX); break;
	case P4E_UINT64: POOL_INT(pool, uint64_t, 0, UINT64_MAX); break;
	case P4E_FLOAT:  POOL_REAL(pool, float, FLT_MAX, FLT_MIN); break;
	case P4E_DOUBLE: POOL_REAL(pool, double, DBL_MAX, DBL_MIN); break;
	case P4E_LONG_DOUBLE:
		POOL_REAL(pool, long double, LDBL_MAX, LDBL_MIN);
		break;
	case P4E_FLOAT_COMPLEX:  POOL_CPLX(pool, float, FLT_MAX); break;
	case P4E_DOUBLE_COMPLEX: POOL_CPLX(pool, double, DBL_MAX); break;
	case P4E_LONG_DOUBLE_COMPLEX:
		POOL_CPLX(pool, long double, LDBL_MAX);
		break;
	default:
		cr_assert_fail("type %d", type);
	}
}

/* ---- comparing values ---------------------------------------------------- */

static bool same_component(enum tkind kind, const void *a, const void *b)
{
	switch (kind) {
	case TK_FLT: {
		float x, y;

		memcpy(&x, a, sizeof(x));
		memcpy(&y, b, sizeof(y));
		return (isnan(x) && isnan(y)) || !memcmp(a, b, sizeof(x));
	}
	case TK_DBL: {
		double x, y;

		memcpy(&x, a, sizeof(x));
		memcpy(&y, b, sizeof(y));
		return (isnan(x) && isnan(y)) || !memcmp(a, b, sizeof(x));
	}
	case TK_LDBL: {
		long double x, y;

		memcpy(&x, a, sizeof(x));
		memcpy(&y, b, sizeof(y));
		if (isnan(x) || isnan(y))
			return isnan(x) && isnan(y);
		return x == y && !signbit(x) == !signbit(y);
	}
	default:
		return false;
	}
}

static bool same_value(int type, const void *a, const void *b)
{
	enum tkind kind = expect_types[type].kind;
	size_t part;

	if (kind == TK_INT)
		return !memcmp(a, b, expect_types[type].size);
	part = expect_types[type].size / expect_types[type].parts;
	for (unsigned i = 0; i < expect_types[type].parts; i++)
		if (!same_component(kind, (const char *)a + i * part,
				    (const char *)b + i * part))
			return false;
	return true;
}

static void hex(char *out, const void *p, size_t size)
{
	for (size_t i = 0; i < size; i++)
		sprintf(out + 2 * i, "%02x", ((const unsigned char *)p)[i]);
}

/* ---- the matrix ---------------------------------------------------------- */

struct combo {
	int op;
	int type;
};

ParameterizedTestParameters(atomic, matrix)
{
	static struct combo params[P4E_ATOMIC_OP_MAX * P4E_ATOMIC_TYPE_MAX];
	size_t n = 0;

	for (int op = 0; op < P4E_ATOMIC_OP_MAX; op++)
		for (int type = 0; type < P4E_ATOMIC_TYPE_MAX; type++)
			params[n++] = (struct combo){ op, type };
	return cr_make_param_array(struct combo, params, n);
}

/* Buffer layouts: offsets of target, operand, compare, fetch_out. */
static const struct {
	size_t off[4];
	bool fetch;
} layouts[] = {
	{ { 0, 0, 0, 0 }, true },	/* natural alignment: lock-free */
	{ { 1, 3, 5, 7 }, true },	/* all misaligned: stripe locks */
	{ { 0, 1, 2, 3 }, true },	/* target aligned, data from a wire */
	{ { 0, 0, 0, 0 }, false },	/* plain atomic: no fetch_out */
};

static void check_invalid(int op, int type)
{
	size_t size = expect_types[type].size;
	unsigned char buf[4][2 * ELEM_MAX], copy[4][2 * ELEM_MAX];

	memset(buf, 0x3c, sizeof(buf));
	memcpy(copy, buf, sizeof(buf));
	cr_assert(!p4e_atomic_valid(op, type, false));
	cr_assert(!p4e_atomic_valid(op, type, true));
	cr_assert_eq(p4e_atomic_apply(op, type, buf[0], buf[1], buf[2],
				      buf[3], size), -FI_EOPNOTSUPP);
	cr_assert_eq(p4e_atomic_apply(op, type, buf[0], buf[1], buf[2],
				      NULL, 2 * size), -FI_EOPNOTSUPP);
	cr_assert(!memcmp(buf, copy, sizeof(buf)), "buffers touched");
}

static void check_layout(int op, int type, const struct pool *pool,
			 size_t layout)
{
	size_t size = expect_types[type].size, np = pool->n;
	size_t count = np * np * np, nbytes = count * size;
	bool use_cmp = expect_ops[op].compare, use_opnd = expect_ops[op].operand;
	unsigned char *raw[4], *buf[4], *orig_t, *orig_o, *orig_c, *want;
	const unsigned char zero[ELEM_MAX] = { 0 };
	char h[5][2 * ELEM_MAX + 1];
	int ret;

	/* 32-aligned, so offset 0 is natural alignment for every type */
	for (int b = 0; b < 4; b++) {
		void *mem = NULL;

		cr_assert_eq(posix_memalign(&mem, 32, nbytes + 16), 0);
		raw[b] = mem;
		buf[b] = raw[b] + layouts[layout].off[b];
	}
	orig_t = malloc(nbytes);
	orig_o = malloc(nbytes);
	orig_c = malloc(nbytes);
	want = malloc(nbytes);
	cr_assert(orig_t && orig_o && orig_c && want);

	/* element i = (pool[a], pool[b], pool[c]) for every a, b, c */
	for (size_t i = 0; i < count; i++) {
		memcpy(orig_t + i * size, pool->v[i / (np * np)], size);
		memcpy(orig_o + i * size, pool->v[(i / np) % np], size);
		memcpy(orig_c + i * size, pool->v[i % np], size);
		refs[type](op, orig_t + i * size,
			   use_opnd ? orig_o + i * size : zero,
			   use_cmp ? orig_c + i * size : zero, want + i * size);
	}
	memcpy(buf[0], orig_t, nbytes);
	memcpy(buf[1], orig_o, nbytes);
	memcpy(buf[2], orig_c, nbytes);
	memset(buf[3], 0xee, nbytes);

	ret = p4e_atomic_apply(op, type, buf[0], use_opnd ? buf[1] : NULL,
			       use_cmp ? buf[2] : NULL,
			       layouts[layout].fetch ? buf[3] : NULL, nbytes);
	cr_assert_eq(ret, 0, "%s %s layout %zu: %d", p4e_atomic_op_name(op),
		     p4e_atomic_type_name(type), layout, ret);

	for (size_t i = 0; i < count; i++) {
		const unsigned char *got = buf[0] + i * size;

		if (same_value(type, got, want + i * size) &&
		    (!layouts[layout].fetch ||
		     !memcmp(buf[3] + i * size, orig_t + i * size, size)))
			continue;
		hex(h[0], orig_t + i * size, size);
		hex(h[1], orig_o + i * size, size);
		hex(h[2], orig_c + i * size, size);
		hex(h[3], got, size);
		cr_assert_fail("%s %s layout %zu elem %zu: t=%s o=%s c=%s "
			       "-> %s (want %s%s)", p4e_atomic_op_name(op),
			       p4e_atomic_type_name(type), layout, i, h[0],
			       h[1], h[2], h[3],
			       (hex(h[4], want + i * size, size), h[4]),
			       same_value(type, got, want + i * size) ?
			       ", fetch_out wrong" : "");
	}
	cr_assert(!memcmp(buf[1], orig_o, nbytes), "operand modified");
	cr_assert(!memcmp(buf[2], orig_c, nbytes), "compare modified");

	for (int b = 0; b < 4; b++)
		free(raw[b]);
	free(orig_t);
	free(orig_o);
	free(orig_c);
	free(want);
}

ParameterizedTest(struct combo *cb, atomic, matrix)
{
	struct pool pool;

	if (!expect_valid(cb->op, cb->type)) {
		check_invalid(cb->op, cb->type);
		return;
	}
	cr_assert(p4e_atomic_valid(cb->op, cb->type, true), "%s %s",
		  p4e_atomic_op_name(cb->op), p4e_atomic_type_name(cb->type));
	cr_assert_eq(p4e_atomic_valid(cb->op, cb->type, false),
		     !expect_ops[cb->op].fetch_only, "%s %s plain form",
		     p4e_atomic_op_name(cb->op),
		     p4e_atomic_type_name(cb->type));
	pool_make(cb->type, &pool);
	for (size_t l = 0; l < ARRAY_SIZE(layouts); l++)
		check_layout(cb->op, cb->type, &pool, l);
}

/* The whole table at once, so a summary failure names the count. */
Test(atomic, valid_table)
{
	unsigned valid = 0, plain = 0;

	for (int op = 0; op < P4E_ATOMIC_OP_MAX; op++) {
		cr_expect_eq(p4e_atomic_op_has_operand(op),
			     expect_ops[op].operand, "%d", op);
		cr_expect_eq(p4e_atomic_op_has_compare(op),
			     expect_ops[op].compare, "%d", op);
		for (int type = 0; type < P4E_ATOMIC_TYPE_MAX; type++) {
			valid += p4e_atomic_valid(op, type, true);
			plain += p4e_atomic_valid(op, type, false);
			cr_expect_eq(p4e_atomic_valid(op, type, true),
				     expect_valid(op, type), "%d x %d", op,
				     type);
		}
	}
	/* 20 ops on 8 integer types, 16 on 3 real, 10 on 3 complex types */
	cr_assert_eq(valid, 160 + 48 + 30);
	/* plain form: MIN MAX SUM PROD LOR LAND LXOR WRITE, + BOR BAND BXOR
	 * on integers, less MIN MAX on complex */
	cr_assert_eq(plain, 8 * 11 + 3 * 8 + 3 * 6);
}

Test(atomic, sizes_and_names)
{
	for (int type = 0; type < P4E_ATOMIC_TYPE_MAX; type++)
		cr_assert_eq(p4e_atomic_type_size(type),
			     expect_types[type].size, "type %d", type);
	cr_assert_eq(p4e_atomic_type_size(P4E_ATOMIC_TYPE_MAX), 0);
	cr_assert_eq(p4e_atomic_type_size((enum p4e_atomic_type)-1), 0);
	cr_assert_str_eq(p4e_atomic_op_name(P4E_CSWAP_LT), "CSWAP_LT");
	cr_assert_str_eq(p4e_atomic_op_name(P4E_ATOMIC_READ), "ATOMIC_READ");
	cr_assert_str_eq(p4e_atomic_op_name(P4E_ATOMIC_OP_MAX), "?");
	cr_assert_str_eq(p4e_atomic_type_name(P4E_INT64), "INT64");
	cr_assert_str_eq(p4e_atomic_type_name(P4E_LONG_DOUBLE_COMPLEX),
			 "LONG_DOUBLE_COMPLEX");
	cr_assert_str_eq(p4e_atomic_type_name(P4E_ATOMIC_TYPE_MAX), "?");
}

/* ---- rules of their own ---------------------------------------------------- */

static uint64_t dbl_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/* READ is a load: -0.0 comes back -0.0. A fetch-SUM(0) would give +0.0. */
Test(atomic, read_keeps_negative_zero)
{
	double t = -0.0, zero = 0.0, fetched = 1.0;
	float tf = -0.0f, ff = 1.0f;
	long double tl = -0.0L, fl = 1.0L;
	double tc[2] = { -0.0, -0.0 }, fc[2] = { 1.0, 1.0 };
	_Alignas(16) unsigned char odd[16];
	_Alignas(16) unsigned char fodd[16];

	cr_assert_eq(p4e_atomic_apply(P4E_ATOMIC_READ, P4E_DOUBLE, &t, NULL,
				      NULL, &fetched, sizeof(t)), 0);
	cr_assert_eq(dbl_bits(t), 0x8000000000000000ULL, "target changed");
	cr_assert_eq(dbl_bits(fetched), 0x8000000000000000ULL);

	cr_assert_eq(p4e_atomic_apply(P4E_ATOMIC_READ, P4E_FLOAT, &tf, NULL,
				      NULL, &ff, sizeof(tf)), 0);
	cr_assert(signbit(ff) && ff == 0.0f && signbit(tf));
	cr_assert_eq(p4e_atomic_apply(P4E_ATOMIC_READ, P4E_LONG_DOUBLE, &tl,
				      NULL, NULL, &fl, sizeof(tl)), 0);
	cr_assert(signbit(fl) && fl == 0.0L && signbit(tl));
	cr_assert_eq(p4e_atomic_apply(P4E_ATOMIC_READ, P4E_DOUBLE_COMPLEX, tc,
				      NULL, NULL, fc, sizeof(tc)), 0);
	cr_assert(signbit(fc[0]) && signbit(fc[1]) && fc[0] == 0.0);

	/* the locked path (misaligned) too */
	memcpy(odd + 1, &t, sizeof(t));
	cr_assert_eq(p4e_atomic_apply(P4E_ATOMIC_READ, P4E_DOUBLE, odd + 1,
				      NULL, NULL, fodd + 1, sizeof(t)), 0);
	cr_assert(!memcmp(fodd + 1, &t, sizeof(t)));
	cr_assert(!memcmp(odd + 1, &t, sizeof(t)));

	/* what READ must not be: SUM with 0 loses the sign */
	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_DOUBLE, &t, &zero, NULL,
				      &fetched, sizeof(t)), 0);
	cr_assert_eq(dbl_bits(fetched), 0x8000000000000000ULL);
	cr_assert_eq(dbl_bits(t), 0, "-0.0 + +0.0 is +0.0");
}

/*
 * MIN/MAX replace the target only when operand < target (> for MAX), as
 * fi_atomic(3) writes it: a NaN on either side leaves the target as it
 * was, and MIN(+0.0, -0.0) keeps +0.0.
 */
Test(atomic, min_max_nan_and_zero)
{
	double t, o;

	t = NAN; o = 1.0;
	cr_assert_eq(p4e_atomic_apply(P4E_MIN, P4E_DOUBLE, &t, &o, NULL, NULL,
				      sizeof(t)), 0);
	cr_assert(isnan(t), "NaN target stays NaN");
	t = 1.0; o = NAN;
	cr_assert_eq(p4e_atomic_apply(P4E_MAX, P4E_DOUBLE, &t, &o, NULL, NULL,
				      sizeof(t)), 0);
	cr_assert_eq(t, 1.0, "NaN operand ignored");
	t = 1.0; o = -INFINITY;
	p4e_atomic_apply(P4E_MIN, P4E_DOUBLE, &t, &o, NULL, NULL, sizeof(t));
	cr_assert(isinf(t) && t < 0);
	t = 0.0; o = -0.0;
	p4e_atomic_apply(P4E_MIN, P4E_DOUBLE, &t, &o, NULL, NULL, sizeof(t));
	cr_assert_eq(dbl_bits(t), 0, "-0.0 < +0.0 is false");
	t = -0.0; o = 0.0;
	p4e_atomic_apply(P4E_MAX, P4E_DOUBLE, &t, &o, NULL, NULL, sizeof(t));
	cr_assert_eq(dbl_bits(t), 0x8000000000000000ULL);
}

/* CSWAP_xx swaps when (compare xx target): the compare value is on the left. */
Test(atomic, cswap_orientation)
{
	static const struct {
		int op;
		bool swaps_1_2, swaps_2_2, swaps_3_2;	/* compare, target */
	} cases[] = {
		{ P4E_CSWAP,    false, true,  false },
		{ P4E_CSWAP_NE, true,  false, true },
		{ P4E_CSWAP_LE, true,  true,  false },
		{ P4E_CSWAP_LT, true,  false, false },
		{ P4E_CSWAP_GE, false, true,  true },
		{ P4E_CSWAP_GT, false, false, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const bool swaps[3] = { cases[i].swaps_1_2, cases[i].swaps_2_2,
					cases[i].swaps_3_2 };

		for (int cmp = 1; cmp <= 3; cmp++) {
			int32_t t = 2, o = 99, c = cmp, old = 0;
			double td = 2.0, od = 99.0, cd = cmp, oldd = 0;

			cr_assert_eq(p4e_atomic_apply(cases[i].op, P4E_INT32,
						      &t, &o, &c, &old,
						      sizeof(t)), 0);
			cr_assert_eq(old, 2);
			cr_assert_eq(t, swaps[cmp - 1] ? 99 : 2, "%s c=%d",
				     p4e_atomic_op_name(cases[i].op), cmp);
			/* float: the CAS loop path, same answer */
			cr_assert_eq(p4e_atomic_apply(cases[i].op, P4E_DOUBLE,
						      &td, &od, &cd, &oldd,
						      sizeof(td)), 0);
			cr_assert_eq(oldd, 2.0);
			cr_assert_eq(td, swaps[cmp - 1] ? 99.0 : 2.0);
		}
	}
}

/* CSWAP on floating types compares values: -0.0 == +0.0, NaN == nothing. */
Test(atomic, cswap_float_values)
{
	double t = 0.0, o = 5.0, c = -0.0, old;

	p4e_atomic_apply(P4E_CSWAP, P4E_DOUBLE, &t, &o, &c, &old, sizeof(t));
	cr_assert_eq(t, 5.0, "-0.0 == +0.0 swaps");
	t = NAN; c = NAN;
	p4e_atomic_apply(P4E_CSWAP, P4E_DOUBLE, &t, &o, &c, &old, sizeof(t));
	cr_assert(isnan(t), "NaN == NaN is false");
	p4e_atomic_apply(P4E_CSWAP_NE, P4E_DOUBLE, &t, &o, &c, &old,
			 sizeof(t));
	cr_assert_eq(t, 5.0, "NaN != NaN is true");
}

Test(atomic, mswap_and_logical)
{
	uint16_t t = 0x1234, o = 0xabcd, mask = 0x0ff0, old;
	int32_t ti = 5, oi = 0;
	double td = 2.5, od = 0.0;

	p4e_atomic_apply(P4E_MSWAP, P4E_UINT16, &t, &o, &mask, &old,
			 sizeof(t));
	cr_assert_eq(old, 0x1234);
	cr_assert_eq(t, 0x1bc4, "bits under the mask come from the operand");

	p4e_atomic_apply(P4E_LOR, P4E_INT32, &ti, &oi, NULL, NULL, 4);
	cr_assert_eq(ti, 1, "logical ops store 0 or 1");
	p4e_atomic_apply(P4E_LXOR, P4E_INT32, &ti, &oi, NULL, NULL, 4);
	cr_assert_eq(ti, 1);
	p4e_atomic_apply(P4E_LAND, P4E_DOUBLE, &td, &od, NULL, NULL, 8);
	cr_assert_eq(td, 0.0);
	od = -0.0;
	td = 3.0;
	p4e_atomic_apply(P4E_LAND, P4E_DOUBLE, &td, &od, NULL, NULL, 8);
	cr_assert_eq(td, 0.0, "-0.0 is false");
}

Test(atomic, integer_wraparound)
{
	uint64_t u = UINT64_MAX, two = 2;
	int64_t s = INT64_MIN, m1 = -1, old;
	uint16_t h = 65535;
	int8_t b = -128, bm1 = -1;
	uint8_t ub = 255, one = 1;

	p4e_atomic_apply(P4E_SUM, P4E_UINT64, &u, &two, NULL, NULL, 8);
	cr_assert_eq(u, 1);
	p4e_atomic_apply(P4E_SUM, P4E_INT64, &s, &m1, NULL, &old, 8);
	cr_assert_eq(old, INT64_MIN);
	cr_assert_eq(s, INT64_MAX);
	s = INT64_MIN;
	p4e_atomic_apply(P4E_PROD, P4E_INT64, &s, &m1, NULL, NULL, 8);
	cr_assert_eq(s, INT64_MIN);
	p4e_atomic_apply(P4E_PROD, P4E_UINT16, &h, &h, NULL, NULL, 2);
	cr_assert_eq(h, 1, "65535^2 mod 2^16, no int overflow");
	p4e_atomic_apply(P4E_PROD, P4E_INT8, &b, &bm1, NULL, NULL, 1);
	cr_assert_eq(b, -128);
	p4e_atomic_apply(P4E_SUM, P4E_UINT8, &ub, &one, NULL, NULL, 1);
	cr_assert_eq(ub, 0);
	s = INT64_MIN;
	m1 = INT64_MAX;
	p4e_atomic_apply(P4E_MAX, P4E_INT64, &s, &m1, NULL, NULL, 8);
	cr_assert_eq(s, INT64_MAX);
}

Test(atomic, argument_errors)
{
	uint32_t t[4] = { 1, 2, 3, 4 }, o[4] = { 1, 1, 1, 1 }, f[4] = { 0 };
	const uint32_t orig[4] = { 1, 2, 3, 4 };

	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_UINT32, t, o, NULL, f, 6),
		     -FI_EINVAL);
	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_UINT32, t, o, NULL, f, 1),
		     -FI_EINVAL);
	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_UINT32, t, o, NULL, f, 15),
		     -FI_EINVAL);
	cr_assert(!memcmp(t, orig, sizeof(t)) && !f[0], "written on error");
	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_UINT32, t, NULL, NULL, f,
				      4), -FI_EINVAL);
	cr_assert_eq(p4e_atomic_apply(P4E_CSWAP, P4E_UINT32, t, o, NULL, f,
				      4), -FI_EINVAL);
	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_UINT32, NULL, o, NULL, f,
				      4), -FI_EINVAL);
	cr_assert_eq(p4e_atomic_apply(P4E_ATOMIC_OP_MAX, P4E_UINT32, t, o, o,
				      f, 4), -FI_EINVAL);
	cr_assert_eq(p4e_atomic_apply((enum p4e_atomic_op)-1, P4E_UINT32, t,
				      o, o, f, 4), -FI_EINVAL);
	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_ATOMIC_TYPE_MAX, t, o, o,
				      f, 4), -FI_EINVAL);
	cr_assert(!p4e_atomic_valid(P4E_ATOMIC_OP_MAX, P4E_UINT32, true));
	cr_assert(!p4e_atomic_valid(P4E_SUM, P4E_ATOMIC_TYPE_MAX, true));
	cr_assert(!memcmp(t, orig, sizeof(t)) && !f[0], "written on error");
	/* a combination that does not exist wins over a bad length */
	cr_assert_eq(p4e_atomic_apply(P4E_BOR, P4E_DOUBLE, t, o, NULL, f, 3),
		     -FI_EOPNOTSUPP);
	/* nothing to do is fine, even with no buffers */
	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_UINT32, NULL, NULL, NULL,
				      NULL, 0), 0);
	/* READ needs no operand; ops without compare ignore it */
	cr_assert_eq(p4e_atomic_apply(P4E_ATOMIC_READ, P4E_UINT32, t, NULL,
				      NULL, f, sizeof(t)), 0);
	cr_assert(!memcmp(f, orig, sizeof(f)) && !memcmp(t, orig, sizeof(t)));
	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_UINT32, t, o, NULL, NULL,
				      sizeof(t)), 0);
	cr_assert_eq(t[3], 5);
}

#if defined(__x86_64__) && LDBL_MANT_DIG == 64
/* x87 long double: a result is stored as its 10 value bytes only. */
Test(atomic, long_double_padding_untouched)
{
	long double t, o = 2.5L;
	unsigned char tb[sizeof(long double)], ob[sizeof(long double)];

	memset(tb, 0x5a, sizeof(tb));
	t = 1.5L;
	memcpy(tb, &t, 10);
	memcpy(ob, &o, sizeof(ob));
	memset(ob + 10, 0xcc, sizeof(ob) - 10);
	cr_assert_eq(p4e_atomic_apply(P4E_ATOMIC_WRITE, P4E_LONG_DOUBLE, tb,
				      ob, NULL, NULL, sizeof(tb)), 0);
	memcpy(&t, tb, sizeof(t));
	cr_assert_eq(t, 2.5L);
	for (size_t i = 10; i < sizeof(tb); i++)
		cr_assert_eq(tb[i], 0x5a, "padding byte %zu", i);
	cr_assert_eq(p4e_atomic_apply(P4E_SUM, P4E_LONG_DOUBLE, tb, ob, NULL,
				      NULL, sizeof(tb)), 0);
	for (size_t i = 10; i < sizeof(tb); i++)
		cr_assert_eq(tb[i], 0x5a, "padding byte %zu", i);
}
#endif

/* ---- two threads on the same elements ----------------------------------- */

#define STRESS_ITERS	500000

/*
 * One phase per target, each started by a barrier, so both threads hammer
 * the same element at the same time: a lost update (a missing lock, a
 * non-atomic read-modify-write) shows in the total.
 */
enum stress_phase {
	STRESS_U64,		/* lock-free fetch_add */
	STRESS_DOUBLE,		/* lock-free CAS loop */
	STRESS_LDBL,		/* stripe lock */
	STRESS_UNALIGNED,	/* uint32 at an odd address: stripe lock */
	STRESS_PHASES,
};

struct stress {
	pthread_barrier_t start;
	uint64_t u64;
	double dbl;
	long double ldbl;
	_Alignas(8) unsigned char unaligned[8];
	unsigned char *seen;			/* fetched u64 values */
	int errors;
};

static int stress_one(struct stress *st, enum stress_phase phase)
{
	static const uint64_t one = 1;
	static const uint32_t one32 = 1;
	static const double oned = 1.0;
	static const long double onel = 1.0L;
	uint64_t old;
	int ret;

	switch (phase) {
	case STRESS_U64:
		ret = p4e_atomic_apply(P4E_SUM, P4E_UINT64, &st->u64, &one,
				       NULL, &old, sizeof(old));
		if (!ret && old < 2 * STRESS_ITERS)
			__atomic_fetch_add(&st->seen[old], 1,
					   __ATOMIC_RELAXED);
		return ret;
	case STRESS_DOUBLE:
		return p4e_atomic_apply(P4E_SUM, P4E_DOUBLE, &st->dbl, &oned,
					NULL, NULL, sizeof(double));
	case STRESS_LDBL:
		return p4e_atomic_apply(P4E_SUM, P4E_LONG_DOUBLE, &st->ldbl,
					&onel, NULL, NULL,
					sizeof(long double));
	default:
		return p4e_atomic_apply(P4E_SUM, P4E_UINT32,
					st->unaligned + 1, &one32, NULL, NULL,
					sizeof(one32));
	}
}

static void *stress_thread(void *arg)
{
	struct stress *st = arg;

	for (int phase = 0; phase < STRESS_PHASES; phase++) {
		pthread_barrier_wait(&st->start);
		for (int i = 0; i < STRESS_ITERS; i++)
			if (stress_one(st, phase))
				__atomic_fetch_add(&st->errors, 1,
						   __ATOMIC_RELAXED);
	}
	return NULL;
}

Test(atomic, two_thread_sums)
{
	struct stress st;
	pthread_t threads[2];
	uint32_t u32;

	memset(&st, 0, sizeof(st));
	st.seen = calloc(2 * STRESS_ITERS, 1);
	cr_assert_not_null(st.seen);
	cr_assert_eq(pthread_barrier_init(&st.start, NULL, 2), 0);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&threads[i], NULL, stress_thread,
					    &st), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&st.start);

	cr_expect_eq(st.errors, 0);
	cr_expect_eq(st.u64, 2 * STRESS_ITERS, "lock-free fetch_add");
	cr_expect_eq(st.dbl, 2.0 * STRESS_ITERS, "lock-free CAS loop");
	cr_expect_eq(st.ldbl, 2.0L * STRESS_ITERS, "stripe lock");
	memcpy(&u32, st.unaligned + 1, sizeof(u32));
	cr_expect_eq(u32, 2 * STRESS_ITERS, "stripe lock, misaligned");
	/* every fetched old value exactly once: the fetches are atomic too */
	for (int i = 0; i < 2 * STRESS_ITERS; i++)
		cr_assert_eq(st.seen[i], 1, "old value %d seen %d times", i,
			     st.seen[i]);
	free(st.seen);
}
