/* host_signal.h — SIGUSR1 and SIGUSR2 sent to a job (tmpi-launch forwards them, as mpirun does),
 * in the job host: the agent's side, which kill()s the host, is jobs/job_signal.h.
 *
 * A job's ranks are threads of one process, and each rank runs its own copy of the program, so
 * a handler a rank installs is that copy's function working on that copy's globals.  The
 * process-wide disposition of SIGUSR1/SIGUSR2 can hold only one of them; instead, a rank's
 * sigaction()/signal() for these two signals is recorded in the rank (interpose_signal.c) and
 * the process handler (host_signal_install) runs the handler of every rank in turn.  What
 * a rank sees, per rank, is what a process of mpirun's would:
 *   - a handler it installed runs once per signal, with the siginfo of the signal;
 *   - SIG_IGN: nothing;
 *   - SIG_DFL (never installed a handler): the rank is killed, as the default action kills a
 *     process; the job ends with status 128+signal.
 * Differences, documented in tmpi-launch(1): the handlers run one after the other on one
 * thread of the job's process, not necessarily the rank's own thread (a rank waiting in
 * pause() or sigsuspend() is not woken: wait for a flag the handler sets instead), and a
 * rank's signal mask does not hold these two signals back.
 *
 * Slot protocol: a rank writes its own slots (its thread, in sigaction) under a sequence
 * counter with both signals blocked on the writing thread; the handler, on any thread, reads a
 * slot whose counter is even and unchanged across the read. */
#ifndef TMPI_AGENT_HOST_SIGNAL_H
#define TMPI_AGENT_HOST_SIGNAL_H

#include <signal.h>
#include <stdatomic.h>

#include "job_signal.h"

struct job;
struct rank;

/* One forwarded signal's disposition in one rank. */
struct rank_sigslot {
    atomic_uint seq; /* odd while the rank rewrites the slot */
    struct sigaction act;
};

/* A rank's sigaction for a forwardable signal: records act (when not NULL) and returns the
 * previous disposition in old (when not NULL).  0 or -EINVAL. */
int host_signal_rank_action(struct rank *r, int sig, const struct sigaction *act,
                            struct sigaction *old);

/* Job thread, before the images are unloaded: no handler runs from now on, and none still
 * runs when this returns. */
void host_signal_close(void);

/* A job host: installs the process handler of SIGUSR1/SIGUSR2 for job j (whose loop thread
 * runs base).  A rank killed by the default action fails j from the loop thread.  0 or a
 * negative errno. */
struct event_base;
int host_signal_install(struct job *j, struct event_base *base);
/* The job host's job is gone: the handler delivers nothing any more. */
void host_signal_forget(void);

#endif
