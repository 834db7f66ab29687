/*
 * mpi_large.c - 64 MiB messages: rendezvous transfers pulled in many
 * chunks, with every byte checked.
 *
 * Ranks pair up (0-1, 2-3; an odd last rank joins only the fan-in):
 *  1  0 -> 1 and back, blocking Send/Recv, 64 MiB;
 *  2  both directions at once (MPI_Sendrecv), 64 MiB + 1 B, from and to
 *     buffers that start one byte past an aligned address;
 *  3  unexpected: the sender MPI_Isends 64 MiB and then a small "done";
 *     the receiver takes "done" first, so the large message waits as a
 *     bare header until its receive is posted; the receive buffer is
 *     4 KiB longer than the message and those bytes must stay untouched;
 *  4  fan-in: every rank but 0 sends 64 MiB to rank 0 at the same time,
 *     received with MPI_ANY_SOURCE.
 */
#include "mpi_common.h"

#define LG_SIZE		(64u << 20)
#define LG_SLACK	4096
#define TAG_DATA	1
#define TAG_DONE	2

static char *lg_sbuf, *lg_rbuf;

static void lg_check(const MPI_Status *st, const char *buf, int src,
		     size_t size, uint32_t seed, const char *what)
{
	MT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == TAG_DATA &&
		 mt_count(st, MPI_BYTE) == (int)size,
		 "%s: source %d tag %d count %d, expected %d %d %zu", what,
		 st->MPI_SOURCE, st->MPI_TAG, mt_count(st, MPI_BYTE), src,
		 TAG_DATA, size);
	MT_CHECK_DATA(buf, size, seed, "%s: data from %d differs", what, src);
}

static void lg_pingpong(int peer, int first)
{
	MPI_Status st;

	mt_stage("step 1: 64 MiB ping-pong with %d", peer);
	if (first) {
		mt_fill(lg_sbuf, LG_SIZE, 11);
		MPI_Send(lg_sbuf, LG_SIZE, MPI_BYTE, peer, TAG_DATA,
			 MPI_COMM_WORLD);
		mt_poison(lg_rbuf, LG_SIZE, 12);
		MPI_Recv(lg_rbuf, LG_SIZE, MPI_BYTE, peer, TAG_DATA,
			 MPI_COMM_WORLD, &st);
		lg_check(&st, lg_rbuf, peer, LG_SIZE, 12, "step 1 (pong)");
	} else {
		mt_poison(lg_rbuf, LG_SIZE, 11);
		MPI_Recv(lg_rbuf, LG_SIZE, MPI_BYTE, peer, TAG_DATA,
			 MPI_COMM_WORLD, &st);
		lg_check(&st, lg_rbuf, peer, LG_SIZE, 11, "step 1 (ping)");
		mt_fill(lg_sbuf, LG_SIZE, 12);
		MPI_Send(lg_sbuf, LG_SIZE, MPI_BYTE, peer, TAG_DATA,
			 MPI_COMM_WORLD);
	}
}

static void lg_exchange(int peer)
{
	size_t size = LG_SIZE + 1;
	MPI_Status st;

	mt_stage("step 2: 64 MiB + 1 exchange with %d", peer);
	mt_fill(lg_sbuf + 1, size, 20 + mt_rank);
	mt_poison(lg_rbuf + 1, size, 20 + peer);
	MPI_Sendrecv(lg_sbuf + 1, (int)size, MPI_BYTE, peer, TAG_DATA,
		     lg_rbuf + 1, (int)size, MPI_BYTE, peer, TAG_DATA,
		     MPI_COMM_WORLD, &st);
	lg_check(&st, lg_rbuf + 1, peer, size, 20 + peer, "step 2");
}

static void lg_unexpected(int peer, int sender)
{
	MPI_Request req;
	MPI_Status st;

	mt_stage("step 3: unexpected 64 MiB, %s %d",
		 sender ? "to" : "from", peer);
	if (sender) {
		mt_fill(lg_sbuf, LG_SIZE, 30);
		MPI_Isend(lg_sbuf, LG_SIZE, MPI_BYTE, peer, TAG_DATA,
			  MPI_COMM_WORLD, &req);
		MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_DONE, MPI_COMM_WORLD);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		return;
	}
	MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_DONE, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	mt_poison(lg_rbuf, LG_SIZE, 30);
	mt_poison(lg_rbuf + LG_SIZE, LG_SLACK, 31);
	MPI_Recv(lg_rbuf, LG_SIZE + LG_SLACK, MPI_BYTE, peer, TAG_DATA,
		 MPI_COMM_WORLD, &st);
	lg_check(&st, lg_rbuf, peer, LG_SIZE, 30, "step 3");
	MT_CHECK(mt_verify_poison(lg_rbuf + LG_SIZE, LG_SLACK, 31) < 0,
		 "step 3: bytes written past the 64 MiB message");
}

static void lg_fan_in(void)
{
	int n = mt_nranks - 1, i, seen[64] = { 0 };
	char **bufs;
	MPI_Request *reqs;
	MPI_Status *sts;

	if (mt_rank != 0) {
		mt_stage("step 4: sending 64 MiB to rank 0");
		mt_fill(lg_sbuf, LG_SIZE, 40 + mt_rank);
		MPI_Send(lg_sbuf, LG_SIZE, MPI_BYTE, 0, TAG_DATA,
			 MPI_COMM_WORLD);
		return;
	}
	mt_stage("step 4: receiving 64 MiB from %d ranks at once", n);
	bufs = mt_malloc(n * sizeof(*bufs));
	reqs = mt_malloc(n * sizeof(*reqs));
	sts = mt_malloc(n * sizeof(*sts));
	for (i = 0; i < n; i++) {
		bufs[i] = i ? mt_malloc(LG_SIZE) : lg_rbuf;
		MPI_Irecv(bufs[i], LG_SIZE, MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA,
			  MPI_COMM_WORLD, &reqs[i]);
	}
	MPI_Waitall(n, reqs, sts);
	for (i = 0; i < n; i++) {
		int src = sts[i].MPI_SOURCE;

		MT_CHECK(src >= 1 && src < mt_nranks && !seen[src],
			 "step 4: receive %d: source %d", i, src);
		seen[src] = 1;
		lg_check(&sts[i], bufs[i], src, LG_SIZE, 40 + src, "step 4");
		if (i)
			free(bufs[i]);
	}
	free(bufs);
	free(reqs);
	free(sts);
}

int main(int argc, char **argv)
{
	int peer;

	mt_init(&argc, &argv, "mpi_large", 90);
	mt_need_ranks(2);
	if (mt_nranks > 64)
		MT_FAIL("at most 64 ranks");
	lg_sbuf = mt_malloc(LG_SIZE + LG_SLACK);
	lg_rbuf = mt_malloc(LG_SIZE + LG_SLACK);
	peer = mt_rank ^ 1;
	if (peer < mt_nranks) {
		lg_pingpong(peer, !(mt_rank & 1));
		lg_exchange(peer);
		lg_unexpected(peer, mt_rank & 1);
		lg_unexpected(peer, !(mt_rank & 1));
	}
	lg_fan_in();
	free(lg_sbuf);
	free(lg_rbuf);
	return mt_finish();
}
