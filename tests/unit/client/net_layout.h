/* net_layout.h — shared by the collective tests across nodes: the layouts (nodes x ranks),
 * running a rank function on one, and a non-commutative op whose results show any departure
 * from rank order. */
#ifndef TMPI_TEST_CLIENT_NET_LAYOUT_H
#define TMPI_TEST_CLIENT_NET_LAYOUT_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "harness.h"
#include "svc.h"

extern struct tmpi_svc tmpi_svc; /* harness.c */

/* sim: the harness simulates the nodes (one job state per node, frames over a simulated
 * network, as with separate agents); else every rank shares one job state and is only told
 * its node (node_of), which allows any layout. */
struct layout {
    const char *name;
    int sim, round_robin;
    int nnodes, size;
    int node_of[16];
};

/* The layout being run, and a barrier so every rank's node is written before any rank builds
 * a communicator's node groups. */
static const struct layout *tn_cur;
static pthread_barrier_t tn_placed;

/* Layouts the harness cannot make: each rank writes its place into its (harness owned,
 * writable) rank info before MPI_Init. */
static inline void place_me(int rank)
{
    if (tn_cur->sim) return;
    struct tmpi_rank_info *info = (struct tmpi_rank_info *)tmpi_svc.rank_self();
    int32_t *node_of = (int32_t *)info->node_of_rank;
    node_of[rank] = tn_cur->node_of[rank];
    info->node = tn_cur->node_of[rank];
    info->nnodes = tn_cur->nnodes;
    pthread_barrier_wait(&tn_placed);
}

/* Runs fn on every rank of layout l; as th_run. */
static inline int tn_run_layout(const struct layout *l, th_rank_fn fn, struct th_result *res)
{
    tn_cur = l;
    pthread_barrier_init(&tn_placed, NULL, (unsigned)l->size);
    struct th_opts o = {.nranks = l->size};
    if (l->sim) {
        o.nnodes = l->nnodes;
        o.round_robin = l->round_robin;
    }
    int r = th_run(&o, fn, NULL, res);
    pthread_barrier_destroy(&tn_placed);
    return r;
}

/* tn_run_layout, saying which layout and rank failed. */
static inline int run_layout(const struct layout *l, th_rank_fn fn)
{
    struct th_result res;
    int r = tn_run_layout(l, fn, &res);
    if (r)
        fprintf(stderr, "  layout %s: rank %d failed (code %d)%s%s\n", l->name, res.failed_rank,
                res.code, res.aborted ? ": " : "", res.aborted ? res.abort_why : "");
    return r;
}

/* Runs fn on each of the n layouts ls, stopping at the first failure. */
static inline int run_layouts_of(const struct layout *ls, int n, th_rank_fn fn)
{
    for (int i = 0; i < n; i++)
        if (run_layout(&ls[i], fn)) return 1;
    return 0;
}

/* ---- the non-commutative op: affine maps x -> a x + b (mod 2^32), composed ---- */

struct aff {
    unsigned a, b;
};

/* inout = in o inout: (in o io)(x) = in.a (io.a x + io.b) + in.b */
static inline void aff_compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    struct aff *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = (struct aff){x[i].a * y[i].a, x[i].a * y[i].b + x[i].b};
}

/* world rank w's map at element i */
static inline struct aff aff_of(int w, int i)
{
    return (struct aff){2u * (unsigned)w + 3u + (unsigned)i, (unsigned)(w * 7 + i)};
}

#endif
