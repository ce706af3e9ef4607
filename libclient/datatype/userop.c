/* userop.c — MPI_Op_create / MPI_Op_free / MPI_Op_commutative and applying an op (userop.h). */
#include "userop.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "type_copy.h"
#include "errh.h"
#include "job.h"
#include "objtab.h"

struct tm_userop {
    MPI_User_function *fn;
    MPI_User_function_c *fn_c; /* MPI_Op_create_c: fn is NULL */
    int commute;
};

int tm_op_resolve(struct tm_rank *me, MPI_Op op, struct tm_opref *ret)
{
    int k = tm_op_kind(op);
    if (k >= 0) {
        *ret = (struct tm_opref){.kind = k, .fn = NULL, .commute = 1};
        return 0;
    }
    struct tm_userop *u = me ? tm_objtab_get(me->uops, TM_OP_USER_FIRST, op) : NULL;
    if (!u) return -1;
    *ret = (struct tm_opref){.kind = -1, .fn = u->fn, .fn_c = u->fn_c, .commute = u->commute};
    return 0;
}

int tm_opref_defined(const struct tm_opref *o, const struct tm_type *t)
{
    return o->kind < 0 || tm_op_defined((enum tm_opkind)o->kind, t->basic);
}

/* inout = in op inout for count elements of t through the user function: an int function
 * takes large buffers in pieces of INT_MAX elements, an MPI_Count one all at once. */
static void call_user(const struct tm_opref *o, const void *in, void *inout, size_t count,
                      const struct tm_type *t, MPI_Datatype dth)
{
    if (o->fn_c) {
        MPI_Count len = (MPI_Count)count;
        MPI_Datatype d = dth;
        if (count) o->fn_c((void *)in, inout, &len, &d);
        return;
    }
    while (count) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        MPI_Datatype d = dth;
        o->fn((void *)in, inout, &len, &d);
        in = tm_dt_at(in, (size_t)len, t);
        inout = tm_dt_at(inout, (size_t)len, t);
        count -= (size_t)len;
    }
}

/* A user function on packed data of a non-contiguous type u (a collective across nodes runs
 * on packed twins, coll_stage.c): it is written for u's layout, so both operands are unpacked
 * into that layout, combined, and the result packed back. */
static void apply_unpacked(const struct tm_opref *o, const void *in, void *inout, size_t count,
                           const struct tm_type *u, MPI_Datatype dth)
{
    if (!count) return;
    /* [lo, hi): the bytes count elements of u occupy from their start */
    ptrdiff_t lo, hi;
    tm_type_range(u, count, &lo, &hi);
    if (lo > 0) lo = 0;
    if (hi < (ptrdiff_t)count * u->extent) hi = (ptrdiff_t)count * u->extent;
    const size_t span = (size_t)(hi - lo), bytes = count * u->psize;
    unsigned char *a = calloc(2, span ? span : 1);
    if (!a) {
        fprintf(stderr, "libtmpi: out of memory applying a user operation\n");
        abort();
    }
    unsigned char *ia = a - lo, *ib = a + span - lo;
    tm_type_unpack(ia, count, u, 0, in, bytes);
    tm_type_unpack(ib, count, u, 0, inout, bytes);
    call_user(o, ia, ib, count, u, dth);
    tm_type_pack(inout, ib, count, u, 0, bytes);
    free(a);
}

void tm_opref_apply(const struct tm_opref *o, const void *in, void *inout, size_t count,
                    const struct tm_type *t, MPI_Datatype dth)
{
    if (o->kind >= 0) {
        if (TM_UNLIKELY(!t->contig)) /* a derived type of one basic type: block by block */
            tm_type_apply(o->kind, in, inout, count, t);
        else
            tm_op_apply_packed((enum tm_opkind)o->kind, t->basic, in, inout,
                               count * tm_dt_units(t));
        return;
    }
    if (TM_UNLIKELY(t->packed_of)) {
        apply_unpacked(o, in, inout, count, t->packed_of, dth);
        return;
    }
    call_user(o, in, inout, count, t, dth);
}

void tm_userop_tab_free(struct tm_rank *me)
{
    tm_objtab_free(me->uops, free);
    me->uops = NULL;
}

int tm_op_handle_hold(struct tm_rank *me, MPI_Op op, MPI_Op *ret)
{
    *ret = op;
    const struct tm_userop *u =
        op >= TM_OP_USER_FIRST ? tm_objtab_get(me->uops, TM_OP_USER_FIRST, op) : NULL;
    if (!u) return MPI_SUCCESS;
    struct tm_userop *c = malloc(sizeof *c);
    if (!c) return MPI_ERR_NO_MEM;
    *c = *u;
    int h = tm_objtab_add(&me->uops, TM_OP_USER_FIRST, c);
    if (h < 0) {
        free(c);
        return MPI_ERR_NO_MEM;
    }
    *ret = h;
    return MPI_SUCCESS;
}

void tm_op_handle_drop(struct tm_rank *me, MPI_Op h)
{
    struct tm_userop *u =
        h >= TM_OP_USER_FIRST ? tm_objtab_get(me->uops, TM_OP_USER_FIRST, h) : NULL;
    if (!u) return;
    tm_objtab_del(me->uops, TM_OP_USER_FIRST, h);
    free(u);
}

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

/* One body for MPI_Op_create (user_fn) and MPI_Op_create_c (user_fn_c); the other is NULL. */
static int op_create(const char *fn, MPI_User_function *user_fn, MPI_User_function_c *user_fn_c,
                     int commute, MPI_Op *op)
{
    NEED_ME(fn);
    if (TM_UNLIKELY((!user_fn && !user_fn_c) || !op))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "user_fn or op is NULL");
    struct tm_userop *u = malloc(sizeof *u);
    if (!u) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    u->fn = user_fn;
    u->fn_c = user_fn_c;
    u->commute = commute != 0;
    int h = tm_objtab_add(&me->uops, TM_OP_USER_FIRST, u);
    if (h < 0) {
        free(u);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *op = h;
    return MPI_SUCCESS;
}

TM_API int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create", user_fn, NULL, commute, op);
}
TM_ALIAS(Op_create)

TM_API int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create_c", NULL, user_fn, commute, op);
}
TM_ALIAS(Op_create_c)

/* Pending operations copied the function pointer when they started, so freeing the handle
 * never pulls an op from under them (MPI 3.1 §5.9.5). */
TM_API int PMPI_Op_free(MPI_Op *op)
{
    const char *fn = "MPI_Op_free";
    NEED_ME(fn);
    if (TM_UNLIKELY(!op)) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "op is NULL");
    struct tm_userop *u = tm_objtab_get(me->uops, TM_OP_USER_FIRST, *op);
    if (TM_UNLIKELY(!u))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_OP, fn, "%s op %d cannot be freed",
                      tm_op_kind(*op) >= 0 ? "predefined" : "invalid", *op);
    tm_objtab_del(me->uops, TM_OP_USER_FIRST, *op);
    free(u);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Op_free)

TM_API int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    const char *fn = "MPI_Op_commutative";
    NEED_ME(fn);
    struct tm_opref o;
    if (TM_UNLIKELY(tm_op_resolve(me, op, &o) < 0))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_OP, fn, "invalid operation %d", op);
    if (TM_UNLIKELY(!commute))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "commute is NULL");
    *commute = o.commute;
    return MPI_SUCCESS;
}
TM_ALIAS(Op_commutative)
