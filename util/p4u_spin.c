/*
 * p4u_spin.c - yielding the CPU of a process that polls an empty object
 * while it is being preempted (why and when: p4u_spin.h).
 */
#include <config.h>

#include <sched.h>
#include <sys/resource.h>

#include "p4u_spin.h"

/* Preempted since the last look? */
static bool p4u_spin_preempted(struct p4u_spin *s)
{
	struct rusage ru;
	bool more;

	if (getrusage(RUSAGE_SELF, &ru))
		return false;
	more = s->checks++ && ru.ru_nivcsw != s->nivcsw;
	s->nivcsw = ru.ru_nivcsw;
	return more;
}

bool p4u_spin_poll(struct p4u_spin *s, bool empty)
{
	if (!empty) {
		s->idle = 0;
		return false;
	}
	if (!(++s->idle % P4U_SPIN_CHECK)) {
		if (p4u_spin_preempted(s))
			s->spell = P4U_SPIN_SPELL;
		else if (s->spell)
			s->spell--;
	}
	if (!s->spell || s->idle % P4U_SPIN_YIELD)
		return false;
	s->yields++;
	return true;
}

void p4u_spin_yield(void)
{
	(void)sched_yield();
}
