/* check.h — the one assertion family of every TMPI test: unit tests (tests/unit/), the
 * harness-driven libtmpi tests (tests/unit/client/) and the MPI programs tmpicc builds
 * (tests/mpi/).  A failed check prints
 *     [rank R: ]FILE:LINE: expected COND[: MESSAGE]
 * ("rank R" once MPI is initialised) and then runs CHECK_FAIL, which the including file may
 * define first: exit(1) by default; an MPI program aborts the job (tests/mpi/check.h), so ranks
 * blocked on the failed one do not hang the test.
 *
 *   CHECK(cond)  or  CHECK(cond, fmt, ...)   the message says what came instead
 *   CHECK_EQ(got, want)                      two integers: "GOT: expected W, got G"
 *   CHECK_MPI(call)                          an MPI call must return MPI_SUCCESS
 *   CHECK_OR(action, cond[, fmt, ...])       the same with another failure action (a harness
 *                                            rank function returns 1: TH_CHECK in harness.h)
 *   CHECK_ABORT(cond[, fmt, ...])            MPI_Abort(MPI_COMM_WORLD, 1) on failure
 * A message, when given, starts with a string literal. */
#ifndef TMPI_TEST_CHECK_H
#define TMPI_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef CHECK_FAIL
#define CHECK_FAIL exit(1)
#endif

static inline void check_report_(const char *file, int line, const char *cond, const char *fmt, ...)
{
#ifdef MPI_VERSION
    int init = 0, fin = 0, rank = -1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank >= 0) fprintf(stderr, "rank %d: ", rank);
#endif
    fprintf(stderr, "%s:%d: expected %s", file, line, cond);
    if (*fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
}

#define CHECK_OR(action, cond, ...)                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            check_report_(__FILE__, __LINE__, #cond, "" __VA_ARGS__);                              \
            action;                                                                                \
        }                                                                                          \
    } while (0)

#define CHECK(cond, ...) CHECK_OR(CHECK_FAIL, cond, __VA_ARGS__)

#define CHECK_EQ(got, want)                                                                        \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        if (g_ != w_) {                                                                            \
            check_report_(__FILE__, __LINE__, #got " == " #want, "%s: expected %lld, got %lld",    \
                          #got, w_, g_);                                                           \
            CHECK_FAIL;                                                                            \
        }                                                                                          \
    } while (0)

#ifdef MPI_VERSION
#define CHECK_MPI(call)                                                                            \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == MPI_SUCCESS, "%s returned %d", #call, e_);                                     \
    } while (0)
#define CHECK_ABORT(cond, ...) CHECK_OR(MPI_Abort(MPI_COMM_WORLD, 1), cond, __VA_ARGS__)
#endif

#endif
