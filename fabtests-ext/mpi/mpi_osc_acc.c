/*
 * mpi_osc_acc.c - active-target accumulate: MPI_Accumulate and
 * MPI_Get_accumulate between MPI_Win_fence calls, every rank onto every
 * rank (itself included), with results that do not depend on the order in
 * which the targets apply the origins' contributions.
 *
 * Window (disp_unit 1): A, NA int64; B, NA int32; D, NA doubles; G, one
 * int64 per origin rank. Each epoch starts from values the target stores
 * locally before the opening fence, and each target checks every element
 * after the closing fence:
 *  sum64    MPI_SUM of (r+1)*(i+1)+t from every rank r onto A[i] of t;
 *  max32    MPI_MAX onto B of values that differ per origin and element;
 *  sumd     MPI_SUM of doubles that are multiples of 1/4 (exact in any
 *           order) onto D;
 *  replace  MPI_REPLACE: rank r replaces the elements i % n == r of A;
 *  strided  MPI_SUM onto every other element of A (a vector target type):
 *           the elements between must keep their value;
 *  getacc   MPI_Get_accumulate (MPI_SUM) onto G[r] (each origin its own
 *           element, so the fetched old value is known), then MPI_NO_OP
 *           Get_accumulate reads back the sum; both fetched values checked.
 *
 *   mpi_osc_acc [-w allocate|create|both]
 */
#include <stddef.h>

#include "mpi_common.h"

#define NA	512

struct oa_win {
	int64_t a[NA];
	int32_t b[NA];
	double d[NA];
	int64_t g[];		/* one per rank */
};

#define OA_OFF(field)	((MPI_Aint)offsetof(struct oa_win, field))

static int64_t oa_init64(int t, int i)
{
	return (int64_t)t * 1000003 + i;
}

static int32_t oa_max_val(int r, int i)
{
	return (int32_t)((r * 7919 + i * 31) % 1009) - 500;
}

static void oa_fence(MPI_Win win, const char *what)
{
	mt_stage("fence: %s", what);
	MT_CALL(MPI_Win_fence(0, win));
}

static void oa_epochs(unsigned int flavor, struct oa_win *w, MPI_Win win)
{
	const char *fl = mt_flavor_name(flavor);
	int n = mt_nranks, me = mt_rank, t, r, i;
	int64_t *src64 = mt_malloc((size_t)n * NA * sizeof(int64_t));
	int32_t *src32 = mt_malloc((size_t)n * NA * sizeof(int32_t));
	double *srcd = mt_malloc((size_t)n * NA * sizeof(double));
	int64_t *fetched = mt_malloc((size_t)n * 2 * sizeof(int64_t));
	int64_t one = 1, dummy = 0;
	MPI_Datatype every_other;

	/* sum64, max32, sumd in one epoch: different elements, different
	 * types, so the epochs' contributions cannot mix */
	for (i = 0; i < NA; i++) {
		w->a[i] = oa_init64(me, i);
		w->b[i] = oa_max_val(n, i);	/* below or above some */
		w->d[i] = 0.25 * me;
	}
	oa_fence(win, "opening sum64/max32/sumd");
	for (t = 0; t < n; t++) {
		int64_t *s64 = src64 + (size_t)t * NA;
		int32_t *s32 = src32 + (size_t)t * NA;
		double *sd = srcd + (size_t)t * NA;

		for (i = 0; i < NA; i++) {
			s64[i] = (int64_t)(me + 1) * (i + 1) + t;
			s32[i] = oa_max_val(me, i);
			sd[i] = 0.25 * (me + 1) + 0.5 * i;
		}
		MT_CALL(MPI_Accumulate(s64, NA, MPI_INT64_T, t, OA_OFF(a), NA,
				       MPI_INT64_T, MPI_SUM, win));
		MT_CALL(MPI_Accumulate(s32, NA, MPI_INT32_T, t, OA_OFF(b), NA,
				       MPI_INT32_T, MPI_MAX, win));
		MT_CALL(MPI_Accumulate(sd, NA, MPI_DOUBLE, t, OA_OFF(d), NA,
				       MPI_DOUBLE, MPI_SUM, win));
	}
	oa_fence(win, "closing sum64/max32/sumd");
	for (i = 0; i < NA; i++) {
		int64_t want64 = oa_init64(me, i);
		int32_t want32 = oa_max_val(n, i);
		double wantd = 0.25 * me;

		for (r = 0; r < n; r++) {
			int32_t v = oa_max_val(r, i);

			want64 += (int64_t)(r + 1) * (i + 1) + me;
			if (v > want32)
				want32 = v;
			wantd += 0.25 * (r + 1) + 0.5 * i;
		}
		MT_CHECK(w->a[i] == want64, "%s: sum64: A[%d] = %lld, "
			 "expected %lld", fl, i, (long long)w->a[i],
			 (long long)want64);
		MT_CHECK(w->b[i] == want32, "%s: max32: B[%d] = %d, "
			 "expected %d", fl, i, w->b[i], want32);
		MT_CHECK(w->d[i] == wantd, "%s: sumd: D[%d] = %.17g, "
			 "expected %.17g", fl, i, w->d[i], wantd);
	}

	/* replace: rank r owns the elements i % n == r on every target */
	for (i = 0; i < NA; i++)
		w->a[i] = -1;
	oa_fence(win, "opening replace");
	for (t = 0; t < n; t++) {
		int64_t *s64 = src64 + (size_t)t * NA;

		for (i = me; i < NA; i += n) {
			s64[i] = oa_init64(me, i) ^ ((int64_t)t << 40);
			MT_CALL(MPI_Accumulate(&s64[i], 1, MPI_INT64_T, t,
					       OA_OFF(a) + i * 8, 1,
					       MPI_INT64_T, MPI_REPLACE, win));
		}
	}
	oa_fence(win, "closing replace");
	for (i = 0; i < NA; i++) {
		int64_t want = oa_init64(i % n, i) ^ ((int64_t)me << 40);

		MT_CHECK(w->a[i] == want, "%s: replace: A[%d] = %lld, "
			 "expected %lld (from rank %d)", fl, i,
			 (long long)w->a[i], (long long)want, i % n);
	}

	/* strided: SUM onto the even elements only */
	MT_CALL(MPI_Type_vector(NA / 2, 1, 2, MPI_INT64_T, &every_other));
	MT_CALL(MPI_Type_commit(&every_other));
	for (i = 0; i < NA; i++)
		w->a[i] = oa_init64(me, i);
	oa_fence(win, "opening strided");
	for (t = 0; t < n; t++) {
		int64_t *s64 = src64 + (size_t)t * NA;

		for (i = 0; i < NA / 2; i++)
			s64[i] = (int64_t)(me + 1) << (i % 20);
		MT_CALL(MPI_Accumulate(s64, NA / 2, MPI_INT64_T, t, OA_OFF(a),
				       1, every_other, MPI_SUM, win));
	}
	oa_fence(win, "closing strided");
	for (i = 0; i < NA; i++) {
		int64_t want = oa_init64(me, i);

		if (i % 2 == 0)
			for (r = 0; r < n; r++)
				want += (int64_t)(r + 1) << ((i / 2) % 20);
		MT_CHECK(w->a[i] == want, "%s: strided: A[%d] = %lld, "
			 "expected %lld%s", fl, i, (long long)w->a[i],
			 (long long)want,
			 i % 2 ? " (an element between the blocks)" : "");
	}
	MT_CALL(MPI_Type_free(&every_other));

	/* getacc: G[me] on t is mine alone */
	for (r = 0; r < n; r++)
		w->g[r] = oa_init64(me, r);
	oa_fence(win, "opening getacc");
	for (t = 0; t < n; t++) {
		fetched[2 * t] = -7;
		MT_CALL(MPI_Get_accumulate(&one, 1, MPI_INT64_T,
					   &fetched[2 * t], 1, MPI_INT64_T, t,
					   OA_OFF(g) + me * 8, 1, MPI_INT64_T,
					   MPI_SUM, win));
	}
	oa_fence(win, "closing getacc SUM");
	for (t = 0; t < n; t++) {
		fetched[2 * t + 1] = -7;
		MT_CALL(MPI_Get_accumulate(&dummy, 1, MPI_INT64_T,
					   &fetched[2 * t + 1], 1, MPI_INT64_T,
					   t, OA_OFF(g) + me * 8, 1,
					   MPI_INT64_T, MPI_NO_OP, win));
	}
	oa_fence(win, "closing getacc NO_OP");
	for (t = 0; t < n; t++) {
		MT_CHECK(fetched[2 * t] == oa_init64(t, me),
			 "%s: getacc: SUM on rank %d fetched %lld, expected "
			 "%lld", fl, t, (long long)fetched[2 * t],
			 (long long)oa_init64(t, me));
		MT_CHECK(fetched[2 * t + 1] == oa_init64(t, me) + 1,
			 "%s: getacc: NO_OP on rank %d fetched %lld, "
			 "expected %lld", fl, t, (long long)fetched[2 * t + 1],
			 (long long)oa_init64(t, me) + 1);
	}
	for (r = 0; r < n; r++)
		MT_CHECK(w->g[r] == oa_init64(me, r) + 1,
			 "%s: getacc: G[%d] = %lld, expected %lld", fl, r,
			 (long long)w->g[r], (long long)oa_init64(me, r) + 1);

	free(src64);
	free(src32);
	free(srcd);
	free(fetched);
}

int main(int argc, char **argv)
{
	unsigned int flavors = MT_WIN_ALLOCATE | MT_WIN_CREATE, flavor;
	int opt;

	mt_init(&argc, &argv, "mpi_osc_acc", 60);
	while ((opt = getopt(argc, argv, "w:")) != -1) {
		if (opt == 'w')
			flavors = mt_flavors_parse(optarg);
		else
			MT_FAIL("usage: mpi_osc_acc [-w allocate|create|both]");
	}

	for (flavor = MT_WIN_ALLOCATE; flavor <= MT_WIN_CREATE; flavor <<= 1) {
		size_t size = sizeof(struct oa_win) +
			      (size_t)mt_nranks * sizeof(int64_t);
		struct oa_win *w;
		MPI_Win win;

		if (!(flavors & flavor))
			continue;
		w = mt_win_open(flavor, size, 1, &win);
		oa_epochs(flavor, w, win);
		mt_stage("%s: last fence", mt_flavor_name(flavor));
		MT_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
		mt_win_close(flavor, w, &win);
	}
	return mt_finish();
}
