/* rma_atomic.c — accumulate applied to window memory, atomic per basic element (MPI 3.1
 * §11.7.1), the one code path for origins on the target's node and for receive daemons that
 * apply operations from other nodes, so the two always agree on how an element is protected.
 *
 * An element of 1, 2, 4 or 8 bytes at its natural alignment is changed with one atomic
 * instruction (exchange for REPLACE, fetch-add for integer SUM, else a compare-and-swap loop
 * around the reduction kernel of op.c); anything else (long double, the pair types, unaligned
 * elements) under one of the window's stripe spin locks, chosen by the element's address. */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "rma.h"

static void stripe_lock(struct tm_win *w, const void *addr)
{
    _Atomic uint32_t *l = &w->stripe[((uintptr_t)addr >> 4) % TM_WIN_STRIPES];
    for (;;) {
        if (!atomic_exchange_explicit(l, 1, memory_order_acquire)) return;
        while (atomic_load_explicit(l, memory_order_relaxed))
            sched_yield(); /* held for one element: rarely seen taken at all */
    }
}

static void stripe_unlock(struct tm_win *w, const void *addr)
{
    atomic_store_explicit(&w->stripe[((uintptr_t)addr >> 4) % TM_WIN_STRIPES], 0,
                          memory_order_release);
}

static int is_int(enum tm_basic t)
{
    switch (t) {
    case TM_T_FLOAT:
    case TM_T_DOUBLE:
    case TM_T_LONG_DOUBLE:
    case TM_T_FLOAT_INT:
    case TM_T_DOUBLE_INT:
    case TM_T_LONG_INT:
    case TM_T_2INT:
    case TM_T_SHORT_INT:
    case TM_T_LONG_DOUBLE_INT:
    case TM_T_2FLOAT:
    case TM_T_2DOUBLE:
        return 0;
    default:
        return 1;
    }
}

/* One element of es bytes (1, 2, 4, 8; aligned) by compare-and-swap. */
#define CAS_ELEM(T)                                                                                \
    do {                                                                                           \
        T *p = target, old = __atomic_load_n(p, __ATOMIC_RELAXED), nv;                             \
        if (op == TM_OP_REPLACE) {                                                                 \
            memcpy(&nv, in, sizeof nv);                                                            \
            old = __atomic_exchange_n(p, nv, __ATOMIC_SEQ_CST);                                    \
        } else if (op == TM_OP_NO_OP) {                                                            \
            old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                            \
        } else if (op == TM_OP_SUM && intsum) {                                                    \
            memcpy(&nv, in, sizeof nv);                                                            \
            old = __atomic_fetch_add(p, nv, __ATOMIC_SEQ_CST);                                     \
        } else {                                                                                   \
            do {                                                                                   \
                nv = old;                                                                          \
                tm_op_apply(op, type, in, &nv, 1);                                                 \
            } while (                                                                              \
                !__atomic_compare_exchange_n(p, &old, nv, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)); \
        }                                                                                          \
        if (fetch) memcpy(fetch, &old, sizeof old);                                                \
    } while (0)

static void elem_atomic(enum tm_opkind op, enum tm_basic type, size_t es, int intsum,
                        const void *in, void *target, void *fetch)
{
    switch (es) {
    case 1:
        CAS_ELEM(uint8_t);
        break;
    case 2:
        CAS_ELEM(uint16_t);
        break;
    case 4:
        CAS_ELEM(uint32_t);
        break;
    default:
        CAS_ELEM(uint64_t);
        break;
    }
}

int tm_rma_acc_apply(struct tm_win *w, enum tm_opkind op, enum tm_basic type, const void *in,
                     void *target, size_t n, void *fetch)
{
    if (!tm_op_defined(op, type)) return -EINVAL;
    const size_t es = tm_basic_size(type);
    const int small = es == 1 || es == 2 || es == 4 || es == 8;
    const int intsum = is_int(type) && type != TM_T_C_BOOL;
    const char *ip = in;
    char *tp = target, *fp = fetch;
    for (size_t i = 0; i < n; i++, tp += es) {
        if (small && ((uintptr_t)tp & (es - 1)) == 0) {
            elem_atomic(op, type, es, intsum, ip, tp, fp);
        } else {
            stripe_lock(w, tp);
            if (fp) memcpy(fp, tp, es);
            if (op == TM_OP_REPLACE)
                memcpy(tp, ip, es);
            else if (op != TM_OP_NO_OP)
                tm_op_apply(op, type, ip, tp, 1);
            stripe_unlock(w, tp);
        }
        if (ip) ip += es;
        if (fp) fp += es;
    }
    return 0;
}

void tm_rma_cas_apply(struct tm_win *w, enum tm_basic type, const void *in, const void *cmp,
                      void *target, void *fetch)
{
    const size_t es = tm_basic_size(type);
    if ((es == 1 || es == 2 || es == 4 || es == 8) && ((uintptr_t)target & (es - 1)) == 0) {
#define CAS_ONE(T)                                                                                 \
    do {                                                                                           \
        T exp, nv;                                                                                 \
        memcpy(&exp, cmp, sizeof exp);                                                             \
        memcpy(&nv, in, sizeof nv);                                                                \
        __atomic_compare_exchange_n((T *)target, &exp, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        memcpy(fetch, &exp, es);                                                                   \
    } while (0)
        switch (es) {
        case 1:
            CAS_ONE(uint8_t);
            break;
        case 2:
            CAS_ONE(uint16_t);
            break;
        case 4:
            CAS_ONE(uint32_t);
            break;
        default:
            CAS_ONE(uint64_t);
            break;
        }
#undef CAS_ONE
        return;
    }
    stripe_lock(w, target);
    memcpy(fetch, target, es);
    if (!memcmp(target, cmp, es)) memcpy(target, in, es);
    stripe_unlock(w, target);
}
