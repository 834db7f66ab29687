/*
 * test_native_wait.c - libportals progress and blocking waits (docs/design.md
 * §8.7): the progress thread is the engine worker's (one, named, gone after
 * the last PtlFini); an idle library and an idle PtlEQPoll / PtlCTPoll sleep
 * (no periodic tick: a few context switches and no CPU over 300 ms); a
 * put or a CT change wakes a waiter within milliseconds; several waiters
 * each get their wake-up; PtlAbort, PtlEQFree, PtlCTFree and the last
 * PtlFini wake waiters at once; PtlCTInc fires the triggered operations it
 * makes due before it returns.
 *
 * Timing bounds are generous (a loaded 2-core machine); the bounds on
 * voluntary context switches fail on a waiter or a thread that wakes
 * every 10 ms.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>

#include "ptl_test.h"
#include "../../native/ptl_threads.h"

T_PT_SUITE(native_wait);

/* Voluntary context switches: of the calling thread, of the process. */
static long vcsw(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_nvcsw;
}

/* CPU time of the whole process (every thread), microseconds. */
static uint64_t cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Join within ms milliseconds or fail; returns the thread's result. */
static intptr_t join_within(pthread_t th, unsigned ms)
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
		     "the waiter did not return within %u ms", ms);
	return (intptr_t)r;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

Test(native_wait, one_named_progress_thread)
{
	ptl_handle_ni_t ni2;

	cr_assert_eq(ptl_threads_named("ptl_progress"), 1);
	/* every NI kind shares it; so do nested PtlInit calls */
	ni2 = t_ni(PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlInit(), PTL_OK);
	cr_assert_eq(ptl_threads_named("ptl_progress"), 1);
	PtlFini();
	cr_assert_eq(PtlNIFini(ni2), PTL_OK);
	cr_assert_eq(ptl_threads_named("ptl_progress"), 1);
	/* the last PtlFini stops and joins it */
	PtlFini();
	cr_assert_eq(ptl_threads_gone("ptl_progress"), 0);
	t_init_loop();
	cr_assert_eq(ptl_threads_named("ptl_progress"), 1);
}

/*
 * Nothing happening: the progress thread sleeps until there is work, and
 * so do PtlEQPoll and PtlCTPoll until their timeout. A 10 ms tick would
 * be 30 wake-ups in 300 ms, each a voluntary context switch.
 */
Test(native_wait, idle_waits_sleep)
{
	ptl_handle_ct_t ct;
	ptl_size_t test = 1;
	ptl_ct_event_t cev;
	ptl_event_t ev;
	uint64_t t0, c0;
	long s0, p0;
	unsigned which;

	cr_assert_eq(PtlCTAlloc(ni, &ct), PTL_OK);
	/* let the thread settle first */
	usleep(20 * 1000);
	/* the library alone: its thread must not tick */
	p0 = vcsw(RUSAGE_SELF);
	usleep(300 * 1000);
	cr_assert_leq(vcsw(RUSAGE_SELF) - p0, 5,
		      "the idle library woke %ld times in 300 ms",
		      vcsw(RUSAGE_SELF) - p0);
	/* a waiter with nothing to wait for */
	p0 = vcsw(RUSAGE_SELF);
	s0 = vcsw(RUSAGE_THREAD);
	c0 = cpu_us();
	t0 = t_now_ns();
	cr_assert_eq(PtlEQPoll(&eq, 1, 300, &ev, &which), PTL_EQ_EMPTY);
	cr_assert_geq(t_now_ns() - t0, 300 * 1000000ULL);
	cr_assert_leq(vcsw(RUSAGE_THREAD) - s0, 3,
		      "PtlEQPoll slept %ld times in 300 ms",
		      vcsw(RUSAGE_THREAD) - s0);
	cr_assert_leq(vcsw(RUSAGE_SELF) - p0, 6);
	cr_assert_lt(cpu_us() - c0, 20000, "PtlEQPoll used %llu us of CPU",
		     (unsigned long long)(cpu_us() - c0));
	/* the same for a CT */
	s0 = vcsw(RUSAGE_THREAD);
	c0 = cpu_us();
	t0 = t_now_ns();
	cr_assert_eq(PtlCTPoll(&ct, &test, 1, 300, &cev, &which),
		     PTL_CT_NONE_REACHED);
	cr_assert_geq(t_now_ns() - t0, 300 * 1000000ULL);
	cr_assert_leq(vcsw(RUSAGE_THREAD) - s0, 3,
		      "PtlCTPoll slept %ld times in 300 ms",
		      vcsw(RUSAGE_THREAD) - s0);
	cr_assert_lt(cpu_us() - c0, 20000, "PtlCTPoll used %llu us of CPU",
		     (unsigned long long)(cpu_us() - c0));
}

/* ---- wake-up latency ---------------------------------------------------- */

#define WAKE_ROUNDS	8
#define WAKE_GAP_MS	60	/* the waiter sleeps so long a round */

static ptl_handle_ct_t wake_ct;
static uint64_t wake_at[WAKE_ROUNDS];
static long wake_vcsw;

static void *eq_waiter(void *arg)
{
	ptl_event_t ev;
	long s0 = vcsw(RUSAGE_THREAD);
	int i, ret;

	(void)arg;
	for (i = 0; i < WAKE_ROUNDS; i++) {
		ret = PtlEQWait(eq, &ev);
		__atomic_store_n(&wake_at[i], t_now_ns(), __ATOMIC_RELEASE);
		if (ret != PTL_OK || ev.type != PTL_EVENT_PUT)
			return (void *)(intptr_t)(ret ? ret : -1);
	}
	wake_vcsw = vcsw(RUSAGE_THREAD) - s0;
	return NULL;
}

static void *ct_waiter(void *arg)
{
	ptl_ct_event_t cev;
	long s0 = vcsw(RUSAGE_THREAD);
	int i, ret;

	(void)arg;
	for (i = 0; i < WAKE_ROUNDS; i++) {
		ret = PtlCTWait(wake_ct, (ptl_size_t)i + 1, &cev);
		__atomic_store_n(&wake_at[i], t_now_ns(), __ATOMIC_RELEASE);
		if (ret != PTL_OK)
			return (void *)(intptr_t)ret;
	}
	wake_vcsw = vcsw(RUSAGE_THREAD) - s0;
	return NULL;
}

/*
 * The waiter sleeps WAKE_GAP_MS each round, then one put (or CT
 * increment) must wake it within a few milliseconds; and while it sleeps
 * it must not wake on its own (a 10 ms tick: 6 times a round).
 */
static void wake_rounds(bool ct)
{
	static char src[8], dst[8];
	uint64_t sent[WAKE_ROUNDS], lat[WAKE_ROUNDS];
	ptl_handle_md_t md;
	pthread_t th;
	int i;

	md = t_md(ni, src, sizeof(src), PTL_EQ_NONE, PTL_CT_NONE, 0);
	t_me(ni, pt, dst, sizeof(dst), PTL_ME_OP_PUT |
	     PTL_ME_EVENT_LINK_DISABLE, 9, PTL_PRIORITY_LIST, PTL_CT_NONE);
	cr_assert_eq(PtlCTAlloc(ni, &wake_ct), PTL_OK);
	cr_assert_eq(pthread_create(&th, NULL, ct ? ct_waiter : eq_waiter,
				    NULL), 0);
	for (i = 0; i < WAKE_ROUNDS; i++) {
		usleep(WAKE_GAP_MS * 1000);
		sent[i] = t_now_ns();
		if (ct)
			cr_assert_eq(PtlCTInc(wake_ct,
					      (ptl_ct_event_t){ 1, 0 }),
				     PTL_OK);
		else
			cr_assert_eq(PtlPut(md, 0, sizeof(src),
					    PTL_NO_ACK_REQ, self, pt, 9, 0,
					    NULL, 0), PTL_OK);
		/* the next round starts once this one was seen */
		while (!__atomic_load_n(&wake_at[i], __ATOMIC_ACQUIRE) &&
		       t_now_ns() - sent[i] < 5000000000ULL)
			usleep(1000);
	}
	cr_assert_eq(join_within(th, 10000), 0);
	for (i = 0; i < WAKE_ROUNDS; i++)
		lat[i] = wake_at[i] - sent[i];
	qsort(lat, WAKE_ROUNDS, sizeof(lat[0]), cmp_u64);
	cr_assert_lt(lat[WAKE_ROUNDS / 2], 5000000ULL,
		     "median wake-up %llu us",
		     (unsigned long long)lat[WAKE_ROUNDS / 2] / 1000);
	cr_assert_lt(lat[WAKE_ROUNDS - 1], 100000000ULL,
		     "slowest wake-up %llu us",
		     (unsigned long long)lat[WAKE_ROUNDS - 1] / 1000);
	cr_assert_leq(wake_vcsw, 4 * WAKE_ROUNDS,
		      "the waiter woke %ld times in %d rounds", wake_vcsw,
		      WAKE_ROUNDS);
}

Test(native_wait, put_wakes_eq_waiter)
{
	wake_rounds(false);
}

Test(native_wait, ct_inc_wakes_ct_waiter)
{
	wake_rounds(true);
}

/* ---- several waiters ---------------------------------------------------- */

#define MW_N		4
#define MW_PUTS		40	/* per waiter */

static ptl_handle_eq_t mw_eq[MW_N];
static atomic_int mw_got[MW_N];

/* Each waiter has its own EQ; every put must reach (and wake) its own. */
static void *mw_waiter(void *arg)
{
	intptr_t k = (intptr_t)arg;
	ptl_event_t ev;
	unsigned which;
	int ret;

	while (atomic_load(&mw_got[k]) < MW_PUTS) {
		ret = PtlEQPoll(&mw_eq[k], 1, 10000, &ev, &which);
		if (ret != PTL_OK)
			return (void *)(intptr_t)ret;
		if (ev.type == PTL_EVENT_PUT)
			atomic_fetch_add(&mw_got[k], 1);
	}
	return NULL;
}

Test(native_wait, every_waiter_gets_its_wake_up)
{
	static char src[8], dst[MW_N][8];
	ptl_pt_index_t mpt[MW_N];
	ptl_handle_md_t md;
	pthread_t th[MW_N];
	intptr_t k;
	int i;

	md = t_md(ni, src, sizeof(src), PTL_EQ_NONE, PTL_CT_NONE, 0);
	for (k = 0; k < MW_N; k++) {
		cr_assert_eq(PtlEQAlloc(ni, 256, &mw_eq[k]), PTL_OK);
		cr_assert_eq(PtlPTAlloc(ni, 0, mw_eq[k], PTL_PT_ANY, &mpt[k]),
			     PTL_OK);
		t_me(ni, mpt[k], dst[k], 8, PTL_ME_OP_PUT |
		     PTL_ME_EVENT_LINK_DISABLE, 0, PTL_PRIORITY_LIST,
		     PTL_CT_NONE);
	}
	for (k = 0; k < MW_N; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, mw_waiter,
					    (void *)k), 0);
	/* one waiter's put at a time, at irregular moments, so the others
	 * are asleep or waking up from another's wake-up */
	for (i = 0; i < MW_N * MW_PUTS; i++) {
		k = (i * 7 + i / MW_N) % MW_N;
		cr_assert_eq(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, self, mpt[k], 0,
				    0, NULL, 0), PTL_OK);
		if (i % 3 == 0)
			usleep((useconds_t)(i % 5) * 300);
	}
	for (k = 0; k < MW_N; k++)
		cr_assert_eq(join_within(th[k], 20000), 0, "waiter %d",
			     (int)k);
	for (k = 0; k < MW_N; k++)
		cr_assert_eq(atomic_load(&mw_got[k]), MW_PUTS);
}

/* ---- what else wakes a waiter ------------------------------------------- */

static ptl_handle_eq_t gone_eq;
static ptl_handle_ct_t gone_ct;

static void *gone_eq_waiter(void *arg)
{
	ptl_event_t ev;

	(void)arg;
	return (void *)(intptr_t)PtlEQWait(gone_eq, &ev);
}

static void *gone_ct_waiter(void *arg)
{
	ptl_ct_event_t cev;

	(void)arg;
	return (void *)(intptr_t)PtlCTWait(gone_ct, 1, &cev);
}

/* Waiters asleep: act() must make both return ret within 200 ms. */
static void wake_both(void (*act)(void), int ret)
{
	pthread_t t1, t2;
	uint64_t t0;

	cr_assert_eq(pthread_create(&t1, NULL, gone_eq_waiter, NULL), 0);
	cr_assert_eq(pthread_create(&t2, NULL, gone_ct_waiter, NULL), 0);
	usleep(100 * 1000);	/* let them fall asleep */
	t0 = t_now_ns();
	act();
	cr_assert_eq(join_within(t1, 200), ret);
	cr_assert_eq(join_within(t2, 200), ret);
	cr_assert_lt(t_now_ns() - t0, 200000000ULL);
}

static void act_abort(void)
{
	PtlAbort();
}

static void act_fini(void)
{
	PtlFini();	/* the last one: the NIs go, waiters must get out */
}

Test(native_wait, abort_wakes_waiters_at_once)
{
	cr_assert_eq(PtlEQAlloc(ni, 4, &gone_eq), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &gone_ct), PTL_OK);
	wake_both(act_abort, PTL_ABORTED);
}

/* One at a time: a wake-up for either would wake both. */
Test(native_wait, freeing_wakes_waiters)
{
	pthread_t th;

	cr_assert_eq(PtlEQAlloc(ni, 4, &gone_eq), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &gone_ct), PTL_OK);
	cr_assert_eq(pthread_create(&th, NULL, gone_eq_waiter, NULL), 0);
	usleep(100 * 1000);
	cr_assert_eq(PtlEQFree(gone_eq), PTL_OK);
	cr_assert_eq(join_within(th, 200), PTL_ARG_INVALID);
	cr_assert_eq(pthread_create(&th, NULL, gone_ct_waiter, NULL), 0);
	usleep(100 * 1000);
	cr_assert_eq(PtlCTFree(gone_ct), PTL_OK);
	cr_assert_eq(join_within(th, 200), PTL_ARG_INVALID);
}

Test(native_wait, last_fini_waits_for_waiters)
{
	ptl_event_t ev;

	cr_assert_eq(PtlEQAlloc(ni, 4, &gone_eq), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &gone_ct), PTL_OK);
	wake_both(act_fini, PTL_ARG_INVALID);
	cr_assert_eq(ptl_threads_gone("ptl_progress"), 0);
	cr_assert_eq(PtlEQGet(gone_eq, &ev), PTL_NO_INIT);
}

/* ---- triggered operations ----------------------------------------------- */

/*
 * PtlCTInc makes a triggered put due: it is posted before PtlCTInc
 * returns, not at the worker's next progress. The put is copied at post,
 * so its MD's CT counts the send at once; PtlCTGet does not progress.
 */
Test(native_wait, ct_inc_fires_triggered_before_return)
{
	static char src[8], dst[8];
	ptl_handle_ct_t trig, sent;
	ptl_handle_md_t md;
	ptl_ct_event_t cev;
	int i;

	cr_assert_eq(PtlCTAlloc(ni, &trig), PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &sent), PTL_OK);
	md = t_md(ni, src, sizeof(src), PTL_EQ_NONE, sent,
		  PTL_MD_EVENT_CT_SEND);
	t_me(ni, pt, dst, sizeof(dst), PTL_ME_OP_PUT |
	     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE, 5,
	     PTL_PRIORITY_LIST, PTL_CT_NONE);
	for (i = 0; i < 20; i++) {
		cr_assert_eq(PtlTriggeredPut(md, 0, sizeof(src),
					     PTL_NO_ACK_REQ, self, pt, 5, 0,
					     NULL, 0, trig,
					     (ptl_size_t)i + 1), PTL_OK);
		cr_assert_eq(PtlCTGet(sent, &cev), PTL_OK);
		cr_assert_eq(cev.success, (ptl_size_t)i);
		cr_assert_eq(PtlCTInc(trig, (ptl_ct_event_t){ 1, 0 }),
			     PTL_OK);
		cr_assert_eq(PtlCTGet(sent, &cev), PTL_OK);
		cr_assert_eq(cev.success, (ptl_size_t)i + 1,
			     "round %d: not sent when PtlCTInc returned", i);
	}
	/* PtlCTSet too */
	cr_assert_eq(PtlTriggeredPut(md, 0, sizeof(src), PTL_NO_ACK_REQ,
				     self, pt, 5, 0, NULL, 0, trig, 100),
		     PTL_OK);
	cr_assert_eq(PtlCTSet(trig, (ptl_ct_event_t){ 100, 0 }), PTL_OK);
	cr_assert_eq(PtlCTGet(sent, &cev), PTL_OK);
	cr_assert_eq(cev.success, 21);
}
