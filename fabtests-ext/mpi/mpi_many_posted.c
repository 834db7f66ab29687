/*
 * mpi_many_posted.c - 10 000 posted receives with distinct tags, matched in
 * the reverse order of posting: the senders send the tags from the highest
 * down, so every message matches the most recently posted receive still
 * waiting - the worst case for a matcher that walks a list in posting order.
 *
 * Rank 0 posts all receives, then says "go"; the other ranks share the
 * tags (tag t comes from rank 1 + t % (ranks - 1)) and send theirs in
 * descending order. Every 1000th message is 20 000 B (rendezvous), the rest
 * 8 B. Each message carries its tag and sender in its first 8 bytes and a
 * pattern after, so a message that landed in another tag's receive fails
 * the check; status source, tag and count are checked for every receive.
 *
 * Two rounds: receives naming their source, then receives with
 * MPI_ANY_SOURCE (the source must still be the one the tag belongs to).
 * Rank 0 prints how long posting and matching took (information only).
 */
#include "mpi_common.h"

#define MP_N		10000
#define MP_TAG0		100
#define MP_BIG		20000
#define TAG_GO		1

static int mp_len(int t)
{
	return t % 1000 == 999 ? MP_BIG : 8;
}

static int mp_src(int t)
{
	return 1 + t % (mt_nranks - 1);
}

static uint32_t mp_seed(int round, int t)
{
	return (uint32_t)(round * 100000 + t);
}

/* First 8 bytes: tag index and sender, as two ints; then the pattern. */
static void mp_fill(char *buf, int round, int t)
{
	int hdr[2] = { t, mp_src(t) };

	memcpy(buf, hdr, sizeof(hdr));
	mt_fill(buf + sizeof(hdr), mp_len(t) - sizeof(hdr), mp_seed(round, t));
}

static void mp_send(int round)
{
	static char buf[MP_BIG];
	int t;

	mt_stage("round %d: sender waiting for go", round);
	MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	mt_stage("round %d: sending", round);
	for (t = MP_N - 1; t >= 0; t--) {
		if (mp_src(t) != mt_rank)
			continue;
		mp_fill(buf, round, t);
		MPI_Send(buf, mp_len(t), MPI_BYTE, 0, MP_TAG0 + t,
			 MPI_COMM_WORLD);
	}
}

static void mp_recv(int round, char **bufs, MPI_Request *reqs,
		    MPI_Status *sts)
{
	double t0, t1, t2;
	int t, s;

	mt_stage("round %d: posting %d receives", round, MP_N);
	t0 = MPI_Wtime();
	for (t = 0; t < MP_N; t++) {
		mt_poison(bufs[t], mp_len(t), mp_seed(round, t));
		MPI_Irecv(bufs[t], mp_len(t), MPI_BYTE,
			  round ? MPI_ANY_SOURCE : mp_src(t), MP_TAG0 + t,
			  MPI_COMM_WORLD, &reqs[t]);
	}
	t1 = MPI_Wtime();
	for (s = 1; s < mt_nranks; s++)
		MPI_Send(NULL, 0, MPI_BYTE, s, TAG_GO, MPI_COMM_WORLD);
	mt_stage("round %d: waiting for %d receives to complete", round, MP_N);
	MPI_Waitall(MP_N, reqs, sts);
	t2 = MPI_Wtime();

	for (t = 0; t < MP_N; t++) {
		int hdr[2];

		MT_CHECK(sts[t].MPI_SOURCE == mp_src(t) &&
			 sts[t].MPI_TAG == MP_TAG0 + t &&
			 mt_count(&sts[t], MPI_BYTE) == mp_len(t),
			 "round %d: receive for tag %d got source %d tag %d "
			 "count %d, expected source %d count %d", round,
			 MP_TAG0 + t, sts[t].MPI_SOURCE, sts[t].MPI_TAG,
			 mt_count(&sts[t], MPI_BYTE), mp_src(t), mp_len(t));
		memcpy(hdr, bufs[t], sizeof(hdr));
		MT_CHECK(hdr[0] == t && hdr[1] == mp_src(t),
			 "round %d: receive for tag %d holds the message of "
			 "tag %d from %d", round, MP_TAG0 + t, MP_TAG0 + hdr[0],
			 hdr[1]);
		MT_CHECK_DATA(bufs[t] + sizeof(hdr), mp_len(t) - sizeof(hdr),
			      mp_seed(round, t), "round %d: tag %d: payload",
			      round, MP_TAG0 + t);
	}
	printf("mpi_many_posted: %s: posted %d receives in %.1f ms, "
	       "matched in reverse order in %.1f ms\n",
	       round ? "ANY_SOURCE" : "specific source", MP_N,
	       (t1 - t0) * 1e3, (t2 - t1) * 1e3);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int round, t;

	mt_init(&argc, &argv, "mpi_many_posted", 60);
	mt_need_ranks(2);
	if (mt_rank == 0) {
		char **bufs = mt_malloc(MP_N * sizeof(*bufs));
		MPI_Request *reqs = mt_malloc(MP_N * sizeof(*reqs));
		MPI_Status *sts = mt_malloc(MP_N * sizeof(*sts));

		for (t = 0; t < MP_N; t++)
			bufs[t] = mt_malloc(mp_len(t));
		for (round = 0; round < 2; round++)
			mp_recv(round, bufs, reqs, sts);
		for (t = 0; t < MP_N; t++)
			free(bufs[t]);
		free(bufs);
		free(reqs);
		free(sts);
	} else {
		for (round = 0; round < 2; round++)
			mp_send(round);
	}
	return mt_finish();
}
