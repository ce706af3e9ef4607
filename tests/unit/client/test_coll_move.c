/* test_coll_move.c — the collectives that move data without combining it: Bcast, Gather(v),
 * Scatter(v), Allgather(v), Alltoall(v,w), with fixed and rotating roots, counts 0/1/odd/large,
 * MPI_IN_PLACE where MPI allows it, on 1..16 ranks and on world, dup, split and split_type
 * communicators.  Every rank checks every element it receives, and that gaps between the
 * blocks of the v variants stay untouched. */
#include "coll_check.h"

#include "comm_parts.h"

/* What member `src` contributes for member `dst`, element i (salt varies per round). */
static int val(int src, int dst, int i, int salt)
{
    return src * 1000003 + dst * 7919 + i * 3 + salt;
}

/* Per-member counts and gapped, reversed displacements for the v variants. */
static void vlayout(int n, int count, int *cnt, int *dsp, int *total)
{
    int at = 0;
    for (int j = n - 1; j >= 0; j--) {
        cnt[j] = count ? count + j % 3 : 0;
        dsp[j] = at + 1; /* one element of gap before each block */
        at = dsp[j] + cnt[j];
    }
    *total = at + 1;
}

/* The roots of one round: a fixed one and a rotating one. */
static int root_of(int round, int n)
{
    return round % 2 ? (round / 2) % n : n - 1;
}

static int rank_bcast(MPI_Comm c, int me, int n)
{
    for (int ci = 0; ci < TC_NCOUNTS; ci++) {
        int count = tc_counts[ci];
        int *b = tc_alloc(sizeof(int) * (size_t)count);
        for (int round = 0; round < 4; round++) {
            int root = root_of(round, n);
            for (int i = 0; i < count; i++)
                b[i] = me == root ? val(root, 0, i, round) : TC_GAP;
            TC_MPI(MPI_Bcast(b, count, MPI_INT, root, c));
            for (int i = 0; i < count; i++)
                TC_CHECK(b[i] == val(root, 0, i, round), "bcast root %d count %d elem %d: %d", root,
                         count, i, b[i]);
        }
        free(b);
    }
    return 0;
}

static int rank_gather(MPI_Comm c, int me, int n)
{
    int *cnt = tc_alloc(sizeof(int) * (size_t)n), *dsp = tc_alloc(sizeof(int) * (size_t)n);
    for (int ci = 0; ci < TC_NCOUNTS; ci++) {
        int count = tc_counts[ci], vtot;
        vlayout(n, count, cnt, dsp, &vtot);
        size_t cap = (size_t)count * (size_t)n + (size_t)vtot + 8;
        int *s = tc_alloc(sizeof(int) * (size_t)(count + 3)), *r = tc_alloc(sizeof(int) * cap);
        for (int round = 0; round < 4; round++) {
            int root = root_of(round, n), inplace = round >= 2;
            /* Gather */
            for (int i = 0; i < count; i++)
                s[i] = val(me, root, i, round);
            for (size_t i = 0; i < cap; i++)
                r[i] = TC_GAP;
            if (inplace && me == root)
                for (int i = 0; i < count; i++)
                    r[(size_t)me * (size_t)count + (size_t)i] = val(me, root, i, round);
            TC_MPI(MPI_Gather(inplace && me == root ? MPI_IN_PLACE : s, count, MPI_INT, r, count,
                              MPI_INT, root, c));
            if (me == root)
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < count; i++)
                        TC_CHECK(r[(size_t)j * (size_t)count + (size_t)i] == val(j, root, i, round),
                                 "gather root %d count %d from %d elem %d: %d", root, count, j, i,
                                 r[(size_t)j * (size_t)count + (size_t)i]);
            /* Gatherv: member j sends cnt[j] */
            for (int i = 0; i < cnt[me]; i++)
                s[i] = val(me, root, i, round + 10);
            for (size_t i = 0; i < cap; i++)
                r[i] = TC_GAP;
            if (inplace && me == root)
                for (int i = 0; i < cnt[me]; i++)
                    r[dsp[me] + i] = val(me, root, i, round + 10);
            TC_MPI(MPI_Gatherv(inplace && me == root ? MPI_IN_PLACE : s, cnt[me], MPI_INT, r, cnt,
                               dsp, MPI_INT, root, c));
            if (me == root) {
                for (int j = 0; j < n; j++) {
                    for (int i = 0; i < cnt[j]; i++)
                        TC_CHECK(r[dsp[j] + i] == val(j, root, i, round + 10),
                                 "gatherv root %d from %d elem %d: %d", root, j, i, r[dsp[j] + i]);
                    TC_CHECK(r[dsp[j] - 1] == TC_GAP, "gatherv wrote the gap before block %d", j);
                }
            }
        }
        free(s);
        free(r);
    }
    free(cnt);
    free(dsp);
    return 0;
}

static int rank_scatter(MPI_Comm c, int me, int n)
{
    int *cnt = tc_alloc(sizeof(int) * (size_t)n), *dsp = tc_alloc(sizeof(int) * (size_t)n);
    for (int ci = 0; ci < TC_NCOUNTS; ci++) {
        int count = tc_counts[ci], vtot;
        vlayout(n, count, cnt, dsp, &vtot);
        size_t cap = (size_t)count * (size_t)n + (size_t)vtot + 8;
        int *s = tc_alloc(sizeof(int) * cap), *r = tc_alloc(sizeof(int) * (size_t)(count + 3));
        for (int round = 0; round < 4; round++) {
            int root = root_of(round, n), inplace = round >= 2;
            if (me == root)
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < count; i++)
                        s[(size_t)j * (size_t)count + (size_t)i] = val(root, j, i, round);
            for (int i = 0; i < count + 3; i++)
                r[i] = TC_GAP;
            TC_MPI(MPI_Scatter(s, count, MPI_INT, inplace && me == root ? MPI_IN_PLACE : r, count,
                               MPI_INT, root, c));
            if (!(inplace && me == root)) {
                for (int i = 0; i < count; i++)
                    TC_CHECK(r[i] == val(root, me, i, round), "scatter root %d elem %d: %d", root,
                             i, r[i]);
                TC_CHECK(r[count] == TC_GAP, "scatter wrote past the block");
            } else {
                for (int i = 0; i < count; i++)
                    TC_CHECK(s[(size_t)me * (size_t)count + (size_t)i] == val(root, me, i, round),
                             "scatter in place changed the root's block");
            }
            /* Scatterv */
            if (me == root)
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < cnt[j]; i++)
                        s[dsp[j] + i] = val(root, j, i, round + 20);
            for (int i = 0; i < count + 3; i++)
                r[i] = TC_GAP;
            TC_MPI(MPI_Scatterv(s, cnt, dsp, MPI_INT, inplace && me == root ? MPI_IN_PLACE : r,
                                cnt[me], MPI_INT, root, c));
            if (!(inplace && me == root)) {
                for (int i = 0; i < cnt[me]; i++)
                    TC_CHECK(r[i] == val(root, me, i, round + 20), "scatterv root %d elem %d: %d",
                             root, i, r[i]);
                TC_CHECK(r[cnt[me]] == TC_GAP, "scatterv wrote past the block");
            }
        }
        free(s);
        free(r);
    }
    free(cnt);
    free(dsp);
    return 0;
}

static int rank_allgather(MPI_Comm c, int me, int n)
{
    int *cnt = tc_alloc(sizeof(int) * (size_t)n), *dsp = tc_alloc(sizeof(int) * (size_t)n);
    for (int ci = 0; ci < TC_NCOUNTS; ci++) {
        int count = tc_counts[ci], vtot;
        vlayout(n, count, cnt, dsp, &vtot);
        size_t cap = (size_t)count * (size_t)n + (size_t)vtot + 8;
        int *s = tc_alloc(sizeof(int) * (size_t)(count + 3)), *r = tc_alloc(sizeof(int) * cap);
        for (int round = 0; round < 2; round++) {
            int inplace = round == 1;
            for (int i = 0; i < count; i++)
                s[i] = val(me, 0, i, round);
            for (size_t i = 0; i < cap; i++)
                r[i] = TC_GAP;
            if (inplace)
                for (int i = 0; i < count; i++)
                    r[(size_t)me * (size_t)count + (size_t)i] = s[i];
            TC_MPI(MPI_Allgather(inplace ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT, c));
            for (int j = 0; j < n; j++)
                for (int i = 0; i < count; i++)
                    TC_CHECK(r[(size_t)j * (size_t)count + (size_t)i] == val(j, 0, i, round),
                             "allgather count %d from %d elem %d: %d", count, j, i,
                             r[(size_t)j * (size_t)count + (size_t)i]);
            for (int i = 0; i < cnt[me]; i++)
                s[i] = val(me, 1, i, round);
            for (size_t i = 0; i < cap; i++)
                r[i] = TC_GAP;
            if (inplace)
                for (int i = 0; i < cnt[me]; i++)
                    r[dsp[me] + i] = s[i];
            TC_MPI(MPI_Allgatherv(inplace ? MPI_IN_PLACE : s, cnt[me], MPI_INT, r, cnt, dsp,
                                  MPI_INT, c));
            for (int j = 0; j < n; j++) {
                for (int i = 0; i < cnt[j]; i++)
                    TC_CHECK(r[dsp[j] + i] == val(j, 1, i, round), "allgatherv from %d elem %d: %d",
                             j, i, r[dsp[j] + i]);
                TC_CHECK(r[dsp[j] - 1] == TC_GAP, "allgatherv wrote the gap before block %d", j);
            }
        }
        free(s);
        free(r);
    }
    free(cnt);
    free(dsp);
    return 0;
}

/* The small Allgather on one node (coll_gather.c allgather_direct, through a stage of
 * TM_AGATHER_DIRECT_MAX bytes) and the engine just above that limit: the blocks arrive in both,
 * also in place and through a non-contiguous type (every other int), and a sender of more than
 * the block is reported as truncation while the other members still get their blocks.  That
 * it synchronises once: test_coll.c allgather_late_wake. */
static int rank_allgather_once(MPI_Comm c, int me, int n)
{
    /* the most ints whose places fit the stage, and one more (the engine's) */
    const int fit = (int)(((TM_AGATHER_DIRECT_MAX / (size_t)n) & ~(size_t)63) - 8) / 4;
    const int counts[] = {1, 5, fit, fit + 1};
    TC_CHECK(TM_AGATHER_PLACE(sizeof(int) * (size_t)fit) * (size_t)n <= TM_AGATHER_DIRECT_MAX &&
                 TM_AGATHER_PLACE(sizeof(int) * (size_t)(fit + 1)) * (size_t)n >
                     TM_AGATHER_DIRECT_MAX,
             "%d ints on %d members is not the stage's limit", fit, n);
    int *s = tc_alloc(sizeof(int) * (size_t)(fit + 8)),
        *r = tc_alloc(sizeof(int) * (size_t)(fit + 8) * (size_t)n);
    MPI_Datatype every2;
    TC_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &every2));
    TC_MPI(MPI_Type_commit(&every2));
    for (int ci = 0; ci < 4; ci++) {
        int count = counts[ci], in_place = ci % 2;
        for (int i = 0; i < count; i++)
            s[i] = val(me, 0, i, ci);
        for (int i = 0; i < count * n; i++)
            r[i] = in_place && i / count == me ? s[i % count] : TC_GAP;
        TC_MPI(MPI_Allgather(in_place ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT, c));
        for (int j = 0; j < n; j++)
            for (int i = 0; i < count; i++)
                TC_CHECK(r[j * count + i] == val(j, 0, i, ci), "allgather %d from %d elem %d: %d",
                         count, j, i, r[j * count + i]);
    }
    /* one vector of 4 ints a member, sent from every other int of s, received contiguous */
    for (int i = 0; i < 8; i++)
        s[i] = val(me, 1, i, 0);
    TC_MPI(MPI_Allgather(s, 1, every2, r, 4, MPI_INT, c));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < 4; i++)
            TC_CHECK(r[j * 4 + i] == val(j, 1, 2 * i, 0), "vector allgather from %d elem %d: %d", j,
                     i, r[j * 4 + i]);
    /* member 0 sends 3 ints into blocks of 2: it is the others who are told */
    if (n > 1) {
        MPI_Errhandler eh;
        TC_MPI(MPI_Comm_get_errhandler(c, &eh));
        TC_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        for (int i = 0; i < 3; i++)
            s[i] = val(me, 2, i, 0);
        int e = MPI_Allgather(s, me == 0 ? 3 : 2, MPI_INT, r, 2, MPI_INT, c);
        int cls = MPI_SUCCESS;
        if (e != MPI_SUCCESS) MPI_Error_class(e, &cls);
        TC_CHECK(cls == MPI_ERR_TRUNCATE, "a 3-int block into 2: error class %d", cls);
        for (int j = 1; j < n; j++)
            TC_CHECK(r[j * 2] == val(j, 2, 0, 0) && r[j * 2 + 1] == val(j, 2, 1, 0),
                     "block %d next to a truncated one: %d %d", j, r[j * 2], r[j * 2 + 1]);
        TC_MPI(MPI_Comm_set_errhandler(c, eh));
    }
    TC_MPI(MPI_Type_free(&every2));
    free(s);
    free(r);
    return 0;
}

/* Alltoall(v,w): member j's block for member i holds val(j, i, k).  Counts for the v form:
 * member src sends (count + (src + dst) % 3) to dst (0 when count is 0). */
static int a2a_cnt(int count, int src, int dst)
{
    return count ? count + (src + dst) % 3 : 0;
}

static int rank_alltoall(MPI_Comm c, int me, int n)
{
    int *sc = tc_alloc(sizeof(int) * (size_t)n), *sd = tc_alloc(sizeof(int) * (size_t)n);
    int *rc = tc_alloc(sizeof(int) * (size_t)n), *rd = tc_alloc(sizeof(int) * (size_t)n);
    int *sdb = tc_alloc(sizeof(int) * (size_t)n), *rdb = tc_alloc(sizeof(int) * (size_t)n);
    MPI_Datatype *st = tc_alloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype *rt = tc_alloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int ci = 0; ci < TC_NCOUNTS; ci++) {
        int count = tc_counts[ci] > 5000 ? 5003 : tc_counts[ci];
        size_t cap = (size_t)(count + 3) * (size_t)n * 2 + 8;
        int *s = tc_alloc(sizeof(int) * cap), *r = tc_alloc(sizeof(int) * cap);
        for (int round = 0; round < 2; round++) {
            int inplace = round == 1;
            /* Alltoall */
            for (int j = 0; j < n; j++)
                for (int i = 0; i < count; i++)
                    (inplace ? r : s)[(size_t)j * (size_t)count + (size_t)i] = val(me, j, i, round);
            if (!inplace)
                for (size_t i = 0; i < cap; i++)
                    r[i] = TC_GAP;
            TC_MPI(MPI_Alltoall(inplace ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT, c));
            for (int j = 0; j < n; j++)
                for (int i = 0; i < count; i++)
                    TC_CHECK(r[(size_t)j * (size_t)count + (size_t)i] == val(j, me, i, round),
                             "alltoall count %d from %d elem %d: %d", count, j, i,
                             r[(size_t)j * (size_t)count + (size_t)i]);
            /* Alltoallv: blocks in reverse order with one-element gaps */
            int sat = 0, rat = 0;
            for (int j = n - 1; j >= 0; j--) {
                sc[j] = a2a_cnt(count, me, j);
                sd[j] = sat + 1;
                sat = sd[j] + sc[j];
                rc[j] = a2a_cnt(count, j, me);
                rd[j] = rat + 1;
                rat = rd[j] + rc[j];
            }
            for (size_t i = 0; i < cap; i++)
                r[i] = TC_GAP;
            if (inplace) {
                /* MPI_IN_PLACE: send counts must equal receive counts: use rc for both */
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < rc[j]; i++)
                        r[rd[j] + i] = val(me, j, i, round + 30);
            } else {
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < sc[j]; i++)
                        s[sd[j] + i] = val(me, j, i, round + 30);
            }
            if (inplace) {
                /* symmetric counts are needed in place: count + (j+me)%3 is symmetric */
                TC_MPI(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, r, rc, rd, MPI_INT, c));
            } else {
                TC_MPI(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, c));
            }
            for (int j = 0; j < n; j++) {
                for (int i = 0; i < rc[j]; i++)
                    TC_CHECK(r[rd[j] + i] == val(j, me, i, round + 30),
                             "alltoallv from %d elem %d: %d", j, i, r[rd[j] + i]);
                TC_CHECK(r[rd[j] - 1] == TC_GAP, "alltoallv wrote the gap before block %d", j);
            }
            /* Alltoallw: byte displacements, types alternate between MPI_INT and a
             * contiguous pair of ints (half the count) for even blocks */
            MPI_Datatype pair;
            TC_MPI(MPI_Type_contiguous(2, MPI_INT, &pair));
            TC_MPI(MPI_Type_commit(&pair));
            int base = (count / 2) * 2; /* even, so a pair type can carry it */
            sat = rat = 0;
            for (int j = 0; j < n; j++) {
                int even = j % 2 == 0;
                st[j] = even ? pair : MPI_INT;
                rt[j] = MPI_INT;
                sc[j] = even ? base / 2 : base;
                rc[j] = base;
                sdb[j] = sat * (int)sizeof(int);
                sat += base + 1;
                rdb[j] = rat * (int)sizeof(int);
                rat += base + 1;
            }
            for (int j = 0; j < n; j++)
                for (int i = 0; i < base; i++)
                    s[sdb[j] / (int)sizeof(int) + i] = val(me, j, i, round + 40);
            for (size_t i = 0; i < cap; i++)
                r[i] = TC_GAP;
            TC_MPI(MPI_Alltoallw(s, sc, sdb, st, r, rc, rdb, rt, c));
            for (int j = 0; j < n; j++) {
                for (int i = 0; i < base; i++)
                    TC_CHECK(r[rdb[j] / (int)sizeof(int) + i] == val(j, me, i, round + 40),
                             "alltoallw from %d elem %d: %d", j, i,
                             r[rdb[j] / (int)sizeof(int) + i]);
                TC_CHECK(r[rdb[j] / (int)sizeof(int) + base] == TC_GAP, "alltoallw wrote a gap");
            }
            TC_MPI(MPI_Type_free(&pair));
            TC_CHECK(pair == MPI_DATATYPE_NULL, "Type_free did not reset the handle");
        }
        free(s);
        free(r);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sdb);
    free(rdb);
    free(st);
    free(rt);
    return 0;
}

#define T(name)                                                                                    \
    static int t_##name(void)                                                                      \
    {                                                                                              \
        return tc_run_every_comm(rank_##name);                                                     \
    }
T(bcast)
T(gather)
T(scatter)
T(allgather)
T(allgather_once)
T(alltoall)

int main(int argc, char **argv)
{
    static const struct th_test tests[] = {
        {"bcast", t_bcast},
        {"gather", t_gather},
        {"scatter", t_scatter},
        {"allgather", t_allgather},
        {"allgather_once", t_allgather_once},
        {"alltoall", t_alltoall},
        {NULL, NULL},
    };
    return th_main(argc, argv, tests);
}
