/* bigvec.c — regular types past TM_TYPE_MAX_BLOCKS (2^24 blocks), which the datatype engine
 * keeps as a shape instead of a flat map (typecore/type_flat.h tm_type_mapless):
 *  - MPI_Type_vector of 2^24 + 3 one-byte blocks at stride 2 (32 MiB of span): a Send of it
 *    received contiguous, a contiguous Send received into it, a Sendrecv between it and an
 *    hvector of the same signature at stride 3, MPI_Pack / MPI_Unpack at an offset, a resized
 *    twin, MPI_Get_elements, an MPI_Put into it as the target type;
 *  - MPI_Type_vector(INT_MAX / 2, 1, 3, 4 ints) (2^30 blocks, as MPICH's large_count): its
 *    size, extents and element count, with no memory;
 *  - a struct of an int, the vector and a byte (three runs, no map): a Send of it received into
 *    it, MPI_Pack in typemap order, MPI_Get_elements, and a Sendrecv into a resized twin of it
 *    (a type built on the struct); every byte checked, the holes untouched.
 * 2 ranks or more.  Prints OK at rank 0. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum { N = (1 << 24) + 3 };

static unsigned char pat(size_t i, int salt)
{
    return (unsigned char)(i * 7 + (i >> 12) + (size_t)salt);
}

/* bytes of the vector (stride s) that differ from pat(., salt) */
static size_t bad_strided(const unsigned char *v, size_t s, int salt)
{
    size_t bad = 0;
    for (size_t i = 0; i < N; i++)
        bad += v[i * s] != pat(i, salt);
    return bad;
}

static void move(void)
{
    MPI_Datatype vec, hvec, rsz;
    CHECK(MPI_Type_vector(N, 1, 2, MPI_CHAR, &vec) == 0, "Type_vector of %d blocks", N);
    CHECK(MPI_Type_create_hvector(N, 1, 3, MPI_CHAR, &hvec) == 0, "Type_create_hvector");
    MPI_Type_commit(&vec);
    MPI_Type_commit(&hvec);
    int sz = 0;
    MPI_Aint lb = -1, ext = 0;
    MPI_Type_size(vec, &sz);
    MPI_Type_get_extent(vec, &lb, &ext);
    CHECK(sz == N && lb == 0 && ext == 2 * (MPI_Aint)N - 1, "vector size %d lb %ld extent %ld", sz,
          (long)lb, (long)ext);
    unsigned char *v = calloc(2 * (size_t)N, 1), *h = calloc(3 * (size_t)N, 1), *c = calloc(N, 1);
    if (!v || !h || !c) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Status st;
    int cnt = 0;
    if (rank == 0) {
        for (size_t i = 0; i < N; i++)
            v[2 * i] = pat(i, 1), c[i] = pat(i, 2);
        MPI_Send(v, 1, vec, 1, 1, MPI_COMM_WORLD);
        MPI_Send(c, N, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(c, N, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &st);
        MPI_Get_elements(&st, vec, &cnt);
        CHECK(cnt == N, "Get_elements of the vector %d", cnt);
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += c[i] != pat(i, 1);
        CHECK(bad == 0, "vector sent, received contiguous: %zu bytes wrong", bad);
        MPI_Recv(v, 1, vec, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = bad_strided(v, 2, 2);
        CHECK(bad == 0, "contiguous sent, received into the vector: %zu bytes wrong", bad);
    }
    /* to myself: vector (stride 2) to hvector (stride 3), and a resized twin back */
    for (size_t i = 0; i < N; i++)
        v[2 * i] = pat(i, 3 + rank);
    CHECK(MPI_Sendrecv(v, 1, vec, rank, 3, h, 1, hvec, rank, 3, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == 0,
          "Sendrecv vector to hvector");
    size_t bad = bad_strided(h, 3, 3 + rank);
    CHECK(bad == 0, "vector to hvector: %zu bytes wrong", bad);
    CHECK(MPI_Type_create_resized(vec, 0, 2 * (MPI_Aint)N, &rsz) == 0, "resized");
    MPI_Type_commit(&rsz);
    memset(v, 0, 2 * (size_t)N);
    CHECK(MPI_Sendrecv(h, 1, hvec, rank, 4, v, 1, rsz, rank, 4, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == 0,
          "Sendrecv hvector to the resized vector");
    bad = bad_strided(v, 2, 3 + rank);
    CHECK(bad == 0, "hvector to the resized vector: %zu bytes wrong", bad);
    /* MPI_Pack of the vector, MPI_Unpack from an offset into the hvector */
    int psz = 0, pos = 0;
    MPI_Pack_size(1, vec, MPI_COMM_WORLD, &psz);
    unsigned char *pk = malloc((size_t)psz + 16);
    memset(pk, 0, 16);
    pos = 16;
    CHECK(MPI_Pack(v, 1, vec, pk, psz + 16, &pos, MPI_COMM_WORLD) == 0 && pos == 16 + N,
          "Pack of the vector: position %d", pos);
    memset(h, 0, 3 * (size_t)N);
    pos = 16;
    CHECK(MPI_Unpack(pk, psz + 16, &pos, h, 1, hvec, MPI_COMM_WORLD) == 0 && pos == 16 + N,
          "Unpack into the hvector: position %d", pos);
    bad = bad_strided(h, 3, 3 + rank);
    CHECK(bad == 0, "Pack / Unpack: %zu bytes wrong", bad);
    free(pk);
    /* MPI_Put of N contiguous bytes into rank 1's window, the vector as the target type */
    MPI_Win win;
    memset(v, 0, 2 * (size_t)N);
    MPI_Win_create(v, 2 * (MPI_Aint)N, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        for (size_t i = 0; i < N; i++)
            c[i] = pat(i, 9);
        CHECK(MPI_Put(c, N, MPI_CHAR, 1, 0, 1, vec, win) == 0, "Put into the vector");
    }
    MPI_Win_fence(0, win);
    if (rank == 1) {
        bad = bad_strided(v, 2, 9);
        CHECK(bad == 0, "Put with the vector as the target type: %zu bytes wrong", bad);
    }
    MPI_Win_free(&win);
    /* a struct of an int at 0, the vector at 8 and a byte 3 past its end: N + 2 blocks in
     * three runs */
    MPI_Datatype st2, st3, ts[3] = {MPI_INT, vec, MPI_CHAR};
    int bl[3] = {1, 1, 1};
    const MPI_Aint tail = 8 + 2 * (MPI_Aint)N + 3, span = tail + 1;
    MPI_Aint ds[3] = {0, 8, tail};
    CHECK(MPI_Type_create_struct(3, bl, ds, ts, &st2) == 0, "struct of an int, the vector, a byte");
    MPI_Type_commit(&st2);
    CHECK(MPI_Type_create_resized(st2, 0, span + 16, &st3) == 0, "resized struct");
    MPI_Type_commit(&st3);
    unsigned char *a = calloc((size_t)span, 1), *z = calloc((size_t)span + 16, 1);
    if (!a || !z) MPI_Abort(MPI_COMM_WORLD, 2);
    const int head = 0x5a5a1234;
    for (size_t i = 0; i < N; i++)
        a[8 + 2 * i] = pat(i, 11);
    memcpy(a, &head, 4);
    a[tail] = 0xc3;
    /* bytes of a struct element at z that differ from a's, holes included */
    size_t sbad = 0;
#define STRUCT_BAD(buf)                                                                            \
    (sbad = 0, sbad += memcmp((buf), a, 4) != 0, sbad += (buf)[tail] != 0xc3,                      \
     sbad += bad_strided((buf) + 8, 2, 11), sbad += (buf)[4] + (buf)[9] + (buf)[tail - 1], sbad)
    if (rank == 0) {
        CHECK(MPI_Send(a, 1, st2, 1, 5, MPI_COMM_WORLD) == 0, "Send of the struct");
    } else if (rank == 1) {
        CHECK(MPI_Recv(z, 1, st2, 0, 5, MPI_COMM_WORLD, &st) == 0, "Recv of the struct");
        MPI_Get_elements(&st, st2, &cnt);
        CHECK(cnt == N + 2, "Get_elements of the struct %d", cnt);
        CHECK(STRUCT_BAD(z) == 0, "struct sent and received: %zu bytes wrong", sbad);
    }
    MPI_Pack_size(1, st2, MPI_COMM_WORLD, &psz);
    pk = malloc((size_t)psz);
    pos = 0;
    CHECK(MPI_Pack(a, 1, st2, pk, psz, &pos, MPI_COMM_WORLD) == 0 && pos == 4 + N + 1,
          "Pack of the struct: position %d", pos);
    bad = memcmp(pk, &head, 4) != 0;
    for (size_t i = 0; i < N; i++)
        bad += pk[4 + i] != pat(i, 11);
    bad += pk[4 + N] != 0xc3;
    CHECK(bad == 0, "Pack of the struct in typemap order: %zu bytes wrong", bad);
    free(pk);
    memset(z, 0, (size_t)span + 16);
    CHECK(MPI_Sendrecv(a, 1, st2, rank, 6, z, 1, st3, rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
              0,
          "Sendrecv of the struct into its resized twin");
    CHECK(STRUCT_BAD(z) == 0, "struct into its resized twin: %zu bytes wrong", sbad);
#undef STRUCT_BAD
    free(a), free(z);
    MPI_Type_free(&st3);
    MPI_Type_free(&st2);
    MPI_Type_free(&rsz);
    MPI_Type_free(&vec);
    MPI_Type_free(&hvec);
    free(v), free(h), free(c);
}

/* MPICH large_count's type: 2^30 blocks of 4 ints, stride 3 of them; nothing moves. */
static void shape_only(void)
{
    MPI_Datatype four, big;
    MPI_Type_contiguous(4, MPI_INT, &four);
    CHECK(MPI_Type_vector(INT_MAX / 2, 1, 3, four, &big) == 0, "Type_vector of 2^30 blocks");
    MPI_Type_commit(&big);
    MPI_Count sz = 0, lb = -1, ext = 0, tlb = -1, text = 0;
    MPI_Type_size_x(big, &sz);
    MPI_Type_get_extent_x(big, &lb, &ext);
    MPI_Type_get_true_extent_x(big, &tlb, &text);
    const MPI_Count n = INT_MAX / 2, fi = 4 * (MPI_Count)sizeof(int);
    CHECK(sz == n * fi, "size %lld", sz);
    CHECK(lb == 0 && ext == (n - 1) * 3 * fi + fi, "lb %lld extent %lld", lb, ext);
    CHECK(tlb == 0 && text == ext, "true lb %lld extent %lld", tlb, text);
    MPI_Status st;
    MPI_Count el = 0;
    MPI_Status_set_elements_x(&st, big, 4 * n);
    MPI_Get_elements_x(&st, big, &el);
    CHECK(el == 4 * n, "Get_elements_x %lld", el);
    MPI_Type_free(&big);
    MPI_Type_free(&four);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    move();
    shape_only();
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("OK\n");
    MPI_Finalize();
    return all != 0;
}
