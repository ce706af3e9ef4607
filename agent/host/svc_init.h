/* svc_init.h — the agent fills the service table (svc.h) before the first job. */
#ifndef TMPI_AGENT_SVC_INIT_H
#define TMPI_AGENT_SVC_INIT_H

#include "svc.h"

struct agent;
struct job;
void svc_init(struct agent *a);

/* The job thread of a job host without ranks (job_spare.h): runs libtmpi's make (svc.h
 * TMPI_HOST_JOB_SYMBOL), whose job_state call on this thread makes j's state from info.
 * make's result. */
int svc_host_job_state(struct job *j, const struct tmpi_rank_info *info, tmpi_host_job_fn make);

#endif
