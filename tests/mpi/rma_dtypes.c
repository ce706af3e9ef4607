/* rma_dtypes.c — one-sided calls with derived datatypes on the origin, result and target sides
 * (MPI 3.1 §11.3: any datatypes whose signatures match), each rank working on its right
 * neighbour's window (on this node, or on another node across agents): Put into vector,
 * subarray, struct and hindexed (negative displacement) targets; Get through an indexed origin;
 * concurrent Accumulate from every rank into every rank's vector target checked element by
 * element; Get_accumulate and MPI_NO_OP with a vector result; the request forms; a vector of
 * more pieces and bytes than one frame carries (Put, Get, Accumulate); and the errors: a mixed
 * struct in an accumulate and a derived type in Fetch_and_op are MPI_ERR_TYPE, a derived
 * target outside the window MPI_ERR_RMA_RANGE. */
#include <string.h>

#include "check.h"

#define NW 1024 /* ints in the small window */
#define NV 16   /* elements of the small vectors */
#define ACC 300 /* where the accumulates go */
#define NA 64   /* elements each rank accumulates */

static int cls(int err)
{
    int c = -1;
    MPI_Error_class(err, &c);
    return c;
}

static int val(int rank, int k)
{
    return rank * 1000 + k;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int *w;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate(NW * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    memset(w, 0, NW * sizeof(int));

    /* Types: every third int; 3x4 block of an 8x8 array at (2, 1); a struct of ints with a
     * gap; two ints 8 bytes below and above the displacement; every other int (origin). */
    MPI_Datatype vec3, sub, st, neg, vec2, idx, acc_t;
    CHECK_MPI(MPI_Type_vector(NV, 1, 3, MPI_INT, &vec3));
    int sizes[2] = {8, 8}, subs[2] = {3, 4}, starts[2] = {2, 1};
    CHECK_MPI(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub));
    int sbl[2] = {1, 2};
    MPI_Aint sdisp[2] = {0, 16};
    MPI_Datatype sty[2] = {MPI_INT, MPI_INT};
    CHECK_MPI(MPI_Type_create_struct(2, sbl, sdisp, sty, &st));
    int nbl[2] = {1, 1};
    MPI_Aint ndisp[2] = {-8, 8};
    CHECK_MPI(MPI_Type_create_hindexed(2, nbl, ndisp, MPI_INT, &neg));
    CHECK_MPI(MPI_Type_vector(NV, 1, 2, MPI_INT, &vec2));
    int ibl[3] = {4, 2, 10}, idisp[3] = {1, 7, 12};
    CHECK_MPI(MPI_Type_indexed(3, ibl, idisp, MPI_INT, &idx));
    CHECK_MPI(MPI_Type_vector(NA / 2, 2, 3, MPI_INT, &acc_t)); /* pairs of ints, one gap */
    MPI_Datatype all[] = {vec3, sub, st, neg, vec2, idx, acc_t};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK_MPI(MPI_Type_commit(&all[i]));
    vec3 = all[0], sub = all[1], st = all[2], neg = all[3], vec2 = all[4], idx = all[5];
    acc_t = all[6];

    /* ---- Put into derived targets, checked by the target after a fence ---- */
    int src[64];
    for (int k = 0; k < 64; k++)
        src[k] = val(rank, k);
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(src, NV, MPI_INT, right, 0, 1, vec3, win));
    CHECK_MPI(MPI_Put(src, 12, MPI_INT, right, 64, 1, sub, win));
    CHECK_MPI(MPI_Put(src, 3, MPI_INT, right, 140, 1, st, win));
    CHECK_MPI(MPI_Put(src, 2, MPI_INT, right, 200, 1, neg, win));
    /* derived origin (every other int of src) into a contiguous target */
    CHECK_MPI(MPI_Put(src, 1, vec2, right, 220, NV, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int k = 0; k < 3 * NV; k++)
        CHECK(w[k] == (k % 3 ? 0 : val(left, k / 3)), "vector put [%d]: expected %d got %d", k,
              k % 3 ? 0 : val(left, k / 3), w[k]);
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) {
            int in = r >= 2 && r < 5 && c >= 1 && c < 5;
            int want = in ? val(left, (r - 2) * 4 + (c - 1)) : 0;
            CHECK(w[64 + r * 8 + c] == want, "subarray put (%d, %d): expected %d got %d", r, c,
                  want, w[64 + r * 8 + c]);
        }
    CHECK(w[140] == val(left, 0) && w[141] == 0 && w[142] == 0 && w[143] == 0 &&
              w[144] == val(left, 1) && w[145] == val(left, 2) && w[146] == 0,
          "struct put: got %d %d %d %d %d %d %d", w[140], w[141], w[142], w[143], w[144], w[145],
          w[146]);
    CHECK(w[198] == val(left, 0) && w[199] == 0 && w[200] == 0 && w[201] == 0 &&
              w[202] == val(left, 1),
          "hindexed put below and above the displacement: got %d %d %d %d %d", w[198], w[199],
          w[200], w[201], w[202]);
    for (int k = 0; k < NV; k++)
        CHECK(w[220 + k] == val(left, 2 * k), "put from a vector origin [%d]: expected %d got %d",
              k, val(left, 2 * k), w[220 + k]);

    /* ---- Get: a vector target into an indexed origin, and the subarray back ---- */
    int got[64], want[64];
    memset(got, -1, sizeof got);
    CHECK_MPI(MPI_Get(got, 1, idx, right, 0, NV, MPI_INT, win));
    int gsub[12];
    CHECK_MPI(MPI_Get(gsub, 12, MPI_INT, right, 64, 1, sub, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    /* right's window holds my puts: [3k] = val(rank, k) */
    memset(want, -1, sizeof want);
    for (int b = 0, n = 0; b < 3; b++)
        for (int i = 0; i < ibl[b]; i++, n++)
            want[idisp[b] + i] = n % 3 ? 0 : val(rank, n / 3);
    for (int k = 0; k < 64; k++)
        CHECK(got[k] == want[k], "get into an indexed origin [%d]: expected %d got %d", k, want[k],
              got[k]);
    for (int k = 0; k < 12; k++)
        CHECK(gsub[k] == val(rank, k), "get of a subarray [%d]: expected %d got %d", k,
              val(rank, k), gsub[k]);

    /* ---- Accumulate from every rank into every rank, concurrently ---- */
    int aorig[3 * NA / 2];
    for (int k = 0; k < 3 * NA / 2; k++)
        aorig[k] = rank + 1 + k;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int s = 0; s < size; s++) {
        int t = (rank + s) % size;
        /* contiguous origin into the vector target, then the same data through the vector
         * origin (acc_t over aorig picks aorig[3i], aorig[3i+1]) into it again */
        int packed[NA];
        for (int i = 0; i < NA / 2; i++) {
            packed[2 * i] = aorig[3 * i];
            packed[2 * i + 1] = aorig[3 * i + 1];
        }
        CHECK_MPI(MPI_Accumulate(packed, NA, MPI_INT, t, ACC, 1, acc_t, MPI_SUM, win));
        CHECK_MPI(MPI_Accumulate(aorig, 1, acc_t, t, ACC, 1, acc_t, MPI_SUM, win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* element 3i + j (j < 2) got sum over q of 2 * (q + 1 + 3i + j); 3i + 2 untouched */
    for (int i = 0; i < NA / 2; i++)
        for (int j = 0; j < 3; j++) {
            int e = 3 * i + j;
            int wnt = j == 2 ? 0 : 2 * (size * (size + 1) / 2 + size * e);
            CHECK(w[ACC + e] == wnt, "accumulate into a vector [%d]: expected %d got %d", e, wnt,
                  w[ACC + e]);
        }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- Get_accumulate: fetch through a vector result, then MPI_NO_OP ---- */
    int res[3 * NA / 2], none[NA];
    memset(res, -1, sizeof res);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    CHECK_MPI(
        MPI_Get_accumulate(aorig, 1, acc_t, res, 1, acc_t, right, ACC, 1, acc_t, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_INT, none, NA, MPI_INT, right, ACC, 1, acc_t,
                                 MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_unlock(right, win));
    for (int i = 0; i < NA / 2; i++)
        for (int j = 0; j < 3; j++) {
            int e = 3 * i + j;
            int before = j == 2 ? -1 : 2 * (size * (size + 1) / 2 + size * e);
            CHECK(res[e] == before,
                  "get_accumulate result through a vector [%d]: expected %d got %d", e, before,
                  res[e]);
            if (j == 2) continue;
            int after = before + rank + 1 + e;
            CHECK(none[2 * i + j] == after, "MPI_NO_OP fetch [%d]: expected %d got %d", 2 * i + j,
                  after, none[2 * i + j]);
        }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- Request forms ---- */
    int rbuf[NV];
    memset(rbuf, 0, sizeof rbuf);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    MPI_Request rq[3];
    CHECK_MPI(MPI_Rput(src, 1, vec2, right, 500, 1, vec3, win, &rq[0]));
    CHECK_MPI(MPI_Waitall(1, rq, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Raccumulate(src, 1, vec2, right, 500, 1, vec3, MPI_SUM, win, &rq[1]));
    CHECK_MPI(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Rget(rbuf, NV, MPI_INT, right, 500, 1, vec3, win, &rq[2]));
    CHECK_MPI(MPI_Wait(&rq[2], MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_unlock_all(win));
    for (int k = 0; k < NV; k++)
        CHECK(rbuf[k] == 2 * val(rank, 2 * k), "rput + raccumulate + rget [%d]: expected %d got %d",
              k, 2 * val(rank, 2 * k), rbuf[k]);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- Errors ---- */
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Datatype mixed;
    int mbl[2] = {1, 1};
    MPI_Aint mdisp[2] = {0, 8};
    MPI_Datatype mty[2] = {MPI_INT, MPI_DOUBLE};
    CHECK_MPI(MPI_Type_create_struct(2, mbl, mdisp, mty, &mixed));
    CHECK_MPI(MPI_Type_commit(&mixed));
    MPI_Datatype cont;
    CHECK_MPI(MPI_Type_contiguous(1, MPI_INT, &cont));
    CHECK_MPI(MPI_Type_commit(&cont));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    char mbuf[16] = {0};
    int e = MPI_Accumulate(mbuf, 1, mixed, right, 0, 1, mixed, MPI_SUM, win);
    CHECK(cls(e) == MPI_ERR_TYPE, "accumulate of a mixed struct: expected MPI_ERR_TYPE, got %d",
          cls(e));
    e = MPI_Accumulate(mbuf, 1, mixed, right, 0, 1, mixed, MPI_REPLACE, win);
    CHECK(cls(e) == MPI_ERR_TYPE, "REPLACE of a mixed struct: expected MPI_ERR_TYPE, got %d",
          cls(e));
    int one = 1, old = 0;
    e = MPI_Fetch_and_op(&one, &old, cont, right, 0, MPI_SUM, win);
    CHECK(cls(e) == MPI_ERR_TYPE, "fetch_and_op on a derived type: expected MPI_ERR_TYPE, got %d",
          cls(e));
    e = MPI_Put(src, NV, MPI_INT, right, NW - 3 * NV + 3, 1, vec3, win);
    CHECK(cls(e) == MPI_ERR_RMA_RANGE,
          "vector put past the end: expected MPI_ERR_RMA_RANGE, got %d", cls(e));
    e = MPI_Put(src, 2, MPI_INT, right, 1, 1, neg, win);
    CHECK(cls(e) == MPI_ERR_RMA_RANGE,
          "hindexed put below the start: expected MPI_ERR_RMA_RANGE, got %d", cls(e));
    e = MPI_Put(src, NV + 1, MPI_INT, right, 0, 1, vec3, win);
    CHECK(cls(e) == MPI_ERR_TYPE, "put of 17 ints into 16: expected MPI_ERR_TYPE, got %d", cls(e));
    /* a mixed struct moves by Put and Get (no element is combined) */
    CHECK_MPI(MPI_Put(mbuf, 1, mixed, right, 600, 1, mixed, win));
    /* no bytes on either side (a count of 0, a type of size 0): the empty signatures match
     * whatever the types, and no buffer is needed */
    MPI_Datatype empty;
    CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
    CHECK_MPI(MPI_Type_commit(&empty));
    CHECK_MPI(MPI_Put(NULL, 0, MPI_CHAR, right, 0, 0, MPI_DOUBLE, win));
    CHECK_MPI(MPI_Put(NULL, 2, empty, right, 0, 0, MPI_DOUBLE, win));
    CHECK_MPI(MPI_Get(NULL, 0, MPI_INT, right, 0, 1, empty, win));
    CHECK_MPI(MPI_Accumulate(NULL, 1, empty, right, 0, 0, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_INT, NULL, 1, empty, right, 0, 0, MPI_DOUBLE, MPI_SUM,
                                 win));
    CHECK_MPI(MPI_Type_free(&empty));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Type_free(&mixed));
    CHECK_MPI(MPI_Type_free(&cont));
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK_MPI(MPI_Type_free(&all[i]));
    CHECK_MPI(MPI_Win_free(&win));

    /* ---- Beyond one frame: 3 of every 4 ints, 360000 times (4.3 MB, 360000 pieces) ---- */
    const int nb = 360000, n = 3 * nb;
    MPI_Datatype big;
    CHECK_MPI(MPI_Type_vector(nb, 3, 4, MPI_INT, &big));
    CHECK_MPI(MPI_Type_commit(&big));
    int *bw, *bsrc = malloc(sizeof(int) * (size_t)n), *bback = malloc(sizeof(int) * (size_t)4 * nb);
    CHECK(bsrc && bback);
    CHECK_MPI(MPI_Win_allocate((MPI_Aint)sizeof(int) * 4 * nb, sizeof(int), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &bw, &win));
    memset(bw, 0, sizeof(int) * (size_t)4 * nb);
    for (int k = 0; k < n; k++)
        bsrc[k] = k ^ rank;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(bsrc, n, MPI_INT, right, 0, 1, big, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int k = 0; k < 4 * nb; k++) {
        int wnt = k % 4 == 3 ? 0 : ((k / 4) * 3 + k % 4) ^ left;
        CHECK(bw[k] == wnt, "big vector put [%d]: expected %d got %d", k, wnt, bw[k]);
    }
    memset(bback, -1, sizeof(int) * (size_t)4 * nb);
    CHECK_MPI(MPI_Get(bback, 1, big, right, 0, 1, big, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int k = 0; k < 4 * nb; k++) {
        int wnt = k % 4 == 3 ? -1 : ((k / 4) * 3 + k % 4) ^ rank;
        CHECK(bback[k] == wnt, "big vector get [%d]: expected %d got %d", k, wnt, bback[k]);
    }
    CHECK_MPI(MPI_Accumulate(bsrc, n, MPI_INT, right, 0, 1, big, MPI_BXOR, win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int k = 0; k < 4 * nb; k++)
        CHECK(bw[k] == 0, "big vector accumulate (x ^ x) [%d]: expected 0 got %d", k, bw[k]);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Type_free(&big));
    free(bsrc);
    free(bback);
    return finish_ok();
}
