/* userop.h — reduction operations as the collectives see them: a predefined op (op.h kernels)
 * or a user function (MPI_Op_create), resolved once per call into a struct tm_opref.
 *
 * A user function lives in the creating rank's private module image and may use that image's
 * globals, so it must only ever run on its own rank's thread: the reduction algorithms make
 * each rank call the function of its own opref (every rank passes its own handle of the same
 * op), never another rank's. */
#ifndef TMPI_LIBCLIENT_USEROP_H
#define TMPI_LIBCLIENT_USEROP_H

#include <stddef.h>

#include "type.h"

struct tm_rank;

/* Handles from here on are user ops in the calling rank's table. */
#define TM_OP_USER_FIRST 32

struct tm_opref {
    int kind;                  /* enum tm_opkind, or -1 for a user function */
    MPI_User_function *fn;     /* user function */
    MPI_User_function_c *fn_c; /* or its large-count form (MPI_Op_create_c): fn is NULL */
    int commute;
};

/* Resolves handle op of rank me; -1 if it is not a valid op. */
int tm_op_resolve(struct tm_rank *me, MPI_Op op, struct tm_opref *ret);
/* 1 if o may be applied to type t (user functions: any type). */
int tm_opref_defined(const struct tm_opref *o, const struct tm_type *t);
/* inout[i] = in[i] op inout[i] for count elements of t; dth is the caller's handle for t (what
 * a user function receives).  in and inout do not overlap. */
void tm_opref_apply(const struct tm_opref *o, const void *in, void *inout, size_t count,
                    const struct tm_type *t, MPI_Datatype dth);

void tm_userop_tab_free(struct tm_rank *me);

/* A handle of its own for op (a copy of a user op; predefined ops: op itself) that a pending
 * operation uses in later steps, valid even after the program frees op, until
 * tm_op_handle_drop.  MPI_SUCCESS or MPI_ERR_NO_MEM (*ret is op then). */
int tm_op_handle_hold(struct tm_rank *me, MPI_Op op, MPI_Op *ret);
void tm_op_handle_drop(struct tm_rank *me, MPI_Op h);

#endif
