/* rma_atomic.c — accumulate applied to window memory, atomic per basic element (MPI 3.1
 * §11.7.1), the one code path for origins on the target's node and for receive daemons that
 * apply operations from other nodes, so the two always agree on how an element is protected.
 *
 * Window memory is cut into granules of TM_ACC_GRANULE bytes; every granule maps onto one of the
 * window's stripe spin locks, and an element belongs to the granule of its first byte.  Every
 * accumulate operation (Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap) changes an
 * element only under that lock, so any two of them are atomic with respect to each other, and a
 * run of elements is applied one granule at a time with the reduction kernel of op.c over the
 * whole granule.  The lock is taken once per granule, not once per element: osu_acc_latency at
 * 1 MiB spent 97 % of its 1,546 us in one compare-and-swap loop per element, where the standard
 * only asks for atomicity between accumulates, element by element.  A single element pays one
 * exchange and one release store, what a compare-and-swap alone would cost; hardware atomics on
 * their own cannot be kept for single elements, because a run applied under the lock with plain
 * loads and stores would then lose their updates.  A lock is held for at most one granule and
 * never together with another, so there is no order to keep.
 *
 * Operands and fetched values are in packed form, the target in its memory layout.  The two
 * differ for the padded pair types (MPI_DOUBLE_INT, LONG_INT, SHORT_INT, LONG_DOUBLE_INT),
 * whose packed form has no padding (typecore/type.h): a pair is combined as a packed copy of
 * its target struct, and a target datatype's pieces, which need not start at a pair (merged
 * runs of SHORT_INT cross them), are walked pair by pair (tm_rma_acc_walk). */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

#include "rma.h"
#include "type.h"

/* 4 KiB: large enough that a 1 MiB run takes 256 locks, small enough that ranks updating
 * different parts of one window rarely meet on a stripe (64 stripes cover 256 KiB). */
#define TM_ACC_GRANULE_SHIFT 12

static _Atomic uint32_t *stripe_of(struct tm_win *w, const void *addr)
{
    return &w->stripe[((uintptr_t)addr >> TM_ACC_GRANULE_SHIFT) % TM_WIN_STRIPES];
}

static void stripe_lock(_Atomic uint32_t *l)
{
    for (;;) {
        if (!atomic_exchange_explicit(l, 1, memory_order_acquire)) return;
        while (atomic_load_explicit(l, memory_order_relaxed))
            sched_yield(); /* the holder applies at most one granule */
    }
}

static void stripe_unlock(_Atomic uint32_t *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}

/* A padded pair's parts in its struct: value bytes, index offset and bytes. */
struct pair_parts {
    size_t vs, ioff, is;
};

static int pair_parts(enum tm_basic type, struct pair_parts *ret)
{
    enum tm_basic v;
    if (!tm_basic_pair(type, &v, &ret->ioff)) return 0;
    ret->vs = tm_basic_size(v);
    ret->is = tm_basic_size(tm_basic_pair_index(type));
    return 1;
}

/* n padded pairs: operands ip and fetch fp packed, the target tp structs es bytes apart. */
static int apply_pairs(enum tm_opkind op, enum tm_basic type, const struct pair_parts *pp,
                       size_t es, const char *ip, char *tp, size_t n, char *fp)
{
    const size_t ps = pp->vs + pp->is;
    for (size_t k = 0; k < n; k++, tp += es) {
        _Alignas(max_align_t) char c[64];
        memcpy(c, tp, pp->vs);
        memcpy(c + pp->vs, tp + pp->ioff, pp->is);
        if (fp) memcpy(fp + k * ps, c, ps);
        int err = tm_op_apply_packed(op, type, ip ? ip + k * ps : c, c, 1);
        if (err) return err;
        memcpy(tp, c, pp->vs);
        memcpy(tp + pp->ioff, c + pp->vs, pp->is);
    }
    return 0;
}

/* n elements of es bytes at tp, all starting in one granule, under its lock. */
static int apply_run(enum tm_opkind op, enum tm_basic type, size_t es, const char *ip, char *tp,
                     size_t n, char *fp)
{
    struct pair_parts pp;
    if (tm_basic_psize(type) != es && pair_parts(type, &pp))
        return apply_pairs(op, type, &pp, es, ip, tp, n, fp);
    if (fp) memcpy(fp, tp, n * es);
    if (op == TM_OP_REPLACE) {
        memcpy(tp, ip, n * es);
        return 0;
    }
    if (op == TM_OP_NO_OP) return 0;
    return tm_op_apply(op, type, ip, tp, n);
}

int tm_rma_acc_apply(struct tm_win *w, enum tm_opkind op, enum tm_basic type, const void *in,
                     void *target, size_t n, void *fetch)
{
    if (!tm_op_defined(op, type)) return -EINVAL;
    const size_t es = tm_basic_size(type), ps = tm_basic_psize(type);
    const char *ip = in;
    char *tp = target, *fp = fetch;
    while (n) {
        /* The elements whose first byte lies in tp's granule. */
        const uintptr_t next = ((uintptr_t)tp | (((uintptr_t)1 << TM_ACC_GRANULE_SHIFT) - 1)) + 1;
        size_t k = (next - (uintptr_t)tp + es - 1) / es;
        if (k > n) k = n;
        _Atomic uint32_t *l = stripe_of(w, tp);
        stripe_lock(l);
        int err = apply_run(op, type, es, ip, tp, k, fp);
        stripe_unlock(l);
        if (err) return err;
        n -= k;
        tp += k * es;
        if (ip) ip += k * ps;
        if (fp) fp += k * ps;
    }
    return 0;
}

void tm_rma_acc_walk_init(struct tm_rma_acc_walk *k, struct tm_win *w, enum tm_opkind op,
                          enum tm_basic type, const void *in, void *fetch)
{
    *k = (struct tm_rma_acc_walk){.w = w,
                                  .op = op,
                                  .type = type,
                                  .es = tm_basic_size(type),
                                  .ps = tm_basic_psize(type),
                                  .in = in,
                                  .fetch = fetch};
}

static void walk_flush(struct tm_rma_acc_walk *k)
{
    if (!k->run_n) return;
    int err = tm_rma_acc_apply(k->w, k->op, k->type, k->in ? k->in + k->run_pos : NULL, k->run,
                               k->run_n, k->fetch ? k->fetch + k->run_pos : NULL);
    if (err && !k->err) k->err = err;
    k->run_n = 0;
}

void tm_rma_acc_walk_piece(struct tm_rma_acc_walk *k, char *addr, size_t len)
{
    if (k->ps == k->es) { /* pieces hold whole elements */
        int err = tm_rma_acc_apply(k->w, k->op, k->type, k->in ? k->in + k->pos : NULL, addr,
                                   len / k->es, k->fetch ? k->fetch + k->pos : NULL);
        if (err && !k->err) k->err = err;
        k->pos += len;
        return;
    }
    /* The pairs that start in this piece: a pair lies in the target as its C struct (the
     * datatype is made of whole pairs), so its index is where the struct puts it, in this
     * piece or the next.  Pairs whose structs follow each other make one run. */
    for (size_t p = (k->pos + k->ps - 1) / k->ps * k->ps; p < k->pos + len; p += k->ps) {
        char *base = addr + (p - k->pos);
        if (k->run_n && base == k->run + k->run_n * k->es) {
            k->run_n++;
            continue;
        }
        walk_flush(k);
        k->run = base;
        k->run_n = 1;
        k->run_pos = p;
    }
    k->pos += len;
}

int tm_rma_acc_walk_end(struct tm_rma_acc_walk *k)
{
    walk_flush(k);
    return k->err;
}

void tm_rma_cas_apply(struct tm_win *w, enum tm_basic type, const void *in, const void *cmp,
                      void *target, void *fetch)
{
    const size_t es = tm_basic_size(type);
    _Atomic uint32_t *l = stripe_of(w, target);
    stripe_lock(l);
    memcpy(fetch, target, es);
    if (!memcmp(target, cmp, es)) memcpy(target, in, es);
    stripe_unlock(l);
}
