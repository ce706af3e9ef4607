/* io_check.h — what the MPI-IO test programs share (io_file, io_coll, io_large_count,
 * io_pool): a file name every rank of the job agrees on, and an error's class. */
#ifndef TMPI_TEST_MPI_IO_CHECK_H
#define TMPI_TEST_MPI_IO_CHECK_H

#include <time.h>
#include <unistd.h>

#include "check.h"

/* dir/tmpi_io_PID_TIME_tag into out (n bytes): rank 0's name, broadcast on MPI_COMM_WORLD, so
 * collective.  dir NULL: $TMPDIR, else /tmp. */
static inline void io_name(char *out, size_t n, const char *dir, const char *tag)
{
    char base[200];
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        const char *d = dir ? dir : getenv("TMPDIR");
        snprintf(base, sizeof base, "%s/tmpi_io_%d_%ld", d && *d ? d : "/tmp", (int)getpid(),
                 (long)time(NULL));
    }
    MPI_Bcast(base, sizeof base, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(out, n, "%s_%s", base, tag);
}

/* The error class of an MPI return code. */
static inline int io_class(int err)
{
    int c;
    MPI_Error_class(err, &c);
    return c;
}

#endif
