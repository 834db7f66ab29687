/*
 * mpi_osc_atomic.c - passive-target atomics: MPI_Fetch_and_op and
 * MPI_Compare_and_swap under MPI_Win_lock (shared and exclusive), from
 * every rank onto every rank (itself included), checked through what the
 * operations return, not only through the final values.
 *
 * Window (disp_unit 8): ctr, swap, cas_ctr (int64), ctr32 and cas32
 * (int32 pairs packed in one int64 slot each), then NS CAS slots.
 *  fop     K MPI_Fetch_and_op(+1) per target under a shared lock, with
 *          MPI_Win_flush after each: one origin's fetched values rise
 *          strictly, and the values fetched by all origins from one target
 *          are exactly 0 .. n*K-1, each once (an atomic that lost or
 *          repeated an update shows here); the same in 32 bits on ctr32;
 *  swap    MPI_REPLACE fetch-and-op of the origin's rank, once per target
 *          under an exclusive lock: the values fetched plus the final one
 *          are -1, 0 .. n-1, each once;
 *  cas     every rank tries CAS(-1 -> me) on every slot (slot j lives on
 *          rank j % n; shared lock for even j, exclusive for odd): each
 *          slot has exactly one winner (fetched -1), its final value is the
 *          winner, every loser fetched the winner; a CAS whose compare
 *          value never matches changes nothing and fetches the winner;
 *  casinc  KC increments of cas_ctr (64 bit) and cas32 (32 bit) per
 *          target by read (MPI_NO_OP fetch-and-op) and CAS retry: the old
 *          values of the successful CASes over all origins are exactly
 *          0 .. n*KC-1.
 * Each target finally reads its own counters under an exclusive lock on
 * itself and checks them.
 *
 * -r: no rank targets itself (at least 2 ranks). Open MPI 4.1.4's osc
 * rdma crashes on an MPI_Compare_and_swap whose target memory is local
 * (see docs/openmpi.md); with -r and MPI_Win_create windows it sends every
 * operation here through the provider's atomics. The expected values then
 * count n-1 origins per target (in the swap chain the target's own rank
 * stands in for the swap it did not make).
 *
 *   mpi_osc_atomic [-w allocate|create|both] [-k K] [-r]
 */
#include "mpi_common.h"

#define NS	64
#define KC	20

enum { OT_CTR, OT_SWAP, OT_CAS_CTR, OT_CTR32, OT_CAS32, OT_SLOTS,
	OT_WORDS = OT_SLOTS + NS };

static int ot_k = 100;
static int ot_remote_only;	/* -r */

/* Whether this rank leaves target tgt out (-r: itself). */
static int ot_skip(int tgt)
{
	return ot_remote_only && tgt == mt_rank;
}

/* How many origins operate on each target. */
static int ot_origins(void)
{
	return ot_remote_only ? mt_nranks - 1 : mt_nranks;
}

static int ot_cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* vals (count of them) must be exactly lo, lo+1, ..., lo+count-1. */
static void ot_check_perm(int64_t *vals, int count, int64_t lo,
			  const char *what, int target)
{
	int i;

	qsort(vals, (size_t)count, sizeof(*vals), ot_cmp64);
	for (i = 0; i < count; i++)
		MT_CHECK(vals[i] == lo + i, "%s on rank %d: sorted value %d "
			 "of %d is %lld, expected %lld (an update lost or "
			 "repeated)", what, target, i, count,
			 (long long)vals[i], (long long)(lo + i));
}

/* Every origin's `per` values for every target; checks each target's
 * collection is a permutation of lo .. lo+origins*per-1. */
static void ot_gather_perm(const int64_t *mine, int per, int64_t lo,
			   const char *what)
{
	int n = mt_nranks, t, r;
	int64_t *all = mt_malloc((size_t)n * n * per * sizeof(int64_t));
	int64_t *col = mt_malloc((size_t)n * per * sizeof(int64_t));

	mt_stage("%s: MPI_Allgather of the fetched values", what);
	MPI_Allgather(mine, n * per, MPI_INT64_T, all, n * per, MPI_INT64_T,
		      MPI_COMM_WORLD);
	for (t = 0; t < n; t++) {
		int c = 0;

		for (r = 0; r < n; r++) {
			if (ot_remote_only && r == t)
				continue;
			memcpy(col + (size_t)c++ * per,
			       all + ((size_t)r * n + t) * per,
			       (size_t)per * sizeof(int64_t));
		}
		ot_check_perm(col, c * per, lo, what, t);
	}
	free(all);
	free(col);
}

static void ot_fop(const char *fl, MPI_Win win)
{
	int n = mt_nranks, k = ot_k, t, i;
	int64_t *got = mt_malloc((size_t)n * k * sizeof(int64_t));
	int64_t one = 1;
	int32_t one32 = 1, got32;

	for (t = 0; t < n; t++) {
		int tgt = (mt_rank + 1 + t) % n;
		int64_t *g = got + (size_t)tgt * k;

		if (ot_skip(tgt))
			continue;

		mt_stage("%s: fop: %d fetch-and-op on rank %d", fl, k, tgt);
		MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, tgt, 0, win));
		for (i = 0; i < k; i++) {
			g[i] = -1;
			MT_CALL(MPI_Fetch_and_op(&one, &g[i], MPI_INT64_T, tgt,
						 OT_CTR, MPI_SUM, win));
			MT_CALL(MPI_Win_flush(tgt, win));
			MT_CHECK(g[i] >= 0 &&
				 g[i] < (int64_t)ot_origins() * k &&
				 (i == 0 || g[i] > g[i - 1]),
				 "%s: fop %d on rank %d fetched %lld after "
				 "%lld", fl, i, tgt, (long long)g[i],
				 (long long)(i ? g[i - 1] : -1));
		}
		MT_CALL(MPI_Win_unlock(tgt, win));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	ot_gather_perm(got, k, 0, "fop (64 bit)");

	/* 32 bit: the same counting in the low half of the ctr32 word */
	for (t = 0; t < n; t++) {
		int tgt = (mt_rank + 1 + t) % n;
		int64_t *g = got + (size_t)tgt * k;

		if (ot_skip(tgt))
			continue;

		mt_stage("%s: fop32 on rank %d", fl, tgt);
		MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, tgt, 0, win));
		for (i = 0; i < k; i++) {
			got32 = -1;
			MT_CALL(MPI_Fetch_and_op(&one32, &got32, MPI_INT32_T,
						 tgt, OT_CTR32, MPI_SUM, win));
			MT_CALL(MPI_Win_flush(tgt, win));
			g[i] = got32;
		}
		MT_CALL(MPI_Win_unlock(tgt, win));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	ot_gather_perm(got, k, 0, "fop (32 bit)");
	free(got);
}

static void ot_swap(const char *fl, MPI_Win win)
{
	int n = mt_nranks, t;
	int64_t *got = mt_malloc((size_t)n * sizeof(int64_t));
	int64_t mine = mt_rank, final = -9, dummy = 0;

	for (t = 0; t < n; t++) {
		int tgt = (mt_rank + t) % n;

		got[tgt] = tgt;	/* -r: stands in for the swap not made */
		if (ot_skip(tgt))
			continue;
		mt_stage("%s: swap on rank %d", fl, tgt);
		MT_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tgt, 0, win));
		got[tgt] = -9;
		MT_CALL(MPI_Fetch_and_op(&mine, &got[tgt], MPI_INT64_T, tgt,
					 OT_SWAP, MPI_REPLACE, win));
		MT_CALL(MPI_Win_unlock(tgt, win));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* my own swap word's final value, read through MPI like the rest;
	 * gathered with the fetched values as rank n's contribution */
	MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
	MT_CALL(MPI_Fetch_and_op(&dummy, &final, MPI_INT64_T, mt_rank,
				 OT_SWAP, MPI_NO_OP, win));
	MT_CALL(MPI_Win_unlock(mt_rank, win));
	{
		int64_t *all = mt_malloc((size_t)n * n * sizeof(int64_t));
		int64_t *finals = mt_malloc((size_t)n * sizeof(int64_t));
		int64_t *col = mt_malloc((size_t)(n + 1) * sizeof(int64_t));
		int r;

		MPI_Allgather(got, n, MPI_INT64_T, all, n, MPI_INT64_T,
			      MPI_COMM_WORLD);
		MPI_Allgather(&final, 1, MPI_INT64_T, finals, 1, MPI_INT64_T,
			      MPI_COMM_WORLD);
		for (t = 0; t < n; t++) {
			for (r = 0; r < n; r++)
				col[r] = all[(size_t)r * n + t];
			col[n] = finals[t];
			ot_check_perm(col, n + 1, -1, "swap chain", t);
		}
		free(all);
		free(finals);
		free(col);
	}
	free(got);
}

static void ot_cas(const char *fl, MPI_Win win)
{
	int n = mt_nranks, j;
	int64_t got[NS], wins[NS], sum[NS], fin[NS], me = mt_rank;
	int64_t none = -1, never = -2, dummy = 0;

	for (j = 0; j < NS; j++) {
		int tgt = j % n;
		int lock = j % 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;

		wins[j] = 0;
		got[j] = -9;
		if (ot_skip(tgt))
			continue;
		mt_stage("%s: cas on slot %d of rank %d", fl, j, tgt);
		MT_CALL(MPI_Win_lock(lock, tgt, 0, win));
		MT_CALL(MPI_Compare_and_swap(&me, &none, &got[j], MPI_INT64_T,
					     tgt, OT_SLOTS + j / n, win));
		MT_CALL(MPI_Win_unlock(tgt, win));
		wins[j] = got[j] == -1;
		MT_CHECK(got[j] >= -1 && got[j] < n, "%s: cas on slot %d "
			 "fetched %lld, not -1 or a rank", fl, j,
			 (long long)got[j]);
	}
	mt_stage("%s: cas: counting the winners", fl);
	MPI_Allreduce(wins, sum, NS, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (j = 0; j < NS; j++) {
		int tgt = j % n;
		int64_t f = -9;

		MT_CHECK(sum[j] == 1, "%s: cas: slot %d has %lld winners", fl,
			 j, (long long)sum[j]);
		if (ot_skip(tgt))
			continue;
		/* a CAS that cannot match fetches the value, changes none */
		MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, tgt, 0, win));
		MT_CALL(MPI_Compare_and_swap(&me, &never, &f, MPI_INT64_T,
					     tgt, OT_SLOTS + j / n, win));
		MT_CALL(MPI_Win_flush(tgt, win));
		fin[j] = -9;
		MT_CALL(MPI_Fetch_and_op(&dummy, &fin[j], MPI_INT64_T, tgt,
					 OT_SLOTS + j / n, MPI_NO_OP, win));
		MT_CALL(MPI_Win_unlock(tgt, win));
		MT_CHECK(f == fin[j] && fin[j] >= 0 && fin[j] < n,
			 "%s: slot %d: failing CAS fetched %lld, value is "
			 "%lld", fl, j, (long long)f, (long long)fin[j]);
		MT_CHECK(wins[j] ? fin[j] == me : got[j] == fin[j],
			 "%s: slot %d: I %s with %lld, the slot holds %lld",
			 fl, j, wins[j] ? "won" : "lost", (long long)got[j],
			 (long long)fin[j]);
	}
}

/* KC increments per target by read + CAS retry, in 64 or 32 bits; the
 * old values of the successful CASes go to `olds`. */
static void ot_casinc(const char *fl, MPI_Win win, int bits)
{
	int n = mt_nranks, t, i;
	int64_t *olds = mt_malloc((size_t)n * KC * sizeof(int64_t));
	MPI_Aint disp = bits == 64 ? OT_CAS_CTR : OT_CAS32;
	MPI_Datatype type = bits == 64 ? MPI_INT64_T : MPI_INT32_T;

	for (t = 0; t < n; t++) {
		int tgt = (mt_rank + t) % n;

		if (ot_skip(tgt))
			continue;
		mt_stage("%s: casinc%d on rank %d", fl, bits, tgt);
		MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, tgt, 0, win));
		for (i = 0; i < KC; i++) {
			int64_t old = 0, next, seen = 0, zero = 0;
			int32_t old32 = 0, next32, seen32 = 0, zero32 = 0;

			if (bits == 64)
				MT_CALL(MPI_Fetch_and_op(&zero, &old, type, tgt,
							 disp, MPI_NO_OP, win));
			else
				MT_CALL(MPI_Fetch_and_op(&zero32, &old32, type,
							 tgt, disp, MPI_NO_OP,
							 win));
			MT_CALL(MPI_Win_flush(tgt, win));
			for (;;) {
				if (bits == 32)
					old = old32;
				next = old + 1;
				next32 = (int32_t)next;
				if (bits == 64)
					MT_CALL(MPI_Compare_and_swap(&next,
						&old, &seen, type, tgt, disp,
						win));
				else
					MT_CALL(MPI_Compare_and_swap(&next32,
						&old32, &seen32, type, tgt,
						disp, win));
				MT_CALL(MPI_Win_flush(tgt, win));
				if (bits == 32)
					seen = seen32;
				if (seen == old)
					break;
				MT_CHECK(seen > old, "%s: casinc%d on rank %d:"
					 " the counter went back from %lld to "
					 "%lld", fl, bits, tgt,
					 (long long)old, (long long)seen);
				old = seen;
				old32 = (int32_t)seen;
			}
			olds[(size_t)tgt * KC + i] = old;
		}
		MT_CALL(MPI_Win_unlock(tgt, win));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	ot_gather_perm(olds, KC, 0, bits == 64 ? "casinc (64 bit)" :
						 "casinc (32 bit)");
	free(olds);
}

/* The two int32 halves of a 64-bit window word, in memory order. */
static void ot_halves(const int64_t *word, int32_t half[2])
{
	memcpy(half, word, 2 * sizeof(int32_t));
}

static void ot_run(unsigned int flavor, int64_t *w, MPI_Win win)
{
	const char *fl = mt_flavor_name(flavor);
	int n = ot_origins(), j;
	int32_t ctr32[2], cas32[2];

	/* initial values, stored locally inside an exclusive epoch on
	 * myself; the barrier orders them before everybody's first access */
	MT_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
	memset(w, 0, OT_WORDS * sizeof(int64_t));
	w[OT_SWAP] = -1;
	for (j = OT_SLOTS; j < OT_WORDS; j++)
		w[j] = -1;
	MT_CALL(MPI_Win_unlock(mt_rank, win));
	MPI_Barrier(MPI_COMM_WORLD);

	ot_fop(fl, win);
	ot_swap(fl, win);
	ot_cas(fl, win);
	ot_casinc(fl, win, 64);
	ot_casinc(fl, win, 32);

	MPI_Barrier(MPI_COMM_WORLD);
	MT_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
	MT_CHECK(w[OT_CTR] == (int64_t)n * ot_k, "%s: ctr is %lld, expected "
		 "%lld", fl, (long long)w[OT_CTR], (long long)n * ot_k);
	ot_halves(&w[OT_CTR32], ctr32);
	ot_halves(&w[OT_CAS32], cas32);
	MT_CHECK(ctr32[0] == n * ot_k && ctr32[1] == 0,
		 "%s: ctr32 word is 0x%llx, expected %d in its first half", fl,
		 (unsigned long long)w[OT_CTR32], n * ot_k);
	MT_CHECK(w[OT_CAS_CTR] == (int64_t)n * KC, "%s: cas_ctr is %lld, "
		 "expected %d", fl, (long long)w[OT_CAS_CTR], n * KC);
	MT_CHECK(cas32[0] == n * KC && cas32[1] == 0,
		 "%s: cas32 word is 0x%llx, expected %d in its first half", fl,
		 (unsigned long long)w[OT_CAS32], n * KC);
	MT_CALL(MPI_Win_unlock(mt_rank, win));
	MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	unsigned int flavors = MT_WIN_ALLOCATE | MT_WIN_CREATE, flavor;
	int opt;

	mt_init(&argc, &argv, "mpi_osc_atomic", 60);
	while ((opt = getopt(argc, argv, "w:k:r")) != -1) {
		if (opt == 'w')
			flavors = mt_flavors_parse(optarg);
		else if (opt == 'r')
			ot_remote_only = 1;
		else if (opt == 'k' && atoi(optarg) > 0)
			ot_k = atoi(optarg);
		else
			MT_FAIL("usage: mpi_osc_atomic [-w allocate|create|"
				"both] [-k K] [-r]");
	}
	if (ot_remote_only)
		mt_need_ranks(2);

	for (flavor = MT_WIN_ALLOCATE; flavor <= MT_WIN_CREATE; flavor <<= 1) {
		int64_t *w;
		MPI_Win win;

		if (!(flavors & flavor))
			continue;
		w = mt_win_open(flavor, OT_WORDS * sizeof(int64_t),
				sizeof(int64_t), &win);
		ot_run(flavor, w, win);
		mt_win_close(flavor, w, &win);
	}
	return mt_finish();
}
