/* bigvfar.c — v and w sides past INT_MAX whose counts and displacements share no factor, through
 * the persistent and neighbourhood forms (which used to fold such sides
 * into types and refuse them with MPI_ERR_COUNT): counts 3, 5, 7 ... bytes at element
 * displacements past 2^31 (prime to the counts), in reserved, barely touched buffers (little
 * memory), checked byte by byte where they land.  2 ranks or more. persist: MPI_Gatherv_init_c,
 * MPI_Scatterv_init_c, MPI_Allgatherv_init_c, MPI_Alltoallv_init_c, MPI_Alltoallw_init_c (each
 * started twice) and MPI_Reduce_scatter_init_c of counts 2 and 2^31 + 1 of a type without data;
 *   nbr:     on a distributed graph where every rank neighbours every rank (itself too):
 *            MPI_Neighbor_allgatherv_c, MPI_Ineighbor_allgatherv_c,
 *            MPI_Neighbor_allgatherv_init_c, MPI_Neighbor_alltoallv_c,
 *            MPI_Ineighbor_alltoallv_c, MPI_Neighbor_alltoallv_init_c and
 *            MPI_Neighbor_alltoallw_c at byte displacements past 2^31;
 *   inter:   on an inter-communicator of the even and the odd world ranks, the blocking, I and
 *            _init_c forms of MPI_Gatherv_c and MPI_Scatterv_c (each group the root's once),
 *            MPI_Allgatherv_c, MPI_Alltoallv_c and MPI_Alltoallw_c (blocks of the remote
 *            group), and of MPI_Reduce_scatter_c of counts summing to 2^31 + 3 in each group,
 *            one of them past INT_MAX, of a type without data.
 * Prints OK at rank 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mpi.h>

static int rank, size, fails;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: line %d: ", rank, __LINE__);                                 \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

enum { BLK = 4096 };
/* Past INT_MAX and prime to 3: blocks of 3 and 5 at FAR + k * BLK (receive) or FAR + 1 + k * BLK
 * (send) have no common factor to fold by. */
#define FAR (((MPI_Aint)1 << 31) + 3 * BLK + 2)

static unsigned char *reserve(size_t n)
{
    void *p =
        mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static unsigned char pat(int from, MPI_Count i)
{
    return (unsigned char)(from * 31 + i * 7 + 1);
}

/* The arrays of one communicator of n peers (remote group of an inter): counts 3 + 2j, block j
 * at vd[j] (reversed order) in the receive buffer, at sd[j] in the send buffer. */
struct lay {
    int n;
    MPI_Count *cn, *sc;
    MPI_Aint *vd, *sd, *bd, *bs;
    MPI_Datatype *ty;
};

static void lay_make(struct lay *l, int n, MPI_Count mine)
{
    l->n = n;
    l->cn = malloc(sizeof *l->cn * (size_t)n), l->sc = malloc(sizeof *l->sc * (size_t)n);
    l->vd = malloc(sizeof *l->vd * (size_t)n), l->sd = malloc(sizeof *l->sd * (size_t)n);
    l->bd = malloc(sizeof *l->bd * (size_t)n), l->bs = malloc(sizeof *l->bs * (size_t)n);
    l->ty = malloc(sizeof *l->ty * (size_t)n);
    for (int j = 0; j < n; j++) {
        l->cn[j] = 3 + 2 * j, l->sc[j] = mine;
        l->vd[j] = FAR + (MPI_Aint)(n - 1 - j) * BLK;
        l->sd[j] = FAR + (MPI_Aint)j * BLK + 1;
        l->bd[j] = l->vd[j], l->bs[j] = l->sd[j], l->ty[j] = MPI_BYTE;
    }
}

static void lay_free(struct lay *l)
{
    free(l->cn), free(l->sc), free(l->vd), free(l->sd), free(l->bd), free(l->bs), free(l->ty);
}

static size_t buf_len(int n)
{
    return (size_t)FAR + (size_t)n * BLK + BLK;
}

/* Block j of r (at vd[j], cn[j] bytes) against pat(from(j), .) */
static int wrong(const unsigned char *r, const struct lay *l, int base, int mul, int add)
{
    int bad = 0;
    for (int j = 0; j < l->n; j++)
        for (MPI_Count i = 0; i < l->cn[j]; i++)
            bad += r[l->vd[j] + i] != pat(base + j * mul + add, i);
    return bad;
}

static void clear(unsigned char *r, int n)
{
    memset(r + FAR, 0, (size_t)n * BLK);
}

static int start_wait(MPI_Request *q)
{
    return MPI_Start(q) == MPI_SUCCESS && MPI_Wait(q, MPI_STATUS_IGNORE) == MPI_SUCCESS;
}

static void persist(void)
{
    struct lay l;
    MPI_Count mine = 3 + 2 * rank;
    lay_make(&l, size, mine);
    size_t n = buf_len(size);
    unsigned char *s = reserve(n), *r = reserve(n);
    for (int i = 0; i < BLK; i++)
        s[i] = pat(rank, i);
    MPI_Request q;
    /* Gatherv_init_c into rank 0 */
    CHECK(MPI_Gatherv_init_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, 0, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &q) == 0,
          "Gatherv_init_c");
    for (int round = 0; round < 2; round++) {
        clear(r, size);
        CHECK(start_wait(&q), "Gatherv_init_c start");
        if (rank == 0)
            CHECK(wrong(r, &l, 0, 1, 0) == 0, "Gatherv_init_c start %d: bytes wrong", round);
    }
    MPI_Request_free(&q);
    /* Scatterv_init_c from rank 0: block j from s at vd[j] */
    for (int j = 0; j < size; j++)
        for (MPI_Count i = 0; i < l.cn[j]; i++)
            s[l.vd[j] + i] = pat(100 + j, i);
    CHECK(MPI_Scatterv_init_c(s, l.cn, l.vd, MPI_BYTE, r, mine, MPI_BYTE, 0, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q) == 0,
          "Scatterv_init_c");
    for (int round = 0; round < 2; round++) {
        memset(r, 0, BLK);
        CHECK(start_wait(&q), "Scatterv_init_c start");
        int bad = 0;
        for (MPI_Count i = 0; i < mine; i++)
            bad += r[i] != pat(100 + rank, i);
        CHECK(bad == 0, "Scatterv_init_c start %d: %d bytes wrong", round, bad);
    }
    MPI_Request_free(&q);
    /* Allgatherv_init_c */
    CHECK(MPI_Allgatherv_init_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &q) == 0,
          "Allgatherv_init_c");
    for (int round = 0; round < 2; round++) {
        clear(r, size);
        CHECK(start_wait(&q), "Allgatherv_init_c start");
        CHECK(wrong(r, &l, 0, 1, 0) == 0, "Allgatherv_init_c start %d: bytes wrong", round);
    }
    MPI_Request_free(&q);
    /* Alltoallv_init_c and Alltoallw_init_c: mine bytes to every rank from sd[j] */
    for (int j = 0; j < size; j++)
        for (MPI_Count i = 0; i < mine; i++)
            s[l.sd[j] + i] = pat(rank * size + j, i);
    for (int w = 0; w < 2; w++) {
        if (w)
            CHECK(MPI_Alltoallw_init_c(s, l.sc, l.bs, l.ty, r, l.cn, l.bd, l.ty, MPI_COMM_WORLD,
                                       MPI_INFO_NULL, &q) == 0,
                  "Alltoallw_init_c");
        else
            CHECK(MPI_Alltoallv_init_c(s, l.sc, l.sd, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE,
                                       MPI_COMM_WORLD, MPI_INFO_NULL, &q) == 0,
                  "Alltoallv_init_c");
        for (int round = 0; round < 2; round++) {
            clear(r, size);
            CHECK(start_wait(&q), "Alltoall%s_init_c start", w ? "w" : "v");
            CHECK(wrong(r, &l, rank, size, 0) == 0, "Alltoall%s_init_c start %d: bytes wrong",
                  w ? "w" : "v", round);
        }
        MPI_Request_free(&q);
    }
    /* Reduce_scatter_init_c of counts 2 and 2^31 + 1 of a type without data (MPI_SUM of
     * nothing): nothing moves, the counts pass whole */
    MPI_Datatype none;
    MPI_Type_contiguous(0, MPI_INT, &none);
    MPI_Type_commit(&none);
    MPI_Count *rc = malloc(sizeof *rc * (size_t)size);
    for (int j = 0; j < size; j++)
        rc[j] = j == size - 1 ? ((MPI_Count)1 << 31) + 1 : 2;
    int e = MPI_Reduce_scatter_init_c(s, r, rc, none, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
    CHECK(e == 0, "Reduce_scatter_init_c of counts 2 and 2^31 + 1: %d", e);
    if (e == 0) {
        CHECK(start_wait(&q), "Reduce_scatter_init_c start");
        MPI_Request_free(&q);
    }
    free(rc);
    MPI_Type_free(&none);
    munmap(s, n), munmap(r, n);
    lay_free(&l);
}

static void nbr(void)
{
    int *all = malloc(sizeof *all * (size_t)size);
    for (int j = 0; j < size; j++)
        all[j] = j;
    MPI_Comm g;
    CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, size, all, MPI_UNWEIGHTED, size, all,
                                         MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g) == 0,
          "Dist_graph_create_adjacent");
    struct lay l;
    MPI_Count mine = 3 + 2 * rank;
    lay_make(&l, size, mine);
    size_t n = buf_len(size);
    unsigned char *s = reserve(n), *r = reserve(n);
    for (int i = 0; i < BLK; i++)
        s[i] = pat(rank, i);
    /* Neighbor_allgatherv_c: blocking, non-blocking, persistent */
    for (int form = 0; form < 3; form++) {
        clear(r, size);
        MPI_Request q;
        int ok;
        if (form == 0)
            ok = MPI_Neighbor_allgatherv_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, g) == 0;
        else if (form == 1)
            ok = MPI_Ineighbor_allgatherv_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, g, &q) ==
                     0 &&
                 MPI_Wait(&q, MPI_STATUS_IGNORE) == 0;
        else
            ok = MPI_Neighbor_allgatherv_init_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, g,
                                                MPI_INFO_NULL, &q) == 0 &&
                 start_wait(&q) && MPI_Request_free(&q) == 0;
        CHECK(ok, "Neighbor_allgatherv_c form %d", form);
        CHECK(wrong(r, &l, 0, 1, 0) == 0, "Neighbor_allgatherv_c form %d: bytes wrong", form);
    }
    for (int j = 0; j < size; j++)
        for (MPI_Count i = 0; i < mine; i++)
            s[l.sd[j] + i] = pat(rank * size + j, i);
    /* Neighbor_alltoallv_c: blocking, non-blocking, persistent; then Neighbor_alltoallw_c */
    for (int form = 0; form < 4; form++) {
        clear(r, size);
        MPI_Request q;
        int ok;
        if (form == 0)
            ok = MPI_Neighbor_alltoallv_c(s, l.sc, l.sd, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, g) == 0;
        else if (form == 1)
            ok = MPI_Ineighbor_alltoallv_c(s, l.sc, l.sd, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, g,
                                           &q) == 0 &&
                 MPI_Wait(&q, MPI_STATUS_IGNORE) == 0;
        else if (form == 2)
            ok = MPI_Neighbor_alltoallv_init_c(s, l.sc, l.sd, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, g,
                                               MPI_INFO_NULL, &q) == 0 &&
                 start_wait(&q) && MPI_Request_free(&q) == 0;
        else
            ok = MPI_Neighbor_alltoallw_c(s, l.sc, l.bs, l.ty, r, l.cn, l.bd, l.ty, g) == 0;
        CHECK(ok, "Neighbor_alltoallv_c form %d", form);
        CHECK(wrong(r, &l, rank, size, 0) == 0, "Neighbor_alltoall%s_c form %d: bytes wrong",
              form == 3 ? "w" : "v", form);
    }
    munmap(s, n), munmap(r, n);
    lay_free(&l);
    MPI_Comm_free(&g);
    free(all);
}

/* One call of an inter-communicator collective in form 0 (blocking), 1 (I, then Wait) or 2
 * (_init_c, started twice); the I and _init_c calls take &q as their last argument. */
#define FORMS(form, blocking, nonblocking, persistent)                                             \
    ((form) == 0 ? (blocking) == 0                                                                 \
     : (form) == 1                                                                                 \
         ? (nonblocking) == 0 && MPI_Wait(&q, MPI_STATUS_IGNORE) == 0                              \
         : (persistent) == 0 && start_wait(&q) && start_wait(&q) && MPI_Request_free(&q) == 0)

static void inter(void)
{
    int color = rank % 2, lr, ln, rn;
    MPI_Comm half, X;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 99, &X) == 0,
          "Intercomm_create");
    MPI_Comm_set_errhandler(X, MPI_ERRORS_RETURN);
    MPI_Comm_rank(X, &lr);
    MPI_Comm_size(X, &ln);
    MPI_Comm_remote_size(X, &rn);
    /* a member's id in the patterns: its group and its rank there */
    int id = color * 100 + lr, rbase = (1 - color) * 100;
    struct lay l;
    MPI_Count mine = 3 + 2 * lr;
    lay_make(&l, rn, mine);
    size_t n = buf_len(rn);
    unsigned char *s = reserve(n), *r = reserve(n);
    MPI_Request q;
    for (int form = 0; form < 3; form++) {
        for (int rg = 0; rg < 2; rg++) { /* the group whose first member is the root */
            int root = color == rg ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
            /* Gatherv_c: the root takes block j (3 + 2j bytes) of remote member j at vd[j] */
            for (int i = 0; i < BLK; i++)
                s[i] = pat(id, i);
            clear(r, rn);
            CHECK(FORMS(form, MPI_Gatherv_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, root, X),
                        MPI_Igatherv_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, root, X, &q),
                        MPI_Gatherv_init_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, root, X,
                                           MPI_INFO_NULL, &q)),
                  "inter Gatherv_c form %d", form);
            if (root == MPI_ROOT)
                CHECK(wrong(r, &l, rbase, 1, 0) == 0, "inter Gatherv_c form %d: bytes wrong", form);
            /* Scatterv_c: the root sends block j from vd[j] to remote member j */
            for (int j = 0; j < rn; j++)
                for (MPI_Count i = 0; i < l.cn[j]; i++)
                    s[l.vd[j] + i] = pat(500 + j, i);
            memset(r, 0, BLK);
            CHECK(FORMS(form, MPI_Scatterv_c(s, l.cn, l.vd, MPI_BYTE, r, mine, MPI_BYTE, root, X),
                        MPI_Iscatterv_c(s, l.cn, l.vd, MPI_BYTE, r, mine, MPI_BYTE, root, X, &q),
                        MPI_Scatterv_init_c(s, l.cn, l.vd, MPI_BYTE, r, mine, MPI_BYTE, root, X,
                                            MPI_INFO_NULL, &q)),
                  "inter Scatterv_c form %d", form);
            if (color != rg) {
                int bad = 0;
                for (MPI_Count i = 0; i < mine; i++)
                    bad += r[i] != pat(500 + lr, i);
                CHECK(bad == 0, "inter Scatterv_c form %d: %d bytes wrong", form, bad);
            }
        }
        /* Allgatherv_c: block j of remote member j at vd[j] */
        for (int i = 0; i < BLK; i++)
            s[i] = pat(id, i);
        clear(r, rn);
        CHECK(FORMS(form, MPI_Allgatherv_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, X),
                    MPI_Iallgatherv_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, X, &q),
                    MPI_Allgatherv_init_c(s, mine, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, X,
                                          MPI_INFO_NULL, &q)),
              "inter Allgatherv_c form %d", form);
        CHECK(wrong(r, &l, rbase, 1, 0) == 0, "inter Allgatherv_c form %d: bytes wrong", form);
        /* Alltoallv_c and Alltoallw_c: mine bytes to remote member j from sd[j] */
        for (int j = 0; j < rn; j++)
            for (MPI_Count i = 0; i < mine; i++)
                s[l.sd[j] + i] = pat(id * 16 + j, i);
        clear(r, rn);
        CHECK(FORMS(form, MPI_Alltoallv_c(s, l.sc, l.sd, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, X),
                    MPI_Ialltoallv_c(s, l.sc, l.sd, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, X, &q),
                    MPI_Alltoallv_init_c(s, l.sc, l.sd, MPI_BYTE, r, l.cn, l.vd, MPI_BYTE, X,
                                         MPI_INFO_NULL, &q)),
              "inter Alltoallv_c form %d", form);
        CHECK(wrong(r, &l, rbase * 16, 16, lr) == 0, "inter Alltoallv_c form %d: bytes wrong",
              form);
        clear(r, rn);
        CHECK(FORMS(form, MPI_Alltoallw_c(s, l.sc, l.bs, l.ty, r, l.cn, l.bd, l.ty, X),
                    MPI_Ialltoallw_c(s, l.sc, l.bs, l.ty, r, l.cn, l.bd, l.ty, X, &q),
                    MPI_Alltoallw_init_c(s, l.sc, l.bs, l.ty, r, l.cn, l.bd, l.ty, X, MPI_INFO_NULL,
                                         &q)),
              "inter Alltoallw_c form %d", form);
        CHECK(wrong(r, &l, rbase * 16, 16, lr) == 0, "inter Alltoallw_c form %d: bytes wrong",
              form);
    }
    /* Reduce_scatter_c of a type without data: counts 2 and, at the last member, the rest of
     * 2^31 + 3 (the groups' sums must agree), which passes INT_MAX */
    MPI_Datatype none;
    MPI_Type_contiguous(0, MPI_INT, &none);
    MPI_Type_commit(&none);
    MPI_Count *rc = malloc(sizeof *rc * (size_t)ln);
    for (int k = 0; k < ln; k++)
        rc[k] = k < ln - 1 ? 2 : ((MPI_Count)1 << 31) + 3 - 2 * (MPI_Count)(ln - 1);
    for (int form = 0; form < 3; form++)
        CHECK(FORMS(form, MPI_Reduce_scatter_c(s, r, rc, none, MPI_SUM, X),
                    MPI_Ireduce_scatter_c(s, r, rc, none, MPI_SUM, X, &q),
                    MPI_Reduce_scatter_init_c(s, r, rc, none, MPI_SUM, X, MPI_INFO_NULL, &q)),
              "inter Reduce_scatter_c form %d of counts past INT_MAX", form);
    free(rc);
    MPI_Type_free(&none);
    munmap(s, n), munmap(r, n);
    lay_free(&l);
    MPI_Comm_free(&X);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc >= 2 && !strcmp(argv[1], "nbr"))
        nbr();
    else if (argc >= 2 && !strcmp(argv[1], "inter"))
        inter();
    else
        persist();
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("OK\n");
    MPI_Finalize();
    return all != 0;
}
