/* check.h — for the MPI test programs: the assertions of tests/check.h (a failure aborts the
 * job) and finish_ok. */
#ifndef TMPI_TEST_MPI_CHECK_H
#define TMPI_TEST_MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* The one assertion family (tests/check.h); a failed check aborts the whole job. */
#define CHECK_FAIL MPI_Abort(MPI_COMM_WORLD, 1)
#include "../check.h"

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
