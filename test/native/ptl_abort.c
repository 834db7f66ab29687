/*
 * ptl_abort.c - PtlAbort with threads, as the reference header describes
 * it: "all threads in PtlEQWait/PtlEQPoll/PtlCTWait/PtlCTPoll return
 * PTL_ABORTED; subsequent calls to polling and waiting routines must
 * immediately return PTL_ABORTED. Once PtlAbort() is completed, the
 * application may safely call PtlEQFree() and PtlCTFree()."
 *
 * Rank 1 has eight threads waiting (two of each call) on EQs and CTs
 * nothing reports to, and aborts: every waiter is back within a second
 * with PTL_ABORTED. Rank 0's put arrives at an entry with an EQ and a CT
 * of their own: waits on those, which would now succeed, return
 * PTL_ABORTED at once, as do eight fresh waiters; the non-blocking calls
 * still see the put; everything is freed. A new library instance
 * (PtlFini, PtlInit) is not aborted. Rank 0 only sends the put.
 *
 *   ptlrun -n 2 ./ptl_abort
 *
 * Written against portals4.h only.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../examples/portals4/ptl_boot.h"

#define AB_PT		6
#define AB_WAITERS	8

static int err;

#define FAIL(...)                                                           \
	do {                                                                \
		fprintf(stderr, "ptl_abort: " __VA_ARGS__);                 \
		fprintf(stderr, "\n");                                      \
		err++;                                                      \
	} while (0)

/* the waiters' EQs and CTs, which nothing reports to */
static ptl_handle_eq_t weqs[2];
static ptl_handle_ct_t wcts[2];
static atomic_int started, finished;
static int results[AB_WAITERS];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waiter i: one of the four calls, on objects nothing will satisfy. */
static void *waiter(void *arg)
{
	int i = (int)(intptr_t)arg, ret;
	ptl_size_t tests[2] = { 1, 1 };
	ptl_ct_event_t cev;
	ptl_event_t ev;
	unsigned which;

	atomic_fetch_add(&started, 1);
	switch (i % 4) {
	case 0:
		ret = PtlEQWait(weqs[0], &ev);
		break;
	case 1:
		ret = PtlEQPoll(weqs, 2, PTL_TIME_FOREVER, &ev, &which);
		break;
	case 2:
		ret = PtlCTWait(wcts[0], 1, &cev);
		break;
	default:
		ret = PtlCTPoll(wcts, tests, 2, PTL_TIME_FOREVER, &cev,
				&which);
		break;
	}
	results[i] = ret;
	atomic_fetch_add(&finished, 1);
	return NULL;
}

/*
 * Start the waiters; after abort_first (0: they start aborted), all must
 * be back with PTL_ABORTED within a second. A waiter still inside fails
 * the test (it cannot be joined).
 */
static void waiters_run(int abort_first)
{
	pthread_t th[AB_WAITERS];
	uint64_t t0;
	int i;

	atomic_store(&started, 0);
	atomic_store(&finished, 0);
	for (i = 0; i < AB_WAITERS; i++)
		if (pthread_create(&th[i], NULL, waiter,
				   (void *)(intptr_t)i)) {
			FAIL("pthread_create");
			exit(1);
		}
	while (atomic_load(&started) < AB_WAITERS)
		boot_sleep_ms(1);
	if (abort_first) {
		boot_sleep_ms(200);	/* let them fall asleep */
		if (atomic_load(&finished))
			FAIL("a waiter returned before PtlAbort");
		PtlAbort();
	}
	t0 = now_ms();
	while (atomic_load(&finished) < AB_WAITERS && now_ms() - t0 < 1000)
		boot_sleep_ms(1);
	if (atomic_load(&finished) < AB_WAITERS) {
		FAIL("%d waiters still waiting 1 s after PtlAbort",
		     AB_WAITERS - atomic_load(&finished));
		exit(1);
	}
	for (i = 0; i < AB_WAITERS; i++) {
		pthread_join(th[i], NULL);
		if (results[i] != PTL_ABORTED)
			FAIL("waiter %d (%s): %d, want PTL_ABORTED", i,
			     abort_first ? "asleep" : "started after", results[i]);
	}
}

/* Rank 1: a PT whose entry reports to eq and counts in ct. */
static void aborter(struct boot *b, ptl_handle_ni_t ni)
{
	ptl_size_t one = 1;
	ptl_handle_me_t me_h;
	ptl_handle_eq_t eq;
	ptl_handle_ct_t ct;
	ptl_ct_event_t cev;
	ptl_pt_index_t pt;
	ptl_event_t ev;
	unsigned which;
	ptl_me_t me;
	uint64_t t0;

	BOOT_CHECK(PtlEQAlloc(ni, 16, &eq));
	BOOT_CHECK(PtlEQAlloc(ni, 16, &weqs[0]));
	BOOT_CHECK(PtlEQAlloc(ni, 16, &weqs[1]));
	BOOT_CHECK(PtlCTAlloc(ni, &ct));
	BOOT_CHECK(PtlCTAlloc(ni, &wcts[0]));
	BOOT_CHECK(PtlCTAlloc(ni, &wcts[1]));
	BOOT_CHECK(PtlPTAlloc(ni, 0, eq, AB_PT, &pt));
	memset(&me, 0, sizeof(me));
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		     PTL_ME_EVENT_LINK_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	BOOT_CHECK(PtlMEAppend(ni, AB_PT, &me, PTL_PRIORITY_LIST, NULL,
			       &me_h));
	/* rank 0 may send (the last barrier: it waits, and after
	 * PtlAbort no wait would) */
	boot_barrier(b);
	/* waiters asleep, then PtlAbort */
	waiters_run(1);
	/* rank 0's put arrives (or did): the non-blocking calls see it */
	t0 = now_ms();
	do {
		BOOT_CHECK(PtlCTGet(ct, &cev));
		if (cev.success < 1)
			boot_sleep_ms(5);
	} while (cev.success < 1 && now_ms() - t0 < 10000);
	if (cev.success != 1)
		FAIL("the put never arrived");
	/* waits that could succeed now return PTL_ABORTED, at once */
	t0 = now_ms();
	if (PtlCTWait(ct, 1, &cev) != PTL_ABORTED)
		FAIL("PtlCTWait after PtlAbort did not return PTL_ABORTED");
	if (PtlCTPoll(&ct, &one, 1, 10000, &cev, &which) != PTL_ABORTED)
		FAIL("PtlCTPoll after PtlAbort did not return PTL_ABORTED");
	if (PtlEQWait(eq, &ev) != PTL_ABORTED)
		FAIL("PtlEQWait after PtlAbort did not return PTL_ABORTED");
	if (PtlEQPoll(&eq, 1, 10000, &ev, &which) != PTL_ABORTED)
		FAIL("PtlEQPoll after PtlAbort did not return PTL_ABORTED");
	if (now_ms() - t0 > 500)
		FAIL("the waits after PtlAbort took %llu ms",
		     (unsigned long long)(now_ms() - t0));
	/* and so do waiters started now */
	waiters_run(0);
	/* the event is still there for PtlEQGet */
	if (PtlEQGet(eq, &ev) != PTL_OK || ev.type != PTL_EVENT_PUT ||
	    ev.initiator.phys.pid != b->peers[0].phys.pid)
		FAIL("PtlEQGet after PtlAbort: no PUT event");
	/* nobody is inside: freeing is safe */
	BOOT_CHECK(PtlMEUnlink(me_h));
	BOOT_CHECK(PtlPTFree(ni, AB_PT));
	BOOT_CHECK(PtlEQFree(eq));
	BOOT_CHECK(PtlEQFree(weqs[0]));
	BOOT_CHECK(PtlEQFree(weqs[1]));
	BOOT_CHECK(PtlCTFree(ct));
	BOOT_CHECK(PtlCTFree(wcts[0]));
	BOOT_CHECK(PtlCTFree(wcts[1]));
}

/* Rank 0: one put to rank 1's entry, acknowledged. */
static void sender(struct boot *b, ptl_handle_ni_t ni)
{
	ptl_handle_md_t md_h;
	ptl_handle_eq_t eq;
	ptl_event_t ev;
	ptl_md_t md;

	BOOT_CHECK(PtlEQAlloc(ni, 16, &eq));
	memset(&md, 0, sizeof(md));
	md.eq_handle = eq;
	md.ct_handle = PTL_CT_NONE;
	md.options = PTL_MD_EVENT_SEND_DISABLE;
	BOOT_CHECK(PtlMDBind(ni, &md, &md_h));
	boot_barrier(b);
	BOOT_CHECK(PtlPut(md_h, 0, 0, PTL_ACK_REQ, b->peers[1], AB_PT, 0, 0,
			  NULL, 0));
	BOOT_CHECK(PtlEQWait(eq, &ev));
	if (ev.type != PTL_EVENT_ACK || ev.ni_fail_type != PTL_NI_OK)
		FAIL("the put's ack: type %d fail %d", ev.type,
		     ev.ni_fail_type);
	BOOT_CHECK(PtlMDRelease(md_h));
	BOOT_CHECK(PtlEQFree(eq));
}

int main(void)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_event_t ev;
	unsigned which;
	struct boot b;

	boot_env(&b);
	if (b.size != 2) {
		fprintf(stderr, "ptl_abort: run with ptlrun -n 2\n");
		return 2;
	}
	BOOT_CHECK(PtlInit());
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			     NULL, NULL, &ni));
	boot_init(&b, ni, 0);
	if (b.rank == 1)
		aborter(&b, ni);
	else
		sender(&b, ni);
	boot_fini(&b);
	PtlNIFini(ni);
	PtlFini();
	if (b.rank == 1) {
		/* a new instance waits again */
		BOOT_CHECK(PtlInit());
		BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
				     PTL_NI_MATCHING | PTL_NI_PHYSICAL,
				     PTL_PID_ANY, NULL, NULL, &ni));
		BOOT_CHECK(PtlEQAlloc(ni, 4, &eq));
		if (PtlEQPoll(&eq, 1, 10, &ev, &which) != PTL_EQ_EMPTY)
			FAIL("a new instance is still aborted");
		BOOT_CHECK(PtlEQFree(eq));
		PtlNIFini(ni);
		PtlFini();
	}
	if (err)
		fprintf(stderr, "ptl_abort: rank %d: %d failures\n", b.rank,
			err);
	else
		printf("ptl_abort: rank %d ok\n", b.rank);
	return err ? 1 : 0;
}
