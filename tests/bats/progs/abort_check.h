/* abort_check.h — for the programs the bats tests build with tmpicc: the assertions of
 * tests/check.h, a failed one aborting the whole job (tests/mpi/check.h) so the ranks blocked
 * on the failed one do not hang the test, and err_class for checks on returned errors. */
#ifndef TMPI_TEST_PROGS_ABORT_CHECK_H
#define TMPI_TEST_PROGS_ABORT_CHECK_H

#include "../../mpi/check.h"

/* The error class of an MPI return code (MPI_SUCCESS for MPI_SUCCESS; -1 if MPI refuses it). */
static inline int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

#endif
