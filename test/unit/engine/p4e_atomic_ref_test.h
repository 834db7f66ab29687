/*
 * p4e_atomic_ref_test.h - the reference the atomic tests (test_atomic.c,
 * test_eng_atomic.c) check results against: fi_atomic(3)'s pseudo-code
 * written out per C type, independently of the engine's handlers.
 * refs[type](op, t, o, c, out) stores the new target value for target t,
 * operand o and compare c. Integer SUM/PROD wrap (computed in uint64_t,
 * then truncated): that is what the engine promises for signed types too.
 *
 * One test binary includes it once.
 */
#ifndef P4E_ATOMIC_REF_TEST_H
#define P4E_ATOMIC_REF_TEST_H

#include <stdint.h>
#include <string.h>
#include <criterion/criterion.h>

#include "p4e.h"

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

#endif /* P4E_ATOMIC_REF_TEST_H */
