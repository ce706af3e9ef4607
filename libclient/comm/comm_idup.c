/* comm_idup.c — MPI_Comm_idup and MPI_Comm_idup_with_info (MPI 3.1 §6.4.2, MPI 4.0 §7.4.2):
 * a dup that starts, returns, and ends in the Wait or Test that completes its request.
 *
 * On an intra-communicator the dup is a non-blocking collective of the parent: member 0 takes
 * the new context id at once (tm_ctx_for: a one-node id, or a spanning id no other node can
 * hand out, so nobody has to agree), and an MPI_Ibcast on the parent carries it to the others.
 * The broadcast keeps the dup in its place among the parent's collectives (MPI requires the
 * same order on every member) and blocks nobody: a member may start the dup, talk
 * point-to-point, start dups of other communicators in any order, and wait later.  When the
 * broadcast is complete a member's Wait/Test makes its handle: the members of a node meet on
 * one node copy (tm_ctx_meet, as MPI_Comm_create_group does), which gets the parent's
 * topology; the attributes were copied (copy callbacks) and the hints taken when the dup
 * started, as MPI_Comm_dup would have.  *newcomm is written then: before completion the new
 * communicator does not exist (MPI: it may not be used before), and *newcomm reads
 * MPI_COMM_NULL.
 *
 * On an inter-communicator the dup is a non-blocking collective of the parent too, a schedule
 * like its other non-blocking collectives (coll_inter/inter_nbops.h tm_inb_idup, reached
 * through the job's upcall inter_idup, core/job.h, as coll_inter/ is above comm/): the lower
 * first member takes the ids at the start, the first members pass them on and each group
 * broadcasts them; the Wait or Test that completes the request has made the handle. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "comm.h"
#include "comm_idup.h"
#include "ctx.h"
#include "errh.h"
#include "info.h"
#include "job.h"
#include "p2p.h"
#include "request.h"
#include "topo.h"
#include "wait.h"

/* What member 0 broadcasts: the id, whether it is a reusable one-node id, and a failure. */
struct idup_msg {
    int32_t ctx, reuse, err;
};

/* Owner-only (the rank's threads complete a request one at a time: MPI forbids two waits on
 * one request). */
struct tm_idup {
    struct tm_request *bcast; /* the parent's Ibcast of msg from member 0 */
    struct idup_msg msg;
    struct tm_comm *pc; /* the parent's shared part, held until the end */
    int rank;           /* ours in the parent, and so in the new communicator */
    MPI_Errhandler eh;  /* the parent's handler when the dup started */
    MPI_Comm *newcomm;
    struct tm_attr *attrs; /* copied from the parent at the start */
    struct tm_info *hints; /* the hints the new communicator gets, or NULL */
};

struct make_arg {
    const struct idup_msg *m;
    int n, nlocal;
    const int32_t *world;
    const struct tm_comm *pc;
};

/* The node copy, made by the first local member to complete (tm_ctx_meet). */
static struct tm_comm *make(void *p)
{
    struct make_arg *a = p;
    int32_t *map = malloc(sizeof *map * (size_t)a->n);
    if (!map) return NULL;
    memcpy(map, a->world, sizeof *map * (size_t)a->n);
    struct tm_comm *nc = tm_comm_new(a->m->ctx, a->m->reuse, a->n, map, a->nlocal);
    if (!nc) {
        free(map);
        return NULL;
    }
    tm_topo_dup_hook(nc, a->pc);
    tm_comm_mark_xjob(tm_self(), nc);
    return nc;
}

static int32_t *world_list(const struct tm_comm *c)
{
    int32_t *w = malloc(sizeof *w * (size_t)c->size);
    for (int i = 0; w && i < c->size; i++)
        w[i] = tm_comm_world_rank(c, i);
    return w;
}

/* The new handle, or MPI_COMM_NULL with *err set. */
static MPI_Comm build(struct tm_rank *me, struct tm_idup *d, int *err)
{
    struct tm_comm *pc = d->pc;
    int32_t *world = world_list(pc);
    if (!world) {
        *err = MPI_ERR_NO_MEM;
        return MPI_COMM_NULL;
    }
    struct make_arg a = {&d->msg, pc->size, tm_ctx_nlocal(me, world, pc->size), world, pc};
    struct tm_comm *nc = tm_ctx_meet(me->job, d->msg.ctx, world[0], a.nlocal, make, &a);
    free(world);
    MPI_Comm h = nc ? tm_commtab_add(me, nc, d->rank, d->eh) : MPI_COMM_NULL;
    if (h == MPI_COMM_NULL) {
        if (nc) tm_comm_release(nc);
        *err = MPI_ERR_NO_MEM;
        return MPI_COMM_NULL;
    }
    struct tm_commref *nr = tm_comm_get(&me->comms, h);
    nr->attrs = d->attrs;
    nr->hints = d->hints;
    d->attrs = NULL;
    d->hints = NULL;
    return h;
}

static void idup_release(struct tm_rank *me, struct tm_idup *d)
{
    if (d->bcast) tm_req_free(me, d->bcast);
    tm_attr_drop_all(&d->attrs);
    tm_info_free_obj(d->hints);
    tm_comm_release(d->pc);
    free(d);
}

int tm_idup_done(struct tm_request *r)
{
    return tm_req_complete(r->idup->bcast);
}

int tm_idup_finish(struct tm_rank *me, MPI_Request *rp, MPI_Status *status)
{
    struct tm_request *r = *rp;
    struct tm_idup *d = r->idup;
    int err = d->bcast->st_error;
    if (!err && d->msg.err) err = MPI_ERR_INTERN; /* member 0 had no id to give */
    MPI_Comm h = err ? MPI_COMM_NULL : build(me, d, &err);
    *d->newcomm = h;
    idup_release(me, d);
    tm_req_free(me, r);
    *rp = MPI_REQUEST_NULL;
    tm_status_blank(status);
    return err;
}

void tm_idup_free(struct tm_rank *me, struct tm_request *r)
{
    /* Erroneous for a collective (MPI 3.1 §5.12), but the others' dup must not hang: ours
     * completes here, and the handle it makes is the program's. */
    tm_wait(me, tm_req_done_cond, r->idup->bcast);
    MPI_Request q = r;
    tm_idup_finish(me, &q, MPI_STATUS_IGNORE);
}

static int idup_inter(struct tm_rank *me, const char *fn, MPI_Comm comm, struct tm_commref *cr,
                      const struct tm_info *hints, MPI_Comm *newcomm, MPI_Request *request)
{
    int err = me->job->inter_idup(me, cr, comm, hints, newcomm, request);
    return err ? tm_err(me, comm, err, fn, "the dup cannot start") : MPI_SUCCESS;
}

/* Member 0's id for the new communicator (msg.err set when none is left). */
static void take_id(struct tm_rank *me, const struct tm_comm *pc, struct idup_msg *m)
{
    int32_t *world = world_list(pc);
    int ctx = 0, reuse = 0;
    int r = world ? tm_ctx_for(me, world, pc->size, NULL, 0, 1, &ctx, &reuse) : -ENOMEM;
    free(world);
    *m = (struct idup_msg){ctx, reuse, r < 0};
}

static int idup(const char *fn, MPI_Comm comm, MPI_Info info, int with_info, MPI_Comm *newcomm,
                MPI_Request *request)
{
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (TM_UNLIKELY(!cr))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (!newcomm || !request) return tm_err(me, comm, MPI_ERR_ARG, fn, "argument is NULL");
    struct tm_info *hints = NULL;
    if (with_info && info != MPI_INFO_NULL && !(hints = tm_info_get(me, info)))
        return tm_err(me, comm, MPI_ERR_INFO, fn, "invalid info %d", info);
    if (with_info && !hints) hints = tm_info_empty();
    if (cr->c->inter) return idup_inter(me, fn, comm, cr, hints, newcomm, request);

    struct tm_idup *d = calloc(1, sizeof *d);
    struct tm_request *r = d ? tm_req_alloc(me, TM_REQ_IDUP) : NULL;
    if (!r) {
        free(d);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    d->pc = cr->c;
    if (!d->pc->builtin) /* released at the end (tm_comm_release ignores builtin ones) */
        atomic_fetch_add_explicit(&d->pc->refs, 1, memory_order_relaxed);
    d->rank = cr->rank;
    d->eh = cr->eh;
    d->newcomm = newcomm;
    int err = tm_attr_copy_all(me, TM_ATTR_COMM, comm, cr->attrs, &d->attrs);
    if (!err && (hints || cr->hints) && !(d->hints = tm_info_dup_obj(hints ? hints : cr->hints)))
        err = MPI_ERR_NO_MEM;
    if (!err) {
        if (cr->rank == 0) take_id(me, cr->c, &d->msg);
        err = PMPI_Ibcast(&d->msg, 3, MPI_INT32_T, 0, comm, &d->bcast);
        if (err && cr->rank == 0 && !d->msg.err && d->msg.reuse) tm_ctx_put(me->job, d->msg.ctx);
    }
    if (err) {
        d->bcast = NULL;
        idup_release(me, d);
        tm_req_free(me, r);
        return tm_err(me, comm, err, fn, "the dup cannot start");
    }
    r->idup = d;
    r->comm = comm;
    *newcomm = MPI_COMM_NULL;
    *request = r;
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup("MPI_Comm_idup", comm, MPI_INFO_NULL, 0, newcomm, request);
}
TM_ALIAS(Comm_idup)

TM_API int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                                    MPI_Request *request)
{
    return idup("MPI_Comm_idup_with_info", comm, info, 1, newcomm, request);
}
TM_ALIAS(Comm_idup_with_info)
