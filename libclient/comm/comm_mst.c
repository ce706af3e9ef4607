/* comm_mst.c — a published wait's communicator for the deadlock report (comm_mst.h). */
#include "comm_mst.h"

#include <stdio.h>

#include "comm.h"

/* The communicator's name as MPI_Comm_get_name would give it. */
static void comm_name(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, char *out,
                      size_t len)
{
    if (cr && cr->name)
        snprintf(out, len, "%s", cr->name);
    else if (comm == MPI_COMM_WORLD)
        snprintf(out, len, "MPI_COMM_WORLD");
    else if (comm == MPI_COMM_SELF)
        snprintf(out, len, "MPI_COMM_SELF");
    else
        snprintf(out, len, "communicator %d", (int)comm);
}

void tm_comm_mst(struct tm_rank *me, const struct tm_mstate *m, struct tmpi_rank_mpi *p)
{
    struct tm_commref *cr = m->cr;
    if (!cr && m->comm != MPI_COMM_NULL) cr = tm_comm_get(&me->comms, m->comm);
    if (!cr || !cr->c) return;
    struct tm_comm *c = cr->c;
    comm_name(me, cr, m->comm, p->comm, sizeof p->comm);
    p->comm_size = c->size;
    p->comm_world = m->comm == MPI_COMM_WORLD;
    p->peer = m->peer;
    p->peer_is_dest = m->peer_dest;
    p->tag = m->tag;
    if (m->peer >= 0 && m->peer < tm_comm_peer_size(c))
        p->peer_world = tm_comm_peer_world(c, m->peer);
}
