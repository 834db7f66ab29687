/*
 * mpi_flood.c - rank 0 is flooded with unexpected messages from every
 * other rank before it posts receives for them. The provider must absorb
 * the flood in its bounded overflow buffers (eager data) and unexpected
 * headers (rendezvous messages leave only their header), have what the
 * buffers cannot hold sent again as rendezvous, hold senders back with
 * flow control when headers run out, and lose, duplicate or reorder
 * nothing (docs/design.md §7).
 *
 * Rounds 0 and 1 - within the overflow pool, deterministic: 20 000 small
 * messages (12-64 B) in all, with rendezvous ones (64 KiB, 1 MiB) mixed
 * in. Each sender MPI_Isends its share, then a "done" message, and only
 * then waits for its sends. Rank 0 first receives every sender's "done":
 * by per-pair ordering each sender's messages have all been matched
 * against an empty posted list by then, i.e. they are all unexpected.
 *  round 0: rank 0 receives by source and tag, sources interleaved;
 *  round 1: with MPI_ANY_SOURCE and MPI_ANY_TAG, checking per-source
 *           order from the sequence number carried in each message.
 * Round 2 - beyond the pool: each sender sends 300 eager messages of
 * 16 000 B (4.8 MB, more than the default 16 x 256 KiB overflow pool);
 * rank 0 spins for a moment first (without calling MPI, only to make the
 * flood arrive before the receives - no check depends on it) and then
 * receives everything with wildcards.
 * Round 3 - beyond the pool with round 0's handshake: rank 0 first waits
 * for each sender's "done", which comes after more than its overflow
 * buffers can hold. The provider must still deliver it: messages it has
 * no room for come again as rendezvous and leave only their header
 * (a provider whose flow control just held the sender would hang here;
 * the watchdog reports that).
 *
 * Each message carries (round, source, sequence) in its first 12 bytes
 * and a pattern after; count, status and data are checked for every one.
 */
#include "mpi_common.h"

#define FL_TOTAL	20000	/* small messages per round, all senders */
#define FL_MAX		(1 << 20)
#define FL_BIG_N	300	/* round 2: eager messages per sender */
#define FL_BIG		16000
#define TAG_DONE	1
#define TAG_DATA0	16	/* data tags: TAG_DATA0 + seq % 64 */

static int fl_big_round(int round)
{
	return round >= 2;
}

static int fl_per_sender(int round)
{
	return fl_big_round(round) ? FL_BIG_N : FL_TOTAL / (mt_nranks - 1);
}

/* Message seq of a sender in a round: rounds 0-1 mostly 12-64 B, every
 * 1999th 64 KiB and every 4999th 1 MiB (rendezvous); rounds 2-3 eager
 * messages just under the default eager limit. */
static int fl_len_r(int round, int seq)
{
	if (fl_big_round(round))
		return seq % 10 == 9 ? 12 + seq % 53 : FL_BIG;
	if (seq % 4999 == 4998)
		return FL_MAX;
	if (seq % 1999 == 1998)
		return 65536;
	return 12 + seq % 53;
}

/* Rounds 2-3 use one tag: their receives take MPI_ANY_SOURCE and that
 * tag, so round 2's receives cannot catch a "done". */
static int fl_tag_r(int round, int seq)
{
	return fl_big_round(round) ? TAG_DATA0 : TAG_DATA0 + seq % 64;
}

static uint32_t fl_seed(int round, int src, int seq)
{
	return (uint32_t)(round * 10000000 + src * 100000 + seq);
}

static void fl_fill(char *buf, int round, int src, int seq)
{
	int hdr[3] = { round, src, seq };

	memcpy(buf, hdr, sizeof(hdr));
	mt_fill(buf + sizeof(hdr), fl_len_r(round, seq) - sizeof(hdr),
		fl_seed(round, src, seq));
}

static void fl_check(int round, const MPI_Status *st, const char *buf,
		     int src, int seq)
{
	int len = fl_len_r(round, seq), tag = fl_tag_r(round, seq);
	int hdr[3];

	MT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag &&
		 mt_count(st, MPI_BYTE) == len,
		 "round %d: message %d from %d: status source %d tag %d "
		 "count %d, expected tag %d count %d", round, seq, src,
		 st->MPI_SOURCE, st->MPI_TAG, mt_count(st, MPI_BYTE),
		 tag, len);
	memcpy(hdr, buf, sizeof(hdr));
	MT_CHECK(hdr[0] == round && hdr[1] == src && hdr[2] == seq,
		 "round %d: expected message %d from %d, got message %d from "
		 "%d (round %d)", round, seq, src, hdr[2], hdr[1], hdr[0]);
	MT_CHECK_DATA(buf + sizeof(hdr), len - sizeof(hdr),
		      fl_seed(round, src, seq),
		      "round %d: message %d from %d: payload", round, seq,
		      src);
}

static void fl_send(int round)
{
	int n = fl_per_sender(round), seq;
	MPI_Request *reqs = mt_malloc(n * sizeof(*reqs));
	char **bufs = mt_malloc(n * sizeof(*bufs));

	for (seq = 0; seq < n; seq++) {
		bufs[seq] = mt_malloc(fl_len_r(round, seq));
		fl_fill(bufs[seq], round, mt_rank, seq);
	}
	mt_stage("round %d: flooding rank 0 with %d messages", round, n);
	for (seq = 0; seq < n; seq++)
		MPI_Isend(bufs[seq], fl_len_r(round, seq), MPI_BYTE, 0,
			  fl_tag_r(round, seq), MPI_COMM_WORLD, &reqs[seq]);
	mt_stage("round %d: sending done", round);
	MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD);
	mt_stage("round %d: waiting for the %d sends", round, n);
	MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
	for (seq = 0; seq < n; seq++)
		free(bufs[seq]);
	free(bufs);
	free(reqs);
	/* the next round starts only once rank 0 has taken everything */
	MPI_Barrier(MPI_COMM_WORLD);
}

static void fl_wait_done(int round)
{
	int s;

	mt_stage("round %d: waiting for 'done' from every sender", round);
	for (s = 1; s < mt_nranks; s++)
		MPI_Recv(NULL, 0, MPI_BYTE, s, TAG_DONE, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
}

static void fl_recv_specific(char *buf)
{
	int n = fl_per_sender(0), seq, s;
	MPI_Status st;
	double t0 = MPI_Wtime();

	fl_wait_done(0);
	mt_stage("round 0: receiving by source and tag");
	for (seq = 0; seq < n; seq++) {
		for (s = 1; s < mt_nranks; s++) {
			MPI_Recv(buf, FL_MAX, MPI_BYTE, s, fl_tag_r(0, seq),
				 MPI_COMM_WORLD, &st);
			fl_check(0, &st, buf, s, seq);
		}
	}
	printf("mpi_flood: %d unexpected messages from %d senders taken by "
	       "source and tag in %.2f s\n", n * (mt_nranks - 1),
	       mt_nranks - 1, MPI_Wtime() - t0);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Rounds 1-3: MPI_ANY_SOURCE receives (and MPI_ANY_TAG in round 1).
 * With `wait_done` the "done" messages come first (every message is then
 * unexpected); otherwise last. */
static void fl_recv_any(char *buf, int round, int wait_done)
{
	int n = fl_per_sender(round), total = n * (mt_nranks - 1), i, s;
	int next[64] = { 0 };
	MPI_Status st;
	double t0;

	if (wait_done)
		fl_wait_done(round);
	else
		mt_spin(0.5);
	t0 = MPI_Wtime();
	mt_stage("round %d: receiving with ANY_SOURCE", round);
	for (i = 0; i < total; i++) {
		MPI_Recv(buf, FL_MAX, MPI_BYTE, MPI_ANY_SOURCE,
			 fl_big_round(round) ? TAG_DATA0 : MPI_ANY_TAG,
			 MPI_COMM_WORLD, &st);
		s = st.MPI_SOURCE;
		MT_CHECK(s >= 1 && s < mt_nranks && next[s] < n,
			 "round %d: receive %d: source %d (message %d of %d)",
			 round, i, s, s >= 1 && s < mt_nranks ? next[s] : -1,
			 n);
		fl_check(round, &st, buf, s, next[s]++);
	}
	if (!wait_done)
		fl_wait_done(round);
	printf("mpi_flood: round %d: %d messages (%s) taken with wildcards "
	       "in %.2f s\n", round, total,
	       fl_big_round(round) ? "beyond the overflow pool" :
	       "all unexpected", MPI_Wtime() - t0);
	MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	int rounds = 4, i;

	mt_init(&argc, &argv, "mpi_flood", 90);
	mt_need_ranks(2);
	if (mt_nranks > 64)
		MT_FAIL("at most 64 ranks");
	if (argc > 1)
		MT_FAIL("usage: mpi_flood");
	if (mt_rank == 0) {
		char *buf = mt_malloc(FL_MAX);

		fl_recv_specific(buf);
		fl_recv_any(buf, 1, 1);
		fl_recv_any(buf, 2, 0);
		fl_recv_any(buf, 3, 1);
		free(buf);
	} else {
		for (i = 0; i < rounds; i++)
			fl_send(i);
	}
	return mt_finish();
}
