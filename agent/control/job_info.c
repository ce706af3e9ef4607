/* job_info.c — jobs as tmpictl sees them (job_info.h). */
#include "job_info.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "cgroup.h"
#include "clock.h"
#include "job.h"
#include "job_history.h"
#include "job_link.h"
#include "jobhost.h"

static void fill_job_info(Tmpi__JobInfo *ji, const struct job *j, double now)
{
    tmpi__job_info__init(ji);
    ji->id = j->id;
    ji->owner_uid = (uint32_t)j->uid;
    ji->owner = (char *)j->owner;
    ji->nprocs = j->nprocs + jobhost_spawned(j); /* spawned ranks run too */
    /* the coordinator's part: every node's (cluster.c merge_jobs takes it for the job) */
    if (j->job_ranks > ji->nprocs) ji->nprocs = j->job_ranks;
    ji->state = (char *)job_state_name(atomic_load(&j->state));
    ji->runtime_sec = now - j->start_time;
    ji->program = j->program_name;
    ji->mem_limit = j->mem_limit;
    ji->cpu_limit_milli = j->cpu_limit_milli;
    if (j->host) {
        ji->cgroup = (char *)cgroup_kind_name();
        ji->mem_used = cgroup_job_mem_used(jobhost_cgroup(j));
    }
    if (j->link) {
        ji->uid = j->link->uid;
        ji->coordinator = (char *)j->coordinator;
        ji->coordinator_job_id = j->coord_job_id;
        ji->n_links = j->ncarriers;
        ji->links = j->carrier_ptrs;
    }
}

static void fill_ended_info(Tmpi__JobInfo *ji, const struct job_record *r)
{
    tmpi__job_info__init(ji);
    ji->id = r->id;
    ji->owner_uid = (uint32_t)r->uid;
    ji->owner = (char *)r->owner;
    ji->nprocs = r->nprocs;
    ji->state = (char *)job_state_name(JOB_ENDED);
    ji->runtime_sec = r->runtime_sec;
    ji->program = (char *)r->program;
    ji->mem_limit = r->mem_limit;
    ji->cpu_limit_milli = r->cpu_limit_milli;
    ji->cgroup = (char *)r->cgroup;
    ji->exit_status = r->exit_status;
}

size_t job_info_visible(struct job *jobs, struct job_history *ended, double keep_sec, uid_t uid,
                        int all, Tmpi__JobInfo **ret_infos, Tmpi__JobInfo ***ret_ptrs)
{
    size_t n = 0;
    struct job_history *hist = ended;
    job_history_expire(hist, agent_now(), keep_sec);
    for (struct job *j = jobs; j; j = j->next)
        n += all || j->uid == uid;
    for (size_t i = 0; i < hist->n; i++)
        n += all || hist->recs[i].uid == uid;
    Tmpi__JobInfo *infos = calloc(n ? n : 1, sizeof *infos);
    Tmpi__JobInfo **ptrs = calloc(n ? n : 1, sizeof *ptrs);
    if (!infos || !ptrs) {
        free(infos);
        free(ptrs);
        *ret_infos = NULL;
        *ret_ptrs = NULL;
        return 0;
    }
    double now = agent_now();
    size_t k = 0;
    for (struct job *j = jobs; j; j = j->next)
        if (all || j->uid == uid) {
            fill_job_info(&infos[k], j, now);
            ptrs[k] = &infos[k];
            k++;
        }
    for (size_t i = 0; i < hist->n; i++)
        if (all || hist->recs[i].uid == uid) {
            fill_ended_info(&infos[k], &hist->recs[i]);
            ptrs[k] = &infos[k];
            k++;
        }
    *ret_infos = infos;
    *ret_ptrs = ptrs;
    return k;
}

uint32_t job_info_running(const struct job *jobs, uint32_t *ret_ranks)
{
    uint32_t n = 0, ranks = 0;
    for (const struct job *j = jobs; j; j = j->next)
        if (atomic_load(&j->state) != JOB_ENDED) {
            n++;
            ranks += j->nprocs + jobhost_spawned(j);
        }
    *ret_ranks = ranks;
    return n;
}
