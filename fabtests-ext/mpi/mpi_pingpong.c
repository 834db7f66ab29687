/*
 * mpi_pingpong.c - MPI ping-pong from 0 B to 16 MiB with data checks, and
 * the one-way latency and bandwidth of each size.
 *
 * Ranks pair up (0-1, 2-3, ...); an odd last rank only takes part in the
 * final pass count. For every size, each pair makes:
 * - two checked round trips with fresh patterns both ways: the receiver
 *   poisons its buffer first, then checks source, tag, count and every
 *   byte; the second uses a receive buffer 64 B longer than the message
 *   and checks those 64 B are left alone;
 * - timed round trips on the same buffers, after which both sides check
 *   that the last data they received is still the expected pattern.
 * Sizes cover the eager/rendezvous boundary (16 KiB by default) and the
 * 1 KiB copy threshold on both sides, and every power of two to 16 MiB.
 * Latency is reported, never checked: CI machines are oversubscribed.
 *
 * Options: -m BYTES  largest size (default 16 MiB)
 *          -i N      at most N timed round trips per size (default 200;
 *                    run.sh lowers it where ranks outnumber cores, as
 *                    every round trip then waits for the scheduler).
 */
#include "mpi_common.h"

#define PP_MAX_DEFAULT	(16u << 20)
#define PP_SLACK	64	/* receive buffer excess checked untouched */

static size_t pp_sizes[64];
static int pp_nsizes;

/* Powers of two plus the sizes on either side of the protocol boundaries,
 * in increasing order. */
static void pp_sizes_init(size_t max)
{
	static const size_t extra[] = {
		1000, 1023, 1025, 4095, 16383, 16385, 65537, 1000001,
	};
	size_t pow = 1;
	unsigned int i = 0;

	pp_sizes[pp_nsizes++] = 0;
	while (pow <= max) {
		while (i < sizeof(extra) / sizeof(extra[0]) && extra[i] < pow) {
			if (extra[i] <= max)
				pp_sizes[pp_nsizes++] = extra[i];
			i++;
		}
		pp_sizes[pp_nsizes++] = pow;
		pow <<= 1;
	}
}

static int pp_iters_max = 200;

static int pp_iters(size_t size)
{
	int n = 3;

	if (size <= 4096)
		n = 200;
	else if (size <= 65536)
		n = 50;
	else if (size <= (1u << 20))
		n = 10;
	return n < pp_iters_max ? n : pp_iters_max;
}

/* Seeds differ per pair, size, round trip and direction. */
static uint32_t pp_seed(int pair, size_t size, int trip, int pong)
{
	return (uint32_t)(pair * 1000003 + size * 8 + trip * 2 + pong);
}

static void pp_recv_check(char *rbuf, size_t size, int peer, int tag,
			  int slack, uint32_t seed)
{
	MPI_Status st;

	mt_poison(rbuf, size, seed);
	mt_poison(rbuf + size, slack, ~seed);
	MPI_Recv(rbuf, (int)(size + slack), MPI_BYTE, peer, tag,
		 MPI_COMM_WORLD, &st);
	MT_CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag,
		 "size %zu: status source %d tag %d, expected %d %d", size,
		 st.MPI_SOURCE, st.MPI_TAG, peer, tag);
	MT_CHECK(mt_count(&st, MPI_BYTE) == (int)size,
		 "size %zu: received count %d", size, mt_count(&st, MPI_BYTE));
	MT_CHECK_DATA(rbuf, size, seed, "size %zu from rank %d: data differs",
		      size, peer);
	MT_CHECK(mt_verify_poison(rbuf + size, slack, ~seed) < 0,
		 "size %zu: bytes written past the message into the %d spare "
		 "bytes of the receive buffer", size, slack);
}

/* Two checked round trips; the ping side starts each one. */
static void pp_checked(char *sbuf, char *rbuf, size_t size, int peer,
		       int ping, int pair)
{
	int trip;

	for (trip = 0; trip < 2; trip++) {
		int slack = trip ? PP_SLACK : 0;
		uint32_t s_ping = pp_seed(pair, size, trip, 0);
		uint32_t s_pong = pp_seed(pair, size, trip, 1);

		if (ping) {
			mt_fill(sbuf, size, s_ping);
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, trip,
				 MPI_COMM_WORLD);
			pp_recv_check(rbuf, size, peer, trip, slack, s_pong);
		} else {
			pp_recv_check(rbuf, size, peer, trip, slack, s_ping);
			mt_fill(sbuf, size, s_pong);
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, trip,
				 MPI_COMM_WORLD);
		}
	}
}

static double pp_timed(char *sbuf, char *rbuf, size_t size, int peer,
		       int ping, int iters)
{
	double t0 = MPI_Wtime();
	int i;

	for (i = 0; i < iters; i++) {
		if (ping) {
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 2,
				 MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 2,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 2,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 2,
				 MPI_COMM_WORLD);
		}
	}
	return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
	size_t max = PP_MAX_DEFAULT;
	char *sbuf, *rbuf;
	int peer, ping, pair, i;

	mt_init(&argc, &argv, "mpi_pingpong", 90);
	mt_need_ranks(2);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-m") && i + 1 < argc)
			max = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-i") && i + 1 < argc &&
			 atoi(argv[i + 1]) > 0)
			pp_iters_max = atoi(argv[++i]);
		else
			MT_FAIL("usage: mpi_pingpong [-m max_bytes] "
				"[-i max_iters]");
	}
	pp_sizes_init(max);

	peer = mt_rank ^ 1;
	ping = !(mt_rank & 1);
	pair = mt_rank / 2;
	if (peer >= mt_nranks)		/* odd rank count: the last one rests */
		return mt_finish();

	sbuf = mt_malloc(max + PP_SLACK);
	rbuf = mt_malloc(max + PP_SLACK);
	if (mt_rank == 0)
		printf("%12s %6s %12s %12s\n", "bytes", "iters",
		       "one-way us", "MB/s");
	for (i = 0; i < pp_nsizes; i++) {
		size_t size = pp_sizes[i];
		int iters = pp_iters(size);
		double t;

		mt_stage("ping-pong of %zu bytes with rank %d", size, peer);
		pp_checked(sbuf, rbuf, size, peer, ping, pair);
		t = pp_timed(sbuf, rbuf, size, peer, ping, iters);
		/* the timed loop re-sent the last checked patterns: what each
		 * side holds now must still be exactly that */
		MT_CHECK_DATA(rbuf, size, pp_seed(pair, size, 1, ping),
			      "size %zu: data after the timed loop differs",
			      size);
		if (mt_rank == 0) {
			double us = t * 1e6 / (2.0 * iters);

			printf("%12zu %6d %12.2f %12.1f\n", size, iters, us,
			       us > 0 ? (double)size / us : 0.0);
			fflush(stdout);
		}
	}
	free(sbuf);
	free(rbuf);
	return mt_finish();
}
