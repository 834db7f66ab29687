/*
 * mpi_wildcard.c - MPI_ANY_SOURCE and MPI_ANY_TAG receives: status fields,
 * per-source order, and which posted receive a message matches when
 * specific and wildcard receives are mixed. Needs 2 ranks or more; with
 * more, several senders compete for the wildcard receives.
 *
 * Rank 0 receives, every other rank sends. Each message's bytes come from
 * (phase, source, sequence number), so a receive that got the wrong message
 * fails its data check, and status.MPI_SOURCE/MPI_TAG/count are checked
 * against what that message must be. Sizes mix small eager messages and
 * 40 000 B rendezvous ones.
 *
 * Phases (rank 0 opens each with a "go" to the senders, so no message of a
 * phase can meet the receives of another; an "unexpected" phase also waits
 * for each sender's "done", so by per-pair ordering every message is
 * there before a receive is posted):
 *  1  ANY_SOURCE, fixed tag, unexpected; then the same pre-posted;
 *  2  specific source, ANY_TAG, unexpected; then the same pre-posted;
 *  3  ANY_SOURCE + ANY_TAG, half pre-posted, half posted after arrivals;
 *  4  mixed specific and wildcard receives posted before the messages:
 *     each message must go to the first posted receive it matches;
 *  5  mixed specific and wildcard receives after arrival: each receive
 *     must take the earliest message it matches.
 * The receiver itself never depends on which sender's message comes first
 * under ANY_SOURCE (MPI does not define it), only on per-source order.
 */
#include "mpi_common.h"

#define WC_K		40	/* messages per sender per phase */
#define WC_BIG		40000	/* rendezvous-sized message */
#define WC_MAX		WC_BIG
#define TAG_GO		1000
#define TAG_DONE	1001
#define TAG_FIXED	5

static char *wc_sbuf[WC_K];	/* sender: one buffer per message in flight */
static char *wc_rbuf;		/* receiver: room for every receive of a phase */
static int wc_next[64];		/* receiver: next expected seq per source */

static int wc_len(int seq)
{
	if (seq % 8 == 5)
		return WC_BIG;
	return (seq % 3) * 12 + (seq % 2);	/* 0, 1, 12, 13, 24, 25 */
}

static uint32_t wc_seed(int phase, int src, int seq)
{
	return (uint32_t)(phase * 1000000 + src * 10000 + seq);
}

/* Tags of phases that use ANY_TAG vary per message. */
static int wc_tag(int phase, int seq)
{
	if (phase == 1)
		return TAG_FIXED;
	return 10 + (seq * 7) % 13;
}

static char *wc_rslot(int i)
{
	return wc_rbuf + (size_t)i * WC_MAX;
}

/* ---- sender side -------------------------------------------------------- */

static void wc_wait_go(void)
{
	MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
}

/* Sends messages 0..count-1 of a phase with the given tags (NULL: the
 * phase's tags), then "done" if asked. */
static void wc_send(int phase, int count, const int *tags, int with_done)
{
	MPI_Request reqs[WC_K];
	int seq;

	mt_stage("phase %d: sender waiting for go", phase);
	wc_wait_go();
	mt_stage("phase %d: sending %d messages", phase, count);
	for (seq = 0; seq < count; seq++) {
		int n = wc_len(seq);

		mt_fill(wc_sbuf[seq], n, wc_seed(phase, mt_rank, seq));
		MPI_Isend(wc_sbuf[seq], n, MPI_BYTE, 0,
			  tags ? tags[seq] : wc_tag(phase, seq),
			  MPI_COMM_WORLD, &reqs[seq]);
	}
	if (with_done)
		MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD);
	MPI_Waitall(count, reqs, MPI_STATUSES_IGNORE);
}

/* ---- receiver side ------------------------------------------------------ */

static void wc_go(int from, int to)
{
	int s;

	for (s = from; s <= to; s++)
		MPI_Send(NULL, 0, MPI_BYTE, s, TAG_GO, MPI_COMM_WORLD);
}

static void wc_wait_done_all(void)
{
	int s;

	mt_stage("waiting for 'done' from every sender");
	for (s = 1; s < mt_nranks; s++)
		MPI_Recv(NULL, 0, MPI_BYTE, s, TAG_DONE, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
}

/* The message a receive got must be the next one of the source its status
 * names: check status fields and data against that. */
static void wc_check_next(int phase, const MPI_Status *st, const char *buf,
			  const char *what)
{
	int src = st->MPI_SOURCE, seq;

	MT_CHECK(src >= 1 && src < mt_nranks,
		 "phase %d %s: status source %d is not a sender", phase, what,
		 src);
	seq = wc_next[src]++;
	MT_CHECK(seq < WC_K, "phase %d %s: more than %d messages from %d",
		 phase, what, WC_K, src);
	MT_CHECK(st->MPI_TAG == wc_tag(phase, seq),
		 "phase %d %s: message %d from %d: status tag %d, expected %d",
		 phase, what, seq, src, st->MPI_TAG, wc_tag(phase, seq));
	MT_CHECK(mt_count(st, MPI_BYTE) == wc_len(seq),
		 "phase %d %s: message %d from %d: count %d, expected %d "
		 "(out of order?)", phase, what, seq, src,
		 mt_count(st, MPI_BYTE), wc_len(seq));
	MT_CHECK_DATA(buf, wc_len(seq), wc_seed(phase, src, seq),
		      "phase %d %s: message %d from %d: wrong data", phase,
		      what, seq, src);
}

static void wc_reset_next(void)
{
	memset(wc_next, 0, sizeof(wc_next));
}

static void wc_check_all_seen(int phase)
{
	int s;

	for (s = 1; s < mt_nranks; s++)
		MT_CHECK(wc_next[s] == WC_K,
			 "phase %d: %d of %d messages from %d received", phase,
			 wc_next[s], WC_K, s);
}

/* Posts receives [first, last) with the given source and tag. */
static void wc_post(MPI_Request *reqs, int first, int last, int src, int tag)
{
	int i;

	for (i = first; i < last; i++)
		MPI_Irecv(wc_rslot(i), WC_MAX, MPI_BYTE, src, tag,
			  MPI_COMM_WORLD, &reqs[i]);
}

static void wc_check_reqs(int phase, MPI_Status *sts, int count,
			  const char *what)
{
	int i;

	for (i = 0; i < count; i++)
		wc_check_next(phase, &sts[i], wc_rslot(i), what);
}

static void wc_phase1_recv(MPI_Request *reqs, MPI_Status *sts, int total)
{
	MPI_Status st;
	int i;

	mt_stage("phase 1: ANY_SOURCE receives");
	wc_go(1, mt_nranks - 1);
	wc_wait_done_all();
	wc_reset_next();
	for (i = 0; i < total; i++) {
		MPI_Recv(wc_rslot(0), WC_MAX, MPI_BYTE, MPI_ANY_SOURCE,
			 TAG_FIXED, MPI_COMM_WORLD, &st);
		wc_check_next(1, &st, wc_rslot(0), "ANY_SOURCE unexpected");
	}
	wc_check_all_seen(1);

	wc_reset_next();
	wc_post(reqs, 0, total, MPI_ANY_SOURCE, TAG_FIXED);
	wc_go(1, mt_nranks - 1);
	MPI_Waitall(total, reqs, sts);
	wc_check_reqs(1, sts, total, "ANY_SOURCE pre-posted");
	wc_check_all_seen(1);
}

static void wc_phase2_recv(MPI_Request *reqs, MPI_Status *sts, int total)
{
	MPI_Status st;
	int s, i;

	mt_stage("phase 2: ANY_TAG receives");
	wc_go(1, mt_nranks - 1);
	wc_wait_done_all();
	wc_reset_next();
	for (s = 1; s < mt_nranks; s++) {
		for (i = 0; i < WC_K; i++) {
			MPI_Recv(wc_rslot(0), WC_MAX, MPI_BYTE, s, MPI_ANY_TAG,
				 MPI_COMM_WORLD, &st);
			MT_CHECK(st.MPI_SOURCE == s,
				 "phase 2: receive from %d got source %d", s,
				 st.MPI_SOURCE);
			wc_check_next(2, &st, wc_rslot(0), "ANY_TAG unexpected");
		}
	}
	wc_check_all_seen(2);

	wc_reset_next();
	for (s = 1; s < mt_nranks; s++)
		wc_post(reqs, (s - 1) * WC_K, s * WC_K, s, MPI_ANY_TAG);
	wc_go(1, mt_nranks - 1);
	MPI_Waitall(total, reqs, sts);
	for (i = 0; i < total; i++)
		MT_CHECK(sts[i].MPI_SOURCE == i / WC_K + 1,
			 "phase 2: receive %d for source %d got source %d", i,
			 i / WC_K + 1, sts[i].MPI_SOURCE);
	wc_check_reqs(2, sts, total, "ANY_TAG pre-posted");
	wc_check_all_seen(2);
}

static void wc_phase3_recv(MPI_Request *reqs, MPI_Status *sts, int total)
{
	int half = total / 2;

	mt_stage("phase 3: ANY_SOURCE + ANY_TAG receives");
	wc_reset_next();
	wc_post(reqs, 0, half, MPI_ANY_SOURCE, MPI_ANY_TAG);
	wc_go(1, mt_nranks - 1);
	/* some of the rest arrive before their receives exist */
	MPI_Waitall(half / 2, reqs, sts);
	wc_post(reqs, half, total, MPI_ANY_SOURCE, MPI_ANY_TAG);
	MPI_Waitall(total - half / 2, reqs + half / 2, sts + half / 2);
	wc_check_reqs(3, sts, total, "ANY_SOURCE+ANY_TAG");
	wc_check_all_seen(3);
}

/* One posted receive and the sequence number of the message from rank
 * `sender` that must land in it. */
struct wc_rule {
	int src, tag, sender, seq;
};

static void wc_rules_check(int phase, const struct wc_rule *rules, int n,
			   const int *tags, MPI_Request *reqs, int first)
{
	MPI_Status st;
	int i;

	for (i = first; i < n; i++) {
		const struct wc_rule *r = &rules[i];

		MPI_Wait(&reqs[i], &st);
		MT_CHECK(st.MPI_SOURCE == r->sender &&
			 st.MPI_TAG == tags[r->seq] &&
			 mt_count(&st, MPI_BYTE) == wc_len(r->seq),
			 "phase %d: receive %d (source %d, tag %d) got source "
			 "%d tag %d count %d, expected message %d of rank %d "
			 "(tag %d)", phase, i, r->src, r->tag, st.MPI_SOURCE,
			 st.MPI_TAG, mt_count(&st, MPI_BYTE), r->seq,
			 r->sender, tags[r->seq]);
		MT_CHECK_DATA(wc_rslot(i), wc_len(r->seq),
			      wc_seed(phase, r->sender, r->seq),
			      "phase %d: receive %d holds the wrong message",
			      phase, i);
	}
}

static const int wc_tags4a[] = { 7, 7, 9, 7, 8 };
static const int wc_tags4b[] = { 7, 7, 7, 5 };
static const int wc_tags4c[] = { 7, 7 };
static const int wc_tags5[] = { 7, 9, 7, 9, 9, 7 };

/* Receives posted first, then the messages: first posted match wins,
 * whichever kind of receive (specific, ANY_SOURCE, ANY_TAG, both) it is. */
static void wc_phase4_recv(void)
{
	static const struct wc_rule a[] = {
		{ MPI_ANY_SOURCE, 7, 1, 0 }, { 1, 7, 1, 1 },
		{ MPI_ANY_SOURCE, MPI_ANY_TAG, 1, 2 },
		{ 1, MPI_ANY_TAG, 1, 3 }, { MPI_ANY_SOURCE, 8, 1, 4 },
	};
	static const struct wc_rule b[] = {
		{ 1, MPI_ANY_TAG, 1, 0 }, { MPI_ANY_SOURCE, 7, 1, 1 },
		{ 1, 7, 1, 2 }, { MPI_ANY_SOURCE, MPI_ANY_TAG, 1, 3 },
	};
	static const struct wc_rule c[] = {
		{ 2, 7, 2, 0 }, { MPI_ANY_SOURCE, 7, 1, 0 }, { 1, 7, 1, 1 },
	};
	MPI_Request reqs[8];
	int i;

	mt_stage("phase 4: posted specific and wildcard receives");
	for (i = 0; i < 5; i++)
		wc_post(reqs, i, i + 1, a[i].src, a[i].tag);
	wc_go(1, 1);
	wc_rules_check(4, a, 5, wc_tags4a, reqs, 0);

	for (i = 0; i < 4; i++)
		wc_post(reqs, i, i + 1, b[i].src, b[i].tag);
	wc_go(1, 1);
	wc_rules_check(4, b, 4, wc_tags4b, reqs, 0);

	if (mt_nranks < 3)
		return;
	/* rank 2's receive, posted first, must not catch rank 1's message */
	for (i = 0; i < 3; i++)
		wc_post(reqs, i, i + 1, c[i].src, c[i].tag);
	wc_go(1, 1);
	wc_rules_check(4, c, 3, wc_tags4c, reqs, 1);
	wc_go(2, 2);
	wc_rules_check(4, c, 1, wc_tags4c, reqs, 0);
}

/* Messages first, then the receives: each receive takes the earliest
 * message (from rank 1) that it matches. */
static void wc_phase5_recv(void)
{
	static const struct wc_rule r[] = {
		{ 1, 9, 1, 1 }, { 1, MPI_ANY_TAG, 1, 0 },
		{ MPI_ANY_SOURCE, 9, 1, 3 },
		{ MPI_ANY_SOURCE, MPI_ANY_TAG, 1, 2 }, { 1, 7, 1, 5 },
		{ MPI_ANY_SOURCE, MPI_ANY_TAG, 1, 4 },
	};
	MPI_Request reqs[6];
	int i;

	mt_stage("phase 5: specific and wildcard receives after arrival");
	wc_go(1, 1);
	MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_DONE, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	for (i = 0; i < 6; i++) {
		wc_post(reqs, i, i + 1, r[i].src, r[i].tag);
		wc_rules_check(5, r, i + 1, wc_tags5, reqs, i);
	}
}

int main(int argc, char **argv)
{
	int i;

	mt_init(&argc, &argv, "mpi_wildcard", 60);
	mt_need_ranks(2);
	if (mt_nranks > 64)
		MT_FAIL("at most 64 ranks");

	if (mt_rank == 0) {
		int total = WC_K * (mt_nranks - 1);
		MPI_Request *reqs = mt_malloc(total * sizeof(*reqs));
		MPI_Status *sts = mt_malloc(total * sizeof(*sts));

		wc_rbuf = mt_malloc((size_t)total * WC_MAX);
		wc_phase1_recv(reqs, sts, total);
		wc_phase2_recv(reqs, sts, total);
		wc_phase3_recv(reqs, sts, total);
		wc_phase4_recv();
		wc_phase5_recv();
		free(wc_rbuf);
		free(reqs);
		free(sts);
	} else {
		for (i = 0; i < WC_K; i++)
			wc_sbuf[i] = mt_malloc(WC_MAX);
		wc_send(1, WC_K, NULL, 1);	/* unexpected */
		wc_send(1, WC_K, NULL, 0);	/* pre-posted */
		wc_send(2, WC_K, NULL, 1);
		wc_send(2, WC_K, NULL, 0);
		wc_send(3, WC_K, NULL, 0);
		if (mt_rank == 1) {
			wc_send(4, 5, wc_tags4a, 0);
			wc_send(4, 4, wc_tags4b, 0);
			if (mt_nranks >= 3)
				wc_send(4, 2, wc_tags4c, 0);
			wc_send(5, 6, wc_tags5, 1);
		} else if (mt_rank == 2) {
			wc_send(4, 1, wc_tags4c, 0);
		}
		for (i = 0; i < WC_K; i++)
			free(wc_sbuf[i]);
	}
	return mt_finish();
}
