/* SPDX-License-Identifier: MIT */
/*
 * The one clock for intervals, rate limits and deadlines: CLOCK_MONOTONIC,
 * which setting the date or NTP's steps never move.  Inline: it is a vDSO
 * call on the budget's path of every write.
 */
#ifndef TIERFS_CLOCK_H
#define TIERFS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in nanoseconds. */
static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC now, in milliseconds. */
static inline uint64_t clock_now_ms(void)
{
	return clock_now_ns() / 1000000;
}

#endif
