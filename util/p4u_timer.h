/*
 * p4u_timer.h - deadlines: an intrusive pairing heap of timers ordered by
 * their deadline (monotonic nanoseconds, p4u_time_ns).
 *
 * A timer is embedded in the object it times (a socket, a link, a peer)
 * and armed, re-armed or cancelled in O(1) (cancel and re-arm O(log n)
 * amortised); nothing allocates, so arming cannot fail. p4u_timerq_run()
 * fires, in deadline order (arming order among equal deadlines), every timer due at a given time, all of them
 * in one call: a callback may arm or cancel any timer, itself included.
 *
 * Who waits for the earliest deadline (an epoll loop, a timerfd) asks
 * p4u_timerq_next(). The queue takes no lock: its owner (the engine's
 * worker) serialises every call. Knows nothing of Portals or libfabric.
 */
#ifndef P4U_TIMER_H
#define P4U_TIMER_H

#include <stdbool.h>
#include <stdint.h>

struct p4u_timer;

typedef void (*p4u_timer_func_t)(struct p4u_timer *timer, uint64_t now_ns);

struct p4u_timer {
	uint64_t deadline_ns;
	uint64_t seq;			/* arming order: ties fire FIFO */
	struct p4u_timer *child;	/* first child */
	struct p4u_timer *next;		/* next sibling */
	struct p4u_timer *prev;		/* previous sibling, or the parent of
					 * a first child; NULL for the root */
	bool armed;
	p4u_timer_func_t fn;
};

struct p4u_timerq {
	struct p4u_timer *root;		/* the earliest deadline */
	uint32_t count;			/* armed timers */
	uint64_t seq;			/* arms so far */
};

#define P4U_TIMER_NEVER	UINT64_MAX

static inline void p4u_timerq_init(struct p4u_timerq *q)
{
	q->root = 0;
	q->count = 0;
	q->seq = 0;
}

static inline void p4u_timer_init(struct p4u_timer *timer,
				  p4u_timer_func_t fn)
{
	timer->deadline_ns = P4U_TIMER_NEVER;
	timer->child = timer->next = timer->prev = 0;
	timer->armed = false;
	timer->fn = fn;
}

static inline bool p4u_timer_armed(const struct p4u_timer *timer)
{
	return timer->armed;
}

/* Arm (or move) timer to fire at deadline_ns. */
void p4u_timer_arm(struct p4u_timerq *q, struct p4u_timer *timer,
		   uint64_t deadline_ns);
/* Disarm; a timer that is not armed is left alone. */
void p4u_timer_cancel(struct p4u_timerq *q, struct p4u_timer *timer);

/* The earliest deadline, P4U_TIMER_NEVER when nothing is armed. */
static inline uint64_t p4u_timerq_next(const struct p4u_timerq *q)
{
	return q->root ? q->root->deadline_ns : P4U_TIMER_NEVER;
}

/*
 * Fire every timer whose deadline is <= now_ns, earliest first; each is
 * disarmed before its callback runs. Timers a callback arms at or before
 * now_ns fire in the same call. Returns how many fired.
 */
int p4u_timerq_run(struct p4u_timerq *q, uint64_t now_ns);

#endif /* P4U_TIMER_H */
