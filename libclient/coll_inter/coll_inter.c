/* coll_inter.c — collectives on inter-communicators over point-to-point (coll_inter.h). */
#include "coll_inter.h"

#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_inter_ops.h"
#include "comm.h"
#include "errh.h"
#include "inter_buf.h"
#include "inter_nbops.h"
#include "job.h"
#include "request.h"

/* Tags of the collectives' messages on the hidden inter-communicator: only collectives use
 * it and every member runs them in the same order, so one tag per operation is enough. */
enum {
    TAG_BARRIER = 1,
    TAG_BCAST,
    TAG_REDUCE,
    TAG_GATHER,
    TAG_SCATTER,
    TAG_ALLGATHER,
    TAG_ALLTOALL,
    TAG_RSCATTER
};

/* The end of every blocking operation: report an error; and of a non-blocking one that has
 * nothing to do (an MPI_PROC_NULL root): a complete request.  That one still counts among
 * the communicator's non-blocking collectives (inter_nb.h: their tags). */
static int finish(struct tm_rank *me, MPI_Comm comm, const char *fn, int err, MPI_Request *request)
{
    if (err) return tm_err(me, comm, err, fn, "failed on the inter-communicator");
    if (!request) return MPI_SUCCESS;
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    if (!cr->pround) cr->inb_started++; /* a persistent start has a tag of its own */
    struct tm_request *r = tm_req_alloc(me, TM_REQ_COLL);
    if (!r) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    r->comm = comm;
    tm_req_set_done(r, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    *request = r;
    return MPI_SUCCESS;
}

/* A non-blocking form: its schedule starts (inter_nbops.h). */
static int start_nb(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                    enum tm_inb_kind kind, const struct tm_inb_args *a, MPI_Request *request)
{
    int e = tm_inb_start(me, cr, comm, kind, a, request);
    return e ? tm_err(me, comm, e, fn, "cannot start on the inter-communicator") : MPI_SUCCESS;
}

static int check_root(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                      int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < cr->c->remote_size))
        return MPI_SUCCESS;
    return tm_err(me, comm, MPI_ERR_ROOT, fn, "invalid root %d (remote group of %d)", root,
                  cr->c->remote_size);
}

/* A reduction's type and op, checked when a non-blocking one starts (a later step would
 * only report them at completion). */
static int check_op(struct tm_rank *me, MPI_Comm comm, const char *fn, MPI_Datatype dt, MPI_Op op)
{
    const struct tm_type *t = tm_type_get(dt);
    if (!t) return tm_err(me, comm, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
    struct tm_opref o;
    return tm_coll_check_op(me, comm, fn, op, t, &o);
}

static int check_count(struct tm_rank *me, MPI_Comm comm, const char *fn, MPI_Count count)
{
    return count < 0 ? tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid count %lld", (long long)count)
                     : MPI_SUCCESS;
}

static int no_in_place(struct tm_rank *me, MPI_Comm comm, const char *fn, const void *a,
                       const void *b)
{
    if (a == MPI_IN_PLACE || b == MPI_IN_PLACE)
        return tm_err(me, comm, MPI_ERR_BUFFER, fn,
                      "MPI_IN_PLACE is not allowed on an inter-communicator");
    return MPI_SUCCESS;
}

#define HIDDEN()                                                                                   \
    MPI_Comm I = cr->coll_inter, L = cr->coll_local;                                               \
    int r = cr->rank, n = cr->c->size, rn = cr->c->remote_size;                                    \
    (void)I, (void)L, (void)r, (void)n, (void)rn;

int tm_inter_barrier(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                     MPI_Request *request)
{
    HIDDEN();
    if (request)
        return start_nb(me, cr, comm, fn, TM_INB_BARRIER, &(struct tm_inb_args){0}, request);
    /* Nobody leaves the second local barrier before both leaders met, which they do only
     * after their whole group entered. */
    int e = PMPI_Barrier(L);
    if (!e && r == 0)
        e = PMPI_Sendrecv(NULL, 0, MPI_BYTE, 0, TAG_BARRIER, NULL, 0, MPI_BYTE, 0, TAG_BARRIER, I,
                          MPI_STATUS_IGNORE);
    if (!e) e = PMPI_Barrier(L);
    return finish(me, comm, fn, e, request);
}

int tm_inter_bcast(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                   void *buf, int count, MPI_Datatype dt, int root, MPI_Request *request)
{
    HIDDEN();
    int e = check_root(me, cr, comm, fn, root);
    if (!e) e = check_count(me, comm, fn, count);
    if (e) return e;
    if (request && root != MPI_PROC_NULL)
        return start_nb(
            me, cr, comm, fn, TM_INB_BCAST,
            &(struct tm_inb_args){.rbuf = buf, .count = count, .rtype = dt, .root = root}, request);
    if (root == MPI_ROOT)
        e = PMPI_Send(buf, count, dt, 0, TAG_BCAST, I);
    else if (root != MPI_PROC_NULL) {
        if (r == 0) e = PMPI_Recv(buf, count, dt, root, TAG_BCAST, I, MPI_STATUS_IGNORE);
        if (!e) e = PMPI_Bcast(buf, count, dt, 0, L);
    }
    return finish(me, comm, fn, e, request);
}

int tm_inter_reduce(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                    const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                    int root, int all, MPI_Request *request)
{
    HIDDEN();
    int e = all ? MPI_SUCCESS : check_root(me, cr, comm, fn, root);
    if (!e) e = check_count(me, comm, fn, count);
    if (!e) e = no_in_place(me, comm, fn, sbuf, rbuf);
    if (e) return e;
    if (!all && root == MPI_PROC_NULL) return finish(me, comm, fn, 0, request);
    if (request && (e = check_op(me, comm, fn, dt, op))) return e;
    if (request)
        return start_nb(me, cr, comm, fn, TM_INB_REDUCE,
                        &(struct tm_inb_args){.sbuf = sbuf,
                                              .rbuf = rbuf,
                                              .count = count,
                                              .rtype = dt,
                                              .op = op,
                                              .root = root,
                                              .all = all},
                        request);
    if (!all && root == MPI_ROOT) {
        e = PMPI_Recv_c(rbuf, count, dt, 0, TAG_REDUCE, I, MPI_STATUS_IGNORE);
        return finish(me, comm, fn, e, request);
    }
    /* This group's reduction at its first member, which sends it to the other side. */
    void *raw = NULL, *tmp = r == 0 ? tmp_buf(dt, count, &raw) : NULL;
    if (r == 0 && !tmp) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    e = PMPI_Reduce_c(sbuf, tmp, count, dt, op, 0, L);
    if (!e && r == 0) {
        if (all)
            e = PMPI_Sendrecv_c(tmp, count, dt, 0, TAG_REDUCE, rbuf, count, dt, 0, TAG_REDUCE, I,
                                MPI_STATUS_IGNORE);
        else
            e = PMPI_Send_c(tmp, count, dt, root, TAG_REDUCE, I);
    }
    free(raw);
    /* Allreduce: each group gets the other group's result. */
    if (!e && all) e = PMPI_Bcast_c(rbuf, count, dt, 0, L);
    return finish(me, comm, fn, e, request);
}

/* Waits for k requests, then frees the array. */
static int wait_all(int k, MPI_Request *q, int e)
{
    int w = k ? PMPI_Waitall(k, q, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    free(q);
    return e ? e : w;
}

/* The root's side of a rooted block move (Gather: receives, Scatter: sends), one block per
 * member of the remote group: counts[i] elements at displs[i] extents, or count at i * count;
 * posts them all, then waits.  An MPI class. */
static int rooted_blocks(int gather, MPI_Comm I, int rn, int tag, void *buf, MPI_Count count,
                         const MPI_Count *counts, const MPI_Aint *displs, MPI_Datatype dt)
{
    MPI_Request *q = malloc(sizeof *q * ((size_t)rn + 1));
    if (!q) return MPI_ERR_NO_MEM;
    MPI_Aint ext = extent(dt);
    int e = MPI_SUCCESS, k = 0;
    for (int i = 0; i < rn && !e; i++) {
        MPI_Count c = counts ? counts[i] : count;
        char *p = at(buf, (counts ? displs[i] : (MPI_Aint)i * count) * ext);
        e = gather ? PMPI_Irecv_c(p, c, dt, i, tag, I, &q[k])
                   : PMPI_Isend_c(p, c, dt, i, tag, I, &q[k]);
        if (!e) k++;
    }
    return wait_all(k, q, e);
}

int tm_inter_gather(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                    const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                    MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *displs,
                    MPI_Datatype rtype, int root, MPI_Request *request)
{
    HIDDEN();
    const struct tm_inb_args ga = {.sbuf = sbuf,
                                   .scount = scount,
                                   .stype = stype,
                                   .rbuf = rbuf,
                                   .rcount = rcount,
                                   .rcounts = rcounts,
                                   .rdispls = displs,
                                   .rtype = rtype,
                                   .root = root};
    int e = check_root(me, cr, comm, fn, root);
    if (e) return e;
    if (root == MPI_PROC_NULL) return finish(me, comm, fn, 0, request);
    if (root != MPI_ROOT) {
        e = check_count(me, comm, fn, scount);
        if (!e) e = no_in_place(me, comm, fn, sbuf, NULL);
        if (e) return e;
        if (request) return start_nb(me, cr, comm, fn, TM_INB_GATHER, &ga, request);
        return finish(me, comm, fn, PMPI_Send_c(sbuf, scount, stype, root, TAG_GATHER, I), request);
    }
    if (rcounts && !displs)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "recvcounts or displs is NULL");
    if (!rcounts && (e = check_count(me, comm, fn, rcount))) return e;
    if (request) return start_nb(me, cr, comm, fn, TM_INB_GATHER, &ga, request);
    e = rooted_blocks(1, I, rn, TAG_GATHER, rbuf, rcount, rcounts, displs, rtype);
    return finish(me, comm, fn, e, request);
}

int tm_inter_scatter(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                     const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                     const MPI_Aint *displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                     MPI_Datatype rtype, int root, MPI_Request *request)
{
    HIDDEN();
    const struct tm_inb_args sa = {.sbuf = sbuf,
                                   .scount = scount,
                                   .scounts = scounts,
                                   .sdispls = displs,
                                   .stype = stype,
                                   .rbuf = rbuf,
                                   .rcount = rcount,
                                   .rtype = rtype,
                                   .root = root};
    int e = check_root(me, cr, comm, fn, root);
    if (e) return e;
    if (root == MPI_PROC_NULL) return finish(me, comm, fn, 0, request);
    if (root != MPI_ROOT) {
        e = check_count(me, comm, fn, rcount);
        if (!e) e = no_in_place(me, comm, fn, rbuf, NULL);
        if (e) return e;
        if (request) return start_nb(me, cr, comm, fn, TM_INB_SCATTER, &sa, request);
        e = PMPI_Recv_c(rbuf, rcount, rtype, root, TAG_SCATTER, I, MPI_STATUS_IGNORE);
        return finish(me, comm, fn, e, request);
    }
    if (scounts && !displs)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "sendcounts or displs is NULL");
    if (!scounts && (e = check_count(me, comm, fn, scount))) return e;
    if (request) return start_nb(me, cr, comm, fn, TM_INB_SCATTER, &sa, request);
    e = rooted_blocks(0, I, rn, TAG_SCATTER, (void *)sbuf, scount, scounts, displs, stype);
    return finish(me, comm, fn, e, request);
}

int tm_inter_allgather(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                       const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                       MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *displs,
                       MPI_Datatype rtype, MPI_Request *request)
{
    HIDDEN();
    int e = check_count(me, comm, fn, scount);
    if (!e) e = no_in_place(me, comm, fn, sbuf, rbuf);
    if (!e && rcounts && !displs)
        e = tm_err(me, comm, MPI_ERR_ARG, fn, "recvcounts or displs is NULL");
    if (!e && !rcounts) e = check_count(me, comm, fn, rcount);
    if (e) return e;
    if (request)
        return start_nb(me, cr, comm, fn, TM_INB_ALLGATHER,
                        &(struct tm_inb_args){.sbuf = sbuf,
                                              .scount = scount,
                                              .stype = stype,
                                              .rbuf = rbuf,
                                              .rcount = rcount,
                                              .rcounts = rcounts,
                                              .rdispls = displs,
                                              .rtype = rtype},
                        request);
    /* Every member sends its block to every remote member and takes theirs. */
    MPI_Request *q = malloc(sizeof *q * (2 * (size_t)rn + 1));
    if (!q) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    MPI_Aint ext = extent(rtype);
    int k = 0;
    for (int i = 0; i < rn && !e; i++) {
        MPI_Count c = rcounts ? rcounts[i] : rcount;
        MPI_Aint off = (rcounts ? displs[i] : (MPI_Aint)i * rcount) * ext;
        e = PMPI_Irecv_c(at(rbuf, off), c, rtype, i, TAG_ALLGATHER, I, &q[k]);
        if (!e) k++;
    }
    for (int i = 0; i < rn && !e; i++) {
        e = PMPI_Isend_c(sbuf, scount, stype, i, TAG_ALLGATHER, I, &q[k]);
        if (!e) k++;
    }
    return finish(me, comm, fn, wait_all(k, q, e), request);
}

int tm_inter_alltoall(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                      int lay, const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                      const MPI_Aint *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes,
                      void *rbuf, MPI_Count rcount, const MPI_Count *rcounts,
                      const MPI_Aint *rdispls, MPI_Datatype rtype, const MPI_Datatype *rtypes,
                      MPI_Request *request)
{
    HIDDEN();
    int e = no_in_place(me, comm, fn, sbuf, rbuf);
    if (!e && lay == 0) e = check_count(me, comm, fn, scount);
    if (!e && lay == 0) e = check_count(me, comm, fn, rcount);
    if (!e && lay && (!scounts || !sdispls || !rcounts || !rdispls))
        e = tm_err(me, comm, MPI_ERR_ARG, fn, "counts or displacements are NULL");
    if (!e && lay == 2 && (!stypes || !rtypes))
        e = tm_err(me, comm, MPI_ERR_ARG, fn, "types are NULL");
    if (e) return e;
    if (request)
        return start_nb(me, cr, comm, fn, TM_INB_ALLTOALL,
                        &(struct tm_inb_args){.lay = lay,
                                              .sbuf = sbuf,
                                              .scount = scount,
                                              .scounts = scounts,
                                              .sdispls = sdispls,
                                              .stype = stype,
                                              .stypes = stypes,
                                              .rbuf = rbuf,
                                              .rcount = rcount,
                                              .rcounts = rcounts,
                                              .rdispls = rdispls,
                                              .rtype = rtype,
                                              .rtypes = rtypes},
                        request);
    MPI_Request *q = malloc(sizeof *q * (2 * (size_t)rn + 1));
    if (!q) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    MPI_Aint sext = lay == 2 ? 1 : extent(stype), rext = lay == 2 ? 1 : extent(rtype);
    int k = 0;
    for (int i = 0; i < rn && !e; i++) {
        MPI_Count c = lay ? rcounts[i] : rcount;
        MPI_Aint off = (lay ? rdispls[i] : (MPI_Aint)i * rcount) * rext;
        e = PMPI_Irecv_c(at(rbuf, off), c, lay == 2 ? rtypes[i] : rtype, i, TAG_ALLTOALL, I, &q[k]);
        if (!e) k++;
    }
    for (int i = 0; i < rn && !e; i++) {
        MPI_Count c = lay ? scounts[i] : scount;
        MPI_Aint off = (lay ? sdispls[i] : (MPI_Aint)i * scount) * sext;
        e = PMPI_Isend_c(at(sbuf, off), c, lay == 2 ? stypes[i] : stype, i, TAG_ALLTOALL, I, &q[k]);
        if (!e) k++;
    }
    return finish(me, comm, fn, wait_all(k, q, e), request);
}

int tm_inter_reduce_scatter(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm,
                            const char *fn, int block, const void *sbuf, void *rbuf,
                            const MPI_Count *rcounts, MPI_Count rcount, MPI_Datatype dt, MPI_Op op,
                            MPI_Request *request)
{
    HIDDEN();
    int e = no_in_place(me, comm, fn, sbuf, rbuf);
    if (!e && block) e = check_count(me, comm, fn, rcount);
    if (!e && !block && !rcounts) e = tm_err(me, comm, MPI_ERR_ARG, fn, "recvcounts is NULL");
    for (int i = 0; !e && !block && i < n; i++)
        if (rcounts[i] < 0) e = check_count(me, comm, fn, rcounts[i]);
    if (!e && request) e = check_op(me, comm, fn, dt, op);
    if (e) return e;
    if (request)
        return start_nb(me, cr, comm, fn, TM_INB_RSCATTER,
                        &(struct tm_inb_args){.block = block,
                                              .sbuf = sbuf,
                                              .rbuf = rbuf,
                                              .rcounts = rcounts,
                                              .rcount = rcount,
                                              .rtype = dt,
                                              .op = op},
                        request);
    MPI_Count *counts = malloc(sizeof *counts * (size_t)n);
    MPI_Aint *displs = malloc(sizeof *displs * (size_t)n);
    if (!counts || !displs) {
        free(counts);
        free(displs);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = block ? rcount : rcounts[i];
        displs[i] = total;
        total += counts[i];
    }
    /* The group's reduction of its vectors at its first member; the first members swap
     * theirs; each scatters the other group's result over its group. */
    void *raw1 = NULL, *raw2 = NULL, *mine = NULL, *theirs = NULL;
    if (r == 0) {
        mine = tmp_buf(dt, total, &raw1);
        theirs = tmp_buf(dt, total, &raw2);
        if (!mine || !theirs) e = MPI_ERR_NO_MEM;
    }
    /* Every member takes part in the local reduce, whatever the leader found. */
    int e2 = PMPI_Reduce_c(sbuf, mine, total, dt, op, 0, L);
    if (!e) e = e2;
    if (!e && r == 0)
        e = PMPI_Sendrecv_c(mine, total, dt, 0, TAG_RSCATTER, theirs, total, dt, 0, TAG_RSCATTER, I,
                            MPI_STATUS_IGNORE);
    e2 = PMPI_Scatterv_c(theirs, counts, displs, dt, rbuf, counts[r], dt, 0, L);
    if (!e) e = e2;
    free(raw1);
    free(raw2);
    free(counts);
    free(displs);
    return finish(me, comm, fn, e, request);
}

const struct tm_inter_ops tm_inter_ops = {
    .barrier = tm_inter_barrier,
    .bcast = tm_inter_bcast,
    .reduce = tm_inter_reduce,
    .gather = tm_inter_gather,
    .scatter = tm_inter_scatter,
    .allgather = tm_inter_allgather,
    .alltoall = tm_inter_alltoall,
    .reduce_scatter = tm_inter_reduce_scatter,
};
