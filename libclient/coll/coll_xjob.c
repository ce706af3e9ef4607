/* coll_xjob.c — collectives on a communicator with ranks of two jobs, over point-to-point
 * through member 0 or the root (coll_xjob.h). */
#include "coll_xjob.h"
#include "coll_xjob_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "cp2p.h"
#include "ctx.h"
#include "job.h"
#include "p2p.h"
#include "p2p_route.h"
#include "request.h"
#include "topo.h"
#include "type_copy.h"
#include "xjob.h"

/* The communicator's collective context (coll_xjob_int.h) and one tag: every member runs the
 * collectives of a communicator in one order, and messages of one pair keep theirs. */
#define XCOLL_CTX(c) TM_XCOLL_CTX(c)
#define XCOLL_TAG 0x7c01

/* A message of known size n or less: a length, then the bytes (two messages). */
static int send_blob(struct tm_rank *me, struct tm_commref *cr, int dest, const void *b, size_t n)
{
    uint64_t len = n;
    int rc = tm_cp2p_send(me, cr->c, cr->rank, XCOLL_CTX(cr->c), dest, XCOLL_TAG, &len, sizeof len);
    if (rc == 0 && n)
        rc = tm_cp2p_send(me, cr->c, cr->rank, XCOLL_CTX(cr->c), dest, XCOLL_TAG, b, n);
    return rc;
}

static int recv_blob(struct tm_rank *me, struct tm_commref *cr, int src, unsigned char **ret,
                     size_t *ret_n)
{
    uint64_t len = 0;
    size_t got = 0;
    int rc = tm_cp2p_recv(me, XCOLL_CTX(cr->c), src, XCOLL_TAG, &len, sizeof len, &got, NULL);
    if (rc == 0 && got != sizeof len) rc = -EPROTO;
    if (rc == 0 && len > SIZE_MAX / 2) rc = -EPROTO;
    unsigned char *b = NULL;
    if (rc == 0 && !(b = malloc(len ? (size_t)len : 1))) rc = -ENOMEM;
    if (rc == 0 && len)
        rc = tm_cp2p_recv(me, XCOLL_CTX(cr->c), src, XCOLL_TAG, b, (size_t)len, &got, NULL);
    if (rc == 0 && len && got != len) rc = -EPROTO;
    if (rc) {
        free(b);
        return rc;
    }
    *ret = b;
    *ret_n = (size_t)len;
    return 0;
}

/* The packed bytes of n elements of t at p (malloc'd, at least 1 byte); NULL: no memory. */
static unsigned char *pack(const void *p, size_t n, const struct tm_type *t, size_t *ret_len)
{
    size_t len = t ? n * t->psize : 0;
    unsigned char *b = malloc(len ? len : 1);
    if (b && len) tm_type_pack(b, p, n, t, 0, len);
    *ret_len = len;
    return b;
}

/* bytes into n elements of t at p: -EMSGSIZE when they are more than those hold. */
static int unpack(void *p, size_t n, const struct tm_type *t, const unsigned char *in, size_t bytes)
{
    size_t cap = t ? n * t->psize : 0;
    if (bytes > cap) return -EMSGSIZE;
    if (bytes) tm_type_unpack(p, n, t, 0, in, bytes);
    return 0;
}

/* A buffer for count elements of t laid out as in a program's buffer: the address of element
 * 0 (*ret_mem: the allocation). */
static void *typed_new(size_t count, const struct tm_type *t, void **ret_mem)
{
    size_t ext = (size_t)(t->extent < 0 ? -t->extent : t->extent);
    size_t span = (count ? (count - 1) * ext : 0) + (size_t)(t->true_ub - t->true_lb) + 1;
    unsigned char *mem = malloc(span);
    *ret_mem = mem;
    if (!mem) return NULL;
    ptrdiff_t below = t->extent < 0 && count ? (ptrdiff_t)((count - 1) * ext) : 0;
    return mem - t->true_lb + below;
}

/* Every member's blob at root (blobs[k], lens[k]; root's is mine, taken over), or mine sent
 * there.  The others' vectors are NULL. */
static int gather_blobs(struct tm_rank *me, struct tm_commref *cr, int root, unsigned char *mine,
                        size_t mlen, unsigned char ***ret_b, size_t **ret_l)
{
    int n = cr->c->size, rc = 0;
    *ret_b = NULL;
    *ret_l = NULL;
    if (cr->rank != root) {
        rc = send_blob(me, cr, root, mine, mlen);
        free(mine);
        return rc;
    }
    unsigned char **b = calloc((size_t)n, sizeof *b);
    size_t *l = calloc((size_t)n, sizeof *l);
    if (!b || !l) {
        free(b);
        free(l);
        free(mine);
        return -ENOMEM;
    }
    b[root] = mine;
    l[root] = mlen;
    for (int k = 0; k < n && rc == 0; k++)
        if (k != root) rc = recv_blob(me, cr, k, &b[k], &l[k]);
    *ret_b = b;
    *ret_l = l;
    return rc;
}

static void blobs_free(unsigned char **b, size_t *l, int n)
{
    for (int k = 0; b && k < n; k++)
        free(b[k]);
    free(b);
    free(l);
}

/* Root sends member k its blob b[k] (root's own stays in b[root]); the others receive theirs
 * into *ret (malloc'd). */
static int scatter_blobs(struct tm_rank *me, struct tm_commref *cr, int root, unsigned char **b,
                         const size_t *l, unsigned char **ret, size_t *ret_n)
{
    if (cr->rank != root) return recv_blob(me, cr, root, ret, ret_n);
    int rc = 0;
    for (int k = 0; k < cr->c->size && rc == 0; k++)
        if (k != root) rc = send_blob(me, cr, k, b[k], l[k]);
    *ret = NULL;
    *ret_n = 0;
    return rc;
}

/* Root's bytes to every member (the others' into *ret, malloc'd). */
static int bcast_blob(struct tm_rank *me, struct tm_commref *cr, int root, const void *p,
                      size_t len, unsigned char **ret, size_t *ret_n)
{
    if (cr->rank != root) return recv_blob(me, cr, root, ret, ret_n);
    int rc = 0;
    for (int k = 0; k < cr->c->size && rc == 0; k++)
        if (k != root) rc = send_blob(me, cr, k, p, len);
    *ret = NULL;
    *ret_n = 0;
    return rc;
}

/* acc = in[0] op ... op in[n-1] (coll_xjob_int.h), combined right to left so that a
 * non-commutative op keeps rank order (tm_opref_apply: inout = in op inout). */
int tm_xcoll_reduce_blocks(const struct tm_cargs *a, unsigned char **in, const size_t *l, int n,
                           size_t count, void *acc)
{
    const struct tm_type *t = a->rtype;
    size_t bytes = count * t->psize;
    for (int k = 0; k < n; k++)
        if (l[k] != bytes) return -EMSGSIZE;
    void *mem, *tmp = typed_new(count, t, &mem);
    if (!tmp) return -ENOMEM;
    int rc = unpack(acc, count, t, in[n - 1], bytes);
    for (int k = n - 2; k >= 0 && rc == 0; k--) {
        rc = unpack(tmp, count, t, in[k], bytes);
        if (rc == 0 && count) tm_opref_apply(&a->op, tmp, acc, count, t, a->dth);
    }
    free(mem);
    return rc;
}

static int x_barrier(struct tm_rank *me, struct tm_commref *cr)
{
    unsigned char **b, *got = NULL, *mine = malloc(1);
    size_t *l, gn = 0;
    if (!mine) return -ENOMEM;
    int rc = gather_blobs(me, cr, 0, mine, 0, &b, &l);
    if (rc == 0) rc = scatter_blobs(me, cr, 0, b, l, &got, &gn);
    blobs_free(b, l, cr->c->size);
    free(got);
    return rc;
}

static int x_bcast(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a)
{
    size_t len = 0, gn = 0;
    unsigned char *mine = NULL, *got = NULL;
    if (cr->rank == a->root && !(mine = pack(a->rbuf, (size_t)a->rcount, a->rtype, &len)))
        return -ENOMEM;
    int rc = bcast_blob(me, cr, a->root, mine, len, &got, &gn);
    if (rc == 0 && cr->rank != a->root) rc = unpack(a->rbuf, (size_t)a->rcount, a->rtype, got, gn);
    free(mine);
    free(got);
    return rc;
}

/* Reduce (root >= 0) and Allreduce (root -1: through member 0, then to every member). */
static int x_reduce(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a)
{
    int root = a->root < 0 ? 0 : a->root, n = cr->c->size;
    size_t len, gn = 0;
    unsigned char **b, *got = NULL, *mine = pack(a->sbuf, a->count, a->rtype, &len);
    size_t *l;
    if (!mine) return -ENOMEM;
    int rc = gather_blobs(me, cr, root, mine, len, &b, &l);
    if (rc == 0 && cr->rank == root) rc = tm_xcoll_reduce_blocks(a, b, l, n, a->count, a->rbuf);
    blobs_free(b, l, n);
    if (a->root >= 0) return rc;
    /* every member's result: member 0's */
    unsigned char *res = NULL;
    if (rc == 0 && cr->rank == 0 && !(res = pack(a->rbuf, a->count, a->rtype, &len))) rc = -ENOMEM;
    if (rc == 0) rc = bcast_blob(me, cr, 0, res, len, &got, &gn);
    if (rc == 0 && cr->rank != 0) rc = unpack(a->rbuf, a->count, a->rtype, got, gn);
    free(res);
    free(got);
    return rc;
}

static int x_gather(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a)
{
    int n = cr->c->size, root = a->root;
    size_t len = 0, cnt;
    const struct tm_type *t;
    unsigned char **b, *mine;
    size_t *l;
    /* no send type: MPI_IN_PLACE at the root, whose block is in place already */
    if (a->stype) {
        const void *p = tm_cblk_in(a, 0, &cnt, &t);
        mine = pack(p, cnt, t, &len);
    } else {
        mine = malloc(1);
    }
    if (!mine) return -ENOMEM;
    int rc = gather_blobs(me, cr, root, mine, len, &b, &l);
    for (int k = 0; rc == 0 && cr->rank == root && k < n; k++) {
        if (k == root && !a->stype) continue;
        void *out = tm_cblk_out(a, k, &cnt, &t);
        rc = unpack(out, cnt, t, b[k], l[k]);
    }
    blobs_free(b, l, n);
    return rc;
}

static int x_scatter(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a)
{
    int n = cr->c->size, root = a->root, rc = 0;
    size_t cnt, gn = 0;
    const struct tm_type *t;
    unsigned char **b = NULL, *got = NULL;
    size_t *l = NULL;
    if (cr->rank == root) {
        b = calloc((size_t)n, sizeof *b);
        l = calloc((size_t)n, sizeof *l);
        if (!b || !l) rc = -ENOMEM;
        for (int k = 0; rc == 0 && k < n; k++) {
            const void *p = tm_cblk_in(a, k, &cnt, &t);
            if (!(b[k] = pack(p, cnt, t, &l[k]))) rc = -ENOMEM;
        }
    }
    if (rc == 0) rc = scatter_blobs(me, cr, root, b, l, &got, &gn);
    /* no receive type: MPI_IN_PLACE at the root */
    if (rc == 0 && a->rtype) {
        void *out = tm_cblk_out(a, 0, &cnt, &t);
        rc =
            cr->rank == root ? unpack(out, cnt, t, b[root], l[root]) : unpack(out, cnt, t, got, gn);
    }
    blobs_free(b, l, n);
    free(got);
    return rc;
}

/* n lengths (64-bit) then the blocks: one message with every block of a member. */
static unsigned char *bundle(unsigned char **blk, const size_t *bl, int n, size_t *ret_len)
{
    size_t len = sizeof(uint64_t) * (size_t)n;
    for (int k = 0; k < n; k++)
        len += bl[k];
    unsigned char *b = malloc(len), *p = b + sizeof(uint64_t) * (size_t)n;
    if (!b) return NULL;
    for (int k = 0; k < n; k++) {
        uint64_t v = bl[k];
        memcpy(b + sizeof v * (size_t)k, &v, sizeof v);
        if (bl[k]) memcpy(p, blk[k], bl[k]);
        p += bl[k];
    }
    *ret_len = len;
    return b;
}

/* Block k of a bundle: its start and length, or -EPROTO. */
static int unbundle(const unsigned char *b, size_t len, int n, int k, const unsigned char **ret,
                    size_t *ret_n)
{
    size_t head = sizeof(uint64_t) * (size_t)n, off = head;
    if (len < head) return -EPROTO;
    for (int j = 0; j <= k; j++) {
        uint64_t v;
        memcpy(&v, b + sizeof v * (size_t)j, sizeof v);
        if (v > len - off) return -EPROTO;
        if (j == k) {
            *ret = b + off;
            *ret_n = (size_t)v;
            return 0;
        }
        off += (size_t)v;
    }
    return -EPROTO;
}

static int x_allgather(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a)
{
    int n = cr->c->size;
    size_t len = 0, cnt, gn = 0;
    const struct tm_type *t;
    /* no send type: MPI_IN_PLACE, the member's block is in its receive buffer */
    const void *p = a->stype ? tm_cblk_in(a, 0, &cnt, &t) : tm_cblk_out(a, cr->rank, &cnt, &t);
    unsigned char **b, *all = NULL, *got = NULL, *mine = pack(p, cnt, t, &len);
    size_t *l, alen = 0;
    if (!mine) return -ENOMEM;
    int rc = gather_blobs(me, cr, 0, mine, len, &b, &l);
    if (rc == 0 && cr->rank == 0 && !(all = bundle(b, l, n, &alen))) rc = -ENOMEM;
    blobs_free(b, l, n);
    if (rc == 0) rc = bcast_blob(me, cr, 0, all, alen, &got, &gn);
    const unsigned char *src = cr->rank == 0 ? all : got;
    size_t slen = cr->rank == 0 ? alen : gn;
    for (int k = 0; rc == 0 && k < n; k++) {
        const unsigned char *bk = NULL;
        size_t bn = 0;
        rc = unbundle(src, slen, n, k, &bk, &bn);
        if (rc == 0) {
            void *out = tm_cblk_out(a, k, &cnt, &t);
            rc = unpack(out, cnt, t, bk, bn);
        }
    }
    free(all);
    free(got);
    return rc;
}

/* Every member bundles its n blocks to member 0, which bundles for each member the blocks
 * meant for it. */
static int x_alltoall(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a)
{
    int n = cr->c->size, rc = 0;
    size_t cnt, len = 0, gn = 0;
    const struct tm_type *t;
    unsigned char **blk = calloc((size_t)n, sizeof *blk), *mine = NULL, *got = NULL;
    size_t *bl = calloc((size_t)n, sizeof *bl);
    if (!blk || !bl) rc = -ENOMEM;
    for (int k = 0; rc == 0 && k < n; k++) {
        const void *p = tm_cblk_in(a, k, &cnt, &t);
        if (!(blk[k] = pack(p, cnt, t, &bl[k]))) rc = -ENOMEM;
    }
    if (rc == 0 && !(mine = bundle(blk, bl, n, &len))) rc = -ENOMEM;
    blobs_free(blk, bl, n);
    if (rc) {
        free(mine);
        return rc;
    }
    unsigned char **b, **out = NULL;
    size_t *l, *ol = NULL;
    rc = gather_blobs(me, cr, 0, mine, len, &b, &l);
    if (rc == 0 && cr->rank == 0) {
        out = calloc((size_t)n, sizeof *out);
        ol = calloc((size_t)n, sizeof *ol);
        unsigned char **piece = calloc((size_t)n, sizeof *piece);
        size_t *pl = calloc((size_t)n, sizeof *pl);
        if (!out || !ol || !piece || !pl) rc = -ENOMEM;
        for (int d = 0; rc == 0 && d < n; d++) {
            for (int s = 0; rc == 0 && s < n; s++) {
                const unsigned char *bk = NULL;
                rc = unbundle(b[s], l[s], n, d, &bk, &pl[s]);
                piece[s] = (unsigned char *)bk;
            }
            if (rc == 0 && !(out[d] = bundle(piece, pl, n, &ol[d]))) rc = -ENOMEM;
        }
        free(piece);
        free(pl);
    }
    blobs_free(b, l, n);
    if (rc == 0) rc = scatter_blobs(me, cr, 0, out, ol, &got, &gn);
    const unsigned char *src = cr->rank == 0 ? (out ? out[0] : NULL) : got;
    size_t slen = cr->rank == 0 ? (ol ? ol[0] : 0) : gn;
    for (int k = 0; rc == 0 && k < n; k++) {
        const unsigned char *bk = NULL;
        size_t bn = 0;
        rc = unbundle(src, slen, n, k, &bk, &bn);
        if (rc == 0) {
            void *o = tm_cblk_out(a, k, &cnt, &t);
            rc = unpack(o, cnt, t, bk, bn);
        }
    }
    blobs_free(out, ol, cr->rank == 0 ? n : 0);
    free(got);
    return rc;
}

/* Reduce_scatter(_block): the whole reduction at member 0, then each member's block. */
static int x_reduce_scatter(struct tm_rank *me, struct tm_commref *cr, int kind, struct tm_cargs *a)
{
    int n = cr->c->size;
    const struct tm_type *t = a->rtype;
    size_t len, gn = 0;
    unsigned char **b, *got = NULL, *mine = pack(a->sbuf, a->count, t, &len);
    size_t *l;
    if (!mine) return -ENOMEM;
    int rc = gather_blobs(me, cr, 0, mine, len, &b, &l);
    unsigned char **part = NULL;
    size_t *pl = NULL;
    if (rc == 0 && cr->rank == 0) {
        void *mem, *acc = typed_new(a->count, t, &mem);
        part = calloc((size_t)n, sizeof *part);
        pl = calloc((size_t)n, sizeof *pl);
        rc = !acc || !part || !pl ? -ENOMEM : tm_xcoll_reduce_blocks(a, b, l, n, a->count, acc);
        size_t off = 0;
        for (int k = 0; rc == 0 && k < n; k++) {
            size_t cnt =
                kind == MPIX_COLL_REDUCE_SCATTER ? (size_t)a->rcounts[k] : (size_t)a->rcount;
            if (off + cnt > a->count) rc = -EPROTO;
            if (rc == 0 && !(part[k] = pack(tm_dt_at(acc, off, t), cnt, t, &pl[k]))) rc = -ENOMEM;
            off += cnt;
        }
        free(mem);
    }
    blobs_free(b, l, n);
    if (rc == 0) rc = scatter_blobs(me, cr, 0, part, pl, &got, &gn);
    if (rc == 0)
        rc = cr->rank == 0 ? unpack(a->rbuf, (size_t)a->rcount, t, part[0], pl[0])
                           : unpack(a->rbuf, (size_t)a->rcount, t, got, gn);
    blobs_free(part, pl, cr->rank == 0 ? n : 0);
    free(got);
    return rc;
}

/* Scan and Exscan: member 0 computes every prefix in rank order. */
static int x_scan(struct tm_rank *me, struct tm_commref *cr, int ex, struct tm_cargs *a)
{
    int n = cr->c->size;
    const struct tm_type *t = a->rtype;
    size_t len, gn = 0, bytes = a->count * t->psize;
    unsigned char **b, *got = NULL, *mine = pack(a->sbuf, a->count, t, &len);
    size_t *l;
    if (!mine) return -ENOMEM;
    int rc = gather_blobs(me, cr, 0, mine, len, &b, &l);
    unsigned char **out = NULL;
    size_t *ol = NULL;
    if (rc == 0 && cr->rank == 0) {
        void *m1, *m2, *cur = typed_new(a->count, t, &m1), *nxt = typed_new(a->count, t, &m2);
        out = calloc((size_t)n, sizeof *out);
        ol = calloc((size_t)n, sizeof *ol);
        if (!cur || !nxt || !out || !ol) rc = -ENOMEM;
        for (int k = 0; rc == 0 && k < n; k++)
            if (l[k] != bytes) rc = -EMSGSIZE;
        if (rc == 0) rc = unpack(cur, a->count, t, b[0], bytes); /* prefix of member 0 */
        if (rc == 0 && !(out[0] = ex ? malloc(1) : pack(cur, a->count, t, &ol[0]))) rc = -ENOMEM;
        for (int k = 1; rc == 0 && k < n; k++) {
            if (ex && !(out[k] = pack(cur, a->count, t, &ol[k]))) rc = -ENOMEM;
            if (rc == 0) rc = unpack(nxt, a->count, t, b[k], bytes);
            if (rc == 0 && a->count) tm_opref_apply(&a->op, cur, nxt, a->count, t, a->dth);
            if (rc == 0 && !ex && !(out[k] = pack(nxt, a->count, t, &ol[k]))) rc = -ENOMEM;
            void *sw = cur;
            cur = nxt;
            nxt = sw;
        }
        free(m1);
        free(m2);
    }
    blobs_free(b, l, n);
    if (rc == 0) rc = scatter_blobs(me, cr, 0, out, ol, &got, &gn);
    const unsigned char *src = cr->rank == 0 ? (out ? out[0] : NULL) : got;
    size_t slen = cr->rank == 0 ? (ol ? ol[0] : 0) : gn;
    /* Exscan at member 0: its receive buffer is undefined, left alone */
    if (rc == 0 && slen) rc = unpack(a->rbuf, a->count, t, src, slen);
    blobs_free(out, ol, cr->rank == 0 ? n : 0);
    free(got);
    return rc;
}

int tm_xcoll_run(struct tm_rank *me, struct tm_commref *cr, int kind, struct tm_cargs *a)
{
    switch (kind) {
    case MPIX_COLL_BARRIER:
        return x_barrier(me, cr);
    case MPIX_COLL_BCAST:
        return x_bcast(me, cr, a);
    case MPIX_COLL_REDUCE:
    case MPIX_COLL_ALLREDUCE:
        return x_reduce(me, cr, a);
    case MPIX_COLL_GATHER:
    case MPIX_COLL_GATHERV:
        return x_gather(me, cr, a);
    case MPIX_COLL_SCATTER:
    case MPIX_COLL_SCATTERV:
        return x_scatter(me, cr, a);
    case MPIX_COLL_ALLGATHER:
    case MPIX_COLL_ALLGATHERV:
        return x_allgather(me, cr, a);
    case MPIX_COLL_ALLTOALL:
    case MPIX_COLL_ALLTOALLV:
    case MPIX_COLL_ALLTOALLW:
        return x_alltoall(me, cr, a);
    case MPIX_COLL_REDUCE_SCATTER:
    case MPIX_COLL_REDUCE_SCATTER_BLOCK:
        return x_reduce_scatter(me, cr, kind, a);
    case MPIX_COLL_SCAN:
    case MPIX_COLL_EXSCAN:
        return x_scan(me, cr, kind == MPIX_COLL_EXSCAN, a);
    default:
        return -ENOSYS;
    }
}

/* ---- Comm_dup and Comm_split ---- */

struct xmake {
    int ctx, reuse, n, nlocal;
    const int32_t *world;
    const struct tm_comm *parent; /* dup: its topology goes along */
};

static struct tm_comm *xmake(void *p)
{
    struct xmake *m = p;
    int32_t *map = malloc(sizeof *map * (size_t)m->n);
    if (!map) return NULL;
    memcpy(map, m->world, sizeof *map * (size_t)m->n);
    struct tm_comm *c = tm_comm_new(m->ctx, m->reuse, m->n, map, m->nlocal);
    if (!c) {
        free(map);
        return NULL;
    }
    c->xjob = tm_xjob_mask(map, m->n) != 0;
    if (m->parent) tm_topo_dup_hook(c, m->parent);
    return c;
}

/* This host's copy of the communicator (ctx, members world[0..n)). */
static struct tm_comm *attach(struct tm_rank *me, int ctx, int reuse, const int32_t *world, int n,
                              const struct tm_comm *parent)
{
    struct xmake m = {ctx, reuse, n, tm_ctx_nlocal(me, world, n), world, parent};
    /* with ranks of the other job: its receives fail when that job ends (net/xjob.h) */
    tm_xjob_note(me->job, &ctx, 1, tm_xjob_mask(world, n));
    return tm_ctx_meet(me->job, ctx, world[0], m.nlocal, xmake, &m);
}

static int32_t *world_list(const struct tm_comm *c)
{
    int32_t *v = malloc(sizeof *v * ((size_t)c->size + 1));
    if (v)
        for (int i = 0; i < c->size; i++)
            v[i] = tm_comm_world_rank(c, i);
    return v;
}

int tm_xcoll_dup(struct tm_rank *me, struct tm_commref *cr, struct tm_comm **ret)
{
    struct tm_comm *pc = cr->c;
    int32_t *world = world_list(pc);
    if (!world) return -ENOMEM;
    /* member 0 takes the id (the agent's, so neither job has it), everyone learns it */
    int32_t h[2] = {0, 0};
    if (cr->rank == 0) {
        int reuse = 0, ctx = 0;
        h[0] = tm_ctx_for(me, world, pc->size, NULL, 0, 1, &ctx, &reuse) < 0 ? -1 : 0;
        h[1] = ctx;
    }
    unsigned char *got = NULL;
    size_t gn = 0;
    int rc = bcast_blob(me, cr, 0, h, sizeof h, &got, &gn);
    if (rc == 0 && cr->rank != 0) {
        if (gn == sizeof h)
            memcpy(h, got, sizeof h);
        else
            rc = -EPROTO;
    }
    free(got);
    if (rc == 0 && h[0] < 0) rc = -ENOSPC;
    struct tm_comm *nc = rc == 0 ? attach(me, h[1], 0, world, pc->size, pc) : NULL;
    free(world);
    if (rc == 0 && !nc) rc = -ENOMEM;
    *ret = nc;
    return rc;
}

struct xsplit {
    int32_t color, key, rank;
};

static int xsplit_cmp(const void *a, const void *b)
{
    const struct xsplit *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int tm_xcoll_split(struct tm_rank *me, struct tm_commref *cr, int color, int key,
                   struct tm_comm **ret, int *ret_rank)
{
    struct tm_comm *pc = cr->c;
    int n = pc->size;
    *ret = NULL;
    *ret_rank = MPI_UNDEFINED;
    /* every member's (color, key) at member 0, which takes an id per color; then the table
     * (color, key, id, reuse) of every member to everyone */
    int32_t mine[2] = {color, key};
    unsigned char **b, *mb = malloc(sizeof mine), *got = NULL;
    size_t *l, gn = 0;
    if (!mb) return -ENOMEM;
    memcpy(mb, mine, sizeof mine);
    int rc = gather_blobs(me, cr, 0, mb, sizeof mine, &b, &l);
    int32_t *world = world_list(pc), *tab = NULL, *members = NULL;
    size_t tlen = sizeof *tab * 4 * (size_t)n;
    if (rc == 0 && !world) rc = -ENOMEM;
    if (cr->rank == 0) {
        tab = calloc(4 * (size_t)n, sizeof *tab);
        members = malloc(sizeof *members * (size_t)n);
        if (!tab || !members) {
            blobs_free(b, l, n);
            free(tab);
            free(members);
            free(world);
            return -ENOMEM;
        }
        for (int k = 0; rc == 0 && k < n; k++) {
            if (l[k] != sizeof mine) rc = -EPROTO;
            if (rc == 0) memcpy(&tab[4 * k], b[k], sizeof mine);
        }
        for (int k = 0; rc == 0 && k < n; k++) {
            int c = tab[4 * k], first = -1;
            if (c == MPI_UNDEFINED) continue;
            for (int j = 0; j < k && first < 0; j++)
                if (tab[4 * j] == c) first = j;
            if (first >= 0) {
                tab[4 * k + 2] = tab[4 * first + 2];
                tab[4 * k + 3] = tab[4 * first + 3];
                continue;
            }
            int m = 0, reuse = 0, ctx = 0;
            for (int j = k; j < n; j++)
                if (tab[4 * j] == c) members[m++] = world[j];
            /* a group of this host's ranks only: one of its one-node ids (reuse); one with the
             * other job's ranks: the agent's */
            if (tm_ctx_for(me, members, m, NULL, 0, 1, &ctx, &reuse) < 0) rc = -ENOSPC;
            tab[4 * k + 2] = ctx;
            tab[4 * k + 3] = reuse;
        }
        free(members);
        /* an error at member 0 still sends the table, without ids: every member fails alike */
        if (rc)
            for (int k = 0; k < n; k++)
                tab[4 * k + 2] = 0;
    }
    blobs_free(b, l, n);
    int brc = bcast_blob(me, cr, 0, tab, tlen, &got, &gn);
    if (!rc) rc = brc;
    if (rc == 0 && cr->rank != 0) {
        if (gn == tlen) {
            tab = (int32_t *)got;
            got = NULL;
        } else {
            rc = -EPROTO;
        }
    }
    free(got);
    if (rc == 0 && color != MPI_UNDEFINED && tab[4 * cr->rank + 2] == 0) rc = -ENOSPC;
    struct xsplit *g = NULL;
    int32_t *gw = NULL;
    int m = 0, nrank = MPI_UNDEFINED;
    if (rc == 0 && color != MPI_UNDEFINED) {
        g = malloc(sizeof *g * (size_t)n);
        gw = malloc(sizeof *gw * (size_t)n);
        if (!g || !gw) rc = -ENOMEM;
        for (int k = 0; rc == 0 && k < n; k++)
            if (tab[4 * k] == color) g[m++] = (struct xsplit){color, tab[4 * k + 1], k};
        if (rc == 0) qsort(g, (size_t)m, sizeof *g, xsplit_cmp);
        for (int i = 0; rc == 0 && i < m; i++) {
            gw[i] = world[g[i].rank];
            if (g[i].rank == cr->rank) nrank = i;
        }
        struct tm_comm *nc =
            rc == 0 ? attach(me, tab[4 * cr->rank + 2], tab[4 * cr->rank + 3], gw, m, NULL) : NULL;
        if (rc == 0 && !nc) rc = -ENOMEM;
        *ret = nc;
        *ret_rank = nc ? nrank : MPI_UNDEFINED;
    }
    free(g);
    free(gw);
    free(tab);
    free(world);
    return rc;
}
