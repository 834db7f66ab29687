/*
 * mpi_trunc.c - a message longer than its receive buffer is reported as
 * MPI_ERR_TRUNCATE (the provider's FI_ETRUNC error completion), for eager
 * and rendezvous sizes, receives posted before and after the message
 * arrived; the bytes that fit are delivered, nothing is written past the
 * buffer, the truncated message is consumed (the next receive gets the
 * next message) and the sender's request completes normally.
 *
 * Ranks pair up (even receives, odd sends). Data traffic uses a
 * communicator with MPI_ERRORS_RETURN, so a truncation is a return code,
 * not an abort.
 */
#include "mpi_common.h"

#define TR_SLACK	256
#define TAG_GO		1
#define TAG_DONE	2
#define TAG_DATA	3

/* message size, receive buffer size */
static const int tr_cases[][2] = {
	{ 100, 50 }, { 1, 0 }, { 16384, 16383 }, { 16385, 16384 },
	{ 100000, 50000 }, { 1 << 20, 4096 }, { 70000, 0 },
};
#define TR_N		((int)(sizeof(tr_cases) / sizeof(tr_cases[0])))
#define TR_MAX		(1 << 20)

static MPI_Comm tr_comm;

static uint32_t tr_seed(int posted, int k, int next)
{
	return (uint32_t)(posted * 1000 + k * 10 + next);
}

static void tr_sender(int peer, char *buf, char *buf2)
{
	MPI_Request reqs[2];
	int posted, k;

	for (posted = 0; posted < 2; posted++) {
		for (k = 0; k < TR_N; k++) {
			mt_stage("%s case %d: sending %d B",
				 posted ? "posted" : "unexpected", k,
				 tr_cases[k][0]);
			MT_CALL(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO,
					 tr_comm, MPI_STATUS_IGNORE));
			mt_fill(buf, tr_cases[k][0], tr_seed(posted, k, 0));
			mt_fill(buf2, 64, tr_seed(posted, k, 1));
			/* the truncated message, then one that fits */
			MT_CALL(MPI_Isend(buf, tr_cases[k][0], MPI_BYTE, peer,
					  TAG_DATA, tr_comm, &reqs[0]));
			MT_CALL(MPI_Isend(buf2, 64, MPI_BYTE, peer, TAG_DATA,
					  tr_comm, &reqs[1]));
			MT_CALL(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_DONE,
					 tr_comm));
			MT_CALL(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
		}
	}
}

static void tr_receiver(int peer, char *buf)
{
	MPI_Request req;
	MPI_Status st;
	int posted, k, rc, cls, msg, room;

	for (posted = 0; posted < 2; posted++) {
		for (k = 0; k < TR_N; k++) {
			msg = tr_cases[k][0];
			room = tr_cases[k][1];
			mt_stage("%s case %d: %d B into %d B",
				 posted ? "posted" : "unexpected", k, msg,
				 room);
			mt_poison(buf, room, tr_seed(posted, k, 0));
			mt_poison(buf + room, TR_SLACK, tr_seed(posted, k, 2));
			if (posted)
				MT_CALL(MPI_Irecv(buf, room, MPI_BYTE, peer,
						  TAG_DATA, tr_comm, &req));
			MT_CALL(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO,
					 tr_comm));
			MT_CALL(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_DONE,
					 tr_comm, MPI_STATUS_IGNORE));
			if (posted)
				rc = MPI_Wait(&req, &st);
			else
				rc = MPI_Recv(buf, room, MPI_BYTE, peer,
					      TAG_DATA, tr_comm, &st);
			cls = MPI_SUCCESS;
			if (rc != MPI_SUCCESS)
				MPI_Error_class(rc, &cls);
			MT_CHECK(cls == MPI_ERR_TRUNCATE, "%d B into %d B (%s): "
				 "error class %d, expected MPI_ERR_TRUNCATE "
				 "(%d)", msg, room,
				 posted ? "posted" : "unexpected", cls,
				 MPI_ERR_TRUNCATE);
			MT_CHECK_DATA(buf, room, tr_seed(posted, k, 0),
				      "%d B into %d B: the part that fits",
				      msg, room);
			MT_CHECK(mt_verify_poison(buf + room, TR_SLACK,
						  tr_seed(posted, k, 2)) < 0,
				 "%d B into %d B: bytes written past the "
				 "receive buffer", msg, room);
			/* the next message is the next one, whole */
			mt_poison(buf, 64, tr_seed(posted, k, 1));
			MT_CALL(MPI_Recv(buf, TR_MAX, MPI_BYTE, peer,
					 TAG_DATA, tr_comm, &st));
			MT_CHECK(mt_count(&st, MPI_BYTE) == 64,
				 "after %d B into %d B: next message has %d B",
				 msg, room, mt_count(&st, MPI_BYTE));
			MT_CHECK_DATA(buf, 64, tr_seed(posted, k, 1),
				      "after %d B into %d B: next message",
				      msg, room);
		}
	}
}

int main(int argc, char **argv)
{
	char *buf, *buf2;
	int peer;

	mt_init(&argc, &argv, "mpi_trunc", 60);
	mt_need_ranks(2);
	MPI_Comm_dup(MPI_COMM_WORLD, &tr_comm);
	MPI_Comm_set_errhandler(tr_comm, MPI_ERRORS_RETURN);
	buf = mt_malloc(TR_MAX + TR_SLACK);
	buf2 = mt_malloc(64);
	peer = mt_rank ^ 1;
	if (peer < mt_nranks) {
		if (mt_rank & 1)
			tr_sender(peer, buf, buf2);
		else
			tr_receiver(peer, buf);
	}
	free(buf);
	free(buf2);
	MPI_Comm_free(&tr_comm);
	return mt_finish();
}
