/*
 * mpi_osc.c - MPI one-sided communication, for Open MPI's osc portals4
 * component over libportals (test/clients/portals4-clients.sh runs it with
 * `--mca osc portals4`; any other osc component works as well, so a
 * failure here under portals4 and a pass under another one point at the
 * transport).
 *
 * Every epoch kind (fence, post/start/complete/wait, lock/unlock, lock_all
 * with flushes), every window flavour osc portals4 serves (allocate,
 * create; dynamic with an attached buffer) and the operations: Put and Get
 * of 1 to 262144 ints, Accumulate (sum, max, replace), Get_accumulate,
 * Fetch_and_op, Compare_and_swap (a counter every rank increments through
 * a compare-and-swap loop), Rput/Rget. Each result is compared with what
 * the rank numbers say it must be.
 */
#include "mpi_common.h"

static const int os_counts[] = { 1, 7, 1000, 4097, 262144 };
#define OS_NCOUNTS	((int)(sizeof(os_counts) / sizeof(os_counts[0])))
#define OS_MAX		262144

static int os_val(int t, int r, int i)
{
	return (int)((unsigned)(t * 7919 + r * 104729 + i * 31) % 1000003u);
}

/* Put to the right neighbour, Get from it, under fences. */
static void os_fence(MPI_Win win, int *base, int *buf)
{
	int c, i, n, right, left;

	right = (mt_rank + 1) % mt_nranks;
	left = (mt_rank + mt_nranks - 1) % mt_nranks;
	for (c = 0; c < OS_NCOUNTS; c++) {
		n = os_counts[c];
		mt_stage("fence put %d ints", n);
		for (i = 0; i < n; i++)
			buf[i] = os_val(c, mt_rank, i);
		MPI_Win_fence(0, win);
		MPI_Put(buf, n, MPI_INT, right, 0, n, MPI_INT, win);
		MPI_Win_fence(0, win);
		for (i = 0; i < n; i++)
			MT_CHECK(base[i] == os_val(c, left, i),
				 "fence put %d ints: [%d] = %d, not %d", n, i,
				 base[i], os_val(c, left, i));
		/* every rank has read its window before anyone writes it */
		MPI_Win_fence(0, win);
		mt_stage("fence get %d ints", n);
		memset(buf, 0xff, (size_t)n * sizeof(int));
		MPI_Win_fence(0, win);
		MPI_Get(buf, n, MPI_INT, right, 0, n, MPI_INT, win);
		MPI_Win_fence(0, win);
		/* the right neighbour's window holds what its left (us) put */
		for (i = 0; i < n; i++)
			MT_CHECK(buf[i] == os_val(c, mt_rank, i),
				 "fence get %d ints: [%d] = %d", n, i, buf[i]);
	}
}

/* Accumulate into every rank from every rank: sum, max, then replace. */
static void os_accumulate(MPI_Win win, int *base, int *buf)
{
	const int n = 1000;
	int i, t, want;

	mt_stage("accumulate sum");
	MPI_Win_fence(0, win);
	for (i = 0; i < n; i++)
		base[i] = 0;
	MPI_Win_fence(0, win);
	for (i = 0; i < n; i++)
		buf[i] = (mt_rank + 1) * (i + 1);
	for (t = 0; t < mt_nranks; t++)
		MPI_Accumulate(buf, n, MPI_INT, t, 0, n, MPI_INT, MPI_SUM,
			       win);
	MPI_Win_fence(0, win);
	want = mt_nranks * (mt_nranks + 1) / 2;
	for (i = 0; i < n; i++)
		MT_CHECK(base[i] == want * (i + 1), "sum [%d] = %d, not %d",
			 i, base[i], want * (i + 1));
	MPI_Win_fence(0, win);
	mt_stage("accumulate max");
	for (i = 0; i < n; i++)
		buf[i] = (i % mt_nranks == mt_rank) ? 1000000 + i : -i;
	for (t = 0; t < mt_nranks; t++)
		MPI_Accumulate(buf, n, MPI_INT, t, 0, n, MPI_INT, MPI_MAX,
			       win);
	MPI_Win_fence(0, win);
	for (i = 0; i < n; i++)
		MT_CHECK(base[i] == 1000000 + i, "max [%d] = %d", i, base[i]);
	mt_stage("accumulate replace");
	MPI_Win_fence(0, win);
	/* rank 0 writes every window; buf is reused, and the fence (which
	 * every rank calls) ends each use of it */
	for (t = 0; t < mt_nranks; t++) {
		if (mt_rank == 0) {
			for (i = 0; i < n; i++)
				buf[i] = os_val(9, t, i);
			MPI_Accumulate(buf, n, MPI_INT, t, 0, n, MPI_INT,
				       MPI_REPLACE, win);
		}
		MPI_Win_fence(0, win);
	}
	for (i = 0; i < n; i++)
		MT_CHECK(base[i] == os_val(9, mt_rank, i),
			 "replace [%d] = %d", i, base[i]);
	MPI_Win_fence(0, win);
}

/* Passive target: a counter at rank 0 that every rank increments with
 * Fetch_and_op (exclusive locks) and with a Compare_and_swap loop
 * (lock_all), and Get_accumulate returning the value before. */
static void os_passive(MPI_Win win, int *base)
{
	const int iters = 50;
	int i, one = 1, old, seen, want, prev, res[4], add[4];

	MPI_Win_fence(0, win);
	base[0] = 0;
	base[1] = 0;
	memset(&base[2], 0, 4 * sizeof(int));
	MPI_Win_fence(0, win);
	mt_stage("fetch_and_op under exclusive locks");
	for (i = 0; i < iters; i++) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 0, MPI_SUM, win);
		MPI_Win_unlock(0, win);
		MT_CHECK(old >= 0 && old < iters * mt_nranks,
			 "fetch_and_op returned %d", old);
	}
	mt_stage("compare_and_swap loop under lock_all");
	MPI_Win_lock_all(0, win);
	for (i = 0; i < iters; i++) {
		seen = 0;
		for (;;) {
			want = seen + 1;
			MPI_Compare_and_swap(&want, &seen, &prev, MPI_INT, 0,
					     1, win);
			MPI_Win_flush(0, win);
			if (prev == seen)
				break;
			seen = prev;
		}
	}
	mt_stage("get_accumulate under lock_all");
	for (i = 0; i < 4; i++)
		add[i] = i + 1;
	MPI_Get_accumulate(add, 4, MPI_INT, res, 4, MPI_INT, 0, 2, 4,
			   MPI_INT, MPI_SUM, win);
	MPI_Win_flush(0, win);
	for (i = 0; i < 4; i++)
		MT_CHECK(res[i] % (i + 1) == 0 &&
			 res[i] / (i + 1) < mt_nranks,
			 "get_accumulate [%d] returned %d", i, res[i]);
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (mt_rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MT_CHECK(base[0] == iters * mt_nranks,
			 "fetch_and_op counter %d, not %d", base[0],
			 iters * mt_nranks);
		MT_CHECK(base[1] == iters * mt_nranks,
			 "compare_and_swap counter %d, not %d", base[1],
			 iters * mt_nranks);
		for (i = 0; i < 4; i++)
			MT_CHECK(base[2 + i] == (i + 1) * mt_nranks,
				 "get_accumulate total [%d] = %d", i,
				 base[2 + i]);
		MPI_Win_unlock(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Generalised active target: each rank exposes to its left neighbour and
 * accesses its right one. */
static void os_pscw(MPI_Win win, int *base, int *buf)
{
	MPI_Group world, from, to;
	int i, n = 4097, right, left;

	right = (mt_rank + 1) % mt_nranks;
	left = (mt_rank + mt_nranks - 1) % mt_nranks;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &left, &from);
	MPI_Group_incl(world, 1, &right, &to);
	mt_stage("post/start/complete/wait");
	for (i = 0; i < n; i++)
		buf[i] = os_val(5, mt_rank, i);
	MPI_Win_post(from, 0, win);
	MPI_Win_start(to, 0, win);
	MPI_Put(buf, n, MPI_INT, right, 0, n, MPI_INT, win);
	MPI_Win_complete(win);
	MPI_Win_wait(win);
	for (i = 0; i < n; i++)
		MT_CHECK(base[i] == os_val(5, left, i),
			 "pscw [%d] = %d", i, base[i]);
	MPI_Group_free(&from);
	MPI_Group_free(&to);
	MPI_Group_free(&world);
}

/* Request-based operations under lock_all, then Get of what was put. */
static void os_requests(MPI_Win win, int *buf)
{
	int i, n = 1000, right, back[1000];
	MPI_Request req;

	right = (mt_rank + 1) % mt_nranks;
	mt_stage("rput/rget");
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < n; i++)
		buf[i] = os_val(7, mt_rank, i);
	MPI_Win_lock_all(0, win);
	MPI_Rput(buf, n, MPI_INT, right, 10, n, MPI_INT, win, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Win_flush(right, win);
	MPI_Rget(back, n, MPI_INT, right, 10, n, MPI_INT, win, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Win_unlock_all(win);
	for (i = 0; i < n; i++)
		MT_CHECK(back[i] == os_val(7, mt_rank, i), "rget [%d] = %d",
			 i, back[i]);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* A dynamic window with one attached buffer whose address travels by
 * Allgather. */
static void os_dynamic(void)
{
	int i, n = 1000, right, left, *mem, *buf;
	MPI_Aint *addrs, mine;
	MPI_Win win;

	mt_stage("dynamic window");
	right = (mt_rank + 1) % mt_nranks;
	left = (mt_rank + mt_nranks - 1) % mt_nranks;
	mem = calloc((size_t)n, sizeof(int));
	buf = malloc((size_t)n * sizeof(int));
	addrs = malloc((size_t)mt_nranks * sizeof(*addrs));
	if (!mem || !buf || !addrs)
		MT_FAIL("out of memory");
	MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_attach(win, mem, (MPI_Aint)n * (MPI_Aint)sizeof(int));
	MPI_Get_address(mem, &mine);
	MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT,
		      MPI_COMM_WORLD);
	for (i = 0; i < n; i++)
		buf[i] = os_val(11, mt_rank, i);
	MPI_Win_fence(0, win);
	MPI_Put(buf, n, MPI_INT, right, addrs[right], n, MPI_INT, win);
	MPI_Win_fence(0, win);
	for (i = 0; i < n; i++)
		MT_CHECK(mem[i] == os_val(11, left, i), "dynamic [%d] = %d",
			 i, mem[i]);
	MPI_Win_detach(win, mem);
	MPI_Win_free(&win);
	free(addrs);
	free(buf);
	free(mem);
}

int main(int argc, char **argv)
{
	int *base, *buf, *mem;
	MPI_Win win;

	mt_init(&argc, &argv, "mpi_osc", 60);
	buf = malloc(OS_MAX * sizeof(int));
	mem = calloc(OS_MAX, sizeof(int));
	if (!buf || !mem)
		MT_FAIL("out of memory");

	/* MPI_Win_allocate: the library's own memory */
	MPI_Win_allocate((MPI_Aint)OS_MAX * (MPI_Aint)sizeof(int),
			 sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
			 &win);
	os_fence(win, base, buf);
	os_accumulate(win, base, buf);
	os_passive(win, base);
	os_pscw(win, base, buf);
	os_requests(win, buf);
	MPI_Win_free(&win);

	/* MPI_Win_create: memory the program allocated */
	MPI_Win_create(mem, (MPI_Aint)OS_MAX * (MPI_Aint)sizeof(int),
		       sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	os_fence(win, mem, buf);
	os_passive(win, mem);
	MPI_Win_free(&win);

	os_dynamic();
	free(mem);
	free(buf);
	return mt_finish();
}
