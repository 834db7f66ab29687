/*
 * mb_mpi.c - Open MPI ping-pong latency and message rate, run by
 * bench/run.sh through `--mca pml cm --mca mtl ofi` with one libfabric
 * provider at a time. Built with plain mpicc by run.sh (not part of the
 * autotools build: Open MPI is optional).
 *
 * run.sh also runs it through Open MPI's own shared-memory path (`--mca
 * pml ob1 --mca btl self,vader`), the intra-host reference.
 *
 * Two ranks. Rank 0 prints, like the fb_* programs:
 *   RESULT mpi_lat <size> <usec>       one way, half the round trip
 *   RESULT mpi_bw <size> <MB/s>        MPI_Isend windows of 64, acked
 *                                      (8 KiB, 64 KiB, 1 MiB)
 *   RESULT mpi_rate 64 <Mmsg/s>        8 B MPI_Isend windows of 64, acked
 * The first exchange of every size checks the data and every receive
 * checks its count, so a broken path fails instead of running fast.
 * -Q (smoke run): a tenth of the iterations.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MB_MAX		(1 << 20)
#define MB_WINDOW	64
#define MB_BW_MAX	(1 << 20)	/* a window of these: 64 MiB */

static int mb_rank;
static int mb_quick;

/* iterations: the full count, a tenth with -Q */
static int mb_iters(int full)
{
	if (!mb_quick)
		return full;
	return full / 10 > 0 ? full / 10 : 1;
}

static void mb_fail(const char *what)
{
	fprintf(stderr, "mb_mpi: rank %d: FAIL: %s\n", mb_rank, what);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static void mb_fill(unsigned char *buf, int len, int seed)
{
	int i;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 31 + seed);
}

static void mb_check(const unsigned char *buf, int len, int seed)
{
	int i;

	for (i = 0; i < len; i++)
		if (buf[i] != (unsigned char)(i * 31 + seed))
			mb_fail("data differs");
}

static void mb_recv(void *buf, int len, int peer, int tag)
{
	MPI_Status st;
	int count;

	MPI_Recv(buf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	if (count != len)
		mb_fail("short receive");
}

static void mb_lat(unsigned char *tx, unsigned char *rx, int size)
{
	int peer = 1 - mb_rank, iters = mb_iters(size <= 4096 ? 2000 : 200);
	int warm = iters / 10 > 0 ? iters / 10 : 1, i;
	double start = 0.0;

	mb_fill(tx, size, size + mb_rank);
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < warm + iters; i++) {
		if (i == warm)
			start = MPI_Wtime();
		if (mb_rank == 0) {
			MPI_Send(tx, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			mb_recv(rx, size, peer, 1);
		} else {
			mb_recv(rx, size, peer, 1);
			MPI_Send(tx, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
		if (i == 0)
			mb_check(rx, size, size + peer);
	}
	if (mb_rank == 0)
		printf("RESULT mpi_lat %d %.6g\n", size,
		       (MPI_Wtime() - start) * 1e6 / iters / 2.0);
}

/* windows of MB_WINDOW sends of size bytes, each to its own buffer */
static void mb_bw(unsigned char *tx, unsigned char *rx, int size)
{
	MPI_Request req[MB_WINDOW];
	int windows = mb_iters(size <= 65536 ? 200 : 40), warm = 2, w, k;
	double start = 0.0;
	char ack = 0;

	if (mb_rank == 0)
		mb_fill(tx, size * MB_WINDOW, size);
	MPI_Barrier(MPI_COMM_WORLD);
	for (w = 0; w < warm + windows; w++) {
		if (w == warm)
			start = MPI_Wtime();
		for (k = 0; k < MB_WINDOW; k++) {
			if (mb_rank == 0)
				MPI_Isend(tx + (size_t)size * k, size, MPI_BYTE,
					  1, 4, MPI_COMM_WORLD, &req[k]);
			else
				MPI_Irecv(rx + (size_t)size * k, size, MPI_BYTE,
					  0, 4, MPI_COMM_WORLD, &req[k]);
		}
		MPI_Waitall(MB_WINDOW, req, MPI_STATUSES_IGNORE);
		if (mb_rank == 1 && w == 0)
			mb_check(rx, size * MB_WINDOW, size);
		if (mb_rank == 0)
			mb_recv(&ack, 1, 1, 3);
		else
			MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
	}
	if (mb_rank == 0)
		printf("RESULT mpi_bw %d %.6g\n", size, (double)windows *
		       MB_WINDOW * size / (MPI_Wtime() - start) / 1e6);
}

static void mb_rate(unsigned char *tx, unsigned char *rx)
{
	MPI_Request req[MB_WINDOW];
	int windows = mb_iters(2000), warm = 10, w, k;
	double start = 0.0;
	char ack = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	for (w = 0; w < warm + windows; w++) {
		if (w == warm)
			start = MPI_Wtime();
		for (k = 0; k < MB_WINDOW; k++) {
			if (mb_rank == 0)
				MPI_Isend(tx + 8 * k, 8, MPI_BYTE, 1, 2,
					  MPI_COMM_WORLD, &req[k]);
			else
				MPI_Irecv(rx + 8 * k, 8, MPI_BYTE, 0, 2,
					  MPI_COMM_WORLD, &req[k]);
		}
		MPI_Waitall(MB_WINDOW, req, MPI_STATUSES_IGNORE);
		if (mb_rank == 0)
			mb_recv(&ack, 1, 1, 3);
		else
			MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
	}
	if (mb_rank == 0)
		printf("RESULT mpi_rate %d %.6g\n", MB_WINDOW,
		       (double)windows * MB_WINDOW / (MPI_Wtime() - start) / 1e6);
}

int main(int argc, char **argv)
{
	static const int bw_sizes[] = { 8192, 65536, MB_BW_MAX };
	unsigned char *tx, *rx;
	int nranks, size, i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &mb_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks != 2)
		mb_fail("needs exactly 2 ranks");
	mb_quick = argc > 1 && !strcmp(argv[1], "-Q");
	tx = malloc((size_t)MB_BW_MAX * MB_WINDOW);
	rx = malloc((size_t)MB_BW_MAX * MB_WINDOW);
	if (!tx || !rx)
		mb_fail("out of memory");
	for (size = 1; size <= MB_MAX; size *= 8)
		mb_lat(tx, rx, size);
	for (i = 0; i < (int)(sizeof(bw_sizes) / sizeof(bw_sizes[0])); i++)
		mb_bw(tx, rx, bw_sizes[i]);
	mb_rate(tx, rx);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	free(tx);
	free(rx);
	MPI_Finalize();
	return 0;
}
