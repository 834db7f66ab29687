/*
 * test_native_abort.c - PtlAbort as the reference header (Portals 4.3)
 * says: threads waiting in PtlEQWait, PtlEQPoll, PtlCTWait and PtlCTPoll
 * return PTL_ABORTED at once, later calls of those return it at once too,
 * and freeing the EQ and CT afterwards is safe. Built with PTL_COMPAT_40,
 * so it also checks the Portals 4.0 compatibility names: PTL_INTERRUPTED
 * is what such a program sees for PTL_ABORTED, and an entry with
 * PTL_ME_ACK_DISABLE / PTL_LE_ACK_DISABLE sends no ack.
 */
#define _GNU_SOURCE
#define PTL_COMPAT_40
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "ptl_test.h"

T_PT_SUITE(native_abort);

#define NWAIT	8

static ptl_handle_eq_t w_eq[2];
static ptl_handle_ct_t w_ct[2];
static atomic_int w_started;

/* Four kinds of waiter, two of each; none can be satisfied. */
static void *waiter(void *arg)
{
	intptr_t kind = (intptr_t)arg % 4;
	ptl_size_t tests[2] = { 1000, 1000 };
	ptl_ct_event_t cev;
	ptl_event_t ev;
	unsigned which;

	atomic_fetch_add(&w_started, 1);
	switch (kind) {
	case 0:
		return (void *)(intptr_t)PtlEQWait(w_eq[0], &ev);
	case 1:
		return (void *)(intptr_t)PtlEQPoll(w_eq, 2, PTL_TIME_FOREVER,
						   &ev, &which);
	case 2:
		return (void *)(intptr_t)PtlCTWait(w_ct[0], 1000, &cev);
	default:
		return (void *)(intptr_t)PtlCTPoll(w_ct, tests, 2,
						   PTL_TIME_FOREVER, &cev,
						   &which);
	}
}

/* Join th within ms, or fail; its return code. */
static int join_within(pthread_t th, unsigned ms)
{
	struct timespec ts;
	void *r;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	cr_assert_eq(pthread_timedjoin_np(th, &r, &ts), 0,
		     "a waiter is still waiting");
	return (int)(intptr_t)r;
}

Test(native_abort, waiters_and_later_waits_return_aborted)
{
	pthread_t th[NWAIT];
	ptl_ct_event_t cev, one = { 1, 0 };
	ptl_size_t test = 1;
	ptl_event_t ev;
	unsigned which;
	uint64_t t0;
	intptr_t i;

	cr_assert_eq(PtlEQAlloc(ni, 4, &w_eq[0]), PTL_OK);
	cr_assert_eq(PtlEQAlloc(ni, 4, &w_eq[1]), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &w_ct[0]), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &w_ct[1]), PTL_OK);
	for (i = 0; i < NWAIT; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, waiter, (void *)i),
			     0);
	while (atomic_load(&w_started) < NWAIT)
		usleep(1000);
	usleep(100 * 1000);	/* let them fall asleep */
	t0 = t_now_ns() / 1000000;
	PtlAbort();
	/* once: every waiter is out, whenever it started waiting */
	for (i = 0; i < NWAIT; i++)
		cr_assert_eq(join_within(th[i], 500), PTL_ABORTED,
			     "waiter %d", (int)i);
	cr_assert_lt(t_now_ns() / 1000000 - t0, 500);
	/* later waits return at once, even with something to report */
	cr_assert_eq(PtlCTInc(w_ct[0], one), PTL_OK);
	t0 = t_now_ns() / 1000000;
	cr_assert_eq(PtlEQWait(w_eq[0], &ev), PTL_ABORTED);
	cr_assert_eq(PtlEQPoll(w_eq, 2, PTL_TIME_FOREVER, &ev, &which),
		     PTL_ABORTED);
	cr_assert_eq(PtlCTWait(w_ct[1], 5, &cev), PTL_ABORTED);
	cr_assert_eq(PtlCTPoll(w_ct, &test, 1, 10000, &cev, &which),
		     PTL_ABORTED);
	cr_assert_lt(t_now_ns() / 1000000 - t0, 100);
	/* waiters started now return too */
	for (i = 0; i < NWAIT; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, waiter, (void *)i),
			     0);
	for (i = 0; i < NWAIT; i++)
		cr_assert_eq(join_within(th[i], 500), PTL_ABORTED);
	/* and freeing is safe: nobody is inside */
	cr_assert_eq(PtlEQFree(w_eq[0]), PTL_OK);
	cr_assert_eq(PtlEQFree(w_eq[1]), PTL_OK);
	cr_assert_eq(PtlCTFree(w_ct[0]), PTL_OK);
	cr_assert_eq(PtlCTFree(w_ct[1]), PTL_OK);
	/* non-blocking calls still work */
	cr_assert_eq(PtlCTAlloc(ni, &w_ct[0]), PTL_OK);
	cr_assert_eq(PtlCTGet(w_ct[0], &cev), PTL_OK);
	cr_assert_eq(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
}

/* A new library instance (after the last PtlFini) is not aborted. */
Test(native_abort, cleared_by_reinit)
{
	ptl_event_t ev;
	unsigned which;

	PtlAbort();
	cr_assert_eq(PtlEQPoll(&eq, 1, 0, &ev, &which), PTL_ABORTED);
	PtlFini();
	t_open_pt(&ni, &eq, &pt, &self);
	cr_assert_eq(PtlEQPoll(&eq, 1, 0, &ev, &which), PTL_EQ_EMPTY);
}

/* ---- Portals 4.0 compatibility (PTL_COMPAT_40) ---------------------------- */

Test(native_abort, compat40_interrupted_is_aborted)
{
	ptl_event_t ev;

	_Static_assert(PTL_INTERRUPTED == PTL_ABORTED, "4.0 name");
	/* the 4.3 names keep their values */
	_Static_assert(PTL_ABORTED == PTL_PT_IN_USE + 1, "4.3 value");
	_Static_assert(PTL_STATUS_LAST == PTL_PT_IN_USE + 1, "4.3 value");
	_Static_assert(!(PTL_ME_ACK_DISABLE & PTL_ME_APPEND_OPTIONS_MASK),
		       "a bit of its own");
	_Static_assert(PTL_LE_ACK_DISABLE == PTL_ME_ACK_DISABLE, "LE form");
	PtlAbort();
	cr_assert_eq(PtlEQWait(eq, &ev), PTL_INTERRUPTED);
}

/* Puts asking for an ack, small (copied) and large (rendezvous on TCP),
 * get none from an ACK_DISABLE entry. */
static void no_ack_from(ptl_handle_ni_t n, ptl_handle_eq_t q,
			ptl_pt_index_t p, ptl_process_t to)
{
	static char src[65536];
	ptl_handle_md_t md;
	ptl_event_t ev;
	unsigned seen = 0;
	int i, k;

	md = t_md(n, src, sizeof(src), q, PTL_CT_NONE, 0);
	for (k = 0; k < 3; k++) {
		cr_assert_eq(PtlPut(md, 0, k ? sizeof(src) : 16, PTL_ACK_REQ,
				    to, p, 6, 0, NULL, 0), PTL_OK);
		/* the PUT and the SEND, in either order, and no ACK */
		for (i = 0; i < 2; i++) {
			ev = t_event(q);
			cr_assert(ev.type == PTL_EVENT_PUT ||
				  ev.type == PTL_EVENT_SEND, "type %d",
				  ev.type);
			cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
			seen |= 1u << ev.type;
		}
		cr_assert_eq(seen, 1u << PTL_EVENT_PUT | 1u << PTL_EVENT_SEND);
		seen = 0;
		t_no_event(q);
	}
	/* the operations are over */
	cr_assert_eq(PtlMDRelease(md), PTL_OK);
}

Test(native_abort, compat40_me_ack_disable)
{
	static char dst[65536];

	t_me(ni, pt, dst, sizeof(dst), PTL_ME_OP_PUT | PTL_ME_ACK_DISABLE |
	     PTL_ME_EVENT_LINK_DISABLE, 6, PTL_PRIORITY_LIST, PTL_CT_NONE);
	no_ack_from(ni, eq, pt, self);
}

Test(native_abort, compat40_le_ack_disable)
{
	static char dst[65536];
	ptl_handle_ni_t lni;
	ptl_handle_eq_t leq;
	ptl_handle_le_t h;
	ptl_pt_index_t lpt;
	ptl_process_t lself;
	ptl_le_t le;

	lni = t_ni(PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlEQAlloc(lni, 64, &leq), PTL_OK);
	cr_assert_eq(PtlPTAlloc(lni, 0, leq, PTL_PT_ANY, &lpt), PTL_OK);
	cr_assert_eq(PtlGetId(lni, &lself), PTL_OK);
	memset(&le, 0, sizeof(le));
	le.start = dst;
	le.length = sizeof(dst);
	le.ct_handle = PTL_CT_NONE;
	le.uid = PTL_UID_ANY;
	le.options = PTL_LE_OP_PUT | PTL_LE_ACK_DISABLE |
		     PTL_LE_EVENT_LINK_DISABLE;
	cr_assert_eq(PtlLEAppend(lni, lpt, &le, PTL_PRIORITY_LIST, NULL, &h),
		     PTL_OK);
	no_ack_from(lni, leq, lpt, lself);
}
