/* inter_idup.c — MPI_Comm_idup(_with_info) of an inter-communicator as a schedule
 * (inter_nbops.h tm_inb_idup, inter_nb.h). */
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "comm.h"
#include "ctx.h"
#include "info.h"
#include "inter_nb.h"
#include "inter_nbops.h"
#include "intercomm.h"
#include "job.h"
#include "xjob.h"

/* What the lower first member sends the other and each first member broadcasts. */
struct idup_hdr {
    int32_t err, ctx[3];
};

struct idup {
    struct idup_hdr h;
    struct tm_comm *pc; /* the parent's node copy, held until the end */
    int lower;          /* the first members: ours has the lower world rank */
    MPI_Errhandler eh;  /* the parent's handler at the start */
    MPI_Comm *newcomm;
    struct tm_attr *attrs; /* copied from the parent at the start */
    struct tm_info *hints; /* the new communicator's, or NULL */
};

static int32_t *world_list(const struct tm_comm *c)
{
    int32_t *w = malloc(sizeof *w * (size_t)c->size);
    for (int i = 0; w && i < c->size; i++)
        w[i] = tm_comm_world_rank(c, i);
    return w;
}

static enum tm_is_state idup_step(struct tm_isched *s)
{
    const struct tm_is_where *W = tm_isched_where(s);
    struct idup *d = tm_isched_op(s);
    int *K = tm_isched_stepno(s);
    MPI_Request q = MPI_REQUEST_NULL;
    int e = 0;
    switch (*K) {
    case 0:
        (*K)++;
        if (W->r != 0) return TM_IS_MORE;
        if (d->lower) {
            /* The ids are taken here, when the dup starts: no agreement round (ctx.h). */
            int32_t *lmap = world_list(d->pc);
            int ctx[3] = {0}, reuse = 0;
            d->h.err = !lmap || tm_ctx_for(W->me, lmap, d->pc->size, d->pc->remote_of,
                                           d->pc->remote_size, 3, ctx, &reuse) < 0;
            free(lmap);
            for (int i = 0; i < 3; i++)
                d->h.ctx[i] = ctx[i];
            e = PMPI_Isend(&d->h, 4, MPI_INT32_T, 0, W->tag, W->I, &q);
        } else {
            e = PMPI_Irecv(&d->h, 4, MPI_INT32_T, 0, W->tag, W->I, &q);
        }
        tm_isched_add(s, e, q);
        return TM_IS_MORE;
    case 1:
        if (!tm_isched_lturn(s)) return TM_IS_WAIT_L;
        (*K)++;
        e = PMPI_Ibcast(&d->h, 4, MPI_INT32_T, 0, W->L, &q);
        tm_isched_add(s, e, q);
        tm_isched_lnext(s);
        return TM_IS_MORE;
    }
    return TM_IS_DONE;
}

static void idup_free(struct idup *d)
{
    tm_attr_drop_all(&d->attrs);
    tm_info_free_obj(d->hints);
    tm_comm_release(d->pc);
    free(d);
}

/* Every step is complete: attach to the new communicator, or fail. */
static int idup_fin(struct tm_isched *s, int err)
{
    struct idup *d = tm_isched_op(s);
    const struct tm_is_where *W = tm_isched_where(s);
    if (err == TM_IS_ABANDON) {
        idup_free(d);
        return err;
    }
    MPI_Comm h = MPI_COMM_NULL;
    if (!err && d->h.err) err = MPI_ERR_INTERN; /* no id was left to give */
    int32_t *lmap = err ? NULL : world_list(d->pc);
    if (!err && !lmap) err = MPI_ERR_NO_MEM;
    if (!err)
        err = tm_intercomm_attach(W->me, d->h.ctx, lmap, d->pc->size, d->pc->remote_of,
                                  d->pc->remote_size, W->r, d->eh, &h);
    free(lmap);
    if (!err) {
        struct tm_commref *nr = tm_comm_get(&W->me->comms, h);
        nr->attrs = d->attrs;
        nr->hints = d->hints;
        d->attrs = NULL;
        d->hints = NULL;
    }
    *d->newcomm = h;
    idup_free(d);
    return err;
}

int tm_inb_idup(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm,
                const struct tm_info *hints, MPI_Comm *newcomm, MPI_Request *request)
{
    struct idup *d = calloc(1, sizeof *d);
    if (!d) return MPI_ERR_NO_MEM;
    d->pc = cr->c;
    atomic_fetch_add_explicit(&d->pc->refs, 1, memory_order_relaxed); /* never builtin */
    d->lower = tm_xjob_before(me->job, me->rank, cr->c->remote_of[0]);
    d->eh = cr->eh;
    d->newcomm = newcomm;
    int err = tm_attr_copy_all(me, TM_ATTR_COMM, comm, cr->attrs, &d->attrs);
    if (!err && (hints || cr->hints) && !(d->hints = tm_info_dup_obj(hints ? hints : cr->hints)))
        err = MPI_ERR_NO_MEM;
    if (err) {
        idup_free(d);
        return err;
    }
    *newcomm = MPI_COMM_NULL;
    return tm_isched_start(me, cr, comm, 1, d, idup_step, idup_fin, request);
}
