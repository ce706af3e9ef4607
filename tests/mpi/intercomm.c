/* intercomm.c — inter-communicators: Intercomm_create over MPI_COMM_WORLD (groups of even and
 * odd ranks, whose leaders are neighbours, and lower and upper halves, whose leaders are far
 * apart: on another node when the job spans nodes), the queries, point-to-point naming the
 * remote group, every collective with MPI_ROOT / MPI_PROC_NULL roots and their non-blocking
 * forms, Comm_dup, Comm_split, Comm_split_type, Comm_create, Intercomm_merge (low and high), and
 * error classes. */
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s, got %d", #call, #cls, e_);                            \
    } while (0)

static int wrank, wsize;

/* World rank of every remote member. */
static void remote_world(MPI_Comm ic, int *out, int rn)
{
    MPI_Group rg, wg;
    CHECK_MPI(MPI_Comm_remote_group(ic, &rg));
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int *in = malloc(sizeof(int) * rn);
    for (int i = 0; i < rn; i++)
        in[i] = i;
    CHECK_MPI(MPI_Group_translate_ranks(rg, rn, in, wg, out));
    free(in);
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
}

/* Every collective once; side 0 holds the roots of the rooted ones first, then side 1. */
static void collectives(MPI_Comm ic, int side)
{
    int n, r, rn;
    MPI_Comm_size(ic, &n);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rn);
    int *rw = malloc(sizeof(int) * rn), *buf = malloc(sizeof(int) * (rn + n) * 4 + 16);
    int *buf2 = malloc(sizeof(int) * (rn + n) * 4 + 16);
    remote_world(ic, rw, rn);
    int rsum = 0;
    for (int i = 0; i < rn; i++)
        rsum += rw[i];

    CHECK_MPI(MPI_Barrier(ic));
    for (int rs = 0; rs < 2; rs++) {         /* rs: the side holding the root */
        int rootrank = rs == 0 ? 0 : rn - 1; /* as the other side names it */
        int myroot = side == rs ? (r == (rs == 0 ? 0 : n - 1) ? MPI_ROOT : MPI_PROC_NULL)
                                : (rs == 0 ? 0 : rn - 1);
        (void)rootrank;
        int am_root = myroot == MPI_ROOT;
        /* Bcast */
        int v = am_root ? 4242 + rs : -1;
        CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, myroot, ic));
        if (side != rs) CHECK(v == 4242 + rs, "bcast got %d", v);
        if (side == rs && !am_root) CHECK(v == -1, "PROC_NULL member's buffer changed to %d", v);
        /* Reduce: the root gets the sum of the other side's world ranks */
        int s = -1;
        CHECK_MPI(MPI_Reduce(&wrank, &s, 1, MPI_INT, MPI_SUM, myroot, ic));
        if (am_root) CHECK(s == rsum, "reduce sum %d, expected %d", s, rsum);
        /* Gather at the root: the other side's world ranks in their order */
        CHECK_MPI(MPI_Gather(&wrank, 1, MPI_INT, buf, 1, MPI_INT, myroot, ic));
        if (am_root)
            for (int i = 0; i < rn; i++)
                CHECK(buf[i] == rw[i], "gather[%d] %d, expected %d", i, buf[i], rw[i]);
        /* Gatherv with blocks of 2, stride 3 */
        int two[2] = {wrank, -wrank};
        int *cnt = malloc(sizeof(int) * rn), *dsp = malloc(sizeof(int) * rn);
        for (int i = 0; i < rn; i++)
            cnt[i] = 2, dsp[i] = 3 * i;
        CHECK_MPI(MPI_Gatherv(two, 2, MPI_INT, buf, cnt, dsp, MPI_INT, myroot, ic));
        if (am_root)
            for (int i = 0; i < rn; i++)
                CHECK(buf[3 * i] == rw[i] && buf[3 * i + 1] == -rw[i], "gatherv block %d", i);
        /* Scatter from the root: remote member i gets 100 + i */
        for (int i = 0; i < rn; i++)
            buf[i] = 100 + i;
        int got = -1;
        CHECK_MPI(MPI_Scatter(buf, 1, MPI_INT, &got, 1, MPI_INT, myroot, ic));
        if (side != rs) CHECK(got == 100 + r, "scatter got %d", got);
        for (int i = 0; i < rn; i++)
            buf[3 * i] = 200 + i, buf[3 * i + 1] = 300 + i;
        int g2[2] = {-1, -1};
        CHECK_MPI(MPI_Scatterv(buf, cnt, dsp, MPI_INT, g2, 2, MPI_INT, myroot, ic));
        if (side != rs)
            CHECK(g2[0] == 200 + r && g2[1] == 300 + r, "scatterv got %d %d", g2[0], g2[1]);
        /* Non-blocking Ibcast and Ireduce */
        MPI_Request q;
        v = am_root ? 77 : -1;
        CHECK_MPI(MPI_Ibcast(&v, 1, MPI_INT, myroot, ic, &q));
        CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (side != rs) CHECK(v == 77, "ibcast got %d", v);
        s = -1;
        CHECK_MPI(MPI_Ireduce(&wrank, &s, 1, MPI_INT, MPI_MAX, myroot, ic, &q));
        CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (am_root) {
            int mx = 0;
            for (int i = 0; i < rn; i++)
                mx = rw[i] > mx ? rw[i] : mx;
            CHECK(s == mx, "ireduce max %d, expected %d", s, mx);
        }
        free(cnt);
        free(dsp);
    }
    /* Allreduce: each side gets the other's sum */
    int s = -1;
    CHECK_MPI(MPI_Allreduce(&wrank, &s, 1, MPI_INT, MPI_SUM, ic));
    CHECK(s == rsum, "allreduce %d, expected %d", s, rsum);
    MPI_Request q;
    CHECK_MPI(MPI_Iallreduce(&wrank, &s, 1, MPI_INT, MPI_SUM, ic, &q));
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(s == rsum, "iallreduce %d", s);
    /* Allgather(v): the other side's world ranks */
    CHECK_MPI(MPI_Allgather(&wrank, 1, MPI_INT, buf, 1, MPI_INT, ic));
    for (int i = 0; i < rn; i++)
        CHECK(buf[i] == rw[i], "allgather[%d] %d, expected %d", i, buf[i], rw[i]);
    int *cnt = malloc(sizeof(int) * rn), *dsp = malloc(sizeof(int) * rn);
    for (int i = 0; i < rn; i++)
        cnt[i] = 1, dsp[i] = rn - 1 - i;
    CHECK_MPI(MPI_Allgatherv(&wrank, 1, MPI_INT, buf, cnt, dsp, MPI_INT, ic));
    for (int i = 0; i < rn; i++)
        CHECK(buf[rn - 1 - i] == rw[i], "allgatherv block %d", i);
    /* Alltoall(v, w): remote j gets 1000 * my world rank + j */
    for (int j = 0; j < rn; j++)
        buf2[j] = 1000 * wrank + j;
    CHECK_MPI(MPI_Alltoall(buf2, 1, MPI_INT, buf, 1, MPI_INT, ic));
    for (int i = 0; i < rn; i++)
        CHECK(buf[i] == 1000 * rw[i] + r, "alltoall from %d: %d", i, buf[i]);
    for (int i = 0; i < rn; i++)
        dsp[i] = i;
    CHECK_MPI(MPI_Alltoallv(buf2, cnt, dsp, MPI_INT, buf, cnt, dsp, MPI_INT, ic));
    for (int i = 0; i < rn; i++)
        CHECK(buf[i] == 1000 * rw[i] + r, "alltoallv from %d: %d", i, buf[i]);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * rn);
    for (int i = 0; i < rn; i++)
        ty[i] = MPI_INT, dsp[i] = (int)(i * sizeof(int));
    memset(buf, 0, sizeof(int) * rn);
    CHECK_MPI(MPI_Alltoallw(buf2, cnt, dsp, ty, buf, cnt, dsp, ty, ic));
    for (int i = 0; i < rn; i++)
        CHECK(buf[i] == 1000 * rw[i] + r, "alltoallw from %d: %d", i, buf[i]);
    /* Reduce_scatter(_block): each side reduces n * rn elements, scattered rn to each of the
     * other side's members... here: block = rn elements per local member of the receiving
     * side, so both sides' totals are n * rn */
    for (int i = 0; i < n * rn; i++)
        buf2[i] = i + wrank;
    CHECK_MPI(MPI_Reduce_scatter_block(buf2, buf, rn, MPI_INT, MPI_SUM, ic));
    for (int k = 0; k < rn; k++) {
        int e = (r * rn + k) * rn + rsum;
        CHECK(buf[k] == e, "reduce_scatter_block[%d] %d, expected %d", k, buf[k], e);
    }
    int *rc = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        rc[i] = rn;
    CHECK_MPI(MPI_Reduce_scatter(buf2, buf, rc, MPI_INT, MPI_SUM, ic));
    for (int k = 0; k < rn; k++)
        CHECK(buf[k] == (r * rn + k) * rn + rsum, "reduce_scatter[%d] %d", k, buf[k]);
    CHECK_MPI(MPI_Ibarrier(ic, &q));
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    free(rc);
    free(ty);
    free(cnt);
    free(dsp);
    free(rw);
    free(buf);
    free(buf2);
}

static void p2p(MPI_Comm ic)
{
    int n, r, rn;
    MPI_Comm_size(ic, &n);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rn);
    /* Everyone sends to every remote member; messages name ranks of the remote group. */
    MPI_Request *q = malloc(sizeof(MPI_Request) * 2 * rn);
    int *in = malloc(sizeof(int) * rn), *out = malloc(sizeof(int) * rn);
    for (int j = 0; j < rn; j++) {
        out[j] = 10 * r + j;
        CHECK_MPI(MPI_Irecv(&in[j], 1, MPI_INT, j, 5, ic, &q[j]));
    }
    for (int j = 0; j < rn; j++)
        CHECK_MPI(MPI_Isend(&out[j], 1, MPI_INT, j, 5, ic, &q[rn + j]));
    CHECK_MPI(MPI_Waitall(2 * rn, q, MPI_STATUSES_IGNORE));
    for (int j = 0; j < rn; j++)
        CHECK(in[j] == 10 * j + r, "from remote %d: %d, expected %d", j, in[j], 10 * j + r);
    /* a wildcard receive reports the remote rank */
    if (r == 0) CHECK_MPI(MPI_Send(&r, 1, MPI_INT, rn - 1, 6, ic));
    if (r == n - 1) {
        MPI_Status st;
        int v;
        CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 6, ic, &st));
        CHECK(st.MPI_SOURCE == 0 && v == 0, "wildcard source %d", st.MPI_SOURCE);
    }
    EXPECT(MPI_Send(&r, 1, MPI_INT, rn, 0, ic), MPI_ERR_RANK);
    free(q);
    free(in);
    free(out);
}

/* The non-blocking forms of the unrooted collectives and of Gather(v)/Scatter(v) with side 0
 * holding the root: each gives what its blocking form gives.  Several are in flight at once
 * and completed in reverse order. */
static void nonblocking(MPI_Comm ic, int side)
{
    int n, r, rn;
    MPI_Comm_size(ic, &n);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rn);
    enum { K = 9 };
    int m = (n > rn ? n : rn) + 1, *blk[K], *nb[K];
    for (int k = 0; k < K; k++) {
        blk[k] = calloc((size_t)m * 2, sizeof(int));
        nb[k] = calloc((size_t)m * 2, sizeof(int));
    }
    int *sb = malloc(sizeof(int) * (size_t)m * 2), *cnt = malloc(sizeof(int) * (size_t)m),
        *dsp = malloc(sizeof(int) * (size_t)m);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)m);
    int *wd = malloc(sizeof(int) * (size_t)m);
    for (int i = 0; i < 2 * m; i++)
        sb[i] = wrank * 100 + i;
    for (int i = 0; i < m; i++)
        cnt[i] = 1, dsp[i] = i, ty[i] = MPI_INT, wd[i] = i * (int)sizeof(int);
    int root = side == 0 ? (r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Request q[K];
    /* blocking */
    CHECK_MPI(MPI_Allgather(sb, 1, MPI_INT, blk[0], 1, MPI_INT, ic));
    CHECK_MPI(MPI_Allgatherv(sb, 1, MPI_INT, blk[1], cnt, dsp, MPI_INT, ic));
    CHECK_MPI(MPI_Alltoall(sb, 1, MPI_INT, blk[2], 1, MPI_INT, ic));
    CHECK_MPI(MPI_Alltoallv(sb, cnt, dsp, MPI_INT, blk[3], cnt, dsp, MPI_INT, ic));
    CHECK_MPI(MPI_Alltoallw(sb, cnt, wd, ty, blk[4], cnt, wd, ty, ic));
    /* Reduce_scatter(_block) needs equal totals on both sides: equal groups here. */
    int rs = n == rn;
    if (rs) CHECK_MPI(MPI_Reduce_scatter_block(sb, blk[5], 1, MPI_INT, MPI_SUM, ic));
    if (rs) CHECK_MPI(MPI_Reduce_scatter(sb, blk[6], cnt, MPI_INT, MPI_SUM, ic));
    CHECK_MPI(MPI_Gatherv(sb, 1, MPI_INT, blk[7], cnt, dsp, MPI_INT, root, ic));
    CHECK_MPI(MPI_Scatter(sb, 1, MPI_INT, blk[8], 1, MPI_INT, root, ic));
    /* non-blocking, all in flight */
    CHECK_MPI(MPI_Iallgather(sb, 1, MPI_INT, nb[0], 1, MPI_INT, ic, &q[0]));
    CHECK_MPI(MPI_Iallgatherv(sb, 1, MPI_INT, nb[1], cnt, dsp, MPI_INT, ic, &q[1]));
    CHECK_MPI(MPI_Ialltoall(sb, 1, MPI_INT, nb[2], 1, MPI_INT, ic, &q[2]));
    CHECK_MPI(MPI_Ialltoallv(sb, cnt, dsp, MPI_INT, nb[3], cnt, dsp, MPI_INT, ic, &q[3]));
    CHECK_MPI(MPI_Ialltoallw(sb, cnt, wd, ty, nb[4], cnt, wd, ty, ic, &q[4]));
    q[5] = q[6] = MPI_REQUEST_NULL;
    if (rs) CHECK_MPI(MPI_Ireduce_scatter_block(sb, nb[5], 1, MPI_INT, MPI_SUM, ic, &q[5]));
    if (rs) CHECK_MPI(MPI_Ireduce_scatter(sb, nb[6], cnt, MPI_INT, MPI_SUM, ic, &q[6]));
    CHECK_MPI(MPI_Igatherv(sb, 1, MPI_INT, nb[7], cnt, dsp, MPI_INT, root, ic, &q[7]));
    CHECK_MPI(MPI_Iscatter(sb, 1, MPI_INT, nb[8], 1, MPI_INT, root, ic, &q[8]));
    for (int k = K - 1; k >= 0; k--)
        CHECK_MPI(MPI_Wait(&q[k], MPI_STATUS_IGNORE));
    for (int k = 0; k < K; k++) {
        CHECK(!memcmp(blk[k], nb[k], sizeof(int) * (size_t)m * 2),
              "non-blocking form %d differs from its blocking form", k);
        free(blk[k]);
        free(nb[k]);
    }
    /* Scans are not defined on inter-communicators, blocking or not. */
    MPI_Request x;
    EXPECT(MPI_Iscan(sb, nb, 1, MPI_INT, MPI_SUM, ic, &x), MPI_ERR_COMM);
    EXPECT(MPI_Iexscan(sb, nb, 1, MPI_INT, MPI_SUM, ic, &x), MPI_ERR_COMM);
    free(sb);
    free(cnt);
    free(dsp);
    free(ty);
    free(wd);
}

static void run(int side, MPI_Comm local, int remote_leader)
{
    MPI_Comm ic;
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 99, &ic));
    int flag, n, rn, ln;
    CHECK_MPI(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "not an inter-communicator");
    MPI_Comm_size(local, &ln);
    MPI_Comm_size(ic, &n);
    CHECK_MPI(MPI_Comm_remote_size(ic, &rn));
    CHECK(n == ln && n + rn == wsize, "sizes %d + %d", n, rn);
    CHECK_MPI(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    p2p(ic);
    collectives(ic, side);
    nonblocking(ic, side);
    int v = 0;
    EXPECT(MPI_Bcast(&v, 1, MPI_INT, rn, ic), MPI_ERR_ROOT);
    EXPECT(MPI_Scan(&v, &n, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    /* no topologies on inter-communicators */
    {
        int one = 1, zero = 0, idx = 0, nr, st;
        MPI_Comm tc;
        EXPECT(MPI_Cart_create(ic, 1, &one, &zero, 0, &tc), MPI_ERR_COMM);
        EXPECT(MPI_Cart_map(ic, 1, &one, &zero, &nr), MPI_ERR_COMM);
        EXPECT(MPI_Graph_create(ic, 1, &idx, &zero, 0, &tc), MPI_ERR_COMM);
        EXPECT(MPI_Dist_graph_create_adjacent(ic, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                              MPI_INFO_NULL, 0, &tc),
               MPI_ERR_COMM);
        CHECK_MPI(MPI_Topo_test(ic, &st));
        CHECK(st == MPI_UNDEFINED, "Topo_test of an inter-communicator: %d", st);
        EXPECT(MPI_Neighbor_allgather(&v, 1, MPI_INT, &nr, 1, MPI_INT, ic), MPI_ERR_TOPOLOGY);
    }

    /* dup: congruent, works on its own */
    MPI_Comm d;
    CHECK_MPI(MPI_Comm_dup(ic, &d));
    int res;
    CHECK_MPI(MPI_Comm_compare(ic, d, &res));
    CHECK(res == MPI_CONGRUENT, "dup compare %d", res);
    CHECK_MPI(MPI_Comm_test_inter(d, &flag));
    CHECK(flag, "dup is not inter");
    collectives(d, side);

    /* split by local rank parity: the remote group is the other side's members of my color */
    int r;
    MPI_Comm_rank(ic, &r);
    MPI_Comm sp;
    CHECK_MPI(MPI_Comm_split(d, r % 2, -r, &sp));
    int want = (rn + (r % 2 ? 0 : 1)) / 2; /* remote members with my parity */
    if (want == 0) {
        CHECK(sp == MPI_COMM_NULL, "split with an empty remote color gave a communicator");
    } else {
        int sn, srn, sr;
        MPI_Comm_size(sp, &sn);
        MPI_Comm_remote_size(sp, &srn);
        MPI_Comm_rank(sp, &sr);
        CHECK(srn == want && sn == (n + (r % 2 ? 0 : 1)) / 2, "split sizes %d/%d", sn, srn);
        CHECK(sr == sn - 1 - r / 2, "split rank %d (keys reverse the order)", sr);
        collectives(sp, side);
        CHECK_MPI(MPI_Comm_free(&sp));
    }
    /* split_type: both groups' members on my node (an inter-communicator), MPI_COMM_NULL when
     * the other group has none there */
    {
        MPI_Comm shm, st;
        int wnode, *nodes = malloc(sizeof(int) * (size_t)wsize), *rw = malloc(sizeof(int) * rn);
        CHECK_MPI(
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
        CHECK_MPI(MPI_Allreduce(&wrank, &wnode, 1, MPI_INT, MPI_MIN, shm));
        MPI_Comm_free(&shm);
        CHECK_MPI(MPI_Allgather(&wnode, 1, MPI_INT, nodes, 1, MPI_INT, MPI_COMM_WORLD));
        int lsame = 0, rsame = 0, *lws = malloc(sizeof(int) * n);
        CHECK_MPI(MPI_Allgather(&wrank, 1, MPI_INT, lws, 1, MPI_INT, local));
        remote_world(d, rw, rn);
        for (int i = 0; i < n; i++)
            lsame += nodes[lws[i]] == wnode;
        for (int i = 0; i < rn; i++)
            rsame += nodes[rw[i]] == wnode;
        CHECK_MPI(MPI_Comm_split_type(d, MPI_COMM_TYPE_SHARED, -r, MPI_INFO_NULL, &st));
        if (rsame == 0) {
            CHECK(st == MPI_COMM_NULL, "split_type with no remote member on my node");
        } else {
            int sn, srn, is_inter;
            CHECK_MPI(MPI_Comm_test_inter(st, &is_inter));
            MPI_Comm_size(st, &sn);
            MPI_Comm_remote_size(st, &srn);
            CHECK(is_inter && sn == lsame && srn == rsame,
                  "split_type: inter %d, sizes %d/%d, expected %d/%d", is_inter, sn, srn, lsame,
                  rsame);
            int *sw = malloc(sizeof(int) * srn);
            remote_world(st, sw, srn);
            for (int i = 0; i < srn; i++)
                CHECK(nodes[sw[i]] == wnode, "split_type: remote member %d on another node", sw[i]);
            free(sw);
            CHECK_MPI(MPI_Comm_set_errhandler(st, MPI_ERRORS_RETURN));
            collectives(st, side);
            CHECK_MPI(MPI_Comm_free(&st));
        }
        free(nodes);
        free(rw);
        free(lws);
    }
    /* Comm_create with the local group minus its last member (when that leaves someone) */
    MPI_Group lg, sub;
    CHECK_MPI(MPI_Comm_group(ic, &lg));
    int last = n - 1;
    CHECK_MPI(MPI_Group_excl(lg, n > 1 ? 1 : 0, &last, &sub));
    MPI_Comm cc;
    CHECK_MPI(MPI_Comm_create(ic, sub, &cc));
    if (n > 1 && r == n - 1) CHECK(cc == MPI_COMM_NULL, "excluded member got a communicator");
    if (cc != MPI_COMM_NULL) {
        int crn;
        MPI_Comm_remote_size(cc, &crn);
        CHECK(crn == (rn > 1 ? rn - 1 : rn), "created remote size %d", crn);
        CHECK_MPI(MPI_Barrier(cc));
        CHECK_MPI(MPI_Comm_free(&cc));
    }
    MPI_Group_free(&sub);
    MPI_Group_free(&lg);

    /* merge: side 0 low, side 1 high -> side 0 first; then both high: side 0 (whose leader is
     * world rank 0) first again */
    for (int both = 0; both < 2; both++) {
        MPI_Comm m;
        CHECK_MPI(MPI_Intercomm_merge(ic, both ? 1 : side, &m));
        int mr, ms, s = 0;
        MPI_Comm_rank(m, &mr);
        MPI_Comm_size(m, &ms);
        CHECK(ms == wsize, "merged size %d", ms);
        CHECK(mr == (side == 0 ? r : rn + r), "merged rank %d (side %d rank %d)", mr, side, r);
        CHECK_MPI(MPI_Comm_test_inter(m, &flag));
        CHECK(!flag, "merged is inter");
        CHECK_MPI(MPI_Allreduce(&wrank, &s, 1, MPI_INT, MPI_SUM, m));
        CHECK(s == wsize * (wsize - 1) / 2, "merged sum %d", s);
        CHECK_MPI(MPI_Comm_compare(m, ic, &res));
        CHECK(res == MPI_UNEQUAL, "merged vs inter %d", res);
        CHECK_MPI(MPI_Comm_free(&m));
    }
    CHECK_MPI(MPI_Comm_free(&d));
    CHECK_MPI(MPI_Comm_free(&ic));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int n;
    EXPECT(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
    if (wsize >= 2) {
        /* even/odd: leaders are world ranks 0 and 1 */
        MPI_Comm local;
        int side = wrank % 2;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, side, wrank, &local));
        run(side, local, side ? 0 : 1);
        CHECK_MPI(MPI_Comm_free(&local));
        /* halves: leaders are world ranks 0 and wsize / 2 */
        side = wrank >= wsize / 2;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, side, wrank, &local));
        run(side, local, side ? 0 : wsize / 2);
        CHECK_MPI(MPI_Comm_free(&local));
        /* a create/free loop of inter-communicators */
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, side, wrank, &local));
        for (int i = 0; i < 300; i++) {
            MPI_Comm ic;
            CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, side ? 0 : wsize / 2, i, &ic));
            CHECK_MPI(MPI_Comm_free(&ic));
        }
        CHECK_MPI(MPI_Comm_free(&local));
    }
    return finish_ok();
}
