/* check.h — helpers for the MPI test programs: fail with what was expected and what came. */
#ifndef TMPI_TEST_MPI_CHECK_H
#define TMPI_TEST_MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            int r_ = -1;                                                                           \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                    \
            fprintf(stderr, "rank %d: %s:%d: FAILED %s: ", r_, __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define CHECK_MPI(call)                                                                            \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == MPI_SUCCESS, "%s returned %d", #call, e_);                                     \
    } while (0)

/* Rank 0 prints the final OK once everybody got there. */
static inline int finish_ok(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("OK\n");
    MPI_Finalize();
    return 0;
}

#endif
