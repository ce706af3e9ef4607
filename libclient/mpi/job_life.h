/* job_life.h — the per-job state's life (core/job.h): made once through svc->job_state() by
 * the first rank that opens MPI, freed by the agent's destroy upcall after the job's last rank
 * thread ended.  Here, in the top layer, because making and freeing a rank's state touches the
 * parts every layer keeps in it (the network's links, windows, datatypes, collective runners). */
#ifndef TMPI_LIBCLIENT_JOB_LIFE_H
#define TMPI_LIBCLIENT_JOB_LIFE_H

#include "job.h"

/* The calling process's state of its job, made by the first caller; 0 or a negative errno. */
int tm_job_get(const struct tmpi_svc *svc, struct tm_job **ret_job);

#endif
