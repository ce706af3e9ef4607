/* coll_comm.c — the rounds of the collectives that make a communicator (comm/comm_coll.h):
 * MPI_Comm_dup's and MPI_Comm_split's agreement among the members of the parent, and the
 * collective state of a communicator's shared part.  comm/ owns the handles and calls these
 * through tm_lib.comm_coll (registered by mpi/init.c), since the collectives sit above it.
 *
 * On one node the members meet at two counting barriers around the work of one member
 * (member 0 makes the copy, or sorts everyone's color and key); across nodes each node's
 * leader does that work for its node in a round of the hierarchy (coll_net.h), after one
 * broadcast or allgather among the leaders. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_net.h"
#include "coll_xjob.h"
#include "comm_coll.h"
#include "ctx.h"
#include "job.h"
#include "topo.h"

/* A one-node communicator with size members whose world ranks world_of lists (taken over),
 * all on this node: an id from this node's reusable range. */
static struct tm_comm *comm_new(struct tm_job *job, int size, int32_t *world_of)
{
    int ctx = tm_ctx_local(job);
    if (ctx < 0) return NULL;
    struct tm_comm *c = tm_comm_new(ctx, 1, size, world_of, size);
    if (!c) tm_ctx_put(job, ctx);
    return c;
}

/* ---- communicators across nodes ----
 *
 * Every node keeps its own copy of a communicator that spans nodes, held by its members on
 * that node (refs counts those), and all copies must carry the same context id.  Ids of such
 * communicators come from their own range, split by node: the leader of the parent's first
 * group takes k from its node's counter and every copy uses BASE + node + nnodes * k.  Two
 * nodes never hand out the same id, and ids of one-node communicators (next_ctx, below BASE)
 * never meet them, so no agreement round is needed: one broadcast among the leaders. */
static struct tm_comm *comm_new_ctx(int size, int32_t *world_of, int ctx, int refs)
{
    return tm_comm_new(ctx, 0, size, world_of, refs);
}

/* count consecutive ids for the leaders of x's communicator; *ret_ctx: the first. */
static int span_ctx(struct tm_cnet *x, int count, int *ret_ctx)
{
    int32_t k = 0;
    if (x->gi == 0)
        k = atomic_fetch_add_explicit(&x->me->job->next_ctx, count > 0 ? count : 1,
                                      memory_order_relaxed);
    int err = tm_hier_bcast_bytes(x, 0, &k, sizeof k);
    if (err) return err;
    long v = TM_CTX_SPAN_BASE + x->h->g[0].node + (long)x->h->nnodes * k;
    if (v + (long)x->h->nnodes * count >= TM_CTX_LIMIT) return -ENOSPC;
    *ret_ctx = (int)v;
    return 0;
}

static int ctx_nth(struct tm_cnet *x, int first, int i)
{
    return first + x->h->nnodes * i;
}

/* Leader of a Comm_dup round: the node's copy, published in the leader's slot. */
static int dup_net(struct tm_cnet *x)
{
    const struct tm_cgroup *g = tm_cnet_mine(x);
    struct tm_comm *pc = x->c;
    pc->coll.slot[g->members[0]].p = NULL;
    int ctx, err = span_ctx(x, 1, &ctx);
    if (err) return err;
    int32_t *map = NULL;
    if (pc->world_of) {
        map = malloc(sizeof *map * (size_t)pc->size);
        if (!map) return -ENOMEM;
        memcpy(map, pc->world_of, sizeof *map * (size_t)pc->size);
    }
    struct tm_comm *nc = comm_new_ctx(pc->size, map, ctx, g->n);
    if (!nc) {
        free(map);
        return -ENOMEM;
    }
    tm_topo_dup_hook(nc, pc);
    pc->coll.slot[g->members[0]].p = nc;
    return 0;
}

/* Comm_dup: member 0 (on one node) or each node's leader makes the node's copy. */
static int dup_round(struct tm_rank *me, struct tm_commref *cr, struct tm_comm **ret)
{
    struct tm_comm *pc = cr->c;
    struct tm_slot *slot = pc->coll.slot;
    struct tm_comm *nc = NULL;
    if (TM_UNLIKELY(pc->xjob)) return tm_xcoll_dup(me, cr, ret); /* ranks of two jobs */
    if (TM_UNLIKELY(tm_coll_net_spans(me, pc))) {
        int err = tm_chier_round(me, cr, MPIX_COLL_BARRIER, dup_net);
        if (!err) nc = slot[pc->coll.hier->g[pc->coll.hier->group_of[cr->rank]].members[0]].p;
        *ret = nc;
        return nc ? 0 : -ENOMEM;
    }
    /* Member 0 creates the communicator and publishes it; a second barrier keeps its slot
     * stable until everyone has read it. */
    if (cr->rank == 0) {
        int32_t *map = NULL;
        if (pc->world_of) {
            map = malloc(sizeof *map * (size_t)pc->size);
            if (map) memcpy(map, pc->world_of, sizeof *map * (size_t)pc->size);
        }
        if (!pc->world_of || map) nc = comm_new(me->job, pc->size, map);
        if (!nc) free(map);
        if (nc) tm_topo_dup_hook(nc, pc);
        slot[0].p = nc;
    }
    tm_coll_barrier(me, cr);
    nc = slot[0].p;
    tm_coll_barrier(me, cr);
    *ret = nc;
    return nc ? 0 : -ENOMEM;
}

struct split_ent {
    int color, key, rank;
};

static int split_cmp(const void *a, const void *b)
{
    const struct split_ent *x = a, *y = b;
    if (x->color != y->color) return x->color < y->color ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Member 0 of the parent sorts everyone's (color, key, rank) and creates one communicator per
 * color: O(n log n) for one rank, no O(n^2) scan by every member.  Results go back in each
 * member's slot (p: the communicator, b: the new rank or MPI_UNDEFINED; a = -1 on failure). */
static void split_leader(struct tm_rank *me, struct tm_comm *pc)
{
    int n = pc->size;
    struct tm_slot *slot = pc->coll.slot;
    struct split_ent *v = malloc(sizeof *v * (size_t)n);
    int failed = !v;
    for (int i = 0; v && i < n; i++)
        v[i] = (struct split_ent){slot[i].a, slot[i].b, i};
    if (v) qsort(v, (size_t)n, sizeof *v, split_cmp);
    for (int i = 0; !failed && i < n;) {
        int j = i;
        while (j < n && v[j].color == v[i].color)
            j++;
        if (v[i].color == MPI_UNDEFINED) {
            for (int k = i; k < j; k++) {
                slot[v[k].rank].p = NULL;
                slot[v[k].rank].b = MPI_UNDEFINED;
            }
        } else {
            int32_t *map = malloc(sizeof *map * (size_t)(j - i));
            struct tm_comm *nc = map ? comm_new(me->job, j - i, map) : NULL;
            if (!nc) {
                free(map);
                failed = 1;
                break;
            }
            for (int k = i; k < j; k++) {
                map[k - i] = tm_comm_world_rank(pc, v[k].rank);
                slot[v[k].rank].p = nc;
                slot[v[k].rank].b = k - i;
            }
        }
        i = j;
    }
    for (int i = 0; i < n; i++)
        slot[i].a = failed ? -1 : 0;
    /* On failure the communicators already made leak until job end; acceptable for an
     * out-of-memory path that fails the call on every member. */
    free(v);
}

/* Leader of a Comm_split round: every leader learns every member's (color, key), sorts them
 * the same way, and creates its node's copy of each new communicator with local members.
 * Results go into the local members' slots as split_leader's do. */
static int split_net(struct tm_cnet *x)
{
    struct tm_comm *pc = x->c;
    struct tm_slot *slot = pc->coll.slot;
    const struct tm_cgroup *g = tm_cnet_mine(x);
    int n = pc->size, ng = x->h->ngroups, err = 0;
    size_t cap = sizeof(struct split_ent) * (size_t)n;
    struct split_ent *local = malloc(sizeof *local * (size_t)g->n);
    unsigned char *all = malloc(cap * (size_t)ng);
    size_t *lens = malloc(sizeof *lens * (size_t)ng);
    struct split_ent *v = malloc(cap);
    if (!local || !all || !lens || !v) err = -ENOMEM;
    for (int i = 0; !err && i < g->n; i++)
        local[i] = (struct split_ent){slot[g->members[i]].a, slot[g->members[i]].b, g->members[i]};
    /* Out of memory here leaves the other leaders waiting: they fail with the job. */
    if (!err) err = tm_hier_allgather_bytes(x, local, sizeof *local * (size_t)g->n, all, cap, lens);
    int m = 0;
    for (int i = 0; !err && i < ng; i++) {
        size_t k = lens[i] / sizeof *v;
        if (m + (int)k > n)
            err = -EPROTO;
        else
            memcpy(v + m, all + cap * (size_t)i, lens[i]);
        m += (int)k;
    }
    if (!err && m != n) err = -EPROTO;
    int ncolors = 0, first = 0;
    if (!err) {
        qsort(v, (size_t)n, sizeof *v, split_cmp);
        for (int i = 0; i < n; i++)
            ncolors += v[i].color != MPI_UNDEFINED && (i == 0 || v[i].color != v[i - 1].color);
        err = span_ctx(x, ncolors, &first);
    }
    for (int i = 0, ci = 0; !err && i < n;) {
        int j = i, here = 0;
        while (j < n && v[j].color == v[i].color)
            here += x->h->group_of[v[j++].rank] == x->gi;
        if (v[i].color == MPI_UNDEFINED || !here) {
            for (int k = i; k < j; k++)
                if (x->h->group_of[v[k].rank] == x->gi) {
                    slot[v[k].rank].p = NULL;
                    slot[v[k].rank].b = MPI_UNDEFINED;
                }
        } else {
            int32_t *map = malloc(sizeof *map * (size_t)(j - i));
            struct tm_comm *nc = map ? comm_new_ctx(j - i, map, ctx_nth(x, first, ci), here) : NULL;
            if (!nc) {
                free(map);
                err = -ENOMEM;
                break;
            }
            for (int k = i; k < j; k++) {
                map[k - i] = tm_comm_world_rank(pc, v[k].rank);
                if (x->h->group_of[v[k].rank] == x->gi) {
                    slot[v[k].rank].p = nc;
                    slot[v[k].rank].b = k - i;
                }
            }
        }
        if (v[i].color != MPI_UNDEFINED) ci++;
        i = j;
    }
    for (int i = 0; i < g->n; i++)
        slot[g->members[i]].a = err ? -1 : 0;
    free(local);
    free(all);
    free(lens);
    free(v);
    return err;
}

/* Comm_split: every member's (color, key) in its slot; the results come back there. */
static int split_round(struct tm_rank *me, struct tm_commref *cr, int color, int key,
                       struct tm_comm **ret, int *ret_rank)
{
    struct tm_comm *pc = cr->c;
    if (TM_UNLIKELY(pc->xjob)) return tm_xcoll_split(me, cr, color, key, ret, ret_rank);
    struct tm_slot *mine = &pc->coll.slot[cr->rank];
    mine->a = color;
    mine->b = key;
    if (TM_UNLIKELY(tm_coll_net_spans(me, pc))) {
        if (tm_chier_round(me, cr, MPIX_COLL_BARRIER, split_net) < 0) mine->a = -1;
    } else {
        tm_coll_barrier(me, cr);
        if (cr->rank == 0) split_leader(me, pc);
        tm_coll_barrier(me, cr);
    }
    if (mine->a < 0) return -ENOMEM;
    *ret = mine->p;
    *ret_rank = mine->b;
    return 0;
}

static int state_init(struct tm_coll *co)
{
    return tm_coll_nb_init(co);
}

static void state_fini(struct tm_coll *co)
{
    free(co->res);
    co->res = NULL;
    free(atomic_exchange_explicit(&co->agather, NULL, memory_order_acquire));
    tm_coll_nb_fini(co);
    tm_chier_free(atomic_exchange_explicit(&co->hier, NULL, memory_order_acquire));
}

const struct tm_comm_coll tm_coll_comm = {
    .state_init = state_init,
    .state_fini = state_fini,
    .dup = dup_round,
    .split = split_round,
};
