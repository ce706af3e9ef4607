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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc >= 2 && !strcmp(argv[1], "nbr"))
        nbr();
    else
        persist();
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("OK\n");
    MPI_Finalize();
    return all != 0;
}
