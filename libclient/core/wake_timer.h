/* wake_timer.h — a deadline for a rank's wait: a thread that wakes the rank when the time is up.
 *
 * tm_wait has no deadline (its futex sleeps until a waker comes), and most waits need none: a
 * node that dies ends the job and with it the wait.  A few waits have a peer that may simply
 * never come (MPI_Comm_connect to a port nobody accepts on); they arm one of these beside their
 * condition and test tm_wake_timer_expired in it.  The thread sleeps on a monotonic condition
 * variable (no polling), then, under the timer's lock and only if the rank has not stopped it,
 * sets expired and wakes the rank.  The timer is on the heap and in the job's list of armed
 * timers; tm_wake_timer_stop joins its thread and frees it.  A rank that leaves its wait
 * without stopping it (the job was cancelled: rank_exit unwinds it) leaves it to the job's end,
 * which stops every timer still armed (tm_wake_timers_stop_all) before the ranks and libtmpi
 * go, so no timer thread touches a freed rank or runs in unloaded code.  While armed it counts in
 * the job's helpers_busy, so the deadlock watch does not take a wait that will end by itself for a
 * deadlock.  Rare calls only: one thread per armed timer. */
#ifndef TMPI_LIBCLIENT_WAKE_TIMER_H
#define TMPI_LIBCLIENT_WAKE_TIMER_H

#include <stdint.h>

struct tm_rank;
struct tm_wake_timer;

/* Arms a timer that wakes me after ms milliseconds; NULL when ms < 0 or the thread cannot
 * start (then the wait has no deadline: NULL never expires). */
struct tm_wake_timer *tm_wake_timer_start(struct tm_rank *me, int64_t ms);
/* Whether the time is up (any thread, e.g. in a tm_wait condition).  NULL: never. */
int tm_wake_timer_expired(struct tm_wake_timer *t);
/* Disarms t (NULL is fine) and joins its thread; the rank is not woken by it after this
 * returns.  The rank that armed it, or the job's end. */
void tm_wake_timer_stop(struct tm_wake_timer *t);
struct tm_job;
/* The job's end (no rank runs): every timer still armed is stopped. */
void tm_wake_timers_stop_all(struct tm_job *j);

#endif
