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
};

/* The type behind a handle, NULL if it is not a valid datatype. */
const struct tm_type *tm_type_get(MPI_Datatype dt);

/* The reduction behind an op handle; -1 if it is not a valid op. */
int tm_op_kind(MPI_Op op);

#endif
