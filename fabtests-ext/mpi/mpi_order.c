/*
 * mpi_order.c - MPI's non-overtaking rule across eager and rendezvous
 * sizes: messages from one source with one tag are received in the order
 * they were sent, whether their receives were posted before the messages
 * arrived, after, or some of each.
 *
 * Every message has the same tag and a size from a list that jumps between
 * eager and rendezvous (8 B, 64 KiB, 1 B, 1 MiB, 0 B, 16 KiB, 16 KiB + 1,
 * ...; the default eager limit is 16 KiB), first in list order and then
 * reversed. Its bytes come from (mode, source, sequence number). Receive n
 * must get message n: its count and every byte are checked, and its buffer
 * is only 64 B longer than message n, so a larger message overtaking shows
 * as a truncation error (reported as an order violation, not an abort:
 * data traffic uses a communicator with MPI_ERRORS_RETURN).
 *
 * Ranks pair up (even receives, odd sends) for modes A, B, C, E; mode D
 * sends from every rank to rank 0, received with MPI_ANY_SOURCE, and
 * checks order per source.
 *  A  all receives posted, then "go", then the sender's MPI_Isend burst;
 *  B  "go", the Isend burst and a "done" message, then blocking receives
 *     (every message, rendezvous ones as bare headers, is unexpected);
 *  C  half the receives posted, "go", wait for a quarter, post the rest;
 *  D  as C, many senders, ANY_SOURCE receives, sizes up to 256 KiB;
 *  E  blocking sends against blocking receives that pause now and then.
 */
#include "mpi_common.h"

#define OD_SLACK	64
#define TAG_DATA	3
#define TAG_GO		4
#define TAG_DONE	5

static const int od_list[] = {
	8, 65536, 1, 1048576, 0, 16384, 16385, 4096, 3, 262144, 1024, 1025,
	100000, 2, 524288, 17, 16383, 32768,
};
#define OD_N		((int)(sizeof(od_list) / sizeof(od_list[0])))
#define OD_MSGS		(2 * OD_N)	/* list order, then reversed */
#define OD_D_MAX	262144		/* mode D: every buffer this large */

static MPI_Comm od_comm;	/* MPI_COMM_WORLD with MPI_ERRORS_RETURN */

static int od_size(char mode, int seq)
{
	int size = od_list[seq < OD_N ? seq : OD_MSGS - 1 - seq];

	if (mode == 'D' && size > OD_D_MAX)
		size = OD_D_MAX;
	return size;
}

static int od_msgs(char mode)
{
	return mode == 'D' ? OD_N : OD_MSGS;
}

static uint32_t od_seed(char mode, int src, int seq)
{
	return (uint32_t)(mode * 100000 + src * 1000 + seq);
}

static void od_ctl_send(int peer, int tag)
{
	MT_CALL(MPI_Send(NULL, 0, MPI_BYTE, peer, tag, od_comm));
}

static void od_ctl_recv(int peer, int tag)
{
	MT_CALL(MPI_Recv(NULL, 0, MPI_BYTE, peer, tag, od_comm,
			 MPI_STATUS_IGNORE));
}

/* ---- sender ------------------------------------------------------------- */

static void od_send(char mode, int dest)
{
	int n = od_msgs(mode), seq;
	MPI_Request reqs[OD_MSGS];
	char *bufs[OD_MSGS];

	for (seq = 0; seq < n; seq++) {
		bufs[seq] = mt_malloc(od_size(mode, seq));
		mt_fill(bufs[seq], od_size(mode, seq),
			od_seed(mode, mt_rank, seq));
	}
	mt_stage("mode %c: sender waiting for go from %d", mode, dest);
	od_ctl_recv(dest, TAG_GO);
	mt_stage("mode %c: sending %d messages to %d", mode, n, dest);
	for (seq = 0; seq < n; seq++) {
		if (mode == 'E') {
			MT_CALL(MPI_Send(bufs[seq], od_size(mode, seq),
					 MPI_BYTE, dest, TAG_DATA, od_comm));
			continue;
		}
		MT_CALL(MPI_Isend(bufs[seq], od_size(mode, seq), MPI_BYTE,
				  dest, TAG_DATA, od_comm, &reqs[seq]));
	}
	if (mode == 'B')
		od_ctl_send(dest, TAG_DONE);
	mt_stage("mode %c: waiting for the sends to %d to complete", mode,
		 dest);
	if (mode != 'E')
		MT_CALL(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
	for (seq = 0; seq < n; seq++)
		free(bufs[seq]);
}

/* ---- receiver ----------------------------------------------------------- */

/* Receive i got a message; it must be message `seq` of `src`. */
static void od_check(char mode, int i, int rc, const MPI_Status *st,
		     const char *buf, int src, int seq)
{
	int size = od_size(mode, seq);

	if (rc != MPI_SUCCESS) {
		char str[MPI_MAX_ERROR_STRING];
		int len;

		MPI_Error_string(rc, str, &len);
		MT_FAIL("mode %c: receive %d (message %d from %d, %d B) "
			"failed: %s - a larger message overtook it?", mode, i,
			seq, src, size, str);
	}
	MT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == TAG_DATA,
		 "mode %c: receive %d: source %d tag %d", mode, i,
		 st->MPI_SOURCE, st->MPI_TAG);
	MT_CHECK(mt_count(st, MPI_BYTE) == size,
		 "mode %c: receive %d got %d B, message %d from %d has %d B: "
		 "order broken", mode, i, mt_count(st, MPI_BYTE), seq, src,
		 size);
	MT_CHECK_DATA(buf, size, od_seed(mode, src, seq),
		      "mode %c: receive %d: not message %d from %d", mode, i,
		      seq, src);
}

/* Waitall under MPI_ERRORS_RETURN: per-request errors end up in the
 * statuses; return what the caller needs for od_check. */
static void od_waitall(int n, MPI_Request *reqs, MPI_Status *sts, int *rcs)
{
	int rc = MPI_Waitall(n, reqs, sts), i;

	for (i = 0; i < n; i++)
		rcs[i] = rc == MPI_ERR_IN_STATUS ? sts[i].MPI_ERROR : rc;
}

static void od_recv_pair(char mode, int src)
{
	int n = od_msgs(mode), seq;
	MPI_Request reqs[OD_MSGS];
	MPI_Status sts[OD_MSGS];
	int rcs[OD_MSGS];
	char *bufs[OD_MSGS];

	for (seq = 0; seq < n; seq++) {
		bufs[seq] = mt_malloc(od_size(mode, seq) + OD_SLACK);
		mt_poison(bufs[seq], od_size(mode, seq), od_seed(mode, src,
								 seq));
	}
	mt_stage("mode %c: receiving %d messages from %d", mode, n, src);
	switch (mode) {
	case 'A':
	case 'C':
		for (seq = 0; seq < (mode == 'A' ? n : n / 2); seq++)
			MT_CALL(MPI_Irecv(bufs[seq],
					  od_size(mode, seq) + OD_SLACK,
					  MPI_BYTE, src, TAG_DATA, od_comm,
					  &reqs[seq]));
		od_ctl_send(src, TAG_GO);
		if (mode == 'C') {
			od_waitall(n / 4, reqs, sts, rcs);
			for (seq = n / 2; seq < n; seq++)
				MT_CALL(MPI_Irecv(bufs[seq],
						  od_size(mode, seq) + OD_SLACK,
						  MPI_BYTE, src, TAG_DATA,
						  od_comm, &reqs[seq]));
			od_waitall(n - n / 4, reqs + n / 4, sts + n / 4,
				   rcs + n / 4);
		} else {
			od_waitall(n, reqs, sts, rcs);
		}
		break;
	case 'B':
	case 'E':
		od_ctl_send(src, TAG_GO);
		if (mode == 'B') {
			mt_stage("mode B: waiting for 'done' from %d (sent "
				 "after %d unexpected messages)", src, n);
			od_ctl_recv(src, TAG_DONE);
			mt_stage("mode B: receiving from %d", src);
		}
		for (seq = 0; seq < n; seq++) {
			if (mode == 'E' && seq % 4 == 3)
				mt_spin(0.002);	/* let a few queue up */
			rcs[seq] = MPI_Recv(bufs[seq],
					    od_size(mode, seq) + OD_SLACK,
					    MPI_BYTE, src, TAG_DATA, od_comm,
					    &sts[seq]);
		}
		break;
	}
	for (seq = 0; seq < n; seq++) {
		od_check(mode, seq, rcs[seq], &sts[seq], bufs[seq], src, seq);
		free(bufs[seq]);
	}
}

/* Mode D on rank 0: every other rank sends; which source a wildcard
 * receive gets is free, but per source, receives in posting order must
 * see that source's messages in sending order. */
static void od_recv_any(void)
{
	int n = od_msgs('D'), total = n * (mt_nranks - 1), i, s;
	MPI_Request *reqs = mt_malloc(total * sizeof(*reqs));
	MPI_Status *sts = mt_malloc(total * sizeof(*sts));
	int *rcs = mt_malloc(total * sizeof(*rcs));
	char *buf = mt_malloc((size_t)total * OD_D_MAX);
	int next[64] = { 0 };

	mt_stage("mode D: receiving %d messages with MPI_ANY_SOURCE", total);
	for (i = 0; i < total / 2; i++)
		MT_CALL(MPI_Irecv(buf + (size_t)i * OD_D_MAX, OD_D_MAX,
				  MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA, od_comm,
				  &reqs[i]));
	for (s = 1; s < mt_nranks; s++)
		od_ctl_send(s, TAG_GO);
	od_waitall(total / 4, reqs, sts, rcs);
	for (i = total / 2; i < total; i++)
		MT_CALL(MPI_Irecv(buf + (size_t)i * OD_D_MAX, OD_D_MAX,
				  MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA, od_comm,
				  &reqs[i]));
	od_waitall(total - total / 4, reqs + total / 4, sts + total / 4,
		   rcs + total / 4);
	for (i = 0; i < total; i++) {
		s = sts[i].MPI_SOURCE;
		MT_CHECK(rcs[i] == MPI_SUCCESS, "mode D: receive %d failed "
			 "(error %d): a larger message overtook it?", i,
			 rcs[i]);
		MT_CHECK(s >= 1 && s < mt_nranks && next[s] < n,
			 "mode D: receive %d: unexpected source %d", i, s);
		od_check('D', i, rcs[i], &sts[i], buf + (size_t)i * OD_D_MAX,
			 s, next[s]++);
	}
	for (s = 1; s < mt_nranks; s++)
		MT_CHECK(next[s] == n, "mode D: %d of %d messages from %d",
			 next[s], n, s);
	free(reqs);
	free(sts);
	free(rcs);
	free(buf);
}

int main(int argc, char **argv)
{
	static const char pair_modes[] = "ABCE";
	int peer, i;

	mt_init(&argc, &argv, "mpi_order", 60);
	mt_need_ranks(2);
	if (mt_nranks > 64)
		MT_FAIL("at most 64 ranks");
	MPI_Comm_dup(MPI_COMM_WORLD, &od_comm);
	MPI_Comm_set_errhandler(od_comm, MPI_ERRORS_RETURN);
	peer = mt_rank ^ 1;

	for (i = 0; pair_modes[i]; i++) {
		if (peer >= mt_nranks)
			break;		/* odd rank count: the last one rests */
		if (mt_rank & 1)
			od_send(pair_modes[i], peer);
		else
			od_recv_pair(pair_modes[i], peer);
	}
	if (mt_rank == 0)
		od_recv_any();
	else
		od_send('D', 0);
	MPI_Comm_free(&od_comm);
	return mt_finish();
}
