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

/* A buffer for count elements of dt (its true extent, so a type without data needs no room);
 * *raw is what to free.  NULL when out of memory, also when the size does not fit. */
static inline void *tmp_buf(MPI_Datatype dt, MPI_Count count, void **raw)
{
    MPI_Aint lb = 0, ext = 0, tlb = 0, text = 0;
    if (PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &tlb, &text) != MPI_SUCCESS)
        ext = text = 1, tlb = 0;
    /* element k's data lies at tlb + k * ext .. + text (ext may be negative) */
    long long step = 0, lo, n = 0;
    if (count > 0 && text > 0 &&
        (__builtin_mul_overflow((long long)(count - 1), (long long)ext, &step) ||
         __builtin_add_overflow(step < 0 ? -step : step, (long long)text, &n)))
        return *raw = NULL;
    lo = step < 0 ? step : 0;
    *raw = malloc(n > 0 ? (size_t)n : 1);
    if (!*raw) return NULL;
    return (char *)*raw - tlb - lo;
}

static inline char *at(const void *base, MPI_Aint off)
{
    return (char *)base + off;
}

#endif
