/*
 * p4u_timer.c - the pairing heap behind p4u_timer.h.
 *
 * A pairing heap keeps the earliest deadline at the root; insertion links
 * the new node with the root (O(1)); removing the root pairs its children
 * left to right and melds the pairs right to left (two-pass, O(log n)
 * amortised). Removing an inner node cuts its subtree out, removes the
 * subtree's root and melds the rest back with the heap root. Every node
 * knows its left neighbour (or its parent, when it is a first child), so
 * a cut needs no search.
 */
#include <stdbool.h>
#include <stddef.h>

#include "p4u_timer.h"

static bool p4u_timer_before(const struct p4u_timer *a,
			     const struct p4u_timer *b)
{
	return a->deadline_ns < b->deadline_ns ||
	       (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

/* Join two heaps; the root that fires first stays on top. */
static struct p4u_timer *p4u_timer_meld(struct p4u_timer *a,
					struct p4u_timer *b)
{
	struct p4u_timer *top, *sub;

	if (!a)
		return b;
	if (!b)
		return a;
	if (p4u_timer_before(b, a)) {
		top = b;
		sub = a;
	} else {
		top = a;
		sub = b;
	}
	sub->prev = top;
	sub->next = top->child;
	if (top->child)
		top->child->prev = sub;
	top->child = sub;
	top->next = top->prev = NULL;
	return top;
}

/* Two-pass pairing of a sibling list; returns the new root. */
static struct p4u_timer *p4u_timer_merge_pairs(struct p4u_timer *first)
{
	struct p4u_timer *a, *b, *rest, *pairs = NULL, *heap = NULL;

	/* pass 1: meld neighbours pairwise, stacking the results */
	while (first) {
		a = first;
		b = a->next;
		rest = b ? b->next : NULL;
		a->next = a->prev = NULL;
		if (b)
			b->next = b->prev = NULL;
		a = p4u_timer_meld(a, b);
		a->next = pairs;	/* stack link, reset by the meld below */
		pairs = a;
		first = rest;
	}
	/* pass 2: meld the stack from its top, the last pair first */
	while (pairs) {
		a = pairs;
		pairs = a->next;
		a->next = NULL;
		heap = p4u_timer_meld(heap, a);
	}
	return heap;
}

/* Take the subtree rooted at timer out of its parent's child list. */
static void p4u_timer_cut(struct p4u_timer *timer)
{
	struct p4u_timer *left = timer->prev;

	if (left->child == timer)	/* a first child: left is the parent */
		left->child = timer->next;
	else
		left->next = timer->next;
	if (timer->next)
		timer->next->prev = left;
	timer->next = timer->prev = NULL;
}

static void p4u_timer_remove(struct p4u_timerq *q, struct p4u_timer *timer)
{
	struct p4u_timer *sub;

	if (timer == q->root) {
		q->root = p4u_timer_merge_pairs(timer->child);
	} else {
		p4u_timer_cut(timer);
		sub = p4u_timer_merge_pairs(timer->child);
		q->root = p4u_timer_meld(q->root, sub);
	}
	if (q->root)
		q->root->prev = NULL;
	timer->child = timer->next = timer->prev = NULL;
	timer->armed = false;
	q->count--;
}

void p4u_timer_cancel(struct p4u_timerq *q, struct p4u_timer *timer)
{
	if (timer->armed)
		p4u_timer_remove(q, timer);
}

void p4u_timer_arm(struct p4u_timerq *q, struct p4u_timer *timer,
		   uint64_t deadline_ns)
{
	if (timer->armed) {
		/* the root moving earlier stays the root */
		if (timer == q->root && deadline_ns < timer->deadline_ns) {
			timer->deadline_ns = deadline_ns;
			timer->seq = q->seq++;
			return;
		}
		p4u_timer_remove(q, timer);
	}
	timer->deadline_ns = deadline_ns;
	timer->seq = q->seq++;
	timer->child = timer->next = timer->prev = NULL;
	timer->armed = true;
	q->count++;
	q->root = p4u_timer_meld(q->root, timer);
}

int p4u_timerq_run(struct p4u_timerq *q, uint64_t now_ns)
{
	struct p4u_timer *timer;
	int fired = 0;

	while ((timer = q->root) && timer->deadline_ns <= now_ns) {
		p4u_timer_remove(q, timer);
		fired++;
		timer->fn(timer, now_ns);
	}
	return fired;
}
