/* job_spare.h — a member job host without ranks of its own: a node of the job's host file
 * where only MPI_Comm_spawn may start ranks (its NodePlacement has spawn slots and no ranks).
 *
 * Such a host still joins the job like every member (loaded, linked, started, released), so
 * that the job's links reach it from the start and a spawn there is one more SPAWN request
 * (libclient/comm/dyn_net.h).  Those requests are libtmpi's frames, taken by libtmpi's job
 * state, which a node with ranks makes at its first rank's MPI_Init: here the job thread makes
 * it instead, from the job's first program, which it opens (and so loads libtmpi) like a node
 * with ranks does, and whose libtmpi it asks for the state (svc.h TMPI_HOST_JOB_SYMBOL).  The
 * job thread then serves spawns until the coordinator releases the node (no node with ranks
 * runs any more and no rank spawned here runs), telling it when the ranks spawned here ended
 * (a later spawn may start more here).  Job thread only. */
#ifndef TMPI_AGENT_JOB_SPARE_H
#define TMPI_AGENT_JOB_SPARE_H

#include <stddef.h>

struct job;

/* j has no ranks here: a spare member (j->net set, j->nprocs 0). */
int job_is_spare(const struct job *j);

/* Any thread: j is a spare member where no spawned rank runs now (none started, or all ended):
 * nothing here reads from the other nodes. */
int job_spare_idle(struct job *j);

/* Load time: opens the job's first program and finds its libtmpi's entry.  0, or a negative
 * errno with the reason in err (the member then reports it as its load failure). */
int job_spare_load(struct job *j, char *err, size_t errlen);

/* After JobGo (the links are up): makes libtmpi's job state, which resumes the links.  0, or
 * a negative errno after cancelling the job with the reason. */
int job_spare_start(struct job *j);

/* job_free: what job_spare_load kept (the program is closed with the job's others). */
void job_spare_free(struct job *j);

#endif
