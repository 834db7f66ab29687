/*
 * p4u_spin.c - yielding a polling thread's CPU while it is shared
 * (why and when: p4u_spin.h).
 */
#include <config.h>

#include <sched.h>
#include <sys/resource.h>

#include "p4u_spin.h"

struct p4u_spin {
	unsigned idle;		/* idle polls in a row */
	unsigned spell;		/* looks left to yield for */
	long nivcsw;		/* involuntary switches at the last look */
	struct p4u_spin_stats stats;
};

static __thread struct p4u_spin p4u_spin_self;

/* Preempted since the last look? */
static bool p4u_spin_preempted(struct p4u_spin *s)
{
	struct rusage ru;
	bool more;

	s->stats.checks++;
	if (getrusage(RUSAGE_THREAD, &ru))
		return false;
	more = s->stats.checks > 1 && ru.ru_nivcsw != s->nivcsw;
	s->nivcsw = ru.ru_nivcsw;
	return more;
}

void p4u_spin_poll(bool idle)
{
	struct p4u_spin *s = &p4u_spin_self;

	if (!idle) {
		s->idle = 0;
		return;
	}
	s->stats.idle++;
	if (!(++s->idle % P4U_SPIN_CHECK)) {
		if (p4u_spin_preempted(s))
			s->spell = P4U_SPIN_SPELL;
		else if (s->spell)
			s->spell--;
	}
	if (s->spell && !(s->idle % P4U_SPIN_YIELD)) {
		s->stats.yields++;
		sched_yield();
	}
}

void p4u_spin_stats(struct p4u_spin_stats *stats)
{
	*stats = p4u_spin_self.stats;
}
