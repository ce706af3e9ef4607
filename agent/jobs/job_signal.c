/* job_signal.c — SIGUSR1/SIGUSR2 forwarded to a job, the agent's side (job_signal.h). */
#include "job_signal.h"

#include <errno.h>
#include <signal.h>

#include "job.h"
#include "jobhost.h"

int job_signal_slot(int sig)
{
    return sig == SIGUSR1 ? 0 : sig == SIGUSR2 ? 1 : -1;
}

int job_signal(struct job *j, int sig)
{
    if (job_signal_slot(sig) < 0) return -EINVAL;
    /* The ranks are threads of the job's host, never of the agent (whose jobs have no rank
     * records): before the host runs there is nobody to signal, and the signal is dropped. */
    if (!j->host) return 0;
    return jobhost_signal(j, sig);
}
