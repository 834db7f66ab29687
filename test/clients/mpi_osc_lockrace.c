/*
 * mpi_osc_lockrace.c - exclusive and shared passive-target locks on one
 * target at the same time, the pattern under which Open MPI's osc portals4
 * (4.1) reports MPI_ERR_RMA_SYNC from MPI_Win_lock: its exclusive unlock
 * writes 0 over the lock word with a put, while a shared locker that found
 * the word held adds 1 and then takes it back with an atomic -1, so the
 * word can end at -1 (docs/portals4-clients.md, "osc portals4: the lock
 * word goes negative"). A correct MPI (osc rdma, osc pt2pt, any other
 * component) passes it.
 *
 * Ranks 1 .. n-1 alternate: odd ranks take exclusive locks on rank 0, even
 * ranks shared ones, ITERS times each; inside an exclusive epoch a rank
 * increments a counter at rank 0 with a read-modify-write that only the
 * exclusive lock makes safe (Get, flush, Put). At the end the counter
 * must equal the number of exclusive epochs. Needs 3 ranks or more.
 */
#include "mpi_common.h"

#define ITERS 2000

int main(int argc, char **argv)
{
	int *base, i, val, excl, want, nexcl = 0;
	MPI_Win win;

	mt_init(&argc, &argv, "mpi_osc_lockrace", 120);
	mt_need_ranks(3);
	MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &win);
	*base = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	excl = mt_rank % 2 == 1;
	mt_stage("%s locks on rank 0", excl ? "exclusive" : "shared");
	for (i = 0; mt_rank != 0 && i < ITERS; i++) {
		MPI_Win_lock(excl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0,
			     win);
		if (excl) {
			MPI_Get(&val, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
			MPI_Win_flush(0, win);
			val++;
			MPI_Put(&val, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
			nexcl++;
		}
		MPI_Win_unlock(0, win);
	}
	mt_stage("final count");
	MPI_Reduce(&nexcl, &want, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (mt_rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MT_CHECK(*base == want, "counter %d after %d exclusive epochs",
			 *base, want);
		MPI_Win_unlock(0, win);
	}
	MPI_Win_free(&win);
	return mt_finish();
}
