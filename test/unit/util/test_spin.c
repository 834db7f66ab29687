/*
 * test_spin.c - p4u_spin (p4u_spin.h): a polling thread that finds
 * nothing yields its CPU while the CPU is shared. Two threads on one CPU
 * hand a token back and forth, each waiting for it by polling: without
 * yields each hand-over waits for the holder's time slice to end (a few
 * hundred a second), with them it takes microseconds. A poll that finds
 * work resets the count.
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
static struct p4u_spin_stats stats[2];

static void *player(void *arg)
{
	int me = (int)(long)arg;

	cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(one_cpu),
					    &one_cpu), 0);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&token, __ATOMIC_ACQUIRE) != me) {
			p4u_spin_poll(true);
			continue;
		}
		p4u_spin_poll(false);
		if (me == 0)
			handoffs++;
		__atomic_store_n(&token, !me, __ATOMIC_RELEASE);
	}
	p4u_spin_stats(&stats[me]);
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
	cr_expect_gt(stats[0].yields + stats[1].yields, 0);
	/* a time slice is 0.75 to 6 ms: without yields at most a few
	 * hundred hand-overs in 0.3 s */
	cr_expect_geq(handoffs, 3000, "%lu hand-overs in 0.3 s (yields %llu "
		      "and %llu)", handoffs,
		      (unsigned long long)stats[0].yields,
		      (unsigned long long)stats[1].yields);
}

/* Alone on a thread that is not preempted between two looks: no yield;
 * and a poll that found work starts the count again. */
Test(spin, a_poll_with_work_resets_the_count)
{
	struct p4u_spin_stats a, b;
	int i;

	p4u_spin_stats(&a);
	for (i = 0; i < P4U_SPIN_CHECK - 1; i++)
		p4u_spin_poll(true);
	p4u_spin_poll(false);
	for (i = 0; i < P4U_SPIN_CHECK - 1; i++)
		p4u_spin_poll(true);
	p4u_spin_stats(&b);
	cr_expect_eq(b.idle - a.idle, 2 * (P4U_SPIN_CHECK - 1));
	cr_expect_eq(b.checks, a.checks, "looked after fewer than %d idle "
		     "polls in a row", P4U_SPIN_CHECK);
	cr_expect_eq(b.yields, a.yields);
}
