/* job_signal.h — SIGUSR1 and SIGUSR2 sent to a job (tmpi-launch forwards them, as mpirun does),
 * the agent's side: the signal goes to the job's host with kill(), whose process handler runs
 * every rank's own handler (host/host_signal.h). */
#ifndef TMPI_AGENT_JOB_SIGNAL_H
#define TMPI_AGENT_JOB_SIGNAL_H

struct job;

/* The two forwardable signals have slots 0 and 1; -1 for every other signal. */
int job_signal_slot(int sig);

/* Loop thread of the agent: sig arrived for j (SignalJob).  The job's host gets it with kill();
 * a job whose host does not run (yet, or any more) drops it.  0, or -EINVAL for a signal that
 * is not forwarded. */
int job_signal(struct job *j, int sig);

#endif
