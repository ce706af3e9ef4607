/* topo_neighbor.c — neighbourhood collectives: Neighbor_allgather(v) and Neighbor_alltoall(v,w)
 * in their blocking, non-blocking (Ineighbor_*) and persistent (Neighbor_*_init) forms on
 * Cartesian grids (periodic and not, periodic dimensions of size 1 and 2 where both neighbours
 * are the same process, MPI_PROC_NULL edges whose blocks stay untouched), a ring and a star
 * graph (repeated edges), distributed graphs made both ways, and one without edges; every
 * received element is checked.  Then: a non-blocking one completes while its starter is
 * blocked elsewhere (rendezvous-size blocks), user messages on the same communicator never
 * match neighbourhood traffic, and the error classes. */
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s (%d), got %d", #call, #cls, cls, e_);                  \
    } while (0)

#define MAXN 64     /* neighbours of one process in these tests */
#define SLOT 12     /* ints per block slot in the buffers (blocks have at most 4 elements) */
#define SENTINEL -1 /* what a block nobody writes keeps */

struct nbrs {
    int kind, me, in, out;
    int src[MAXN], dst[MAXN];
};

static void get_nbrs(MPI_Comm c, struct nbrs *n)
{
    CHECK_MPI(MPI_Topo_test(c, &n->kind));
    MPI_Comm_rank(c, &n->me);
    if (n->kind == MPI_CART) {
        int nd;
        CHECK_MPI(MPI_Cartdim_get(c, &nd));
        n->in = n->out = 2 * nd;
        for (int d = 0; d < nd; d++) {
            CHECK_MPI(MPI_Cart_shift(c, d, 1, &n->src[2 * d], &n->src[2 * d + 1]));
            n->dst[2 * d] = n->src[2 * d];
            n->dst[2 * d + 1] = n->src[2 * d + 1];
        }
    } else if (n->kind == MPI_GRAPH) {
        CHECK_MPI(MPI_Graph_neighbors_count(c, n->me, &n->in));
        CHECK(n->in <= MAXN, "too many neighbours");
        CHECK_MPI(MPI_Graph_neighbors(c, n->me, MAXN, n->src));
        n->out = n->in;
        memcpy(n->dst, n->src, sizeof n->src);
    } else {
        int w;
        CHECK_MPI(MPI_Dist_graph_neighbors_count(c, &n->in, &n->out, &w));
        CHECK(n->in <= MAXN && n->out <= MAXN, "too many neighbours");
        CHECK_MPI(MPI_Dist_graph_neighbors(c, MAXN, n->src, MPI_UNWEIGHTED, MAXN, n->dst,
                                           MPI_UNWEIGHTED));
    }
}

/* Occurrences of v[k] in v[0..k). */
static int occ(const int *v, int k)
{
    int o = 0;
    for (int i = 0; i < k; i++)
        o += v[i] == v[k];
    return o;
}

/* The block a process sends on its out-edge j (base value, element count) and the block it
 * expects on its in-edge i.  Cartesian: block s of the sender lands in block s ^ 1 of the
 * receiver; graphs: the k-th edge from a process to another matches the k-th edge to it. */
static void send_key(const struct nbrs *n, int j, int *base, int *count)
{
    if (n->kind == MPI_CART) {
        *base = n->me * 1000000 + j * 10;
        *count = 1 + j % 4;
    } else {
        int o = occ(n->dst, j);
        *base = n->me * 1000000 + n->dst[j] * 1000 + o * 10;
        *count = 1 + (n->dst[j] + o) % 4;
    }
}

static void recv_key(const struct nbrs *n, int i, int *base, int *count)
{
    int q = n->src[i];
    if (n->kind == MPI_CART) {
        *base = q * 1000000 + (i ^ 1) * 10;
        *count = 1 + (i ^ 1) % 4;
    } else {
        int o = occ(n->src, i);
        *base = q * 1000000 + n->me * 1000 + o * 10;
        *count = 1 + (n->me + o) % 4;
    }
}

enum mode { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *mode_name[] = {"blocking", "non-blocking", "persistent"};

/* Completes what a non-blocking or persistent start made (persistent: run twice, the second
 * time into a cleared buffer, then freed). */
static void complete(enum mode m, MPI_Request *q, int *rbuf, int rints)
{
    if (m == BLOCKING) return;
    if (m == NONBLOCKING) {
        CHECK_MPI(MPI_Wait(q, MPI_STATUS_IGNORE));
        CHECK(*q == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
        return;
    }
    CHECK_MPI(MPI_Start(q));
    CHECK_MPI(MPI_Wait(q, MPI_STATUS_IGNORE));
    for (int i = 0; i < rints; i++)
        rbuf[i] = SENTINEL;
    CHECK_MPI(MPI_Start(q));
    int flag = 0;
    while (!flag)
        CHECK_MPI(MPI_Test(q, &flag, MPI_STATUS_IGNORE));
    CHECK(*q != MPI_REQUEST_NULL, "persistent request freed by MPI_Test");
    CHECK_MPI(MPI_Request_free(q));
}

/* Checks receive block i at rbuf[at..]: count elements base + e, or untouched for
 * MPI_PROC_NULL; stride 2 leaves the odd ints untouched. */
static void check_block(const char *what, enum mode m, const struct nbrs *n, const int *rbuf, int i,
                        int at, int base, int count, int stride)
{
    for (int e = 0; e < SLOT; e++) {
        int want = SENTINEL;
        if (n->src[i] != MPI_PROC_NULL && e % stride == 0 && e / stride < count)
            want = base + e / stride;
        CHECK(rbuf[at + e] == want,
              "%s (%s, topology %d) rank %d block %d from %d [%d]: %d, "
              "expected %d",
              what, mode_name[m], n->kind, n->me, i, n->src[i], e, rbuf[at + e], want);
    }
}

static void test_allgather(MPI_Comm c, const struct nbrs *n, enum mode m)
{
    int sbuf[3], rbuf[MAXN * SLOT];
    for (int e = 0; e < 3; e++)
        sbuf[e] = n->me * 1000000 + e;
    for (int i = 0; i < MAXN * SLOT; i++)
        rbuf[i] = SENTINEL;
    MPI_Request q = MPI_REQUEST_NULL;
    /* Allgather: blocks of 3 ints back to back; checked in SLOT-sized windows, so use a
     * receive type spanning a slot. */
    MPI_Datatype slot;
    CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)(SLOT * sizeof(int)), &slot));
    MPI_Datatype three;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &three));
    MPI_Datatype three_slot;
    CHECK_MPI(MPI_Type_create_resized(three, 0, (MPI_Aint)(SLOT * sizeof(int)), &three_slot));
    CHECK_MPI(MPI_Type_commit(&three_slot));
    MPI_Type_free(&three);
    MPI_Type_free(&slot);
    if (m == BLOCKING)
        CHECK_MPI(MPI_Neighbor_allgather(sbuf, 3, MPI_INT, rbuf, 1, three_slot, c));
    else if (m == NONBLOCKING)
        CHECK_MPI(MPI_Ineighbor_allgather(sbuf, 3, MPI_INT, rbuf, 1, three_slot, c, &q));
    else
        CHECK_MPI(MPI_Neighbor_allgather_init(sbuf, 3, MPI_INT, rbuf, 1, three_slot, c,
                                              MPI_INFO_NULL, &q));
    complete(m, &q, rbuf, MAXN * SLOT);
    for (int i = 0; i < n->in; i++)
        check_block("Neighbor_allgather", m, n, rbuf, i, i * SLOT, n->src[i] * 1000000, 3, 1);
    MPI_Type_free(&three_slot);

    /* Allgatherv: block i of i % 3 + 1 ints at i * SLOT + 1 */
    int rc[MAXN], rd[MAXN];
    for (int i = 0; i < n->in; i++) {
        rc[i] = 3;
        rd[i] = i * SLOT;
    }
    for (int i = 0; i < MAXN * SLOT; i++)
        rbuf[i] = SENTINEL;
    if (m == BLOCKING)
        CHECK_MPI(MPI_Neighbor_allgatherv(sbuf, 3, MPI_INT, rbuf, rc, rd, MPI_INT, c));
    else if (m == NONBLOCKING)
        CHECK_MPI(MPI_Ineighbor_allgatherv(sbuf, 3, MPI_INT, rbuf, rc, rd, MPI_INT, c, &q));
    else
        CHECK_MPI(MPI_Neighbor_allgatherv_init(sbuf, 3, MPI_INT, rbuf, rc, rd, MPI_INT, c,
                                               MPI_INFO_NULL, &q));
    complete(m, &q, rbuf, MAXN * SLOT);
    for (int i = 0; i < n->in; i++)
        check_block("Neighbor_allgatherv", m, n, rbuf, i, i * SLOT, n->src[i] * 1000000, 3, 1);
}

static void test_alltoall(MPI_Comm c, const struct nbrs *n, enum mode m)
{
    static int sbuf[MAXN * SLOT], rbuf[MAXN * SLOT];
    MPI_Request q = MPI_REQUEST_NULL;
    int base, count;
    /* Alltoall: 2 ints a block */
    for (int j = 0; j < n->out; j++) {
        send_key(n, j, &base, &count);
        sbuf[2 * j] = base;
        sbuf[2 * j + 1] = base + 1;
    }
    for (int i = 0; i < MAXN * SLOT; i++)
        rbuf[i] = SENTINEL;
    if (m == BLOCKING)
        CHECK_MPI(MPI_Neighbor_alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, c));
    else if (m == NONBLOCKING)
        CHECK_MPI(MPI_Ineighbor_alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, c, &q));
    else
        CHECK_MPI(
            MPI_Neighbor_alltoall_init(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, c, MPI_INFO_NULL, &q));
    complete(m, &q, rbuf, MAXN * SLOT);
    for (int i = 0; i < n->in; i++) {
        recv_key(n, i, &base, &count);
        for (int e = 0; e < 2; e++) {
            int want = n->src[i] == MPI_PROC_NULL ? SENTINEL : base + e;
            CHECK(rbuf[2 * i + e] == want,
                  "Neighbor_alltoall (%s, topology %d) rank %d block %d from %d [%d]: %d, "
                  "expected %d",
                  mode_name[m], n->kind, n->me, i, n->src[i], e, rbuf[2 * i + e], want);
        }
    }

    /* Alltoallv: block j of 1-4 ints at j * SLOT (sent) and i * SLOT (received) */
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN];
    for (int j = 0; j < n->out; j++) {
        send_key(n, j, &base, &sc[j]);
        sd[j] = j * SLOT;
        for (int e = 0; e < sc[j]; e++)
            sbuf[sd[j] + e] = base + e;
    }
    for (int i = 0; i < n->in; i++) {
        recv_key(n, i, &base, &rc[i]);
        rd[i] = i * SLOT;
    }
    for (int i = 0; i < MAXN * SLOT; i++)
        rbuf[i] = SENTINEL;
    if (m == BLOCKING)
        CHECK_MPI(MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c));
    else if (m == NONBLOCKING)
        CHECK_MPI(MPI_Ineighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c, &q));
    else
        CHECK_MPI(MPI_Neighbor_alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c,
                                              MPI_INFO_NULL, &q));
    complete(m, &q, rbuf, MAXN * SLOT);
    for (int i = 0; i < n->in; i++) {
        recv_key(n, i, &base, &count);
        check_block("Neighbor_alltoallv", m, n, rbuf, i, i * SLOT, base, count, 1);
    }

    /* Alltoallw: sent as ints, received through a vector of stride 2 (one per block) */
    MPI_Aint sdb[MAXN], rdb[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN];
    int one[MAXN];
    for (int j = 0; j < n->out; j++) {
        sdb[j] = (MPI_Aint)(sd[j] * sizeof(int));
        st[j] = MPI_INT;
    }
    for (int i = 0; i < n->in; i++) {
        recv_key(n, i, &base, &count);
        CHECK_MPI(MPI_Type_vector(count, 1, 2, MPI_INT, &rt[i]));
        CHECK_MPI(MPI_Type_commit(&rt[i]));
        rdb[i] = (MPI_Aint)(i * SLOT * sizeof(int));
        one[i] = 1;
    }
    for (int i = 0; i < MAXN * SLOT; i++)
        rbuf[i] = SENTINEL;
    if (m == BLOCKING)
        CHECK_MPI(MPI_Neighbor_alltoallw(sbuf, sc, sdb, st, rbuf, one, rdb, rt, c));
    else if (m == NONBLOCKING)
        CHECK_MPI(MPI_Ineighbor_alltoallw(sbuf, sc, sdb, st, rbuf, one, rdb, rt, c, &q));
    else
        CHECK_MPI(MPI_Neighbor_alltoallw_init(sbuf, sc, sdb, st, rbuf, one, rdb, rt, c,
                                              MPI_INFO_NULL, &q));
    /* the types may go before a started operation completes (a persistent request needs them
     * at every start) */
    if (m != PERSISTENT)
        for (int i = 0; i < n->in; i++)
            MPI_Type_free(&rt[i]);
    complete(m, &q, rbuf, MAXN * SLOT);
    if (m == PERSISTENT)
        for (int i = 0; i < n->in; i++)
            MPI_Type_free(&rt[i]);
    for (int i = 0; i < n->in; i++) {
        recv_key(n, i, &base, &count);
        check_block("Neighbor_alltoallw", m, n, rbuf, i, i * SLOT, base, count, 2);
    }
}

static void test_all(MPI_Comm c)
{
    struct nbrs n;
    get_nbrs(c, &n);
    for (int m = BLOCKING; m <= PERSISTENT; m++) {
        test_allgather(c, &n, m);
        test_alltoall(c, &n, m);
    }
}

static void test_cart(int size)
{
    MPI_Comm c;
    /* 2-D, periodic in dimension 0 only */
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    CHECK_MPI(MPI_Dims_create(size, 2, dims));
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
    test_all(c);
    MPI_Comm_free(&c);
    /* 1-D non-periodic: the ends have an MPI_PROC_NULL neighbour */
    int d1[1] = {size}, p0[1] = {0}, p1[1] = {1};
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p0, 0, &c));
    test_all(c);
    MPI_Comm_free(&c);
    /* 1-D periodic ring (size 1 and 2: the same process both ways) */
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 1, &c));
    test_all(c);
    MPI_Comm_free(&c);
    /* 3-D size x 1 x 2 periodic where it can be: dimension 1 has size 1 (self both ways) */
    if (size % 2 == 0) {
        int d3[3] = {size / 2, 1, 2}, p3[3] = {0, 1, 1};
        CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &c));
        test_all(c);
        MPI_Comm_free(&c);
    }
    /* zero dimensions: no neighbours */
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c));
    if (c != MPI_COMM_NULL) {
        test_all(c);
        MPI_Comm_free(&c);
    }
}

static void test_graphs(int size, int rank)
{
    int *index = malloc(sizeof *index * (size_t)size);
    int *edges = malloc(sizeof *edges * (size_t)(2 * size + 2));
    MPI_Comm c;
    /* a ring: i - 1 then i + 1 */
    for (int i = 0; i < size; i++) {
        edges[2 * i] = (i - 1 + size) % size;
        edges[2 * i + 1] = (i + 1) % size;
        index[i] = 2 * i + 2;
    }
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c));
    test_all(c);
    MPI_Comm_free(&c);
    /* a star, reordered: 0 joined to every other vertex */
    int e = 0;
    for (int j = 1; j < size; j++)
        edges[e++] = j;
    index[0] = e;
    for (int i = 1; i < size; i++) {
        edges[e++] = 0;
        index[i] = e;
    }
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &c));
    test_all(c);
    MPI_Comm_free(&c);

    /* distributed, adjacent: in from the left twice, out to the right twice, weighted */
    int l = (rank - 1 + size) % size, r = (rank + 1) % size;
    int src[3] = {l, l, rank}, dst[3] = {r, r, rank}, w[3] = {1, 2, 3};
    CHECK_MPI(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, w, 3, dst, w, MPI_INFO_NULL, 0, &c));
    test_all(c);
    MPI_Comm_free(&c);
    /* distributed, general: rank k names (k+1) -> k and (k+1) -> (k+2) */
    int s = (rank + 1) % size, ds[2] = {rank, (rank + 2) % size}, deg[1] = {2};
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &s, deg, ds, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                    0, &c));
    test_all(c);
    MPI_Comm_free(&c);
    /* distributed, a star given by rank 0 alone */
    int n0 = rank == 0 ? 1 : 0, z = 0, dg[1] = {size - 1};
    for (int j = 1; j < size; j++)
        edges[j - 1] = j;
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, n0, &z, dg, edges, MPI_UNWEIGHTED,
                                    MPI_INFO_NULL, 0, &c));
    test_all(c);
    MPI_Comm_free(&c);
    /* no edges at all */
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
    test_all(c);
    MPI_Comm_free(&c);
    free(index);
    free(edges);
}

/* A non-blocking neighbour exchange of blocks above the eager limit completes while its
 * starter is blocked in a receive that its neighbour sends only after waiting for the
 * exchange; a user receive with wildcards posted on the same communicator first gets only the
 * user message. */
static void test_progress(int size, int rank)
{
    if (size < 2) return;
    enum { N = 1 << 18 }; /* 1 MiB of ints a block */
    int d1[1] = {size}, p1[1] = {1};
    MPI_Comm c;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &c));
    int *sbuf = malloc(sizeof *sbuf * 2 * N), *rbuf = malloc(sizeof *rbuf * 2 * N);
    for (int k = 0; k < 2 * N; k++) {
        sbuf[k] = rank * 7 + k;
        rbuf[k] = SENTINEL;
    }
    int user = -5, from_user = 0;
    MPI_Request uq, q;
    CHECK_MPI(MPI_Irecv(&user, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &uq));
    CHECK_MPI(MPI_Ineighbor_alltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, c, &q));
    if (rank == 0) {
        CHECK_MPI(MPI_Recv(&from_user, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_EQ(from_user, 42);
    } else if (rank == 1) {
        CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        int v = 42;
        CHECK_MPI(MPI_Send(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
    }
    if (q != MPI_REQUEST_NULL) CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    int flag = 0;
    CHECK_MPI(MPI_Test(&uq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a wildcard user receive matched neighbourhood traffic (got %d)", user);
    int l = (rank - 1 + size) % size, r = (rank + 1) % size;
    /* block 0 (from the left) is the left's block 1, block 1 (from the right) the right's 0 */
    for (int k = 0; k < N; k++) {
        CHECK(rbuf[k] == l * 7 + N + k, "block 0 [%d]: %d, expected %d", k, rbuf[k], l * 7 + N + k);
        CHECK(rbuf[N + k] == r * 7 + k, "block 1 [%d]: %d", k, rbuf[N + k]);
    }
    /* now the user message (once everybody looked): each rank sends its rank to the right */
    CHECK_MPI(MPI_Barrier(c));
    CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, r, 3, c));
    CHECK_MPI(MPI_Wait(&uq, MPI_STATUS_IGNORE));
    CHECK(user == l, "user message: %d, expected %d", user, l);
    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&c);
}

static void test_errors(int size)
{
    int b[4] = {0}, cnt[2] = {1, 1}, dsp[2] = {0, 1};
    MPI_Request q;
    EXPECT(MPI_Neighbor_allgather(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Ineighbor_alltoall(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD, &q),
           MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Neighbor_alltoall(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    int d1[1] = {size}, p1[1] = {1};
    MPI_Comm c;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &c));
    EXPECT(MPI_Neighbor_alltoall(b, -1, MPI_INT, b, 1, MPI_INT, c), MPI_ERR_COUNT);
    EXPECT(MPI_Neighbor_allgather(b, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, c), MPI_ERR_TYPE);
    EXPECT(MPI_Neighbor_allgatherv(b, 1, MPI_INT, b, NULL, dsp, MPI_INT, c), MPI_ERR_ARG);
    EXPECT(MPI_Neighbor_alltoallv(b, cnt, NULL, MPI_INT, b, cnt, dsp, MPI_INT, c), MPI_ERR_ARG);
    EXPECT(MPI_Ineighbor_allgather(b, 1, MPI_INT, b, 1, MPI_INT, c, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Neighbor_alltoall(NULL, 1, MPI_INT, b, 1, MPI_INT, c), MPI_ERR_BUFFER);
    EXPECT(
        MPI_Neighbor_allgather_init(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL, MPI_INFO_NULL, &q),
        MPI_ERR_COMM);
    /* a persistent one with a bad count fails when started */
    CHECK_MPI(MPI_Neighbor_alltoall_init(b, -1, MPI_INT, b, 1, MPI_INT, c, MPI_INFO_NULL, &q));
    EXPECT(MPI_Start(&q), MPI_ERR_COUNT);
    CHECK_MPI(MPI_Request_free(&q));
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size * 3 <= MAXN * 4, "too many ranks for these tests");
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_cart(size);
    test_graphs(size, rank);
    test_progress(size, rank);
    test_errors(size);
    return finish_ok();
}
