/*
 * mpi_osc_lockall.c - passive target with MPI_Win_lock_all: MPI_Put and
 * MPI_Get completed by MPI_Win_flush, MPI_Win_flush_local and
 * MPI_Win_flush_all, request-based MPI_Rput/MPI_Rget, and MPI_Accumulate,
 * all inside one lock_all epoch per window, every rank onto every rank.
 *
 * Window (disp_unit 1): slot r of S bytes for origin r (S = 8, 4097 and
 * 256 KiB in turn), then one int64 counter. In round k with size S, each
 * rank, for every target t:
 *  1. puts pattern (me, t, k, 0) into its slot on t, MPI_Win_flush(t),
 *     then gets the slot back into a poisoned buffer and flushes again:
 *     the put completed at the target, so the get must return it;
 *  2. MPI_Rput of pattern (me, t, k, 1), MPI_Wait (local completion only)
 *     then MPI_Win_flush_local(t) and reuses the origin buffer at once;
 *  3. MPI_Accumulate(SUM, k+me+1) onto t's counter;
 * then MPI_Win_flush_all, and for every t an MPI_Rget of the slot (checked:
 * pattern 1). After MPI_Win_sync, MPI_Barrier, MPI_Win_sync, every rank
 * checks its own window: slot r holds pattern (r, me, k, 1) for every r and
 * the counter holds the sum of every contribution so far. A barrier ends
 * the round before the slots are overwritten.
 *
 *   mpi_osc_lockall [-w allocate|create|both]
 */
#include "mpi_common.h"

static const size_t ol_sizes[] = { 8, 4097, 262144 };
#define OL_ROUNDS	((int)(sizeof(ol_sizes) / sizeof(ol_sizes[0])))
#define OL_MAX		262144

static uint32_t ol_seed(int origin, int target, int round, int kind)
{
	return (uint32_t)(origin * 65599 + target * 257 + round * 17 + kind);
}

static void ol_round(const char *fl, int k, unsigned char *base,
		     MPI_Win win, unsigned char *obuf, unsigned char *gbuf)
{
	int n = mt_nranks, me = mt_rank, t, r;
	size_t s = ol_sizes[k];
	MPI_Aint slot = (MPI_Aint)((size_t)me * s);
	MPI_Aint ctr = (MPI_Aint)((size_t)n * OL_MAX);
	int64_t add = k + me + 1, want = 0;
	MPI_Request *reqs = mt_malloc((size_t)n * sizeof(*reqs));

	for (t = 0; t < n; t++) {
		mt_stage("%s, round %d (%zu B): put, flush, get on rank %d",
			 fl, k, s, t);
		mt_fill(obuf, s, ol_seed(me, t, k, 0));
		MT_CALL(MPI_Put(obuf, (int)s, MPI_BYTE, t, slot, (int)s,
				MPI_BYTE, win));
		MT_CALL(MPI_Win_flush(t, win));
		mt_poison(gbuf, s, ol_seed(me, t, k, 0));
		MT_CALL(MPI_Get(gbuf, (int)s, MPI_BYTE, t, slot, (int)s,
				MPI_BYTE, win));
		MT_CALL(MPI_Win_flush(t, win));
		MT_CHECK_DATA(gbuf, s, ol_seed(me, t, k, 0),
			      "%s, round %d: get after put+flush on rank %d",
			      fl, k, t);

		mt_stage("%s, round %d: rput, flush_local, accumulate on %d",
			 fl, k, t);
		mt_fill(obuf, s, ol_seed(me, t, k, 1));
		MT_CALL(MPI_Rput(obuf, (int)s, MPI_BYTE, t, slot, (int)s,
				 MPI_BYTE, win, &reqs[t]));
		MT_CALL(MPI_Wait(&reqs[t], MPI_STATUS_IGNORE));
		MT_CALL(MPI_Win_flush_local(t, win));
		MT_CALL(MPI_Accumulate(&add, 1, MPI_INT64_T, t, ctr, 1,
				       MPI_INT64_T, MPI_SUM, win));
		/* the origin buffer is free again: scribble on it */
		mt_poison(obuf, s, 9);
	}
	mt_stage("%s, round %d: flush_all", fl, k);
	MT_CALL(MPI_Win_flush_all(win));

	for (t = 0; t < n; t++) {
		mt_poison(gbuf + (size_t)t * s, s, ol_seed(me, t, k, 1));
		MT_CALL(MPI_Rget(gbuf + (size_t)t * s, (int)s, MPI_BYTE, t,
				 slot, (int)s, MPI_BYTE, win, &reqs[t]));
	}
	mt_stage("%s, round %d: waiting for %d rget", fl, k, n);
	MT_CALL(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
	for (t = 0; t < n; t++)
		MT_CHECK_DATA(gbuf + (size_t)t * s, s, ol_seed(me, t, k, 1),
			      "%s, round %d: rget of my slot on rank %d", fl,
			      k, t);

	/* every rank's updates of my window are complete: look at it */
	MT_CALL(MPI_Win_sync(win));
	mt_stage("%s, round %d: barrier before the local checks", fl, k);
	MPI_Barrier(MPI_COMM_WORLD);
	MT_CALL(MPI_Win_sync(win));
	for (r = 0; r < n; r++)
		MT_CHECK_DATA(base + (size_t)r * s, s, ol_seed(r, me, k, 1),
			      "%s, round %d: slot of rank %d in my window", fl,
			      k, r);
	/* the counter started at 0 and gets k + r + 1 from rank r in
	 * round k (it cannot be read at the start of a round: others may
	 * already have added to it) */
	for (int j = 0; j <= k; j++)
		for (r = 0; r < n; r++)
			want += j + r + 1;
	{
		int64_t now;

		memcpy(&now, base + ctr, sizeof(now));
		MT_CHECK(now == want, "%s, round %d: counter %lld, expected "
			 "%lld", fl, k, (long long)now, (long long)want);
	}
	mt_stage("%s, round %d: barrier after the local checks", fl, k);
	MPI_Barrier(MPI_COMM_WORLD);
	free(reqs);
}

int main(int argc, char **argv)
{
	unsigned int flavors = MT_WIN_ALLOCATE | MT_WIN_CREATE, flavor;
	int opt, k;

	mt_init(&argc, &argv, "mpi_osc_lockall", 60);
	while ((opt = getopt(argc, argv, "w:")) != -1) {
		if (opt == 'w')
			flavors = mt_flavors_parse(optarg);
		else
			MT_FAIL("usage: mpi_osc_lockall [-w allocate|create|"
				"both]");
	}

	for (flavor = MT_WIN_ALLOCATE; flavor <= MT_WIN_CREATE; flavor <<= 1) {
		size_t size = (size_t)mt_nranks * OL_MAX + sizeof(int64_t);
		const char *fl = mt_flavor_name(flavor);
		unsigned char *obuf, *gbuf, *base;
		MPI_Win win;

		if (!(flavors & flavor))
			continue;
		obuf = mt_malloc(OL_MAX);
		gbuf = mt_malloc((size_t)mt_nranks * OL_MAX);
		base = mt_win_open(flavor, size, 1, &win);
		memset(base + size - sizeof(int64_t), 0, sizeof(int64_t));
		MPI_Barrier(MPI_COMM_WORLD);
		mt_stage("%s: MPI_Win_lock_all", fl);
		MT_CALL(MPI_Win_lock_all(0, win));
		for (k = 0; k < OL_ROUNDS; k++)
			ol_round(fl, k, base, win, obuf, gbuf);
		mt_stage("%s: MPI_Win_unlock_all", fl);
		MT_CALL(MPI_Win_unlock_all(win));
		mt_win_close(flavor, base, &win);
		free(obuf);
		free(gbuf);
	}
	return mt_finish();
}
