/* test_coll_nb.c — non-blocking collectives (every MPI_I* collective) completed through the
 * Wait/Test family, overlapped with point-to-point, several in flight at once, progress
 * without the peers waiting; plus the communicator basics collectives need (split_type,
 * compare), argument errors, and the per-job collective counters. */
#include "coll_check.h"

static int val(int src, int dst, int i, int salt)
{
    return src * 1000003 + dst * 7919 + i * 3 + salt;
}

/* Every non-blocking collective once, each overlapped with a ring exchange, waited with a
 * mix of Wait, Waitall and Test loops. */
static int rank_each(MPI_Comm c, int me, int n)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int ci = 0; ci < TC_NCOUNTS; ci++) {
        int count = tc_counts[ci] > 5000 ? 3001 : tc_counts[ci];
        size_t cap = (size_t)(count + 2) * (size_t)n + 4;
        int *s = tc_alloc(sizeof(int) * cap), *r = tc_alloc(sizeof(int) * cap);
        int *cnt = tc_alloc(sizeof(int) * (size_t)n), *dsp = tc_alloc(sizeof(int) * (size_t)n);
        for (int j = 0; j < n; j++)
            cnt[j] = count, dsp[j] = j * count;
        for (int round = 0; round < 3; round++) {
            int root = round == 0 ? 0 : round == 1 ? n - 1 : (n / 2);
            MPI_Request q[3];
            int token = -1, mine = val(me, right, round, 5);
            TC_MPI(MPI_Irecv(&token, 1, MPI_INT, left, 77, c, &q[0]));
            /* Ibcast */
            for (int i = 0; i < count; i++)
                r[i] = me == root ? val(root, 0, i, round) : -1;
            TC_MPI(MPI_Ibcast(r, count, MPI_INT, root, c, &q[1]));
            TC_MPI(MPI_Isend(&mine, 1, MPI_INT, right, 77, c, &q[2]));
            TC_MPI(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
            TC_CHECK(token == val(left, me, round, 5), "ring token %d", token);
            for (int i = 0; i < count; i++)
                TC_CHECK(r[i] == val(root, 0, i, round), "Ibcast elem %d: %d", i, r[i]);
            /* Igather / Igatherv */
            for (int i = 0; i < count; i++)
                s[i] = val(me, root, i, round);
            MPI_Request g[2];
            int *r2 = tc_alloc(sizeof(int) * cap);
            TC_MPI(MPI_Igather(s, count, MPI_INT, r, count, MPI_INT, root, c, &g[0]));
            TC_MPI(MPI_Igatherv(s, count, MPI_INT, r2, cnt, dsp, MPI_INT, root, c, &g[1]));
            int flag = 0;
            while (!flag)
                TC_MPI(MPI_Testall(2, g, &flag, MPI_STATUSES_IGNORE));
            if (me == root)
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < count; i++) {
                        TC_CHECK(r[j * count + i] == val(j, root, i, round), "Igather %d/%d", j, i);
                        TC_CHECK(r2[j * count + i] == val(j, root, i, round), "Igatherv %d/%d", j,
                                 i);
                    }
            /* Iscatter / Iscatterv */
            if (me == root)
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < count; i++)
                        s[j * count + i] = val(root, j, i, round);
            TC_MPI(MPI_Iscatter(s, count, MPI_INT, r, count, MPI_INT, root, c, &g[0]));
            TC_MPI(MPI_Iscatterv(s, cnt, dsp, MPI_INT, r2, count, MPI_INT, root, c, &g[1]));
            TC_MPI(MPI_Wait(&g[1], MPI_STATUS_IGNORE));
            TC_MPI(MPI_Wait(&g[0], MPI_STATUS_IGNORE));
            TC_CHECK(g[0] == MPI_REQUEST_NULL && g[1] == MPI_REQUEST_NULL, "requests not nulled");
            for (int i = 0; i < count; i++)
                TC_CHECK(r[i] == val(root, me, i, round) && r2[i] == r[i], "Iscatter(v) elem %d",
                         i);
            /* Iallgather(v) */
            for (int i = 0; i < count; i++)
                s[i] = val(me, 0, i, round);
            TC_MPI(MPI_Iallgather(s, count, MPI_INT, r, count, MPI_INT, c, &g[0]));
            TC_MPI(MPI_Iallgatherv(s, count, MPI_INT, r2, cnt, dsp, MPI_INT, c, &g[1]));
            TC_MPI(MPI_Waitall(2, g, MPI_STATUSES_IGNORE));
            for (int j = 0; j < n; j++)
                for (int i = 0; i < count; i++)
                    TC_CHECK(r[j * count + i] == val(j, 0, i, round) &&
                                 r2[j * count + i] == r[j * count + i],
                             "Iallgather(v) %d/%d", j, i);
            /* Ialltoall(v) */
            for (int j = 0; j < n; j++)
                for (int i = 0; i < count; i++)
                    s[j * count + i] = val(me, j, i, round);
            TC_MPI(MPI_Ialltoall(s, count, MPI_INT, r, count, MPI_INT, c, &g[0]));
            TC_MPI(MPI_Ialltoallv(s, cnt, dsp, MPI_INT, r2, cnt, dsp, MPI_INT, c, &g[1]));
            int idx;
            TC_MPI(MPI_Waitany(2, g, &idx, MPI_STATUS_IGNORE));
            TC_MPI(MPI_Waitany(2, g, &idx, MPI_STATUS_IGNORE));
            /* Ialltoallw in place: byte displacements, one MPI_INT each */
            {
                int *wc = tc_alloc(sizeof(int) * (size_t)n),
                    *wd = tc_alloc(sizeof(int) * (size_t)n);
                MPI_Datatype *wt = tc_alloc(sizeof(MPI_Datatype) * (size_t)n);
                int *wb = tc_alloc(sizeof(int) * (size_t)n);
                for (int j = 0; j < n; j++)
                    wc[j] = 1, wd[j] = (n - 1 - j) * (int)sizeof(int), wt[j] = MPI_INT,
                    wb[n - 1 - j] = val(me, j, round, 9);
                TC_MPI(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, wb, wc, wd, wt, c, &g[0]));
                TC_MPI(MPI_Wait(&g[0], MPI_STATUS_IGNORE));
                for (int j = 0; j < n; j++)
                    TC_CHECK(wb[n - 1 - j] == val(j, me, round, 9), "Ialltoallw from %d", j);
                free(wc), free(wd), free(wt), free(wb);
            }
            for (int j = 0; j < n; j++)
                for (int i = 0; i < count; i++)
                    TC_CHECK(r[j * count + i] == val(j, me, i, round) &&
                                 r2[j * count + i] == r[j * count + i],
                             "Ialltoall(v) %d/%d", j, i);
            /* reductions */
            long *li = tc_alloc(sizeof(long) * cap), *lo = tc_alloc(sizeof(long) * cap);
            long *l2 = tc_alloc(sizeof(long) * cap);
            for (size_t i = 0; i < (size_t)count * (size_t)n; i++)
                li[i] = (long)me * 100 + (long)i;
            MPI_Request rq[4];
            TC_MPI(MPI_Ireduce(li, lo, count, MPI_LONG, MPI_SUM, root, c, &rq[0]));
            TC_MPI(MPI_Iallreduce(li, l2, count, MPI_LONG, MPI_MAX, c, &rq[1]));
            TC_MPI(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
            TC_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
            for (int i = 0; i < count; i++) {
                long sum = (long)n * (n - 1) / 2 * 100 + (long)n * i;
                if (me == root) TC_CHECK(lo[i] == sum, "Ireduce elem %d: %ld", i, lo[i]);
                TC_CHECK(l2[i] == (long)(n - 1) * 100 + i, "Iallreduce elem %d: %ld", i, l2[i]);
            }
            TC_MPI(MPI_Ireduce_scatter_block(li, lo, count, MPI_LONG, MPI_SUM, c, &rq[0]));
            TC_MPI(MPI_Ireduce_scatter(li, l2, cnt, MPI_LONG, MPI_SUM, c, &rq[1]));
            long *sc = tc_alloc(sizeof(long) * cap), *ex = tc_alloc(sizeof(long) * cap);
            TC_MPI(MPI_Iscan(li, sc, count, MPI_LONG, MPI_SUM, c, &rq[2]));
            TC_MPI(MPI_Iexscan(li, ex, count, MPI_LONG, MPI_SUM, c, &rq[3]));
            TC_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
            for (int i = 0; i < count; i++) {
                long e = (long)n * (n - 1) / 2 * 100 + (long)n * (me * count + i);
                TC_CHECK(lo[i] == e && l2[i] == e, "Ireduce_scatter(_block) elem %d", i);
                long p = (long)me * (me + 1) / 2 * 100 + (long)(me + 1) * i;
                TC_CHECK(sc[i] == p, "Iscan elem %d: %ld expected %ld", i, sc[i], p);
                if (me > 0)
                    TC_CHECK(ex[i] == p - li[i], "Iexscan elem %d: %ld expected %ld", i, ex[i],
                             p - li[i]);
            }
            free(li), free(lo), free(l2), free(sc), free(ex), free(r2);
        }
        free(s), free(r), free(cnt), free(dsp);
    }
    return 0;
}

/* Many in flight on one communicator, completed in reverse order, with blocking collectives
 * in between (MPI allows it: their order is the same on every member). */
static int rank_inflight(MPI_Comm c, int me, int n)
{
    enum { K = 40 };
    MPI_Request q[K];
    int v[K], out[K];
    for (int k = 0; k < K; k++) {
        v[k] = me + k;
        if (k % 3 == 0)
            TC_MPI(MPI_Ibarrier(c, &q[k]));
        else
            TC_MPI(MPI_Iallreduce(&v[k], &out[k], 1, MPI_INT, MPI_SUM, c, &q[k]));
        if (k % 10 == 5) TC_MPI(MPI_Barrier(c));
    }
    for (int k = K - 1; k >= 0; k--)
        TC_MPI(MPI_Wait(&q[k], MPI_STATUS_IGNORE));
    for (int k = 0; k < K; k++)
        if (k % 3) TC_CHECK(out[k] == n * (n - 1) / 2 + n * k, "in flight %d: %d", k, out[k]);
    return 0;
}

/* Progress without the peers waiting: member 0 starts an Ibarrier and an Iallreduce and then
 * blocks in a receive that the others send only after their own Wait returned.  If
 * completion needed member 0 to call Wait, this would hang. */
static int rank_progress(MPI_Comm c, int me, int n)
{
    MPI_Request q[2];
    int v = me + 1, sum = 0;
    TC_MPI(MPI_Ibarrier(c, &q[0]));
    TC_MPI(MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c, &q[1]));
    if (me == 0) {
        for (int k = 1; k < n; k++) {
            int got = 0;
            TC_MPI(MPI_Recv(&got, 1, MPI_INT, k, 9, c, MPI_STATUS_IGNORE));
            TC_CHECK(got == n * (n + 1) / 2, "member %d saw sum %d", k, got);
        }
        TC_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    } else {
        TC_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        TC_MPI(MPI_Send(&sum, 1, MPI_INT, 0, 9, c));
    }
    TC_CHECK(sum == n * (n + 1) / 2, "Iallreduce sum %d", sum);
    return 0;
}

/* ---- communicator basics, errors, counters (world only) ---- */

#define EXPECT_ERR(call, cls)                                                                      \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        TC_CHECK(e_ == (cls), "%s: expected %s (%d), got %d", #call, #cls, cls, e_);               \
    } while (0)

static int rank_basics(int rank, int size, void *arg)
{
    TC_MPI(MPI_Init(NULL, NULL));
    MPI_Comm shm, rev, dup, half, none;
    TC_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    int n, me, res;
    TC_MPI(MPI_Comm_size(shm, &n));
    TC_MPI(MPI_Comm_rank(shm, &me));
    TC_CHECK(n == size && me == rank, "split_type on one node: size %d rank %d", n, me);
    TC_MPI(MPI_Comm_compare(MPI_COMM_WORLD, shm, &res));
    TC_CHECK(res == MPI_CONGRUENT, "world vs split_type: %d", res);
    TC_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    TC_MPI(MPI_Comm_compare(MPI_COMM_WORLD, rev, &res));
    TC_CHECK(res == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "world vs reversed: %d", res);
    TC_MPI(MPI_Comm_dup(rev, &dup));
    TC_MPI(MPI_Comm_compare(dup, rev, &res));
    TC_CHECK(res == MPI_CONGRUENT, "dup: %d", res);
    TC_MPI(MPI_Comm_compare(dup, dup, &res));
    TC_CHECK(res == MPI_IDENT, "same handle: %d", res);
    TC_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    TC_MPI(MPI_Comm_compare(MPI_COMM_WORLD, half, &res));
    TC_CHECK(res == (size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "world vs half: %d", res);
    TC_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none));
    TC_CHECK(none == MPI_COMM_NULL, "split_type(MPI_UNDEFINED) gave a communicator");

    /* counters: each call counts once per job, whatever the number of members */
    MPI_Count b0, b1, a0, a1, net;
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_BCAST, &b0, &net));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_ALLTOALL, &a0, NULL));
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int x = 5;
    for (int k = 0; k < 3; k++)
        TC_MPI(MPI_Bcast(&x, 1, MPI_INT, 0, shm));
    TC_MPI(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, &x, 0, MPI_INT, MPI_COMM_WORLD));
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_BCAST, &b1, &net));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_ALLTOALL, &a1, NULL));
    TC_CHECK(b1 - b0 == 3 && a1 - a0 == 1 && net == 0,
             "counters: bcast +%lld alltoall +%lld net %lld", b1 - b0, a1 - a0, net);

    /* argument errors come back as classes with MPI_ERRORS_RETURN */
    TC_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm w = MPI_COMM_WORLD;
    int v[4] = {0}, o[64];
    int cnt[16] = {0}, dsp[16] = {0};
    MPI_Request rq;
    EXPECT_ERR(MPI_Gather(v, 1, MPI_INT, o, 1, MPI_INT, size, w), MPI_ERR_ROOT);
    EXPECT_ERR(MPI_Scatter(v, 1, MPI_INT, o, 1, MPI_INT, -1, w), MPI_ERR_ROOT);
    EXPECT_ERR(MPI_Igather(v, 1, MPI_INT, o, 1, MPI_INT, size + 3, w, &rq), MPI_ERR_ROOT);
    EXPECT_ERR(MPI_Allgather(v, -1, MPI_INT, o, 1, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT_ERR(MPI_Alltoall(v, 1, 999, o, 1, MPI_INT, w), MPI_ERR_TYPE);
    EXPECT_ERR(MPI_Allgather(o, 1, MPI_INT, o, 1, MPI_INT, w), MPI_ERR_BUFFER);
    EXPECT_ERR(MPI_Allreduce(o, o, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    EXPECT_ERR(MPI_Scan(v, o, 1, MPI_INT, 77, w), MPI_ERR_OP);
    EXPECT_ERR(MPI_Exscan(v, o, 1, MPI_DOUBLE, MPI_BXOR, w), MPI_ERR_OP);
    EXPECT_ERR(MPI_Reduce_scatter_block(v, o, -2, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    EXPECT_ERR(MPI_Reduce_scatter(v, o, NULL, MPI_INT, MPI_SUM, w), MPI_ERR_ARG);
    cnt[0] = -1;
    EXPECT_ERR(MPI_Alltoallv(v, cnt, dsp, MPI_INT, o, cnt, dsp, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT_ERR(MPI_Ibarrier(w, NULL), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Ibcast(v, 1, MPI_INT, 0, 4242, &rq), MPI_ERR_COMM);
    EXPECT_ERR(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    if (size > 1 && rank != 0)
        EXPECT_ERR(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, o, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    EXPECT_ERR(MPI_Reduce_local(v, v, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    MPI_Datatype t = MPI_INT, ct;
    EXPECT_ERR(MPI_Type_free(&t), MPI_ERR_TYPE);
    EXPECT_ERR(MPI_Type_contiguous(-1, MPI_INT, &ct), MPI_ERR_COUNT);
    TC_MPI(MPI_Type_contiguous(2, MPI_INT, &ct));
    int sz = 0;
    TC_MPI(MPI_Type_size(ct, &sz)); /* allowed before commit */
    TC_CHECK(sz == 8, "uncommitted size %d", sz);
    EXPECT_ERR(MPI_Allreduce(v, o, 1, ct, MPI_SUM, w), MPI_ERR_TYPE); /* not committed */
    TC_MPI(MPI_Type_commit(&ct));
    TC_MPI(MPI_Type_free(&ct));
    /* a zero-size type moves and combines nothing */
    MPI_Datatype z;
    TC_MPI(MPI_Type_contiguous(0, MPI_INT, &z));
    TC_MPI(MPI_Type_commit(&z));
    TC_MPI(MPI_Allreduce(v, o, 3, z, MPI_SUM, w));
    TC_MPI(MPI_Scan(v, o, 3, z, MPI_SUM, w));
    TC_MPI(MPI_Reduce_scatter_block(v, o, 2, z, MPI_SUM, w));
    TC_MPI(MPI_Allgather(v, 2, z, o, 2, z, w));
    TC_MPI(MPI_Type_free(&z));
    MPI_Op op = MPI_SUM;
    EXPECT_ERR(MPI_Op_free(&op), MPI_ERR_OP);
    TC_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    TC_MPI(MPI_Comm_free(&shm));
    TC_MPI(MPI_Comm_free(&rev));
    TC_MPI(MPI_Comm_free(&dup));
    TC_MPI(MPI_Comm_free(&half));
    TC_MPI(MPI_Finalize());
    return 0;
}

static int t_each(void)
{
    return tc_run_every_comm(rank_each);
}
static int t_inflight(void)
{
    return tc_run_every_comm(rank_inflight);
}
static int t_progress(void)
{
    return tc_run_every_comm(rank_progress);
}
static int t_basics(void)
{
    return tc_run_all(rank_basics, NULL);
}

/* Thousands of ranks: the blocking collectives stay O(n) per member. */
static int rank_many(int rank, int size, void *arg)
{
    TC_MPI(MPI_Init(NULL, NULL));
    int v = rank, out[2] = {0};
    TC_MPI(MPI_Scan(&v, &out[0], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    TC_CHECK(out[0] == rank * (rank + 1) / 2, "scan: %d", out[0]);
    int *all = tc_alloc(sizeof(int) * (size_t)size);
    TC_MPI(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    TC_CHECK(all[size - 1] == size - 1 && all[rank] == rank, "allgather");
    free(all);
    MPI_Request q;
    TC_MPI(MPI_Iallreduce(&v, &out[1], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
    TC_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    TC_CHECK(out[1] == size * (size - 1) / 2, "iallreduce: %d", out[1]);
    TC_MPI(MPI_Finalize());
    return 0;
}
static int t_many(void)
{
    struct th_opts o = {.nranks = 2048};
    struct th_result res;
    if (th_run(&o, rank_many, NULL, &res)) {
        fprintf(stderr, "  rank %d failed (code %d) %s\n", res.failed_rank, res.code,
                res.abort_why);
        return 1;
    }
    printf("  2048 ranks: %.3f s\n", res.seconds);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct th_test tests[] = {
        {"each", t_each},     {"inflight", t_inflight}, {"progress", t_progress},
        {"basics", t_basics}, {"many", t_many},         {NULL, NULL},
    };
    return th_main(argc, argv, tests);
}
