/* job_quota.c — max_jobs, max_jobs_per_user and the admins' reserve (job_quota.h). */
#include "job_quota.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "job.h"

unsigned job_quota_per_user(const struct agent_config *cfg)
{
    unsigned n = cfg->max_jobs_per_user;
    if (n == 0) n = cfg->max_jobs / 4;
    if (n > cfg->max_jobs) n = cfg->max_jobs;
    return n ? n : 1;
}

unsigned job_quota_jobs_of(const struct job *jobs, uid_t uid)
{
    unsigned n = 0;
    for (const struct job *j = jobs; j; j = j->next)
        n += j->uid == uid;
    return n;
}

int job_quota_is_admin(uid_t uid)
{
    return uid == 0 || uid == getuid();
}

int job_quota_admit(const struct agent_config *cfg, const struct job *jobs, unsigned njobs,
                    uid_t uid, unsigned uploads, unsigned uploads_of_uid, int *per_user_hit,
                    char *err, size_t errlen)
{
    if (per_user_hit) *per_user_hit = 0;
    unsigned all = njobs + uploads, mine = uploads_of_uid + job_quota_jobs_of(jobs, uid);
    if (job_quota_is_admin(uid)) {
        if (all < cfg->max_jobs + cfg->admin_reserve_jobs) return 0;
        snprintf(err, errlen,
                 "the agent already runs %u jobs (max_jobs is %u, and admin_reserve_jobs %u more "
                 "for root and the agent's user)",
                 all, cfg->max_jobs, cfg->admin_reserve_jobs);
        return -EBUSY;
    }
    unsigned per_user = job_quota_per_user(cfg);
    if (mine >= per_user) {
        if (per_user_hit) *per_user_hit = 1;
        snprintf(err, errlen,
                 "user %u already runs %u jobs on this agent (max_jobs_per_user is %u)",
                 (unsigned)uid, mine, per_user);
        return -EBUSY;
    }
    if (all >= cfg->max_jobs) {
        snprintf(err, errlen, "the agent already runs %u jobs (max_jobs is %u)", all,
                 cfg->max_jobs);
        return -EBUSY;
    }
    return 0;
}
