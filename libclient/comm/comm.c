/* comm.c — communicator handles, creation (dup, split: the handles and attributes; the members'
 * rounds that make the node's copy are the collectives', comm_coll.h) and queries (comm.h). */
#include "comm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm_coll.h"
#include "ctx.h"
#include "errh.h"
#include "attr.h"
#include "info.h"
#include "intercomm.h"
#include "job.h"
#include "topo.h"

#define GET_COMM(fn, comm)                                                                         \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);                    \
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);                                    \
    if (TM_UNLIKELY(!cr))                                                                          \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);

TM_API int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    GET_COMM("MPI_Comm_rank", comm);
    if (!rank) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
    *rank = cr->rank;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_rank)

TM_API int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    GET_COMM("MPI_Comm_size", comm);
    if (!size) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
    *size = cr->c->size;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_size)

/* Intra-communicator dup: a new handle in *newcomm (no attributes yet).  The members make
 * the node's copy in a round of the collectives (comm_coll.h). */
static int dup_intra(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, MPI_Comm *newcomm)
{
    struct tm_comm *nc = NULL;
    if (tm_lib.comm_coll->dup(me, cr, &nc) < 0)
        return tm_err(me, comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "out of memory");
    MPI_Comm h = tm_commtab_add(me, nc, cr->rank, cr->eh);
    if (h == MPI_COMM_NULL) {
        tm_comm_release(nc);
        return tm_err(me, comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "out of memory");
    }
    *newcomm = h;
    return MPI_SUCCESS;
}

int tm_comm_dup(struct tm_rank *me, const char *fn, MPI_Comm comm, struct tm_info *hints,
                MPI_Comm *newcomm)
{
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    MPI_Comm h = MPI_COMM_NULL;
    int err = cr->c->inter ? tm_intercomm_dup(me, cr, comm, &h) : dup_intra(me, cr, comm, &h);
    if (err) return err;
    cr = tm_comm_get(&me->comms, comm); /* the table may have grown: entries never move */
    struct tm_commref *nr = tm_comm_get(&me->comms, h);
    /* The new communicator gets the parent's attributes (copy callbacks) and hints, and
     * the session its parent came from (its buffered sends use that session's buffer). */
    nr->session_bsb = cr->session_bsb;
    err = tm_attr_copy_all(me, TM_ATTR_COMM, comm, cr->attrs, &nr->attrs);
    if (!err && (hints || cr->hints)) {
        nr->hints = tm_info_dup_obj(hints ? hints : cr->hints);
        if (!nr->hints) err = MPI_ERR_NO_MEM;
    }
    if (err) {
        tm_commtab_free(me, h);
        return tm_err(me, comm, err, fn, "copying the attributes failed");
    }
    *newcomm = h;
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    GET_COMM("MPI_Comm_dup", comm);
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_dup", "newcomm is NULL");
    (void)cr;
    return tm_comm_dup(me, "MPI_Comm_dup", comm, NULL, newcomm);
}
TM_ALIAS(Comm_dup)

int tm_comm_split(struct tm_rank *me, const char *fn, MPI_Comm comm, int color, int key,
                  MPI_Comm *newcomm)
{
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    struct tm_comm *nc = NULL;
    int nrank = MPI_UNDEFINED;
    MPI_Errhandler eh = cr->eh;
    struct tm_bsbuf *session_bsb = cr->session_bsb;
    /* the members' round (comm_coll.h) makes the node's copy of each new communicator */
    if (tm_lib.comm_coll->split(me, cr, color, key, &nc, &nrank) < 0)
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    if (!nc) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    MPI_Comm h = tm_commtab_add(me, nc, nrank, eh);
    if (h == MPI_COMM_NULL) {
        tm_comm_release(nc);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    tm_comm_get(&me->comms, h)->session_bsb = session_bsb; /* as a dup's (tm_comm_dup) */
    *newcomm = h;
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    GET_COMM("MPI_Comm_split", comm);
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_split", "newcomm is NULL");
    if (color < 0 && color != MPI_UNDEFINED)
        return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d", color);
    if (cr->c->inter) return tm_intercomm_split(me, cr, comm, color, key, newcomm);
    return tm_comm_split(me, "MPI_Comm_split", comm, color, key, newcomm);
}
TM_ALIAS(Comm_split)

TM_API int PMPI_Comm_free(MPI_Comm *comm)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Comm_free", TM_ERR_NOINIT);
    if (!comm) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_free", "comm is NULL");
    struct tm_commref *cr = tm_comm_get_user(&me->comms, *comm);
    if (!cr || cr->c->builtin)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_free", "invalid communicator %d",
                      *comm);
    int err = tm_commtab_free(me, *comm);
    if (err) return tm_err(me, *comm, err, "MPI_Comm_free", "an attribute delete callback failed");
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_free)

/* Same members in the same order: world ranks of a's and b's groups (local, then remote). */
static int same_order(const struct tm_comm *a, const struct tm_comm *b)
{
    if (a->size != b->size || a->inter != b->inter || a->remote_size != b->remote_size) return 0;
    for (int i = 0; i < a->size; i++)
        if (tm_comm_world_rank(a, i) != tm_comm_world_rank(b, i)) return 0;
    for (int i = 0; i < a->remote_size; i++)
        if (a->remote_of[i] != b->remote_of[i]) return 0;
    return 1;
}

/* Same member sets (local groups, and remote groups) in any order. */
static int same_sets(struct tm_rank *me, const struct tm_comm *a, const struct tm_comm *b, int *ret)
{
    unsigned char *mark = calloc((size_t)me->job->size, 1);
    if (!mark) return -ENOMEM;
    int same = 1;
    for (int pass = 0; pass < 2 && same; pass++) {
        int na = pass ? a->remote_size : a->size, nb = pass ? b->remote_size : b->size;
        if (na != nb) {
            same = 0;
            break;
        }
        for (int i = 0; i < na; i++)
            mark[pass ? a->remote_of[i] : tm_comm_world_rank(a, i)] = (unsigned char)(pass + 1);
        for (int i = 0; same && i < nb; i++)
            same = mark[pass ? b->remote_of[i] : tm_comm_world_rank(b, i)] == pass + 1;
    }
    free(mark);
    *ret = same;
    return 0;
}

TM_API int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Comm_compare", TM_ERR_NOINIT);
    struct tm_commref *a = tm_comm_get_user(&me->comms, comm1),
                      *b = tm_comm_get_user(&me->comms, comm2);
    if (!a || !b)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_compare", "invalid communicator");
    if (!result) return tm_err(me, comm1, MPI_ERR_ARG, "MPI_Comm_compare", "result is NULL");
    if (a->c == b->c) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->c->inter != b->c->inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    if (same_order(a->c, b->c)) {
        *result = MPI_CONGRUENT;
        return MPI_SUCCESS;
    }
    int same = 0;
    if (same_sets(me, a->c, b->c, &same) < 0)
        return tm_err(me, comm1, MPI_ERR_NO_MEM, "MPI_Comm_compare", "out of memory");
    *result = same ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_compare)
