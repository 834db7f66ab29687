/*
 * mpi_isend_flood.c - the flood a correct MPI program may make: every rank
 * but 0 posts N (default 200 000) MPI_Isends of 8 B to rank 0 and, without
 * waiting for them, enters MPI_Barrier; rank 0 posts its receives only
 * after the barrier. MPI lets the sends stay incomplete until they are
 * matched, so the provider must let the senders reach the barrier: past
 * its unexpected-data budget it keeps accepting headers and leaves the
 * payload at the sender (docs/design.md §7.2). A provider whose flow
 * control holds the sender once the budget is spent blocks rank 1 inside
 * MPI_Isend and the job never ends (the watchdog reports where).
 *
 * Every message carries (source, sequence); rank 0 receives them by
 * source in order and checks each one.
 *
 *   mpi_isend_flood [-n count]
 */
#include "mpi_common.h"

int main(int argc, char **argv)
{
	long n = 200000;
	int opt;

	mt_init(&argc, &argv, "mpi_isend_flood", 300);
	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt == 'n')
			n = atol(optarg);
	}
	mt_need_ranks(2);
	MT_CHECK(n > 0, "bad -n");

	if (mt_rank != 0) {
		uint32_t (*buf)[2] = malloc((size_t)n * sizeof(*buf));
		MPI_Request *req = malloc((size_t)n * sizeof(*req));

		MT_CHECK(buf && req, "no memory");
		mt_stage("posting %ld MPI_Isend of 8 B", n);
		for (long i = 0; i < n; i++) {
			buf[i][0] = (uint32_t)mt_rank;
			buf[i][1] = (uint32_t)i;
			MPI_Isend(buf[i], 8, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
				  &req[i]);
		}
		mt_stage("barrier after the sends");
		MPI_Barrier(MPI_COMM_WORLD);
		mt_stage("waiting for the sends");
		MPI_Waitall((int)n, req, MPI_STATUSES_IGNORE);
		free(buf);
		free(req);
	} else {
		MPI_Request *req = malloc((size_t)n * sizeof(*req));
		uint32_t (*buf)[2] = malloc((size_t)n * sizeof(*buf));

		MT_CHECK(buf && req, "no memory");
		mt_stage("barrier before the receives");
		MPI_Barrier(MPI_COMM_WORLD);
		for (int src = 1; src < mt_nranks; src++) {
			mt_stage("receiving from rank %d", src);
			for (long i = 0; i < n; i++)
				MPI_Irecv(buf[i], 8, MPI_BYTE, src, 7,
					  MPI_COMM_WORLD, &req[i]);
			MPI_Waitall((int)n, req, MPI_STATUSES_IGNORE);
			for (long i = 0; i < n; i++)
				MT_CHECK(buf[i][0] == (uint32_t)src &&
					 buf[i][1] == (uint32_t)i,
					 "message %ld from %d: got (%u, %u)",
					 i, src, buf[i][0], buf[i][1]);
		}
		free(buf);
		free(req);
	}
	mt_stage("final barrier");
	MPI_Barrier(MPI_COMM_WORLD);
	return mt_finish();
}
