/*
 * mpi_cancel.c - MPI_Cancel of posted receives. Open MPI's ofi MTL turns it
 * into fi_cancel on the receive's context and waits for the FI_ECANCELED
 * completion, so a provider that loses the cancel hangs here (the watchdog
 * then names the step) and one that cancels the wrong receive fails a
 * data check.
 *
 * Ranks pair up (even receives, odd sends). For each round:
 *  1  post receives for tags nobody sends interleaved with receives for
 *     tags that will be sent (specific source and ANY_SOURCE, eager and
 *     rendezvous sizes); cancel the first kind; "go"; the others complete
 *     with the right data, and the cancelled ones report
 *     MPI_Test_cancelled true with their buffers untouched;
 *  2  messages are then sent with a cancelled receive's tag: it must not
 *     land in the cancelled buffer but in a receive posted afterwards;
 *  3  (once, after the rounds) a receive posted when its message had
 *     already arrived - eager and rendezvous - completes with the data
 *     even if MPI_Cancel follows at once (MPI_Test_cancelled false).
 */
#include "mpi_common.h"

#define CN_N		32	/* receives per round, half of them cancelled */
#define CN_MAX		70000
#define CN_ROUNDS	3
#define TAG_GO		1
#define TAG_LATE	2	/* step 2 ends with this */
#define TAG_BASE	100

static int cn_len(int i)
{
	return i % 4 == 1 ? 40000 + i : i * 3;
}

/* Receive i of a round: even ones are cancelled. */
static int cn_cancelled(int i)
{
	return i % 2 == 0;
}

static int cn_tag(int round, int i)
{
	return TAG_BASE + round * CN_N + i;
}

static uint32_t cn_seed(int round, int i)
{
	return (uint32_t)(round * 1000 + i + 7);
}

/* Step 2's messages: one eager, one rendezvous. */
static int cn_late_len(int i)
{
	return i ? 50000 : 77;
}

static void cn_sender(int peer)
{
	char *buf = mt_malloc(CN_MAX);
	char *late[2] = { mt_malloc(CN_MAX), mt_malloc(CN_MAX) };
	MPI_Request reqs[2];
	int round, i;

	for (round = 0; round < CN_ROUNDS; round++) {
		mt_stage("round %d: sender waiting for go", round);
		MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		mt_stage("round %d: sending", round);
		/* reverse order of posting: distinct tags, so the order
		 * must not matter */
		for (i = CN_N - 1; i >= 0; i--) {
			if (cn_cancelled(i))
				continue;
			mt_fill(buf, cn_len(i), cn_seed(round, i));
			MPI_Send(buf, cn_len(i), MPI_BYTE, peer,
				 cn_tag(round, i), MPI_COMM_WORLD);
		}
		/* step 2: the tags of cancelled receives 0 (eager) and 2
		 * (rendezvous: sent with Isend, as the receiver posts only
		 * after TAG_LATE) */
		for (i = 0; i < 2; i++) {
			mt_fill(late[i], cn_late_len(i),
				cn_seed(round, 2 * i) ^ 0xff);
			MPI_Isend(late[i], cn_late_len(i), MPI_BYTE, peer,
				  cn_tag(round, 2 * i), MPI_COMM_WORLD,
				  &reqs[i]);
		}
		MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_LATE, MPI_COMM_WORLD);
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
	}
	free(buf);
	free(late[0]);
	free(late[1]);
}

static void cn_receiver(int peer)
{
	char *bufs[CN_N];
	MPI_Request reqs[CN_N];
	MPI_Status sts[CN_N], st;
	char *late = mt_malloc(CN_MAX);
	int round, i, cancelled;

	for (i = 0; i < CN_N; i++)
		bufs[i] = mt_malloc(CN_MAX);
	for (round = 0; round < CN_ROUNDS; round++) {
		mt_stage("round %d: posting and cancelling", round);
		for (i = 0; i < CN_N; i++) {
			int src = i % 3 == 0 ? MPI_ANY_SOURCE : peer;

			mt_poison(bufs[i], CN_MAX, cn_seed(round, i));
			MPI_Irecv(bufs[i], CN_MAX, MPI_BYTE, src,
				  cn_tag(round, i), MPI_COMM_WORLD, &reqs[i]);
		}
		for (i = 0; i < CN_N; i++)
			if (cn_cancelled(i))
				MPI_Cancel(&reqs[i]);
		MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD);
		mt_stage("round %d: waiting for the receives (cancelled and "
			 "not)", round);
		MPI_Waitall(CN_N, reqs, sts);
		for (i = 0; i < CN_N; i++) {
			MPI_Test_cancelled(&sts[i], &cancelled);
			if (cn_cancelled(i)) {
				MT_CHECK(cancelled, "round %d: receive %d "
					 "(tag %d) was not cancelled", round,
					 i, cn_tag(round, i));
				MT_CHECK(mt_verify_poison(bufs[i], CN_MAX,
							  cn_seed(round, i))
					 < 0, "round %d: cancelled receive %d "
					 "has data in its buffer", round, i);
				continue;
			}
			MT_CHECK(!cancelled, "round %d: receive %d (tag %d) "
				 "reported cancelled, but its message was "
				 "sent", round, i, cn_tag(round, i));
			MT_CHECK(sts[i].MPI_SOURCE == peer &&
				 sts[i].MPI_TAG == cn_tag(round, i) &&
				 mt_count(&sts[i], MPI_BYTE) == cn_len(i),
				 "round %d: receive %d: source %d tag %d count "
				 "%d", round, i, sts[i].MPI_SOURCE,
				 sts[i].MPI_TAG, mt_count(&sts[i], MPI_BYTE));
			MT_CHECK_DATA(bufs[i], cn_len(i), cn_seed(round, i),
				      "round %d: receive %d: wrong data",
				      round, i);
		}

		/* step 2: the messages sent with cancelled tags arrive
		 * unexpected (the sender sent them before TAG_LATE) and the
		 * cancelled buffers stay untouched */
		mt_stage("round %d: messages with cancelled tags", round);
		MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_LATE, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		for (i = 0; i < 2; i++) {
			MT_CHECK(mt_verify_poison(bufs[2 * i], CN_MAX,
						  cn_seed(round, 2 * i)) < 0,
				 "round %d: a message with the tag of "
				 "cancelled receive %d was written into its "
				 "buffer", round, 2 * i);
			mt_poison(late, CN_MAX, 1);
			MPI_Recv(late, CN_MAX, MPI_BYTE, peer,
				 cn_tag(round, 2 * i), MPI_COMM_WORLD, &st);
			MT_CHECK(mt_count(&st, MPI_BYTE) == cn_late_len(i),
				 "round %d: late message with tag %d: count "
				 "%d", round, cn_tag(round, 2 * i),
				 mt_count(&st, MPI_BYTE));
			MT_CHECK_DATA(late, cn_late_len(i),
				      cn_seed(round, 2 * i) ^ 0xff,
				      "round %d: late message with tag %d",
				      round, cn_tag(round, 2 * i));
		}
	}

	/* step 3: MPI_Cancel of a receive that matched a message which
	 * had already arrived must not undo the match */
	mt_stage("cancel of a receive whose message already arrived");
	MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD);
	MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_LATE, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	mt_poison(late, CN_MAX, 2);
	MPI_Irecv(late, CN_MAX, MPI_BYTE, peer, TAG_BASE - 1, MPI_COMM_WORLD,
		  &reqs[0]);
	MPI_Wait(&reqs[0], &st);	/* matched at post: complete */
	MPI_Test_cancelled(&st, &cancelled);
	MT_CHECK(!cancelled, "a completed receive reports cancelled");
	MT_CHECK_DATA(late, 5000, 3, "receive of an arrived message");

	mt_poison(late, CN_MAX, 2);
	MPI_Irecv(late, CN_MAX, MPI_BYTE, peer, TAG_BASE - 2, MPI_COMM_WORLD,
		  &reqs[0]);
	MPI_Cancel(&reqs[0]);
	MPI_Wait(&reqs[0], &st);
	MPI_Test_cancelled(&st, &cancelled);
	/* the message was already there, so the receive matched at post:
	 * it must have completed with the data, not been cancelled */
	MT_CHECK(!cancelled, "a receive matched at post time (message "
		 "already arrived) was cancelled");
	MT_CHECK_DATA(late, 30000, 4, "receive matched at post, then "
		      "cancelled");

	for (i = 0; i < CN_N; i++)
		free(bufs[i]);
	free(late);
}

static void cn_sender_tail(int peer)
{
	char *buf = mt_malloc(5000), *big = mt_malloc(30000);
	MPI_Request req[2];

	MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	mt_fill(buf, 5000, 3);
	mt_fill(big, 30000, 4);
	/* both by MPI_Isend: the receiver only posts after TAG_LATE, and
	 * an MPI may send 5000 bytes by rendezvous too (Open MPI's mtl
	 * portals4 does above 2 KiB): a blocking send would wait for it */
	MPI_Isend(buf, 5000, MPI_BYTE, peer, TAG_BASE - 1, MPI_COMM_WORLD,
		  &req[0]);
	MPI_Isend(big, 30000, MPI_BYTE, peer, TAG_BASE - 2, MPI_COMM_WORLD,
		  &req[1]);
	MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_LATE, MPI_COMM_WORLD);
	MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
	free(buf);
	free(big);
}

int main(int argc, char **argv)
{
	int peer;

	mt_init(&argc, &argv, "mpi_cancel", 60);
	mt_need_ranks(2);
	peer = mt_rank ^ 1;
	if (peer < mt_nranks) {
		if (mt_rank & 1) {
			cn_sender(peer);
			cn_sender_tail(peer);
		} else {
			cn_receiver(peer);
		}
	}
	return mt_finish();
}
