/* coll_treerun.c — Bcast, Reduce and Allreduce along a tree file's edges, rank by rank, on a
 * communicator that spans nodes (coll_net.h; the file format is in coll_tree.h).
 *
 * Each node's leader plays every local rank's part of the tree: an edge between two ranks of
 * its node is a copy between their buffers (shared memory, no message); an edge between
 * nodes is one leader message on the collective channel (counted in coll_stats.net), so a
 * Bcast or Reduce sends exactly as many network messages as the tree has edges between nodes.
 * A root other than the file's turns the edges on its path to the file's root around
 * (tm_tree_reroot): the edges stay the file's.
 *
 * No deadlock, however often the tree crosses between nodes: every leader walks the edges in
 * one order that all of them compute alike (tm_tree_order: a parent before its children) —
 * forwards for a Bcast, backwards for a Reduce — and handles only those touching its node.
 * Take the first edge in that order that is not done: both its leaders have finished every
 * earlier edge, so both are at it, and the message they exchange for it is the first one
 * between them not yet received (messages between two leaders match in the order sent).
 *
 * Reduce order (MPI 3.1 §5.9.1): each rank folds, right to left, the pieces of its subtree —
 * its children's partial results and its own input — so when every subtree holds consecutive
 * ranks, the children arriving in descending rank order (the backward walk) give exactly rank
 * order and a non-commutative op is right.  Otherwise such an op is refused here (return 1)
 * and runs on the usual rank-order algorithm. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_net.h"

#define STEP_UP 0   /* towards the root */
#define STEP_DOWN 1 /* away from it */

/* One leader's walk for one root: the edges (parent, child) touching its node, in the common
 * order. */
struct tm_tplan {
    int root;
    int intervals; /* every subtree holds consecutive ranks */
    int nops, nsend_down;
    struct tm_tedge {
        int p, c;
    } * ops;
};

void tm_tplan_free(struct tm_tplan *p)
{
    if (!p) return;
    free(p->ops);
    free(p);
}

static int tplan_build(struct tm_cnet *x, const struct tm_tree_file *t, int root,
                       struct tm_tplan **ret)
{
    int n = t->n, gi = x->gi, err = -ENOMEM;
    const int *grp = x->h->group_of;
    int32_t *par = malloc(sizeof *par * (size_t)n);
    int *order = malloc(sizeof *order * (size_t)n);
    struct tm_tplan *p = calloc(1, sizeof *p);
    if (!par || !order || !p || !(p->ops = malloc(sizeof *p->ops * (size_t)n))) goto out;
    if ((err = tm_tree_reroot(n, t->parent, root, par)) < 0) goto out;
    if ((err = tm_tree_order(n, par, order)) < 0) goto out;
    if ((err = tm_tree_intervals(n, par, order)) < 0) goto out;
    p->intervals = err;
    err = 0;
    p->root = root;
    for (int i = 1; i < n; i++) {
        int c = order[i], pr = par[c];
        if (grp[pr] != gi && grp[c] != gi) continue;
        p->ops[p->nops++] = (struct tm_tedge){pr, c};
        if (grp[pr] == gi && grp[c] != gi) p->nsend_down++;
    }
    *ret = p;
    p = NULL;
out:
    free(par);
    free(order);
    tm_tplan_free(p);
    return err;
}

/* The plan of this leader's node for root, kept for the next call with the same root. */
static int tplan_get(struct tm_cnet *x, const struct tm_tree_file *t, int root,
                     const struct tm_tplan **ret)
{
    struct tm_tplan **slot = x->plan; /* one runner of rounds only */
    if (!*slot || (*slot)->root != root) {
        struct tm_tplan *p;
        int err = tplan_build(x, t, root, &p);
        if (err < 0) return err;
        tm_tplan_free(*slot);
        *slot = p;
    }
    *ret = *slot;
    return 0;
}

/* ---- Bcast ---- */

/* A rank's buffer for the data going down: its receive buffer, except that src (if not
 * NULL) replaces the root's (Allreduce: the result at the root's leader). */
struct down {
    const void *src;
    size_t src_count;
    int root;
    int all; /* Allreduce arguments: count and rtype, not rcount */
};

static void *dbuf(const struct tm_cnet *x, const struct down *d, int v, size_t *ret_count,
                  const struct tm_type **ret_t)
{
    const struct tm_cargs *a = tm_cnet_arg(x, v);
    *ret_t = a->rtype;
    if (v == d->root && d->src) {
        *ret_count = d->src_count;
        return (void *)d->src;
    }
    *ret_count = d->all ? a->count : (size_t)a->rcount;
    return a->rbuf;
}

static int run_down(struct tm_cnet *x, const struct tm_tplan *p, const struct down *d)
{
    const int *grp = x->h->group_of;
    int gi = x->gi, err = 0, ns = 0, trunc = 0;
    struct tm_request *req = malloc(sizeof *req * (size_t)(p->nsend_down ? p->nsend_down : 1));
    if (!req) return -ENOMEM;
    for (int i = 0; i < p->nops && !err; i++) {
        int pr = p->ops[i].p, c = p->ops[i].c;
        size_t pc = 0, cc = 0;
        const struct tm_type *pt = NULL, *ct = NULL;
        void *pb = grp[pr] == gi ? dbuf(x, d, pr, &pc, &pt) : NULL;
        void *cb = grp[c] == gi ? dbuf(x, d, c, &cc, &ct) : NULL;
        if (pb && cb)
            trunc |= tm_dt_copy(cb, cc, ct, pb, pc, pt);
        else if (pb)
            err = tm_cnet_isend(x, grp[c], STEP_DOWN, pb, tm_dt_span(pc, pt), &req[ns++]);
        else
            err = tm_cnet_recv(x, grp[pr], STEP_DOWN, cb, tm_dt_span(cc, ct), NULL);
    }
    for (int i = 0; i < ns; i++) {
        int r = tm_cnet_wait(x, &req[i]);
        if (r < 0 && !err) err = r;
    }
    free(req);
    return err ? err : trunc ? -EMSGSIZE : 0;
}

int tm_treerun_bcast(struct tm_cnet *x, const struct tm_tree_file *t)
{
    const struct tm_cargs *lead = tm_cnet_arg(x, tm_cnet_mine(x)->members[0]);
    if (!tm_dt_span((size_t)lead->rcount, lead->rtype)) return 0; /* the same on every node */
    const struct tm_tplan *p;
    int err = tplan_get(x, t, lead->root, &p);
    if (err < 0) return err;
    struct down d = {.root = lead->root};
    return run_down(x, p, &d);
}

/* ---- Reduce, Allreduce ---- */

struct up {
    const struct tm_cargs *lead; /* the leader's arguments: op, type, count */
    size_t span;
    void **acc;         /* per comm rank: its partial so far (malloc'd), NULL: none yet */
    unsigned char *own; /* per comm rank: its own input is folded in */
};

static void up_apply(const struct up *u, const void *in, void *inout)
{
    tm_opref_apply(&u->lead->op, in, inout, u->lead->count, u->lead->rtype, u->lead->dth);
}

/* acc[v] = piece op acc[v] (piece is the leftmost so far); take: piece is a malloc'd buffer
 * the caller gives away. */
static int fold(struct up *u, int v, const void *piece, void *take)
{
    if (!u->acc[v]) {
        if (take) {
            u->acc[v] = take;
            return 0;
        }
        if (!(u->acc[v] = malloc(u->span))) return -ENOMEM;
        memcpy(u->acc[v], piece, u->span);
        return 0;
    }
    up_apply(u, piece, u->acc[v]);
    free(take);
    return 0;
}

static int fold_own(struct tm_cnet *x, struct up *u, int v)
{
    if (u->own[v]) return 0;
    u->own[v] = 1;
    return fold(u, v, tm_cnet_arg(x, v)->sbuf, NULL);
}

/* v's finished partial: a leaf's is its input itself (nothing allocated). */
static const void *finished(struct tm_cnet *x, struct up *u, int v)
{
    if (!u->acc[v]) {
        u->own[v] = 1;
        return tm_cnet_arg(x, v)->sbuf;
    }
    if (!u->own[v]) {
        u->own[v] = 1;
        up_apply(u, tm_cnet_arg(x, v)->sbuf, u->acc[v]);
    }
    return u->acc[v];
}

/* A child's partial arrives at p: children come in descending rank, so p's own input goes in
 * between the children above p and those below. */
static int piece_in(struct tm_cnet *x, struct up *u, int p, int c, const void *piece, void *take)
{
    if (c < p) {
        int err = fold_own(x, u, p);
        if (err) {
            free(take);
            return err;
        }
    }
    return fold(u, p, piece, take);
}

static int run_up(struct tm_cnet *x, const struct tm_tplan *p, struct up *u)
{
    const int *grp = x->h->group_of;
    int gi = x->gi, err = 0;
    for (int i = p->nops - 1; i >= 0 && !err; i--) {
        int pr = p->ops[i].p, c = p->ops[i].c;
        if (grp[c] == gi) {
            const void *part = finished(x, u, c);
            if (grp[pr] == gi) {
                /* hand c's buffer over when p has none yet: no copy */
                void *take = u->acc[c];
                u->acc[c] = NULL;
                err = piece_in(x, u, pr, c, part, take);
            } else {
                struct tm_request q;
                err = tm_cnet_isend(x, grp[pr], STEP_UP, part, u->span, &q);
                if (!err) err = tm_cnet_wait(x, &q);
                free(u->acc[c]);
                u->acc[c] = NULL;
            }
        } else {
            void *in = malloc(u->span);
            if (!in) return -ENOMEM;
            err = tm_cnet_recv(x, grp[c], STEP_UP, in, u->span, NULL);
            if (err)
                free(in);
            else
                err = piece_in(x, u, pr, c, in, in);
        }
    }
    return err;
}

int tm_treerun_reduce(struct tm_cnet *x, const struct tm_tree_file *t, int all)
{
    const struct tm_cargs *lead = tm_cnet_arg(x, tm_cnet_mine(x)->members[0]);
    int root = all ? t->root : lead->root, n = t->n;
    const struct tm_tplan *p;
    int err = tplan_get(x, t, root, &p);
    if (err < 0) return err;
    if (!lead->op.commute && !p->intervals) return 1; /* every leader decides alike */
    struct up u = {.lead = lead, .span = tm_dt_span(lead->count, lead->rtype)};
    if (!u.span) return 0; /* nothing to combine: every leader sees the same count */
    u.acc = calloc((size_t)n, sizeof *u.acc);
    u.own = calloc((size_t)n, 1);
    if (!u.acc || !u.own) {
        free(u.acc);
        free(u.own);
        return -ENOMEM;
    }
    err = run_up(x, p, &u);
    const void *res = NULL;
    if (!err && x->h->group_of[root] == x->gi) {
        res = finished(x, &u, root);
        void *out = tm_cnet_arg(x, root)->rbuf;
        if (!all && out != res) memcpy(out, res, u.span);
    }
    if (!err && all) {
        struct down d = {.src = res, .src_count = lead->count, .root = root, .all = 1};
        err = run_down(x, p, &d);
        void *out = res ? tm_cnet_arg(x, root)->rbuf : NULL;
        if (!err && out && out != res) memcpy(out, res, u.span);
    }
    for (int v = 0; v < n; v++)
        free(u.acc[v]);
    free(u.acc);
    free(u.own);
    return err;
}
