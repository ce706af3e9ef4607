/* test_coll_net.c — collectives on communicators that span nodes (coll_net.h, coll_hier.c).
 *
 * Layouts on nodes the harness simulates (one job state per node, frames over its simulated
 * collective channel): 4x1, 4x4, 3x4, uneven 3+3+1, round-robin 2x3 (nodes interleave in rank
 * order).  Layouts it cannot make (3+1+2, 5 uneven interleaved nodes) run in one job state
 * whose ranks are told their node: the leaders' messages then go through the mailboxes,
 * counted as network messages all the same.  Checked on every rank:
 * Barrier, Bcast, Reduce, Allreduce with fixed and rotating roots, counts 0 / 1 / odd / over
 * the eager limit / large (ring), a commutative predefined op and a non-commutative user op
 * (composition of affine maps, which shows any deviation from rank order); the algorithms
 * forced through TMPI_COLL_*; the same on Comm_dup, Comm_split (reversed order, only some
 * nodes, some ranks of some nodes) and Comm_split_type SHARED; and the counters: a Bcast on 3 nodes
 * x 4 ranks crosses exactly 2 network edges. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "coll_check.h"
#include "net_layout.h"

static const struct layout layouts[] = {
    {"4x1 (nodes)", 1, 0, 4, 4, {0}},
    {"4x4 (nodes)", 1, 0, 4, 16, {0}},
    {"3x4 (nodes)", 1, 0, 3, 12, {0}},
    {"3+3+1 (nodes)", 1, 0, 3, 7, {0}},
    {"2x3 round-robin (nodes)", 1, 1, 2, 6, {0}},
    {"4x1", 0, 0, 4, 4, {0, 1, 2, 3}},
    {"4x4", 0, 0, 4, 16, {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}},
    {"3+1+2", 0, 0, 3, 6, {0, 0, 0, 1, 2, 2}},
    {"5 nodes uneven, interleaved", 0, 0, 5, 9, {0, 1, 1, 2, 3, 3, 3, 4, 0}},
};
#define NLAYOUTS (int)(sizeof layouts / sizeof layouts[0])

static int run_layouts(th_rank_fn fn)
{
    return run_layouts_of(layouts, NLAYOUTS, fn);
}

/* Counts: empty, one, odd, over the 16 KiB eager limit (rendezvous between leaders), over the
 * ring threshold (512 KiB). */
static const int counts[] = {0, 1, 7, 5000, 140001};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

/* ---- a non-commutative op: affine maps x -> a x + b (mod 2^32), composed ---- */

/* f_0 o f_1 o ... o f_{n-1} for element i over members whose world ranks are w[] */
static struct aff aff_ref(const int *w, int n, int i)
{
    struct aff acc = aff_of(w[n - 1], i);
    for (int k = n - 2; k >= 0; k--) {
        struct aff f = aff_of(w[k], i);
        acc = (struct aff){f.a * acc.a, f.a * acc.b + f.b};
    }
    return acc;
}

/* ---- the body on one communicator ---- */

static int check_comm(MPI_Comm c, int me, int n, int wrank, int *wranks)
{
    TC_MPI(MPI_Barrier(c));
    MPI_Datatype affty;
    TC_MPI(MPI_Type_contiguous(2, MPI_UNSIGNED, &affty));
    TC_MPI(MPI_Type_commit(&affty));
    MPI_Op compose;
    TC_MPI(MPI_Op_create(aff_compose, 0, &compose));
    for (int ci = 0; ci < NCOUNTS; ci++) {
        int cnt = counts[ci];
        int *buf = tc_alloc(sizeof(int) * (size_t)cnt);
        int *out = tc_alloc(sizeof(int) * (size_t)cnt);
        struct aff *fa = tc_alloc(sizeof *fa * (size_t)cnt);
        struct aff *fo = tc_alloc(sizeof *fo * (size_t)cnt);
        long sum_ranks = 0;
        for (int k = 0; k < n; k++)
            sum_ranks += wranks[k];
        for (int it = 0; it < 3; it++) {
            int root = it == 0 ? 0 : (it == 1 ? n - 1 : (ci + 1) % n); /* fixed, rotating */
            /* Bcast */
            for (int i = 0; i < cnt; i++)
                buf[i] = me == root ? i * 3 + root : TC_GAP;
            TC_MPI(MPI_Bcast(buf, cnt, MPI_INT, root, c));
            for (int i = 0; i < cnt; i++)
                TC_CHECK(buf[i] == i * 3 + root, "bcast count %d root %d: [%d] = %d, expected %d",
                         cnt, root, i, buf[i], i * 3 + root);
            /* Reduce (sum) and Allreduce */
            for (int i = 0; i < cnt; i++) {
                buf[i] = wrank + i;
                out[i] = TC_GAP;
            }
            TC_MPI(MPI_Reduce(buf, out, cnt, MPI_INT, MPI_SUM, root, c));
            for (int i = 0; me == root && i < cnt; i++)
                TC_CHECK(out[i] == (int)(sum_ranks + (long)n * i),
                         "reduce count %d root %d: [%d] = %d, expected %ld", cnt, root, i, out[i],
                         sum_ranks + (long)n * i);
            for (int i = 0; me != root && i < cnt; i++)
                TC_CHECK(out[i] == TC_GAP, "reduce wrote a non-root's buffer: [%d] = %d", i,
                         out[i]);
            TC_MPI(MPI_Allreduce(buf, out, cnt, MPI_INT, MPI_SUM, c));
            for (int i = 0; i < cnt; i++)
                TC_CHECK(out[i] == (int)(sum_ranks + (long)n * i),
                         "allreduce count %d: [%d] = %d, expected %ld", cnt, i, out[i],
                         sum_ranks + (long)n * i);
            /* In place at the root */
            for (int i = 0; i < cnt; i++)
                out[i] = wrank + i;
            TC_MPI(MPI_Reduce(me == root ? MPI_IN_PLACE : out, me == root ? out : NULL, cnt,
                              MPI_INT, MPI_SUM, root, c));
            for (int i = 0; me == root && i < cnt; i++)
                TC_CHECK(out[i] == (int)(sum_ranks + (long)n * i),
                         "in-place reduce count %d: [%d] = %d", cnt, i, out[i]);
            /* Non-commutative: rank order */
            if (cnt > 20000 && it) continue; /* keep the large user-op runs to one root */
            for (int i = 0; i < cnt; i++) {
                fa[i] = aff_of(wrank, i);
                fo[i] = (struct aff){0, 0};
            }
            TC_MPI(MPI_Reduce(fa, fo, cnt, affty, compose, root, c));
            for (int i = 0; me == root && i < cnt; i++) {
                struct aff e = aff_ref(wranks, n, i);
                TC_CHECK(fo[i].a == e.a && fo[i].b == e.b,
                         "non-commutative reduce count %d root %d: [%d] = (%u,%u), expected "
                         "(%u,%u)",
                         cnt, root, i, fo[i].a, fo[i].b, e.a, e.b);
            }
            TC_MPI(MPI_Allreduce(fa, fo, cnt, affty, compose, c));
            for (int i = 0; i < cnt; i++) {
                struct aff e = aff_ref(wranks, n, i);
                TC_CHECK(fo[i].a == e.a && fo[i].b == e.b,
                         "non-commutative allreduce count %d: [%d] = (%u,%u), expected (%u,%u)",
                         cnt, i, fo[i].a, fo[i].b, e.a, e.b);
            }
        }
        free(buf);
        free(out);
        free(fa);
        free(fo);
    }
    TC_MPI(MPI_Op_free(&compose));
    TC_MPI(MPI_Type_free(&affty));
    return 0;
}

static int body_world(int rank, int size, void *arg)
{
    (void)arg;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    int *w = tc_alloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        w[i] = i;
    int r = check_comm(MPI_COMM_WORLD, rank, size, rank, w);
    free(w);
    TC_MPI(MPI_Finalize());
    return r;
}

static int test_world(void)
{
    return run_layouts(body_world);
}

/* ---- new communicators across nodes ---- */

enum { SPLIT_DUP, SPLIT_PARITY, SPLIT_TWO_NODES, SPLIT_THIRDS, SPLIT_SHARED, NSPLITS };

static void color_key(int kind, int r, int size, const int32_t *node_of, int *color, int *key)
{
    switch (kind) {
    case SPLIT_DUP:
        *color = 0, *key = r;
        break;
    case SPLIT_PARITY: /* reversed order: comm rank != world rank */
        *color = r % 2, *key = size - r;
        break;
    case SPLIT_TWO_NODES: /* only some nodes */
        *color = node_of[r] < 2 ? 0 : MPI_UNDEFINED, *key = r;
        break;
    case SPLIT_THIRDS: /* some ranks of some nodes */
        *color = r % 3 == 0 ? 0 : 1, *key = -r;
        break;
    default:
        *color = node_of[r], *key = 0;
        break;
    }
}

static int body_comms(int rank, int size, void *arg)
{
    (void)arg;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    const int32_t *node_of = tmpi_svc.rank_self()->node_of_rank;
    int *w = tc_alloc(sizeof(int) * (size_t)size);
    for (int kind = 0; kind < NSPLITS; kind++) {
        int color, key;
        color_key(kind, rank, size, node_of, &color, &key);
        MPI_Comm c;
        if (kind == SPLIT_DUP)
            TC_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        else if (kind == SPLIT_SHARED)
            TC_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
        else
            TC_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, key, &c));
        /* The expected members in order: (key, world rank) among those of my color. */
        int n = 0;
        for (int k = -size; k <= size && color != MPI_UNDEFINED; k++)
            for (int r = 0; r < size; r++) {
                int cr, kr;
                color_key(kind, r, size, node_of, &cr, &kr);
                if (cr == color && kr == k) w[n++] = r;
            }
        if (color == MPI_UNDEFINED) {
            TC_CHECK(c == MPI_COMM_NULL, "split kind %d: expected MPI_COMM_NULL", kind);
            continue;
        }
        int me = -1, nn = -1;
        TC_MPI(MPI_Comm_rank(c, &me));
        TC_MPI(MPI_Comm_size(c, &nn));
        TC_CHECK(nn == n, "split kind %d: size %d, expected %d", kind, nn, n);
        TC_CHECK(w[me] == rank, "split kind %d: rank %d in the new communicator is world rank %d",
                 kind, me, w[me]);
        if (check_comm(c, me, n, rank, w)) return 1;
        TC_MPI(MPI_Comm_free(&c));
    }
    free(w);
    TC_MPI(MPI_Finalize());
    return 0;
}

static int test_comms(void)
{
    return run_layouts(body_comms);
}

/* Each algorithm forced by its environment variable, on the layouts. */
static int test_forced(void)
{
    static const char *const bc[] = {"flat", "binomial", "binary"};
    static const char *const ar[] = {"recursive_doubling", "reduce_bcast", "ring"};
    for (int i = 0; i < 3; i++) {
        setenv("TMPI_COLL_BCAST", bc[i], 1);
        setenv("TMPI_COLL_REDUCE", bc[i], 1);
        setenv("TMPI_COLL_ALLREDUCE", ar[i], 1);
        int r = run_layouts(body_world);
        unsetenv("TMPI_COLL_BCAST");
        unsetenv("TMPI_COLL_REDUCE");
        unsetenv("TMPI_COLL_ALLREDUCE");
        if (r) {
            fprintf(stderr, "  with bcast/reduce %s, allreduce %s\n", bc[i], ar[i]);
            return 1;
        }
    }
    return 0;
}

/* ---- counters: one Bcast and one Reduce on 3 nodes x 4 ranks cross 2 edges each ---- */

static int body_counters(int rank, int size, void *arg)
{
    (void)arg, (void)size;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    int v[4] = {rank, rank, rank, rank};
    MPI_Count b0, b1, r0, r1, ops;
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_BCAST, &ops, &b0));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_REDUCE, &ops, &r0));
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPI_Bcast(v, 4, MPI_INT, 5, MPI_COMM_WORLD));
    int out[4];
    TC_MPI(MPI_Reduce(v, out, 4, MPI_INT, MPI_SUM, 9, MPI_COMM_WORLD));
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_BCAST, &ops, &b1));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_REDUCE, &ops, &r1));
    /* Each node counts its own messages: one rank per node contributes its node's. */
    int first_here = tmpi_svc.rank_self()->local_rank == 0 || !tn_cur->sim;
    long long d[2] = {first_here ? (long long)(b1 - b0) : 0, first_here ? (long long)(r1 - r0) : 0};
    long long tot[2];
    if (tn_cur->sim) {
        TC_MPI(MPI_Allreduce(d, tot, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    } else {
        tot[0] = d[0];
        tot[1] = d[1];
    }
    TC_CHECK(tot[0] == 2, "a Bcast on 3 nodes sent %lld network messages, expected 2", tot[0]);
    TC_CHECK(tot[1] == 2, "a Reduce on 3 nodes sent %lld network messages, expected 2", tot[1]);
    TC_CHECK(v[0] == 5, "bcast: %d", v[0]);
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPI_Finalize());
    return 0;
}

static int test_counters(void)
{
    static const struct layout one_job = {"3x4", 0, 0, 3, 12, {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}};
    return run_layout(&layouts[2], body_counters) || run_layout(&one_job, body_counters);
}

static const struct th_test tests[] = {
    {"counters_3x4", test_counters},    {"world", test_world}, {"dup_split_free", test_comms},
    {"forced_algorithms", test_forced}, {NULL, NULL},
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests);
}
