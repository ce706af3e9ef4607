/* test_coll_net_move.c — Gather(v), Scatter(v), Allgather(v), Alltoall(v,w),
 * Reduce_scatter(_block), Scan and Exscan on communicators that span nodes (coll_net_move.c).
 *
 * Layouts: 4x1, 1x4 (one node: the shared-memory engine, as a reference), 4x4, uneven 3+3+1
 * and round-robin 2x3 on nodes the harness simulates (frames over its collective channel), and
 * 5 uneven interleaved nodes in one job state whose ranks are told their node.  Each runs on
 * MPI_COMM_WORLD and on two splits (reversed order; some ranks of some nodes).  Counts: 0, 1,
 * odd, and (world and the first split) blocks over the 100 KiB eager limit between nodes; roots
 * fixed and rotating; MPI_IN_PLACE where MPI allows it; the non-blocking forms; a non-commutative
 * user op (composition of affine maps) for Reduce_scatter, Scan and Exscan, which shows any
 * deviation from rank order.  Every rank checks its own result, and gaps in v layouts stay
 * untouched. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "coll_check.h"
#include "net_layout.h"

static const struct layout layouts[] = {
    {"4x1 (nodes)", 1, 0, 4, 4, {0}},
    {"1x4", 1, 0, 1, 4, {0}},
    {"4x4 (nodes)", 1, 0, 4, 16, {0}},
    {"3+3+1 (nodes)", 1, 0, 3, 7, {0}},
    {"2x3 round-robin (nodes)", 1, 1, 2, 6, {0}},
    {"5 nodes uneven, interleaved", 0, 0, 5, 9, {0, 1, 1, 2, 3, 3, 3, 4, 0}},
};
#define NLAYOUTS (int)(sizeof layouts / sizeof layouts[0])

/* Element counts: empty, one, odd, and 26000 ints (104 KB: three-phase between nodes). */
static const int counts[] = {0, 1, 7, 26000};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

static int val(int w, int i)
{
    return w * 100003 + i;
}

/* ---- the non-commutative op: affine maps x -> a x + b (mod 2^32), composed ---- */

/* f_{w[lo]} o ... o f_{w[hi-1]} at element i */
static struct aff aff_ref(const int *w, int lo, int hi, int i)
{
    struct aff acc = aff_of(w[hi - 1], i);
    for (int k = hi - 2; k >= lo; k--) {
        struct aff f = aff_of(w[k], i);
        acc = (struct aff){f.a * acc.a, f.a * acc.b + f.b};
    }
    return acc;
}

/* What one communicator's run shares. */
struct ctx {
    MPI_Comm c;
    int me, n;
    const int *w; /* comm rank -> world rank */
    int large;    /* run the count over the eager limit too */
    MPI_Datatype affty, int2;
    MPI_Op compose;
};

/* ---- Gather, Scatter, Allgather ---- */

static void check_gather(const struct ctx *x, int cnt, int root, int nb)
{
    int me = x->me, n = x->n, wme = x->w[me];
    int *s = tc_alloc(sizeof(int) * (size_t)cnt), *r = tc_alloc(sizeof(int) * (size_t)cnt * n);
    for (int i = 0; i < cnt; i++)
        s[i] = val(wme, i);
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < cnt * n; i++)
            r[i] = me == root && ip ? val(wme, i - me * cnt) : TC_GAP;
        const void *sb = ip && me == root ? MPI_IN_PLACE : s;
        if (nb) {
            MPI_Request q;
            TC_MPI(MPI_Igather(sb, cnt, MPI_INT, r, cnt, MPI_INT, root, x->c, &q));
            TC_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            TC_MPI(MPI_Gather(sb, cnt, MPI_INT, r, cnt, MPI_INT, root, x->c));
        }
        for (int j = 0; me == root && j < n; j++)
            for (int i = 0; i < cnt; i++)
                TC_CHECK(r[j * cnt + i] == val(x->w[j], i),
                         "gather%s count %d root %d: block %d [%d] = %d, expected %d",
                         ip ? " in place" : "", cnt, root, j, i, r[j * cnt + i], val(x->w[j], i));
    }
    /* Gatherv: rank j sends (j % 3) * cnt / 2 elements; blocks in reverse order with gaps */
    int *rc = tc_alloc(sizeof(int) * (size_t)n), *dp = tc_alloc(sizeof(int) * (size_t)n);
    int tot = 0;
    for (int j = n - 1; j >= 0; j--) {
        rc[j] = (j % 3) * cnt / 2;
        dp[j] = tot + 1;
        tot += rc[j] + 1;
    }
    int *rv = tc_alloc(sizeof(int) * (size_t)tot);
    for (int i = 0; i < tot; i++)
        rv[i] = TC_GAP;
    TC_MPI(MPI_Gatherv(s, rc[me], MPI_INT, rv, rc, dp, MPI_INT, root, x->c));
    for (int j = 0; me == root && j < n; j++) {
        TC_CHECK(rv[dp[j] - 1] == TC_GAP, "gatherv wrote a gap before block %d", j);
        for (int i = 0; i < rc[j]; i++)
            TC_CHECK(rv[dp[j] + i] == val(x->w[j], i), "gatherv count %d root %d: block %d [%d]",
                     cnt, root, j, i);
    }
    /* Scatter(v): the root's block j for rank j */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < cnt; i++)
            r[j * cnt + i] = me == root ? val(x->w[j] + 50, i) : TC_GAP;
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < cnt; i++)
            s[i] = TC_GAP;
        void *rb = ip && me == root ? MPI_IN_PLACE : s;
        if (nb) {
            MPI_Request q;
            TC_MPI(MPI_Iscatter(r, cnt, MPI_INT, rb, cnt, MPI_INT, root, x->c, &q));
            TC_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            TC_MPI(MPI_Scatter(r, cnt, MPI_INT, rb, cnt, MPI_INT, root, x->c));
        }
        for (int i = 0; !(ip && me == root) && i < cnt; i++)
            TC_CHECK(s[i] == val(wme + 50, i), "scatter%s count %d root %d: [%d] = %d",
                     ip ? " in place" : "", cnt, root, i, s[i]);
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < rc[j]; i++)
            rv[dp[j] + i] = me == root ? val(x->w[j] + 60, i) : TC_GAP;
    for (int i = 0; i < cnt; i++)
        s[i] = TC_GAP;
    TC_MPI(MPI_Scatterv(rv, rc, dp, MPI_INT, s, rc[me], MPI_INT, root, x->c));
    for (int i = 0; i < cnt; i++)
        TC_CHECK(s[i] == (i < rc[me] ? val(wme + 60, i) : TC_GAP),
                 "scatterv count %d root %d: [%d] = %d", cnt, root, i, s[i]);
    free(s);
    free(r);
    free(rv);
    free(rc);
    free(dp);
}

static void check_allgather(const struct ctx *x, int cnt, int nb)
{
    int me = x->me, n = x->n, wme = x->w[me];
    int *s = tc_alloc(sizeof(int) * (size_t)cnt), *r = tc_alloc(sizeof(int) * (size_t)cnt * n);
    for (int i = 0; i < cnt; i++)
        s[i] = val(wme, i);
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < cnt * n; i++)
            r[i] = ip && i / cnt == me ? val(wme, i - me * cnt) : TC_GAP;
        const void *sb = ip ? MPI_IN_PLACE : s;
        if (nb) {
            MPI_Request q;
            TC_MPI(MPI_Iallgather(sb, cnt, MPI_INT, r, cnt, MPI_INT, x->c, &q));
            TC_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            TC_MPI(MPI_Allgather(sb, cnt, MPI_INT, r, cnt, MPI_INT, x->c));
        }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < cnt; i++)
                TC_CHECK(r[j * cnt + i] == val(x->w[j], i),
                         "allgather%s count %d: block %d [%d] = %d, expected %d",
                         ip ? " in place" : "", cnt, j, i, r[j * cnt + i], val(x->w[j], i));
    }
    /* Allgatherv with a contiguous type of 2 ints on the receiving side */
    int *rc = tc_alloc(sizeof(int) * (size_t)n), *dp = tc_alloc(sizeof(int) * (size_t)n);
    int tot = 0;
    for (int j = 0; j < n; j++) {
        rc[j] = ((j + 1) % 3) * (cnt / 4); /* pairs */
        dp[j] = tot;
        tot += rc[j] + 1;
    }
    int *rv = tc_alloc(sizeof(int) * 2 * (size_t)tot);
    for (int i = 0; i < 2 * tot; i++)
        rv[i] = TC_GAP;
    TC_MPI(MPI_Allgatherv(s, 2 * rc[me], MPI_INT, rv, rc, dp, x->int2, x->c));
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < 2 * rc[j]; i++)
            TC_CHECK(rv[2 * dp[j] + i] == val(x->w[j], i), "allgatherv count %d: block %d [%d]",
                     cnt, j, i);
        TC_CHECK(rv[2 * (dp[j] + rc[j])] == TC_GAP, "allgatherv wrote the gap after block %d", j);
    }
    free(s);
    free(r);
    free(rv);
    free(rc);
    free(dp);
}

/* ---- Alltoall(v,w) ---- */

static int a2a_val(int from, int to, int i)
{
    return from * 1000003 + to * 1009 + i;
}

static void check_alltoall(const struct ctx *x, int cnt, int nb)
{
    int me = x->me, n = x->n, wme = x->w[me];
    size_t all = (size_t)cnt * (size_t)n;
    int *s = tc_alloc(sizeof(int) * all), *r = tc_alloc(sizeof(int) * all);
    for (int ip = 0; ip < 2; ip++) {
        int *in = ip ? r : s;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < cnt; i++) {
                in[j * cnt + i] = a2a_val(wme, x->w[j], i);
                if (!ip) r[j * cnt + i] = TC_GAP;
            }
        const void *sb = ip ? MPI_IN_PLACE : s;
        if (nb) {
            MPI_Request q;
            TC_MPI(MPI_Ialltoall(sb, cnt, MPI_INT, r, cnt, MPI_INT, x->c, &q));
            TC_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            TC_MPI(MPI_Alltoall(sb, cnt, MPI_INT, r, cnt, MPI_INT, x->c));
        }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < cnt; i++)
                TC_CHECK(r[j * cnt + i] == a2a_val(x->w[j], wme, i),
                         "alltoall%s count %d: from %d [%d] = %d, expected %d",
                         ip ? " in place" : "", cnt, j, i, r[j * cnt + i],
                         a2a_val(x->w[j], wme, i));
    }
    free(s);
    free(r);
    /* v: j sends (j + k) % 3 * cnt / 2 elements to k, blocks in reverse order with gaps;
     * w: the same counts in bytes displacements, pairs (int2) on the receiving side when the
     * count is even */
    int *sc = tc_alloc(sizeof(int) * (size_t)n), *sd = tc_alloc(sizeof(int) * (size_t)n);
    int *rc = tc_alloc(sizeof(int) * (size_t)n), *rd = tc_alloc(sizeof(int) * (size_t)n);
    int stot = 0, rtot = 0;
    for (int k = n - 1; k >= 0; k--) {
        sc[k] = (me + k) % 3 * cnt / 2;
        sd[k] = stot;
        stot += sc[k] + 1;
        rc[k] = (k + me) % 3 * cnt / 2;
        rd[k] = rtot;
        rtot += rc[k] + 1;
    }
    int *sv = tc_alloc(sizeof(int) * (size_t)stot), *rv = tc_alloc(sizeof(int) * (size_t)rtot);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < sc[k]; i++)
            sv[sd[k] + i] = a2a_val(wme, x->w[k], i);
    for (int wv = 0; wv < 2; wv++) {
        for (int i = 0; i < rtot; i++)
            rv[i] = TC_GAP;
        if (!wv) {
            TC_MPI(MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, x->c));
        } else {
            int *sb = tc_alloc(sizeof(int) * (size_t)n), *rb = tc_alloc(sizeof(int) * (size_t)n);
            int *rcw = tc_alloc(sizeof(int) * (size_t)n);
            MPI_Datatype *st = tc_alloc(sizeof *st * (size_t)n),
                         *rt = tc_alloc(sizeof *rt * (size_t)n);
            for (int k = 0; k < n; k++) {
                sb[k] = sd[k] * (int)sizeof(int);
                rb[k] = rd[k] * (int)sizeof(int);
                st[k] = MPI_INT;
                int pairs = rc[k] % 2 == 0 && (k + me) % 2;
                rt[k] = pairs ? x->int2 : MPI_INT;
                rcw[k] = pairs ? rc[k] / 2 : rc[k];
            }
            TC_MPI(MPI_Alltoallw(sv, sc, sb, st, rv, rcw, rb, rt, x->c));
            free(sb);
            free(rb);
            free(rcw);
            free(st);
            free(rt);
        }
        for (int k = 0; k < n; k++) {
            for (int i = 0; i < rc[k]; i++)
                TC_CHECK(rv[rd[k] + i] == a2a_val(x->w[k], wme, i),
                         "alltoall%s count %d: from %d [%d] = %d, expected %d", wv ? "w" : "v", cnt,
                         k, i, rv[rd[k] + i], a2a_val(x->w[k], wme, i));
            TC_CHECK(rv[rd[k] + rc[k]] == TC_GAP, "alltoall%s wrote the gap after block %d",
                     wv ? "w" : "v", k);
        }
    }
    free(sv);
    free(rv);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* ---- Reduce_scatter(_block), Scan, Exscan ---- */

static void check_reductions(const struct ctx *x, int cnt, int nb)
{
    int me = x->me, n = x->n, wme = x->w[me];
    long long sumw = 0;
    for (int k = 0; k < n; k++)
        sumw += x->w[k];
    /* Reduce_scatter_block, sum, in place and not */
    size_t all = (size_t)cnt * (size_t)n;
    int *s = tc_alloc(sizeof(int) * all), *r = tc_alloc(sizeof(int) * all);
    for (int ip = 0; ip < 2; ip++) {
        int *in = ip ? r : s;
        for (size_t i = 0; i < all; i++)
            in[i] = val(wme, (int)i);
        for (int i = 0; !ip && i < cnt; i++)
            r[i] = TC_GAP;
        const void *sb = ip ? MPI_IN_PLACE : s;
        if (nb) {
            MPI_Request q;
            TC_MPI(MPI_Ireduce_scatter_block(sb, r, cnt, MPI_INT, MPI_SUM, x->c, &q));
            TC_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            TC_MPI(MPI_Reduce_scatter_block(sb, r, cnt, MPI_INT, MPI_SUM, x->c));
        }
        for (int i = 0; i < cnt; i++) {
            int e = (int)(sumw * 100003 + (long long)n * (me * cnt + i));
            TC_CHECK(r[i] == e, "reduce_scatter_block%s count %d: [%d] = %d, expected %d",
                     ip ? " in place" : "", cnt, i, r[i], e);
        }
    }
    free(s);
    free(r);
    /* Reduce_scatter, non-commutative: rank k gets (k % 3) * cnt / 2 maps */
    int *rc = tc_alloc(sizeof(int) * (size_t)n), tot = 0, off = 0;
    for (int k = 0; k < n; k++) {
        rc[k] = (k % 3) * cnt / 2;
        if (k == me) off = tot;
        tot += rc[k];
    }
    struct aff *fa = tc_alloc(sizeof *fa * (size_t)tot), *fo = tc_alloc(sizeof *fo * (size_t)cnt);
    for (int i = 0; i < tot; i++)
        fa[i] = aff_of(wme, i);
    TC_MPI(MPI_Reduce_scatter(fa, fo, rc, x->affty, x->compose, x->c));
    for (int i = 0; i < rc[me]; i++) {
        struct aff e = aff_ref(x->w, 0, n, off + i);
        TC_CHECK(fo[i].a == e.a && fo[i].b == e.b,
                 "non-commutative reduce_scatter count %d: [%d] = (%u,%u), expected (%u,%u)", cnt,
                 i, fo[i].a, fo[i].b, e.a, e.b);
    }
    free(fa);
    free(rc);
    /* Scan and Exscan: sum, and the non-commutative op in place */
    int *si = tc_alloc(sizeof(int) * (size_t)cnt), *so = tc_alloc(sizeof(int) * (size_t)cnt);
    long long pre = 0;
    for (int k = 0; k <= me; k++)
        pre += x->w[k];
    for (int ex = 0; ex < 2; ex++) {
        for (int i = 0; i < cnt; i++) {
            si[i] = val(wme, i);
            so[i] = TC_GAP;
        }
        if (nb) {
            MPI_Request q;
            TC_MPI((ex ? MPI_Iexscan : MPI_Iscan)(si, so, cnt, MPI_INT, MPI_SUM, x->c, &q));
            TC_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            TC_MPI((ex ? MPI_Exscan : MPI_Scan)(si, so, cnt, MPI_INT, MPI_SUM, x->c));
        }
        long long p = ex ? pre - wme : pre;
        int terms = ex ? me : me + 1;
        for (int i = 0; i < cnt && !(ex && me == 0); i++) {
            int e = (int)(p * 100003 + (long long)terms * i);
            TC_CHECK(so[i] == e, "%s count %d: [%d] = %d, expected %d", ex ? "exscan" : "scan", cnt,
                     i, so[i], e);
        }
        for (int i = 0; i < cnt; i++)
            fo[i] = aff_of(wme, i);
        TC_MPI((ex ? MPI_Exscan : MPI_Scan)(MPI_IN_PLACE, fo, cnt, x->affty, x->compose, x->c));
        for (int i = 0; i < cnt && !(ex && me == 0); i++) {
            struct aff e = aff_ref(x->w, 0, ex ? me : me + 1, i);
            TC_CHECK(fo[i].a == e.a && fo[i].b == e.b,
                     "non-commutative %s in place count %d: [%d] = (%u,%u), expected (%u,%u)",
                     ex ? "exscan" : "scan", cnt, i, fo[i].a, fo[i].b, e.a, e.b);
        }
    }
    free(si);
    free(so);
    free(fo);
}

static int check_comm(struct ctx *x)
{
    TC_MPI(MPI_Type_contiguous(2, MPI_UNSIGNED, &x->affty));
    TC_MPI(MPI_Type_commit(&x->affty));
    TC_MPI(MPI_Type_contiguous(2, MPI_INT, &x->int2));
    TC_MPI(MPI_Type_commit(&x->int2));
    TC_MPI(MPI_Op_create(aff_compose, 0, &x->compose));
    for (int ci = 0; ci < (x->large ? NCOUNTS : NCOUNTS - 1); ci++) {
        int cnt = counts[ci], nb = ci == 2; /* the odd count runs the MPI_I* forms */
        check_gather(x, cnt, 0, nb);
        check_gather(x, cnt, (ci * 5 + 1) % x->n, nb); /* rotating */
        check_allgather(x, cnt, nb);
        check_alltoall(x, cnt, nb);
        check_reductions(x, cnt, nb);
    }
    TC_MPI(MPI_Op_free(&x->compose));
    TC_MPI(MPI_Type_free(&x->int2));
    TC_MPI(MPI_Type_free(&x->affty));
    return 0;
}

static int body(int rank, int size, void *arg)
{
    (void)arg;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    int *w = tc_alloc(sizeof(int) * (size_t)size);
    for (int kind = 0; kind < 3; kind++) {
        MPI_Comm c = MPI_COMM_WORLD;
        /* 1: parity halves in reversed order; 2: every third rank and the rest, reversed */
        int color = kind == 1 ? rank % 2 : rank % 3 == 0, key = size - rank;
        if (kind) TC_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, key, &c));
        int n = 0;
        for (int r = size - 1; r >= 0; r--)
            if (!kind || (kind == 1 ? r % 2 : r % 3 == 0) == color) w[n++] = r;
        if (!kind)
            for (int r = 0; r < size; r++)
                w[r] = r;
        /* the large count on two of the communicators keeps the run short under TSan */
        struct ctx x = {.c = c, .w = w, .large = kind < 2};
        TC_MPI(MPI_Comm_rank(c, &x.me));
        TC_MPI(MPI_Comm_size(c, &x.n));
        TC_CHECK(x.n == n && w[x.me] == rank, "split %d: size %d (expected %d), rank %d is %d",
                 kind, x.n, n, x.me, w[x.me]);
        if (check_comm(&x)) return 1;
        if (kind) TC_MPI(MPI_Comm_free(&c));
    }
    free(w);
    TC_MPI(MPI_Finalize());
    return 0;
}

static int test_layouts(void)
{
    for (int i = 0; i < NLAYOUTS; i++)
        if (run_layout(&layouts[i], body)) return 1;
    return 0;
}

/* Network messages of one Gather and one Alltoall on 3 nodes x 4 ranks: the root's node
 * receives one message from each other node (2); every pair of nodes exchanges one each way
 * (6).  Summed over the nodes: one rank per node contributes its node's count. */
static int body_counters(int rank, int size, void *arg)
{
    (void)arg;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    int v[2] = {rank, rank}, *all = tc_alloc(sizeof(int) * 2 * (size_t)size);
    MPI_Count g0, g1, a0, a1, ops;
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_GATHER, &ops, &g0));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_ALLTOALL, &ops, &a0));
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPI_Gather(v, 2, MPI_INT, all, 2, MPI_INT, 5, MPI_COMM_WORLD));
    int *in = tc_alloc(sizeof(int) * 2 * (size_t)size);
    for (int i = 0; i < 2 * size; i++)
        in[i] = rank;
    TC_MPI(MPI_Alltoall(in, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_GATHER, &ops, &g1));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_ALLTOALL, &ops, &a1));
    int first_here = tmpi_svc.rank_self()->local_rank == 0;
    long long d[2] = {first_here ? (long long)(g1 - g0) : 0, first_here ? (long long)(a1 - a0) : 0};
    long long tot[2];
    TC_MPI(MPI_Allreduce(d, tot, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    TC_CHECK(tot[0] == 2, "a Gather on 3 nodes sent %lld network messages, expected 2", tot[0]);
    TC_CHECK(tot[1] == 6, "an Alltoall on 3 nodes sent %lld network messages, expected 6", tot[1]);
    for (int j = 0; j < size; j++)
        TC_CHECK(all[2 * j] == j, "alltoall: from %d got %d", j, all[2 * j]);
    free(all);
    free(in);
    TC_MPI(MPI_Finalize());
    return 0;
}

static int test_counters(void)
{
    static const struct layout l = {"3x4 (nodes)", 1, 0, 3, 12, {0}};
    return run_layout(&l, body_counters);
}

static const struct th_test tests[] = {
    {"layouts", test_layouts},
    {"counters_3x4", test_counters},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests);
}
