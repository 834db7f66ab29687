/*
 * mpi_ssend.c - synchronous sends (MPI_Ssend, MPI_Issend). Open MPI's ofi
 * MTL sends the message with a sync bit in the tag and posts a receive for
 * an acknowledgement; the receiving MTL answers a matched sync message
 * with a 0-byte fi_tsendmsg without FI_COMPLETION and with a NULL context
 * (selective completion). So this exercises: receives posted before the
 * message they wait for, completion-less sends with no context, and - the
 * MPI rule - a synchronous send that must not complete before a receive
 * has matched it.
 *
 * Ranks pair up (even receives, odd sends); sizes 0 B to 1 MiB, eager and
 * rendezvous. For each size:
 *  1  MPI_Issend while the receiver has no receive posted: the sender
 *     tests the request many times and it must stay incomplete (no
 *     timing involved: the receiver posts nothing until the sender says
 *     it has finished testing); the receiver first MPI_Probes the message
 *     (a probe is not a match: the sender tests again, still incomplete),
 *     then receives it; the sender's MPI_Wait then completes;
 *  2  MPI_Ssend against a receive posted in advance (ANY_SOURCE);
 *  3  a burst of MPI_Issends with distinct tags, received in reverse
 *     order, half of them after a wildcard probe (MPI_Mprobe/MPI_Mrecv
 *     where the MPI library supports it, see SS_MRECV_ACKS);
 * and, on every rank, an MPI_Issend to itself matched by its own receive.
 */
#include "mpi_common.h"

/* Open MPI 4.1's ofi MTL never acknowledges a synchronous send that is
 * received with MPI_Mrecv, so the MPI_Issend hangs whatever the provider
 * does; fixed in Open MPI 5 (ompi commit edb9b60, "allow MRecv to process
 * SSend's"). There, probe + receive replaces Mprobe + Mrecv. */
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
#define SS_MRECV_ACKS	0
#else
#define SS_MRECV_ACKS	1
#endif

#define SS_TESTS	2000	/* MPI_Test calls that must all say "no" */
#define SS_BURST	16
#define TAG_CTL		1
#define TAG_DATA	2
#define TAG_BURST	100

static const int ss_sizes[] = { 0, 1, 64, 4096, 16384, 16385, 70000,
				1 << 20 };
#define SS_NSIZES	((int)(sizeof(ss_sizes) / sizeof(ss_sizes[0])))
#define SS_MAX		(1 << 20)

static uint32_t ss_seed(int step, int size_idx, int i)
{
	return (uint32_t)(step * 100000 + size_idx * 100 + i);
}

static void ss_ctl_send(int peer)
{
	MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_CTL, MPI_COMM_WORLD);
}

static void ss_ctl_recv(int peer)
{
	MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_CTL, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
}

/* The request must still be pending: nobody has received its message. */
static void ss_expect_pending(MPI_Request *req, int size, const char *when)
{
	int i, flag;

	for (i = 0; i < SS_TESTS; i++) {
		MPI_Test(req, &flag, MPI_STATUS_IGNORE);
		MT_CHECK(!flag, "%d B: MPI_Issend completed %s (test %d), "
			 "before any receive matched it", size, when, i);
	}
}

static void ss_check_recv(const MPI_Status *st, const char *buf, int peer,
			  int tag, int size, uint32_t seed, const char *what)
{
	MT_CHECK(st->MPI_SOURCE == peer && st->MPI_TAG == tag &&
		 mt_count(st, MPI_BYTE) == size,
		 "%s, %d B: source %d tag %d count %d, expected %d %d %d",
		 what, size, st->MPI_SOURCE, st->MPI_TAG,
		 mt_count(st, MPI_BYTE), peer, tag, size);
	MT_CHECK_DATA(buf, size, seed, "%s, %d B: wrong data", what, size);
}

static void ss_sender(int peer, char *sbufs[SS_BURST])
{
	MPI_Request reqs[SS_BURST];
	int k, i, size;

	for (k = 0; k < SS_NSIZES; k++) {
		size = ss_sizes[k];

		mt_stage("step 1, %d B: Issend not yet received", size);
		mt_fill(sbufs[0], size, ss_seed(1, k, 0));
		MPI_Issend(sbufs[0], size, MPI_BYTE, peer, TAG_DATA,
			   MPI_COMM_WORLD, &reqs[0]);
		ss_expect_pending(&reqs[0], size, "with no receive posted");
		ss_ctl_send(peer);	/* "done testing": you may probe */
		ss_ctl_recv(peer);	/* "probed" */
		ss_expect_pending(&reqs[0], size, "after a probe");
		ss_ctl_send(peer);	/* "done testing": you may receive */
		mt_stage("step 1, %d B: waiting for the Issend", size);
		MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);

		mt_stage("step 2, %d B: Ssend to a posted receive", size);
		mt_fill(sbufs[0], size, ss_seed(2, k, 0));
		ss_ctl_recv(peer);	/* receive posted */
		MPI_Ssend(sbufs[0], size, MPI_BYTE, peer, TAG_DATA,
			  MPI_COMM_WORLD);

		mt_stage("step 3, %d B: burst of Issends", size);
		for (i = 0; i < SS_BURST; i++) {
			mt_fill(sbufs[i], size, ss_seed(3, k, i));
			MPI_Issend(sbufs[i], size, MPI_BYTE, peer,
				   TAG_BURST + i, MPI_COMM_WORLD, &reqs[i]);
		}
		MPI_Waitall(SS_BURST, reqs, MPI_STATUSES_IGNORE);
	}
}

static void ss_receiver(int peer, char *rbuf)
{
	MPI_Request req;
	MPI_Message msg;
	MPI_Status st;
	int k, i, size;

	for (k = 0; k < SS_NSIZES; k++) {
		size = ss_sizes[k];

		mt_stage("step 1, %d B: waiting for the sender's tests", size);
		ss_ctl_recv(peer);
		MPI_Probe(peer, TAG_DATA, MPI_COMM_WORLD, &st);
		MT_CHECK(mt_count(&st, MPI_BYTE) == size, "step 1, %d B: "
			 "probe count %d", size, mt_count(&st, MPI_BYTE));
		ss_ctl_send(peer);
		ss_ctl_recv(peer);
		mt_poison(rbuf, size, ss_seed(1, k, 0));
		MPI_Recv(rbuf, SS_MAX, MPI_BYTE, peer, TAG_DATA,
			 MPI_COMM_WORLD, &st);
		ss_check_recv(&st, rbuf, peer, TAG_DATA, size,
			      ss_seed(1, k, 0), "step 1 (Issend)");

		mt_poison(rbuf, size, ss_seed(2, k, 0));
		MPI_Irecv(rbuf, SS_MAX, MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA,
			  MPI_COMM_WORLD, &req);
		ss_ctl_send(peer);
		mt_stage("step 2, %d B: posted receive for an Ssend", size);
		MPI_Wait(&req, &st);
		ss_check_recv(&st, rbuf, peer, TAG_DATA, size,
			      ss_seed(2, k, 0), "step 2 (Ssend, posted)");

		mt_stage("step 3, %d B: receiving the burst", size);
		for (i = SS_BURST - 1; i >= 0; i--) {
			mt_poison(rbuf, size, ss_seed(3, k, i));
			if (i % 2 && SS_MRECV_ACKS) {
				MPI_Mprobe(MPI_ANY_SOURCE, TAG_BURST + i,
					   MPI_COMM_WORLD, &msg, &st);
				MPI_Mrecv(rbuf, SS_MAX, MPI_BYTE, &msg, &st);
			} else if (i % 2) {
				MPI_Probe(MPI_ANY_SOURCE, TAG_BURST + i,
					  MPI_COMM_WORLD, &st);
				MPI_Recv(rbuf, SS_MAX, MPI_BYTE, st.MPI_SOURCE,
					 st.MPI_TAG, MPI_COMM_WORLD, &st);
			} else {
				MPI_Recv(rbuf, SS_MAX, MPI_BYTE, peer,
					 TAG_BURST + i, MPI_COMM_WORLD, &st);
			}
			ss_check_recv(&st, rbuf, peer, TAG_BURST + i, size,
				      ss_seed(3, k, i), "step 3 (burst)");
		}
	}
}

/* Synchronous send to oneself: MPI delivers it through the MTL too. */
static void ss_self(char *sbuf, char *rbuf)
{
	MPI_Request sreq, rreq;
	MPI_Status st;
	int k, flag, size;

	for (k = 0; k < SS_NSIZES; k++) {
		size = ss_sizes[k];
		mt_stage("self, %d B: Issend to myself", size);
		mt_fill(sbuf, size, ss_seed(4, k, mt_rank));
		mt_poison(rbuf, size, ss_seed(4, k, mt_rank));
		MPI_Issend(sbuf, size, MPI_BYTE, mt_rank, TAG_DATA,
			   MPI_COMM_WORLD, &sreq);
		MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE);
		MT_CHECK(!flag, "self, %d B: Issend to myself completed "
			 "before its receive was posted", size);
		MPI_Irecv(rbuf, SS_MAX, MPI_BYTE, mt_rank, TAG_DATA,
			  MPI_COMM_WORLD, &rreq);
		MPI_Wait(&rreq, &st);
		MPI_Wait(&sreq, MPI_STATUS_IGNORE);
		ss_check_recv(&st, rbuf, mt_rank, TAG_DATA, size,
			      ss_seed(4, k, mt_rank), "self");
	}
}

int main(int argc, char **argv)
{
	char *bufs[SS_BURST];
	int peer, i;

	mt_init(&argc, &argv, "mpi_ssend", 60);
	mt_need_ranks(2);
	for (i = 0; i < SS_BURST; i++)
		bufs[i] = mt_malloc(SS_MAX);
	peer = mt_rank ^ 1;
	if (peer < mt_nranks) {
		if (mt_rank & 1)
			ss_sender(peer, bufs);
		else
			ss_receiver(peer, bufs[0]);
	}
	ss_self(bufs[0], bufs[1]);
	for (i = 0; i < SS_BURST; i++)
		free(bufs[i]);
	return mt_finish();
}
