/* coll_xjob_nb.c — the non-blocking collectives on a communicator with ranks of two jobs
 * (coll_xjob.h tm_xcoll_nb): messages only, so they return at once and progress while the
 * other job's ranks have not come yet.
 *
 * Each operation is a MULTI request (request.h) of point-to-point parts that the engines
 * complete without the rank: every member sends each other member at most one message and
 * receives at most one from it (empty ones included, so both ends of a pair always agree that
 * it exists), straight to where it is needed, and no member forwards what it received (that
 * would be a step of its own, which only the rank could take).  The messages go on the
 * collective context with a tag of their own, so several outstanding operations match in the
 * order every member starts them (MPI 3.1 §5.12), as point-to-point keeps the order of one
 * pair.  Reductions receive the members' packed blocks and reduce them in rank order (MPI's
 * order, so non-commutative ops hold) when the owner takes the status (tm_nbr fin).  O(n)
 * messages per member for the rooted operations, O(n^2) in all for the others. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_xjob.h"
#include "coll_xjob_int.h"
#include "p2p.h"
#include "p2p_route.h"
#include "request.h"
#include "type_copy.h"

/* The non-blocking forms' tag on the collective context (the blocking ones use 0x7c01); a
 * persistent collective's starts take one tag per request from XCOLL_P_TAG0 on (its number
 * modulo 2^16, comm.h npinit), so they match by request, whatever order members start them. */
#define XCOLL_NB_TAG 0x7c02
#define XCOLL_P_TAG0 0x10000

/* An operation's state until the request goes: what its reduction reads, and the memory the
 * call allocated that its sends read (an in-place snapshot). */
struct xnb {
    struct tm_cargs a; /* a reduction's arguments: a.count elements per block, a.rtype held */
    size_t bytes;      /* packed bytes of one block */
    int n;             /* blocks reduced: blocks[0 .. n) in rank order */
    unsigned char *blocks;
    void *own;
};

/* Where one member posts its parts. */
struct xpost {
    struct tm_rank *me;
    struct tm_commref *scr; /* the stand-in on the collective context (tm_xcoll_nb) */
    struct tm_nbr *nb;
    int n, r; /* members, this one */
    int tag;  /* the operation's messages */
};

/* Posts q, a receive from (is_recv) or a send to member peer of bytes packed bytes at buf.
 * Failures go to nb->err as an MPI class (q goes back to the pool). */
static void post_req(struct xpost *p, struct tm_request *q, void *buf, size_t bytes, int peer,
                     int is_recv)
{
    if (is_recv) {
        tm_recv_ctx(p->me, p->scr->c->ctx, buf, bytes, peer, p->tag, q);
    } else {
        int rc = tm_send(p->me, p->scr, buf, bytes, peer, p->tag, TM_SEND_STANDARD, q);
        if (rc < 0) {
            atomic_store_explicit(&q->done, 1, memory_order_relaxed);
            tm_req_free(p->me, q);
            p->nb->err = rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
            return;
        }
    }
    p->nb->q[p->nb->n++] = q;
}

/* A receive from or a send to member peer of count elements of t at buf (t NULL: none). */
static void post(struct xpost *p, const void *buf, size_t count, const struct tm_type *t, int peer,
                 int is_recv)
{
    if (p->nb->err) return;
    struct tm_request *q = tm_req_alloc(p->me, is_recv ? TM_REQ_RECV : TM_REQ_SEND);
    if (!q) {
        p->nb->err = MPI_ERR_NO_MEM;
        return;
    }
    const struct tm_type *layout = t ? tm_type_moved(t) : NULL;
    if (layout) { /* held until the request goes back to the pool */
        tm_type_hold(layout);
        q->dt = layout;
    }
    post_req(p, q, (void *)buf, t ? count * t->psize : 0, peer, is_recv);
}

/* The same for bytes packed bytes at buf. */
static void post_raw(struct xpost *p, void *buf, size_t bytes, int peer, int is_recv)
{
    if (p->nb->err) return;
    struct tm_request *q = tm_req_alloc(p->me, is_recv ? TM_REQ_RECV : TM_REQ_SEND);
    if (!q) {
        p->nb->err = MPI_ERR_NO_MEM;
        return;
    }
    post_req(p, q, buf, bytes, peer, is_recv);
}

/* This member's own block, copied now (the send buffer may not change until the operation
 * completes, so a copy at the start is what the program sees at the end). */
static void copy_own(struct xpost *p, const void *in, size_t icount, const struct tm_type *it,
                     void *out, size_t ocount, const struct tm_type *ot)
{
    if (p->nb->err || !it || !ot) return;
    if (icount * it->psize > ocount * ot->psize)
        p->nb->err = MPI_ERR_TRUNCATE;
    else if (icount && ocount)
        tm_type_copy(out, ocount, ot, in, icount, it);
}

/* Once every block came: reduced in rank order into the receive buffer. */
static int red_fin(struct tm_nbr *nb)
{
    struct xnb *x = nb->arg;
    unsigned char **in = malloc(sizeof *in * (size_t)x->n);
    size_t *l = malloc(sizeof *l * (size_t)x->n);
    int rc = in && l ? 0 : -ENOMEM;
    for (int k = 0; rc == 0 && k < x->n; k++) {
        in[k] = x->blocks + (size_t)k * x->bytes;
        l[k] = x->bytes;
    }
    if (rc == 0) rc = tm_xcoll_reduce_blocks(&x->a, in, l, x->n, x->a.count, x->a.rbuf);
    free(in);
    free(l);
    return rc == 0 ? 0 : rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_TRUNCATE;
}

static void xnb_free(struct tm_nbr *nb)
{
    struct xnb *x = nb->arg;
    if (!x) return;
    if (x->blocks) tm_type_release(x->a.rtype);
    free(x->blocks);
    free(x->own);
    free(x);
    nb->arg = NULL;
}

/* Sets up x to reduce nblocks (>= 1) blocks of count elements of a's type into a's receive
 * buffer once they came; returns the block area (block k at k * x->bytes), NULL: no memory
 * (nb->err says so). */
static unsigned char *red_new(struct tm_nbr *nb, struct xnb *x, const struct tm_cargs *a,
                              size_t count, int nblocks)
{
    size_t bytes = count * a->rtype->psize;
    if (!(x->blocks = malloc(bytes * (size_t)nblocks + 1))) {
        nb->err = MPI_ERR_NO_MEM;
        return NULL;
    }
    x->a = *a;
    x->a.own = x->a.wide = NULL;
    x->a.stage = NULL;
    x->a.count = count;
    x->bytes = bytes;
    x->n = nblocks;
    tm_type_hold(a->rtype);
    nb->fin = red_fin;
    return x->blocks;
}

/* Packs count elements of t at buf into block k of blocks (bytes each). */
static void pack_block(unsigned char *blocks, size_t bytes, int k, const void *buf, size_t count,
                       const struct tm_type *t)
{
    if (bytes) tm_type_pack(blocks + (size_t)k * bytes, buf, count, t, 0, bytes);
}

/* ---- the operations: each posts this member's parts ---- */

/* Every member tells every other that it came: done when all the others did. */
static void nb_barrier(struct xpost *p)
{
    for (int k = 0; k < p->n; k++)
        if (k != p->r) post(p, NULL, 0, NULL, k, 1);
    for (int k = 0; k < p->n; k++)
        if (k != p->r) post(p, NULL, 0, NULL, k, 0);
}

/* Straight from the root to every member. */
static void nb_bcast(struct xpost *p, const struct tm_cargs *a)
{
    if (p->r != a->root) {
        post(p, a->rbuf, (size_t)a->rcount, a->rtype, a->root, 1);
        return;
    }
    for (int k = 0; k < p->n; k++)
        if (k != p->r) post(p, a->rbuf, (size_t)a->rcount, a->rtype, k, 0);
}

/* Reduce (root >= 0: every member's block to the root) and Allreduce (every member's block to
 * every other, each reducing them all). */
static void nb_reduce(struct xpost *p, struct xnb *x, const struct tm_cargs *a)
{
    int all = a->root < 0;
    if (!all && p->r != a->root) {
        post(p, a->sbuf, a->count, a->rtype, a->root, 0);
        return;
    }
    unsigned char *b = red_new(p->nb, x, a, a->count, p->n);
    if (!b) return;
    /* this member's block now: the send buffer may be the receive buffer (in place) */
    pack_block(b, x->bytes, p->r, a->sbuf, a->count, a->rtype);
    for (int k = 0; k < p->n; k++)
        if (k != p->r) post_raw(p, b + (size_t)k * x->bytes, x->bytes, k, 1);
    for (int k = 0; all && k < p->n; k++)
        if (k != p->r) post_raw(p, b + (size_t)p->r * x->bytes, x->bytes, k, 0);
}

/* Gather(v): every member's block to the root, into its place there. */
static void nb_gather(struct xpost *p, const struct tm_cargs *a)
{
    size_t cnt, ocnt;
    const struct tm_type *t, *ot;
    if (p->r != a->root) {
        const void *in = tm_cblk_in(a, 0, &cnt, &t);
        post(p, in, cnt, t, a->root, 0);
        return;
    }
    for (int k = 0; k < p->n; k++) {
        void *out = tm_cblk_out(a, k, &ocnt, &ot);
        if (k != p->r) {
            post(p, out, ocnt, ot, k, 1);
        } else if (a->stype) { /* no send type: in place, the block is there already */
            const void *in = tm_cblk_in(a, 0, &cnt, &t);
            copy_own(p, in, cnt, t, out, ocnt, ot);
        }
    }
}

/* Scatter(v): the root's block k straight to member k. */
static void nb_scatter(struct xpost *p, const struct tm_cargs *a)
{
    size_t cnt, ocnt;
    const struct tm_type *t, *ot;
    if (p->r != a->root) {
        void *out = tm_cblk_out(a, 0, &ocnt, &ot);
        post(p, out, ocnt, ot, a->root, 1);
        return;
    }
    for (int k = 0; k < p->n; k++) {
        const void *in = tm_cblk_in(a, k, &cnt, &t);
        if (k != p->r) {
            post(p, in, cnt, t, k, 0);
        } else if (a->rtype) { /* no receive type: in place */
            void *out = tm_cblk_out(a, 0, &ocnt, &ot);
            copy_own(p, in, cnt, t, out, ocnt, ot);
        }
    }
}

/* Allgather(v): every member's block to every other, into its place there. */
static void nb_allgather(struct xpost *p, const struct tm_cargs *a)
{
    size_t cnt, ocnt;
    const struct tm_type *t, *ot;
    /* no send type: in place, the member's block is in its receive buffer */
    const void *in = a->stype ? tm_cblk_in(a, 0, &cnt, &t) : tm_cblk_out(a, p->r, &cnt, &t);
    for (int k = 0; k < p->n; k++) {
        void *out = tm_cblk_out(a, k, &ocnt, &ot);
        if (k != p->r)
            post(p, out, ocnt, ot, k, 1);
        else if (a->stype)
            copy_own(p, in, cnt, t, out, ocnt, ot);
    }
    for (int k = 0; k < p->n; k++)
        if (k != p->r) post(p, in, cnt, t, k, 0);
}

/* Alltoall(v, w): block k of every member straight to member k (in place: the entry point's
 * snapshot of the receive buffer is the input, owned by the operation). */
static void nb_alltoall(struct xpost *p, const struct tm_cargs *a)
{
    size_t cnt, ocnt;
    const struct tm_type *t, *ot;
    for (int k = 0; k < p->n; k++) {
        void *out = tm_cblk_out(a, k, &ocnt, &ot);
        if (k != p->r) {
            post(p, out, ocnt, ot, k, 1);
        } else {
            const void *in = tm_cblk_in(a, k, &cnt, &t);
            copy_own(p, in, cnt, t, out, ocnt, ot);
        }
    }
    for (int k = 0; k < p->n; k++) {
        const void *in = tm_cblk_in(a, k, &cnt, &t);
        if (k != p->r) post(p, in, cnt, t, k, 0);
    }
}

/* Reduce_scatter(_block): every member sends member k the segment k of its vector; each
 * reduces the segments it got in rank order. */
static void nb_reduce_scatter(struct xpost *p, struct xnb *x, int kind, const struct tm_cargs *a)
{
    const struct tm_type *t = a->rtype;
    size_t off = 0, mine = (size_t)a->rcount;
    unsigned char *b = red_new(p->nb, x, a, mine, p->n);
    if (!b) return;
    pack_block(b, x->bytes, p->r, tm_dt_at(a->sbuf, a->roff, t), mine, t);
    for (int k = 0; k < p->n; k++)
        if (k != p->r) post_raw(p, b + (size_t)k * x->bytes, x->bytes, k, 1);
    for (int k = 0; k < p->n; k++) {
        size_t cnt = kind == MPIX_COLL_REDUCE_SCATTER ? (size_t)a->rcounts[k] : mine;
        if (k != p->r) post(p, tm_dt_at(a->sbuf, off, t), cnt, t, k, 0);
        off += cnt;
    }
}

/* Scan and Exscan: every member's block to the members after it; each reduces those of the
 * members before it (and its own: Scan) in rank order.  Exscan's member 0 gets nothing (its
 * receive buffer is undefined, left alone). */
static void nb_scan(struct xpost *p, struct xnb *x, int ex, const struct tm_cargs *a)
{
    int nblocks = ex ? p->r : p->r + 1;
    if (nblocks > 0) {
        unsigned char *b = red_new(p->nb, x, a, a->count, nblocks);
        if (!b) return;
        if (!ex) pack_block(b, x->bytes, p->r, a->sbuf, a->count, a->rtype);
        for (int k = 0; k < p->r; k++)
            post_raw(p, b + (size_t)k * x->bytes, x->bytes, k, 1);
    }
    for (int k = p->r + 1; k < p->n; k++)
        post(p, a->sbuf, a->count, a->rtype, k, 0);
}

int tm_xcoll_nb(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, int kind,
                struct tm_cargs *a, struct tm_request **ret)
{
    switch (kind) {
    case MPIX_COLL_BARRIER:
    case MPIX_COLL_BCAST:
    case MPIX_COLL_REDUCE:
    case MPIX_COLL_ALLREDUCE:
    case MPIX_COLL_GATHER:
    case MPIX_COLL_GATHERV:
    case MPIX_COLL_SCATTER:
    case MPIX_COLL_SCATTERV:
    case MPIX_COLL_ALLGATHER:
    case MPIX_COLL_ALLGATHERV:
    case MPIX_COLL_ALLTOALL:
    case MPIX_COLL_ALLTOALLV:
    case MPIX_COLL_ALLTOALLW:
    case MPIX_COLL_REDUCE_SCATTER:
    case MPIX_COLL_REDUCE_SCATTER_BLOCK:
    case MPIX_COLL_SCAN:
    case MPIX_COLL_EXSCAN:
        break;
    default:
        return -ENOSYS;
    }
    int n = cr->c->size, r = cr->rank;
    /* at most one message each way per other member */
    struct tm_nbr *nb = malloc(sizeof *nb + sizeof nb->q[0] * 2 * (size_t)n);
    struct xnb *x = nb ? calloc(1, sizeof *x) : NULL;
    struct tm_request *q = x ? tm_req_alloc(me, TM_REQ_MULTI) : NULL;
    if (!q) {
        free(x);
        free(nb);
        return -ENOMEM;
    }
    memset(nb, 0, sizeof *nb);
    q->nb = nb;
    q->comm = comm;
    q->st_source = MPI_ANY_SOURCE;
    q->st_tag = MPI_ANY_TAG;
    /* the handle itself is never pending (tm_nbr_done says when the parts are complete) */
    atomic_store_explicit(&q->done, 1, memory_order_relaxed);
    /* the sends may read the call's own memory (Alltoall's in-place snapshot) until they are
     * done: the operation takes it */
    x->own = a->own;
    a->own = NULL;
    nb->arg = x;
    nb->fin_free = xnb_free;
    /* a stand-in on the collective context: tm_send reads the context, the member map and
     * the sender's rank, during the call only (as cp2p.c does) */
    struct tm_comm sc = {.ctx = TM_XCOLL_CTX(cr->c), .size = n, .world_of = cr->c->world_of};
    struct tm_commref scr = {.c = &sc, .rank = r, .eh = MPI_ERRORS_RETURN};
    int tag = cr->pround ? XCOLL_P_TAG0 + (int)(tm_pround_pid(cr->pround) & 0xffffu) : XCOLL_NB_TAG;
    struct xpost p = {.me = me, .scr = &scr, .nb = nb, .n = n, .r = r, .tag = tag};
    switch (kind) {
    case MPIX_COLL_BARRIER:
        nb_barrier(&p);
        break;
    case MPIX_COLL_BCAST:
        nb_bcast(&p, a);
        break;
    case MPIX_COLL_REDUCE:
    case MPIX_COLL_ALLREDUCE:
        nb_reduce(&p, x, a);
        break;
    case MPIX_COLL_GATHER:
    case MPIX_COLL_GATHERV:
        nb_gather(&p, a);
        break;
    case MPIX_COLL_SCATTER:
    case MPIX_COLL_SCATTERV:
        nb_scatter(&p, a);
        break;
    case MPIX_COLL_ALLGATHER:
    case MPIX_COLL_ALLGATHERV:
        nb_allgather(&p, a);
        break;
    case MPIX_COLL_ALLTOALL:
    case MPIX_COLL_ALLTOALLV:
    case MPIX_COLL_ALLTOALLW:
        nb_alltoall(&p, a);
        break;
    case MPIX_COLL_REDUCE_SCATTER:
    case MPIX_COLL_REDUCE_SCATTER_BLOCK:
        nb_reduce_scatter(&p, x, kind, a);
        break;
    default: /* SCAN, EXSCAN */
        nb_scan(&p, x, kind == MPIX_COLL_EXSCAN, a);
        break;
    }
    *ret = q;
    return 0;
}
