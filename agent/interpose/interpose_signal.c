/* interpose_signal.c — sigaction() and signal() of a rank for SIGUSR1 and SIGUSR2: the
 * disposition is the rank's own (host_signal.h), since the process-wide one can hold only one
 * copy's handler.  Every other signal, and every caller that is not a rank, goes to libc. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "host_signal.h"
#include "interpose.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    struct rank *r = rank_current();
    if (r && job_signal_slot(sig) >= 0) {
        int rc = host_signal_rank_action(r, sig, act, old);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        return 0;
    }
    return interpose_real()->sigaction(sig, act, old);
}

/* glibc's signal(): BSD semantics (SA_RESTART, the handler stays installed). */
EXPORT void (*signal(int sig, void (*handler)(int)))(int)
{
    struct rank *r = rank_current();
    if (!r || job_signal_slot(sig) < 0) return interpose_real()->signal(sig, handler);
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    if (host_signal_rank_action(r, sig, &act, &old) < 0) {
        errno = EINVAL;
        return SIG_ERR;
    }
    return old.sa_handler;
}
