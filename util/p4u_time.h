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

#endif /* P4U_TIME_H */
