/*
 * test_spin.c - p4u_spin (p4u_spin.h): a polled object that keeps being
 * found empty yields the CPU while the process is being preempted. Two
 * threads on one CPU hand a token back and forth, each waiting for it
 * by polling: without yields each hand-over waits for the holder's time
 * slice to end (a few hundred a second), with them it takes
 * microseconds. A poll that finds something resets the count.
 */
#include <config.h>

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include "p4u_spin.h"
#include "p4u_time.h"

#define HANDOFF_NS	300000000ull	/* the measured time */

static int token;		/* whose turn: 0 or 1 */
static bool stop;
static unsigned long handoffs;
static cpu_set_t one_cpu;
static struct p4u_spin spins[2];	/* each player's own */

static void *player(void *arg)
{
	int me = (int)(long)arg;
	struct p4u_spin *spin = &spins[me];

	cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(one_cpu),
					    &one_cpu), 0);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&token, __ATOMIC_ACQUIRE) != me) {
			if (p4u_spin_poll(spin, true))
				p4u_spin_yield();
			continue;
		}
		(void)p4u_spin_poll(spin, false);
		if (me == 0)
			handoffs++;
		__atomic_store_n(&token, !me, __ATOMIC_RELEASE);
	}
	return NULL;
}

Test(spin, pollers_sharing_a_cpu_hand_over_quickly, .timeout = 30)
{
	pthread_t th[2];
	cpu_set_t mine;
	uint64_t t0;
	int cpu, i;

	cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
	for (cpu = 0; !CPU_ISSET(cpu, &mine); cpu++)
		;
	CPU_ZERO(&one_cpu);
	CPU_SET(cpu, &one_cpu);
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, player,
					    (void *)(long)i), 0);
	t0 = p4u_time_ns();
	while (p4u_time_ns() - t0 < HANDOFF_NS)
		usleep(10000);
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_join(th[i], NULL), 0);
	cr_expect_gt(spins[0].yields + spins[1].yields, 0);
	/* a time slice is 0.75 to 6 ms: without yields at most a few
	 * hundred hand-overs in 0.3 s */
	cr_expect_geq(handoffs, 3000, "%lu hand-overs in 0.3 s (yields %llu "
		      "and %llu)", handoffs,
		      (unsigned long long)spins[0].yields,
		      (unsigned long long)spins[1].yields);
}

/* Fewer than P4U_SPIN_CHECK empty polls in a row, twice, with one that
 * found something between: no look at the kernel, no yield. */
Test(spin, a_poll_that_finds_something_resets_the_count)
{
	struct p4u_spin s = { 0 };
	int i;

	for (i = 0; i < P4U_SPIN_CHECK - 1; i++)
		cr_assert_not(p4u_spin_poll(&s, true));
	cr_assert_not(p4u_spin_poll(&s, false));
	for (i = 0; i < P4U_SPIN_CHECK - 1; i++)
		cr_assert_not(p4u_spin_poll(&s, true));
	cr_expect_eq(s.checks, 0, "looked after fewer than %d empty polls "
		     "in a row", P4U_SPIN_CHECK);
	cr_expect_eq(s.yields, 0);
	/* the next one looks (the first look only takes the count) */
	(void)p4u_spin_poll(&s, true);
	cr_expect_eq(s.checks, 1);
}
