/*
 * mpi_probe.c - MPI_Iprobe, MPI_Probe, MPI_Mprobe/MPI_Mrecv and
 * MPI_Improbe/MPI_Mrecv on eager and rendezvous messages. Through Open
 * MPI's ofi MTL these become FI_PEEK receives (probe) and FI_PEEK|FI_CLAIM
 * followed by an FI_CLAIM receive (matched probe), so this is where the
 * provider's peek/claim path meets a real consumer.
 *
 * Rank 0 probes and receives; every other rank sends. Message bytes come
 * from (phase, source, sequence number); sizes mix eager (0-100 B, 4 KiB)
 * and rendezvous (50 000 B, 300 000 B) messages. Phases:
 *  1  unexpected (every sender's "done" received first): MPI_Iprobe with
 *     ANY_SOURCE/ANY_TAG must report each message in per-source order with
 *     the right source, tag and count; then MPI_Recv of exactly that one.
 *     An Iprobe for a tag nobody sent must say "no message".
 *  2  MPI_Probe (blocking) by specific source and tag, in an order other
 *     than the send order, while the messages are still arriving.
 *  3  MPI_Mprobe: the claimed message leaves the matching queue - a later
 *     Iprobe or Irecv with the same (wildcard) criteria gets the *next*
 *     message - and MPI_Mrecv delivers the claimed one's bytes.
 *  4  MPI_Improbe polled until it finds each message (messages still in
 *     flight), then MPI_Mrecv; MPI_Improbe of a tag nobody sent finds
 *     nothing and claims nothing.
 */
#include "mpi_common.h"

#define PB_K		24	/* messages per sender per phase */
#define PB_MAX		300000
#define TAG_GO		1000
#define TAG_DONE	1001
#define TAG_NEVER	999	/* no message ever carries it */

static char *pb_sbuf[PB_K];
static char *pb_rbuf;

static int pb_len(int seq)
{
	switch (seq % 6) {
	case 2:
		return 50000;
	case 4:
		return seq == 10 ? PB_MAX : 4096;
	default:
		return (seq * 37) % 101;	/* 0..100 */
	}
}

static int pb_tag(int phase, int seq)
{
	return 10 + (phase * 3 + seq * 5) % 11;
}

static uint32_t pb_seed(int phase, int src, int seq)
{
	return (uint32_t)(phase * 1000000 + src * 10000 + seq);
}

/* ---- sender ------------------------------------------------------------- */

static void pb_send(int phase, int with_done)
{
	MPI_Request reqs[PB_K];
	int seq;

	mt_stage("phase %d: sender waiting for go", phase);
	MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	mt_stage("phase %d: sending", phase);
	for (seq = 0; seq < PB_K; seq++) {
		mt_fill(pb_sbuf[seq], pb_len(seq),
			pb_seed(phase, mt_rank, seq));
		MPI_Isend(pb_sbuf[seq], pb_len(seq), MPI_BYTE, 0,
			  pb_tag(phase, seq), MPI_COMM_WORLD, &reqs[seq]);
	}
	if (with_done)
		MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD);
	MPI_Waitall(PB_K, reqs, MPI_STATUSES_IGNORE);
}

/* ---- receiver ----------------------------------------------------------- */

static int pb_next[64];

static void pb_go_all(void)
{
	int s;

	memset(pb_next, 0, sizeof(pb_next));
	for (s = 1; s < mt_nranks; s++)
		MPI_Send(NULL, 0, MPI_BYTE, s, TAG_GO, MPI_COMM_WORLD);
}

static void pb_wait_done_all(void)
{
	int s;

	mt_stage("waiting for 'done' from every sender");
	for (s = 1; s < mt_nranks; s++)
		MPI_Recv(NULL, 0, MPI_BYTE, s, TAG_DONE, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
}

/* A probe reported `st`: it must describe message `seq` of its source. */
static void pb_check_status(int phase, const MPI_Status *st, int seq,
			    const char *what)
{
	int src = st->MPI_SOURCE;

	MT_CHECK(st->MPI_TAG == pb_tag(phase, seq) &&
		 mt_count(st, MPI_BYTE) == pb_len(seq),
		 "phase %d %s: message %d from %d: status tag %d count %d, "
		 "expected tag %d count %d", phase, what, seq, src,
		 st->MPI_TAG, mt_count(st, MPI_BYTE), pb_tag(phase, seq),
		 pb_len(seq));
}

/* The message received into pb_rbuf with status `st` must be message `seq`
 * of its source. */
static void pb_check_msg(int phase, const MPI_Status *st, int seq,
			 const char *what)
{
	pb_check_status(phase, st, seq, what);
	MT_CHECK_DATA(pb_rbuf, pb_len(seq), pb_seed(phase, st->MPI_SOURCE,
						    seq),
		      "phase %d %s: message %d from %d: wrong data", phase,
		      what, seq, st->MPI_SOURCE);
}

/* The sequence number the next message from st's source must have. */
static int pb_src_peek(const MPI_Status *st, int phase)
{
	int src = st->MPI_SOURCE;

	MT_CHECK(src >= 1 && src < mt_nranks && pb_next[src] < PB_K,
		 "phase %d: status names source %d (next %d)", phase, src,
		 src >= 1 && src < mt_nranks ? pb_next[src] : -1);
	return pb_next[src];
}

static int pb_src_next(const MPI_Status *st, int phase)
{
	int seq = pb_src_peek(st, phase);

	pb_next[st->MPI_SOURCE]++;
	return seq;
}

static void pb_never_there(int phase)
{
	MPI_Status st;
	int flag = 1;

	MPI_Iprobe(MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &flag, &st);
	MT_CHECK(!flag, "phase %d: Iprobe found a message with tag %d that "
		 "nobody sent (source %d, count %d)", phase, TAG_NEVER,
		 st.MPI_SOURCE, mt_count(&st, MPI_BYTE));
}

static void pb_phase1(void)
{
	int total = PB_K * (mt_nranks - 1), i, seq, flag;
	MPI_Status st, rst;

	mt_stage("phase 1: Iprobe of unexpected messages");
	pb_go_all();
	pb_wait_done_all();
	pb_never_there(1);
	for (i = 0; i < total; i++) {
		/* every message is here: the first Iprobe must find one */
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
			   &st);
		MT_CHECK(flag, "phase 1: Iprobe found nothing with %d of %d "
			 "messages still queued", total - i, total);
		seq = pb_src_next(&st, 1);
		pb_check_status(1, &st, seq, "Iprobe");
		/* a second probe must see the same message: peek consumes
		 * nothing */
		MPI_Iprobe(st.MPI_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
			   &rst);
		MT_CHECK(flag && rst.MPI_TAG == st.MPI_TAG &&
			 mt_count(&rst, MPI_BYTE) == mt_count(&st, MPI_BYTE),
			 "phase 1: second Iprobe of message %d from %d "
			 "differs", seq, st.MPI_SOURCE);
		mt_poison(pb_rbuf, pb_len(seq), 0);
		MPI_Recv(pb_rbuf, PB_MAX, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG,
			 MPI_COMM_WORLD, &rst);
		pb_check_msg(1, &rst, seq, "Recv after Iprobe");
	}
	pb_never_there(1);
}

/* Blocking probes by source and tag, taking each sender's messages in
 * reverse order of tag value (not the send order). */
static void pb_phase2(void)
{
	int s, t, seq;
	MPI_Status st, rst;

	mt_stage("phase 2: MPI_Probe by source and tag");
	pb_go_all();
	for (s = 1; s < mt_nranks; s++) {
		for (t = 20; t >= 10; t--) {
			for (seq = 0; seq < PB_K; seq++) {
				if (pb_tag(2, seq) != t)
					continue;
				MPI_Probe(s, t, MPI_COMM_WORLD, &st);
				MT_CHECK(st.MPI_SOURCE == s,
					 "phase 2: Probe(%d) got source %d",
					 s, st.MPI_SOURCE);
				/* the first one with this tag is the oldest */
				pb_check_status(2, &st, seq, "Probe");
				mt_poison(pb_rbuf, pb_len(seq), 0);
				MPI_Recv(pb_rbuf, PB_MAX, MPI_BYTE, s, t,
					 MPI_COMM_WORLD, &rst);
				pb_check_msg(2, &rst, seq, "Recv after Probe");
			}
		}
	}
}

/* Mprobe claims a message; a wildcard Iprobe and Irecv then see the next
 * one; Mrecv gets the claimed bytes. */
static void pb_phase3(void)
{
	int total = PB_K * (mt_nranks - 1), i, seq, nseq, flag;
	char *other = mt_malloc(PB_MAX);
	MPI_Message msg;
	MPI_Request req;
	MPI_Status st, nst, rst;

	mt_stage("phase 3: MPI_Mprobe/MPI_Mrecv");
	pb_go_all();
	pb_wait_done_all();
	for (i = 0; i < total; i += 2) {
		MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg,
			   &st);
		MT_CHECK(msg != MPI_MESSAGE_NULL, "phase 3: Mprobe returned "
			 "MPI_MESSAGE_NULL");
		seq = pb_src_next(&st, 3);
		pb_check_status(3, &st, seq, "Mprobe");
		if (i + 1 < total) {
			/* the claimed message is gone from the queue */
			MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG,
				   MPI_COMM_WORLD, &flag, &nst);
			MT_CHECK(flag, "phase 3: Iprobe after Mprobe found "
				 "nothing, %d messages left", total - i - 1);
			nseq = pb_src_peek(&nst, 3);
			pb_check_status(3, &nst, nseq,
					"Iprobe after Mprobe (claimed message "
					"seen again?)");
			MPI_Irecv(other, PB_MAX, MPI_BYTE, nst.MPI_SOURCE,
				  MPI_ANY_TAG, MPI_COMM_WORLD, &req);
			MPI_Wait(&req, &nst);
			nseq = pb_src_next(&nst, 3);
			pb_check_status(3, &nst, nseq, "Irecv after Mprobe");
			MT_CHECK_DATA(other, pb_len(nseq),
				      pb_seed(3, nst.MPI_SOURCE, nseq),
				      "phase 3: Irecv after Mprobe: message "
				      "%d from %d: wrong data", nseq,
				      nst.MPI_SOURCE);
		}
		mt_poison(pb_rbuf, pb_len(seq), 0);
		MPI_Mrecv(pb_rbuf, PB_MAX, MPI_BYTE, &msg, &rst);
		MT_CHECK(msg == MPI_MESSAGE_NULL, "phase 3: Mrecv left the "
			 "message handle set");
		MT_CHECK(rst.MPI_SOURCE == st.MPI_SOURCE,
			 "phase 3: Mrecv status source %d, Mprobe said %d",
			 rst.MPI_SOURCE, st.MPI_SOURCE);
		pb_check_msg(3, &rst, seq, "Mrecv");
	}
	free(other);
}

/* Improbe polled while the messages arrive. */
static void pb_phase4(void)
{
	int total = PB_K * (mt_nranks - 1), i, seq, flag;
	MPI_Message msg;
	MPI_Status st, rst;

	mt_stage("phase 4: MPI_Improbe/MPI_Mrecv");
	pb_go_all();
	for (i = 0; i < total; i++) {
		flag = 0;
		while (!flag)
			MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG,
				    MPI_COMM_WORLD, &flag, &msg, &st);
		seq = pb_src_next(&st, 4);
		pb_check_status(4, &st, seq, "Improbe");
		mt_poison(pb_rbuf, pb_len(seq), 0);
		MPI_Mrecv(pb_rbuf, PB_MAX, MPI_BYTE, &msg, &rst);
		pb_check_msg(4, &rst, seq, "Mrecv after Improbe");
	}
	flag = 1;
	MPI_Improbe(MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &flag, &msg,
		    &st);
	MT_CHECK(!flag && msg == MPI_MESSAGE_NULL,
		 "phase 4: Improbe claimed a message with tag %d that nobody "
		 "sent", TAG_NEVER);
}

int main(int argc, char **argv)
{
	int phase, i;

	mt_init(&argc, &argv, "mpi_probe", 60);
	mt_need_ranks(2);
	if (mt_nranks > 64)
		MT_FAIL("at most 64 ranks");
	if (mt_rank == 0) {
		pb_rbuf = mt_malloc(PB_MAX);
		pb_phase1();
		pb_phase2();
		pb_phase3();
		pb_phase4();
		free(pb_rbuf);
	} else {
		for (i = 0; i < PB_K; i++)
			pb_sbuf[i] = mt_malloc(PB_MAX);
		for (phase = 1; phase <= 4; phase++)
			pb_send(phase, phase == 1 || phase == 3);
		for (i = 0; i < PB_K; i++)
			free(pb_sbuf[i]);
	}
	return mt_finish();
}
