/* nbr.c — neighbourhood collectives over point-to-point on the neighbourhood context (nbr.h). */
#include "nbr.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "comm.h"
#include "errh.h"
#include "job.h"
#include "p2p.h"
#include "p2p_route.h"
#include "topo.h"
#include "type.h"
#include "type_copy.h"
#include "wait.h"

/* The messages of one operation; owner-only (the request's thread starts, tests and frees
 * them).  Each q[i] is an ordinary pooled send or receive request that the engine completes. */
int tm_nbr_done(struct tm_request *r)
{
    struct tm_nbr *nb = r->nb;
    for (int i = 0; i < nb->n; i++)
        if (!tm_req_complete(nb->q[i])) return 0;
    return 1;
}

/* The first failure of a complete operation (an MPI class), 0. */
static int nbr_error(const struct tm_nbr *nb)
{
    if (nb->err) return nb->err;
    for (int i = 0; i < nb->n; i++)
        if (nb->q[i]->st_error) return nb->q[i]->st_error;
    return 0;
}

void tm_nbr_status(struct tm_request *r, MPI_Status *status)
{
    struct tm_nbr *nb = r->nb;
    if (nb->fin && !nb->fin_ran) { /* the operation's last step, once its parts are done */
        nb->fin_ran = 1;
        int e = nbr_error(nb) ? 0 : nb->fin(nb);
        if (e && !nb->err) nb->err = e;
    }
    r->st_error = nbr_error(r->nb);
    tm_req_status(r, status);
}

void tm_nbr_free(struct tm_rank *me, struct tm_request *r)
{
    struct tm_nbr *nb = r->nb;
    for (int i = 0; i < nb->n; i++)
        tm_req_free(me, nb->q[i]);
    if (nb->fin_free) nb->fin_free(nb);
    free(nb);
    r->nb = NULL;
    tm_req_free(me, r);
}

int tm_nbr_finish(struct tm_rank *me, struct tm_request *r, MPI_Status *status)
{
    tm_nbr_status(r, status);
    int err = r->st_error;
    tm_nbr_free(me, r);
    return err;
}

/* ---- starting ---- */

/* A buffer of count elements of dt: its type (*ret), else an MPI class. */
static int check_buf(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what,
                     const void *buf, MPI_Count count, MPI_Datatype dt, const struct tm_type **ret)
{
    if (count < 0)
        return tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid %s count %lld", what, (long long)count);
    const struct tm_type *t = tm_type_get(dt);
    if (!t) return tm_err(me, comm, MPI_ERR_TYPE, fn, "invalid %s datatype %d", what, dt);
    if (buf == MPI_IN_PLACE)
        return tm_err(me, comm, MPI_ERR_BUFFER, fn,
                      "MPI_IN_PLACE is not allowed in neighbourhood collectives");
    if (tm_buf_missing(buf, count, t))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn, "%s buffer is NULL with count %lld", what,
                      (long long)count);
    /* the bytes of one block are a size_t inside: no block longer than the address space */
    if (t->psize && count > PTRDIFF_MAX / (MPI_Count)t->psize)
        return tm_err(me, comm, MPI_ERR_COUNT, fn, "%s count %lld is more bytes than memory holds",
                      what, (long long)count);
    *ret = t;
    return MPI_SUCCESS;
}

static MPI_Aint extent_of(MPI_Datatype dt)
{
    MPI_Aint lb = 0, ext = 0;
    if (PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS) return 0;
    return ext;
}

/* Block layouts of one side of an operation. */
enum lay {
    LAY_ONE,     /* Allgather's send side: the same block to every destination */
    LAY_UNIFORM, /* block k: count elements at k * count */
    LAY_V,       /* block k: counts[k] elements at displs[k] elements */
    LAY_W,       /* block k: counts[k] elements of types[k] at bdispls[k] bytes */
};

/* One side (send or receive) of an operation: where block k is and what it holds. */
struct side {
    const char *what; /* "send" or "receive", for errors */
    enum lay lay;
    int deg;
    const int *peer;
    const void *buf;
    MPI_Count count;
    const MPI_Count *counts;
    const MPI_Aint *displs, *bdispls;
    MPI_Datatype type;
    const MPI_Datatype *types;
};

static void block(const struct side *s, MPI_Aint ext, int k, char **buf, MPI_Count *count,
                  MPI_Datatype *type)
{
    char *b = (char *)s->buf;
    *type = s->type;
    switch (s->lay) {
    case LAY_ONE:
        *buf = b, *count = s->count;
        break;
    case LAY_UNIFORM:
        *buf = b + (MPI_Aint)k * (MPI_Aint)s->count * ext, *count = s->count;
        break;
    case LAY_V:
        *buf = b + s->displs[k] * ext, *count = s->counts[k];
        break;
    case LAY_W:
        *buf = b + s->bdispls[k], *count = s->counts[k], *type = s->types[k];
        break;
    }
}

/* Checks the arguments of a side. */
static int check_side(struct tm_rank *me, MPI_Comm comm, const char *fn, const struct side *s)
{
    const struct tm_type *t;
    if (s->lay == LAY_ONE || s->lay == LAY_UNIFORM)
        return check_buf(me, comm, fn, s->what, s->buf, s->count, s->type, &t);
    if (s->deg == 0) return MPI_SUCCESS;
    if (!s->counts || (s->lay == LAY_V ? !s->displs : !s->bdispls || !s->types))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "%s counts, displacements or types are NULL",
                      s->what);
    for (int k = 0; k < s->deg; k++) {
        int e = check_buf(me, comm, fn, s->what, s->buf, s->counts[k],
                          s->lay == LAY_W ? s->types[k] : s->type, &t);
        if (e) return e;
    }
    return MPI_SUCCESS;
}

/* Posts block k of a side as a receive from or a send to s->peer[k]; 0 or an MPI class. */
static int post(struct tm_rank *me, struct tm_commref *scr, MPI_Comm comm, const struct side *s,
                MPI_Aint ext, int k, int tag, int is_recv, struct tm_nbr *nb)
{
    char *buf = NULL;
    MPI_Count count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    block(s, ext, k, &buf, &count, &type);
    const struct tm_type *t = tm_type_get(type);
    struct tm_request *q = tm_req_alloc(me, is_recv ? TM_REQ_RECV : TM_REQ_SEND);
    if (!q) return MPI_ERR_NO_MEM;
    q->comm = comm;
    const struct tm_type *layout = tm_type_moved(t);
    if (layout) { /* held until the request goes back to the pool */
        tm_type_hold(layout);
        q->dt = layout;
    }
    size_t bytes = (size_t)count * t->psize;
    if (is_recv) {
        tm_recv_ctx(me, scr->c->ctx, buf, bytes, s->peer[k], tag, q);
    } else {
        int rc = tm_send(me, scr, buf, bytes, s->peer[k], tag, TM_SEND_STANDARD, q);
        if (rc < 0) {
            atomic_store_explicit(&q->done, 1, memory_order_relaxed);
            tm_req_free(me, q);
            return rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
        }
    }
    nb->q[nb->n++] = q;
    return 0;
}

static int nbr_cond(void *arg)
{
    return tm_nbr_done(arg);
}

/* Tags of persistent starts: above the Cartesian blocks' (2 per dimension), a stride per
 * request number modulo the span. */
#define NBR_PTAG0 (1 << 28)
#define NBR_PSTRIDE 256
#define NBR_PSPAN (1 << 20)

int tm_nbr_run(struct tm_rank *me, const char *fn, const struct tm_nbr_args *a, int nonblocking,
               MPI_Request *request)
{
    MPI_Comm comm = a->comm;
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    const struct tm_topo *t = tm_topo_of(cr->c);
    if (!t) return tm_err(me, comm, MPI_ERR_TOPOLOGY, fn, "communicator %d has no topology", comm);
    if (nonblocking && !request) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    int indeg, outdeg, *own = NULL;
    const int *src, *dst;
    if (tm_topo_neighbors(t, cr->rank, &indeg, &src, &outdeg, &dst, &own) < 0)
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    /* An int call's arrays, widened for this start (the messages keep no pointer to them). */
    const MPI_Count *wc[2] = {a->scounts, a->rcounts};
    const MPI_Aint *wd[2] = {a->sdispls, a->rdispls};
    void *wide[2] = {NULL, NULL};
    const int *ic[2] = {a->iscounts, a->ircounts}, *id[2] = {a->isdispls, a->irdispls};
    const int deg[2] = {outdeg, indeg};
    for (int i = 0; i < 2; i++) {
        if (!ic[i] && !id[i]) continue;
        const MPI_Count *c = NULL;
        const MPI_Aint *d = NULL;
        if (tm_coll_widen(deg[i], 1, &ic[i], &id[i], &c, &d, &wide[i]) < 0) {
            free(wide[0]);
            free(own);
            return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        if (ic[i]) wc[i] = c;
        if (id[i]) wd[i] = d;
    }
    struct side ss = {.what = "send",
                      .deg = outdeg,
                      .peer = dst,
                      .buf = a->sbuf,
                      .count = a->scount,
                      .type = a->stype};
    struct side rs = {.what = "receive",
                      .deg = indeg,
                      .peer = src,
                      .buf = a->rbuf,
                      .count = a->rcount,
                      .type = a->rtype};
    ss.lay = rs.lay = LAY_UNIFORM;
    switch (a->op) {
    case TM_NBR_ALLGATHER:
        ss.lay = LAY_ONE;
        break;
    case TM_NBR_ALLGATHERV:
        ss.lay = LAY_ONE;
        rs.lay = LAY_V, rs.counts = wc[1], rs.displs = wd[1];
        break;
    case TM_NBR_ALLTOALL:
        break;
    case TM_NBR_ALLTOALLV:
        ss.lay = LAY_V, ss.counts = wc[0], ss.displs = wd[0];
        rs.lay = LAY_V, rs.counts = wc[1], rs.displs = wd[1];
        break;
    case TM_NBR_ALLTOALLW:
        ss.lay = LAY_W, ss.counts = wc[0], ss.bdispls = wd[0], ss.types = a->stypes;
        rs.lay = LAY_W, rs.counts = wc[1], rs.bdispls = wd[1], rs.types = a->rtypes;
        break;
    }
    int err = check_side(me, comm, fn, &ss);
    if (!err) err = check_side(me, comm, fn, &rs);
    if (err) {
        free(wide[0]);
        free(wide[1]);
        free(own);
        return err;
    }
    MPI_Aint sext = ss.lay == LAY_W ? 0 : extent_of(ss.type);
    MPI_Aint rext = rs.lay == LAY_W ? 0 : extent_of(rs.type);

    struct tm_nbr *nb = malloc(sizeof *nb + sizeof nb->q[0] * (size_t)(indeg + outdeg));
    struct tm_request *r = nb ? tm_req_alloc(me, TM_REQ_MULTI) : NULL;
    if (!r) {
        free(nb);
        free(wide[0]);
        free(wide[1]);
        free(own);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    memset(nb, 0, sizeof *nb);
    r->nb = nb;
    r->comm = comm;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    /* The handle itself is never pending (tm_nbr_done says when the operation is complete):
     * the pool may take it back at once when freed. */
    atomic_store_explicit(&r->done, 1, memory_order_relaxed);

    /* A stand-in of the communicator on the neighbourhood context: tm_send reads the context,
     * the member map and the sender's rank, during the call only (as cp2p.c does). */
    struct tm_comm sc = {
        .ctx = TM_CTX_NBR(cr->c->ctx), .size = cr->c->size, .world_of = cr->c->world_of};
    struct tm_commref scr = {.c = &sc, .rank = cr->rank, .eh = MPI_ERRORS_RETURN};
    int cart = t->kind == MPI_CART;
    /* A persistent start (comm.h pround) tags its messages by its request, so members may
     * start persistent requests in different orders (MPI 4.0 §6.13: they match by their
     * *_init order); a request's own starts keep their order as the non-blocking calls do. */
    int tag0 =
        cr->pround ? NBR_PTAG0 + (int)(tm_pround_pid(cr->pround) % NBR_PSPAN) * NBR_PSTRIDE : 0;
    /* Receives first, so that sends to this member's own blocks (self-loops) and early
     * messages find them posted. */
    for (int k = 0; k < indeg && !nb->err; k++)
        if (src[k] != MPI_PROC_NULL)
            nb->err = post(me, &scr, comm, &rs, rext, k, tag0 + (cart ? k ^ 1 : 0), 1, nb);
    for (int k = 0; k < outdeg && !nb->err; k++)
        if (dst[k] != MPI_PROC_NULL)
            nb->err = post(me, &scr, comm, &ss, sext, k, tag0 + (cart ? k : 0), 0, nb);
    free(wide[0]);
    free(wide[1]);
    free(own);

    if (nonblocking) {
        *request = r;
        return MPI_SUCCESS;
    }
    tm_wait(me, nbr_cond, r);
    err = tm_nbr_finish(me, r, MPI_STATUS_IGNORE);
    if (err) return tm_err(me, comm, err, fn, "a message to or from a neighbour failed");
    return MPI_SUCCESS;
}
