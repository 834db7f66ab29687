/*
 * mpi_collectives.c - collectives over the provider: with pml cm, Open
 * MPI's collective algorithms (coll tuned/basic) run on point-to-point
 * messages through the ofi MTL, so every collective here is a pattern of
 * tagged sends and receives - many peers at once, eager and rendezvous
 * sizes, negative tags, self messages.
 *
 * Barrier, Bcast (from every root), Allreduce (int sum, double max,
 * in place), Alltoall, Allgatherv (unequal counts, one rank contributing
 * nothing), Reduce and Gather to a non-zero root, over several sizes from
 * 1 element to 1 MiB per rank. Every result is compared with what it must
 * be, computed locally from the rank numbers.
 */
#include "mpi_common.h"

static const int co_counts[] = { 1, 7, 1000, 4097, 65536, 262144 };
#define CO_NCOUNTS	((int)(sizeof(co_counts) / sizeof(co_counts[0])))

/* The element at index i contributed by rank r in test `t`. */
static int co_val(int t, int r, int i)
{
	return (int)((unsigned)(t * 7919 + r * 104729 + i * 31) % 1000003u);
}

static void co_barrier(void)
{
	int i, out, token, left, right;
	MPI_Request sreq;
	MPI_Status st;

	/* then a message sent before a barrier, received after it. The send
	 * is nonblocking: a blocking MPI_Send whose receive is posted only
	 * later relies on buffering MPI does not promise, and MPICH gives
	 * none to a send to itself (one rank: MPI_Send never returns). */
	for (i = 0; i < 20; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	right = (mt_rank + 1) % mt_nranks;
	left = (mt_rank + mt_nranks - 1) % mt_nranks;
	out = mt_rank * 10;
	MPI_Isend(&out, 1, MPI_INT, right, 77, MPI_COMM_WORLD, &sreq);
	MPI_Barrier(MPI_COMM_WORLD);
	token = -1;
	MPI_Recv(&token, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &st);
	MPI_Wait(&sreq, MPI_STATUS_IGNORE);
	MT_CHECK(token == left * 10, "barrier: token %d from %d", token,
		 left);
}

static void co_bcast(int *buf, int count)
{
	int root, i;

	for (root = 0; root < mt_nranks; root++) {
		for (i = 0; i < count; i++)
			buf[i] = mt_rank == root ? co_val(1, root, i) : -1;
		MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD);
		for (i = 0; i < count; i++)
			MT_CHECK(buf[i] == co_val(1, root, i), "bcast of %d "
				 "from %d: element %d is %d, expected %d",
				 count, root, i, buf[i], co_val(1, root, i));
	}
}

static void co_allreduce(int *ibuf, int *obuf, double *dbuf, int count)
{
	int i, r;

	for (i = 0; i < count; i++)
		ibuf[i] = co_val(2, mt_rank, i);
	MPI_Allreduce(ibuf, obuf, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < count; i++) {
		long sum = 0;

		for (r = 0; r < mt_nranks; r++)
			sum += co_val(2, r, i);
		MT_CHECK(obuf[i] == (int)sum, "allreduce sum of %d: element "
			 "%d is %d, expected %ld", count, i, obuf[i], sum);
	}

	/* in place, double max: rank r's value wins where i % ranks == r */
	for (i = 0; i < count; i++)
		dbuf[i] = i % mt_nranks == mt_rank ? 1.5 * i + 0.25 :
			-(double)co_val(3, mt_rank, i);
	MPI_Allreduce(MPI_IN_PLACE, dbuf, count, MPI_DOUBLE, MPI_MAX,
		      MPI_COMM_WORLD);
	for (i = 0; i < count; i++)
		MT_CHECK(dbuf[i] == 1.5 * i + 0.25, "allreduce max of %d "
			 "(in place): element %d is %g, expected %g", count,
			 i, dbuf[i], 1.5 * i + 0.25);
}

/* Alltoall: block b of rank r's send buffer goes to rank b. */
static void co_alltoall(int *sbuf, int *rbuf, int count)
{
	int r, i;

	for (r = 0; r < mt_nranks; r++)
		for (i = 0; i < count; i++)
			sbuf[(size_t)r * count + i] =
				co_val(4, mt_rank, r * count + i);
	memset(rbuf, 0xff, (size_t)count * mt_nranks * sizeof(int));
	MPI_Alltoall(sbuf, count, MPI_INT, rbuf, count, MPI_INT,
		     MPI_COMM_WORLD);
	for (r = 0; r < mt_nranks; r++)
		for (i = 0; i < count; i++)
			MT_CHECK(rbuf[(size_t)r * count + i] ==
				 co_val(4, r, mt_rank * count + i),
				 "alltoall of %d: from rank %d element %d is "
				 "%d", count, r, i,
				 rbuf[(size_t)r * count + i]);
}

/* Allgatherv: rank r contributes (r * count / ranks) elements, so rank 0
 * contributes none; blocks are placed in reverse rank order with gaps. */
static void co_allgatherv(int *sbuf, int *rbuf, int count)
{
	int counts[64] = { 0 }, displs[64] = { 0 }, r, i, total = 0;

	for (r = mt_nranks - 1; r >= 0; r--) {
		counts[r] = (int)((long)r * count / mt_nranks);
		displs[r] = total;
		total += counts[r] + 3;		/* 3-element gap */
	}
	for (i = 0; i < counts[mt_rank]; i++)
		sbuf[i] = co_val(5, mt_rank, i);
	for (i = 0; i < total; i++)
		rbuf[i] = -7;
	MPI_Allgatherv(sbuf, counts[mt_rank], MPI_INT, rbuf, counts, displs,
		       MPI_INT, MPI_COMM_WORLD);
	for (r = 0; r < mt_nranks; r++) {
		for (i = 0; i < counts[r]; i++)
			MT_CHECK(rbuf[displs[r] + i] == co_val(5, r, i),
				 "allgatherv of %d: block of rank %d element "
				 "%d is %d", count, r, i, rbuf[displs[r] + i]);
		for (i = 0; i < 3; i++)
			MT_CHECK(rbuf[displs[r] + counts[r] + i] == -7,
				 "allgatherv of %d: gap after rank %d's block "
				 "written", count, r);
	}
}

/* Reduce (product of small numbers, as long) and Gather to the last rank. */
static void co_reduce_gather(int *sbuf, int *rbuf, int count)
{
	int root = mt_nranks - 1, r, i;
	long *lin = (long *)sbuf, *lout = (long *)rbuf;
	int n = count / 2 ? count / 2 : 1;	/* longs fit in the int buffer */

	for (i = 0; i < n; i++)
		lin[i] = (long)(i % 3 + 1) + (mt_rank == i % mt_nranks);
	MPI_Reduce(lin, lout, n, MPI_LONG, MPI_PROD, root, MPI_COMM_WORLD);
	if (mt_rank == root) {
		for (i = 0; i < n; i++) {
			long want = 1;

			for (r = 0; r < mt_nranks; r++)
				want *= (long)(i % 3 + 1) + (r == i % mt_nranks);
			MT_CHECK(lout[i] == want, "reduce prod of %d: element "
				 "%d is %ld, expected %ld", n, i, lout[i],
				 want);
		}
	}

	for (i = 0; i < count; i++)
		sbuf[i] = co_val(6, mt_rank, i);
	MPI_Gather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, root,
		   MPI_COMM_WORLD);
	if (mt_rank == root)
		for (r = 0; r < mt_nranks; r++)
			for (i = 0; i < count; i++)
				MT_CHECK(rbuf[(size_t)r * count + i] ==
					 co_val(6, r, i), "gather of %d: "
					 "rank %d element %d", count, r, i);
}

int main(int argc, char **argv)
{
	int max = co_counts[CO_NCOUNTS - 1], k;
	int *a, *b;
	double *d;

	mt_init(&argc, &argv, "mpi_collectives", 60);
	if (mt_nranks > 64)
		MT_FAIL("at most 64 ranks");
	a = mt_malloc((size_t)max * mt_nranks * sizeof(int) * 2);
	b = mt_malloc((size_t)max * mt_nranks * sizeof(int) * 2 +
		      64 * 3 * sizeof(int));
	d = mt_malloc((size_t)max * sizeof(double));

	mt_stage("barrier");
	co_barrier();
	for (k = 0; k < CO_NCOUNTS; k++) {
		int count = co_counts[k];

		mt_stage("bcast of %d ints", count);
		co_bcast(a, count);
		mt_stage("allreduce of %d", count);
		co_allreduce(a, b, d, count);
		mt_stage("alltoall of %d ints per rank", count);
		co_alltoall(a, b, count);
		mt_stage("allgatherv of up to %d ints", count);
		co_allgatherv(a, b, count);
		mt_stage("reduce and gather of %d", count);
		co_reduce_gather(a, b, count);
		mt_stage("barrier after %d", count);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	free(a);
	free(b);
	free(d);
	return mt_finish();
}
