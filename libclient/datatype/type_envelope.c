/* type_envelope.c — constructor envelopes and MPI_Type_get_envelope / get_contents (MPI 3.1
 * §4.1.13) and their large-count forms (MPI 4.1 §5.1.13). */
#include "type_envelope.h"

#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "job.h"
#include "objtab.h"

/* A type whose constructor's arguments do not fit int has only the large-count layout. */
#define LARGE_WHY                                                                                  \
    "datatype %d was built with counts beyond int: only MPI_Type_get_envelope_c and "              \
    "MPI_Type_get_contents_c can describe it"

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

/* The envelope of datatype: its combiner (MPI_COMBINER_NAMED for a predefined type, whose
 * counts are 0) in *combiner and *e (NULL for a predefined type); classic: the int call, which
 * cannot describe large counts. */
static int envelope_any(const char *fn, int classic, MPI_Datatype datatype, int ok_args,
                        const struct tm_envelope **e, int *combiner)
{
    NEED_ME(fn);
    const struct tm_type *t = tm_type_query(datatype);
    if (TM_UNLIKELY(!t))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!ok_args || !combiner))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "an output argument is NULL");
    *e = t->derived ? &((const struct tm_dtype *)t)->env : NULL;
    if (TM_UNLIKELY(classic && *e && (*e)->nlarge))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn, LARGE_WHY, datatype);
    *combiner = *e ? (*e)->combiner : MPI_COMBINER_NAMED;
    return MPI_SUCCESS;
}

TM_API int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                                  int *num_datatypes, int *combiner)
{
    const struct tm_envelope *e;
    int r = envelope_any("MPI_Type_get_envelope", 1, datatype,
                         num_integers && num_addresses && num_datatypes, &e, combiner);
    if (r != MPI_SUCCESS) return r;
    *num_integers = e ? e->nints : 0;
    *num_addresses = e ? e->naints : 0;
    *num_datatypes = e ? e->ntypes : 0;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_envelope)

TM_API int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                                    MPI_Count *num_addresses, MPI_Count *num_large_counts,
                                    MPI_Count *num_datatypes, int *combiner)
{
    const struct tm_envelope *e;
    int r = envelope_any("MPI_Type_get_envelope_c", 0, datatype,
                         num_integers && num_addresses && num_large_counts && num_datatypes, &e,
                         combiner);
    if (r != MPI_SUCCESS) return r;
    *num_integers = e ? e->nints : 0;
    *num_addresses = e ? e->naints : 0;
    *num_large_counts = e ? e->nlarge : 0;
    *num_datatypes = e ? e->ntypes : 0;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_envelope_c)

/* Returned derived types are new handles the caller frees (§4.1.13); predefined ones are
 * returned as they are.  classic: the int call, which cannot return large counts. */
static int contents_any(const char *fn, int classic, MPI_Datatype datatype, MPI_Count max_integers,
                        MPI_Count max_addresses, MPI_Count max_large_counts,
                        MPI_Count max_datatypes, int array_of_integers[],
                        MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                        MPI_Datatype array_of_datatypes[])
{
    NEED_ME(fn);
    const struct tm_type *t = tm_type_query(datatype);
    if (TM_UNLIKELY(!t))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!t->derived))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn,
                      "datatype %d is predefined (MPI_COMBINER_NAMED has no contents)", datatype);
    const struct tm_envelope *e = &((const struct tm_dtype *)t)->env;
    if (TM_UNLIKELY(classic && e->nlarge))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn, LARGE_WHY, datatype);
    if (TM_UNLIKELY(max_integers < e->nints || max_addresses < e->naints ||
                    max_large_counts < e->nlarge || max_datatypes < e->ntypes))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                      "arrays too small: %lld/%lld/%lld/%lld given, %d/%d/%lld/%d needed",
                      max_integers, max_addresses, max_large_counts, max_datatypes, e->nints,
                      e->naints, e->nlarge, e->ntypes);
    if (TM_UNLIKELY((e->nints && !array_of_integers) || (e->naints && !array_of_addresses) ||
                    (e->nlarge && !array_of_large_counts) || (e->ntypes && !array_of_datatypes)))
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
    if (e->nlarge) memcpy(array_of_large_counts, e->large, sizeof *e->large * (size_t)e->nlarge);
    return MPI_SUCCESS;
}

TM_API int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                                  int max_datatypes, int array_of_integers[],
                                  MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    return contents_any("MPI_Type_get_contents", 1, datatype, max_integers, max_addresses, 0,
                        max_datatypes, array_of_integers, array_of_addresses, NULL,
                        array_of_datatypes);
}
TM_ALIAS(Type_get_contents)

TM_API int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                                    MPI_Count max_addresses, MPI_Count max_large_counts,
                                    MPI_Count max_datatypes, int array_of_integers[],
                                    MPI_Aint array_of_addresses[],
                                    MPI_Count array_of_large_counts[],
                                    MPI_Datatype array_of_datatypes[])
{
    return contents_any("MPI_Type_get_contents_c", 0, datatype, max_integers, max_addresses,
                        max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                        array_of_large_counts, array_of_datatypes);
}
TM_ALIAS(Type_get_contents_c)
