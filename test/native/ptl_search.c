/*
 * ptl_search.c - PtlMESearch/PtlLESearch with a persistent entry between
 * two processes: rank 0 sends six puts nobody posted for (five with match
 * bits 9, the fourth with 10; the last one above the eager size) to a
 * matching and to a non-matching NI of rank 1, which keeps them in an
 * overflow entry and searches. "Event generation for the search functions
 * works just as it would for an append function" (the reference header):
 * a persistent entry gets one PTL_EVENT_SEARCH per matching message in
 * arrival order, a use-once entry one, PTL_SEARCH_DELETE one overflow
 * event per message, and a search that finds nothing one event with
 * PTL_NI_NO_MATCH. Every field that names the message is checked.
 *
 *   ptlrun -n 2 ./ptl_search
 *
 * Written against portals4.h only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/portals4/ptl_boot.h"

#define SX_PT		5
#define SX_N		6
#define SX_ODD		3	/* the one with match bits 10 */
#define SX_BIG		40000	/* the last: above the eager size */
#define SX_OFLOW	(64 * 1024)

static unsigned char oflow[2][SX_OFLOW];
static unsigned char sbuf[SX_BIG];
static int err;

#define FAIL(...)                                                           \
	do {                                                                \
		fprintf(stderr, "ptl_search: " __VA_ARGS__);                \
		fprintf(stderr, "\n");                                      \
		err++;                                                      \
	} while (0)

static ptl_size_t len_of(int i)
{
	return i == SX_N - 1 ? SX_BIG : (ptl_size_t)(16 * (i + 1));
}

static ptl_match_bits_t bits_of(int i)
{
	return i == SX_ODD ? 10 : 9;
}

/* The next event, or a failure after 10 s. */
static int next(ptl_handle_eq_t eq, ptl_event_t *ev)
{
	unsigned which;
	int ret = PtlEQPoll(&eq, 1, 10000, ev, &which);

	if (ret != PTL_OK) {
		FAIL("no event: %d", ret);
		return -1;
	}
	return 0;
}

static void no_more(ptl_handle_eq_t eq, const char *what)
{
	ptl_event_t ev;
	unsigned which;

	if (PtlEQPoll(&eq, 1, 100, &ev, &which) != PTL_EQ_EMPTY)
		FAIL("%s: a stray event of type %d", what, ev.type);
}

/*
 * The events of one search: type, for the messages want[0..n), in that
 * (arrival) order; then none.
 */
static void expect_each(ptl_handle_eq_t eq, ptl_event_kind_t type,
			const int *want, int n, void *user_ptr,
			const struct boot *b, const char *what)
{
	ptl_event_t ev;
	int i, k;

	for (i = 0; i < n; i++) {
		if (next(eq, &ev))
			return;
		k = want[i];
		if (ev.type != type || ev.ni_fail_type != PTL_NI_OK ||
		    ev.user_ptr != user_ptr ||
		    ev.hdr_data != (ptl_hdr_data_t)(100 + k) ||
		    ev.rlength != len_of(k) || ev.pt_index != SX_PT ||
		    ev.initiator.phys.nid != b->peers[0].phys.nid ||
		    ev.initiator.phys.pid != b->peers[0].phys.pid)
			FAIL("%s: event %d: type %d fail %d hdr_data %llu "
			     "rlength %llu, want message %d", what, i,
			     ev.type, ev.ni_fail_type,
			     (unsigned long long)ev.hdr_data,
			     (unsigned long long)ev.rlength, k);
	}
	no_more(eq, what);
}

static void expect_no_match(ptl_handle_eq_t eq, const char *what)
{
	ptl_event_t ev;

	if (next(eq, &ev))
		return;
	if (ev.type != PTL_EVENT_SEARCH || ev.ni_fail_type != PTL_NI_NO_MATCH)
		FAIL("%s: type %d fail %d, want a SEARCH without match", what,
		     ev.type, ev.ni_fail_type);
	no_more(eq, what);
}

/* Rank 1's side of one NI: a PT with an overflow entry taking it all. */
static void target_open(ptl_handle_ni_t ni, int le, unsigned char *buf,
			ptl_handle_eq_t *eq)
{
	ptl_pt_index_t pt;
	ptl_handle_me_t h;
	ptl_me_t me;
	ptl_le_t l;

	BOOT_CHECK(PtlEQAlloc(ni, 128, eq));
	BOOT_CHECK(PtlPTAlloc(ni, 0, *eq, SX_PT, &pt));
	if (le) {
		/* an LE has no MANAGE_LOCAL: room for every message */
		memset(&l, 0, sizeof(l));
		l.start = buf;
		l.length = SX_OFLOW;
		l.ct_handle = PTL_CT_NONE;
		l.uid = PTL_UID_ANY;
		l.options = PTL_LE_OP_PUT | PTL_LE_EVENT_LINK_DISABLE;
		BOOT_CHECK(PtlLEAppend(ni, SX_PT, &l, PTL_OVERFLOW_LIST, NULL,
				       &h));
		return;
	}
	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = SX_OFLOW;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
		     PTL_ME_EVENT_LINK_DISABLE;
	me.ignore_bits = ~(ptl_match_bits_t)0;
	BOOT_CHECK(PtlMEAppend(ni, SX_PT, &me, PTL_OVERFLOW_LIST, NULL, &h));
}

/* The six PUT events the overflow entry made, in order. */
static void target_landed(ptl_handle_eq_t eq, const char *what)
{
	ptl_event_t ev;
	int i;

	for (i = 0; i < SX_N; i++) {
		if (next(eq, &ev))
			return;
		if (ev.type != PTL_EVENT_PUT ||
		    ev.ptl_list != PTL_OVERFLOW_LIST ||
		    ev.hdr_data != (ptl_hdr_data_t)(100 + i) ||
		    ev.mlength != len_of(i))
			FAIL("%s: landing %d: type %d list %d", what, i,
			     ev.type, ev.ptl_list);
	}
	no_more(eq, what);
}

static const int nine[] = { 0, 1, 2, 4, 5 };
static const int all[] = { 0, 1, 2, 3, 4, 5 };

static void target(struct boot *b, ptl_handle_ni_t ni, ptl_handle_ni_t lni)
{
	ptl_handle_eq_t eq, leq;
	ptl_me_t me;
	ptl_le_t le;

	target_open(ni, 0, oflow[0], &eq);
	target_open(lni, 1, oflow[1], &leq);
	boot_barrier(b);	/* ready */
	boot_barrier(b);	/* every put was acknowledged */
	target_landed(eq, "ME");
	target_landed(leq, "LE");

	memset(&me, 0, sizeof(me));
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = 9;
	BOOT_CHECK(PtlMESearch(ni, SX_PT, &me, PTL_SEARCH_ONLY, (void *)1));
	expect_each(eq, PTL_EVENT_SEARCH, nine, 5, (void *)1, b,
		    "ME search");
	/* searching took nothing */
	BOOT_CHECK(PtlMESearch(ni, SX_PT, &me, PTL_SEARCH_ONLY, (void *)2));
	expect_each(eq, PTL_EVENT_SEARCH, nine, 5, (void *)2, b,
		    "ME search again");
	/* a use-once entry would match the first only */
	me.options |= PTL_ME_USE_ONCE;
	BOOT_CHECK(PtlMESearch(ni, SX_PT, &me, PTL_SEARCH_ONLY, (void *)3));
	expect_each(eq, PTL_EVENT_SEARCH, nine, 1, (void *)3, b,
		    "ME search use-once");
	/* Open MPI's improbe: use-once + delete takes the first only */
	BOOT_CHECK(PtlMESearch(ni, SX_PT, &me, PTL_SEARCH_DELETE, (void *)8));
	expect_each(eq, PTL_EVENT_PUT_OVERFLOW, nine, 1, (void *)8, b,
		    "ME search-delete use-once");
	me.options &= ~(unsigned)PTL_ME_USE_ONCE;
	BOOT_CHECK(PtlMESearch(ni, SX_PT, &me, PTL_SEARCH_ONLY, (void *)9));
	expect_each(eq, PTL_EVENT_SEARCH, nine + 1, 4, (void *)9, b,
		    "ME search after use-once delete");
	BOOT_CHECK(PtlMESearch(ni, SX_PT, &me, PTL_SEARCH_DELETE, (void *)4));
	expect_each(eq, PTL_EVENT_PUT_OVERFLOW, nine + 1, 4, (void *)4, b,
		    "ME search-delete");
	BOOT_CHECK(PtlMESearch(ni, SX_PT, &me, PTL_SEARCH_ONLY, NULL));
	expect_no_match(eq, "ME search after delete");
	/* the odd one is still there */
	me.match_bits = 10;
	BOOT_CHECK(PtlMESearch(ni, SX_PT, &me, PTL_SEARCH_ONLY, (void *)5));
	expect_each(eq, PTL_EVENT_SEARCH, all + SX_ODD, 1, (void *)5, b,
		    "ME search bits 10");

	/* no matching: every message matches */
	memset(&le, 0, sizeof(le));
	le.ct_handle = PTL_CT_NONE;
	le.uid = PTL_UID_ANY;
	le.options = PTL_LE_OP_PUT;
	BOOT_CHECK(PtlLESearch(lni, SX_PT, &le, PTL_SEARCH_ONLY, (void *)6));
	expect_each(leq, PTL_EVENT_SEARCH, all, SX_N, (void *)6, b,
		    "LE search");
	BOOT_CHECK(PtlLESearch(lni, SX_PT, &le, PTL_SEARCH_DELETE,
			       (void *)7));
	expect_each(leq, PTL_EVENT_PUT_OVERFLOW, all, SX_N, (void *)7, b,
		    "LE search-delete");
	BOOT_CHECK(PtlLESearch(lni, SX_PT, &le, PTL_SEARCH_ONLY, NULL));
	expect_no_match(leq, "LE search after delete");
	boot_barrier(b);	/* done */
}

/* Rank 0: the six puts to rank 1 on one NI, each acknowledged. */
static void send_six(ptl_handle_ni_t ni, ptl_process_t to)
{
	ptl_handle_md_t md_h;
	ptl_handle_eq_t eq;
	ptl_event_t ev;
	ptl_md_t md;
	int i, acks = 0;

	BOOT_CHECK(PtlEQAlloc(ni, 64, &eq));
	memset(&md, 0, sizeof(md));
	md.start = sbuf;
	md.length = sizeof(sbuf);
	md.eq_handle = eq;
	md.ct_handle = PTL_CT_NONE;
	md.options = PTL_MD_EVENT_SEND_DISABLE;
	BOOT_CHECK(PtlMDBind(ni, &md, &md_h));
	for (i = 0; i < SX_N; i++)
		BOOT_CHECK(PtlPut(md_h, 0, len_of(i), PTL_ACK_REQ, to, SX_PT,
				  bits_of(i), 0, NULL,
				  (ptl_hdr_data_t)(100 + i)));
	while (acks < SX_N) {
		if (next(eq, &ev))
			exit(1);
		if (ev.type != PTL_EVENT_ACK || ev.ni_fail_type != PTL_NI_OK ||
		    ev.mlength != len_of(acks))
			FAIL("ack %d: type %d fail %d", acks, ev.type,
			     ev.ni_fail_type);
		acks++;
	}
	BOOT_CHECK(PtlMDRelease(md_h));
	BOOT_CHECK(PtlEQFree(eq));
}

int main(void)
{
	ptl_handle_ni_t ni, lni;
	struct boot b;

	boot_env(&b);
	if (b.size != 2) {
		fprintf(stderr, "ptl_search: run with ptlrun -n 2\n");
		return 2;
	}
	memset(sbuf, 0x5a, sizeof(sbuf));
	BOOT_CHECK(PtlInit());
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			     NULL, NULL, &ni));
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			     NULL, NULL, &lni));
	boot_init(&b, ni, 0);
	if (b.rank == 1) {
		target(&b, ni, lni);
	} else {
		boot_barrier(&b);
		send_six(ni, b.peers[1]);
		send_six(lni, b.peers[1]);
		boot_barrier(&b);
		boot_barrier(&b);
	}
	boot_fini(&b);
	PtlNIFini(lni);
	PtlNIFini(ni);
	PtlFini();
	if (err)
		fprintf(stderr, "ptl_search: rank %d: %d failures\n", b.rank,
			err);
	else
		printf("ptl_search: rank %d ok\n", b.rank);
	return err ? 1 : 0;
}
