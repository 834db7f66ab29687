/*
 * test_timer.c - p4u_timer (the pairing heap of deadlines) against a
 * plain reference: random arms, re-arms, cancels and runs must fire
 * exactly the timers a sorted list says are due, in deadline order (and
 * in arming order among equal deadlines), each once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <criterion/criterion.h>

#include "p4u_compiler.h"
#include "p4u_timer.h"

#define NT 512

struct tt {
	struct p4u_timer timer;
	int id;
	uint64_t deadline;	/* reference: what it is armed for */
	uint64_t armed_seq;	/* reference: when, for ties */
	bool armed;
	int fired;
};

static struct tt ts[NT];
static struct p4u_timerq q;
static int order[NT * 8];
static int norder;
static uint64_t seq;

static void tt_fire(struct p4u_timer *timer, uint64_t now)
{
	struct tt *t = container_of(timer, struct tt, timer);

	cr_assert(t->armed, "timer %d fired but was not armed", t->id);
	cr_assert(t->deadline <= now, "timer %d fired at %llu before its "
		  "deadline %llu", t->id, (unsigned long long)now,
		  (unsigned long long)t->deadline);
	cr_assert(!p4u_timer_armed(timer), "timer %d still armed in its "
		  "callback", t->id);
	t->armed = false;
	t->fired++;
	order[norder++] = t->id;
}

static void setup(void)
{
	int i;

	p4u_timerq_init(&q);
	for (i = 0; i < NT; i++) {
		p4u_timer_init(&ts[i].timer, tt_fire);
		ts[i].id = i;
		ts[i].armed = false;
		ts[i].fired = 0;
	}
	norder = 0;
	seq = 0;
	srand(7);
}

TestSuite(timer, .init = setup, .timeout = 30);

static void ref_arm(int i, uint64_t deadline)
{
	p4u_timer_arm(&q, &ts[i].timer, deadline);
	ts[i].deadline = deadline;
	ts[i].armed = true;
	ts[i].armed_seq = seq++;
}

static void ref_cancel(int i)
{
	p4u_timer_cancel(&q, &ts[i].timer);
	ts[i].armed = false;
}

/* the earliest armed timer of the reference, -1 if none */
static int ref_first(void)
{
	int i, best = -1;

	for (i = 0; i < NT; i++) {
		if (!ts[i].armed)
			continue;
		if (best < 0 || ts[i].deadline < ts[best].deadline ||
		    (ts[i].deadline == ts[best].deadline &&
		     ts[i].armed_seq < ts[best].armed_seq))
			best = i;
	}
	return best;
}

static uint32_t ref_count(void)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < NT; i++)
		n += ts[i].armed;
	return n;
}

Test(timer, empty_queue_has_no_deadline)
{
	cr_assert_eq(p4u_timerq_next(&q), P4U_TIMER_NEVER);
	cr_assert_eq(p4u_timerq_run(&q, UINT64_MAX - 1), 0);
}

Test(timer, fires_in_deadline_order_and_only_when_due)
{
	ref_arm(0, 300);
	ref_arm(1, 100);
	ref_arm(2, 200);
	cr_assert_eq(p4u_timerq_next(&q), 100);
	cr_assert_eq(p4u_timerq_run(&q, 99), 0);
	cr_assert_eq(p4u_timerq_run(&q, 250), 2);
	cr_assert_eq(norder, 2);
	cr_assert_eq(order[0], 1);
	cr_assert_eq(order[1], 2);
	cr_assert_eq(p4u_timerq_next(&q), 300);
	cr_assert_eq(p4u_timerq_run(&q, 300), 1);
	cr_assert_eq(order[2], 0);
	cr_assert_eq(q.count, 0);
}

Test(timer, equal_deadlines_fire_in_arming_order)
{
	int i;

	for (i = 0; i < 32; i++)
		ref_arm(i, 1000);
	cr_assert_eq(p4u_timerq_run(&q, 1000), 32);
	for (i = 0; i < 32; i++)
		cr_assert_eq(order[i], i, "position %d fired timer %d", i,
			     order[i]);
}

Test(timer, rearm_moves_and_cancel_removes)
{
	ref_arm(0, 100);
	ref_arm(1, 200);
	ref_arm(0, 300);		/* later: 1 is first now */
	cr_assert_eq(p4u_timerq_next(&q), 200);
	ref_arm(1, 50);			/* the root moving earlier */
	cr_assert_eq(p4u_timerq_next(&q), 50);
	ref_cancel(1);
	ref_cancel(1);			/* twice is harmless */
	cr_assert_eq(p4u_timerq_next(&q), 300);
	cr_assert_eq(p4u_timerq_run(&q, 1000), 1);
	cr_assert_eq(order[0], 0);
}

/* a callback that re-arms itself (a periodic timer) and one other */
static struct tt *chain_other;
static int chain_left;

static void tt_chain(struct p4u_timer *timer, uint64_t now)
{
	struct tt *t = container_of(timer, struct tt, timer);

	order[norder++] = t->id;
	if (--chain_left > 0)
		p4u_timer_arm(&q, timer, now);	/* due again at once */
	if (chain_other) {
		p4u_timer_cancel(&q, &chain_other->timer);
		chain_other = NULL;
	}
}

Test(timer, callbacks_may_arm_and_cancel)
{
	p4u_timer_init(&ts[0].timer, tt_chain);
	chain_left = 3;
	chain_other = &ts[1];
	ref_arm(1, 20);
	p4u_timer_arm(&q, &ts[0].timer, 10);
	cr_assert_eq(p4u_timerq_run(&q, 30), 3, "fired %d", norder);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(order[i], 0);
	cr_assert_eq(ts[1].fired, 0, "a cancelled timer fired");
	cr_assert_eq(q.count, 0);
}

/* the reference's due timers at now, in firing order; returns how many */
static int ref_due(uint64_t now, int *due)
{
	int i, j, n = 0, tmp;

	for (i = 0; i < NT; i++)
		if (ts[i].armed && ts[i].deadline <= now)
			due[n++] = i;
	for (i = 1; i < n; i++)	/* insertion sort by (deadline, seq) */
		for (j = i; j > 0; j--) {
			struct tt *a = &ts[due[j - 1]], *b = &ts[due[j]];

			if (a->deadline < b->deadline ||
			    (a->deadline == b->deadline &&
			     a->armed_seq < b->armed_seq))
				break;
			tmp = due[j];
			due[j] = due[j - 1];
			due[j - 1] = tmp;
		}
	return n;
}

/* many random operations against the reference */
Test(timer, random_operations_match_the_reference)
{
	static int due[NT];
	uint64_t now = 0;
	int step, i, n, want;

	for (step = 0; step < 100000; step++) {
		i = rand() % NT;
		switch (rand() % 8) {
		case 0:
		case 1:
		case 2:
			ref_arm(i, now + (uint64_t)(rand() % 1000));
			break;
		case 3:
			ref_cancel(i);
			break;
		case 4:
			/* many equal deadlines */
			ref_arm(i, now + 500);
			break;
		default:
			now += (uint64_t)(rand() % 50);
			n = ref_due(now, due);
			norder = 0;
			cr_assert_eq(p4u_timerq_run(&q, now), n,
				     "step %d: fired %d, reference %d", step,
				     norder, n);
			for (i = 0; i < n; i++)
				cr_assert_eq(order[i], due[i], "step %d: "
					     "position %d fired %d, reference "
					     "%d", step, i, order[i], due[i]);
			break;
		}
		cr_assert_eq(q.count, ref_count(), "step %d: count", step);
		want = ref_first();
		cr_assert_eq(p4u_timerq_next(&q),
			     want < 0 ? P4U_TIMER_NEVER : ts[want].deadline,
			     "step %d: next deadline", step);
	}
}
