/* coll_check.h — shared by the collective tests: run a rank function on every rank count, on
 * several communicators, and fail the whole job at the first wrong value (MPI_Abort wakes every
 * rank blocked in a collective, so a failure never turns into a hang). */
#ifndef TMPI_TEST_CLIENT_COLL_CHECK_H
#define TMPI_TEST_CLIENT_COLL_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const int tc_nranks[] = {1, 2, 3, 4, 7, 16};
#define TC_NRANKS (int)(sizeof tc_nranks / sizeof tc_nranks[0])

/* Element counts: empty, one, odd, large (over the 4 KiB slice and 16 KiB chunk sizes). */
static const int tc_counts[] = {0, 1, 7, 20011};
#define TC_NCOUNTS (int)(sizeof tc_counts / sizeof tc_counts[0])

/* A failed check aborts the job (tests/check.h). */
#define TC_CHECK(cond, ...) CHECK_ABORT(cond, __VA_ARGS__)

#define TC_MPI(call)                                                                               \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        TC_CHECK(e_ == MPI_SUCCESS, "expected MPI_SUCCESS from %s, got %d", #call, e_);            \
    } while (0)

static inline int tc_run_all(th_rank_fn fn, void *arg)
{
    for (int i = 0; i < TC_NRANKS; i++) {
        struct th_opts o = {.nranks = tc_nranks[i]};
        struct th_result res;
        if (th_run(&o, fn, arg, &res)) {
            fprintf(stderr, "  with %d ranks: rank %d failed (code %d)%s%s\n", tc_nranks[i],
                    res.failed_rank, res.code, res.aborted ? ": " : "",
                    res.aborted ? res.abort_why : "");
            return 1;
        }
    }
    return 0;
}

/* The communicators every test runs on: world, a dup, a split (two halves with reversed rank
 * order, so comm rank != world rank) and the shared-memory split type. */
#define TC_NCOMMS 4
static inline void tc_comms(MPI_Comm out[TC_NCOMMS])
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    out[0] = MPI_COMM_WORLD;
    TC_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &out[1]));
    TC_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &out[2]));
    TC_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &out[3]));
}

static inline void tc_comms_free(MPI_Comm c[TC_NCOMMS])
{
    for (int i = 1; i < TC_NCOMMS; i++)
        TC_MPI(MPI_Comm_free(&c[i]));
}

/* What a test runs on one communicator c, where this rank is me of n members; nonzero fails. */
typedef int (*tc_body_fn)(MPI_Comm c, int me, int n);

/* A th_rank_fn: MPI_Init, the body (arg, a tc_body_fn) on each communicator of tc_comms() in
 * turn, MPI_Finalize.  A body that fails ends the rank at once with 1. */
static inline int tc_on_every_comm(int rank, int size, void *arg)
{
    tc_body_fn body = (tc_body_fn)arg;
    TC_MPI(MPI_Init(NULL, NULL));
    MPI_Comm cs[TC_NCOMMS];
    tc_comms(cs);
    for (int k = 0; k < TC_NCOMMS; k++) {
        int me, n;
        TC_MPI(MPI_Comm_rank(cs[k], &me));
        TC_MPI(MPI_Comm_size(cs[k], &n));
        if (body(cs[k], me, n)) return 1;
    }
    tc_comms_free(cs);
    TC_MPI(MPI_Finalize());
    return 0;
}

/* body on every rank count of tc_nranks and every communicator of tc_comms(). */
static inline int tc_run_every_comm(tc_body_fn body)
{
    return tc_run_all(tc_on_every_comm, (void *)body);
}

static inline void *tc_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

/* A value no test ever produces: marks gaps that must stay untouched. */
#define TC_GAP (-123456789)

#endif
