/* type_threads.c — under MPI_THREAD_MULTIPLE, several threads of every rank create, commit,
 * use, duplicate and free derived datatypes and user ops at the same time (the rank's tables
 * of types and ops are shared by its threads): every type's size and extent are checked, and
 * every few iterations each thread exchanges a strided message built with its fresh type with
 * the same thread of its neighbours (its own tag), checked element by element, and reduces with
 * a fresh user op (MPI_Reduce_local); MPI_Type_create_f90_integer gives every thread the same
 * handle for the same range.  A library that grants less than MPI_THREAD_MULTIPLE skips
 * the threaded part. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

#define NTHREADS 4
#define ITERS 400
#define NE 8 /* elements of the vectors */

static int rank, size;

/* MPI_Type_create_f90_integer(r) for r = 0..F90_R-1, as the first thread to ask got it: every
 * thread must get the same handle for the same r, also when they race to make it. */
#define F90_R 19
static _Atomic int f90_seen[F90_R];

static void add_ints(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void *worker(void *arg)
{
    const int t = (int)(long)arg, right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int stride = 2 + t; /* every thread its own shape */
    int src[NE * 8], dst[NE * 8];
    for (int i = 0; i < ITERS; i++) {
        MPI_Datatype v, hv, st, d, f;
        int r = (i + t) % F90_R, expect = 0;
        CHECK_MPI(MPI_Type_create_f90_integer(r, &f));
        if (!atomic_compare_exchange_strong(&f90_seen[r], &expect, (int)f))
            CHECK(expect == (int)f, "f90 integer r=%d: handle %d here, %d in another thread", r,
                  (int)f, expect);
        CHECK_MPI(MPI_Type_vector(NE, 1, stride, MPI_INT, &v));
        CHECK_MPI(MPI_Type_create_hvector(2, 1, (MPI_Aint)(sizeof(int) * (size_t)(t + 3)), v, &hv));
        int bl[2] = {1, 2};
        MPI_Aint dp[2] = {0, (MPI_Aint)(sizeof(int) * (size_t)(t + 2))};
        MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
        CHECK_MPI(MPI_Type_create_struct(2, bl, dp, ty, &st));
        CHECK_MPI(MPI_Type_commit(&v));
        CHECK_MPI(MPI_Type_commit(&hv));
        CHECK_MPI(MPI_Type_commit(&st));
        CHECK_MPI(MPI_Type_dup(v, &d));
        int sz;
        MPI_Aint lb, ext;
        CHECK_MPI(MPI_Type_size(v, &sz));
        CHECK_MPI(MPI_Type_get_extent(v, &lb, &ext));
        CHECK(sz == NE * (int)sizeof(int) &&
                  ext == (MPI_Aint)(((NE - 1) * stride + 1) * (int)sizeof(int)),
              "thread %d iteration %d: vector size %d extent %td", t, i, sz, ext);
        CHECK_MPI(MPI_Type_size(hv, &sz));
        CHECK(sz == 2 * NE * (int)sizeof(int), "thread %d: hvector size %d", t, sz);
        CHECK_MPI(MPI_Type_size(st, &sz));
        CHECK_MPI(MPI_Type_get_extent(st, &lb, &ext));
        CHECK(sz == 3 * (int)sizeof(int) && ext == (MPI_Aint)(sizeof(int) * (size_t)(t + 4)),
              "thread %d: struct size %d extent %td", t, sz, ext);
        int ni, na, nd, comb;
        CHECK_MPI(MPI_Type_get_envelope(d, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_DUP, "thread %d: dup's combiner %d", t, comb);
        if (i % 20 == 0) {
            for (int k = 0; k < NE * 8; k++) {
                src[k] = rank * 100000 + t * 1000 + k;
                dst[k] = -1;
            }
            CHECK_MPI(MPI_Sendrecv(src, 1, d, right, t, dst, 1, v, left, t, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
            for (int k = 0; k < NE * stride; k++) {
                int want = k % stride ? -1 : left * 100000 + t * 1000 + k;
                CHECK(dst[k] == want, "thread %d iteration %d [%d]: expected %d got %d", t, i, k,
                      want, dst[k]);
            }
            MPI_Op op;
            CHECK_MPI(MPI_Op_create(add_ints, 1, &op));
            int one[2] = {1, t}, sum[2] = {10, 20};
            CHECK_MPI(MPI_Reduce_local(one, sum, 2, MPI_INT, op));
            CHECK(sum[0] == 11 && sum[1] == 20 + t, "thread %d: user op gave %d %d", t, sum[0],
                  sum[1]);
            CHECK_MPI(MPI_Op_free(&op));
        }
        CHECK_MPI(MPI_Type_free(&d));
        CHECK_MPI(MPI_Type_free(&st));
        CHECK_MPI(MPI_Type_free(&hv));
        CHECK_MPI(MPI_Type_free(&v));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            CHECK(!pthread_create(&th[t], NULL, worker, (void *)(long)t));
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
    }
    /* every handle went back: a new type gets a valid handle and works */
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    CHECK_MPI(MPI_Type_free(&v));
    return finish_ok();
}
