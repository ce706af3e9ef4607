/* type_f90.c — MPI_Type_create_f90_integer / _real / _complex (MPI 3.1 §17.1.9): the type of a
 * Fortran variable of KIND selected_int_kind(r) / selected_real_kind(p, r).
 *
 * The answer is the predefined type of that size (gfortran's kinds on this machine: the C types
 * of type_predef.c), seen through a handle of its own so that MPI_Type_get_envelope can say
 * MPI_COMBINER_F90_* with p and r (§4.1.13): a one-element derived type, committed, that the
 * program may not free.  Equal arguments give the same handle (§17.1.9: the calls return
 * "the same" datatype), from a per-rank cache.
 *
 * Cache.  A list of (combiner, p, r, handle) that is only ever pushed onto, with a
 * compare-and-swap on its head, so threads of a MULTIPLE rank look up and add without a lock;
 * two threads making the same entry at once keep the first one pushed and drop the other. */
#include <float.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "errh.h"
#include "job.h"
#include "objtab.h"
#include "type.h"
#include "type_envelope.h"
#include "type_flat.h"

struct tm_f90ent {
    int combiner, p, r;
    MPI_Datatype h;
    struct tm_f90ent *next; /* set before the entry is pushed, then never changed */
};

/* Fortran's PRECISION and RANGE of the real kinds: digits of the mantissa, decimal exponent. */
#define F90_PREC(mant_dig) (int)(((mant_dig)-1) * 0.30102999566398120)
#define F90_RANGE(max_10_exp) ((max_10_exp)-1)

/* The kind selected_real_kind(p, r) picks: the smallest with both, or MPI_DATATYPE_NULL. */
static MPI_Datatype real_kind(int p, int r)
{
    static const struct {
        int prec, range;
        MPI_Datatype t;
    } kinds[] = {
        {F90_PREC(FLT_MANT_DIG), F90_RANGE(FLT_MAX_10_EXP), MPI_REAL4},
        {F90_PREC(DBL_MANT_DIG), F90_RANGE(DBL_MAX_10_EXP), MPI_REAL8},
        {F90_PREC(LDBL_MANT_DIG), F90_RANGE(LDBL_MAX_10_EXP), MPI_REAL16},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((p == MPI_UNDEFINED || p <= kinds[i].prec) &&
            (r == MPI_UNDEFINED || r <= kinds[i].range))
            return kinds[i].t;
    return MPI_DATATYPE_NULL;
}

/* selected_int_kind(r): the smallest integer holding every value of -10^r..10^r. */
static MPI_Datatype int_kind(int r)
{
    if (r <= 2) return MPI_INTEGER1;
    if (r <= 4) return MPI_INTEGER2;
    if (r <= 9) return MPI_INTEGER4;
    if (r <= 18) return MPI_INTEGER8;
    return MPI_DATATYPE_NULL;
}

static MPI_Datatype cached(struct tm_f90ent *e, const struct tm_f90ent *stop, int combiner, int p,
                           int r)
{
    for (; e && e != stop; e = e->next)
        if (e->combiner == combiner && e->p == p && e->r == r) return e->h;
    return MPI_DATATYPE_NULL;
}

/* The handle for (combiner, p, r) over the predefined type base, made on first use. */
static int f90_type(struct tm_rank *me, const char *fn, int combiner, int p, int r,
                    MPI_Datatype base, MPI_Datatype *newtype)
{
    struct tm_f90ent *head = atomic_load_explicit(&me->f90, memory_order_acquire);
    MPI_Datatype h = cached(head, NULL, combiner, p, r);
    if (h != MPI_DATATYPE_NULL) {
        *newtype = h;
        return MPI_SUCCESS;
    }
    const struct tm_type *old = tm_type_get(base);
    struct tm_f90ent *e = malloc(sizeof *e);
    if (!e || !old) return free(e), tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    int ints[2] = {p, r}, nints = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    if (nints == 1) ints[0] = r;
    struct tm_flat f;
    tm_flat_init(&f);
    struct tm_envelope env;
    if (tm_flat_add(&f, 0, 1, old) < 0 ||
        tm_envelope_make(&env, combiner, nints, ints, 0, NULL, 0, NULL) < 0) {
        tm_flat_discard(&f);
        free(e);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int err = tm_dtype_publish(me, fn, &f, 0, 0, 0, 0, &env, &h);
    if (err != MPI_SUCCESS) return free(e), err;
    struct tm_dtype *d = tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, h);
    d->committed = 1;
    d->f90 = 1;
    snprintf(d->name, sizeof d->name, "%s", old->name);
    *e = (struct tm_f90ent){combiner, p, r, h, head};
    while (!atomic_compare_exchange_weak_explicit(&me->f90, &e->next, e, memory_order_acq_rel,
                                                  memory_order_acquire)) {
        /* Another thread pushed: if it made this same entry, its handle is the answer. */
        MPI_Datatype other = cached(e->next, head, combiner, p, r);
        if (other != MPI_DATATYPE_NULL) {
            tm_objtab_del(me->dtypes, TM_DTYPE_FIRST, h);
            tm_type_release(&d->t);
            free(e);
            *newtype = other;
            return MPI_SUCCESS;
        }
        head = e->next;
    }
    *newtype = h;
    return MPI_SUCCESS;
}

void tm_f90_cache_free(struct tm_rank *me)
{
    struct tm_f90ent *e = atomic_exchange_explicit(&me->f90, NULL, memory_order_acquire);
    while (e) {
        struct tm_f90ent *next = e->next;
        free(e); /* the types themselves went with the rank's table */
        e = next;
    }
}

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);                    \
    if (TM_UNLIKELY(!newtype))                                                                     \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "newtype is NULL");

TM_API int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_f90_integer";
    NEED_ME(fn);
    MPI_Datatype base = r == MPI_UNDEFINED ? MPI_DATATYPE_NULL : int_kind(r);
    if (base == MPI_DATATYPE_NULL)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                      "no integer kind has a decimal range of %d (at most 18 here)", r);
    return f90_type(me, fn, MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, base, newtype);
}
TM_ALIAS(Type_create_f90_integer)

/* p and r: MPI_UNDEFINED for "any", not both (selected_real_kind needs one of them). */
static int real_base(struct tm_rank *me, const char *fn, int p, int r, MPI_Datatype *base)
{
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "p and r are both MPI_UNDEFINED");
    *base = real_kind(p, r);
    if (*base == MPI_DATATYPE_NULL)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                      "no real kind has precision %d and range %d (at most %d and %d here)", p, r,
                      F90_PREC(LDBL_MANT_DIG), F90_RANGE(LDBL_MAX_10_EXP));
    return MPI_SUCCESS;
}

TM_API int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_f90_real";
    NEED_ME(fn);
    MPI_Datatype base;
    int err = real_base(me, fn, p, r, &base);
    if (err != MPI_SUCCESS) return err;
    return f90_type(me, fn, MPI_COMBINER_F90_REAL, p, r, base, newtype);
}
TM_ALIAS(Type_create_f90_real)

TM_API int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_f90_complex";
    NEED_ME(fn);
    MPI_Datatype base;
    int err = real_base(me, fn, p, r, &base);
    if (err != MPI_SUCCESS) return err;
    base = base == MPI_REAL4 ? MPI_COMPLEX8 : base == MPI_REAL8 ? MPI_COMPLEX16 : MPI_COMPLEX32;
    return f90_type(me, fn, MPI_COMBINER_F90_COMPLEX, p, r, base, newtype);
}
TM_ALIAS(Type_create_f90_complex)
