/* bigfold.c — data through the folds of the _c collectives (mpi/count_narrow.h) and through
 * types of more than 2^31 bytes, checked byte by byte where it lands.  2 ranks or more.
 *   span: displacements past INT_MAX with little memory (buffers reserved, barely touched):
 *         MPI_Alltoallw_c and MPI_Ialltoallw_c with byte displacements past 2^31, and
 *         MPI_Gatherv_c / MPI_Allgatherv_init_c whose element displacements past 2^31 share a
 *         factor with the counts;
 *   vspan: v sides past INT_MAX whose counts and displacements share no factor, which no
 *         fold can narrow (the engine takes them whole): MPI_Gatherv_c, MPI_Scatterv_c,
 *         MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Alltoallv_c and MPI_Ialltoallv_c with
 *         counts 3, 5, 7 ... bytes at odd displacements past 2^31, and counts 2 and 2^31 + 1
 *         of a type without data;
 *   uop N: MPI_Scan_c in place and MPI_Exscan_c of N bytes (more than 2^31) with a user op
 *         (int MPI_User_function, called in pieces of at most INT_MAX elements);
 *   wunit: windows whose displacement unit is past INT_MAX (MPI_Win_create_c, MPI_Win_allocate_c,
 *         MPI_Win_allocate_shared_c with 2^32 + 8): a Put, an Accumulate and a Get at target
 *         displacement 1, 4 GiB into a reserved buffer; the int outputs (the MPI_WIN_DISP_UNIT
 *         attribute, MPI_Win_shared_query) say MPI_UNDEFINED, MPI_Win_shared_query_c the unit;
 *   mixed N: MPI_Bcast_c of N bytes (more than 2^31) where rank 0 passes N MPI_BYTE and rank 1
 *         one element of two blocks of N / 2 bytes with a 4 KiB hole (MPI_Type_create_hvector_c,
 *         not contiguous), the root either of them: the ranks meet (the same byte pieces);
 *         with BIGFOLD_GATHER set and 2 ranks also MPI_Gather_c / MPI_Scatter_c of such blocks;
 *   intc N: MPI_Bcast of N bytes (more than 2^31, a multiple of 16) where one rank calls the
 *         int form and the other the _c form of one signature: N / 4 MPI_INT through MPI_Bcast
 *         against MPI_Bcast_c, and MPI_Bcast of one element of a contiguous type of N / 4
 *         MPI_INT against MPI_Bcast_c of N / 4 MPI_INT (the int form the root's, then not): the
 *         ranks meet;
 *   ncvec: MPI_Allgather_c and MPI_Alltoall_c (blocking, I and _init_c) of one element of a
 *         non-contiguous type whose extent passes 2^31: two blocks of 4 KiB, 2^31 + 8 KiB + 8
 *         bytes apart (MPI_Type_create_hvector_c), so block j of the buffer lies j times that
 *         far in (past 2^32 from the third rank on), in reserved, barely touched buffers; the
 *         Allgather's send side a contiguous 8 KiB of MPI_BYTE; every byte of the blocks
 *         checked, and the bytes around them untouched;
 *   big N: N bytes (more than 2^31) moved for real: MPI_Ibcast_c and MPI_Bcast_init_c of N
 *         MPI_BYTE (one folded element), and a Send/Recv of one element of a type of two
 *         blocks of N / 2 bytes with a 1 GiB hole (MPI_Type_create_hvector_c).
 * Prints OK at rank 0. */
#include <limits.h>
#include <stdint.h>
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
    return (unsigned char)(from * 31 + i * 7 + (i >> 20));
}

enum { BLK = 4096 };

static void span(void)
{
    const MPI_Aint FAR = ((MPI_Aint)1 << 31) + 3 * BLK; /* byte displacement past INT_MAX */
    size_t n = (size_t)FAR + (size_t)size * BLK;
    unsigned char *s = reserve(n), *r = reserve(n);
    MPI_Count *cn = malloc(sizeof *cn * (size_t)size);
    MPI_Aint *sd = malloc(sizeof *sd * (size_t)size), *rd = malloc(sizeof *rd * (size_t)size);
    MPI_Datatype *ty = malloc(sizeof *ty * (size_t)size);
    for (int j = 0; j < size; j++) {
        cn[j] = BLK, ty[j] = MPI_BYTE;
        sd[j] = FAR + (MPI_Aint)j * BLK;                /* my block for rank j */
        rd[j] = FAR + (MPI_Aint)((size - 1 - j) * BLK); /* rank j's block, reversed */
        for (int i = 0; i < BLK; i++)
            s[sd[j] + i] = pat(rank * size + j, i);
    }
    for (int round = 0; round < 2; round++) {
        memset(r + FAR, 0, (size_t)size * BLK);
        if (round == 0) {
            CHECK(MPI_Alltoallw_c(s, cn, sd, ty, r, cn, rd, ty, MPI_COMM_WORLD) == 0,
                  "Alltoallw_c");
        } else {
            MPI_Request q;
            CHECK(MPI_Ialltoallw_c(s, cn, sd, ty, r, cn, rd, ty, MPI_COMM_WORLD, &q) == 0 &&
                      MPI_Wait(&q, MPI_STATUS_IGNORE) == 0,
                  "Ialltoallw_c");
        }
        int bad = 0;
        for (int j = 0; j < size; j++)
            for (int i = 0; i < BLK; i++)
                bad += r[rd[j] + i] != pat(j * size + rank, i);
        CHECK(bad == 0, "%sAlltoallw_c past 2^31: %d bytes wrong", round ? "I" : "", bad);
    }
    /* v sides: element displacements past INT_MAX, multiples of the counts (one factor) */
    MPI_Aint *vd = malloc(sizeof *vd * (size_t)size);
    for (int j = 0; j < size; j++)
        vd[j] = FAR + (MPI_Aint)(size - 1 - j) * BLK;
    for (int i = 0; i < BLK; i++)
        s[i] = pat(rank, i);
    memset(r + FAR, 0, (size_t)size * BLK);
    CHECK(MPI_Gatherv_c(s, BLK, MPI_BYTE, r, cn, vd, MPI_BYTE, 0, MPI_COMM_WORLD) == 0,
          "Gatherv_c");
    int bad = 0;
    for (int j = 0; rank == 0 && j < size; j++)
        for (int i = 0; i < BLK; i++)
            bad += r[vd[j] + i] != pat(j, i);
    CHECK(bad == 0, "Gatherv_c past 2^31: %d bytes wrong", bad);
    MPI_Request q;
    CHECK(MPI_Allgatherv_init_c(s, BLK, MPI_BYTE, r, cn, vd, MPI_BYTE, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &q) == 0,
          "Allgatherv_init_c");
    for (int round = 0; round < 2; round++) {
        memset(r + FAR, 0, (size_t)size * BLK);
        CHECK(MPI_Start(&q) == 0 && MPI_Wait(&q, MPI_STATUS_IGNORE) == 0,
              "Allgatherv_init_c start");
        bad = 0;
        for (int j = 0; j < size; j++)
            for (int i = 0; i < BLK; i++)
                bad += r[vd[j] + i] != pat(j, i);
        CHECK(bad == 0, "Allgatherv_init_c past 2^31, start %d: %d bytes wrong", round, bad);
    }
    MPI_Request_free(&q);
    munmap(s, n), munmap(r, n);
    free(cn), free(sd), free(rd), free(ty), free(vd);
}

static void vspan(void)
{
    const MPI_Aint FAR = ((MPI_Aint)1 << 31) + 3 * BLK + 1; /* odd, past INT_MAX */
    size_t n = (size_t)FAR + (size_t)size * BLK;
    unsigned char *s = reserve(n), *r = reserve(n);
    MPI_Count *cn = malloc(sizeof *cn * (size_t)size);
    MPI_Aint *vd = malloc(sizeof *vd * (size_t)size), *sd = malloc(sizeof *sd * (size_t)size);
    for (int j = 0; j < size; j++) {
        cn[j] = 3 + 2 * j; /* 3 and 5 share no factor: no fold narrows them */
        vd[j] = FAR + (MPI_Aint)(size - 1 - j) * BLK;
        sd[j] = FAR + (MPI_Aint)j * BLK + 2;
    }
    MPI_Count mine = cn[rank];
    for (int i = 0; i < BLK; i++)
        s[i] = pat(rank, i);
    int bad = 0;
    /* Gatherv_c into rank 0 */
    memset(r + FAR, 0, (size_t)size * BLK);
    CHECK(MPI_Gatherv_c(s, mine, MPI_BYTE, r, cn, vd, MPI_BYTE, 0, MPI_COMM_WORLD) == 0,
          "Gatherv_c");
    for (int j = 0; rank == 0 && j < size; j++)
        for (int i = 0; i < cn[j]; i++)
            bad += r[vd[j] + i] != pat(j, i);
    CHECK(bad == 0, "Gatherv_c without a common factor: %d bytes wrong", bad);
    /* Scatterv_c from rank 0: block j from s at vd[j] */
    for (int j = 0; j < size; j++)
        for (int i = 0; i < cn[j]; i++)
            s[vd[j] + i] = pat(100 + j, i);
    memset(r, 0, BLK);
    CHECK(MPI_Scatterv_c(s, cn, vd, MPI_BYTE, r, mine, MPI_BYTE, 0, MPI_COMM_WORLD) == 0,
          "Scatterv_c");
    bad = 0;
    for (int i = 0; i < mine; i++)
        bad += r[i] != pat(100 + rank, i);
    CHECK(bad == 0, "Scatterv_c without a common factor: %d bytes wrong", bad);
    /* Allgatherv_c, blocking then non-blocking */
    for (int round = 0; round < 2; round++) {
        memset(r + FAR, 0, (size_t)size * BLK);
        if (round == 0) {
            CHECK(MPI_Allgatherv_c(s, mine, MPI_BYTE, r, cn, vd, MPI_BYTE, MPI_COMM_WORLD) == 0,
                  "Allgatherv_c");
        } else {
            MPI_Request q;
            CHECK(MPI_Iallgatherv_c(s, mine, MPI_BYTE, r, cn, vd, MPI_BYTE, MPI_COMM_WORLD, &q) ==
                          0 &&
                      MPI_Wait(&q, MPI_STATUS_IGNORE) == 0,
                  "Iallgatherv_c");
        }
        bad = 0;
        for (int j = 0; j < size; j++)
            for (int i = 0; i < cn[j]; i++)
                bad += r[vd[j] + i] != pat(j, i);
        CHECK(bad == 0, "%sAllgatherv_c without a common factor: %d bytes wrong", round ? "I" : "",
              bad);
    }
    /* Alltoallv_c: mine bytes to every rank from sd[j]; from rank j cn[j] bytes at vd[j] */
    MPI_Count *sc = malloc(sizeof *sc * (size_t)size);
    for (int j = 0; j < size; j++) {
        sc[j] = mine;
        for (int i = 0; i < mine; i++)
            s[sd[j] + i] = pat(rank * size + j, i);
    }
    for (int round = 0; round < 2; round++) {
        memset(r + FAR, 0, (size_t)size * BLK);
        if (round == 0) {
            CHECK(MPI_Alltoallv_c(s, sc, sd, MPI_BYTE, r, cn, vd, MPI_BYTE, MPI_COMM_WORLD) == 0,
                  "Alltoallv_c");
        } else {
            MPI_Request q;
            CHECK(MPI_Ialltoallv_c(s, sc, sd, MPI_BYTE, r, cn, vd, MPI_BYTE, MPI_COMM_WORLD, &q) ==
                          0 &&
                      MPI_Wait(&q, MPI_STATUS_IGNORE) == 0,
                  "Ialltoallv_c");
        }
        bad = 0;
        for (int j = 0; j < size; j++)
            for (int i = 0; i < cn[j]; i++)
                bad += r[vd[j] + i] != pat(j * size + rank, i);
        CHECK(bad == 0, "%sAlltoallv_c without a common factor: %d bytes wrong", round ? "I" : "",
              bad);
    }
    /* counts 2 and 2^31 + 1 (no factor) of a type without data, one byte of extent: nothing
     * moves, the root's blocks span 2 GiB of addresses */
    MPI_Datatype none, gap;
    MPI_Type_contiguous(0, MPI_BYTE, &none);
    MPI_Type_create_resized(none, 0, 1, &gap);
    MPI_Type_commit(&gap);
    for (int j = 0; j < size; j++) {
        cn[j] = j == size - 1 ? ((MPI_Count)1 << 31) + 1 : 2;
        vd[j] = j == size - 1 ? 0 : FAR + j;
    }
    CHECK(MPI_Gatherv_c(s, cn[rank], gap, r, cn, vd, gap, 0, MPI_COMM_WORLD) == 0,
          "Gatherv_c of counts 2 and 2^31 + 1");
    CHECK(MPI_Allgatherv_c(s, cn[rank], gap, r, cn, vd, gap, MPI_COMM_WORLD) == 0,
          "Allgatherv_c of counts 2 and 2^31 + 1");
    MPI_Type_free(&gap);
    MPI_Type_free(&none);
    munmap(s, n), munmap(r, n);
    free(cn), free(vd), free(sd), free(sc);
}

static void wunit(void)
{
    const MPI_Aint U = ((MPI_Aint)1 << 32) + 8; /* displacement unit past INT_MAX */
    const size_t n = (size_t)U + 4096;
    unsigned char *w = reserve(n);
    MPI_Win win;
    CHECK(MPI_Win_create_c(w, (MPI_Aint)n, U, MPI_INFO_NULL, MPI_COMM_WORLD, &win) == 0,
          "Win_create_c with a unit of 2^32 + 8");
    int *attr = NULL, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &attr, &flag);
    CHECK(flag && attr && *attr == MPI_UNDEFINED, "MPI_WIN_DISP_UNIT %d, not MPI_UNDEFINED",
          attr ? *attr : -1);
    int right = (rank + 1) % size;
    unsigned char mine[16], got[16];
    for (int i = 0; i < 16; i++)
        mine[i] = pat(rank, i);
    MPI_Win_fence(0, win);
    CHECK(MPI_Put(mine, 16, MPI_BYTE, right, 1, 16, MPI_BYTE, win) == 0, "Put at unit 1");
    MPI_Win_fence(0, win);
    int left = (rank + size - 1) % size, bad = 0;
    for (int i = 0; i < 16; i++)
        bad += w[U + i] != pat(left, i);
    CHECK(bad == 0, "Put at displacement 1 of unit 2^32 + 8: %d bytes wrong", bad);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank read its Put before the Accumulate lands */
    int one = 1, two[2] = {0, 0};
    CHECK(MPI_Accumulate(&one, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, win) == 0,
          "Accumulate at unit 1");
    MPI_Win_fence(0, win);
    CHECK(MPI_Get(got, 16, MPI_BYTE, right, 1, 16, MPI_BYTE, win) == 0, "Get at unit 1");
    MPI_Win_fence(0, win);
    int before;
    memcpy(&before, mine, sizeof before);
    memcpy(two, got, sizeof two);
    CHECK(two[0] == before + 1, "Accumulate then Get at unit 1: %d, want %d", two[0], before + 1);
    CHECK(!memcmp(got + 4, mine + 4, 12), "Get at unit 1: bytes wrong");
    MPI_Win_free(&win);
    munmap(w, n);
    void *base = NULL;
    CHECK(MPI_Win_allocate_c(64, U, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) == 0,
          "Win_allocate_c with a unit of 2^32 + 8");
    MPI_Win_free(&win);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    CHECK(MPI_Win_allocate_shared_c(64, U, MPI_INFO_NULL, node, &base, &win) == 0,
          "Win_allocate_shared_c with a unit of 2^32 + 8");
    MPI_Aint qs = 0, qd = 0;
    int qi = 0;
    MPI_Win_shared_query_c(win, 0, &qs, &qd, &base);
    MPI_Win_shared_query(win, 0, &qs, &qi, &base);
    CHECK(qd == U && qi == MPI_UNDEFINED, "shared_query_c unit %ld, shared_query %d", (long)qd, qi);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

/* 64-bit words of a pattern (a byte loop over gigabytes is too slow on a loaded machine) */
static uint64_t wpat(int from, size_t k)
{
    return (uint64_t)k * 0x9E3779B97F4A7C15ull ^ (uint64_t)from;
}
static void wfill(unsigned char *p, size_t bytes, int from)
{
    uint64_t *w = (uint64_t *)p;
    for (size_t k = 0; k < bytes / 8; k++)
        w[k] = wpat(from, k);
}
static size_t wbad(const unsigned char *p, size_t bytes, int from)
{
    const uint64_t *w = (const uint64_t *)p;
    size_t bad = 0;
    for (size_t k = 0; k < bytes / 8; k++)
        bad += w[k] != wpat(from, k);
    return bad;
}

static void mixed(MPI_Count n)
{
    const MPI_Count half = n / 2, hole = 4096;
    MPI_Datatype t;
    MPI_Type_create_hvector_c(2, half, half + hole, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    size_t span = rank == 1 ? (size_t)(2 * half + hole) : (size_t)n;
    unsigned char *b = reserve(span);
    for (int root = 0; root < 2 && rank < 2; root++) {
        unsigned char *lo = b, *hi = rank == 1 ? b + half + hole : b + half;
        if (rank == root) wfill(lo, (size_t)half, 10 + root), wfill(hi, (size_t)half, 20 + root);
        int e = rank == 1 ? MPI_Bcast_c(b, 1, t, root, MPI_COMM_WORLD)
                          : MPI_Bcast_c(b, 2 * half, MPI_BYTE, root, MPI_COMM_WORLD);
        CHECK(e == 0, "Bcast_c, root %d", root);
        size_t bad = wbad(lo, (size_t)half, 10 + root) + wbad(hi, (size_t)half, 20 + root);
        CHECK(bad == 0, "Bcast_c of %lld bytes, contiguous and not, root %d: %zu words wrong",
              2 * half, root, bad);
    }
    if (rank >= 2) { /* the others take part with the contiguous form */
        for (int root = 0; root < 2; root++)
            MPI_Bcast_c(b, 2 * half, MPI_BYTE, root, MPI_COMM_WORLD);
    }
    munmap(b, span);
    /* MPI_Gather_c to rank 0 (contiguous blocks) from rank 1's non-contiguous element, then
     * MPI_Scatter_c back into it */
    if (getenv("BIGFOLD_GATHER") && size == 2) {
        size_t rspan = rank == 0 ? 2 * (size_t)n : (size_t)(2 * half + hole);
        unsigned char *r = reserve(rspan), *s0 = rank == 0 ? reserve((size_t)n) : NULL;
        unsigned char *lo = rank == 1 ? r : s0, *hi = rank == 1 ? r + half + hole : s0 + half;
        wfill(lo, (size_t)half, 30 + rank), wfill(hi, (size_t)half, 40 + rank);
        int e = rank == 1 ? MPI_Gather_c(r, 1, t, NULL, 0, MPI_BYTE, 0, MPI_COMM_WORLD)
                          : MPI_Gather_c(s0, 2 * half, MPI_BYTE, r, 2 * half, MPI_BYTE, 0,
                                         MPI_COMM_WORLD);
        CHECK(e == 0, "Gather_c");
        if (rank == 0) {
            size_t bad = 0;
            for (int j = 0; j < 2; j++)
                bad += wbad(r + (size_t)j * n, (size_t)half, 30 + j) +
                       wbad(r + (size_t)j * n + half, (size_t)half, 40 + j);
            CHECK(bad == 0, "Gather_c, contiguous and not: %zu words wrong", bad);
            wfill(r + n, (size_t)half, 50), wfill(r + n + half, (size_t)half, 60);
        } else {
            memset(r, 0, rspan);
        }
        e = rank == 1
                ? MPI_Scatter_c(NULL, 0, MPI_BYTE, r, 1, t, 0, MPI_COMM_WORLD)
                : MPI_Scatter_c(r, 2 * half, MPI_BYTE, s0, 2 * half, MPI_BYTE, 0, MPI_COMM_WORLD);
        CHECK(e == 0, "Scatter_c");
        if (rank == 1) {
            size_t bad = wbad(r, (size_t)half, 50) + wbad(r + half + hole, (size_t)half, 60);
            CHECK(bad == 0, "Scatter_c into a non-contiguous element: %zu words wrong", bad);
        }
        munmap(r, rspan);
        if (s0) munmap(s0, (size_t)n);
    }
    MPI_Type_free(&t);
}

enum { NCB = 4096 };
#define NCSTRIDE (((MPI_Aint)1 << 31) + 2 * NCB + 8)
#define NCEXT (NCSTRIDE + NCB)

/* The two blocks of element j of buf (one element at j * NCEXT, its second block ending where
 * element j + 1 starts): from's pattern, and nothing written in the 64 bytes of the hole on
 * either side.  Returns the bytes wrong. */
static size_t nc_wrong(const unsigned char *buf, int j, int from)
{
    size_t bad = 0;
    const unsigned char *e = buf + (MPI_Aint)j * NCEXT;
    for (int k = 0; k < 2; k++)
        for (MPI_Count i = 0; i < NCB; i++)
            bad += e[k * NCSTRIDE + i] != pat(2 * from + k, i);
    for (int i = 0; i < 64; i++)
        bad += (e[NCB + i] != 0) + (e[NCSTRIDE - 1 - i] != 0);
    return bad;
}

static void nc_fill(unsigned char *buf, int j, int from)
{
    for (int k = 0; k < 2; k++)
        for (MPI_Count i = 0; i < NCB; i++)
            buf[(MPI_Aint)j * NCEXT + k * NCSTRIDE + i] = pat(2 * from + k, i);
}

static void nc_clear(unsigned char *buf, int n)
{
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 2; k++)
            memset(buf + (MPI_Aint)j * NCEXT + k * NCSTRIDE, 0, NCB);
}

static int nc_start(MPI_Request *q)
{
    return MPI_Start(q) == 0 && MPI_Wait(q, MPI_STATUS_IGNORE) == 0 && MPI_Request_free(q) == 0;
}

static void ncvec(void)
{
    MPI_Datatype v;
    CHECK(MPI_Type_create_hvector_c(2, NCB, NCSTRIDE, MPI_BYTE, &v) == 0, "hvector_c");
    MPI_Type_commit(&v);
    MPI_Count lb = -1, ext = 0;
    MPI_Type_get_extent_c(v, &lb, &ext);
    CHECK(lb == 0 && ext == NCEXT, "extent %lld, expected %lld", ext, (long long)NCEXT);
    size_t span = (size_t)size * NCEXT;
    unsigned char *s = reserve(span), *r = reserve(span), *c = reserve(2 * NCB);
    for (MPI_Count i = 0; i < 2 * NCB; i++) /* rank's element as contiguous bytes */
        c[i] = pat(2 * rank + i / NCB, i % NCB);
    static const char *form_name[] = {"", "I", "_init"};
    for (int form = 0; form < 3; form++) {
        MPI_Request q;
        nc_clear(r, size);
        int e = form == 0   ? MPI_Allgather_c(c, 2 * NCB, MPI_BYTE, r, 1, v, MPI_COMM_WORLD)
                : form == 1 ? MPI_Iallgather_c(c, 2 * NCB, MPI_BYTE, r, 1, v, MPI_COMM_WORLD, &q) ||
                                  MPI_Wait(&q, MPI_STATUS_IGNORE)
                            : MPI_Allgather_init_c(c, 2 * NCB, MPI_BYTE, r, 1, v, MPI_COMM_WORLD,
                                                   MPI_INFO_NULL, &q) ||
                                  !nc_start(&q);
        CHECK(e == 0, "%sAllgather_c", form_name[form]);
        size_t bad = 0;
        for (int j = 0; j < size; j++)
            bad += nc_wrong(r, j, j);
        CHECK(bad == 0, "%sAllgather_c into a vector of extent past 2^31: %zu bytes wrong",
              form_name[form], bad);
        /* Alltoall_c: element j of s to rank j, both sides the vector */
        for (int j = 0; j < size; j++)
            nc_fill(s, j, rank * size + j);
        nc_clear(r, size);
        e = form == 0 ? MPI_Alltoall_c(s, 1, v, r, 1, v, MPI_COMM_WORLD)
            : form == 1
                ? MPI_Ialltoall_c(s, 1, v, r, 1, v, MPI_COMM_WORLD, &q) ||
                      MPI_Wait(&q, MPI_STATUS_IGNORE)
                : MPI_Alltoall_init_c(s, 1, v, r, 1, v, MPI_COMM_WORLD, MPI_INFO_NULL, &q) ||
                      !nc_start(&q);
        CHECK(e == 0, "%sAlltoall_c", form_name[form]);
        bad = 0;
        for (int j = 0; j < size; j++)
            bad += nc_wrong(r, j, j * size + rank);
        CHECK(bad == 0, "%sAlltoall_c of a vector of extent past 2^31: %zu bytes wrong",
              form_name[form], bad);
    }
    munmap(s, span), munmap(r, span), munmap(c, 2 * NCB);
    MPI_Type_free(&v);
}

/* n: a multiple of 16 */
static void intc(MPI_Count n)
{
    const MPI_Count ints = n / 4;
    MPI_Datatype t;
    CHECK(MPI_Type_contiguous_c(ints, MPI_INT, &t) == 0, "Type_contiguous_c");
    MPI_Type_commit(&t);
    unsigned char *b = reserve((size_t)n);
    /* root 1 both times: the int form sends (form 0) and receives (form 1) */
    const int root = 1;
    for (int form = 0; form < 2; form++) {
        const char *what = form ? "Bcast of an int count" : "Bcast of one element";
        if (rank == root) wfill(b, (size_t)n, 70 + form);
        int e;
        if (rank == 0)
            e = form ? MPI_Bcast(b, (int)ints, MPI_INT, root, MPI_COMM_WORLD)
                     : MPI_Bcast_c(b, ints, MPI_INT, root, MPI_COMM_WORLD);
        else if (rank == 1)
            e = form ? MPI_Bcast_c(b, ints, MPI_INT, root, MPI_COMM_WORLD)
                     : MPI_Bcast(b, 1, t, root, MPI_COMM_WORLD);
        else
            e = MPI_Bcast_c(b, ints, MPI_INT, root, MPI_COMM_WORLD);
        CHECK(e == 0, "%s", what);
        size_t bad = wbad(b, (size_t)n, 70 + form);
        CHECK(bad == 0, "%s against Bcast_c of %lld bytes: %zu words wrong", what, n, bad);
    }
    munmap(b, (size_t)n);
    MPI_Type_free(&t);
}

/* n: a multiple of 16 */
static void big(MPI_Count n)
{
    unsigned char *b = reserve((size_t)n);
    /* a broadcast of n MPI_BYTE: non-blocking, then persistent (started twice) */
    for (int round = 0; round < 3; round++) {
        int root = round % size;
        if (rank == root) wfill(b, (size_t)n, round + 1);
        MPI_Request q;
        if (round == 0) {
            CHECK(MPI_Ibcast_c(b, n, MPI_BYTE, root, MPI_COMM_WORLD, &q) == 0 &&
                      MPI_Wait(&q, MPI_STATUS_IGNORE) == 0,
                  "Ibcast_c of %lld bytes", n);
        } else {
            CHECK(MPI_Bcast_init_c(b, n, MPI_BYTE, root, MPI_COMM_WORLD, MPI_INFO_NULL, &q) == 0 &&
                      MPI_Start(&q) == 0 && MPI_Wait(&q, MPI_STATUS_IGNORE) == 0 &&
                      MPI_Request_free(&q) == 0,
                  "Bcast_init_c of %lld bytes", n);
        }
        size_t bad = wbad(b, (size_t)n, round + 1);
        CHECK(bad == 0, "%s of %lld bytes: %zu words wrong", round ? "Bcast_init_c" : "Ibcast_c", n,
              bad);
    }
    munmap(b, (size_t)n);
    MPI_Barrier(MPI_COMM_WORLD);
    /* one element of two blocks of n / 2 bytes with a 1 GiB hole between them, 0 -> 1 */
    const MPI_Count half = n / 2, hole = (MPI_Count)1 << 30;
    MPI_Datatype t;
    CHECK(MPI_Type_create_hvector_c(2, half, half + hole, MPI_BYTE, &t) == 0, "hvector_c");
    MPI_Type_commit(&t);
    MPI_Count sz = 0;
    MPI_Type_size_c(t, &sz);
    CHECK(sz == 2 * half, "hvector_c size %lld", sz);
    if (rank < 2) {
        size_t span = (size_t)(2 * half + hole);
        unsigned char *v = reserve(span);
        if (rank == 0) {
            wfill(v, (size_t)half, 5);
            wfill(v + half + hole, (size_t)half, 6);
            CHECK(MPI_Send_c(v, 1, t, 1, 7, MPI_COMM_WORLD) == 0, "Send_c");
        } else {
            MPI_Status st;
            CHECK(MPI_Recv_c(v, 1, t, 0, 7, MPI_COMM_WORLD, &st) == 0, "Recv_c");
            MPI_Count got = 0;
            MPI_Get_count_c(&st, MPI_BYTE, &got);
            CHECK(got == 2 * half, "Get_count_c %lld", got);
            size_t bad = wbad(v, (size_t)half, 5) + wbad(v + half + hole, (size_t)half, 6);
            CHECK(bad == 0, "Recv_c of %lld bytes in 2 blocks: %zu words wrong", 2 * half, bad);
        }
        munmap(v, span);
    }
    MPI_Type_free(&t);
}

/* a user op of int counts: byte-wise sum; a count past INT_MAX would be a bug of the caller */
static int uop_toolong;
static void bytesum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    if (*len < 0) uop_toolong = 1;
    const unsigned char *a = in;
    unsigned char *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (unsigned char)(b[i] + a[i]);
}

static void uop(MPI_Count n)
{
    MPI_Op op;
    MPI_Op_create(bytesum, 1, &op);
    unsigned char *b = reserve((size_t)n);
    for (size_t k = 0; k < (size_t)n; k += 4096)
        b[k] = (unsigned char)(rank + 1);
    b[n - 1] = (unsigned char)(rank + 1);
    CHECK(MPI_Scan_c(MPI_IN_PLACE, b, n, MPI_BYTE, op, MPI_COMM_WORLD) == 0, "Scan_c");
    unsigned char want = (unsigned char)((rank + 1) * (rank + 2) / 2);
    size_t bad = b[n - 1] != want;
    for (size_t k = 0; k < (size_t)n; k += 4096)
        bad += b[k] != want;
    CHECK(bad == 0, "Scan_c of %lld bytes with a user op: %zu bytes wrong", n, bad);
    munmap(b, (size_t)n);
    MPI_Barrier(MPI_COMM_WORLD);
    if (size == 2) {
        /* Exscan_c: rank 1 gets rank 0's input */
        unsigned char *in = reserve((size_t)n), *out = reserve((size_t)n);
        for (size_t k = 0; k < (size_t)n; k += 4096)
            in[k] = (unsigned char)(rank + 5);
        in[n - 1] = (unsigned char)(rank + 5);
        CHECK(MPI_Exscan_c(in, out, n, MPI_BYTE, op, MPI_COMM_WORLD) == 0, "Exscan_c");
        bad = 0;
        for (size_t k = 0; rank == 1 && k < (size_t)n; k += 4096)
            bad += out[k] != 5;
        if (rank == 1) bad += out[n - 1] != 5;
        CHECK(bad == 0, "Exscan_c of %lld bytes with a user op: %zu bytes wrong", n, bad);
        munmap(in, (size_t)n), munmap(out, (size_t)n);
    }
    CHECK(!uop_toolong, "the user function got a count past INT_MAX");
    MPI_Op_free(&op);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc >= 3 && !strcmp(argv[1], "big"))
        big(strtoll(argv[2], NULL, 0));
    else if (argc >= 3 && !strcmp(argv[1], "uop"))
        uop(strtoll(argv[2], NULL, 0));
    else if (argc >= 2 && !strcmp(argv[1], "ncvec"))
        ncvec();
    else if (argc >= 3 && !strcmp(argv[1], "intc"))
        intc(strtoll(argv[2], NULL, 0));
    else if (argc >= 3 && !strcmp(argv[1], "mixed"))
        mixed(strtoll(argv[2], NULL, 0));
    else if (argc >= 2 && !strcmp(argv[1], "wunit"))
        wunit();
    else if (argc >= 2 && !strcmp(argv[1], "vspan"))
        vspan();
    else
        span();
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("OK\n");
    MPI_Finalize();
    return all != 0;
}
