/* spawn.h — MPI_Comm_spawn and MPI_Comm_spawn_multiple (MPI 4.1 §11.8) in a threaded job.
 *
 * The children are more ranks of the same job on this node (agent/jobs/job_spawn.h): world
 * ranks from the job's spawn_next on, below its universe (tm_job.size, MPI_UNIVERSE_SIZE),
 * each with its own copy of its program.  The spawning root reserves their world ranks, makes
 * their MPI_COMM_WORLD (a communicator of those ranks on a one-node context id) and the ids of
 * the parent/child inter-communicator, records them (struct tm_spawn_rec) and points each
 * child's struct tm_rank at them before the agent starts the children; it then tells the
 * parents over comm, which attach to their side.  A child attaches to the other side when it
 * first calls MPI_Comm_get_parent.  Records live until the job ends. */
#ifndef TMPI_LIBCLIENT_SPAWN_H
#define TMPI_LIBCLIENT_SPAWN_H

#include "job.h"

/* The inter-communicator to a spawned rank's parents (MPI_COMM_NULL for one nobody spawned),
 * made on first call: MPI_SUCCESS or an MPI error class. */
int tm_spawn_parent(struct tm_rank *me, MPI_Comm *parent);

/* tm_job.spawn_free: the job's spawn records, ports and names (j->spawn_lock no longer
 * needed: the job's ranks have ended). */
void tm_dynproc_free(struct tm_job *j);

#endif
