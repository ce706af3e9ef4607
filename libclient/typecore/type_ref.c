/* type_ref.c — the lifetime of derived types (type.h): the last reference frees a type and
 * drops the references its envelope holds on the types it was built from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "type.h"
#include "type_envelope.h"

void tm_type_release(const struct tm_type *t)
{
    if (!t || !t->derived) return;
    struct tm_dtype *d = (struct tm_dtype *)t;
    if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1) return;
    tm_envelope_free(&d->env);
    free((void *)d->t.blocks);
    free((void *)d->t.segs);
    free((void *)d->t.sig);
    free(d);
}

int tm_envelope_make(struct tm_envelope *env, int combiner, int nints, const int *ints, int naints,
                     const MPI_Aint *aints, int ntypes, const struct tm_type *const *types)
{
    return tm_envelope_make_c(env, combiner, nints, ints, naints, aints, 0, NULL, ntypes, types);
}

int tm_envelope_make_c(struct tm_envelope *env, int combiner, int nints, const int *ints,
                       int naints, const MPI_Aint *aints, MPI_Count nlarge, const MPI_Count *large,
                       int ntypes, const struct tm_type *const *types)
{
    memset(env, 0, sizeof *env);
    env->combiner = combiner;
    env->ints = malloc(sizeof *env->ints * (size_t)(nints ? nints : 1));
    env->aints = malloc(sizeof *env->aints * (size_t)(naints ? naints : 1));
    env->large = malloc(sizeof *env->large * (size_t)(nlarge ? nlarge : 1));
    env->types = malloc(sizeof *env->types * (size_t)(ntypes ? ntypes : 1));
    if (!env->ints || !env->aints || !env->large || !env->types) {
        free(env->ints);
        free(env->aints);
        free(env->large);
        free(env->types);
        memset(env, 0, sizeof *env);
        return -ENOMEM;
    }
    if (nints) memcpy(env->ints, ints, sizeof *ints * (size_t)nints);
    if (naints) memcpy(env->aints, aints, sizeof *aints * (size_t)naints);
    if (nlarge) memcpy(env->large, large, sizeof *large * (size_t)nlarge);
    env->nlarge = nlarge;
    for (int i = 0; i < ntypes; i++) {
        env->types[i] = types[i];
        tm_type_hold(types[i]);
    }
    env->nints = nints;
    env->naints = naints;
    env->ntypes = ntypes;
    return 0;
}

void tm_envelope_free(struct tm_envelope *env)
{
    for (int i = 0; i < env->ntypes; i++)
        tm_type_release(env->types[i]);
    free(env->ints);
    free(env->aints);
    free(env->large);
    free(env->types);
    memset(env, 0, sizeof *env);
}
