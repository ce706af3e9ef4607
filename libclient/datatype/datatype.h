/* datatype.h — MPI datatype and op handles: the predefined types (contiguous only for now)
 * and their mapping onto the reduction engine's enums (op.h). */
#ifndef TMPI_LIBCLIENT_DATATYPE_H
#define TMPI_LIBCLIENT_DATATYPE_H

#include <stddef.h>

#include "mpi.h"
#include "op.h"

struct tm_type {
    size_t size;   /* MPI type size: bytes of data, without padding */
    size_t extent; /* bytes one element occupies in a buffer (sizeof the C type) */
    int nbasic;    /* basic elements per element (2 for the pair types) */
    enum tm_basic basic;
    const char *name;
    /* Derived types only (dtype.h); zero in the predefined table. */
    size_t nunits; /* elements of `basic` per element, what a reduction combines; 0: one */
    int derived;   /* lives in a rank's table (dtype.c), not in the predefined table */
};

/* Handles from here on are derived datatypes in the calling rank's table (dtype.c); the
 * predefined ones (mpi.h) stay below. */
#define TM_DTYPE_FIRST 128

/* The type behind a handle, NULL if it is not a valid datatype (or a derived type that is not
 * committed: only committed types may be used in communication). */
const struct tm_type *tm_type_get(MPI_Datatype dt);
/* The same, committed or not: for queries (size, extent) that MPI allows before commit. */
const struct tm_type *tm_type_query(MPI_Datatype dt);

/* The reduction behind an op handle; -1 if it is not a valid op. */
int tm_op_kind(MPI_Op op);

#endif
