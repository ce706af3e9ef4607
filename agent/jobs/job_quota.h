/* job_quota.h — how many jobs the agent runs at once, for everyone and for one user.
 *
 * `max_jobs` bounds the jobs (and program uploads: a submission receiving its program holds
 * a place) of all users together; `max_jobs_per_user` those of one user, by default a
 * quarter of max_jobs, so one user never fills the agent.  Root and the agent's own user
 * are not bound per user and have admin_reserve_jobs places beyond max_jobs:
 * when other users fill the agent an admin can still run a job (and tmpictl, which needs none). */
#ifndef TMPI_JOB_QUOTA_H
#define TMPI_JOB_QUOTA_H

#include <stddef.h>
#include <sys/types.h>

struct agent_config;
struct job;

/* max_jobs_per_user as it applies: the configured value (at most max_jobs), or when it is 0
 * (not set) max_jobs / 4, at least 1. */
unsigned job_quota_per_user(const struct agent_config *cfg);

/* Jobs of uid in the agent's list of jobs (those it runs or is ending). */
unsigned job_quota_jobs_of(const struct job *jobs, uid_t uid);

/* Whether uid is root or the agent's own user. */
int job_quota_is_admin(uid_t uid);

/* Whether uid may hold one more job beside the agent's njobs jobs (list jobs), with `uploads`
 * submissions receiving their programs of which `uploads_of_uid` are uid's (they count as jobs). 0,
 * or -EBUSY with err naming the limit and its value and *per_user (if not NULL) set when
 * max_jobs_per_user was the one. */
int job_quota_admit(const struct agent_config *cfg, const struct job *jobs, unsigned njobs,
                    uid_t uid, unsigned uploads, unsigned uploads_of_uid, int *per_user, char *err,
                    size_t errlen);

#endif
