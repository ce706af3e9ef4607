/* clock.h — the monotonic clock every part of tmpid measures time with (timeouts, ages,
 * the metrics' durations), in both processes. */
#ifndef TMPI_AGENT_CLOCK_H
#define TMPI_AGENT_CLOCK_H

double agent_now(void); /* monotonic seconds */

#endif
