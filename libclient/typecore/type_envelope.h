/* type_envelope.h — a derived type's constructor and arguments (struct tm_envelope, type.h),
 * kept for MPI_Type_get_envelope / MPI_Type_get_contents. */
#ifndef TMPI_LIBCLIENT_TYPE_ENVELOPE_H
#define TMPI_LIBCLIENT_TYPE_ENVELOPE_H

#include "type.h"

/* Copies the arguments into env and takes a reference on each type; 0 or -ENOMEM (env is then
 * empty). */
int tm_envelope_make(struct tm_envelope *env, int combiner, int nints, const int *ints, int naints,
                     const MPI_Aint *aints, int ntypes, const struct tm_type *const *types);
/* The same with large counts (nlarge of them; a _c constructor's layout). */
int tm_envelope_make_c(struct tm_envelope *env, int combiner, int nints, const int *ints,
                       int naints, const MPI_Aint *aints, MPI_Count nlarge, const MPI_Count *large,
                       int ntypes, const struct tm_type *const *types);
/* Frees the copies and drops the type references. */
void tm_envelope_free(struct tm_envelope *env);

#endif
