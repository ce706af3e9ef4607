/* job_info.h — what tmpictl is told about jobs (JobInfo), for the local socket (control.c)
 * and for another agent asking on the mesh (cluster.c).  Loop thread only. */
#ifndef TMPI_AGENT_JOB_INFO_H
#define TMPI_AGENT_JOB_INFO_H

#include <stddef.h>
#include <sys/types.h>

#include "control.pb-c.h"

struct job;
struct job_history;

/* The jobs uid may see (all: every user's) of the agent's list jobs (job.h next) and its
 * ended ones: running ones, then those that ended within keep_sec (older records are dropped
 * from ended now).  The infos point into the jobs and records: valid until the loop runs on.
 * Caller frees both arrays (NULL and 0 when out of memory). */
size_t job_info_visible(struct job *jobs, struct job_history *ended, double keep_sec, uid_t uid,
                        int all, Tmpi__JobInfo **ret_infos, Tmpi__JobInfo ***ret_ptrs);

/* Ranks of the running jobs of the list jobs (every user's), and how many jobs those are. */
uint32_t job_info_running(const struct job *jobs, uint32_t *ret_ranks);

#endif
