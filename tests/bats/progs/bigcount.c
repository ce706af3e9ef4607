/* bigcount.c — the large-count (_c) calls: every group on a few elements (results checked
 * element by element), the refusal of counts the int-counted engines cannot move
 * (MPI_ERR_COUNT, never a truncation), and transfers whose byte span exceeds 2^31 with little
 * memory: a type of 3 blocks 1 GiB apart, in a buffer reserved but mostly never touched.
 * Any number of ranks >= 2, one node or several.  Prints OK at rank 0. */
#include <limits.h>
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

static int eclass(int e)
{
    int c = e;
    MPI_Error_class(e, &c);
    return c;
}

static void collectives(void)
{
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *dis = malloc(sizeof(MPI_Aint) * size), *bdis = malloc(sizeof(MPI_Aint) * size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size);
    int *in = malloc(sizeof(int) * size * 2), *out = malloc(sizeof(int) * size * 2);
    for (int i = 0; i < size; i++) {
        cnt[i] = 2;
        dis[i] = 2 * (size - 1 - i); /* reversed blocks: the displacements matter */
        bdis[i] = (MPI_Aint)sizeof(int) * dis[i];
        types[i] = MPI_INT;
        in[2 * i] = rank * 1000 + i;
        in[2 * i + 1] = rank * 1000 + i + 500;
    }
    int two[2] = {rank, -rank};

    /* Bcast_c */
    int b[3] = {0, 0, 0};
    if (rank == 0) b[0] = 7, b[1] = 8, b[2] = 9;
    CHECK(MPI_Bcast_c(b, 3, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "Bcast_c");
    CHECK(b[0] == 7 && b[2] == 9, "Bcast_c result %d %d", b[0], b[2]);

    /* Gatherv_c: the root's MPI_Count counts and MPI_Aint displacements */
    memset(out, -1, sizeof(int) * size * 2);
    CHECK(MPI_Gatherv_c(two, 2, MPI_INT, out, cnt, dis, MPI_INT, 0, MPI_COMM_WORLD) == 0,
          "Gatherv_c");
    if (rank == 0)
        for (int i = 0; i < size; i++)
            CHECK(out[dis[i]] == i && out[dis[i] + 1] == -i, "Gatherv_c block %d", i);

    /* Allgatherv_c, Iallgatherv_c (the int copies live with the request) */
    memset(out, -1, sizeof(int) * size * 2);
    MPI_Request rq;
    CHECK(MPI_Iallgatherv_c(two, 2, MPI_INT, out, cnt, dis, MPI_INT, MPI_COMM_WORLD, &rq) == 0,
          "Iallgatherv_c");
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int i = 0; i < size; i++)
        CHECK(out[dis[i]] == i && out[dis[i] + 1] == -i, "Iallgatherv_c block %d", i);

    /* Alltoallw_c: byte displacements */
    memset(out, -1, sizeof(int) * size * 2);
    CHECK(MPI_Alltoallw_c(in, cnt, bdis, types, out, cnt, bdis, types, MPI_COMM_WORLD) == 0,
          "Alltoallw_c");
    for (int i = 0; i < size; i++)
        CHECK(out[dis[i]] == i * 1000 + (size - 1 - rank) &&
                  out[dis[i] + 1] == i * 1000 + (size - 1 - rank) + 500,
              "Alltoallw_c from %d: %d", i, out[dis[i]]);

    /* Alltoallv_init_c: persistent, started twice */
    for (int i = 0; i < size; i++)
        dis[i] = 2 * i;
    CHECK(MPI_Alltoallv_init_c(in, cnt, dis, MPI_INT, out, cnt, dis, MPI_INT, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &rq) == 0,
          "Alltoallv_init_c");
    for (int round = 0; round < 2; round++) {
        memset(out, -1, sizeof(int) * size * 2);
        MPI_Start(&rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        for (int i = 0; i < size; i++)
            CHECK(out[2 * i] == i * 1000 + rank && out[2 * i + 1] == i * 1000 + rank + 500,
                  "Alltoallv_init_c round %d from %d: %d", round, i, out[2 * i]);
    }
    MPI_Request_free(&rq);

    /* Reduce_scatter_c and Scan_c, Exscan_c */
    int ones[64], r[2] = {0, 0};
    for (int i = 0; i < 64; i++)
        ones[i] = i;
    if (size <= 32) {
        CHECK(MPI_Reduce_scatter_c(ones, r, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == 0,
              "Reduce_scatter_c");
        CHECK(r[0] == 2 * rank * size && r[1] == (2 * rank + 1) * size, "Reduce_scatter_c %d %d",
              r[0], r[1]);
    }
    int v = rank + 1, s = 0;
    CHECK(MPI_Scan_c(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == 0, "Scan_c");
    CHECK(s == (rank + 1) * (rank + 2) / 2, "Scan_c %d", s);

    /* Neighbor_alltoallv_c on a periodic ring */
    MPI_Comm ring;
    int dims[1] = {size}, per[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring);
    MPI_Count nc[2] = {1, 1};
    MPI_Aint nd[2] = {0, 1};
    int send2[2] = {rank * 10, rank * 10 + 1}, recv2[2] = {-1, -1};
    CHECK(MPI_Neighbor_alltoallv_c(send2, nc, nd, MPI_INT, recv2, nc, nd, MPI_INT, ring) == 0,
          "Neighbor_alltoallv_c");
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    /* from the left neighbour its block for its right (index 1), from the right its index 0 */
    CHECK(recv2[0] == left * 10 + 1 && recv2[1] == right * 10, "Neighbor_alltoallv_c %d %d",
          recv2[0], recv2[1]);
    MPI_Comm_free(&ring);

    /* refusals: a count beyond the engine's int, in a scalar and in an array, on every rank
     * (so no rank waits for another in the collective) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Count huge = (MPI_Count)INT_MAX + 1;
    /* counts past int of a type with gaps and no data (nothing moves, nothing is touched):
     * folded into one element of a contiguous type of them (count_narrow.h), every kind */
    MPI_Datatype none, gappy;
    char gs[8], gr[8];
    MPI_Type_contiguous(0, MPI_INT, &none);
    MPI_Type_create_resized(none, 0, 8, &gappy);
    MPI_Type_commit(&gappy);
    CHECK(MPI_Gather_c(gs, huge, gappy, gr, huge, gappy, 0, MPI_COMM_WORLD) == 0,
          "Gather_c of 2^31 empty elements with gaps");
    CHECK(MPI_Igather_c(gs, huge, gappy, gr, huge, gappy, 0, MPI_COMM_WORLD, &rq) == 0 &&
              MPI_Wait(&rq, MPI_STATUS_IGNORE) == 0,
          "Igather_c of 2^31 empty elements with gaps");
    CHECK(MPI_Allgather_init_c(gs, huge, gappy, gr, huge, gappy, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &rq) == 0 &&
              MPI_Start(&rq) == 0 && MPI_Wait(&rq, MPI_STATUS_IGNORE) == 0 && MPI_Start(&rq) == 0 &&
              MPI_Wait(&rq, MPI_STATUS_IGNORE) == 0 && MPI_Request_free(&rq) == 0,
          "Allgather_init_c of 2^31 empty elements with gaps, started twice");
    MPI_Type_free(&gappy);
    MPI_Type_free(&none);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
    free(cnt), free(dis), free(bdis), free(types), free(in), free(out);
}

/* Types whose counts, sizes and extents are past int (no memory: nothing is moved). */
static void big_types(void)
{
    const MPI_Count G5 = 5000000000LL, B = (MPI_Count)INT_MAX + 8;
    MPI_Datatype t;
    MPI_Count sz = 0, lb = 0, ext = 0, tlb = 0, text = 0, ni, na, nl, nd;
    int comb, isz = 0;
    MPI_Aint alb = 0, aext = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Type_contiguous_c(G5, MPI_BYTE, &t) == 0, "Type_contiguous_c of 5e9 bytes");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_extent_c(t, &lb, &ext);
    MPI_Type_get_true_extent_c(t, &tlb, &text);
    CHECK(sz == G5 && lb == 0 && ext == G5 && tlb == 0 && text == G5,
          "contiguous_c of 5e9: size %lld lb %lld extent %lld true %lld %lld", sz, lb, ext, tlb,
          text);
    /* MPI 4.1 §5.1: the int query says MPI_UNDEFINED when the size does not fit */
    CHECK(MPI_Type_size(t, &isz) == 0 && isz == MPI_UNDEFINED, "Type_size of 5e9: %d", isz);
    CHECK(MPI_Type_get_extent(t, &alb, &aext) == 0 && aext == G5, "Type_get_extent %ld",
          (long)aext);
    CHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb) == 0 &&
              comb == MPI_COMBINER_CONTIGUOUS && ni == 0 && na == 0 && nl == 1 && nd == 1,
          "envelope_c of contiguous_c(5e9): combiner %d %lld/%lld/%lld/%lld", comb, ni, na, nl, nd);
    MPI_Count lc[8] = {0};
    MPI_Datatype dts[2] = {0};
    CHECK(MPI_Type_get_contents_c(t, 0, 0, 1, 1, NULL, NULL, lc, dts) == 0 && lc[0] == G5 &&
              dts[0] == MPI_BYTE,
          "contents_c of contiguous_c(5e9): %lld", lc[0]);
    int ii, ia, id;
    CHECK(eclass(MPI_Type_get_envelope(t, &ii, &ia, &id, &comb)) == MPI_ERR_TYPE,
          "the int Type_get_envelope of a count past int is not MPI_ERR_TYPE");
    MPI_Count psz = 0;
    MPI_Type_commit(&t);
    CHECK(MPI_Pack_size_c(2, t, MPI_COMM_WORLD, &psz) == 0 && psz == 2 * G5, "Pack_size_c %lld",
          psz);
    MPI_Datatype t2;
    CHECK(MPI_Type_contiguous_c(3, t, &t2) == 0, "contiguous_c of 3 x 5e9");
    MPI_Type_size_c(t2, &sz);
    CHECK(sz == 3 * G5, "3 x 5e9: size %lld", sz);
    MPI_Type_free(&t2);
    MPI_Type_free(&t);

    /* a vector of 2 blocks of more than 2^31 bytes, 2^32 apart */
    CHECK(MPI_Type_vector_c(2, B, (MPI_Count)1 << 32, MPI_BYTE, &t) == 0, "Type_vector_c");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_extent_c(t, &lb, &ext);
    CHECK(sz == 2 * B && ext == ((MPI_Count)1 << 32) + B, "vector_c size %lld extent %lld", sz,
          ext);
    CHECK(MPI_Type_get_contents_c(t, 0, 0, 3, 1, NULL, NULL, lc, dts) == 0 && lc[0] == 2 &&
              lc[1] == B && lc[2] == (MPI_Count)1 << 32,
          "contents_c of vector_c: %lld %lld %lld", lc[0], lc[1], lc[2]);
    MPI_Type_free(&t);
    /* hvector, hindexed, indexed_block, struct with block lengths past int */
    CHECK(MPI_Type_create_hvector_c(2, B, 3 * B, MPI_BYTE, &t) == 0, "hvector_c");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_extent_c(t, &lb, &ext);
    CHECK(sz == 2 * B && ext == 4 * B, "hvector_c size %lld extent %lld", sz, ext);
    MPI_Type_free(&t);
    MPI_Count bl[2] = {B, 3}, ds[2] = {8, 3 * B};
    CHECK(MPI_Type_create_hindexed_c(2, bl, ds, MPI_BYTE, &t) == 0, "hindexed_c");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_true_extent_c(t, &tlb, &text);
    CHECK(sz == B + 3 && tlb == 8 && text == 3 * B + 3 - 8, "hindexed_c size %lld true %lld %lld",
          sz, tlb, text);
    CHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb) == 0 &&
              comb == MPI_COMBINER_HINDEXED && nl == 5 && ni == 0 && na == 0,
          "envelope_c of hindexed_c: %lld/%lld/%lld", ni, na, nl);
    MPI_Type_free(&t);
    MPI_Count ids[2] = {0, B};
    CHECK(MPI_Type_create_indexed_block_c(2, 1, ids, MPI_INT, &t) == 0, "indexed_block_c");
    MPI_Type_get_extent_c(t, &lb, &ext);
    CHECK(ext == 4 * B + 4, "indexed_block_c extent %lld", ext);
    MPI_Type_free(&t);
    MPI_Count il[2] = {1, B}, idi[2] = {0, 2};
    CHECK(MPI_Type_indexed_c(2, il, idi, MPI_SHORT, &t) == 0, "indexed_c");
    MPI_Type_size_c(t, &sz);
    CHECK(sz == 2 * (B + 1), "indexed_c size %lld", sz);
    MPI_Type_free(&t);
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Count sbl[2] = {1, B}, sds[2] = {0, 8};
    CHECK(MPI_Type_create_struct_c(2, sbl, sds, ty, &t) == 0, "struct_c");
    MPI_Type_size_c(t, &sz);
    CHECK(sz == 4 + 8 * B, "struct_c size %lld", sz);
    MPI_Type_free(&t);
    /* a subarray of rows longer than int */
    MPI_Count sizes[2] = {3, 3 * B}, sub[2] = {1, B}, st[2] = {1, 5};
    CHECK(MPI_Type_create_subarray_c(2, sizes, sub, st, MPI_ORDER_C, MPI_BYTE, &t) == 0,
          "subarray_c");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_extent_c(t, &lb, &ext);
    MPI_Type_get_true_extent_c(t, &tlb, &text);
    CHECK(sz == B && ext == 9 * B && tlb == 3 * B + 5, "subarray_c size %lld extent %lld lb %lld",
          sz, ext, tlb);
    CHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb) == 0 && ni == 2 && nl == 6,
          "envelope_c of subarray_c: %lld ints %lld large", ni, nl);
    MPI_Type_free(&t);
    MPI_Count gs[1] = {4 * B};
    int dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
    CHECK(MPI_Type_create_darray_c(2, 1, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_BYTE, &t) == 0,
          "darray_c");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_true_extent_c(t, &tlb, &text);
    CHECK(sz == 2 * B && tlb == 2 * B, "darray_c size %lld true lb %lld", sz, tlb);
    MPI_Type_free(&t);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void datatypes(void)
{
    MPI_Datatype t;
    MPI_Count sz = 0, lb = 0, ext = 0;
    CHECK(MPI_Type_vector_c(3, 2, 5, MPI_INT, &t) == 0, "Type_vector_c");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_extent_c(t, &lb, &ext);
    CHECK(sz == 24 && ext == 48, "Type_vector_c size %lld extent %lld", sz, ext);
    MPI_Count ni, na, nl, nd;
    int comb;
    CHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb) == 0 &&
              comb == MPI_COMBINER_VECTOR && ni == 3 && nd == 1,
          "Type_get_envelope_c: combiner %d, %lld ints", comb, ni);
    int ints[3];
    MPI_Aint addrs[1];
    MPI_Count lc[1];
    MPI_Datatype dts[1];
    CHECK(MPI_Type_get_contents_c(t, 3, 0, 0, 1, ints, addrs, lc, dts) == 0 && ints[0] == 3 &&
              ints[1] == 2 && ints[2] == 5 && dts[0] == MPI_INT,
          "Type_get_contents_c");
    MPI_Type_free(&t);

    MPI_Count bl[2] = {1, 2}, ds[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    CHECK(MPI_Type_create_struct_c(2, bl, ds, ty, &t) == 0, "Type_create_struct_c");
    MPI_Type_size_c(t, &sz);
    CHECK(sz == 20, "Type_create_struct_c size %lld", sz);
    MPI_Type_free(&t);

    MPI_Count sizes[2] = {4, 6}, sub[2] = {2, 3}, st[2] = {1, 2};
    CHECK(MPI_Type_create_subarray_c(2, sizes, sub, st, MPI_ORDER_C, MPI_CHAR, &t) == 0,
          "Type_create_subarray_c");
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_extent_c(t, &lb, &ext);
    CHECK(sz == 6 && ext == 24, "Type_create_subarray_c size %lld extent %lld", sz, ext);
    MPI_Type_free(&t);

    CHECK(MPI_Type_create_resized_c(MPI_INT, 0, (MPI_Count)3 << 30, &t) == 0, "resized_c");
    MPI_Type_get_extent_c(t, &lb, &ext);
    CHECK(ext == (MPI_Count)3 << 30, "Type_create_resized_c extent %lld", ext);
    MPI_Type_free(&t);

    /* external32 packing with MPI_Count positions */
    int data[3] = {1, 2, 3}, back[3] = {0, 0, 0};
    char pk[64];
    MPI_Count psz = 0, pos = 0;
    CHECK(MPI_Pack_external_size_c("external32", 3, MPI_INT, &psz) == 0 && psz == 12,
          "Pack_external_size_c %lld", psz);
    CHECK(MPI_Pack_external_c("external32", data, 3, MPI_INT, pk, sizeof pk, &pos) == 0 &&
              pos == 12 && pk[3] == 1,
          "Pack_external_c position %lld", pos);
    pos = 0;
    CHECK(MPI_Unpack_external_c("external32", pk, 12, &pos, back, 3, MPI_INT) == 0 && back[2] == 3,
          "Unpack_external_c");

    big_types();
}

static MPI_Count seen_len;
static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    seen_len = *len;
    for (MPI_Count i = 0; i < *len; i++)
        ((long *)inout)[i] += ((long *)in)[i];
}

static void ops_buffers_windows(void)
{
    MPI_Op op;
    CHECK(MPI_Op_create_c(sum_c, 1, &op) == 0, "Op_create_c");
    long x[5] = {rank, rank, rank, rank, rank + 1}, y[5];
    CHECK(MPI_Allreduce_c(x, y, 5, MPI_LONG, op, MPI_COMM_WORLD) == 0, "Allreduce_c user op");
    CHECK(y[0] == (long)size * (size - 1) / 2 && y[4] == (long)size * (size + 1) / 2,
          "MPI_User_function_c sum %ld %ld", y[0], y[4]);
    /* which ranks run the function is the engine's choice: one of them saw all 5 */
    MPI_Count most = 0;
    MPI_Allreduce(&seen_len, &most, 1, MPI_COUNT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(most == 5, "MPI_User_function_c len %lld", most);
    MPI_Op_free(&op);

    /* a buffered send through Buffer_attach_c, Buffer_detach_c gives back the MPI_Count size */
    MPI_Count bsz = 4096 + MPI_BSEND_OVERHEAD;
    void *bb = malloc(bsz), *got = NULL;
    MPI_Count gsz = 0;
    CHECK(MPI_Buffer_attach_c(bb, bsz) == 0, "Buffer_attach_c");
    int msg = 42 + rank, in = -1;
    MPI_Bsend_c(&msg, 1, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD);
    MPI_Recv_c(&in, 1, MPI_INT, (rank + size - 1) % size, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(in == 42 + (rank + size - 1) % size, "Bsend_c through Buffer_attach_c: %d", in);
    CHECK(MPI_Buffer_detach_c(&got, &gsz) == 0 && got == bb && gsz == bsz, "Buffer_detach_c");
    free(bb);

    /* Win_allocate_c with an MPI_Aint unit, Put_c, Win_shared_query_c on a node's window */
    MPI_Win win;
    int *base;
    CHECK(MPI_Win_allocate_c(sizeof(int) * 4, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                             &win) == 0,
          "Win_allocate_c");
    for (int i = 0; i < 4; i++)
        base[i] = -1;
    MPI_Win_fence(0, win);
    int val = 100 + rank;
    MPI_Put_c(&val, 1, MPI_INT, (rank + 1) % size, 2, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    CHECK(base[2] == 100 + (rank + size - 1) % size, "Put_c at displacement 2 of unit 4: %d",
          base[2]);
    MPI_Win_free(&win);

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    CHECK(MPI_Win_allocate_shared_c(64, 8, MPI_INFO_NULL, node, &base, &win) == 0,
          "Win_allocate_shared_c");
    MPI_Aint qs = 0, qu = 0;
    void *qb = NULL;
    CHECK(MPI_Win_shared_query_c(win, 0, &qs, &qu, &qb) == 0 && qs == 64 && qu == 8 && qb,
          "Win_shared_query_c size %td unit %td", qs, qu);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

/* 3 blocks of 4 KiB, 1 GiB apart: one element spans 2 GiB + 4 KiB of addresses. */
#define SPAN_STRIDE ((MPI_Aint)1 << 30)
#define SPAN_BLOCK 4096
#define SPAN_BYTES (2 * SPAN_STRIDE + SPAN_BLOCK)

static unsigned char pat(int from, int blk, int i)
{
    return (unsigned char)(from * 31 + blk * 7 + i);
}

static void large_span(void)
{
    MPI_Datatype t;
    MPI_Type_create_hvector_c(3, SPAN_BLOCK, SPAN_STRIDE, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    MPI_Count ext = 0, lb = 0;
    MPI_Type_get_extent_c(t, &lb, &ext);
    CHECK(ext == SPAN_BYTES && ext > INT_MAX, "large extent %lld", ext);
    /* reserved, not committed: only the pages of the 3 blocks are ever touched */
    unsigned char *buf = mmap(NULL, SPAN_BYTES, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(buf != MAP_FAILED, "mmap of %td bytes", (MPI_Aint)SPAN_BYTES);
    if (buf == MAP_FAILED) return;
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < SPAN_BLOCK; i++)
            buf[b * SPAN_STRIDE + i] = pat(rank, b, i);

    /* a message: Sendrecv_replace_c of one element around the ring */
    MPI_Status st;
    CHECK(MPI_Sendrecv_replace_c(buf, 1, t, to, 9, from, 9, MPI_COMM_WORLD, &st) == 0,
          "Sendrecv_replace_c");
    MPI_Count n = -1;
    MPI_Get_count_c(&st, t, &n);
    CHECK(n == 1, "Get_count_c %lld", n);
    int bad = 0;
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < SPAN_BLOCK; i++)
            bad += buf[b * SPAN_STRIDE + i] != pat(from, b, i);
    CHECK(!bad, "message across 2^31 bytes: %d bytes wrong", bad);

    /* a collective: Bcast_c from the last rank */
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < SPAN_BLOCK; i++)
            buf[b * SPAN_STRIDE + i] = rank == size - 1 ? pat(size - 1, b, i) : 0;
    CHECK(MPI_Bcast_c(buf, 1, t, size - 1, MPI_COMM_WORLD) == 0, "Bcast_c");
    bad = 0;
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < SPAN_BLOCK; i++)
            bad += buf[b * SPAN_STRIDE + i] != pat(size - 1, b, i);
    CHECK(!bad, "Bcast_c across 2^31 bytes: %d bytes wrong", bad);

    /* an RMA transfer: Put_c of one element into the next rank's window of 2 GiB + 4 KiB */
    MPI_Win win;
    MPI_Win_create_c(buf, SPAN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    unsigned char *src = malloc(SPAN_BYTES > 0 ? 3 * SPAN_BLOCK : 1);
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < SPAN_BLOCK; i++)
            src[b * SPAN_BLOCK + i] = pat(rank + 1, b, i);
    MPI_Win_fence(0, win);
    CHECK(MPI_Put_c(src, 3 * SPAN_BLOCK, MPI_BYTE, to, 0, 1, t, win) == 0, "Put_c");
    MPI_Win_fence(0, win);
    bad = 0;
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < SPAN_BLOCK; i++)
            bad += buf[b * SPAN_STRIDE + i] != pat(from + 1, b, i);
    CHECK(!bad, "Put_c across 2^31 bytes: %d bytes wrong", bad);
    MPI_Win_free(&win);
    free(src);
    munmap(buf, SPAN_BYTES);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    collectives();
    datatypes();
    ops_buffers_windows();
    large_span();
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && !all) printf("OK\n");
    MPI_Finalize();
    return all != 0;
}
