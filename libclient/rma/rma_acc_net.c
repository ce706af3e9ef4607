/* rma_acc_net.c — accumulates carried out by the job's transport (svc net_atomic: the OFI
 * transport's fi_atomic, fi_fetch_atomic and fi_compare_atomic, applied at the target by the
 * provider, on a real fabric by the network card) instead of TM_MSG_RMA frames applied by the
 * target node's receive daemon.
 *
 * Atomicity between accumulates (MPI 4.1 §12.7.1: concurrent accumulates to one location with
 * the same predefined type, with the same operation or MPI_NO_OP under the default
 * accumulate_ops) holds only when both go the same way: the provider's atomics know nothing
 * of the window's stripe locks (rma_atomic.c), and the stripe locks nothing of them.  So the
 * way is chosen once per window and element type, when the window is made (tm_rma_acc_net_types,
 * the same on every member): a type goes as transport atomics when the job's links are all on
 * a transport that has them, every member registered its memory, the window spans nodes, and
 * the provider carries every operation MPI defines on that type (fetching ones too, and
 * compare-and-swap for the integer types); then every accumulate of that type to the window
 * goes as atomics, from origins on other nodes and from those of the target's own node alike
 * (those through the endpoint's own address), whatever the layout (one atomic per contiguous
 * run of the target datatype).  Everything else (long double, complex where the provider has
 * none, the pair types of MINLOC/MAXLOC, dynamic windows) stays frames and stripe locks.
 *
 * Completion is that of the remote memory accesses (rma_net.c tm_rma_direct): counted in the
 * origin's direct_posted / direct_done, which a flush, an unlock or a fence waits for.  When
 * the provider does not apply one origin's atomics in the order posted (tcp;ofi_rxm names no
 * FI_ORDER_ATOMIC_WAR), an accumulate first waits for the origin's earlier remote accesses,
 * so that accumulate_ordering's default (rar, raw, war, waw) holds. */
#include <complex.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "job.h"
#include "net_p2p.h"
#include "request.h"
#include "rma.h"
#include "type.h"
#include "type_copy.h"
#include "type_flat.h"
#include "wait.h"

/* An origin operand up to this size is copied (a Fetch_and_op's or Compare_and_swap's value on
 * the caller's stack is free again at once, as the frame path's RMA_COPY_MAX allows). */
#define ACC_NET_COPY_MAX 256

#define AT_NONE (-1)

static int int_type(size_t size, int is_signed)
{
    switch (size) {
    case 1:
        return is_signed ? TMPI_AT_INT8 : TMPI_AT_UINT8;
    case 2:
        return is_signed ? TMPI_AT_INT16 : TMPI_AT_UINT16;
    case 4:
        return is_signed ? TMPI_AT_INT32 : TMPI_AT_UINT32;
    case 8:
        return is_signed ? TMPI_AT_INT64 : TMPI_AT_UINT64;
    default:
        return AT_NONE;
    }
}

/* The transport's element type of a predefined type, or AT_NONE. */
static int at_of(enum tm_basic b)
{
    switch (b) {
    case TM_T_CHAR:
        return int_type(sizeof(char), (char)-1 < 0);
    case TM_T_SIGNED_CHAR:
    case TM_T_INT8:
        return TMPI_AT_INT8;
    case TM_T_UNSIGNED_CHAR:
    case TM_T_BYTE:
    case TM_T_UINT8:
        return TMPI_AT_UINT8;
    case TM_T_C_BOOL:
        return int_type(sizeof(_Bool), 0);
    case TM_T_SHORT:
        return int_type(sizeof(short), 1);
    case TM_T_UNSIGNED_SHORT:
        return int_type(sizeof(short), 0);
    case TM_T_INT:
        return int_type(sizeof(int), 1);
    case TM_T_UNSIGNED:
        return int_type(sizeof(int), 0);
    case TM_T_LONG:
        return int_type(sizeof(long), 1);
    case TM_T_UNSIGNED_LONG:
        return int_type(sizeof(long), 0);
    case TM_T_LONG_LONG:
        return int_type(sizeof(long long), 1);
    case TM_T_UNSIGNED_LONG_LONG:
        return int_type(sizeof(long long), 0);
    case TM_T_WCHAR:
        return int_type(sizeof(wchar_t), (wchar_t)-1 < 0);
    case TM_T_INT16:
        return TMPI_AT_INT16;
    case TM_T_INT32:
        return TMPI_AT_INT32;
    case TM_T_INT64:
        return TMPI_AT_INT64;
    case TM_T_UINT16:
        return TMPI_AT_UINT16;
    case TM_T_UINT32:
        return TMPI_AT_UINT32;
    case TM_T_UINT64:
        return TMPI_AT_UINT64;
    case TM_T_AINT:
        return int_type(sizeof(MPI_Aint), 1);
    case TM_T_OFFSET:
        return int_type(sizeof(MPI_Offset), 1);
    case TM_T_COUNT:
        return int_type(sizeof(MPI_Count), 1);
    case TM_T_FLOAT:
        return TMPI_AT_FLOAT;
    case TM_T_DOUBLE:
        return TMPI_AT_DOUBLE;
    case TM_T_C_FLOAT_COMPLEX:
        return TMPI_AT_FLOAT_COMPLEX;
    case TM_T_C_DOUBLE_COMPLEX:
        return TMPI_AT_DOUBLE_COMPLEX;
    default:
        return AT_NONE; /* long double, pair types, packed */
    }
}

/* The transport's operation of an accumulate's, or -1 (MINLOC, MAXLOC). */
static int aop_of(enum tm_opkind op)
{
    static const int map[TM_OP__COUNT] = {
        [TM_OP_SUM] = TMPI_AOP_SUM,       [TM_OP_PROD] = TMPI_AOP_PROD,  [TM_OP_MIN] = TMPI_AOP_MIN,
        [TM_OP_MAX] = TMPI_AOP_MAX,       [TM_OP_LAND] = TMPI_AOP_LAND,  [TM_OP_LOR] = TMPI_AOP_LOR,
        [TM_OP_LXOR] = TMPI_AOP_LXOR,     [TM_OP_BAND] = TMPI_AOP_BAND,  [TM_OP_BOR] = TMPI_AOP_BOR,
        [TM_OP_BXOR] = TMPI_AOP_BXOR,     [TM_OP_MINLOC] = -1,           [TM_OP_MAXLOC] = -1,
        [TM_OP_REPLACE] = TMPI_AOP_WRITE, [TM_OP_NO_OP] = TMPI_AOP_READ,
    };
    return (unsigned)op < TM_OP__COUNT ? map[op] : -1;
}

uint64_t tm_rma_acc_net_types(const struct tmpi_svc *svc, void *link, uint32_t *max, int *ordered)
{
    uint64_t mask = 0;
    int all_ordered = 1;
    if (!svc || !svc->net_atomic || !svc->net_atomic_ok) return 0;
    for (int b = 0; b < TM_T__COUNT; b++) {
        const int at = at_of((enum tm_basic)b);
        if (at == AT_NONE) continue;
        int ok = 1, least = INT32_MAX;
        for (int op = 0; op < TM_OP__COUNT && ok; op++) {
            if (!tm_op_defined((enum tm_opkind)op, (enum tm_basic)b)) continue;
            const int aop = aop_of((enum tm_opkind)op);
            for (int fetch = 0; fetch < 2 && ok; fetch++) {
                if (aop == TMPI_AOP_READ && !fetch) continue;
                unsigned flags = 0;
                int c = aop < 0 ? -ENOTSUP : svc->net_atomic_ok(link, aop, at, fetch, &flags);
                ok = c > 0;
                if (ok && c < least) least = c;
                if (ok && !(flags & TMPI_ATOMIC_ORDERED)) all_ordered = 0;
            }
        }
        /* compare-and-swap takes the integer, logical and byte types (MPI 4.1 §12.3.4) */
        if (ok && at <= TMPI_AT_UINT64) {
            unsigned flags = 0;
            int c = svc->net_atomic_ok(link, TMPI_AOP_CSWAP, at, 1, &flags);
            ok = c > 0;
            if (ok && c < least) least = c;
        }
        if (!ok) continue;
        mask |= 1ull << b;
        max[b] = (uint32_t)least;
    }
    *ordered = mask && all_ordered;
    return mask;
}

/* One accumulate in flight: its chunks hold refs (and the posting call one until it is done
 * posting); the last ref unpacks a fetched result that needed a bounce and completes the
 * request. */
struct acc_net {
    struct tm_rma_origin *org;
    struct tm_request *req;
    _Atomic int refs;
    _Atomic int err;
    char *in_tmp, *fetch_tmp; /* owned copies of the operand, of the old values (or NULL) */
    void *result;             /* unpack fetch_tmp into (result, rcount, rt) */
    size_t rcount, bytes;
    const struct tm_type *rt;
};

static void acc_put(struct acc_net *a)
{
    if (atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) != 1) return;
    const int err = atomic_load_explicit(&a->err, memory_order_relaxed);
    if (a->fetch_tmp && !err)
        tm_type_unpack(a->result, a->rcount, a->rt, 0, a->fetch_tmp, a->bytes);
    if (a->rt) tm_type_release(a->rt);
    if (err) {
        int z = 0;
        atomic_compare_exchange_strong(&a->org->err, &z, MPI_ERR_OTHER);
    }
    if (a->req) {
        struct tm_rank *owner = a->req->owner; /* the request may be reused once done */
        tm_req_set_done(a->req, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, err ? MPI_ERR_OTHER : 0);
        tm_wake(&owner->waker);
    }
    free(a->in_tmp);
    free(a->fetch_tmp);
    free(a);
}

static void chunk_done(void *arg, int err)
{
    struct acc_net *a = arg;
    struct tm_rma_origin *org = a->org;
    struct tm_waker *wk = &org->owner->waker;
    if (err) {
        int z = 0;
        atomic_compare_exchange_strong(&a->err, &z, err);
    }
    acc_put(a); /* the last one unpacks before the flush below can see it done */
    atomic_fetch_add_explicit(&org->direct_done, 1, memory_order_seq_cst);
    tm_wake(wk);
}

static int earlier_done(void *p)
{
    struct tm_rma_origin *org = p;
    return atomic_load_explicit(&org->direct_done, memory_order_seq_cst) >= org->direct_posted;
}

/* Posts the atomics of one contiguous run of n elements at target byte offset off, at most
 * chunk elements each (what the provider carries in one). */
static int post_run(struct tm_net *net, struct tm_winref *wr, int t, int aop, int at, size_t es,
                    size_t chunk, size_t off, const char *in, const char *cmp, char *fetch,
                    size_t n, struct acc_net *a)
{
    const struct tm_win_member *m = &wr->w->m[t];
    while (n) {
        const size_t k = n > chunk ? chunk : n;
        const struct tmpi_atomic x = {aop, at, in, cmp, fetch, k, m->raddr + off, m->rkey};
        atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
        wr->org->direct_posted++;
        int r = net->svc->net_atomic(net->link, m->node, &x, chunk_done, a);
        if (r < 0) {
            wr->org->direct_posted--;
            atomic_fetch_sub_explicit(&a->refs, 1, memory_order_relaxed);
            return r == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
        }
        n -= k;
        off += k * es;
        if (in) in += k * es;
        if (cmp) cmp += k * es;
        if (fetch) fetch += k * es;
    }
    return 0;
}

int tm_rma_acc_net(struct tm_rank *me, struct tm_winref *wr, int t, size_t off,
                   const struct tm_type *tt, size_t tcount, enum tm_opkind op, enum tm_basic basic,
                   const void *oaddr, size_t ocount, const struct tm_type *ot, void *raddr,
                   size_t rcount, const struct tm_type *rt, const void *cmp, size_t bytes,
                   struct tm_request *req)
{
    struct tm_net *net = me->job->net;
    struct tm_win *w = wr->w;
    const int at = at_of(basic), aop = cmp ? TMPI_AOP_CSWAP : aop_of(op);
    const size_t es = tm_basic_size(basic);
    const size_t chunk = (unsigned)basic < TM_T__COUNT ? w->acc_max[basic] : 0;
    if (!net || !wr->org || at == AT_NONE || aop < 0 || !chunk) return MPI_ERR_INTERN;
    struct acc_net *a = calloc(1, sizeof *a);
    if (!a) return MPI_ERR_NO_MEM;
    a->org = wr->org;
    a->req = req;
    atomic_init(&a->refs, 1);
    a->bytes = bytes;
    const int fetching = raddr != NULL;
    const char *in = oaddr;
    /* the operand (and a compare value after it): copied when small or not contiguous */
    if (oaddr && (!ot->contig || bytes <= ACC_NET_COPY_MAX || cmp)) {
        a->in_tmp = malloc(cmp ? 2 * bytes : bytes);
        if (!a->in_tmp) goto nomem;
        if (ot->contig)
            memcpy(a->in_tmp, oaddr, bytes);
        else
            tm_type_pack(a->in_tmp, oaddr, ocount, ot, 0, bytes);
        if (cmp) memcpy(a->in_tmp + bytes, cmp, bytes);
        in = a->in_tmp;
    }
    char *fetch = raddr;
    if (fetching && !rt->contig) {
        a->fetch_tmp = malloc(bytes);
        if (!a->fetch_tmp) goto nomem;
        a->result = raddr;
        a->rcount = rcount;
        a->rt = rt;
        tm_type_hold(rt);
        fetch = a->fetch_tmp;
    }
    /* accumulate_ordering: after the origin's earlier accesses, where the provider does not
     * keep their order itself */
    if (!w->acc_ordered && !earlier_done(wr->org)) tm_wait(me, earlier_done, wr->org);
    int err = 0;
    if (tt->contig) {
        err = post_run(net, wr, t, aop, at, es, chunk, off, in, cmp ? in + bytes : NULL, fetch,
                       bytes / es, a);
    } else {
        struct tm_block one;
        size_t nb, pos = 0;
        const struct tm_block *b = tm_type_blocks(tt, &one, &nb);
        for (size_t e = 0; e < tcount && !err; e++)
            for (size_t i = 0; i < nb && !err; i++) {
                const struct tm_block k = tm_type_block(tt, b, i);
                err =
                    post_run(net, wr, t, aop, at, es, chunk,
                             off + (size_t)((ptrdiff_t)(e * tt->extent) + k.off),
                             in ? in + pos : NULL, NULL, fetch ? fetch + pos : NULL, k.len / es, a);
                pos += k.len;
            }
    }
    if (err) {
        int z = 0;
        atomic_compare_exchange_strong(&a->err, &z, -EIO);
    }
    acc_put(a);
    return err;
nomem:
    free(a->in_tmp);
    free(a);
    return MPI_ERR_NO_MEM;
}

void tm_rma_acc_net_wait(struct tm_rank *me, struct tm_winref *wr)
{
    if (wr->w->acc_net && wr->org && !earlier_done(wr->org)) tm_wait(me, earlier_done, wr->org);
}
