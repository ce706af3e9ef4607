/* comm_mst.h — a published wait's communicator for the agent's deadlock report (core/mstate.h):
 * the job's mst_comm, registered by its maker (mpi/job_life.c). */
#ifndef TMPI_LIBCLIENT_COMM_MST_H
#define TMPI_LIBCLIENT_COMM_MST_H

#include "job.h"

/* Fills p's communicator name (as MPI_Comm_get_name gives it), size, whether it is the world,
 * the peer (its world rank too) and the tag of m's call, when the call names a communicator
 * the rank still has. */
void tm_comm_mst(struct tm_rank *me, const struct tm_mstate *m, struct tmpi_rank_mpi *p);

#endif
