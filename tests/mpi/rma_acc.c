/* rma_acc.c — accumulate atomicity: every rank accumulates into the same elements of every
 * other rank at once (SUM on int, long long and double; MAXLOC on the double-int pair and SUM on
 * long double, which take the window's stripe locks instead of one atomic instruction;
 * Fetch_and_op tickets that must all differ; single-element Fetch_and_op on elements that whole
 * runs of Accumulate change at the same time), checked element by element; runs of every rank
 * that overlap each other's and cross lock granules, exact; Accumulate and Put read the
 * caller's buffer until MPI_Win_flush_local and not after; and transfers longer than one frame
 * (5 MiB Put and Get, 1 Mi-element Accumulate); MPI_NO_OP fetches with the origin arguments
 * ignored (MPI_DATATYPE_NULL). */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NE 512   /* elements each rank accumulates into */
#define ROUNDS 8 /* accumulates per rank and target */

struct dint {
    double v;
    int i;
};

struct area {
    int i[NE];
    long long ll[NE];
    double d[NE];
    long double ld[NE];
    struct dint loc[NE];
    long long ticket;
    long long mix[NE];
};

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct area *a;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(sizeof *a, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &a, &win));
    memset(a, 0, sizeof *a);
    for (int k = 0; k < NE; k++)
        a->loc[k] = (struct dint){-1.0, -1};
    MPI_Barrier(MPI_COMM_WORLD);

    int oi[NE];
    long long oll[NE];
    double od[NE];
    long double old_[NE];
    struct dint oloc[NE];
    for (int k = 0; k < NE; k++) {
        oi[k] = rank + k;
        oll[k] = (long long)(rank + 1) << 32 | (unsigned)k;
        od[k] = 0.5 * (rank + 1);
        old_[k] = 0.25L * (rank + 1);
        oloc[k] = (struct dint){(double)((rank * 7 + k) % size), rank};
    }
    long long lones[NE];
    for (int k = 0; k < NE; k++)
        lones[k] = 1;
    long long tickets[ROUNDS * 64];
    int nt = 0;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    /* Origin and result buffers of the fetches live until the unlock completes them (a result
     * in the loop's scope would be written after its lifetime ended) */
    long long one1 = 1;
    long long *got = calloc((size_t)ROUNDS * (size_t)size, sizeof *got);
    CHECK(got != NULL, "out of memory");
    for (int r = 0; r < ROUNDS; r++) {
        for (int s = 0; s < size; s++) {
            int t = (rank + s) % size;
            CHECK_MPI(MPI_Accumulate(oi, NE, MPI_INT, t, offsetof(struct area, i), NE, MPI_INT,
                                     MPI_SUM, win));
            CHECK_MPI(MPI_Accumulate(oll, NE, MPI_LONG_LONG, t, offsetof(struct area, ll), NE,
                                     MPI_LONG_LONG, MPI_SUM, win));
            CHECK_MPI(MPI_Accumulate(od, NE, MPI_DOUBLE, t, offsetof(struct area, d), NE,
                                     MPI_DOUBLE, MPI_SUM, win));
            CHECK_MPI(MPI_Accumulate(old_, NE, MPI_LONG_DOUBLE, t, offsetof(struct area, ld), NE,
                                     MPI_LONG_DOUBLE, MPI_SUM, win));
            CHECK_MPI(MPI_Accumulate(oloc, NE, MPI_DOUBLE_INT, t, offsetof(struct area, loc), NE,
                                     MPI_DOUBLE_INT, MPI_MAXLOC, win));
            /* A run and a single element of the same array, both atomic per element. */
            CHECK_MPI(MPI_Accumulate(lones, NE, MPI_LONG_LONG, t, offsetof(struct area, mix), NE,
                                     MPI_LONG_LONG, MPI_SUM, win));
            CHECK_MPI(MPI_Fetch_and_op(&one1, &got[r * size + s], MPI_LONG_LONG, t,
                                       offsetof(struct area, mix) +
                                           sizeof(long long) * (size_t)((rank * 13 + r) % NE),
                                       MPI_SUM, win));
        }
        long long one = 1;
        if (nt < ROUNDS * 64) {
            CHECK_MPI(MPI_Fetch_and_op(&one, &tickets[nt], MPI_LONG_LONG, 0,
                                       offsetof(struct area, ticket), MPI_SUM, win));
            CHECK_MPI(MPI_Win_flush(0, win));
            nt++;
        }
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    free(got);

    /* sum over ranks q of (q + k), ROUNDS times; etc. */
    const long long sr = (long long)size * (size - 1) / 2;
    for (int k = 0; k < NE; k++) {
        long long ei = ROUNDS * (sr + (long long)size * k);
        CHECK(a->i[k] == (int)ei, "int sum [%d]: expected %lld got %d", k, ei, a->i[k]);
        long long ell = ROUNDS * ((sr + size) << 32) + (long long)ROUNDS * size * k;
        CHECK(a->ll[k] == ell, "long long sum [%d]: expected %lld got %lld", k, ell, a->ll[k]);
        double ed = ROUNDS * 0.5 * (sr + size);
        CHECK(a->d[k] == ed, "double sum [%d]: expected %g got %g", k, ed, a->d[k]);
        long double eld = ROUNDS * 0.25L * (sr + size);
        CHECK(a->ld[k] == eld, "long double sum [%d]: expected %Lg got %Lg", k, eld, a->ld[k]);
        /* the largest value any rank sent is size - 1; ties go to the smallest rank */
        int best = -1;
        for (int q = 0; q < size && best < 0; q++)
            if ((q * 7 + k) % size == size - 1) best = q;
        CHECK(a->loc[k].v == size - 1 && a->loc[k].i == best,
              "maxloc [%d]: expected (%d, %d) got (%g, %d)", k, size - 1, best, a->loc[k].v,
              a->loc[k].i);
    }
    for (int k = 0; k < NE; k++) {
        long long em = (long long)ROUNDS * size;
        for (int q = 0; q < size; q++)
            for (int r = 0; r < ROUNDS; r++)
                if ((q * 13 + r) % NE == k) em++;
        CHECK(a->mix[k] == em, "runs and single elements [%d]: expected %lld got %lld", k, em,
              a->mix[k]);
    }
    /* Tickets: all ranks' old values together are exactly 0 .. size*ROUNDS-1. */
    long long *all = malloc(sizeof *all * (size_t)size * ROUNDS);
    MPI_Allgather(tickets, ROUNDS, MPI_LONG_LONG, all, ROUNDS, MPI_LONG_LONG, MPI_COMM_WORLD);
    char *seen = calloc((size_t)size * ROUNDS, 1);
    for (int q = 0; q < size * ROUNDS; q++) {
        CHECK(all[q] >= 0 && all[q] < size * ROUNDS && !seen[all[q]],
              "ticket %lld out of range or given twice", all[q]);
        seen[all[q]] = 1;
    }
    free(seen);
    free(all);
    CHECK_MPI(MPI_Win_free(&win));

    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Overlapping runs at once: every rank adds (rank + 1) to a run of RUN long longs and of
     * RUN bytes (MPI_CHAR, osu_acc_latency's type) of every target, starting RUN_SHIFT
     * elements after the previous rank's, so each run crosses several of the window's lock
     * granules and shares all but its first elements with the runs of other ranks. */
    enum { RUN = 3000, RUN_SHIFT = 37, RUN_ROUNDS = 6 };
    const int span = RUN + RUN_SHIFT * (size - 1);
    long long *rw;
    CHECK_MPI(MPI_Win_allocate((MPI_Aint)span * (MPI_Aint)(sizeof *rw + 1), 1, MPI_INFO_NULL,
                               MPI_COMM_WORLD, &rw, &win));
    signed char *cw = (signed char *)(rw + span);
    memset(rw, 0, (size_t)span * (sizeof *rw + 1));
    long long *lrun = malloc(RUN * sizeof *lrun);
    signed char *crun = malloc(RUN);
    CHECK(lrun && crun, "out of memory");
    for (int k = 0; k < RUN; k++) {
        lrun[k] = rank + 1;
        crun[k] = (signed char)(rank + 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int r = 0; r < RUN_ROUNDS; r++)
        for (int s = 0; s < size; s++) {
            const int t = (rank + s) % size;
            const MPI_Aint at = (MPI_Aint)rank * RUN_SHIFT;
            CHECK_MPI(MPI_Accumulate(lrun, RUN, MPI_LONG_LONG, t, at * (MPI_Aint)sizeof *rw, RUN,
                                     MPI_LONG_LONG, MPI_SUM, win));
            CHECK_MPI(MPI_Accumulate(crun, RUN, MPI_CHAR, t,
                                     (MPI_Aint)span * (MPI_Aint)sizeof *rw + at, RUN, MPI_CHAR,
                                     MPI_SUM, win));
        }
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < span; k++) {
        long long e = 0;
        for (int q = 0; q < size; q++)
            if (k >= q * RUN_SHIFT && k < q * RUN_SHIFT + RUN) e += RUN_ROUNDS * (q + 1);
        CHECK(rw[k] == e, "overlapping long long runs [%d]: expected %lld got %lld", k, e, rw[k]);
        CHECK(cw[k] == (signed char)e, "overlapping MPI_CHAR runs [%d]: expected %d got %d", k,
              (signed char)e, cw[k]);
    }
    free(lrun);
    free(crun);
    CHECK_MPI(MPI_Win_free(&win));

    /* An Accumulate or Put reads the caller's buffer until the operation completes at the
     * origin (MPI_Win_flush_local), and not after: sizes around the ones a library may copy or
     * hold back before sending (256 B, 8 KiB). */
    static const int hold_sizes[] = {256, 260, 4096, 8192, 8196, 65536};
    enum { HOLD_MAX = 65536 };
    int *hw, *hbuf = malloc(HOLD_MAX);
    CHECK(hbuf != NULL, "out of memory");
    CHECK_MPI(MPI_Win_allocate(2 * HOLD_MAX, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &hw, &win));
    for (size_t z = 0; z < sizeof hold_sizes / sizeof *hold_sizes; z++) {
        const int n = hold_sizes[z] / (int)sizeof(int);
        for (int k = 0; k < 2 * HOLD_MAX / (int)sizeof(int); k++)
            hw[k] = 1;
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        for (int k = 0; k < n; k++)
            hbuf[k] = rank + k;
        CHECK_MPI(MPI_Accumulate(hbuf, n, MPI_INT, right, 0, n, MPI_INT, MPI_SUM, win));
        CHECK_MPI(MPI_Win_flush_local(right, win));
        for (int k = 0; k < n; k++)
            hbuf[k] = -1000000;
        for (int k = 0; k < n; k++)
            hbuf[k] = 2 * rank + k;
        CHECK_MPI(MPI_Put(hbuf, n, MPI_INT, right, HOLD_MAX, n, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush_local(right, win));
        for (int k = 0; k < n; k++)
            hbuf[k] = -1000000;
        CHECK_MPI(MPI_Win_unlock(right, win));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < n; k++) {
            CHECK(hw[k] == 1 + left + k,
                  "%d B accumulate then flush_local [%d]: expected %d got %d", hold_sizes[z], k,
                  1 + left + k, hw[k]);
            CHECK(hw[HOLD_MAX / (int)sizeof(int) + k] == 2 * left + k,
                  "%d B put then flush_local [%d]: expected %d got %d", hold_sizes[z], k,
                  2 * left + k, hw[HOLD_MAX / (int)sizeof(int) + k]);
        }
        if (n < HOLD_MAX / (int)sizeof(int))
            CHECK(hw[n] == 1, "%d B accumulate wrote past its end: %d", hold_sizes[z], hw[n]);
    }
    free(hbuf);
    CHECK_MPI(MPI_Win_free(&win));

    /* MPI_NO_OP ignores the origin (MPI 4.1 §12.3.4): NULL, 0 and MPI_DATATYPE_NULL fetch the
     * target's elements and leave them as they are, with Get_accumulate and Rget_accumulate. */
    enum { NF = 64 };
    int *fw, fetched[NF], rfetched[NF];
    CHECK_MPI(
        MPI_Win_allocate(NF * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &fw, &win));
    for (int k = 0; k < NF; k++)
        fw[k] = 1000 * rank + k;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, fetched, NF, MPI_INT, right, 0, NF,
                                 MPI_INT, MPI_NO_OP, win));
    MPI_Request fq;
    CHECK_MPI(MPI_Rget_accumulate(NULL, 0, MPI_DATATYPE_NULL, rfetched, NF, MPI_INT, right, 0, NF,
                                  MPI_INT, MPI_NO_OP, win, &fq));
    CHECK_MPI(MPI_Wait(&fq, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_unlock(right, win));
    for (int k = 0; k < NF; k++) {
        CHECK(fetched[k] == 1000 * right + k, "MPI_NO_OP fetch [%d]: expected %d got %d", k,
              1000 * right + k, fetched[k]);
        CHECK(rfetched[k] == 1000 * right + k, "MPI_NO_OP rfetch [%d]: expected %d got %d", k,
              1000 * right + k, rfetched[k]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < NF; k++)
        CHECK(fw[k] == 1000 * rank + k, "MPI_NO_OP changed [%d]: expected %d got %d", k,
              1000 * rank + k, fw[k]);
    CHECK_MPI(MPI_Win_free(&win));

    /* Long transfers: 5 MiB to the right neighbour and back, a long accumulate. */
    const size_t big = (size_t)5 << 20;
    unsigned char *wb, *src = malloc(big), *back = malloc(big);
    CHECK_MPI(MPI_Win_allocate(big, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wb, &win));
    for (size_t k = 0; k < big; k++)
        src[k] = (unsigned char)(k * 31 + rank);
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(src, (int)big, MPI_BYTE, right, 0, (int)big, MPI_BYTE, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (size_t k = 0; k < big; k++)
        CHECK(wb[k] == (unsigned char)(k * 31 + left), "big put [%zu]: expected %u got %u", k,
              (unsigned char)(k * 31 + left), wb[k]);
    CHECK_MPI(MPI_Get(back, (int)big, MPI_BYTE, right, 0, (int)big, MPI_BYTE, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(!memcmp(back, src, big), "big get differs from what was put");
    int *iw = (int *)wb;
    const int nint = (int)(big / sizeof(int));
    for (int k = 0; k < nint; k++)
        iw[k] = 1;
    int *ones = (int *)src;
    for (int k = 0; k < nint; k++)
        ones[k] = k;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Accumulate(ones, nint, MPI_INT, right, 0, nint, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int k = 0; k < nint; k++)
        CHECK(iw[k] == k + 1, "big accumulate [%d]: expected %d got %d", k, k + 1, iw[k]);
    CHECK_MPI(MPI_Win_free(&win));
    free(src);
    free(back);
    return finish_ok();
}
