/* jobhost.h — one job host process per single-node job: the agent's side and the host's.
 *
 * The agent never runs user code.  For each job it starts a job host: the tmpid binary
 * exec'd with --job-host (posix_spawn: the multi-threaded agent is never forked), which
 * reads the job (a SubmitJob frame on fd JOBHOST_CHANNEL_FD, the program bytes in a memfd on
 * JOBHOST_PROGRAM_FD, the agent's accepted configuration on JOBHOST_CONFIG_FD), switches to the
 * submitter's identity and runs the ranks as its threads exactly as the agent did before (job.c,
 * rank.c, carrier.c, loader.c, interpose). The host sends the frames a launcher reads (JobStarted,
 * Output, RankExit, JobEnd) on the channel; the agent relays them to the launcher whole, so when a
 * host dies mid-job the agent can still end the launcher's stream with a JobEnd of its own
 * (128+signal).  The agent sends JobCancel on the channel; a host that has not ended kill_grace_sec
 * later is killed (SIGKILL). */
#ifndef TMPI_AGENT_JOBHOST_H
#define TMPI_AGENT_JOBHOST_H

#include <sys/types.h>

struct agent;
struct job;
struct program;

/* Fixed descriptors of a job host (set up by posix_spawn file actions). */
#define JOBHOST_CHANNEL_FD 3
#define JOBHOST_PROGRAM_FD 4
/* The agent's configuration text (a memfd), when it read a file: the host reads it as its
 * --config, before it becomes the user. */
#define JOBHOST_CONFIG_FD 5
#define JOBHOST_CONFIG_PATH "/proc/self/fd/5"

/* ---- agent side, loop thread ---- */

/* Remembers the binary hosts are started from: call once before the first job. */
void jobhost_setup(const char *exe);

/* Starts the host of j (a single-node job built by job_new) with program p (pinned; released
 * here once the host has its copy).  0 or a negative errno (j untouched but p released). */
int jobhost_start(struct job *j, struct program *p);

/* Tears the host's job down: JobCancel now, SIGKILL after kill_grace_sec. */
void jobhost_cancel(struct job *j, int status, const char *reason);

/* The launcher's output buffer drained: relay the host's frames again. */
void jobhost_launcher_drained(struct job *j);

/* Frees what job_free must for a host job (the process is reaped or killed first). */
void jobhost_free(struct job *j);

/* ---- host side ---- */

/* main() of tmpid --job-host ID --job-user UID:GID:PID: a is configured as the agent's
 * config says.  Returns the process exit status. */
int jobhost_main(struct agent *a, const char *id_arg, const char *user_arg);

/* agent_job_done in a job host: the job is over and unloaded; leave once its frames left. */
void jobhost_job_done(struct agent *a, struct job *j);

#endif
