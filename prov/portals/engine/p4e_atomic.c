/*
 * p4e_atomic.c - the engine's atomic op x datatype handlers, generated
 * from two X-macro lists (P4E_ATOMIC_TYPES, P4E_ATOMIC_OPS), and the
 * functions that validate and dispatch to them (p4e_atomic.h, p4e.h).
 *
 * Pure computation on memory: no engine state, no allocation, no logging
 * (the caller that refuses an operation is the one that counts and logs).
 *
 * Which combinations exist (x = valid; "f" = fetching form only):
 *
 *                     int  float,  float/double  long    long double
 *                          double  complex       double  complex
 *   MIN MAX            x     x       -             x       -
 *   SUM PROD           x     x       x             x       x
 *   LOR LAND LXOR      x     x       x             x       x
 *   BOR BAND BXOR      x     -       -             -       -
 *   SWAP               f     f       f             f       f
 *   CSWAP CSWAP_NE     f     f       f             f       f
 *   CSWAP_LE LT GE GT  f     f       -             f       -
 *   MSWAP              f     -       -             -       -
 *   ATOMIC_READ        f     f       f             f       f
 *   ATOMIC_WRITE       x     x       x             x       x
 *
 * 238 of the 20 x 14 combinations exist (160 integer, 48 real floating,
 * 30 complex).
 * This is libfabric's matrix
 * (prov/util/src/util_atomic.c of 1.17, which fi_atomic(3) defers to), a
 * superset of the Portals reference implementation's, which refuses the
 * logical ops on floating types: the provider answers fi_atomicvalid()
 * with p4e_atomic_valid(), and a native Portals front end can refuse the
 * extra combinations itself. "f": Portals does SWAP, CSWAP* and MSWAP only
 * through PtlSwap, libfabric only through fi_compare_atomic (SWAP: as
 * fi_fetch_atomic of ATOMIC_WRITE), and ATOMIC_READ has nothing to do
 * without a fetch. p4e_atomic_apply() accepts every existing combination
 * whether or not fetch_out is given: fetch-only is the initiator's rule.
 *
 * Decisions:
 *  - CSWAP orientation: the compare value is the left operand, CSWAP_LT
 *    swaps when compare < target (fi_atomic(3): "if (compare[i] <
 *    addr[i])"; Portals header: "if the value of the operand [PtlSwap's
 *    operand = our compare] is less than the target value").
 *  - MIN/MAX follow fi_atomic(3) literally: the target is replaced only
 *    if operand < target (MIN) / operand > target (MAX). So a NaN on
 *    either side leaves the target unchanged (a NaN target stays NaN, a
 *    NaN operand is ignored), and MIN(+0.0, -0.0) keeps the target's
 *    zero, since -0.0 < +0.0 is false. The Portals reference
 *    implementation behaves the same (min(a, b) = a < b ? a : b).
 *  - CSWAP* on floating types compare values, as the C relations in
 *    fi_atomic(3) do: -0.0 == +0.0, and NaN equals nothing (CSWAP with a
 *    NaN compare never swaps, CSWAP_NE always does).
 *  - Logical ops treat any non-zero value (NaN included, -0.0 excluded)
 *    as true and store 0 or 1 in the element's type.
 *  - Integer SUM and PROD wrap modulo 2^bits for signed types as well:
 *    they are computed in an unsigned type at least as wide as int
 *    (signed overflow, and uint16 * uint16 promoted to int, are UB).
 *  - ATOMIC_READ is a load and nothing else: no store, no arithmetic, so
 *    the bits come back exactly (-0.0, NaN payloads), unlike an emulation
 *    by fetch-SUM of 0.
 *  - long double (x87, 80 bits in 16 bytes): results are stored value
 *    bytes only, so the padding of the target keeps what it had and no
 *    bytes of this stack leak into memory a peer may read.
 *
 * Atomicity. The engine applies a domain's atomics from one progress
 * context, but other domains, processes sharing memory and the
 * application's own CPU atomics may touch the same target, so every
 * element is updated atomically:
 *  - 1, 2, 4 and 8-byte types (integers, float, double, float complex)
 *    at a naturally aligned address: lock-free on the element's bits with
 *    __atomic builtins: fetch_add / fetch_or / fetch_and / fetch_xor /
 *    exchange / compare_exchange / load where one does the whole op on
 *    an integer, else a compare-and-swap loop (MIN, MAX, PROD, logical
 *    ops, every floating op). A loop that would store the bits it read
 *    (condition false, or the same result) stores nothing: its atomic
 *    load is the linearisation point. These are atomic against any
 *    other thread or process doing __atomic or lock-prefixed ops on the
 *    same element.
 *  - Wider types (double complex, long double, long double complex) and
 *    targets not naturally aligned: under one of P4E_ATOMIC_STRIPES
 *    spinlocks, chosen by a hash of the element's address. Atomic
 *    against other p4e_atomic_apply() calls of this process on the same
 *    element and datatype only (nothing can make a 32-byte update atomic
 *    against plain CPU stores). The critical section is a load, an
 *    expression and a store: no call out, no blocking, so a spinlock
 *    (yielding when it spins long) is cheaper than a mutex.
 *  Which path an element takes depends only on (address, datatype), so
 *  two updates of one element with one datatype never mix the two.
 *  Like Portals (and fi_atomic(3)), atomicity is per element and per
 *  datatype: overlapping updates with different datatypes, or element
 *  ranges that partly overlap, are not atomic with respect to each other.
 */
#include <config.h>

#include <float.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "p4u_compiler.h"
#include "p4e.h"
#include "p4e_atomic.h"

/* ---- the two lists ----------------------------------------------------- */

/*
 * Datatypes: X(name, C type, class, W, access, B, ldbl parts, ...).
 *  class  - SINT, UINT, FLT (float, double), CPX (float/double complex),
 *           LDBL, LDCPX: selects the op's validity column below.
 *  W      - the type arithmetic and bitwise ops are done in: an unsigned
 *           type at least as wide as int for integers (so they wrap
 *           instead of overflowing), the type itself otherwise.
 *  access - LOCKFREE: CAS-able as B when naturally aligned (sizeof(B) ==
 *           sizeof(T), checked); LOCKED: always under a stripe lock.
 *  parts  - how many long doubles the type holds (stored value bytes
 *           only, see the header comment), 0 for the others.
 * The trailing ... carries the caller's arguments to X.
 */
#define P4E_ATOMIC_TYPES(X, ...)					\
	X(INT8,   int8_t,   SINT, uint32_t, LOCKFREE, uint8_t,  0, __VA_ARGS__) \
	X(UINT8,  uint8_t,  UINT, uint32_t, LOCKFREE, uint8_t,  0, __VA_ARGS__) \
	X(INT16,  int16_t,  SINT, uint32_t, LOCKFREE, uint16_t, 0, __VA_ARGS__) \
	X(UINT16, uint16_t, UINT, uint32_t, LOCKFREE, uint16_t, 0, __VA_ARGS__) \
	X(INT32,  int32_t,  SINT, uint32_t, LOCKFREE, uint32_t, 0, __VA_ARGS__) \
	X(UINT32, uint32_t, UINT, uint32_t, LOCKFREE, uint32_t, 0, __VA_ARGS__) \
	X(FLOAT,  float,    FLT,  float,    LOCKFREE, uint32_t, 0, __VA_ARGS__) \
	X(INT64,  int64_t,  SINT, uint64_t, LOCKFREE, uint64_t, 0, __VA_ARGS__) \
	X(UINT64, uint64_t, UINT, uint64_t, LOCKFREE, uint64_t, 0, __VA_ARGS__) \
	X(DOUBLE, double,   FLT,  double,   LOCKFREE, uint64_t, 0, __VA_ARGS__) \
	X(FLOAT_COMPLEX, float _Complex, CPX, float _Complex,		\
	  LOCKFREE, uint64_t, 0, __VA_ARGS__)				\
	X(DOUBLE_COMPLEX, double _Complex, CPX, double _Complex,	\
	  LOCKED, void, 0, __VA_ARGS__)					\
	X(LONG_DOUBLE, long double, LDBL, long double,			\
	  LOCKED, void, 1, __VA_ARGS__)					\
	X(LONG_DOUBLE_COMPLEX, long double _Complex, LDCPX,		\
	  long double _Complex, LOCKED, void, 2, __VA_ARGS__)

/*
 * Ops: X(name, valid, fetch, args, cond, value, lf_int, lf_other).
 *  valid  - (SINT, UINT, FLT, CPX, LDBL, LDCPX): 1 where the op exists.
 *  fetch  - BOTH (plain and fetching) or FETCH (fetching form only).
 *  args   - buffers read: NONE, OPND (operand), CMP (operand + compare).
 *  cond, value - the element update is "if (cond) t = value", both
 *           expressions of the old target t, operand o and compare c
 *           (P4E_C_* and P4E_V_* below).
 *  lf_int, lf_other - how a lock-free element is updated, for integer
 *           classes / the others: a native builtin (P4E_LF_ADD, ...) or
 *           P4E_LF_CAS, a CAS loop evaluating cond and value.
 */
#define P4E_ATOMIC_OPS(X)						\
	/* name       SI UI FL CX LD LC  fetch  args  cond / value / lf */ \
	X(MIN,       (1, 1, 1, 0, 1, 0), BOTH,  OPND, P4E_C_OLT, P4E_V_O, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(MAX,       (1, 1, 1, 0, 1, 0), BOTH,  OPND, P4E_C_OGT, P4E_V_O, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(SUM,       (1, 1, 1, 1, 1, 1), BOTH,  OPND, P4E_C_ALWAYS, P4E_V_SUM, \
	  P4E_LF_ADD, P4E_LF_CAS)					\
	X(PROD,      (1, 1, 1, 1, 1, 1), BOTH,  OPND, P4E_C_ALWAYS, P4E_V_PROD, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(LOR,       (1, 1, 1, 1, 1, 1), BOTH,  OPND, P4E_C_ALWAYS, P4E_V_LOR, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(LAND,      (1, 1, 1, 1, 1, 1), BOTH,  OPND, P4E_C_ALWAYS, P4E_V_LAND, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(BOR,       (1, 1, 0, 0, 0, 0), BOTH,  OPND, P4E_C_ALWAYS, P4E_V_BOR, \
	  P4E_LF_OR, P4E_LF_CAS)					\
	X(BAND,      (1, 1, 0, 0, 0, 0), BOTH,  OPND, P4E_C_ALWAYS, P4E_V_BAND, \
	  P4E_LF_AND, P4E_LF_CAS)					\
	X(LXOR,      (1, 1, 1, 1, 1, 1), BOTH,  OPND, P4E_C_ALWAYS, P4E_V_LXOR, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(BXOR,      (1, 1, 0, 0, 0, 0), BOTH,  OPND, P4E_C_ALWAYS, P4E_V_BXOR, \
	  P4E_LF_XOR, P4E_LF_CAS)					\
	X(SWAP,      (1, 1, 1, 1, 1, 1), FETCH, OPND, P4E_C_ALWAYS, P4E_V_O, \
	  P4E_LF_XCHG, P4E_LF_XCHG)					\
	X(CSWAP,     (1, 1, 1, 1, 1, 1), FETCH, CMP,  P4E_C_CEQ, P4E_V_O, \
	  P4E_LF_CMPXCHG, P4E_LF_CAS)					\
	X(CSWAP_NE,  (1, 1, 1, 1, 1, 1), FETCH, CMP,  P4E_C_CNE, P4E_V_O, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(CSWAP_LE,  (1, 1, 1, 0, 1, 0), FETCH, CMP,  P4E_C_CLE, P4E_V_O, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(CSWAP_LT,  (1, 1, 1, 0, 1, 0), FETCH, CMP,  P4E_C_CLT, P4E_V_O, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(CSWAP_GE,  (1, 1, 1, 0, 1, 0), FETCH, CMP,  P4E_C_CGE, P4E_V_O, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(CSWAP_GT,  (1, 1, 1, 0, 1, 0), FETCH, CMP,  P4E_C_CGT, P4E_V_O, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(MSWAP,     (1, 1, 0, 0, 0, 0), FETCH, CMP,  P4E_C_ALWAYS, P4E_V_MSWAP, \
	  P4E_LF_CAS, P4E_LF_CAS)					\
	X(ATOMIC_READ, (1, 1, 1, 1, 1, 1), FETCH, NONE, P4E_C_NEVER, P4E_V_T, \
	  P4E_LF_LOAD, P4E_LF_LOAD)					\
	X(ATOMIC_WRITE, (1, 1, 1, 1, 1, 1), BOTH, OPND, P4E_C_ALWAYS, P4E_V_O, \
	  P4E_LF_XCHG, P4E_LF_XCHG)

/* ---- element expressions: (T, W, t, o, c) ------------------------------ */

#define P4E_C_ALWAYS(T, W, t, o, c)	1
#define P4E_C_NEVER(T, W, t, o, c)	0
#define P4E_C_OLT(T, W, t, o, c)	((o) < (t))	/* MIN */
#define P4E_C_OGT(T, W, t, o, c)	((o) > (t))	/* MAX */
/* CSWAP*: the compare value on the left (see the header comment). */
#define P4E_C_CEQ(T, W, t, o, c)	((c) == (t))
#define P4E_C_CNE(T, W, t, o, c)	((c) != (t))
#define P4E_C_CLE(T, W, t, o, c)	((c) <= (t))
#define P4E_C_CLT(T, W, t, o, c)	((c) < (t))
#define P4E_C_CGE(T, W, t, o, c)	((c) >= (t))
#define P4E_C_CGT(T, W, t, o, c)	((c) > (t))

#define P4E_V_O(T, W, t, o, c)		(o)
#define P4E_V_T(T, W, t, o, c)		(t)
#define P4E_V_SUM(T, W, t, o, c)	((T)((W)(t) + (W)(o)))
#define P4E_V_PROD(T, W, t, o, c)	((T)((W)(t) * (W)(o)))
#define P4E_V_LOR(T, W, t, o, c)	((T)((t) || (o)))
#define P4E_V_LAND(T, W, t, o, c)	((T)((t) && (o)))
#define P4E_V_LXOR(T, W, t, o, c)	((T)(!(t) != !(o)))
#define P4E_V_BOR(T, W, t, o, c)	((T)((W)(t) | (W)(o)))
#define P4E_V_BAND(T, W, t, o, c)	((T)((W)(t) & (W)(o)))
#define P4E_V_BXOR(T, W, t, o, c)	((T)((W)(t) ^ (W)(o)))
#define P4E_V_MSWAP(T, W, t, o, c)	\
	((T)(((W)(o) & (W)(c)) | ((W)(t) & ~(W)(c))))

/* ---- lock-free element strategies -------------------------------------- */

/*
 * Each one updates the naturally aligned element *p (B *) with operand o
 * and compare c (T values) and leaves the old bits in ob. The natives work
 * on the unsigned bits B: two's complement makes fetch_add and the
 * bitwise builtins right for signed integers too, and exchange / load
 * move any type's bits exactly.
 */
#define P4E_LF_BITS(B, v, T, x)	memcpy(&(v), &(x), sizeof(T))

#define P4E_LF_ADD(T, W, B, p, o, c, ob, cond, value) do {		\
	B ab_;								\
	P4E_LF_BITS(B, ab_, T, o);					\
	ob = __atomic_fetch_add(p, ab_, __ATOMIC_ACQ_REL);		\
} while (0)

#define P4E_LF_OR(T, W, B, p, o, c, ob, cond, value) do {		\
	B ab_;								\
	P4E_LF_BITS(B, ab_, T, o);					\
	ob = __atomic_fetch_or(p, ab_, __ATOMIC_ACQ_REL);		\
} while (0)

#define P4E_LF_AND(T, W, B, p, o, c, ob, cond, value) do {		\
	B ab_;								\
	P4E_LF_BITS(B, ab_, T, o);					\
	ob = __atomic_fetch_and(p, ab_, __ATOMIC_ACQ_REL);		\
} while (0)

#define P4E_LF_XOR(T, W, B, p, o, c, ob, cond, value) do {		\
	B ab_;								\
	P4E_LF_BITS(B, ab_, T, o);					\
	ob = __atomic_fetch_xor(p, ab_, __ATOMIC_ACQ_REL);		\
} while (0)

#define P4E_LF_XCHG(T, W, B, p, o, c, ob, cond, value) do {		\
	B ab_;								\
	P4E_LF_BITS(B, ab_, T, o);					\
	ob = __atomic_exchange_n(p, ab_, __ATOMIC_ACQ_REL);		\
} while (0)

#define P4E_LF_LOAD(T, W, B, p, o, c, ob, cond, value) do {		\
	ob = __atomic_load_n(p, __ATOMIC_ACQUIRE);			\
} while (0)

/* Integer CSWAP only: bit equality is value equality there. */
#define P4E_LF_CMPXCHG(T, W, B, p, o, c, ob, cond, value) do {		\
	B nb_;								\
	P4E_LF_BITS(B, nb_, T, o);					\
	P4E_LF_BITS(B, ob, T, c);					\
	/* on failure ob receives the current value: the old value */	\
	__atomic_compare_exchange_n(p, &ob, nb_, false,			\
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); \
} while (0)

/*
 * Everything else: load, compute, compare-and-swap, retry on a race. No
 * store when the condition is false or the result has the bits already.
 */
#define P4E_LF_CAS(T, W, B, p, o, c, ob, cond, value) do {		\
	T t_, n_;							\
	B nb_;								\
	ob = __atomic_load_n(p, __ATOMIC_ACQUIRE);			\
	for (;;) {							\
		memcpy(&t_, &ob, sizeof(T));				\
		if (!(cond(T, W, t_, o, c)))				\
			break;						\
		n_ = value(T, W, t_, o, c);				\
		memcpy(&nb_, &n_, sizeof(T));				\
		if (nb_ == ob)						\
			break;						\
		if (__atomic_compare_exchange_n(p, &ob, nb_, true,	\
						__ATOMIC_ACQ_REL,	\
						__ATOMIC_ACQUIRE))	\
			break;						\
	}								\
} while (0)

/* ---- the stripe locks ---------------------------------------------------- */

#define P4E_ATOMIC_STRIPE_BITS	6
#define P4E_ATOMIC_STRIPES	(1u << P4E_ATOMIC_STRIPE_BITS)
/* spins before yielding the CPU to a (perhaps preempted) holder */
#define P4E_ATOMIC_SPINS	128

/* One per cache line, so unrelated elements do not share a line. */
struct p4e_atomic_stripe {
	int locked;
} __attribute__((aligned(64)));

static struct p4e_atomic_stripe p4e_atomic_stripes[P4E_ATOMIC_STRIPES];

static struct p4e_atomic_stripe *p4e_atomic_stripe_get(const void *addr)
{
	/* Fibonacci hashing: neighbouring elements land on different locks */
	uint64_t key = (uint64_t)(uintptr_t)addr * 0x9e3779b97f4a7c15ULL;

	return &p4e_atomic_stripes[key >> (64 - P4E_ATOMIC_STRIPE_BITS)];
}

static inline void p4e_atomic_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void p4e_atomic_stripe_lock(struct p4e_atomic_stripe *stripe)
{
	unsigned spins = 0;

	while (__atomic_exchange_n(&stripe->locked, 1, __ATOMIC_ACQUIRE)) {
		/* wait reading, not writing, so the line stays shared */
		while (__atomic_load_n(&stripe->locked, __ATOMIC_RELAXED)) {
			if (++spins % P4E_ATOMIC_SPINS == 0)
				sched_yield();
			else
				p4e_atomic_cpu_relax();
		}
	}
}

static void p4e_atomic_stripe_unlock(struct p4e_atomic_stripe *stripe)
{
	__atomic_store_n(&stripe->locked, 0, __ATOMIC_RELEASE);
}

/*
 * Bytes of a long double that hold its value: x87 extended precision
 * keeps 10 in a 12 or 16-byte slot; other formats (IEEE quad, double-
 * double, plain double) fill the slot.
 */
#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
#define P4E_LDBL_VALUE_BYTES	10
#else
#define P4E_LDBL_VALUE_BYTES	sizeof(long double)
#endif

/* Store a result: whole, or the value bytes of each long double part. */
static void p4e_atomic_store(void *dst, const void *src, size_t size,
			     unsigned ldbl_parts)
{
	unsigned i;

	if (!ldbl_parts) {
		memcpy(dst, src, size);
		return;
	}
	for (i = 0; i < ldbl_parts; i++)
		memcpy((char *)dst + i * sizeof(long double),
		       (const char *)src + i * sizeof(long double),
		       P4E_LDBL_VALUE_BYTES);
}

/* ---- generators -------------------------------------------------------- */

#define P4E_CAT(a, b)		P4E_CAT_I(a, b)
#define P4E_CAT_I(a, b)		a##b

/* The validity flag of class cls in a (SI, UI, FL, CX, LD, LC) tuple. */
#define P4E_PICK(cls, valid)	P4E_PICK_I(P4E_PICK_##cls, valid)
#define P4E_PICK_I(m, valid)	m valid
#define P4E_PICK_SINT(si, ui, fl, cx, ld, lc)	si
#define P4E_PICK_UINT(si, ui, fl, cx, ld, lc)	ui
#define P4E_PICK_FLT(si, ui, fl, cx, ld, lc)	fl
#define P4E_PICK_CPX(si, ui, fl, cx, ld, lc)	cx
#define P4E_PICK_LDBL(si, ui, fl, cx, ld, lc)	ld
#define P4E_PICK_LDCPX(si, ui, fl, cx, ld, lc)	lc

/* The lock-free strategy of an op for class cls. */
#define P4E_LF_SEL_SINT(lf_int, lf_other)	lf_int
#define P4E_LF_SEL_UINT(lf_int, lf_other)	lf_int
#define P4E_LF_SEL_FLT(lf_int, lf_other)	lf_other
#define P4E_LF_SEL_CPX(lf_int, lf_other)	lf_other

typedef void (*p4e_atomic_handler_func_t)(void *target, const void *operand,
					  const void *compare, void *fetch_out,
					  size_t count);

/*
 * Locked element update: p4e_atomic_lk_<op>_<type>. The old bytes are
 * copied raw (fetch_out sees exactly what the target held).
 */
#define P4E_GEN_LK(op, type, T, W, parts, cond, value)			\
static void p4e_atomic_lk_##op##_##type(void *target, const T *o_p,	\
					const T *c_p, T *old_p)		\
{									\
	struct p4e_atomic_stripe *stripe = p4e_atomic_stripe_get(target); \
	T o = *o_p, c = *c_p, t, n;					\
									\
	(void)o;							\
	(void)c;							\
	p4e_atomic_stripe_lock(stripe);					\
	memcpy(old_p, target, sizeof(T));				\
	memcpy(&t, target, sizeof(T));					\
	if (cond(T, W, t, o, c)) {					\
		n = value(T, W, t, o, c);				\
		p4e_atomic_store(target, &n, sizeof(T), parts);		\
	}								\
	p4e_atomic_stripe_unlock(stripe);				\
}

/* Element update of a type that is never lock-free. */
#define P4E_GEN_ELEM_LOCKED(op, type, T, cls, W, B, parts, cond, value,	\
			    lf_int, lf_other)				\
P4E_GEN_LK(op, type, T, W, parts, cond, value)				\
static inline void p4e_atomic_e_##op##_##type(void *target, const T *o_p, \
					      const T *c_p, T *old_p)	\
{									\
	p4e_atomic_lk_##op##_##type(target, o_p, c_p, old_p);		\
}

/* Element update of a type that is lock-free when naturally aligned. */
#define P4E_GEN_ELEM_LOCKFREE(op, type, T, cls, W, B, parts, cond, value, \
			      lf_int, lf_other)				\
P4E_GEN_LK(op, type, T, W, parts, cond, value)				\
static inline void p4e_atomic_lf_##op##_##type(void *target,		\
					       const T *o_p,		\
					       const T *c_p, T *old_p)	\
{									\
	_Static_assert(sizeof(B) == sizeof(T), "lock-free by its bits"); \
	B *p = target;							\
	T o = *o_p, c = *c_p;						\
	B ob;								\
									\
	(void)o;							\
	(void)c;							\
	P4E_LF_SEL_##cls(lf_int, lf_other)(T, W, B, p, o, c, ob,	\
					   cond, value);		\
	memcpy(old_p, &ob, sizeof(T));					\
}									\
static inline void p4e_atomic_e_##op##_##type(void *target, const T *o_p, \
					      const T *c_p, T *old_p)	\
{									\
	if (((uintptr_t)target & (sizeof(T) - 1)) == 0)		\
		p4e_atomic_lf_##op##_##type(target, o_p, c_p, old_p);	\
	else								\
		p4e_atomic_lk_##op##_##type(target, o_p, c_p, old_p);	\
}

/*
 * The handler: count elements; operand, compare and fetch_out are read
 * and written with memcpy, so they may sit at any alignment (the operand
 * may come straight from a network buffer).
 */
#define P4E_GEN_HANDLER(op, type, T)					\
static void p4e_atomic_h_##op##_##type(void *target, const void *operand, \
				       const void *compare,		\
				       void *fetch_out, size_t count)	\
{									\
	size_t i;							\
									\
	for (i = 0; i < count; i++) {					\
		size_t off = i * sizeof(T);				\
		T o = 0, c = 0, old;					\
									\
		if (operand)						\
			memcpy(&o, (const char *)operand + off, sizeof(T)); \
		if (compare)						\
			memcpy(&c, (const char *)compare + off, sizeof(T)); \
		p4e_atomic_e_##op##_##type((char *)target + off, &o, &c, \
					   &old);			\
		if (fetch_out)						\
			memcpy((char *)fetch_out + off, &old, sizeof(T)); \
	}								\
}

/* One (op, type): everything above, or nothing when it does not exist. */
#define P4E_GEN_ONE(type, T, cls, W, access, B, parts, op, valid, cond,	\
		    value, lf_int, lf_other)				\
	P4E_CAT(P4E_GEN_ONE_, P4E_PICK(cls, valid))(type, T, cls, W,	\
		access, B, parts, op, cond, value, lf_int, lf_other)
#define P4E_GEN_ONE_0(...)
#define P4E_GEN_ONE_1(type, T, cls, W, access, B, parts, op, cond, value, \
		      lf_int, lf_other)					\
	P4E_GEN_ELEM_##access(op, type, T, cls, W, B, parts, cond, value, \
			      lf_int, lf_other)				\
	P4E_GEN_HANDLER(op, type, T)

#define P4E_GEN_OP(op, valid, fetch, args, cond, value, lf_int, lf_other) \
	P4E_ATOMIC_TYPES(P4E_GEN_ONE, op, valid, cond, value, lf_int,	\
			 lf_other)

P4E_ATOMIC_OPS(P4E_GEN_OP)

/* ---- tables -------------------------------------------------------------- */

#define P4E_GEN_COUNT(...)	+ 1
_Static_assert(0 P4E_ATOMIC_OPS(P4E_GEN_COUNT) == P4E_ATOMIC_OP_MAX,
	       "P4E_ATOMIC_OPS lists every enum p4e_atomic_op");
_Static_assert(0 P4E_ATOMIC_TYPES(P4E_GEN_COUNT) == P4E_ATOMIC_TYPE_MAX,
	       "P4E_ATOMIC_TYPES lists every enum p4e_atomic_type");
/* (a name listed twice is a duplicate initializer: -Woverride-init) */

#define P4E_GEN_TABLE_ONE(type, T, cls, W, access, B, parts, op, valid)	\
	P4E_CAT(P4E_GEN_TABLE_ONE_, P4E_PICK(cls, valid))(op, type)
#define P4E_GEN_TABLE_ONE_0(op, type)
#define P4E_GEN_TABLE_ONE_1(op, type)					\
	[P4E_##type] = p4e_atomic_h_##op##_##type,
#define P4E_GEN_TABLE_OP(op, valid, ...)				\
	[P4E_##op] = { P4E_ATOMIC_TYPES(P4E_GEN_TABLE_ONE, op, valid) },

/* NULL where the combination does not exist: the one source of validity. */
static const p4e_atomic_handler_func_t
p4e_atomic_handlers[P4E_ATOMIC_OP_MAX][P4E_ATOMIC_TYPE_MAX] = {
	P4E_ATOMIC_OPS(P4E_GEN_TABLE_OP)
};

struct p4e_atomic_op_info {
	const char *name;
	bool fetch_only;
	bool operand;
	bool compare;
};

#define P4E_FETCH_ONLY_BOTH	false
#define P4E_FETCH_ONLY_FETCH	true
#define P4E_ARG_OPERAND_NONE	false
#define P4E_ARG_OPERAND_OPND	true
#define P4E_ARG_OPERAND_CMP	true
#define P4E_ARG_COMPARE_NONE	false
#define P4E_ARG_COMPARE_OPND	false
#define P4E_ARG_COMPARE_CMP	true

#define P4E_GEN_OP_INFO(op, valid, fetch, args, ...)			\
	[P4E_##op] = {							\
		.name = #op,						\
		.fetch_only = P4E_FETCH_ONLY_##fetch,			\
		.operand = P4E_ARG_OPERAND_##args,			\
		.compare = P4E_ARG_COMPARE_##args,			\
	},

static const struct p4e_atomic_op_info p4e_atomic_ops[P4E_ATOMIC_OP_MAX] = {
	P4E_ATOMIC_OPS(P4E_GEN_OP_INFO)
};

#define P4E_GEN_TYPE_SIZE(type, T, ...)	[P4E_##type] = sizeof(T),
static const size_t p4e_atomic_sizes[P4E_ATOMIC_TYPE_MAX] = {
	P4E_ATOMIC_TYPES(P4E_GEN_TYPE_SIZE)
};

#define P4E_GEN_TYPE_NAME(type, ...)	[P4E_##type] = #type,
static const char *const p4e_atomic_type_names[P4E_ATOMIC_TYPE_MAX] = {
	P4E_ATOMIC_TYPES(P4E_GEN_TYPE_NAME)
};

/* ---- API ----------------------------------------------------------------- */

static bool p4e_atomic_in_range(enum p4e_atomic_op op,
				enum p4e_atomic_type type)
{
	/* values may come off the wire: compare as unsigned, both ends */
	return (unsigned)op < P4E_ATOMIC_OP_MAX &&
	       (unsigned)type < P4E_ATOMIC_TYPE_MAX;
}

bool p4e_atomic_valid(enum p4e_atomic_op op, enum p4e_atomic_type type,
		      bool fetch)
{
	if (!p4e_atomic_in_range(op, type) || !p4e_atomic_handlers[op][type])
		return false;
	return fetch || !p4e_atomic_ops[op].fetch_only;
}

size_t p4e_atomic_type_size(enum p4e_atomic_type type)
{
	if ((unsigned)type >= P4E_ATOMIC_TYPE_MAX)
		return 0;
	return p4e_atomic_sizes[type];
}

bool p4e_atomic_op_has_operand(enum p4e_atomic_op op)
{
	return (unsigned)op < P4E_ATOMIC_OP_MAX && p4e_atomic_ops[op].operand;
}

bool p4e_atomic_op_has_compare(enum p4e_atomic_op op)
{
	return (unsigned)op < P4E_ATOMIC_OP_MAX && p4e_atomic_ops[op].compare;
}

const char *p4e_atomic_op_name(enum p4e_atomic_op op)
{
	return (unsigned)op < P4E_ATOMIC_OP_MAX ? p4e_atomic_ops[op].name : "?";
}

const char *p4e_atomic_type_name(enum p4e_atomic_type type)
{
	return (unsigned)type < P4E_ATOMIC_TYPE_MAX ?
	       p4e_atomic_type_names[type] : "?";
}

int p4e_atomic_apply(enum p4e_atomic_op op, enum p4e_atomic_type type,
		     void *target, const void *operand, const void *compare,
		     void *fetch_out, size_t nbytes)
{
	const struct p4e_atomic_op_info *info;
	p4e_atomic_handler_func_t handler;
	size_t size;

	if (!p4e_atomic_in_range(op, type))
		return -FI_EINVAL;
	handler = p4e_atomic_handlers[op][type];
	if (!handler)
		return -FI_EOPNOTSUPP;
	size = p4e_atomic_sizes[type];
	if (nbytes % size)
		return -FI_EINVAL;
	if (!nbytes)
		return 0;

	info = &p4e_atomic_ops[op];
	if (!target || (info->operand && !operand) ||
	    (info->compare && !compare))
		return -FI_EINVAL;
	/* buffers an op does not read are not touched, even if given */
	handler(target, info->operand ? operand : NULL,
		info->compare ? compare : NULL, fetch_out, nbytes / size);
	return 0;
}
