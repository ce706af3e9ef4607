/* prog_check.h — the checks the test programs of tests/bats/progs share: CHECK aborts the job
 * with the file, line and what was expected; err_class is an error code's MPI class. */
#ifndef TMPI_TESTS_PROG_CHECK_H
#define TMPI_TESTS_PROG_CHECK_H

#include <mpi.h>
#include <stdio.h>

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static inline int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

#endif
