/*
 * p4u_time.h - monotonic clock helpers.
 */
#ifndef P4U_TIME_H
#define P4U_TIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t p4u_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t p4u_time_ms(void)
{
	return p4u_time_ns() / 1000000ULL;
}

/*
 * True when period_ns passed since *last_ns (then *last_ns is now): a
 * check that a spinning caller makes by time rather than on every pass
 * (a system call per pass costs more than what it waits for).
 */
static inline int p4u_time_due(uint64_t *last_ns, uint64_t period_ns)
{
	uint64_t now = p4u_time_ns();

	if (now - *last_ns < period_ns)
		return 0;
	*last_ns = now;
	return 1;
}

#endif /* P4U_TIME_H */
