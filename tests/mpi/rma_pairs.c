/* rma_pairs.c — accumulates on the padded MINLOC/MAXLOC pair types (MPI_DOUBLE_INT,
 * MPI_SHORT_INT, MPI_LONG_INT, MPI_LONG_DOUBLE_INT), whose packed form has no padding while the
 * window holds their C structs: each rank works on its right neighbour's window (this node, or
 * another node across agents).  MAXLOC through a vector of pairs from a contiguous origin,
 * MINLOC from a vector origin into contiguous pairs, Get_accumulate into a vector result,
 * MPI_REPLACE and MPI_NO_OP, Fetch_and_op on one pair, and a contiguous type of more pairs than
 * one frame names pieces for (SHORT_INT's merged blocks cross pairs, so the frames must end
 * where a pair does); every element checked, the pairs left out of the target type untouched
 * (MPICH rma/acc_pairtype does the vector case). */
#include <string.h>

#include "check.h"

#define NP 24     /* pairs of the small cases */
#define NBIG 9000 /* pairs of the large case: more pieces than one frame names (4096) */
#define NWIN (2 * NBIG)

/* One test per pair type: T its C struct, VT its value type, DT its MPI handle. */
#define PAIR_TEST(name, T, VT, DT)                                                                 \
    static void name(int rank, int right, int left)                                                \
    {                                                                                              \
        T *w, *o = malloc(sizeof *o * NWIN), *r = malloc(sizeof *r * NWIN);                        \
        MPI_Win win;                                                                               \
        CHECK(o &&r, "out of memory");                                                             \
        CHECK_MPI(MPI_Win_allocate((MPI_Aint)(sizeof *w * NWIN), sizeof *w, MPI_INFO_NULL,         \
                                   MPI_COMM_WORLD, &w, &win));                                     \
        for (int k = 0; k < NWIN; k++)                                                             \
            w[k].v = (VT)0, w[k].i = -1;                                                           \
        MPI_Datatype every2, big;                                                                  \
        CHECK_MPI(MPI_Type_vector(NP, 1, 2, DT, &every2));                                         \
        CHECK_MPI(MPI_Type_commit(&every2));                                                       \
        CHECK_MPI(MPI_Type_contiguous(NBIG, DT, &big));                                            \
        CHECK_MPI(MPI_Type_commit(&big));                                                          \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        /* MAXLOC: NP contiguous pairs into every other pair of the target */                      \
        for (int k = 0; k < NP; k++)                                                               \
            o[k].v = (VT)(k + 1), o[k].i = rank * 100 + k;                                         \
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));                                \
        CHECK_MPI(MPI_Accumulate(o, NP, DT, right, 0, 1, every2, MPI_MAXLOC, win));                \
        CHECK_MPI(MPI_Win_unlock(right, win));                                                     \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));                                    \
        for (int k = 0; k < 2 * NP; k++) {                                                         \
            int want_v = k % 2 ? 0 : k / 2 + 1, want_i = k % 2 ? -1 : left * 100 + k / 2;          \
            CHECK(w[k].v == (VT)want_v && w[k].i == want_i,                                        \
                  #DT " MAXLOC through a vector: pair %d is %g/%d, expected %d/%d", k,             \
                  (double)w[k].v, w[k].i, want_v, want_i);                                         \
        }                                                                                          \
        CHECK_MPI(MPI_Win_unlock(rank, win));                                                      \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        /* Get_accumulate MINLOC from a vector origin into NP pairs at 2 NP (put there first) */   \
        for (int k = 0; k < 2 * NP; k++)                                                           \
            o[k].v = (VT)(k % 2 ? 99 : k / 2), o[k].i = rank;                                      \
        for (int k = 0; k < 2 * NP; k++)                                                           \
            r[k].v = (VT)7, r[k].i = 7;                                                            \
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));                                \
        CHECK_MPI(MPI_Put(o, 1, every2, right, 2 * NP, NP, DT, win));                              \
        CHECK_MPI(MPI_Win_flush(right, win));                                                      \
        for (int k = 0; k < 2 * NP; k++)                                                           \
            o[k].v = (VT)(k % 2 ? 99 : k % 4 ? 0 : 50), o[k].i = rank + 1;                         \
        CHECK_MPI(MPI_Get_accumulate(o, 1, every2, r, 1, every2, right, 2 * NP, NP, DT,            \
                                     MPI_MINLOC, win));                                            \
        CHECK_MPI(MPI_Win_unlock(right, win));                                                     \
        for (int k = 0; k < 2 * NP; k++) {                                                         \
            int want_v = k % 2 ? 7 : k / 2, want_i = k % 2 ? 7 : rank;                             \
            CHECK(r[k].v == (VT)want_v && r[k].i == want_i,                                        \
                  #DT " Get_accumulate result pair %d is %g/%d, expected %d/%d", k,                \
                  (double)r[k].v, r[k].i, want_v, want_i);                                         \
        }                                                                                          \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));                                    \
        for (int k = 0; k < NP; k++) {                                                             \
            /* the old k (index left) against 0 or 50 (index left + 1); ties: the lower index */   \
            int nv = k % 2 ? 0 : 50;                                                               \
            int want_v = nv < k ? nv : k, want_i = nv < k ? left + 1 : left;                       \
            CHECK(w[2 * NP + k].v == (VT)want_v && w[2 * NP + k].i == want_i,                      \
                  #DT " MINLOC from a vector: pair %d is %g/%d, expected %d/%d", k,                \
                  (double)w[2 * NP + k].v, w[2 * NP + k].i, want_v, want_i);                       \
        }                                                                                          \
        CHECK_MPI(MPI_Win_unlock(rank, win));                                                      \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        /* Fetch_and_op MAXLOC on one pair, then MPI_NO_OP reads it back */                        \
        T one = {(VT)1000, rank}, got = {(VT)0, 0}, seen = {(VT)0, 0};                             \
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));                                \
        CHECK_MPI(MPI_Fetch_and_op(&one, &got, DT, right, 1, MPI_MAXLOC, win));                    \
        CHECK_MPI(MPI_Win_flush(right, win));                                                      \
        CHECK_MPI(MPI_Fetch_and_op(NULL, &seen, DT, right, 1, MPI_NO_OP, win));                    \
        CHECK_MPI(MPI_Win_unlock(right, win));                                                     \
        CHECK(got.v == (VT)0 && got.i == -1 && seen.v == (VT)1000 && seen.i == rank,               \
              #DT " Fetch_and_op fetched %g/%d then %g/%d", (double)got.v, got.i, (double)seen.v,  \
              seen.i);                                                                             \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        /* MPI_REPLACE of NBIG pairs at NWIN - NBIG, then MAXLOC with every odd one larger */      \
        for (int k = 0; k < NBIG; k++)                                                             \
            o[k].v = (VT)(k % 100), o[k].i = rank * 10 + k % 7;                                    \
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));                                \
        CHECK_MPI(MPI_Accumulate(o, NBIG, DT, right, NWIN - NBIG, 1, big, MPI_REPLACE, win));      \
        CHECK_MPI(MPI_Win_flush(right, win));                                                      \
        for (int k = 0; k < NBIG; k++)                                                             \
            o[k].v = (VT)(k % 2 ? 100 : 0), o[k].i = 5;                                            \
        CHECK_MPI(MPI_Accumulate(o, 1, big, right, NWIN - NBIG, NBIG, DT, MPI_MAXLOC, win));       \
        CHECK_MPI(MPI_Win_unlock(right, win));                                                     \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));                                    \
        for (int k = 0; k < NBIG; k++) {                                                           \
            const T *p = &w[NWIN - NBIG + k];                                                      \
            const int put_i = left * 10 + k % 7, tie_i = put_i < 5 ? put_i : 5;                    \
            int want_v = k % 2 ? 100 : k % 100, want_i = k % 2 ? 5 : k % 100 ? put_i : tie_i;      \
            CHECK(p->v == (VT)want_v && p->i == want_i,                                            \
                  #DT " %d pairs: pair %d is %g/%d, expected %d/%d", NBIG, k, (double)p->v, p->i,  \
                  want_v, want_i);                                                                 \
        }                                                                                          \
        for (int k = 2 * NP + NP; k < NWIN - NBIG; k++)                                            \
            CHECK(w[k].v == (VT)0 && w[k].i == -1, #DT " pair %d outside every target changed",    \
                  k);                                                                              \
        CHECK_MPI(MPI_Win_unlock(rank, win));                                                      \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        CHECK_MPI(MPI_Type_free(&every2));                                                         \
        CHECK_MPI(MPI_Type_free(&big));                                                            \
        CHECK_MPI(MPI_Win_free(&win));                                                             \
        free(o);                                                                                   \
        free(r);                                                                                   \
    }

struct double_int {
    double v;
    int i;
};
struct short_int {
    short v;
    int i;
};
struct long_int {
    long v;
    int i;
};
struct long_double_int {
    long double v;
    int i;
};

PAIR_TEST(double_int, struct double_int, double, MPI_DOUBLE_INT)
PAIR_TEST(short_int, struct short_int, short, MPI_SHORT_INT)
PAIR_TEST(long_int, struct long_int, long, MPI_LONG_INT)
PAIR_TEST(long_double_int, struct long_double_int, long double, MPI_LONG_DOUBLE_INT)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double_int(rank, right, left);
    short_int(rank, right, left);
    long_int(rank, right, left);
    long_double_int(rank, right, left);
    return finish_ok();
}
