/* comm.c — communicator handles, creation (dup, split) and queries (comm.h). */
#include "comm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_net.h"
#include "ctx.h"
#include "errh.h"
#include "attr.h"
#include "info.h"
#include "intercomm.h"
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

struct split_ent;
static int split_cmp(const void *a, const void *b);

/* Leader of a Comm_split round: every leader learns every member's (color, key), sorts them
 * the same way, and creates its node's copy of each new communicator with local members.
 * Results go into the local members' slots as split_leader's do. */
static int split_net(struct tm_cnet *x);

#define GET_COMM(fn, comm)                                                                         \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);                    \
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);                                    \
    if (TM_UNLIKELY(!cr))                                                                          \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);

TM_API int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    GET_COMM("MPI_Comm_rank", comm);
    if (!rank) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
    *rank = cr->rank;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_rank)

TM_API int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    GET_COMM("MPI_Comm_size", comm);
    if (!size) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
    *size = cr->c->size;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_size)

/* Intra-communicator dup: a new handle in *newcomm (no attributes yet). */
static int dup_intra(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, MPI_Comm *newcomm)
{
    struct tm_comm *pc = cr->c;
    struct tm_slot *slot = pc->coll.slot;
    if (TM_UNLIKELY(tm_coll_net_spans(me, pc))) {
        int err = tm_chier_round(me, cr, MPIX_COLL_BARRIER, dup_net);
        struct tm_comm *nc = NULL;
        if (!err) nc = slot[pc->coll.hier->g[pc->coll.hier->group_of[cr->rank]].members[0]].p;
        if (!nc) return tm_err(me, comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "out of memory");
        MPI_Comm h = tm_commtab_add(me, nc, cr->rank, cr->eh);
        if (h == MPI_COMM_NULL) {
            tm_comm_release(nc);
            return tm_err(me, comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "out of memory");
        }
        *newcomm = h;
        return MPI_SUCCESS;
    }
    /* Member 0 creates the communicator and publishes it; a second barrier keeps its slot
     * stable until everyone has read it. */
    if (cr->rank == 0) {
        int32_t *map = NULL;
        struct tm_comm *nc = NULL;
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
    struct tm_comm *nc = slot[0].p;
    tm_coll_barrier(me, cr);
    if (!nc) return tm_err(me, comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "out of memory");
    MPI_Comm h = tm_commtab_add(me, nc, cr->rank, cr->eh);
    if (h == MPI_COMM_NULL) {
        tm_comm_release(nc);
        return tm_err(me, comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "out of memory");
    }
    *newcomm = h;
    return MPI_SUCCESS;
}

int tm_comm_dup(struct tm_rank *me, const char *fn, MPI_Comm comm, struct tm_info *hints,
                MPI_Comm *newcomm)
{
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    MPI_Comm h = MPI_COMM_NULL;
    int err = cr->c->inter ? tm_intercomm_dup(me, cr, comm, &h) : dup_intra(me, cr, comm, &h);
    if (err) return err;
    cr = tm_comm_get(&me->comms, comm); /* the table may have grown: entries never move */
    struct tm_commref *nr = tm_comm_get(&me->comms, h);
    /* The new communicator gets the parent's attributes (copy callbacks) and hints, and
     * the session its parent came from (its buffered sends use that session's buffer). */
    nr->session_bsb = cr->session_bsb;
    err = tm_attr_copy_all(me, TM_ATTR_COMM, comm, cr->attrs, &nr->attrs);
    if (!err && (hints || cr->hints)) {
        nr->hints = tm_info_dup_obj(hints ? hints : cr->hints);
        if (!nr->hints) err = MPI_ERR_NO_MEM;
    }
    if (err) {
        tm_commtab_free(me, h);
        return tm_err(me, comm, err, fn, "copying the attributes failed");
    }
    *newcomm = h;
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    GET_COMM("MPI_Comm_dup", comm);
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_dup", "newcomm is NULL");
    (void)cr;
    return tm_comm_dup(me, "MPI_Comm_dup", comm, NULL, newcomm);
}
TM_ALIAS(Comm_dup)

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

int tm_comm_split(struct tm_rank *me, const char *fn, MPI_Comm comm, int color, int key,
                  MPI_Comm *newcomm)
{
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    struct tm_comm *pc = cr->c;
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
    int failed = mine->a < 0;
    struct tm_comm *nc = mine->p;
    int nrank = mine->b;
    MPI_Errhandler eh = cr->eh;
    struct tm_bsbuf *session_bsb = cr->session_bsb;
    if (failed) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    if (!nc) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    MPI_Comm h = tm_commtab_add(me, nc, nrank, eh);
    if (h == MPI_COMM_NULL) {
        tm_comm_release(nc);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    tm_comm_get(&me->comms, h)->session_bsb = session_bsb; /* as a dup's (tm_comm_dup) */
    *newcomm = h;
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    GET_COMM("MPI_Comm_split", comm);
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_split", "newcomm is NULL");
    if (color < 0 && color != MPI_UNDEFINED)
        return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d", color);
    if (cr->c->inter) return tm_intercomm_split(me, cr, comm, color, key, newcomm);
    return tm_comm_split(me, "MPI_Comm_split", comm, color, key, newcomm);
}
TM_ALIAS(Comm_split)

TM_API int PMPI_Comm_free(MPI_Comm *comm)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Comm_free", TM_ERR_NOINIT);
    if (!comm) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_free", "comm is NULL");
    struct tm_commref *cr = tm_comm_get_user(&me->comms, *comm);
    if (!cr || cr->c->builtin)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_free", "invalid communicator %d",
                      *comm);
    int err = tm_commtab_free(me, *comm);
    if (err) return tm_err(me, *comm, err, "MPI_Comm_free", "an attribute delete callback failed");
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_free)

/* Same members in the same order: world ranks of a's and b's groups (local, then remote). */
static int same_order(const struct tm_comm *a, const struct tm_comm *b)
{
    if (a->size != b->size || a->inter != b->inter || a->remote_size != b->remote_size) return 0;
    for (int i = 0; i < a->size; i++)
        if (tm_comm_world_rank(a, i) != tm_comm_world_rank(b, i)) return 0;
    for (int i = 0; i < a->remote_size; i++)
        if (a->remote_of[i] != b->remote_of[i]) return 0;
    return 1;
}

/* Same member sets (local groups, and remote groups) in any order. */
static int same_sets(struct tm_rank *me, const struct tm_comm *a, const struct tm_comm *b, int *ret)
{
    unsigned char *mark = calloc((size_t)me->job->size, 1);
    if (!mark) return -ENOMEM;
    int same = 1;
    for (int pass = 0; pass < 2 && same; pass++) {
        int na = pass ? a->remote_size : a->size, nb = pass ? b->remote_size : b->size;
        if (na != nb) {
            same = 0;
            break;
        }
        for (int i = 0; i < na; i++)
            mark[pass ? a->remote_of[i] : tm_comm_world_rank(a, i)] = (unsigned char)(pass + 1);
        for (int i = 0; same && i < nb; i++)
            same = mark[pass ? b->remote_of[i] : tm_comm_world_rank(b, i)] == pass + 1;
    }
    free(mark);
    *ret = same;
    return 0;
}

TM_API int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Comm_compare", TM_ERR_NOINIT);
    struct tm_commref *a = tm_comm_get_user(&me->comms, comm1),
                      *b = tm_comm_get_user(&me->comms, comm2);
    if (!a || !b)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_compare", "invalid communicator");
    if (!result) return tm_err(me, comm1, MPI_ERR_ARG, "MPI_Comm_compare", "result is NULL");
    if (a->c == b->c) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->c->inter != b->c->inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    if (same_order(a->c, b->c)) {
        *result = MPI_CONGRUENT;
        return MPI_SUCCESS;
    }
    int same = 0;
    if (same_sets(me, a->c, b->c, &same) < 0)
        return tm_err(me, comm1, MPI_ERR_NO_MEM, "MPI_Comm_compare", "out of memory");
    *result = same ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_compare)
