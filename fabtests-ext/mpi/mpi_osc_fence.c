/*
 * mpi_osc_fence.c - active-target one-sided transfers: MPI_Put and MPI_Get
 * between MPI_Win_fence calls, from 1 B to 1 MiB and with a strided
 * target datatype, on every rank pair including a rank and itself.
 *
 * Window layout for a size S: slot r (offset r*S) belongs to origin rank
 * r, followed by 64 guard bytes. For each size:
 *  put  every rank poisons its window, fences, puts its pattern for
 *       (origin, target, S) into its slot on every rank, fences; each rank
 *       then checks every slot byte for byte and that the guard is still
 *       poison (a put that wrote too much or in the wrong slot shows);
 *  get  every rank gets, from every rank t, the slot of rank (me+1)%n
 *       into a poisoned buffer 64 B longer than S, fences, and checks the
 *       data and that the extra 64 B are untouched.
 * The strided case puts 64 blocks of 8 B into a target vector type (stride
 * 24 B) and gets them back the same way: the gaps must stay poison.
 *
 *   mpi_osc_fence [-w allocate|create|both] [-m max_bytes]
 */
#include "mpi_common.h"

#define OF_GUARD	64
#define OF_BLOCKS	64
#define OF_BLOCK	8
#define OF_STRIDE	24

static const size_t of_sizes[] = { 1, 8, 1000, 4096, 65539, 1048576 };
#define OF_NSIZES	(sizeof(of_sizes) / sizeof(of_sizes[0]))

static uint32_t of_seed(int origin, int target, size_t size, int kind)
{
	return (uint32_t)(kind * 7919 + origin * 131 + target * 17) ^
	       (uint32_t)size;
}

static void of_put_get(unsigned int flavor, size_t size, unsigned char *win_buf,
		       MPI_Win win, unsigned char *obuf, unsigned char *gbuf)
{
	int n = mt_nranks, t;
	size_t span = (size_t)n * size;
	int q = (mt_rank + 1) % n;	/* whose slot the gets read */

	/* put epoch */
	mt_poison(win_buf, span, 1);
	mt_poison(win_buf + span, OF_GUARD, 5);
	mt_stage("%s, %zu B: fence opening the put epoch",
		 mt_flavor_name(flavor), size);
	MT_CALL(MPI_Win_fence(0, win));
	for (t = 0; t < n; t++) {
		unsigned char *src = obuf + (size_t)t * size;

		mt_fill(src, size, of_seed(mt_rank, t, size, 0));
		MT_CALL(MPI_Put(src, (int)size, MPI_BYTE, t,
				(MPI_Aint)((size_t)mt_rank * size), (int)size,
				MPI_BYTE, win));
	}
	mt_stage("%s, %zu B: fence closing the put epoch",
		 mt_flavor_name(flavor), size);
	MT_CALL(MPI_Win_fence(0, win));
	for (t = 0; t < n; t++)
		MT_CHECK_DATA(win_buf + (size_t)t * size, size,
			      of_seed(t, mt_rank, size, 0),
			      "%s, %zu B: slot of rank %d after the put epoch",
			      mt_flavor_name(flavor), size, t);
	MT_CHECK(mt_verify_poison(win_buf + span, OF_GUARD, 5) < 0,
		 "%s, %zu B: a put wrote past the last slot",
		 mt_flavor_name(flavor), size);

	/* get epoch: what rank q put into every rank */
	for (t = 0; t < n; t++) {
		unsigned char *dst = gbuf + (size_t)t * (size + OF_GUARD);

		mt_poison(dst, size, 2);
		mt_poison(dst + size, OF_GUARD, 6);
		MT_CALL(MPI_Get(dst, (int)size, MPI_BYTE, t,
				(MPI_Aint)((size_t)q * size), (int)size,
				MPI_BYTE, win));
	}
	mt_stage("%s, %zu B: fence closing the get epoch",
		 mt_flavor_name(flavor), size);
	MT_CALL(MPI_Win_fence(0, win));
	for (t = 0; t < n; t++) {
		unsigned char *dst = gbuf + (size_t)t * (size + OF_GUARD);

		MT_CHECK_DATA(dst, size, of_seed(q, t, size, 0),
			      "%s, %zu B: get of rank %d's slot from rank %d",
			      mt_flavor_name(flavor), size, q, t);
		MT_CHECK(mt_verify_poison(dst + size, OF_GUARD, 6) < 0,
			 "%s, %zu B: the get from rank %d wrote past %zu B",
			 mt_flavor_name(flavor), size, t, size);
	}
}

/* Blocks of 8 B every 24 B at the target: origin data is contiguous. */
static void of_strided(unsigned int flavor, unsigned char *win_buf,
		       MPI_Win win, unsigned char *obuf, unsigned char *gbuf)
{
	const size_t packed = OF_BLOCKS * OF_BLOCK;
	const size_t extent = OF_BLOCKS * OF_STRIDE;
	int t = (mt_rank + 1) % mt_nranks;	/* I write to t */
	int from = (mt_rank + mt_nranks - 1) % mt_nranks; /* who writes me */
	unsigned char want[OF_BLOCKS * OF_BLOCK];
	MPI_Datatype vec;
	int b;

	MT_CALL(MPI_Type_vector(OF_BLOCKS, OF_BLOCK, OF_STRIDE, MPI_BYTE,
				&vec));
	MT_CALL(MPI_Type_commit(&vec));
	mt_poison(win_buf, extent, 3);
	mt_fill(obuf, packed, of_seed(mt_rank, t, packed, 1));
	mt_stage("%s: strided put", mt_flavor_name(flavor));
	MT_CALL(MPI_Win_fence(0, win));
	MT_CALL(MPI_Put(obuf, (int)packed, MPI_BYTE, t, 0, 1, vec, win));
	MT_CALL(MPI_Win_fence(0, win));
	mt_fill(want, packed, of_seed(from, mt_rank, packed, 1));
	for (b = 0; b < OF_BLOCKS; b++) {
		size_t off = (size_t)b * OF_STRIDE, i;

		MT_CHECK(!memcmp(win_buf + off, want + (size_t)b * OF_BLOCK,
				 OF_BLOCK),
			 "%s: strided put from rank %d: block %d differs",
			 mt_flavor_name(flavor), from, b);
		/* the gap after the block keeps the poison of its offset */
		for (i = off + OF_BLOCK; i < off + OF_STRIDE; i++)
			MT_CHECK(win_buf[i] == (unsigned char)~mt_byte(3, i),
				 "%s: strided put from rank %d wrote byte %zu, "
				 "in the gap after block %d",
				 mt_flavor_name(flavor), from, i, b);
	}
	mt_stage("%s: strided get", mt_flavor_name(flavor));
	mt_poison(gbuf, packed, 4);
	mt_poison(gbuf + packed, OF_GUARD, 7);
	MT_CALL(MPI_Get(gbuf, (int)packed, MPI_BYTE, t, 0, 1, vec, win));
	MT_CALL(MPI_Win_fence(0, win));
	MT_CHECK_DATA(gbuf, packed, of_seed(mt_rank, t, packed, 1),
		      "%s: strided get from rank %d", mt_flavor_name(flavor),
		      t);
	MT_CHECK(mt_verify_poison(gbuf + packed, OF_GUARD, 7) < 0,
		 "%s: strided get wrote past %zu B", mt_flavor_name(flavor),
		 packed);
	MT_CALL(MPI_Type_free(&vec));
}

int main(int argc, char **argv)
{
	unsigned int flavors = MT_WIN_ALLOCATE | MT_WIN_CREATE, flavor;
	size_t max = of_sizes[OF_NSIZES - 1], i;
	int opt;

	mt_init(&argc, &argv, "mpi_osc_fence", 60);
	while ((opt = getopt(argc, argv, "w:m:")) != -1) {
		if (opt == 'w')
			flavors = mt_flavors_parse(optarg);
		else if (opt == 'm')
			max = strtoul(optarg, NULL, 0);
		else
			MT_FAIL("usage: mpi_osc_fence [-w allocate|create|both]"
				" [-m max_bytes]");
	}

	for (flavor = MT_WIN_ALLOCATE; flavor <= MT_WIN_CREATE; flavor <<= 1) {
		size_t win_size = (size_t)mt_nranks * max + OF_GUARD;
		unsigned char *obuf, *gbuf, *base;
		MPI_Win win;

		if (!(flavors & flavor))
			continue;
		if (win_size < OF_BLOCKS * OF_STRIDE)
			win_size = OF_BLOCKS * OF_STRIDE;
		obuf = mt_malloc((size_t)mt_nranks * max + OF_GUARD);
		gbuf = mt_malloc((size_t)mt_nranks * (max + OF_GUARD));
		base = mt_win_open(flavor, win_size, 1, &win);
		for (i = 0; i < OF_NSIZES && of_sizes[i] <= max; i++)
			of_put_get(flavor, of_sizes[i], base, win, obuf, gbuf);
		of_strided(flavor, base, win, obuf, gbuf);
		mt_stage("%s: last fence", mt_flavor_name(flavor));
		MT_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
		mt_win_close(flavor, base, &win);
		free(obuf);
		free(gbuf);
	}
	return mt_finish();
}
