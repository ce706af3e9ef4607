/* job_thread.h — the job host's job thread: it loads one image per rank, starts the rank
 * threads behind the start gate, waits for them, reports to the launcher and unloads; and
 * the job host's parts of a job (job.h struct job_host_parts), which it registers. */
#ifndef TMPI_AGENT_JOB_THREAD_H
#define TMPI_AGENT_JOB_THREAD_H

#include <stddef.h>

struct job;
struct job_app;
struct job_host_parts;
struct rank;

/* What the job code (jobs/job.c) calls for the job host's parts: jobhost_main registers it
 * in its struct agent before it builds the job. */
extern const struct job_host_parts job_thread_parts;

/* Job thread, at the job's end: runs a loaded rank's destructors as that rank, frees its
 * argument and process state, flushes its output (the job's ranks and spawned ones). */
void job_rank_unload(struct rank *r);

/* Records r's end as the job's first failure (kind: rank.h RANK_END_*) and tears the job
 * down (job_fail_rank). */
void job_fail(struct job *j, struct rank *r, int kind, int code, const char *msg);

/* The job thread, running r's destructors (atexit handlers, static destructors) while it
 * unloads r's image, met exit(), abort() or a fault there (rank_end): records it (a failure
 * unless exit(0)), ends the job (JobEnd, JobUnloaded) and has the job host leave.  The
 * unload cannot go on: the dlclose under us holds ld.so's lock. */
void job_end_in_unload(struct job *j, struct rank *r, int kind, int code, const char *msg)
    __attribute__((noreturn));

/* Job thread: opens app's program (image_program_open_after, the programs opened before
 * lending their libraries' masters); app->image_open says it is.  0, or a negative errno with
 * the loader's reason in err. */
int job_app_open(struct job *j, struct job_app *app, int appnum, char *err, size_t errlen);

/* Job thread: opens the start gate if every rank was started and the job is not cancelled,
 * else closes it for good; wakes the waiters. */
void job_open_gate(struct job *j, int all_started);
/* A rank thread has ended: its exit goes to the launcher, the job thread counts it. */
void job_rank_finished(struct job *j, struct rank *r);

/* A member job host: its data links' traffic so far to the agent (LinkTraffic, for the
 * metrics), every JOBHOST_TRAFFIC_MS while the job runs and once more before JobUnloaded.
 * Any thread; j->net must exist. */
void job_send_link_traffic(struct job *j);

#endif
