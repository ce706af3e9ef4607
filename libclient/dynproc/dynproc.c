/* dynproc.c — process management calls that need no other job (MPI 4.0 §11.8-11.10):
 * MPI_Comm_get_parent and MPI_Comm_disconnect.  Spawning is spawn.c; ports, names and join
 * are not here yet (docs/MPI-COVERAGE.md lists them missing). */
#include "comm.h"
#include "errh.h"
#include "job.h"
#include "spawn.h"

/* The inter-communicator to the parents of a rank MPI_Comm_spawn started, MPI_COMM_NULL for
 * one nobody spawned (MPI 4.0 §11.8.2). */
TM_API int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    const char *fn = "MPI_Comm_get_parent";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!parent) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "parent is NULL");
    int err = tm_spawn_parent(me, parent);
    return err ? tm_err(me, MPI_COMM_WORLD, err, fn, "out of memory") : MPI_SUCCESS;
}
TM_ALIAS(Comm_get_parent)

/* Collective: every member (both groups of an inter-communicator) arrives before any frees,
 * so each message of the communicator has been matched by then (MPI 4.0 §11.10.4: the
 * program completes its own requests first; the barrier waits for the others). */
TM_API int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    const char *fn = "MPI_Comm_disconnect";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!comm) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "comm is NULL");
    struct tm_commref *cr = tm_comm_get_user(&me->comms, *comm);
    if (!cr || cr->c->builtin)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d%s", *comm,
                      cr ? " (a predefined one)" : "");
    int err = PMPI_Barrier(*comm);
    if (err != MPI_SUCCESS) return err;
    return PMPI_Comm_free(comm);
}
TM_ALIAS(Comm_disconnect)
