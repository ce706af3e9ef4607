/* datatypes_p2p.c — derived datatypes through point-to-point: vector, indexed, struct,
 * subarray, darray and resized types sent to the next rank in a ring (the same node or across
 * agents) below and above the eager limit, mixed layouts on the two sides (vector sent,
 * contiguous received and the reverse), a type freed while its receive is pending, a partial
 * receive counted with MPI_Get_elements, Sendrecv_replace with a vector, pair types in their
 * packed form (no C padding) against flat structs of their parts. */
#include <stdint.h>
#include <string.h>

#include "check.h"

static int rank, size, next, prev;

/* Value of element i of the message rank r sends. */
static double val(int r, long i)
{
    return r * 1000003.0 + (double)i;
}

/* A column of an n x m row-major matrix of doubles: n elements, stride m. */
static void vector_ring(int n, int m)
{
    MPI_Datatype col;
    CHECK_MPI(MPI_Type_vector(n, 1, m, MPI_DOUBLE, &col));
    CHECK_MPI(MPI_Type_commit(&col));
    double *a = malloc(sizeof *a * (size_t)n * (size_t)m);
    double *b = malloc(sizeof *b * (size_t)n * (size_t)m);
    for (long i = 0; i < (long)n * m; i++)
        a[i] = val(rank, i), b[i] = -1;
    /* column 1 of a -> column 2 of b */
    MPI_Request rq[2];
    CHECK_MPI(MPI_Irecv(b + 2, 1, col, prev, 7, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Isend(a + 1, 1, col, next, 7, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (long i = 0; i < (long)n * m; i++) {
        double want = i % m == 2 ? val(prev, i - 1) : -1;
        CHECK(b[i] == want, "vector %dx%d: b[%ld] expected %g got %g", n, m, i, want, b[i]);
    }
    /* vector sent, contiguous received */
    double *c = malloc(sizeof *c * (size_t)n);
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(a, 1, col, next, 8, c, n, MPI_DOUBLE, prev, 8, MPI_COMM_WORLD, &st));
    for (long i = 0; i < n; i++)
        CHECK(c[i] == val(prev, i * m), "vector->contig %d: c[%ld] expected %g got %g", n, i,
              val(prev, i * m), c[i]);
    int cnt;
    CHECK_MPI(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
    CHECK(cnt == n, "Get_count expected %d got %d", n, cnt);
    /* contiguous sent, vector received */
    for (long i = 0; i < (long)n * m; i++)
        b[i] = -1;
    CHECK_MPI(MPI_Sendrecv(c, n, MPI_DOUBLE, next, 9, b, 1, col, prev, 9, MPI_COMM_WORLD, &st));
    int pp = (prev - 1 + size) % size;
    for (long i = 0; i < (long)n * m; i++) {
        double want = i % m == 0 ? val(pp, i) : -1;
        CHECK(b[i] == want, "contig->vector %d: b[%ld] expected %g got %g", n, i, want, b[i]);
    }
    CHECK_MPI(MPI_Get_count(&st, col, &cnt));
    CHECK(cnt == 1, "Get_count(col) expected 1 got %d", cnt);
    CHECK_MPI(MPI_Type_free(&col));
    free(a);
    free(b);
    free(c);
}

struct particle {
    double x[3];
    char tag;
    int id;
};

static void struct_ring(int n)
{
    int bl[3] = {3, 1, 1};
    MPI_Aint d[3] = {offsetof(struct particle, x), offsetof(struct particle, tag),
                     offsetof(struct particle, id)};
    MPI_Datatype ts[3] = {MPI_DOUBLE, MPI_CHAR, MPI_INT}, pt;
    CHECK_MPI(MPI_Type_create_struct(3, bl, d, ts, &pt));
    CHECK_MPI(MPI_Type_commit(&pt));
    MPI_Aint lb, ext;
    CHECK_MPI(MPI_Type_get_extent(pt, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct particle),
          "struct extent expected 0/%zu got %td/%td", sizeof(struct particle), (ptrdiff_t)lb,
          (ptrdiff_t)ext);
    struct particle *s = calloc((size_t)n, sizeof *s), *r = calloc((size_t)n, sizeof *r);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            s[i].x[k] = val(rank, 3 * i + k);
        s[i].tag = (char)('a' + i % 26);
        s[i].id = rank * 100000 + i;
    }
    /* Irecv, free the type while the receive is pending: it must still complete. */
    MPI_Request rq[2];
    CHECK_MPI(MPI_Irecv(r, n, pt, prev, 11, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Isend(s, n, pt, next, 11, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Type_free(&pt));
    CHECK(pt == MPI_DATATYPE_NULL, "Type_free did not set MPI_DATATYPE_NULL");
    CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            CHECK(r[i].x[k] == val(prev, 3 * i + k), "struct %d: x[%d] of %d wrong", n, k, i);
        CHECK(r[i].tag == (char)('a' + i % 26) && r[i].id == prev * 100000 + i,
              "struct %d: element %d tag %c id %d", n, i, r[i].tag, r[i].id);
    }
    free(s);
    free(r);
}

static void indexed_partial(void)
{
    /* 4 blocks of ints: lengths 1,2,3,4 at 0, 3, 7, 12 -> 10 ints per element */
    int bl[4] = {1, 2, 3, 4}, dp[4] = {0, 3, 7, 12};
    MPI_Datatype it;
    CHECK_MPI(MPI_Type_indexed(4, bl, dp, MPI_INT, &it));
    CHECK_MPI(MPI_Type_commit(&it));
    int sz;
    CHECK_MPI(MPI_Type_size(it, &sz));
    CHECK(sz == 40, "indexed size expected 40 got %d", sz);
    int src[7], dst[32];
    for (int i = 0; i < 7; i++)
        src[i] = rank * 100 + i;
    for (int i = 0; i < 32; i++)
        dst[i] = -1;
    /* 7 ints received into 2 elements of it (20 ints): partial */
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(src, 7, MPI_INT, next, 12, dst, 2, it, prev, 12, MPI_COMM_WORLD, &st));
    int el, cnt;
    CHECK_MPI(MPI_Get_elements(&st, it, &el));
    CHECK(el == 7, "Get_elements expected 7 got %d", el);
    CHECK_MPI(MPI_Get_count(&st, it, &cnt));
    CHECK(cnt == MPI_UNDEFINED, "Get_count of a partial element expected MPI_UNDEFINED got %d",
          cnt);
    MPI_Count elx;
    CHECK_MPI(MPI_Get_elements_x(&st, it, &elx));
    CHECK(elx == 7, "Get_elements_x expected 7 got %lld", (long long)elx);
    static const int where[7] = {0, 3, 4, 7, 8, 9, 12};
    for (int i = 0; i < 7; i++)
        CHECK(dst[where[i]] == prev * 100 + i, "indexed: dst[%d] expected %d got %d", where[i],
              prev * 100 + i, dst[where[i]]);
    CHECK(dst[1] == -1 && dst[2] == -1 && dst[13] == -1, "indexed wrote into a gap");
    CHECK_MPI(MPI_Type_free(&it));
}

static void subarray_ring(void)
{
    enum { N = 40, M = 30 };
    int sizes[2] = {N, M}, sub[2] = {10, 7}, start[2] = {5, 3};
    MPI_Datatype sa;
    CHECK_MPI(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_FLOAT, &sa));
    CHECK_MPI(MPI_Type_commit(&sa));
    static float a[N][M], b[N][M];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            a[i][j] = (float)(rank * 10000 + i * M + j), b[i][j] = -1;
    CHECK_MPI(
        MPI_Sendrecv(a, 1, sa, next, 13, b, 1, sa, prev, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            int in = i >= 5 && i < 15 && j >= 3 && j < 10;
            float want = in ? (float)(prev * 10000 + i * M + j) : -1;
            CHECK(b[i][j] == want, "subarray b[%d][%d] expected %g got %g", i, j, want, b[i][j]);
        }
    CHECK_MPI(MPI_Type_free(&sa));
}

/* Every rank's block-cyclic share of a 2-D array gathered at rank 0 through darray types. */
static void darray_gather(void)
{
    enum { G0 = 13, G1 = 9 };
    int d = 1;
    while ((d + 1) * (d + 1) <= size)
        d++;
    while (size % d)
        d--;
    int psz[2] = {size / d, d};
    int gs[2] = {G0, G1}, ds[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
        da[2] = {2, MPI_DISTRIBUTE_DFLT_DARG};
    MPI_Datatype mine;
    CHECK_MPI(MPI_Type_create_darray(size, rank, 2, gs, ds, da, psz, MPI_ORDER_C, MPI_INT, &mine));
    CHECK_MPI(MPI_Type_commit(&mine));
    int n;
    CHECK_MPI(MPI_Type_size(mine, &n));
    n /= (int)sizeof(int);
    static int global[G0][G1], got[G0][G1];
    for (int i = 0; i < G0; i++)
        for (int j = 0; j < G1; j++)
            global[i][j] = i * G1 + j, got[i][j] = -1;
    /* Each rank packs its share through the darray type and sends it to 0 as ints. */
    int *mineb = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int pos = 0;
    CHECK_MPI(MPI_Pack(global, 1, mine, mineb, n * (int)sizeof(int), &pos, MPI_COMM_WORLD));
    CHECK(pos == n * (int)sizeof(int), "Pack position expected %d got %d", n * (int)sizeof(int),
          pos);
    if (rank) {
        CHECK_MPI(MPI_Send(mineb, n, MPI_INT, 0, 14, MPI_COMM_WORLD));
    } else {
        for (int r = 0; r < size; r++) {
            MPI_Datatype t;
            CHECK_MPI(
                MPI_Type_create_darray(size, r, 2, gs, ds, da, psz, MPI_ORDER_C, MPI_INT, &t));
            CHECK_MPI(MPI_Type_commit(&t));
            if (r == 0)
                CHECK_MPI(MPI_Sendrecv(mineb, n, MPI_INT, 0, 15, got, 1, t, 0, 15, MPI_COMM_WORLD,
                                       MPI_STATUS_IGNORE));
            else
                CHECK_MPI(MPI_Recv(got, 1, t, r, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Type_free(&t));
        }
        for (int i = 0; i < G0; i++)
            for (int j = 0; j < G1; j++)
                CHECK(got[i][j] == i * G1 + j, "darray: got[%d][%d] = %d", i, j, got[i][j]);
    }
    free(mineb);
    CHECK_MPI(MPI_Type_free(&mine));
}

static void replace_vector(void)
{
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_vector(100, 2, 3, MPI_INT, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    int a[300];
    for (int i = 0; i < 300; i++)
        a[i] = i % 3 == 2 ? -7 : rank * 1000 + i;
    CHECK_MPI(MPI_Sendrecv_replace(a, 1, v, next, 16, prev, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 300; i++) {
        int want = i % 3 == 2 ? -7 : prev * 1000 + i;
        CHECK(a[i] == want, "Sendrecv_replace a[%d] expected %d got %d", i, want, a[i]);
    }
    CHECK_MPI(MPI_Type_free(&v));
}

/* A matched probe, then the message received into a vector (Mrecv and Imrecv). */
static void mrecv_vector(void)
{
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_vector(50, 1, 2, MPI_INT, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    int s[50], r[100];
    for (int i = 0; i < 50; i++)
        s[i] = rank * 100 + i;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 100; i++)
            r[i] = -1;
        MPI_Request sr;
        CHECK_MPI(MPI_Isend(s, 50, MPI_INT, next, 17, MPI_COMM_WORLD, &sr));
        MPI_Message m;
        MPI_Status st;
        CHECK_MPI(MPI_Mprobe(prev, 17, MPI_COMM_WORLD, &m, &st));
        if (round == 0) {
            CHECK_MPI(MPI_Mrecv(r, 1, v, &m, &st));
        } else {
            MPI_Request rr;
            CHECK_MPI(MPI_Imrecv(r, 1, v, &m, &rr));
            CHECK_MPI(MPI_Wait(&rr, &st));
        }
        CHECK_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        for (int i = 0; i < 100; i++) {
            int want = i % 2 ? -1 : prev * 100 + i / 2;
            CHECK(r[i] == want, "Mrecv round %d: r[%d] expected %d got %d", round, i, want, r[i]);
        }
    }
    CHECK_MPI(MPI_Type_free(&v));
}

/* Pair types' packed form is their signature (T, int) without the C padding (MPI 3.1 §4.1.7):
 * n pairs sent as a struct of MPI_DOUBLE + MPI_INT laid out with no gaps land in n
 * MPI_DOUBLE_INT structs, and a message one double short counts 2n - 1 elements and no whole
 * pair.  MPI_SHORT_INT (padding between its parts) goes the other way, from structs to a
 * packed layout. */
static void pair_packed(int n)
{
    struct di {
        double v;
        int i;
    };
    const size_t ps = sizeof(double) + sizeof(int);
    unsigned char *wire = malloc(ps * (size_t)n);
    struct di *got = malloc(sizeof *got * (size_t)n);
    int *blens = malloc(sizeof *blens * 2 * (size_t)n);
    MPI_Aint *disp = malloc(sizeof *disp * 2 * (size_t)n);
    MPI_Datatype *types = malloc(sizeof *types * 2 * (size_t)n);
    for (int k = 0; k < n; k++) {
        double v = val(rank, k);
        int i = rank * 7 + k;
        memcpy(wire + ps * (size_t)k, &v, sizeof v);
        memcpy(wire + ps * (size_t)k + sizeof v, &i, sizeof i);
        blens[2 * k] = blens[2 * k + 1] = 1;
        disp[2 * k] = (MPI_Aint)(ps * (size_t)k);
        disp[2 * k + 1] = (MPI_Aint)(ps * (size_t)k + sizeof(double));
        types[2 * k] = MPI_DOUBLE;
        types[2 * k + 1] = MPI_INT;
    }
    int sz;
    MPI_Aint lb, ext;
    CHECK_MPI(MPI_Type_size(MPI_DOUBLE_INT, &sz));
    CHECK(sz == (int)ps, "MPI_Type_size(MPI_DOUBLE_INT) %d, expected %zu", sz, ps);
    CHECK_MPI(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct di), "MPI_DOUBLE_INT extent %td", ext);
    CHECK_MPI(MPI_Pack_size(n, MPI_DOUBLE_INT, MPI_COMM_WORLD, &sz));
    CHECK(sz >= (int)ps * n, "MPI_Pack_size(%d x MPI_DOUBLE_INT) %d", n, sz);
    MPI_Datatype flat, shorter, npairs;
    CHECK_MPI(MPI_Type_contiguous(n, MPI_DOUBLE_INT, &npairs));
    CHECK_MPI(MPI_Type_commit(&npairs));
    CHECK_MPI(MPI_Type_create_struct(2 * n, blens, disp, types, &flat));
    CHECK_MPI(MPI_Type_commit(&flat));
    CHECK_MPI(MPI_Type_create_struct(2 * n - 1, blens, disp, types, &shorter));
    CHECK_MPI(MPI_Type_commit(&shorter));
    for (int pass = 0; pass < 2; pass++) {
        memset(got, 0xff, sizeof *got * (size_t)n);
        MPI_Request rq;
        MPI_Status st;
        CHECK_MPI(MPI_Irecv(got, n, MPI_DOUBLE_INT, prev, 40, MPI_COMM_WORLD, &rq));
        CHECK_MPI(MPI_Send(wire, 1, pass ? shorter : flat, next, 40, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Wait(&rq, &st));
        int count, elems;
        CHECK_MPI(MPI_Get_count(&st, MPI_DOUBLE_INT, &count));
        CHECK_MPI(MPI_Get_elements(&st, MPI_DOUBLE_INT, &elems));
        CHECK(count == (pass ? MPI_UNDEFINED : n), "Get_count %d (pass %d, n %d)", count, pass, n);
        CHECK(elems == 2 * n - pass, "Get_elements %d (pass %d, n %d)", elems, pass, n);
        /* the same counted in a derived type of n pairs: its packed element has no padding */
        CHECK_MPI(MPI_Get_count(&st, npairs, &count));
        CHECK_MPI(MPI_Get_elements(&st, npairs, &elems));
        CHECK(count == (pass ? MPI_UNDEFINED : 1) && elems == 2 * n - pass,
              "Get_count %d, Get_elements %d in a contiguous type of %d MPI_DOUBLE_INT (pass %d)",
              count, elems, n, pass);
        for (int k = 0; k < n; k++) {
            CHECK(got[k].v == val(prev, k), "pair %d value %g, expected %g", k, got[k].v,
                  val(prev, k));
            if (pass && k == n - 1) break;
            CHECK(got[k].i == prev * 7 + k, "pair %d index %d, expected %d", k, got[k].i,
                  prev * 7 + k);
        }
    }
    /* Pack/Unpack agree with the wire: n pairs pack into exactly the flat bytes. */
    for (int k = 0; k < n; k++)
        got[k].v = val(rank, k), got[k].i = rank * 7 + k;
    unsigned char *packed = malloc((size_t)sz);
    int pos = 0;
    CHECK_MPI(MPI_Pack(got, n, MPI_DOUBLE_INT, packed, sz, &pos, MPI_COMM_WORLD));
    CHECK(pos == (int)ps * n && !memcmp(packed, wire, ps * (size_t)n),
          "MPI_Pack of %d MPI_DOUBLE_INT wrote %d bytes, not the %zu of the signature", n, pos,
          ps * (size_t)n);
    /* MPI_SHORT_INT: structs on the sender, {short, int} with no gap on the receiver. */
    struct si {
        short v;
        int i;
    } ssend[3] = {{(short)(rank + 1), rank * 3},
                  {(short)(rank + 2), rank * 3 + 1},
                  {(short)(rank + 3), rank * 3 + 2}};
    unsigned char sflat[3 * (sizeof(short) + sizeof(int))];
    int sbl[6] = {1, 1, 1, 1, 1, 1};
    MPI_Aint sd[6];
    MPI_Datatype stt[6];
    for (int k = 0; k < 3; k++) {
        sd[2 * k] = (MPI_Aint)(k * (sizeof(short) + sizeof(int)));
        sd[2 * k + 1] = sd[2 * k] + (MPI_Aint)sizeof(short);
        stt[2 * k] = MPI_SHORT;
        stt[2 * k + 1] = MPI_INT;
    }
    MPI_Datatype sflat_t;
    CHECK_MPI(MPI_Type_create_struct(6, sbl, sd, stt, &sflat_t));
    CHECK_MPI(MPI_Type_commit(&sflat_t));
    CHECK_MPI(MPI_Sendrecv(ssend, 3, MPI_SHORT_INT, next, 41, sflat, 1, sflat_t, prev, 41,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int k = 0; k < 3; k++) {
        short v;
        int i;
        memcpy(&v, sflat + sd[2 * k], sizeof v);
        memcpy(&i, sflat + sd[2 * k + 1], sizeof i);
        CHECK(v == prev + 1 + k && i == prev * 3 + k, "MPI_SHORT_INT pair %d: %d/%d", k, v, i);
    }
    MPI_Type_free(&sflat_t);
    MPI_Type_free(&flat);
    MPI_Type_free(&shorter);
    MPI_Type_free(&npairs);
    free(packed);
    free(types);
    free(disp);
    free(blens);
    free(got);
    free(wire);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;
    prev = (rank - 1 + size) % size;
    vector_ring(10, 4);     /* 80 bytes: eager */
    vector_ring(3000, 5);   /* 24 KB */
    vector_ring(200000, 3); /* 1.6 MB: above every eager limit */
    struct_ring(5);
    struct_ring(50000); /* 1.6 MB */
    indexed_partial();
    subarray_ring();
    darray_gather();
    replace_vector();
    mrecv_vector();
    pair_packed(4);      /* eager */
    pair_packed(100000); /* 1.2 MB: above every eager limit */
    return finish_ok();
}
