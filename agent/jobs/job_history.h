/* job_history.h — jobs that have ended, still listed by tmpictl jobs for a while.
 *
 * Like Slurm's MinJobAge: once a job's process is gone the agent keeps a small record of it
 * (state "ended", how it ended) for [agent] ended_job_keep seconds, so a user who cancelled
 * a job sees it go from "ending" to "ended" instead of vanishing.  At most JOB_HISTORY_MAX
 * records are kept (the oldest go first).  Loop thread only. */
#ifndef TMPI_AGENT_JOB_HISTORY_H
#define TMPI_AGENT_JOB_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bound on records kept, whatever ended_job_keep says: many short jobs cost no more. */
#define JOB_HISTORY_MAX 1024

struct job_record {
    uint64_t id;
    uid_t uid;
    char owner[64];
    uint32_t nprocs;
    char program[256];
    double runtime_sec;
    double ended_at; /* agent_now() */
    int exit_status;
    uint64_t mem_limit;
    uint32_t cpu_limit_milli;
    const char *cgroup; /* a literal: cgroup_kind_name() */
};

struct job_history {
    struct job_record *recs; /* oldest first */
    size_t n, cap;
};

/* Appends r (dropping the oldest when JOB_HISTORY_MAX are kept).  0 or -ENOMEM (r is not
 * kept; nothing else changes). */
int job_history_add(struct job_history *h, const struct job_record *r);

/* Drops the records that ended more than keep_sec before now. */
void job_history_expire(struct job_history *h, double now, double keep_sec);

/* The record of job id, or NULL. */
const struct job_record *job_history_find(const struct job_history *h, uint64_t id);

void job_history_free(struct job_history *h);

#endif
