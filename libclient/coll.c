/* coll.c — shared-memory collectives (coll.h) and their MPI entry points. */
#include "coll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "job.h"
#include "op.h"
#include "wait.h"

#define TM_SCRATCH_BYTES (16u * 1024) /* per-rank reduction chunk */
#define TM_SLICE_MIN_BYTES 4096u      /* smaller slices cost more in sharing than they save */

struct counter_wait {
    _Atomic uint64_t *ctr;
    uint64_t target;
};

static int counter_cond(void *arg)
{
    struct counter_wait *w = arg;
    return atomic_load_explicit(w->ctr, memory_order_seq_cst) >= w->target;
}

/* Wakes every member that announced sleep: a load per member, a syscall only for sleepers. */
static void wake_members(struct tm_rank *me, struct tm_comm *c)
{
    for (int i = 0; i < c->size; i++)
        tm_wake(&tm_job_rank(me->job, tm_comm_world_rank(c, i))->waker);
}

/* Counting barrier: arrive never resets, so the k-th barrier ends at arrive == k * size.  The
 * last to arrive wakes the sleepers.  Release/acquire on arrive also publishes the slots. */
void tm_coll_barrier(struct tm_rank *me, struct tm_commref *cr)
{
    struct tm_comm *c = cr->c;
    uint64_t target = ++cr->nbarrier * (uint64_t)c->size;
    if (c->size == 1) return;
    uint64_t prev = atomic_fetch_add_explicit(&c->coll.arrive, 1, memory_order_seq_cst);
    if (prev + 1 == target) {
        wake_members(me, c);
        return;
    }
    struct counter_wait w = {&c->coll.arrive, target};
    tm_wait(me, counter_cond, &w);
}

/* The root publishes its buffer; the others copy straight from it; the root leaves when all
 * have copied (copied counts copies over the communicator's life, like arrive). */
void tm_coll_bcast(struct tm_rank *me, struct tm_commref *cr, void *buf, size_t bytes, int root)
{
    struct tm_comm *c = cr->c;
    int n = c->size;
    if (n == 1) return;
    if (cr->rank == root) c->coll.slot[root].in = buf;
    tm_coll_barrier(me, cr);
    uint64_t target = ++cr->nbcast * (uint64_t)(n - 1);
    if (cr->rank == root) {
        struct counter_wait w = {&c->coll.copied, target};
        tm_wait(me, counter_cond, &w);
        return;
    }
    if (bytes) memcpy(buf, c->coll.slot[root].in, bytes);
    uint64_t prev = atomic_fetch_add_explicit(&c->coll.copied, 1, memory_order_seq_cst);
    if (prev + 1 == target) {
        struct tm_rank *rr = tm_job_rank(me->job, tm_comm_world_rank(c, root));
        tm_wake(&rr->waker);
    }
}

static void *scratch(struct tm_rank *me)
{
    if (!me->scratch) {
        me->scratch = malloc(TM_SCRATCH_BYTES);
        if (me->scratch) me->scratch_size = TM_SCRATCH_BYTES;
    }
    return me->scratch;
}

/* Every member publishes its input and output; each combines its slice of the elements over
 * all inputs (in[0] op (in[1] op (... in[n-1])), the same order for every element and every
 * run) and writes the result straight into the root's output, or everyone's.  A slice of an
 * input is read only by the member that owns the slice, so writing the result over an
 * in-place input after reading it is safe.  The second barrier keeps every input and output
 * alive until all slices are written. */
int tm_coll_reduce(struct tm_rank *me, struct tm_commref *cr, const void *in, void *out,
                   size_t count, const struct tm_type *t, int opkind, int root)
{
    struct tm_comm *c = cr->c;
    int n = c->size;
    size_t ext = t->extent;
    if (in == MPI_IN_PLACE) in = out;
    if (n == 1) {
        if (count && in != out) memcpy(out, in, count * ext);
        return 0;
    }
    struct tm_slot *slot = c->coll.slot;
    slot[cr->rank].in = in;
    slot[cr->rank].out = out;
    tm_coll_barrier(me, cr);

    int err = 0;
    size_t per = (count + (size_t)n - 1) / (size_t)n;
    size_t min_per = (TM_SLICE_MIN_BYTES + ext - 1) / ext;
    if (per < min_per) per = min_per;
    size_t lo = (size_t)cr->rank * per;
    size_t hi = lo + per < count ? lo + per : count;
    if (lo < hi) {
        unsigned char *acc = scratch(me);
        size_t chunk = TM_SCRATCH_BYTES / ext;
        if (!acc) err = -ENOMEM;
        for (size_t a = lo; acc && a < hi; a += chunk) {
            size_t m = hi - a < chunk ? hi - a : chunk;
            size_t off = a * ext, len = m * ext;
            memcpy(acc, (const unsigned char *)slot[n - 1].in + off, len);
            for (int k = n - 2; k >= 0; k--)
                tm_op_apply((enum tm_opkind)opkind, t->basic,
                            (const unsigned char *)slot[k].in + off, acc, m);
            if (root >= 0) {
                memcpy((unsigned char *)slot[root].out + off, acc, len);
            } else {
                for (int k = 0; k < n; k++)
                    memcpy((unsigned char *)slot[k].out + off, acc, len);
            }
        }
    }
    tm_coll_barrier(me, cr);
    return err;
}

/* ---- MPI entry points ---- */

#define COLL_PROLOGUE(fn)                                                                          \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);         \
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);                                         \
    if (TM_UNLIKELY(!cr))                                                                          \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);

TM_API int PMPI_Barrier(MPI_Comm comm)
{
    COLL_PROLOGUE("MPI_Barrier");
    tm_coll_barrier(me, cr);
    return MPI_SUCCESS;
}
TM_ALIAS(Barrier)

TM_API int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    const char *fn = "MPI_Bcast";
    COLL_PROLOGUE(fn);
    if (TM_UNLIKELY(count < 0))
        return tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid count %d", count);
    const struct tm_type *t = tm_type_get(datatype);
    if (TM_UNLIKELY(!t)) return tm_err(me, comm, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!buffer && count > 0))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn, "buffer is NULL with count %d", count);
    if (TM_UNLIKELY(root < 0 || root >= cr->c->size))
        return tm_err(me, comm, MPI_ERR_ROOT, fn, "invalid root %d", root);
    tm_coll_bcast(me, cr, buffer, (size_t)count * t->extent, root);
    return MPI_SUCCESS;
}
TM_ALIAS(Bcast)

static int reduce_common(const char *fn, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, int root, int all, MPI_Comm comm)
{
    COLL_PROLOGUE(fn);
    if (TM_UNLIKELY(count < 0))
        return tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid count %d", count);
    const struct tm_type *t = tm_type_get(datatype);
    if (TM_UNLIKELY(!t)) return tm_err(me, comm, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
    int opk = tm_op_kind(op);
    if (TM_UNLIKELY(opk < 0)) return tm_err(me, comm, MPI_ERR_OP, fn, "invalid operation %d", op);
    if (TM_UNLIKELY(!tm_op_defined((enum tm_opkind)opk, t->basic)))
        return tm_err(me, comm, MPI_ERR_OP, fn, "operation %d is not defined for %s", op, t->name);
    if (TM_UNLIKELY(!all && (root < 0 || root >= cr->c->size)))
        return tm_err(me, comm, MPI_ERR_ROOT, fn, "invalid root %d", root);
    if (all) root = -1;
    int is_root = all || root == cr->rank;
    if (count > 0) {
        if (TM_UNLIKELY(!sendbuf || (sendbuf == MPI_IN_PLACE && !is_root)))
            return tm_err(me, comm, MPI_ERR_BUFFER, fn, "invalid send buffer");
        if (TM_UNLIKELY(is_root && (!recvbuf || recvbuf == MPI_IN_PLACE)))
            return tm_err(me, comm, MPI_ERR_BUFFER, fn, "invalid receive buffer");
    }
    int r = tm_coll_reduce(me, cr, sendbuf, recvbuf, (size_t)count, t, opk, root);
    if (TM_UNLIKELY(r < 0)) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    return MPI_SUCCESS;
}

TM_API int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm)
{
    return reduce_common("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, 0, comm);
}
TM_ALIAS(Reduce)

TM_API int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, -1, 1, comm);
}
TM_ALIAS(Allreduce)
