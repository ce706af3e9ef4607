/* coll_hier.c — the leaders' share of the collectives across nodes (coll_net.h): Barrier,
 * Bcast, Reduce, Allreduce.
 *
 * Each function runs on one node's leader with every local member's arguments in place.  It
 * reads the local inputs straight from the members' buffers, exchanges with the other leaders
 * (groups 0..G-1, in order of their lowest rank) and writes every local member's output, so a
 * node sends each byte of a Bcast once and the root's node sends G-1 or fewer messages in all.
 *
 * Order of combination (MPI 3.1 §5.9.1): a local partial is in[a] op (in[a+1] op ...) over the
 * node's members in rank order.  Commutative ops then combine partials in any order (trees,
 * recursive doubling, ring).  A non-commutative op needs rank order: when every node holds a
 * run of consecutive ranks the root's leader combines the partials in group order (flat), else
 * it receives every remote member's input and combines all of them in rank order.
 *
 * A tree file that fits the communicator replaces these algorithms when the configured one is
 * auto or tree_file (coll_treerun.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_net.h"

#define STEP_UP 0   /* towards the root */
#define STEP_DOWN 1 /* away from it */
#define STEP_PRE 2  /* recursive doubling: folding in the groups past the power of two */
#define STEP_POST 3
#define STEP_RING 4  /* ring steps count up from here (mod 256: pairs stay in FIFO order) */
#define STEP_XCHG 64 /* recursive doubling rounds count up from here */

/* ---- sending to several leaders ---- */

struct sendset {
    struct tm_request *req;
    int n, cap;
    struct tm_request small[8];
};

static int sendset_init(struct sendset *s, int cap)
{
    s->n = 0;
    s->cap = cap;
    s->req = s->small;
    if (cap > 8 && !(s->req = malloc(sizeof *s->req * (size_t)cap))) return -ENOMEM;
    return 0;
}

static int sendset_add(struct tm_cnet *x, struct sendset *s, int dst, int step, const void *buf,
                       size_t bytes)
{
    if (s->n == s->cap) return -EINVAL;
    return tm_cnet_isend(x, dst, step, buf, bytes, &s->req[s->n++]);
}

/* Waits for every send, frees the set; err is carried through (first error wins). */
static int sendset_finish(struct tm_cnet *x, struct sendset *s, int err)
{
    for (int i = 0; i < s->n; i++) {
        int r = tm_cnet_wait(x, &s->req[i]);
        if (r < 0 && !err) err = r;
    }
    if (s->req != s->small) free(s->req);
    return err;
}

static int *children(enum tm_tree_shape sh, int g, int root, int v, int *ret_n)
{
    int *ch = malloc(sizeof *ch * (size_t)(g > 1 ? g : 1));
    if (ch) *ret_n = tm_tree_children(sh, g, root, v, ch, g);
    return ch;
}

/* Sends buf from group root down a tree of shape sh; a non-root leader first receives it
 * into buf (cap bytes).  Every leader ends with the root's bytes in buf. */
static int tree_bcast(struct tm_cnet *x, enum tm_tree_shape sh, int root, void *buf, size_t cap,
                      size_t bytes)
{
    int g = x->h->ngroups, nc = 0, err = 0;
    int parent = tm_tree_parent(sh, g, root, x->gi);
    if (parent >= 0) err = tm_cnet_recv(x, parent, STEP_DOWN, buf, cap, &bytes);
    if (err) return err;
    int *ch = children(sh, g, root, x->gi, &nc);
    struct sendset s;
    if (!ch || sendset_init(&s, nc) < 0) {
        free(ch);
        return -ENOMEM;
    }
    for (int i = 0; i < nc && !err; i++)
        err = sendset_add(x, &s, ch[i], STEP_DOWN, buf, bytes);
    free(ch);
    return sendset_finish(x, &s, err);
}

/* ---- Barrier: fan-in to group 0 and fan-out along a hypercube, empty messages ---- */

int tm_hier_barrier(struct tm_cnet *x)
{
    int g = x->h->ngroups, nc = 0, err = 0;
    int *ch = children(TM_TREE_BINOMIAL, g, 0, x->gi, &nc);
    if (!ch) return -ENOMEM;
    for (int i = 0; i < nc && !err; i++)
        err = tm_cnet_recv(x, ch[i], STEP_UP, NULL, 0, NULL);
    free(ch);
    int parent = tm_tree_parent(TM_TREE_BINOMIAL, g, 0, x->gi);
    if (!err && parent >= 0) {
        struct tm_request q;
        err = tm_cnet_isend(x, parent, STEP_UP, NULL, 0, &q);
        if (!err) err = tm_cnet_wait(x, &q);
    }
    if (err) return err;
    char none;
    return tree_bcast(x, TM_TREE_BINOMIAL, 0, &none, 0, 0);
}

/* ---- Bcast ---- */

/* What collective c runs for bytes (coll_algo.h's one rule, which tmpictl tree follows too):
 * the tree file is loaded when the configured algorithm (auto, or tree_file: explicit) takes
 * one.  0 or a negative errno (a bad setting or tree file). */
static int pick(struct tm_cnet *x, enum tm_coll_id c, int configured, size_t bytes, int commute,
                const struct tm_tree_file **ret_file, struct tm_coll_pick *ret)
{
    *ret_file = NULL;
    if (x->h->conf.err) return x->h->conf.err;
    if (tm_coll_takes_file(c, configured)) {
        int r = tm_chier_tree(x, configured != 0, ret_file);
        if (r < 0) return r;
    }
    tm_coll_select(c, configured, *ret_file, x->h->ngroups, bytes, commute, ret);
    return 0;
}

int tm_hier_bcast(struct tm_cnet *x)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    const struct tm_cargs *lead = tm_cnet_arg(x, mine->members[0]);
    int root = lead->root, rg = x->h->group_of[root];
    /* The node's source: the root's own buffer on its node, else the leader's buffer, which
     * the message from the parent fills. */
    const struct tm_cargs *src = rg == x->gi ? tm_cnet_arg(x, root) : lead;
    size_t bytes = tm_dt_span((size_t)src->rcount, src->rtype);
    const struct tm_tree_file *t;
    struct tm_coll_pick pk;
    int err = pick(x, TM_COLL_BCAST, x->h->conf.algo[TM_COLL_BCAST], bytes, 1, &t, &pk);
    if (err < 0) return err;
    if (pk.use_file) return tm_treerun_bcast(x, t);
    err = tree_bcast(x, (enum tm_tree_shape)pk.shape, rg, src->rbuf, bytes, bytes);
    if (err) return err;
    int trunc = 0;
    for (int i = 0; i < mine->n; i++) {
        const struct tm_cargs *d = tm_cnet_arg(x, mine->members[i]);
        if (d != src)
            trunc |= tm_dt_copy(d->rbuf, (size_t)d->rcount, d->rtype, src->rbuf,
                                (size_t)src->rcount, src->rtype);
    }
    return trunc ? -EMSGSIZE : 0;
}

/* ---- Reduce / Allreduce ---- */

/* What every reduction of one round shares. */
struct red {
    const struct tm_cargs *lead; /* the leader's own arguments: its op, type and handle */
    size_t count, span;
};

static void red_apply(const struct red *r, const void *in, void *inout, size_t count)
{
    tm_opref_apply(&r->lead->op, in, inout, count, r->lead->rtype, r->lead->dth);
}

/* acc = in[m0] op (in[m1] op ...) over the node's members, in rank order. */
static void local_partial(struct tm_cnet *x, const struct red *r, void *acc)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    memcpy(acc, tm_cnet_arg(x, mine->members[mine->n - 1])->sbuf, r->span);
    for (int i = mine->n - 2; i >= 0; i--)
        red_apply(r, tm_cnet_arg(x, mine->members[i])->sbuf, acc, r->count);
}

/* Commutative op: partials meet along a tree towards group root. */
static int reduce_tree(struct tm_cnet *x, const struct red *r, enum tm_tree_shape sh, int root,
                       void *acc, void *tmp)
{
    int g = x->h->ngroups, nc = 0, err = 0;
    int *ch = children(sh, g, root, x->gi, &nc);
    if (!ch) return -ENOMEM;
    for (int i = 0; i < nc && !err; i++) {
        err = tm_cnet_recv(x, ch[i], STEP_UP, tmp, r->span, NULL);
        if (!err) red_apply(r, tmp, acc, r->count);
    }
    free(ch);
    int parent = tm_tree_parent(sh, g, root, x->gi);
    if (!err && parent >= 0) {
        struct tm_request q;
        err = tm_cnet_isend(x, parent, STEP_UP, acc, r->span, &q);
        if (!err) err = tm_cnet_wait(x, &q);
    }
    return err;
}

/* Non-commutative op, every group a run of consecutive ranks: the root's leader combines the
 * partials in group order, right to left like local_partial. */
static int reduce_ordered(struct tm_cnet *x, const struct red *r, int root, void *acc)
{
    int g = x->h->ngroups;
    if (x->gi != root) {
        struct tm_request q;
        int err = tm_cnet_isend(x, root, STEP_UP, acc, r->span, &q);
        return err ? err : tm_cnet_wait(x, &q);
    }
    unsigned char *part = malloc(r->span * (size_t)g);
    if (!part) return -ENOMEM;
    int err = 0;
    for (int i = 0; i < g && !err; i++)
        if (i != root) err = tm_cnet_recv(x, i, STEP_UP, part + r->span * (size_t)i, r->span, NULL);
    if (!err) {
        memcpy(part + r->span * (size_t)root, acc, r->span);
        memcpy(acc, part + r->span * (size_t)(g - 1), r->span);
        for (int i = g - 2; i >= 0; i--)
            red_apply(r, part + r->span * (size_t)i, acc, r->count);
    }
    free(part);
    return err;
}

/* Non-commutative op, groups interleaved in rank order: the root's leader gets every input
 * (one message per remote member, in member order) and combines all in rank order. */
static int reduce_all_inputs(struct tm_cnet *x, const struct red *r, int root, void *acc)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    int err = 0;
    if (x->gi != root) {
        struct sendset s;
        if (sendset_init(&s, mine->n) < 0) return -ENOMEM;
        for (int i = 0; i < mine->n && !err; i++)
            err =
                sendset_add(x, &s, root, STEP_UP, tm_cnet_arg(x, mine->members[i])->sbuf, r->span);
        return sendset_finish(x, &s, err);
    }
    int n = x->c->size;
    const void **in = malloc(sizeof *in * (size_t)n);
    unsigned char *store = malloc(r->span * (size_t)n);
    if (!in || !store) {
        free(in);
        free(store);
        return -ENOMEM;
    }
    for (int gi = 0; gi < x->h->ngroups && !err; gi++) {
        const struct tm_cgroup *g = &x->h->g[gi];
        for (int i = 0; i < g->n && !err; i++) {
            int rk = g->members[i];
            if (gi == root) {
                in[rk] = tm_cnet_arg(x, rk)->sbuf;
            } else {
                in[rk] = store + r->span * (size_t)rk;
                err = tm_cnet_recv(x, gi, STEP_UP, store + r->span * (size_t)rk, r->span, NULL);
            }
        }
    }
    if (!err) {
        memcpy(acc, in[n - 1], r->span);
        for (int k = n - 2; k >= 0; k--)
            red_apply(r, in[k], acc, r->count);
    }
    free(in);
    free(store);
    return err;
}

/* The whole reduction into acc at group root's leader (acc holds the local partial on entry,
 * except for reduce_all_inputs, which reads the inputs itself). */
static int reduce_to(struct tm_cnet *x, const struct red *r, enum tm_tree_shape sh, int root,
                     void *acc, void *tmp)
{
    if (r->lead->op.commute) return reduce_tree(x, r, sh, root, acc, tmp);
    if (x->h->contiguous) return reduce_ordered(x, r, root, acc);
    return reduce_all_inputs(x, r, root, acc);
}

static int red_setup(struct tm_cnet *x, struct red *r, unsigned char **ret_buf)
{
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    r->lead = tm_cnet_arg(x, mine->members[0]);
    r->count = r->lead->count;
    r->span = tm_dt_span(r->count, r->lead->rtype);
    *ret_buf = NULL;
    if (!r->span) return 0; /* nothing to combine: every leader sees the same count */
    *ret_buf = malloc(2 * r->span);
    if (!*ret_buf) return -ENOMEM;
    if (r->lead->op.commute || x->h->contiguous) local_partial(x, r, *ret_buf);
    return 0;
}

/* One leader's bytes of a Reduce or Allreduce (every leader's count is the same). */
static size_t red_span(struct tm_cnet *x)
{
    const struct tm_cargs *lead = tm_cnet_arg(x, tm_cnet_mine(x)->members[0]);
    return tm_dt_span(lead->count, lead->rtype);
}

/* A Reduce (all 0) or Allreduce's choice; 1 when it is the tree file's edges and they ran
 * (ret_err their result), 0 when the leaders' own algorithm runs (pk). */
static int red_pick(struct tm_cnet *x, int all, struct tm_coll_pick *pk, int *ret_err)
{
    const struct tm_cargs *lead = tm_cnet_arg(x, tm_cnet_mine(x)->members[0]);
    enum tm_coll_id c = all ? TM_COLL_ALLREDUCE : TM_COLL_REDUCE;
    int configured = x->h->conf.algo[c];
    size_t bytes = red_span(x);
    const struct tm_tree_file *t;
    *ret_err = pick(x, c, configured, bytes, lead->op.commute, &t, pk);
    if (*ret_err < 0) return 1;
    if (!pk->use_file) return 0;
    int r = tm_treerun_reduce(x, t, all);
    if (r <= 0) {
        *ret_err = r;
        return 1;
    }
    /* 1: the edges cannot combine this op in rank order: as without the file */
    tm_coll_select(c, configured, NULL, x->h->ngroups, bytes, lead->op.commute, pk);
    return 0;
}

int tm_hier_reduce(struct tm_cnet *x)
{
    struct tm_coll_pick pk;
    int err;
    if (red_pick(x, 0, &pk, &err)) return err;
    struct red r;
    unsigned char *acc;
    err = red_setup(x, &r, &acc);
    if (err || !acc) return err;
    int root = r.lead->root, rg = x->h->group_of[root];
    err = reduce_to(x, &r, (enum tm_tree_shape)pk.shape, rg, acc, acc + r.span);
    if (!err && rg == x->gi) memcpy(tm_cnet_arg(x, root)->rbuf, acc, r.span);
    free(acc);
    return err;
}

/* Recursive doubling (commutative ops): log2(p) exchanges of the whole vector between
 * partners; with g = p + rem groups, the first 2 rem fold pairwise into p first and get the
 * result back at the end. */
static int allreduce_recdbl(struct tm_cnet *x, const struct red *r, void *acc, void *tmp)
{
    int g = x->h->ngroups, gi = x->gi, p = 1, err = 0;
    while (p * 2 <= g)
        p *= 2;
    int rem = g - p, vr;
    struct tm_request q;
    if (gi < 2 * rem) {
        if (gi % 2 == 0) {
            err = tm_cnet_isend(x, gi + 1, STEP_PRE, acc, r->span, &q);
            if (!err) err = tm_cnet_wait(x, &q);
            return err ? err : tm_cnet_recv(x, gi + 1, STEP_POST, acc, r->span, NULL);
        }
        err = tm_cnet_recv(x, gi - 1, STEP_PRE, tmp, r->span, NULL);
        if (err) return err;
        red_apply(r, tmp, acc, r->count);
        vr = gi / 2;
    } else {
        vr = gi - rem;
    }
    for (int mask = 1, step = STEP_XCHG; mask < p && !err; mask <<= 1, step++) {
        int pv = vr ^ mask, peer = pv < rem ? pv * 2 + 1 : pv + rem;
        err = tm_cnet_isend(x, peer, step, acc, r->span, &q);
        if (err) break;
        err = tm_cnet_recv(x, peer, step, tmp, r->span, NULL);
        int e2 = tm_cnet_wait(x, &q); /* acc is the send buffer until then */
        if (!err) err = e2;
        if (!err) red_apply(r, tmp, acc, r->count);
    }
    if (!err && gi < 2 * rem) {
        err = tm_cnet_isend(x, gi - 1, STEP_POST, acc, r->span, &q);
        if (!err) err = tm_cnet_wait(x, &q);
    }
    return err;
}

/* Ring (commutative ops, large vectors): g-1 steps of reduce-scatter, each leader passing one
 * block to its right neighbour and combining the one from its left, then g-1 steps of
 * allgather passing the finished blocks on.  Each leader sends 2(g-1)/g of the vector. */
static int allreduce_ring(struct tm_cnet *x, const struct red *r, unsigned char *acc,
                          unsigned char *tmp)
{
    int g = x->h->ngroups, gi = x->gi, err = 0;
    int right = (gi + 1) % g, left = (gi + g - 1) % g;
    size_t ext = r->lead->rtype->extent, per = (r->count + (size_t)g - 1) / (size_t)g;
#define BLK_LO(b) ((size_t)(b)*per < r->count ? (size_t)(b)*per : r->count)
#define BLK_N(b) (BLK_LO((b) + 1) - BLK_LO(b))
    for (int s = 0; s < 2 * (g - 1) && !err; s++) {
        int reduce = s < g - 1, k = reduce ? s : s - (g - 1);
        /* reduce-scatter: send block gi-k, receive block gi-k-1; allgather: one block later */
        int sb = ((gi - k + (reduce ? 0 : 1)) % g + g) % g;
        int rb = ((sb - 1) % g + g) % g;
        struct tm_request q;
        err = tm_cnet_isend(x, right, STEP_RING + s, acc + BLK_LO(sb) * ext, BLK_N(sb) * ext, &q);
        if (err) break;
        unsigned char *into = reduce ? tmp : acc + BLK_LO(rb) * ext;
        err = tm_cnet_recv(x, left, STEP_RING + s, into, BLK_N(rb) * ext, NULL);
        int e2 = tm_cnet_wait(x, &q);
        if (!err) err = e2;
        if (!err && reduce) red_apply(r, tmp, acc + BLK_LO(rb) * ext, BLK_N(rb));
    }
#undef BLK_LO
#undef BLK_N
    return err;
}

int tm_hier_allreduce(struct tm_cnet *x)
{
    struct tm_coll_pick pk;
    int err;
    if (red_pick(x, 1, &pk, &err)) return err;
    struct red r;
    unsigned char *acc;
    err = red_setup(x, &r, &acc);
    if (err || !acc) return err;
    unsigned char *tmp = acc + r.span;
    if (pk.algo == TM_AR_RECDOUBLING) {
        err = allreduce_recdbl(x, &r, acc, tmp);
    } else if (pk.algo == TM_AR_RING) {
        err = allreduce_ring(x, &r, acc, tmp);
    } else {
        enum tm_tree_shape sh = (enum tm_tree_shape)pk.shape;
        err = reduce_to(x, &r, sh, 0, acc, tmp);
        if (!err) err = tree_bcast(x, sh, 0, acc, r.span, r.span);
    }
    const struct tm_cgroup *mine = tm_cnet_mine(x);
    for (int i = 0; i < mine->n && !err; i++)
        memcpy(tm_cnet_arg(x, mine->members[i])->rbuf, acc, r.span);
    free(acc);
    return err;
}

/* ---- helpers for communicator creation (comm.c) ---- */

int tm_hier_bcast_bytes(struct tm_cnet *x, int root, void *buf, size_t bytes)
{
    return tree_bcast(x, TM_TREE_BINOMIAL, root, buf, bytes, bytes);
}

/* Every leader sends its block to every other (G(G-1) messages: creation is rare, and the
 * blocks differ in size).  all: G blocks of cap bytes each; lens[g]: the bytes of block g. */
int tm_hier_allgather_bytes(struct tm_cnet *x, const void *mine, size_t bytes, void *all,
                            size_t cap, size_t *lens)
{
    int g = x->h->ngroups, err = 0;
    struct sendset s;
    if (sendset_init(&s, g) < 0) return -ENOMEM;
    for (int i = 0; i < g && !err; i++)
        if (i != x->gi) err = sendset_add(x, &s, i, STEP_UP, mine, bytes);
    for (int i = 0; i < g && !err; i++) {
        unsigned char *to = (unsigned char *)all + cap * (size_t)i;
        if (i == x->gi) {
            memcpy(to, mine, bytes);
            lens[i] = bytes;
        } else {
            err = tm_cnet_recv(x, i, STEP_UP, to, cap, &lens[i]);
        }
    }
    return sendset_finish(x, &s, err);
}
