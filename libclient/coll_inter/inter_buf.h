/* inter_buf.h — buffers and offsets by datatype, for the blocking and the non-blocking
 * inter-communicator collectives (coll_inter.c, inter_nbops.c). */
#ifndef TMPI_LIBCLIENT_INTER_BUF_H
#define TMPI_LIBCLIENT_INTER_BUF_H

#include <stdlib.h>

#include "mpi.h"

/* Extent of dt, or 0 when it is not a valid type (the transfers then report it). */
static inline MPI_Aint extent(MPI_Datatype dt)
{
    MPI_Aint lb = 0, ext = 0;
    if (PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS) return 0;
    return ext;
}

/* A buffer for count elements of dt; *raw is what to free. */
static inline void *tmp_buf(MPI_Datatype dt, int count, void **raw)
{
    MPI_Aint lb = 0, ext = 0;
    if (PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS) ext = 1, lb = 0;
    size_t n =
        (size_t)(count > 0 ? count : 1) * (size_t)(ext > 0 ? ext : 1) + (size_t)(lb < 0 ? -lb : lb);
    *raw = malloc(n);
    if (!*raw) return NULL;
    return (char *)*raw - lb;
}

static inline char *at(const void *base, MPI_Aint off)
{
    return (char *)base + off;
}

#endif
