/* interpose_sleep.c — a rank that sleeps (nanosleep, clock_nanosleep, usleep, sleep) while it
 * runs as a context on a carrier thread (carrier.h) parks until its deadline instead of
 * putting the carrier to sleep: the carrier's other ranks go on meanwhile.  Everything else
 * (rank threads of their own, agent threads, clocks we do not know) sleeps in the kernel. */
#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "carrier.h"

#define EXPORT __attribute__((visibility("default")))

static uint64_t ns_of(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

static uint64_t clock_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return ns_of(&t);
}

/* 0 when the sleep was spent parked, -EINVAL for a bad request, -ENOTSUP when the kernel must
 * do it (not a carried rank, or a clock other than realtime, monotonic, boottime). */
static int carried_sleep(clockid_t clk, int flags, const struct timespec *req)
{
    if (req->tv_nsec < 0 || req->tv_nsec >= 1000000000 || req->tv_sec < 0) return -EINVAL;
    if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC && clk != CLOCK_BOOTTIME) return -ENOTSUP;
    uint64_t now = clock_ns(CLOCK_MONOTONIC), deadline;
    if (!(flags & TIMER_ABSTIME)) {
        deadline = now + ns_of(req);
    } else {
        /* an absolute time on its own clock, as a distance from now on the monotonic one */
        uint64_t at = ns_of(req), cnow = clk == CLOCK_MONOTONIC ? now : clock_ns(clk);
        deadline = at > cnow ? now + (at - cnow) : now;
    }
    return carrier_sleep(deadline);
}

EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                           struct timespec *rem)
{
    if (!req) return EFAULT;
    int r = carried_sleep(clk, flags, req);
    if (r == -EINVAL) return EINVAL;
    if (r == 0) {
        if (rem && !(flags & TIMER_ABSTIME)) *rem = (struct timespec){0, 0};
        return 0;
    }
    return syscall(SYS_clock_nanosleep, clk, flags, req, rem) == 0 ? 0 : errno;
}

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
    int r = clock_nanosleep(CLOCK_REALTIME, 0, req, rem);
    if (r == 0) return 0;
    errno = r;
    return -1;
}

EXPORT int usleep(useconds_t us)
{
    struct timespec t = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    return nanosleep(&t, NULL);
}

EXPORT unsigned int sleep(unsigned int s)
{
    struct timespec t = {(time_t)s, 0}, rem = {0, 0};
    if (nanosleep(&t, &rem) == 0) return 0;
    return (unsigned int)rem.tv_sec + (rem.tv_nsec > 0);
}
