/* coll_net_move.c — the leaders' share of Gather(v), Scatter(v), Allgather(v), Alltoall(v,w),
 * Reduce_scatter(_block), Scan and Exscan across nodes (coll_net_move.h, coll_net.h).
 *
 * Each function runs on one node's leader, with every local member's arguments in place.  Data
 * between two leaders goes as one *packed* message per pair and round (below): the blocks of
 * every local member the peer needs, in member order.  Blocks between members of one node are
 * copied straight, as on one node.  Every leader knows from its own members' arguments what
 * the others send it (MPI requires matching counts), so a receive is sized before it is posted,
 * and the lengths in a message's header are checked against what arrived, never trusted.
 *
 * Algorithms (simple, one message per pair at most, documented in docs/COLLECTIVES.md):
 *   Gather    every other leader sends its members' inputs to the root's leader;
 *   Scatter   the root's leader sends each leader its members' blocks;
 *   Allgather every leader sends its members' inputs to every other leader;
 *   Alltoall  every leader sends every other leader the blocks its members address to the
 *             peer's members (pairwise exchange of per-node packed blocks);
 *   Reduce_scatter  every leader sends each peer its node's partial of the peer's members'
 *             blocks (or, for a non-commutative op on interleaved nodes, every member's input
 *             for those blocks), and folds what it gets for its own members in rank order;
 *   Scan, Exscan    nodes holding runs of consecutive ranks pass the running prefix along a
 *             chain in rank order; interleaved nodes send their inputs to every node with a
 *             higher rank, which walks all ranks below its last member in order.
 * A user op runs only on the leader's thread with the leader's own handle (userop.h). */
#include "coll_net_move.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll_net.h"

#define STEP_MOVE 0  /* the packed message between two leaders */
#define STEP_CHAIN 1 /* Scan's running prefix */

/* ---- packed messages ----
 * A header of nb 64-bit byte lengths, then the blocks, each at a 16-byte boundary so that a
 * reduction can read a received block in place with its type's alignment. */

#define PK_ALIGN ((size_t)16)

struct pk {
    unsigned char *buf; /* NULL: no message (allocation failed, or not received) */
    size_t bytes;
    size_t nb;
    size_t *off; /* nb block offsets */
};

static size_t pk_up(size_t b)
{
    return (b + PK_ALIGN - 1) & ~(PK_ALIGN - 1);
}

/* Offsets of nb blocks of lengths len (off may be NULL); the message's total bytes. */
static size_t pk_layout(size_t nb, const uint64_t *len, size_t *off)
{
    size_t at = pk_up(nb * sizeof(uint64_t));
    for (size_t i = 0; i < nb; i++) {
        if (off) off[i] = at;
        at += pk_up((size_t)len[i]);
    }
    return at;
}

static void pk_free(struct pk *p)
{
    free(p->buf);
    free(p->off);
    *p = (struct pk){0};
}

/* An outgoing message of nb blocks of lengths len, header written; blocks via pk_at. */
static int pk_new(struct pk *p, size_t nb, const uint64_t *len)
{
    *p = (struct pk){.nb = nb};
    p->off = malloc(sizeof *p->off * (nb ? nb : 1));
    if (p->off) p->bytes = pk_layout(nb, len, p->off);
    if (p->off) p->buf = malloc(p->bytes);
    if (!p->buf) {
        pk_free(p);
        return -ENOMEM;
    }
    if (nb) memcpy(p->buf, len, nb * sizeof(uint64_t));
    return 0;
}

static void *pk_at(const struct pk *p, size_t i)
{
    return p->buf + p->off[i];
}

static size_t pk_len(const struct pk *p, size_t i)
{
    uint64_t l;
    memcpy(&l, p->buf + i * sizeof l, sizeof l);
    return (size_t)l;
}

/* Parses a received message of bytes into p: -EPROTO unless it holds nb blocks within bytes. */
static int pk_parse(struct pk *p, size_t nb)
{
    size_t hdr = pk_up(nb * sizeof(uint64_t));
    if (p->bytes < hdr) return -EPROTO;
    p->nb = nb;
    p->off = malloc(sizeof *p->off * (nb ? nb : 1));
    if (!p->off) return -ENOMEM;
    size_t at = hdr;
    for (size_t i = 0; i < nb; i++) {
        size_t l = pk_len(p, i);
        if (l > p->bytes - at) return -EPROTO;
        p->off[i] = at;
        at += pk_up(l);
        if (at > p->bytes) at = p->bytes; /* the last block needs no padding */
    }
    return 0;
}

/* ---- one round's messages ---- */

struct mv {
    struct tm_cnet *x;
    int g;
    struct tm_request *req; /* [g]: this leader's sends to each group */
    unsigned char *busy;    /* [g]: req[i] was started */
    int err;                /* first error */
};

static void mv_note(struct mv *m, int err)
{
    if (err < 0 && !m->err) m->err = err;
}

static int mv_init(struct mv *m, struct tm_cnet *x)
{
    *m = (struct mv){.x = x, .g = x->h->ngroups};
    m->req = malloc(sizeof *m->req * (size_t)m->g);
    m->busy = calloc((size_t)m->g, 1);
    if (!m->req || !m->busy) {
        free(m->req);
        free(m->busy);
        return -ENOMEM;
    }
    return 0;
}

/* Starts sending p (or, if p holds no message, an empty one, which the peer rejects as
 * -EPROTO instead of waiting forever) to group dst.  p stays untouched until mv_finish. */
static void mv_send(struct mv *m, int dst, const struct pk *p)
{
    int r = tm_cnet_isend(m->x, dst, STEP_MOVE, p->buf, p->buf ? p->bytes : 0, &m->req[dst]);
    if (r < 0) {
        mv_note(m, r);
        return;
    }
    m->busy[dst] = 1;
}

/* Receives group src's message of nb blocks, expected lengths want, into p.  On any failure
 * p->buf is NULL and the error is noted; the message is consumed all the same. */
static void mv_recv(struct mv *m, int src, size_t nb, const uint64_t *want, struct pk *p)
{
    *p = (struct pk){0};
    size_t cap = pk_layout(nb, want, NULL);
    p->buf = malloc(cap ? cap : 1);
    if (!p->buf) {
        (void)tm_cnet_recv(m->x, src, STEP_MOVE, NULL, 0, NULL); /* drain: the sender waits */
        mv_note(m, -ENOMEM);
        return;
    }
    int r = tm_cnet_recv(m->x, src, STEP_MOVE, p->buf, cap, &p->bytes);
    if (!r) r = pk_parse(p, nb);
    if (r < 0) {
        mv_note(m, r);
        pk_free(p);
    }
}

/* Waits for every send; returns the round's first error. */
static int mv_finish(struct mv *m)
{
    for (int i = 0; i < m->g; i++)
        if (m->busy[i]) mv_note(m, tm_cnet_wait(m->x, &m->req[i]));
    free(m->req);
    free(m->busy);
    return m->err;
}

static uint64_t *lens(size_t n)
{
    return malloc(sizeof(uint64_t) * (n ? n : 1));
}

/* Copies a received block of len bytes into (dst, n, t); 1 if it did not fit (truncation). */
static int put(void *dst, size_t n, const struct tm_type *t, const void *src, size_t len)
{
    size_t cap = tm_dt_span(n, t);
    if (len && dst != src) memcpy(dst, src, len < cap ? len : cap);
    return len > cap;
}

static int trunc_err(int trunc)
{
    return trunc ? -EMSGSIZE : 0;
}

/* Largest group, for scratch arrays. */
static int max_group(const struct tm_chier *h)
{
    int m = 0;
    for (int i = 0; i < h->ngroups; i++)
        if (h->g[i].n > m) m = h->g[i].n;
    return m;
}

/* A member's input block of Gather and Allgather: with MPI_IN_PLACE (root of Gather, any
 * member of Allgather) its own block of its output. */
static const void *gather_input(const struct tm_cargs *a, int rank, size_t *ret_len)
{
    if (a->in_place) {
        size_t n;
        const struct tm_type *t;
        const void *p = tm_cblk_out(a, rank, &n, &t);
        *ret_len = tm_dt_span(n, t);
        return p;
    }
    *ret_len = tm_dt_span((size_t)a->scount, a->stype);
    return a->sbuf;
}

/* Packs the inputs of every member of this node (member order) into p. */
static int pack_inputs(struct tm_cnet *x, struct pk *p)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    uint64_t *len = lens((size_t)mine->n);
    if (!len) return -ENOMEM;
    const void **src = malloc(sizeof *src * (size_t)mine->n);
    if (!src) {
        free(len);
        return -ENOMEM;
    }
    for (int i = 0; i < mine->n; i++) {
        size_t l;
        src[i] = gather_input(tm_cnet_arg(x, mine->members[i]), mine->members[i], &l);
        len[i] = l;
    }
    int r = pk_new(p, (size_t)mine->n, len);
    for (int i = 0; !r && i < mine->n; i++)
        if (len[i]) memcpy(pk_at(p, (size_t)i), src[i], (size_t)len[i]);
    free(src);
    free(len);
    return r;
}

/* ---- Gather ---- */

int tm_hier_gather(struct tm_cnet *x)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    int root = tm_cnet_arg(x, mine->members[0])->root, rg = x->h->group_of[root];
    struct mv m;
    if (mv_init(&m, x) < 0) return -ENOMEM;
    if (x->gi != rg) {
        struct pk p;
        mv_note(&m, pack_inputs(x, &p));
        mv_send(&m, rg, &p);
        int err = mv_finish(&m);
        pk_free(&p);
        return err;
    }
    const struct tm_cargs *ra = tm_cnet_arg(x, root);
    int trunc = 0;
    for (int i = 0; i < mine->n; i++) {
        int k = mine->members[i];
        const struct tm_cargs *s = tm_cnet_arg(x, k);
        if (k == root && ra->in_place) continue;
        size_t dn;
        const struct tm_type *dt;
        void *dst = tm_cblk_out(ra, k, &dn, &dt);
        trunc |= tm_dt_copy(dst, dn, dt, s->sbuf, (size_t)s->scount, s->stype);
    }
    uint64_t *want = lens((size_t)max_group(x->h));
    if (!want) mv_note(&m, -ENOMEM);
    for (int gi = 0; want && gi < x->h->ngroups; gi++) {
        if (gi == rg) continue;
        const struct tm_cgroup *g = &x->h->g[gi];
        size_t dn;
        const struct tm_type *dt;
        for (int i = 0; i < g->n; i++) {
            (void)tm_cblk_out(ra, g->members[i], &dn, &dt);
            want[i] = tm_dt_span(dn, dt);
        }
        struct pk p;
        mv_recv(&m, gi, (size_t)g->n, want, &p);
        for (int i = 0; p.buf && i < g->n; i++) {
            void *dst = tm_cblk_out(ra, g->members[i], &dn, &dt);
            trunc |= put(dst, dn, dt, pk_at(&p, (size_t)i), pk_len(&p, (size_t)i));
        }
        pk_free(&p);
    }
    free(want);
    mv_note(&m, trunc_err(trunc));
    return mv_finish(&m);
}

/* ---- Scatter ---- */

int tm_hier_scatter(struct tm_cnet *x)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    int root = tm_cnet_arg(x, mine->members[0])->root, rg = x->h->group_of[root];
    int g = x->h->ngroups, trunc = 0;
    struct mv m;
    if (mv_init(&m, x) < 0) return -ENOMEM;
    if (x->gi != rg) {
        uint64_t *want = lens((size_t)mine->n);
        struct pk p = {0};
        if (!want) {
            (void)tm_cnet_recv(x, rg, STEP_MOVE, NULL, 0, NULL);
            mv_note(&m, -ENOMEM);
        } else {
            for (int i = 0; i < mine->n; i++) {
                const struct tm_cargs *d = tm_cnet_arg(x, mine->members[i]);
                want[i] = tm_dt_span((size_t)d->rcount, d->rtype);
            }
            mv_recv(&m, rg, (size_t)mine->n, want, &p);
        }
        for (int i = 0; p.buf && i < mine->n; i++) {
            const struct tm_cargs *d = tm_cnet_arg(x, mine->members[i]);
            trunc |= put(d->rbuf, (size_t)d->rcount, d->rtype, pk_at(&p, (size_t)i),
                         pk_len(&p, (size_t)i));
        }
        pk_free(&p);
        free(want);
        mv_note(&m, trunc_err(trunc));
        return mv_finish(&m);
    }
    const struct tm_cargs *ra = tm_cnet_arg(x, root);
    struct pk *out = calloc((size_t)g, sizeof *out);
    uint64_t *len = lens((size_t)max_group(x->h));
    if (!out || !len) mv_note(&m, -ENOMEM);
    for (int gi = 0; gi < g; gi++) {
        if (gi == rg) continue;
        const struct tm_cgroup *gr = &x->h->g[gi];
        struct pk none = {0}, *p = out ? &out[gi] : &none;
        if (len) {
            size_t n;
            const struct tm_type *t;
            for (int i = 0; i < gr->n; i++) {
                (void)tm_cblk_in(ra, gr->members[i], &n, &t);
                len[i] = tm_dt_span(n, t);
            }
            if (out) mv_note(&m, pk_new(p, (size_t)gr->n, len));
            for (int i = 0; p->buf && i < gr->n; i++)
                if (len[i])
                    memcpy(pk_at(p, (size_t)i), tm_cblk_in(ra, gr->members[i], &n, &t),
                           (size_t)len[i]);
        }
        mv_send(&m, gi, p); /* an empty message if packing failed: the peer must not wait */
    }
    for (int i = 0; i < mine->n; i++) {
        int k = mine->members[i];
        const struct tm_cargs *d = tm_cnet_arg(x, k);
        if (k == root && ra->in_place) continue;
        size_t n;
        const struct tm_type *t;
        const void *src = tm_cblk_in(ra, k, &n, &t);
        trunc |= tm_dt_copy(d->rbuf, (size_t)d->rcount, d->rtype, src, n, t);
    }
    mv_note(&m, trunc_err(trunc));
    int err = mv_finish(&m);
    for (int gi = 0; out && gi < g; gi++)
        pk_free(&out[gi]);
    free(out);
    free(len);
    return err;
}

/* ---- Allgather ---- */

int tm_hier_allgather(struct tm_cnet *x)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    const struct tm_cargs *lead = tm_cnet_arg(x, mine->members[0]);
    int g = x->h->ngroups, trunc = 0;
    struct mv m;
    if (mv_init(&m, x) < 0) return -ENOMEM;
    struct pk p;
    mv_note(&m, pack_inputs(x, &p));
    for (int gi = 0; gi < g; gi++)
        if (gi != x->gi) mv_send(&m, gi, &p);
    /* this node's blocks, member to member */
    for (int i = 0; i < mine->n; i++) {
        const struct tm_cargs *d = tm_cnet_arg(x, mine->members[i]);
        for (int j = 0; j < mine->n; j++) {
            int k = mine->members[j];
            if (j == i && d->in_place) continue;
            size_t dn, sl;
            const struct tm_type *dt;
            void *dst = tm_cblk_out(d, k, &dn, &dt);
            const void *src = gather_input(tm_cnet_arg(x, k), k, &sl);
            trunc |= put(dst, dn, dt, src, sl);
        }
    }
    uint64_t *want = lens((size_t)max_group(x->h));
    if (!want) mv_note(&m, -ENOMEM);
    for (int gi = 0; gi < g; gi++) {
        if (gi == x->gi) continue;
        const struct tm_cgroup *gr = &x->h->g[gi];
        struct pk in = {0};
        if (want) {
            size_t n;
            const struct tm_type *t;
            for (int j = 0; j < gr->n; j++) {
                (void)tm_cblk_out(lead, gr->members[j], &n, &t);
                want[j] = tm_dt_span(n, t);
            }
            mv_recv(&m, gi, (size_t)gr->n, want, &in);
        } else {
            (void)tm_cnet_recv(x, gi, STEP_MOVE, NULL, 0, NULL);
        }
        for (int j = 0; in.buf && j < gr->n; j++)
            for (int i = 0; i < mine->n; i++) {
                size_t dn;
                const struct tm_type *dt;
                void *dst = tm_cblk_out(tm_cnet_arg(x, mine->members[i]), gr->members[j], &dn, &dt);
                trunc |= put(dst, dn, dt, pk_at(&in, (size_t)j), pk_len(&in, (size_t)j));
            }
        pk_free(&in);
    }
    free(want);
    mv_note(&m, trunc_err(trunc));
    int err = mv_finish(&m);
    pk_free(&p);
    return err;
}

/* ---- Alltoall(v,w) ---- */

/* Blocks from this node's members (i) to group gr's members (k), i major. */
static int pack_alltoall(struct tm_cnet *x, const struct tm_cgroup *gr, struct pk *p)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    size_t nb = (size_t)mine->n * (size_t)gr->n;
    uint64_t *len = lens(nb);
    if (!len) return -ENOMEM;
    size_t n;
    const struct tm_type *t;
    for (int i = 0; i < mine->n; i++)
        for (int k = 0; k < gr->n; k++) {
            (void)tm_cblk_in(tm_cnet_arg(x, mine->members[i]), gr->members[k], &n, &t);
            len[(size_t)i * (size_t)gr->n + (size_t)k] = tm_dt_span(n, t);
        }
    int r = pk_new(p, nb, len);
    for (int i = 0; !r && i < mine->n; i++)
        for (int k = 0; k < gr->n; k++) {
            size_t b = (size_t)i * (size_t)gr->n + (size_t)k;
            const void *src = tm_cblk_in(tm_cnet_arg(x, mine->members[i]), gr->members[k], &n, &t);
            if (len[b]) memcpy(pk_at(p, b), src, (size_t)len[b]);
        }
    free(len);
    return r;
}

int tm_hier_alltoall(struct tm_cnet *x)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    int g = x->h->ngroups, trunc = 0;
    struct mv m;
    if (mv_init(&m, x) < 0) return -ENOMEM;
    struct pk *out = calloc((size_t)g, sizeof *out);
    if (!out) mv_note(&m, -ENOMEM);
    for (int gi = 0; gi < g; gi++) {
        if (gi == x->gi) continue;
        struct pk none = {0}, *p = out ? &out[gi] : &none;
        if (out) mv_note(&m, pack_alltoall(x, &x->h->g[gi], p));
        mv_send(&m, gi, p);
    }
    size_t sn, dn;
    const struct tm_type *st, *dt;
    for (int i = 0; i < mine->n; i++) {
        const struct tm_cargs *d = tm_cnet_arg(x, mine->members[i]);
        for (int j = 0; j < mine->n; j++) {
            const void *src =
                tm_cblk_in(tm_cnet_arg(x, mine->members[j]), mine->members[i], &sn, &st);
            void *dst = tm_cblk_out(d, mine->members[j], &dn, &dt);
            if (sn || dn) trunc |= tm_dt_copy(dst, dn, dt, src, sn, st);
        }
    }
    for (int gi = 0; gi < g; gi++) {
        if (gi == x->gi) continue;
        const struct tm_cgroup *gr = &x->h->g[gi];
        size_t nb = (size_t)gr->n * (size_t)mine->n;
        uint64_t *want = lens(nb);
        struct pk in = {0};
        if (!want) {
            (void)tm_cnet_recv(x, gi, STEP_MOVE, NULL, 0, NULL);
            mv_note(&m, -ENOMEM);
            continue;
        }
        /* the peer's member k to my member i: block k * mine->n + i */
        for (int k = 0; k < gr->n; k++)
            for (int i = 0; i < mine->n; i++) {
                (void)tm_cblk_out(tm_cnet_arg(x, mine->members[i]), gr->members[k], &dn, &dt);
                want[(size_t)k * (size_t)mine->n + (size_t)i] = tm_dt_span(dn, dt);
            }
        mv_recv(&m, gi, nb, want, &in);
        for (int k = 0; in.buf && k < gr->n; k++)
            for (int i = 0; i < mine->n; i++) {
                size_t b = (size_t)k * (size_t)mine->n + (size_t)i;
                void *dst = tm_cblk_out(tm_cnet_arg(x, mine->members[i]), gr->members[k], &dn, &dt);
                trunc |= put(dst, dn, dt, pk_at(&in, b), pk_len(&in, b));
            }
        pk_free(&in);
        free(want);
    }
    mv_note(&m, trunc_err(trunc));
    int err = mv_finish(&m);
    for (int gi = 0; out && gi < g; gi++)
        pk_free(&out[gi]);
    free(out);
    return err;
}

/* ---- Reduce_scatter(_block) ---- */

/* What a reduction of one round shares: the leader's op, type and handle, and where each
 * member's block starts in the vector (off[k], elements; off[n] = count). */
struct rs {
    const struct tm_cargs *lead;
    size_t ext;
    size_t *off;
};

static void rs_apply(const struct rs *r, const void *in, void *inout, size_t count)
{
    tm_opref_apply(&r->lead->op, in, inout, count, r->lead->rtype, r->lead->dth);
}

static size_t rs_len(const struct rs *r, int k)
{
    return r->off[k + 1] - r->off[k];
}

/* Partials combine in group order when that is rank order or the op commutes; otherwise
 * (non-commutative op, interleaved nodes) every member's input travels and the receiving
 * leader folds all of them in rank order. */
static int rs_by_group(const struct tm_cnet *x, const struct rs *r)
{
    return r->lead->op.commute || x->h->contiguous;
}

/* Units group gi sends for each peer member's block: its partial, or each member's input. */
static size_t rs_units(const struct tm_cnet *x, const struct rs *r, int gi)
{
    return rs_by_group(x, r) ? 1 : (size_t)x->h->g[gi].n;
}

/* The units this leader sends: *ret_acc holds the node's partial when it had to compute one,
 * in[m0] op (in[m1] op ...) in rank order. */
static int rs_my_units(struct tm_cnet *x, const struct rs *r, const void **unit,
                       unsigned char **ret_acc)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    *ret_acc = NULL;
    if (!rs_by_group(x, r) || mine->n == 1) {
        for (int i = 0; i < mine->n; i++)
            unit[i] = tm_cnet_arg(x, mine->members[i])->sbuf;
        return 0;
    }
    size_t span = r->lead->count * r->ext;
    unsigned char *acc = malloc(span);
    if (!acc) return -ENOMEM;
    memcpy(acc, tm_cnet_arg(x, mine->members[mine->n - 1])->sbuf, span);
    for (int i = mine->n - 2; i >= 0; i--)
        rs_apply(r, tm_cnet_arg(x, mine->members[i])->sbuf, acc, r->lead->count);
    unit[0] = acc;
    *ret_acc = acc;
    return 0;
}

/* Member i of this node (comm rank d): its block, res = c[0] op (c[1] op ... c[last]) over the
 * groups' partials or every rank's input. */
static void rs_fold(struct tm_cnet *x, const struct rs *r, const void *const *unit,
                    const struct pk *in, const int *pos, int i)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    int d = mine->members[i], by_group = rs_by_group(x, r);
    size_t cnt = rs_len(r, d), at = r->off[d] * r->ext;
    if (!cnt) return;
    unsigned char *res = tm_cnet_arg(x, d)->rbuf;
    int last = by_group ? x->h->ngroups - 1 : x->c->size - 1;
    for (int c = last; c >= 0; c--) {
        const void *src;
        if (by_group) {
            src = c == x->gi ? (const unsigned char *)unit[0] + at : pk_at(&in[c], (size_t)i);
        } else {
            int gc = x->h->group_of[c];
            src = gc == x->gi ? (const unsigned char *)tm_cnet_arg(x, c)->sbuf + at
                              : pk_at(&in[gc], (size_t)pos[c] * (size_t)mine->n + (size_t)i);
        }
        if (c == last)
            memcpy(res, src, cnt * r->ext);
        else
            rs_apply(r, src, res, cnt);
    }
}

int tm_hier_reduce_scatter(struct tm_cnet *x)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    int g = x->h->ngroups, n = x->c->size, mg = max_group(x->h);
    struct rs r = {.lead = tm_cnet_arg(x, mine->members[0])};
    r.ext = r.lead->rtype->extent;
    if (!r.lead->count || !r.ext) return 0; /* every leader sees the same total */
    struct mv m;
    if (mv_init(&m, x) < 0) return -ENOMEM;
    r.off = malloc(sizeof *r.off * (size_t)(n + 1));
    int *pos = malloc(sizeof *pos * (size_t)n);
    const void **unit = malloc(sizeof *unit * (size_t)mine->n);
    struct pk *out = calloc((size_t)g, sizeof *out), *in = calloc((size_t)g, sizeof *in);
    uint64_t *len = lens((size_t)mg * (size_t)mg);
    unsigned char *acc = NULL;
    if (!r.off || !pos || !unit || !out || !in || !len) mv_note(&m, -ENOMEM);
    if (!m.err) {
        r.off[0] = 0;
        for (int k = 0; k < n; k++)
            r.off[k + 1] =
                r.off[k] + (r.lead->rcounts ? (size_t)r.lead->rcounts[k] : (size_t)r.lead->rcount);
        for (int gi = 0; gi < g; gi++)
            for (int i = 0; i < x->h->g[gi].n; i++)
                pos[x->h->g[gi].members[i]] = i;
        mv_note(&m, rs_my_units(x, &r, unit, &acc));
    }
    int ok = !m.err;
    size_t nu = ok ? rs_units(x, &r, x->gi) : 0;
    for (int gi = 0; gi < g; gi++) {
        if (gi == x->gi) continue;
        const struct tm_cgroup *gr = &x->h->g[gi];
        struct pk none = {0}, *p = out ? &out[gi] : &none;
        if (ok) {
            for (size_t u = 0; u < nu; u++)
                for (int k = 0; k < gr->n; k++)
                    len[u * (size_t)gr->n + (size_t)k] = rs_len(&r, gr->members[k]) * r.ext;
            mv_note(&m, pk_new(p, nu * (size_t)gr->n, len));
            for (size_t u = 0; p->buf && u < nu; u++)
                for (int k = 0; k < gr->n; k++) {
                    size_t b = u * (size_t)gr->n + (size_t)k;
                    if (len[b])
                        memcpy(pk_at(p, b),
                               (const unsigned char *)unit[u] + r.off[gr->members[k]] * r.ext,
                               (size_t)len[b]);
                }
        }
        mv_send(&m, gi, p); /* an empty message if packing failed: the peer must not wait */
    }
    for (int gi = 0; gi < g; gi++) {
        if (gi == x->gi) continue;
        if (!ok) {
            (void)tm_cnet_recv(x, gi, STEP_MOVE, NULL, 0, NULL); /* drain */
            continue;
        }
        size_t nb = rs_units(x, &r, gi) * (size_t)mine->n;
        for (size_t b = 0; b < nb; b++)
            len[b] = rs_len(&r, mine->members[b % (size_t)mine->n]) * r.ext;
        mv_recv(&m, gi, nb, len, &in[gi]);
        for (size_t b = 0; in[gi].buf && b < nb; b++)
            if (pk_len(&in[gi], b) != len[b]) mv_note(&m, -EMSGSIZE);
    }
    for (int i = 0; !m.err && i < mine->n; i++)
        rs_fold(x, &r, unit, in, pos, i);
    int err = mv_finish(&m);
    for (int gi = 0; gi < g; gi++) {
        if (out) pk_free(&out[gi]);
        if (in) pk_free(&in[gi]);
    }
    free(out);
    free(in);
    free(len);
    free(unit);
    free(acc);
    free(pos);
    free(r.off);
    return err;
}

/* ---- Scan / Exscan ---- */

/* The running prefix over ranks in order: acc = in[0] op ... op in[k].  Each input is copied
 * to tmp before anything is written, so an MPI_IN_PLACE input that is also the output is read
 * first. */
struct pre {
    const struct rs *r;
    unsigned char *acc, *tmp;
    int have; /* acc holds something */
    int ex;   /* Exscan: a member's output is the prefix before its input */
};

/* Folds rank k's input into the prefix; out (NULL: not a local member) gets its result. */
static void pre_step(struct pre *p, const void *input, void *out)
{
    size_t span = p->r->lead->count * p->r->ext;
    memcpy(p->tmp, input, span);
    if (out && p->ex && p->have) memcpy(out, p->acc, span);
    if (p->have) {
        rs_apply(p->r, p->acc, p->tmp, p->r->lead->count); /* tmp = acc op in[k] */
        unsigned char *t = p->acc;
        p->acc = p->tmp;
        p->tmp = t;
    } else {
        memcpy(p->acc, p->tmp, span);
        p->have = 1;
    }
    if (out && !p->ex) memcpy(out, p->acc, span);
}

/* Every group a run of consecutive ranks: group i gets the prefix of the groups before it
 * from group i - 1, runs its members and hands the prefix on to group i + 1. */
static int scan_chain(struct tm_cnet *x, struct pre *p)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    size_t span = p->r->lead->count * p->r->ext, got = 0;
    int err = p->acc ? 0 : -ENOMEM;
    if (x->gi > 0) {
        int r = tm_cnet_recv(x, x->gi - 1, STEP_CHAIN, p->acc, p->acc ? span : 0, &got);
        if (!err) err = r;
        if (!err && got != span) err = -EMSGSIZE; /* the previous leader failed */
        p->have = 1;
    }
    for (int i = 0; !err && i < mine->n; i++) {
        const struct tm_cargs *a = tm_cnet_arg(x, mine->members[i]);
        pre_step(p, a->sbuf, a->rbuf);
    }
    if (x->gi + 1 < x->h->ngroups) {
        /* even after an error, so the rest of the chain does not wait forever */
        struct tm_request q;
        int r = tm_cnet_isend(x, x->gi + 1, STEP_CHAIN, err ? NULL : p->acc, err ? 0 : span, &q);
        if (!r) r = tm_cnet_wait(x, &q);
        if (!err) err = r;
    }
    return err;
}

/* Interleaved groups: every group sends its inputs to each group with a member above its
 * leader; a leader walks every rank up to its last member in order. */
static int scan_inputs(struct tm_cnet *x, struct pre *p)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    int g = x->h->ngroups, n = x->c->size, top = mine->members[mine->n - 1];
    size_t span = p->r->lead->count * p->r->ext;
    struct mv m;
    if (mv_init(&m, x) < 0) return -ENOMEM;
    if (!p->acc) mv_note(&m, -ENOMEM);
    struct pk outp = {0}, *in = calloc((size_t)g, sizeof *in);
    uint64_t *len = lens((size_t)max_group(x->h));
    int *pos = malloc(sizeof *pos * (size_t)n);
    if (!in || !len || !pos) mv_note(&m, -ENOMEM);
    if (len) {
        for (int i = 0; i < mine->n; i++)
            len[i] = span;
        if (!pk_new(&outp, (size_t)mine->n, len))
            for (int i = 0; i < mine->n; i++)
                memcpy(pk_at(&outp, (size_t)i), tm_cnet_arg(x, mine->members[i])->sbuf, span);
        else
            mv_note(&m, -ENOMEM);
    }
    for (int gi = 0; gi < g; gi++) {
        const struct tm_cgroup *gr = &x->h->g[gi];
        if (gi != x->gi && mine->members[0] < gr->members[gr->n - 1]) mv_send(&m, gi, &outp);
    }
    for (int gi = 0; gi < g; gi++) {
        const struct tm_cgroup *gr = &x->h->g[gi];
        if (gi == x->gi || gr->members[0] >= top) continue;
        if (!in || !len) {
            (void)tm_cnet_recv(x, gi, STEP_MOVE, NULL, 0, NULL); /* drain */
            continue;
        }
        for (int i = 0; i < gr->n; i++)
            len[i] = span;
        mv_recv(&m, gi, (size_t)gr->n, len, &in[gi]);
        for (int i = 0; in[gi].buf && i < gr->n; i++)
            if (pk_len(&in[gi], (size_t)i) != span) mv_note(&m, -EMSGSIZE);
    }
    if (!m.err) {
        for (int gi = 0; gi < g; gi++)
            for (int i = 0; i < x->h->g[gi].n; i++)
                pos[x->h->g[gi].members[i]] = i;
        for (int k = 0; k <= top; k++) {
            int gk = x->h->group_of[k];
            if (gk == x->gi) {
                const struct tm_cargs *a = tm_cnet_arg(x, k);
                pre_step(p, a->sbuf, a->rbuf);
            } else {
                pre_step(p, pk_at(&in[gk], (size_t)pos[k]), NULL);
            }
        }
    }
    int err = mv_finish(&m);
    pk_free(&outp);
    for (int gi = 0; in && gi < g; gi++)
        pk_free(&in[gi]);
    free(in);
    free(len);
    free(pos);
    return err;
}

static int scan_common(struct tm_cnet *x, int ex)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    struct rs r = {.lead = tm_cnet_arg(x, mine->members[0])};
    r.ext = r.lead->rtype->extent;
    size_t span = r.lead->count * r.ext;
    if (!span) return 0; /* every leader sees the same count */
    struct pre p = {.r = &r, .ex = ex};
    unsigned char *buf = malloc(2 * span);
    if (buf) { /* without it this leader still takes part, so no other one waits for it */
        p.acc = buf;
        p.tmp = buf + span;
    }
    int err = x->h->contiguous ? scan_chain(x, &p) : scan_inputs(x, &p);
    free(buf);
    return err;
}

int tm_hier_scan(struct tm_cnet *x)
{
    return scan_common(x, 0);
}

int tm_hier_exscan(struct tm_cnet *x)
{
    return scan_common(x, 1);
}
