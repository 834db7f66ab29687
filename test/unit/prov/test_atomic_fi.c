/*
 * test_atomic_fi.c - fi_atomic(3) through libfabric on two endpoints of
 * one domain over the loop transport: every op x datatype of libfabric
 * 1.17 through fi_atomic, fi_fetch_atomic and fi_compare_atomic, checked
 * against a plain C reference written here (not the engine's tables), the
 * *valid calls and fi_query_atomic against the expected matrix, 128-bit
 * types refused, the v / msg / inject forms, count limits, FI_ATOMIC_READ
 * keeping -0.0, atomic ordering, counters, concurrent initiators, and the
 * access errors.
 */
#include <complex.h>
#include <inttypes.h>
#include <math.h>

#include "p4f_rma_test.h"

static struct pair p;
static struct fid_mr *mr;
static uint8_t tgt[1 << 20] __attribute__((aligned(64)));
#define KEY 77
#define N 4

static void setup(void)
{
	rpair_open(&p, 0, 0);
	memset(tgt, 0, sizeof(tgt));
	mr = rp_reg(&p, tgt, sizeof(tgt), FI_REMOTE_READ | FI_REMOTE_WRITE,
		    KEY);
}

static void teardown(void)
{
	cr_expect_eq(fi_close(&mr->fid), 0);
	pair_close(&p);
}

TestSuite(atomic_fi, .init = setup, .fini = teardown, .timeout = 120);

enum kind { PLAIN, FETCH, COMPARE };

/* ---- the expected matrix (fi_atomic(3), libfabric 1.17's util) ---------- */

enum tclass { SINT, UINT, REAL, CPLX };

static enum tclass tclass(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT8: case FI_INT16: case FI_INT32: case FI_INT64:
		return SINT;
	case FI_UINT8: case FI_UINT16: case FI_UINT32: case FI_UINT64:
		return UINT;
	case FI_FLOAT: case FI_DOUBLE: case FI_LONG_DOUBLE:
		return REAL;
	default:
		return CPLX;
	}
}

static bool expect_valid(enum kind k, enum fi_op op, enum fi_datatype dt)
{
	enum tclass c = tclass(dt);
	bool integer = c == SINT || c == UINT;

	if (dt >= FI_DATATYPE_LAST)
		return false;
	switch (op) {
	case FI_MIN: case FI_MAX:
		return k != COMPARE && c != CPLX;
	case FI_SUM: case FI_PROD: case FI_LOR: case FI_LAND: case FI_LXOR:
	case FI_ATOMIC_WRITE:
		return k != COMPARE;
	case FI_BOR: case FI_BAND: case FI_BXOR:
		return k != COMPARE && integer;
	case FI_ATOMIC_READ:
		return k == FETCH;
	case FI_CSWAP: case FI_CSWAP_NE:
		return k == COMPARE;
	case FI_CSWAP_LE: case FI_CSWAP_LT: case FI_CSWAP_GE: case FI_CSWAP_GT:
		return k == COMPARE && c != CPLX;
	case FI_MSWAP:
		return k == COMPARE && integer;
	default:
		return false;
	}
}

/* ---- the reference ------------------------------------------------------- */

/* Integers: unsigned arithmetic so signed SUM/PROD wrap without UB. */
#define REF_INT(name, T, UT)						\
static void name(enum fi_op op, T *t, const T *o, const T *c, size_t n)	\
{									\
	size_t i;							\
	for (i = 0; i < n; i++) {					\
		switch (op) {						\
		case FI_MIN: if (o[i] < t[i]) t[i] = o[i]; break;	\
		case FI_MAX: if (o[i] > t[i]) t[i] = o[i]; break;	\
		case FI_SUM: t[i] = (T)((UT)t[i] + (UT)o[i]); break;	\
		case FI_PROD: t[i] = (T)((UT)t[i] * (UT)o[i]); break;	\
		case FI_LOR: t[i] = (T)(t[i] || o[i]); break;		\
		case FI_LAND: t[i] = (T)(t[i] && o[i]); break;		\
		case FI_LXOR: t[i] = (T)(!t[i] != !o[i]); break;	\
		case FI_BOR: t[i] = (T)(t[i] | o[i]); break;		\
		case FI_BAND: t[i] = (T)(t[i] & o[i]); break;		\
		case FI_BXOR: t[i] = (T)(t[i] ^ o[i]); break;		\
		case FI_ATOMIC_WRITE: t[i] = o[i]; break;		\
		case FI_ATOMIC_READ: break;				\
		case FI_CSWAP: if (c[i] == t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_NE: if (c[i] != t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_LE: if (c[i] <= t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_LT: if (c[i] < t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_GE: if (c[i] >= t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_GT: if (c[i] > t[i]) t[i] = o[i]; break;	\
		case FI_MSWAP:						\
			t[i] = (T)((o[i] & c[i]) | (t[i] & ~c[i]));	\
			break;						\
		default: cr_assert_fail("op %d", op);			\
		}							\
	}								\
}

#define REF_REAL(name, T)						\
static void name(enum fi_op op, T *t, const T *o, const T *c, size_t n)	\
{									\
	size_t i;							\
	for (i = 0; i < n; i++) {					\
		switch (op) {						\
		case FI_MIN: if (o[i] < t[i]) t[i] = o[i]; break;	\
		case FI_MAX: if (o[i] > t[i]) t[i] = o[i]; break;	\
		case FI_SUM: t[i] = t[i] + o[i]; break;			\
		case FI_PROD: t[i] = t[i] * o[i]; break;		\
		case FI_LOR: t[i] = (T)(t[i] != 0 || o[i] != 0); break;	\
		case FI_LAND: t[i] = (T)(t[i] != 0 && o[i] != 0); break; \
		case FI_LXOR: t[i] = (T)((t[i] != 0) != (o[i] != 0)); break; \
		case FI_ATOMIC_WRITE: t[i] = o[i]; break;		\
		case FI_ATOMIC_READ: break;				\
		case FI_CSWAP: if (c[i] == t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_NE: if (c[i] != t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_LE: if (c[i] <= t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_LT: if (c[i] < t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_GE: if (c[i] >= t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_GT: if (c[i] > t[i]) t[i] = o[i]; break;	\
		default: cr_assert_fail("op %d", op);			\
		}							\
	}								\
}

#define REF_CPLX(name, T)						\
static void name(enum fi_op op, T *t, const T *o, const T *c, size_t n)	\
{									\
	size_t i;							\
	for (i = 0; i < n; i++) {					\
		switch (op) {						\
		case FI_SUM: t[i] = t[i] + o[i]; break;			\
		case FI_PROD: t[i] = t[i] * o[i]; break;		\
		case FI_LOR: t[i] = (T)(t[i] != 0 || o[i] != 0); break;	\
		case FI_LAND: t[i] = (T)(t[i] != 0 && o[i] != 0); break; \
		case FI_LXOR: t[i] = (T)((t[i] != 0) != (o[i] != 0)); break; \
		case FI_ATOMIC_WRITE: t[i] = o[i]; break;		\
		case FI_ATOMIC_READ: break;				\
		case FI_CSWAP: if (c[i] == t[i]) t[i] = o[i]; break;	\
		case FI_CSWAP_NE: if (c[i] != t[i]) t[i] = o[i]; break;	\
		default: cr_assert_fail("op %d", op);			\
		}							\
	}								\
}

REF_INT(ref_i8, int8_t, uint8_t)
REF_INT(ref_u8, uint8_t, uint8_t)
REF_INT(ref_i16, int16_t, uint16_t)
REF_INT(ref_u16, uint16_t, uint16_t)
REF_INT(ref_i32, int32_t, uint32_t)
REF_INT(ref_u32, uint32_t, uint32_t)
REF_INT(ref_i64, int64_t, uint64_t)
REF_INT(ref_u64, uint64_t, uint64_t)
REF_REAL(ref_f, float)
REF_REAL(ref_d, double)
REF_REAL(ref_ld, long double)
REF_CPLX(ref_fc, float complex)
REF_CPLX(ref_dc, double complex)
REF_CPLX(ref_ldc, long double complex)

/* Per datatype: element size, bytes of value (long double pads), the
 * reference, and a value generator. */
struct dtinfo {
	size_t size, value;
	void (*ref)(enum fi_op, void *, const void *, const void *, size_t);
};

#define DT(fn, T, v) { sizeof(T), v, (void (*)(enum fi_op, void *,	\
			const void *, const void *, size_t))fn }

static const struct dtinfo dts[FI_DATATYPE_LAST] = {
	[FI_INT8] = DT(ref_i8, int8_t, 1),
	[FI_UINT8] = DT(ref_u8, uint8_t, 1),
	[FI_INT16] = DT(ref_i16, int16_t, 2),
	[FI_UINT16] = DT(ref_u16, uint16_t, 2),
	[FI_INT32] = DT(ref_i32, int32_t, 4),
	[FI_UINT32] = DT(ref_u32, uint32_t, 4),
	[FI_INT64] = DT(ref_i64, int64_t, 8),
	[FI_UINT64] = DT(ref_u64, uint64_t, 8),
	[FI_FLOAT] = DT(ref_f, float, 4),
	[FI_DOUBLE] = DT(ref_d, double, 8),
	[FI_FLOAT_COMPLEX] = DT(ref_fc, float complex, 8),
	[FI_DOUBLE_COMPLEX] = DT(ref_dc, double complex, 16),
	[FI_LONG_DOUBLE] = DT(ref_ld, long double, 10),
	[FI_LONG_DOUBLE_COMPLEX] = DT(ref_ldc, long double complex, 10),
};

/* Small values with a mix of equal, smaller, larger, zero and negative. */
static const int tv[N] = { 5, -3, 0, 12 };
static const int ov[N] = { 2, 7, 9, -12 };
static const int cv[N] = { 5, 1, 0, 13 };

static void gen(enum fi_datatype dt, const int *v, void *buf)
{
	size_t i;

	memset(buf, 0, dts[dt].size * N);
	for (i = 0; i < N; i++) {
		switch (dt) {
#define G(D, T) case D: ((T *)buf)[i] = (T)v[i]; break;
		G(FI_INT8, int8_t) G(FI_UINT8, uint8_t)
		G(FI_INT16, int16_t) G(FI_UINT16, uint16_t)
		G(FI_INT32, int32_t) G(FI_UINT32, uint32_t)
		G(FI_INT64, int64_t) G(FI_UINT64, uint64_t)
		G(FI_FLOAT, float) G(FI_DOUBLE, double)
		G(FI_LONG_DOUBLE, long double)
#undef G
		case FI_FLOAT_COMPLEX:
			((float complex *)buf)[i] = v[i] + 0.5f * v[i] * I;
			break;
		case FI_DOUBLE_COMPLEX:
			((double complex *)buf)[i] = v[i] - 0.25 * v[i] * I;
			break;
		case FI_LONG_DOUBLE_COMPLEX:
			((long double complex *)buf)[i] = v[i] + 2.0L * I;
			break;
		default:
			break;
		}
	}
}

/* Equal value bytes (long double: 10 bytes per real part). */
static bool same(enum fi_datatype dt, const void *a, const void *b)
{
	size_t i, parts = dt == FI_LONG_DOUBLE_COMPLEX ? 2 : 1;
	size_t part = dts[dt].size / parts;

	for (i = 0; i < N * parts; i++)
		if (memcmp((const uint8_t *)a + i * part,
			   (const uint8_t *)b + i * part, dts[dt].value))
			return false;
	return true;
}

/* ---- one operation, waited for ----------------------------------------- */

static ssize_t post(enum kind k, enum fi_op op, enum fi_datatype dt,
		    size_t count, void *opnd, void *cmp, void *res,
		    uint64_t raddr, uint64_t key, void *ctx)
{
	switch (k) {
	case PLAIN:
		return fi_atomic(p.s[0].ep, opnd, count, NULL, p.s[0].peer,
				 raddr, key, dt, op, ctx);
	case FETCH:
		return fi_fetch_atomic(p.s[0].ep, opnd, count, NULL, res, NULL,
				       p.s[0].peer, raddr, key, dt, op, ctx);
	default:
		return fi_compare_atomic(p.s[0].ep, opnd, count, NULL, cmp,
					 NULL, res, NULL, p.s[0].peer, raddr,
					 key, dt, op, ctx);
	}
}

static uint64_t kind_flags(enum kind k)
{
	return FI_ATOMIC | (k == PLAIN ? FI_WRITE : FI_READ);
}

static void wait_ok(void *ctx, uint64_t flags)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	ssize_t ret = pair_read(&p, 0, &e, &err);

	cr_assert_eq(ret, 1, "completion %zd: %s", ret,
		     ret == -FI_EAVAIL ? fi_strerror(err.err) : "");
	cr_expect_eq(e.op_context, ctx);
	cr_expect_eq(e.flags, flags);
}

static int wait_err(void *ctx)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	cr_assert_eq(pair_read(&p, 0, &e, &err), -FI_EAVAIL);
	cr_expect_eq(err.op_context, ctx);
	return err.err;
}

static int validfn(enum kind k, enum fi_datatype dt, enum fi_op op,
		   size_t *count)
{
	switch (k) {
	case PLAIN:
		return fi_atomicvalid(p.s[0].ep, dt, op, count);
	case FETCH:
		return fi_fetch_atomicvalid(p.s[0].ep, dt, op, count);
	default:
		return fi_compare_atomicvalid(p.s[0].ep, dt, op, count);
	}
}

/* Every op x datatype of one kind against the reference. */
static void matrix(enum kind k)
{
	static uint8_t opnd[N * 32], cmp[N * 32], res[N * 32];
	static uint8_t want[N * 32], old[N * 32];
	int op, dt, checked = 0, ctx;
	size_t count;

	for (op = 0; op < FI_ATOMIC_OP_LAST; op++) {
		for (dt = 0; dt <= FI_UINT128; dt++) {
			bool valid = expect_valid(k, op, dt);
			int ret = validfn(k, dt, op, &count);

			cr_expect_eq(ret, valid ? 0 : -FI_EOPNOTSUPP,
				     "kind %d op %d type %d: %d", k, op, dt,
				     ret);
			if (!valid) {
				cr_expect_eq(post(k, op, dt, 1, opnd, cmp, res,
						  0, KEY, NULL),
					     -FI_EOPNOTSUPP,
					     "kind %d op %d type %d", k, op,
					     dt);
				continue;
			}
			cr_expect_geq(count, N);
			gen(dt, tv, tgt);
			gen(dt, tv, want);
			gen(dt, tv, old);
			gen(dt, ov, opnd);
			gen(dt, cv, cmp);
			memset(res, 0xa5, sizeof(res));
			dts[dt].ref(op, want, opnd, cmp, N);
			cr_assert_eq(post(k, op, dt, N, opnd, cmp, res, 0, KEY,
					  &ctx), 0, "kind %d op %d type %d",
				     k, op, dt);
			wait_ok(&ctx, kind_flags(k));
			cr_expect(same(dt, tgt, want),
				  "target: kind %d op %d type %d", k, op, dt);
			if (k != PLAIN)
				cr_expect(same(dt, res, old),
					  "fetched: kind %d op %d type %d", k,
					  op, dt);
			checked++;
		}
	}
	cr_expect_gt(checked, 0);
}

Test(atomic_fi, every_plain_op_and_type)
{
	matrix(PLAIN);
}

Test(atomic_fi, every_fetch_op_and_type)
{
	matrix(FETCH);
}

Test(atomic_fi, every_compare_op_and_type)
{
	matrix(COMPARE);
}

Test(atomic_fi, query_atomic_agrees)
{
	struct fi_atomic_attr attr;
	size_t count;
	int op, dt;

	for (op = 0; op < FI_ATOMIC_OP_LAST; op++) {
		for (dt = 0; dt <= FI_UINT128; dt++) {
			int ret = fi_query_atomic(p.env.domain, dt, op, &attr,
						  FI_FETCH_ATOMIC);

			cr_expect_eq(ret, expect_valid(FETCH, op, dt) ? 0 :
				     -FI_EOPNOTSUPP, "op %d type %d", op, dt);
			if (ret)
				continue;
			cr_expect_eq(attr.size, dts[dt].size);
			cr_expect_eq(fi_fetch_atomicvalid(p.s[0].ep, dt, op,
							  &count), 0);
			cr_expect_eq(attr.count, count);
		}
	}
	cr_expect_eq(fi_query_atomic(p.env.domain, FI_INT64, FI_CSWAP, &attr,
				     FI_COMPARE_ATOMIC), 0);
	cr_expect_eq(fi_query_atomic(p.env.domain, FI_INT64, FI_CSWAP, &attr,
				     0), -FI_EOPNOTSUPP);
	cr_expect_eq(fi_query_atomic(p.env.domain, FI_INT128, FI_SUM, &attr,
				     0), -FI_EOPNOTSUPP);
}

/* ---- forms, limits, semantics ------------------------------------------- */

Test(atomic_fi, vector_msg_and_inject_forms)
{
	uint64_t a[2] = { 1, 2 }, b[3] = { 10, 20, 30 }, r[5], c[5];
	uint64_t *t = (uint64_t *)tgt;
	struct fi_ioc iov[2] = { { a, 2 }, { b, 3 } };
	struct fi_ioc riov = { r, 5 }, ciov = { c, 5 };
	struct fi_rma_ioc rma = { .addr = 0, .count = 5, .key = KEY };
	struct fi_msg_atomic msg = {
		.msg_iov = iov, .iov_count = 2, .addr = p.s[0].peer,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = FI_UINT64,
		.op = FI_SUM,
	};
	int ctx, i;

	cr_assert_eq(fi_atomicv(p.s[0].ep, iov, NULL, 2, p.s[0].peer, 0, KEY,
				FI_UINT64, FI_SUM, &ctx), 0);
	wait_ok(&ctx, FI_ATOMIC | FI_WRITE);
	cr_expect(t[0] == 1 && t[1] == 2 && t[2] == 10 && t[3] == 20 &&
		  t[4] == 30);
	msg.context = &ctx;
	cr_assert_eq(fi_atomicmsg(p.s[0].ep, &msg, FI_COMPLETION), 0);
	wait_ok(&ctx, FI_ATOMIC | FI_WRITE);
	cr_expect(t[0] == 2 && t[4] == 60);
	cr_assert_eq(fi_fetch_atomicmsg(p.s[0].ep, &msg, &riov, NULL, 1, 0),
		     0);
	wait_ok(&ctx, FI_ATOMIC | FI_READ);
	cr_expect(r[0] == 2 && r[4] == 60 && t[0] == 3 && t[4] == 90);
	cr_assert_eq(fi_fetch_atomicv(p.s[0].ep, iov, NULL, 2, &riov, NULL, 1,
				      p.s[0].peer, 0, KEY, FI_UINT64,
				      FI_ATOMIC_READ, &ctx), 0);
	wait_ok(&ctx, FI_ATOMIC | FI_READ);
	cr_expect(r[0] == 3 && r[4] == 90 && t[0] == 3);
	for (i = 0; i < 5; i++)
		c[i] = t[i];
	c[1] = 0;	/* no swap there */
	msg.op = FI_CSWAP;
	cr_assert_eq(fi_compare_atomicmsg(p.s[0].ep, &msg, &ciov, NULL, 1,
					  &riov, NULL, 1, 0), 0);
	wait_ok(&ctx, FI_ATOMIC | FI_READ);
	cr_expect(t[0] == 1 && t[1] == 6 && t[2] == 10 && t[4] == 30);
	cr_assert_eq(fi_compare_atomicv(p.s[0].ep, iov, NULL, 2, &ciov, NULL,
					1, &riov, NULL, 1, p.s[0].peer, 0, KEY,
					FI_UINT64, FI_CSWAP_NE, &ctx), 0);
	wait_ok(&ctx, FI_ATOMIC | FI_READ);
	/* c differs from t everywhere now: every element swaps */
	cr_expect_eq(t[1], 2);

	/* inject: no completion, the counter counts */
	a[0] = 100;
	cr_assert_eq(fi_inject_atomic(p.s[0].ep, a, 1, p.s[0].peer, 0, KEY,
				      FI_UINT64, FI_ATOMIC_WRITE), 0);
	a[0] = 0;
	rp_wait_cntr(&p, p.s[0].tx_cntr, 7, false);
	cr_expect_eq(t[0], 100);
	pair_quiet(&p, 0);
	/* a result buffer of two pieces is refused, not scattered */
	{
		struct fi_ioc two[2] = { { r, 2 }, { r + 2, 3 } };

		msg.op = FI_SUM;
		cr_expect_eq(fi_fetch_atomicmsg(p.s[0].ep, &msg, two, NULL, 2,
						0), -FI_EINVAL);
	}
}

Test(atomic_fi, count_limits_are_honest)
{
	static uint64_t big[1 << 17], res[1 << 17];
	size_t count;
	int ctx;

	cr_assert_eq(fi_atomicvalid(p.s[0].ep, FI_UINT64, FI_SUM, &count), 0);
	cr_assert_leq(count * 8, sizeof(tgt));
	cr_assert_eq(fi_atomic(p.s[0].ep, big, count, NULL, p.s[0].peer, 0,
			       KEY, FI_UINT64, FI_SUM, &ctx), 0);
	wait_ok(&ctx, FI_ATOMIC | FI_WRITE);
	cr_expect_neq(fi_atomic(p.s[0].ep, big, count + 1, NULL, p.s[0].peer,
				0, KEY, FI_UINT64, FI_SUM, &ctx), 0);
	cr_assert_eq(fi_fetch_atomicvalid(p.s[0].ep, FI_UINT64, FI_SUM,
					  &count), 0);
	cr_assert_eq(fi_fetch_atomic(p.s[0].ep, big, count, NULL, res, NULL,
				     p.s[0].peer, 0, KEY, FI_UINT64, FI_SUM,
				     &ctx), 0);
	wait_ok(&ctx, FI_ATOMIC | FI_READ);
	cr_expect_neq(fi_fetch_atomic(p.s[0].ep, big, count + 1, NULL, res,
				      NULL, p.s[0].peer, 0, KEY, FI_UINT64,
				      FI_SUM, &ctx), 0);
	cr_assert_eq(fi_compare_atomicvalid(p.s[0].ep, FI_UINT64, FI_CSWAP,
					    &count), 0);
	cr_assert_eq(fi_compare_atomic(p.s[0].ep, big, count, NULL, big, NULL,
				       res, NULL, p.s[0].peer, 0, KEY,
				       FI_UINT64, FI_CSWAP, &ctx), 0);
	wait_ok(&ctx, FI_ATOMIC | FI_READ);
	cr_expect_neq(fi_compare_atomic(p.s[0].ep, big, count + 1, NULL, big,
					NULL, res, NULL, p.s[0].peer, 0, KEY,
					FI_UINT64, FI_CSWAP, &ctx), 0);
	/* 128-bit integers: not supported, said so */
	cr_expect_eq(fi_atomicvalid(p.s[0].ep, FI_INT128, FI_SUM, &count),
		     -FI_EOPNOTSUPP);
	cr_expect_eq(fi_atomic(p.s[0].ep, big, 1, NULL, p.s[0].peer, 0, KEY,
			       FI_UINT128, FI_SUM, NULL), -FI_EOPNOTSUPP);
	cr_expect_eq(fi_atomic(p.s[0].ep, big, 0, NULL, p.s[0].peer, 0, KEY,
			       FI_UINT64, FI_SUM, NULL), -FI_EINVAL);
	pair_quiet(&p, 0);
}

Test(atomic_fi, atomic_read_keeps_negative_zero)
{
	double *t = (double *)tgt, r = 1.0, dummy = 0;
	int ctx;

	*t = -0.0;
	cr_assert_eq(fi_fetch_atomic(p.s[0].ep, &dummy, 1, NULL, &r, NULL,
				     p.s[0].peer, 0, KEY, FI_DOUBLE,
				     FI_ATOMIC_READ, &ctx), 0);
	wait_ok(&ctx, FI_ATOMIC | FI_READ);
	cr_expect(r == 0.0 && signbit(r), "got %g", r);
	cr_expect(signbit(*t));
}

Test(atomic_fi, atomics_are_ordered)
{
	uint64_t *t = (uint64_t *)tgt, v, r = 0, dummy = 0;
	int c[3];

	/* posted back to back, no completion waited for in between:
	 * FI_ORDER_ATOMIC_RAW / WAW / WAR */
	v = 5;
	cr_assert_eq(fi_atomic(p.s[0].ep, &v, 1, NULL, p.s[0].peer, 0, KEY,
			       FI_UINT64, FI_ATOMIC_WRITE, &c[0]), 0);
	cr_assert_eq(fi_fetch_atomic(p.s[0].ep, &dummy, 1, NULL, &r, NULL,
				     p.s[0].peer, 0, KEY, FI_UINT64,
				     FI_ATOMIC_READ, &c[1]), 0);
	cr_assert_eq(fi_atomic(p.s[0].ep, &v, 1, NULL, p.s[0].peer, 0, KEY,
			       FI_UINT64, FI_PROD, &c[2]), 0);
	wait_ok(&c[0], FI_ATOMIC | FI_WRITE);
	wait_ok(&c[1], FI_ATOMIC | FI_READ);
	wait_ok(&c[2], FI_ATOMIC | FI_WRITE);
	cr_expect_eq(r, 5);
	cr_expect_eq(*t, 25);
}

Test(atomic_fi, concurrent_initiators)
{
	uint64_t one = 1, *t = (uint64_t *)tgt;
	int i, side;

	/* side 1 targets its own MR while side 0 does: both go through the
	 * target's engine one message at a time */
	for (i = 0; i < 200; i++) {
		for (side = 0; side < 2; side++) {
			fi_addr_t to = side ? p.s[1].self : p.s[1].peer;
			struct fid_ep *ep = p.s[side].ep;

			cr_assert_eq(fi_atomic(ep, &one, 1, NULL,
					       side ? to : p.s[0].peer, 0,
					       KEY, FI_UINT64, FI_SUM, NULL),
				     0);
		}
		cr_assert_eq(pair_read(&p, 0, &(struct fi_cq_tagged_entry){0},
				       NULL), 1);
		cr_assert_eq(pair_read(&p, 1, &(struct fi_cq_tagged_entry){0},
				       NULL), 1);
	}
	cr_expect_eq(*t, 400);
}

Test(atomic_fi, access_errors)
{
	struct fid_mr *ro;
	uint64_t v = 7, r = 0;
	uint64_t *t = (uint64_t *)tgt;
	int ctx;

	cr_assert_eq(fi_mr_reg(p.env.domain, tgt + 4096, 64, FI_REMOTE_READ,
			       0, KEY + 1, 0, &ro, NULL), 0);
	t[0] = 1;
	/* bad key, outside the MR, a write to a read-only MR */
	cr_assert_eq(fi_atomic(p.s[0].ep, &v, 1, NULL, p.s[0].peer, 0,
			       KEY + 9, FI_UINT64, FI_SUM, &ctx), 0);
	cr_expect_eq(wait_err(&ctx), FI_EACCES);
	cr_assert_eq(fi_fetch_atomic(p.s[0].ep, &v, 1, NULL, &r, NULL,
				     p.s[0].peer, sizeof(tgt) - 4, KEY,
				     FI_UINT64, FI_SUM, &ctx), 0);
	cr_expect_eq(wait_err(&ctx), FI_EINVAL);
	cr_assert_eq(fi_atomic(p.s[0].ep, &v, 1, NULL, p.s[0].peer, 0,
			       KEY + 1, FI_UINT64, FI_SUM, &ctx), 0);
	cr_expect_eq(wait_err(&ctx), FI_EACCES);
	/* a fetch needs read and write rights */
	cr_assert_eq(fi_compare_atomic(p.s[0].ep, &v, 1, NULL, &v, NULL, &r,
				       NULL, p.s[0].peer, 0, KEY + 1,
				       FI_UINT64, FI_CSWAP, &ctx), 0);
	cr_expect_eq(wait_err(&ctx), FI_EACCES);
	cr_expect_eq(t[0], 1);
	cr_expect_eq(r, 0);
	cr_expect_eq(tgt[4096], 0);
	rp_progress(&p);
	cr_expect_eq(fi_cntr_readerr(p.s[0].tx_cntr), 4);
	cr_assert_eq(fi_close(&ro->fid), 0);
}
