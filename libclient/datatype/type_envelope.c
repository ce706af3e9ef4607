/* type_envelope.c — constructor envelopes and MPI_Type_get_envelope / get_contents (MPI 3.1
 * §4.1.13). */
#include "type_envelope.h"

#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "job.h"
#include "objtab.h"

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

TM_API int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                                  int *num_datatypes, int *combiner)
{
    const char *fn = "MPI_Type_get_envelope";
    NEED_ME(fn);
    const struct tm_type *t = tm_type_query(datatype);
    if (TM_UNLIKELY(!t))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!num_integers || !num_addresses || !num_datatypes || !combiner))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "an output argument is NULL");
    if (!t->derived) {
        *num_integers = *num_addresses = *num_datatypes = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    const struct tm_envelope *e = &((const struct tm_dtype *)t)->env;
    *num_integers = e->nints;
    *num_addresses = e->naints;
    *num_datatypes = e->ntypes;
    *combiner = e->combiner;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_envelope)

/* Returned derived types are new handles the caller frees (§4.1.13); predefined ones are
 * returned as they are. */
TM_API int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                                  int max_datatypes, int array_of_integers[],
                                  MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    const char *fn = "MPI_Type_get_contents";
    NEED_ME(fn);
    const struct tm_type *t = tm_type_query(datatype);
    if (TM_UNLIKELY(!t))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!t->derived))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn,
                      "datatype %d is predefined (MPI_COMBINER_NAMED has no contents)", datatype);
    const struct tm_envelope *e = &((const struct tm_dtype *)t)->env;
    if (TM_UNLIKELY(max_integers < e->nints || max_addresses < e->naints ||
                    max_datatypes < e->ntypes))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                      "arrays too small: %d/%d/%d given, %d/%d/%d needed", max_integers,
                      max_addresses, max_datatypes, e->nints, e->naints, e->ntypes);
    if (TM_UNLIKELY((e->nints && !array_of_integers) || (e->naints && !array_of_addresses) ||
                    (e->ntypes && !array_of_datatypes)))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "an output array is NULL");
    for (int i = 0; i < e->ntypes; i++) {
        const struct tm_type *c = e->types[i];
        if (!c->derived) {
            array_of_datatypes[i] = tm_type_predef_handle(c);
            continue;
        }
        tm_type_hold(c);
        int h = tm_objtab_add(&me->dtypes, TM_DTYPE_FIRST, (void *)c);
        if (h < 0) {
            tm_type_release(c);
            for (int j = 0; j < i; j++)
                if (e->types[j]->derived) {
                    tm_objtab_del(me->dtypes, TM_DTYPE_FIRST, array_of_datatypes[j]);
                    tm_type_release(e->types[j]);
                }
            return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        array_of_datatypes[i] = h;
    }
    if (e->nints) memcpy(array_of_integers, e->ints, sizeof *e->ints * (size_t)e->nints);
    if (e->naints) memcpy(array_of_addresses, e->aints, sizeof *e->aints * (size_t)e->naints);
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_contents)
