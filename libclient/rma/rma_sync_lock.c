/* rma_sync_lock.c — passive-target synchronisation (MPI 3.1 §11.5.3-4): Win_lock/unlock,
 * lock_all/unlock_all, the flushes, Win_sync; the target-side lock word every origin of the
 * node and the receive daemons share (rma.h struct tm_win_member), and the epoch checks the
 * communication calls use.
 *
 * A target on this node: the origin takes the lock word itself (spinning with yields while
 * another origin holds it), and its operations are complete when their calls return, so a
 * flush is a memory fence.  A target on another node: LOCK/UNLOCK/FLUSH frames, answered by
 * that node's receive daemon (rma_net.c), which queues a lock it cannot grant yet. */
#include <sched.h>
#include <stdlib.h>

#include "errh.h"
#include "job.h"
#include "rma.h"
#include "wait.h"

/* lock_of[t] (and lock_all): LOCK_SH or LOCK_EX, | LOCK_NOCHECK when taken with
 * MPI_MODE_NOCHECK (the lock word was not touched). */
enum { LOCK_SH = 1, LOCK_EX = 2, LOCK_NOCHECK = 4 };

static int lock_type_of(int v)
{
    return (v & LOCK_EX) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
}

int tm_win_passive(const struct tm_winref *wr, int t)
{
    return wr->lock_all || (wr->lock_of && wr->lock_of[t]);
}

int tm_win_epoch_ok(const struct tm_winref *wr, int t)
{
    if (wr->fence || tm_win_passive(wr, t)) return 1;
    if (wr->access)
        for (int i = 0; i < wr->nacc_grp; i++)
            if (wr->acc_grp[i] == t) return 1;
    return 0;
}

int tm_win_lock_try(struct tm_win_member *m, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE) {
        int64_t z = 0;
        return atomic_compare_exchange_strong_explicit(&m->lockw, &z, -1, memory_order_seq_cst,
                                                       memory_order_relaxed);
    }
    int64_t v = atomic_load_explicit(&m->lockw, memory_order_relaxed);
    while (v >= 0)
        if (atomic_compare_exchange_weak_explicit(&m->lockw, &v, v + 1, memory_order_seq_cst,
                                                  memory_order_relaxed))
            return 1;
    return 0;
}

void tm_win_lock_release(struct tm_win *w, struct tm_win_member *m, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        atomic_store_explicit(&m->lockw, 0, memory_order_seq_cst);
    else
        atomic_fetch_sub_explicit(&m->lockw, 1, memory_order_seq_cst);
    /* A daemon counts itself in lockq_len before it re-tries: either it sees this release or
     * we see its request (both seq_cst). */
    if (atomic_load_explicit(&m->lockq_len, memory_order_seq_cst)) tm_rma_grant_queued(w, m);
}

static int is_local(const struct tm_winref *wr, int t)
{
    return wr->w->m[t].node == wr->w->m[wr->rank].node;
}

static void lock_local(struct tm_rank *me, struct tm_win_member *m, int type)
{
    while (!tm_win_lock_try(m, type)) {
        tm_poll_idle(me); /* a rank sharing a carrier lets the holder run */
        sched_yield();
    }
}

static int ensure_lock_tab(struct tm_winref *wr)
{
    if (wr->lock_of) return 0;
    wr->lock_of = calloc((size_t)wr->w->size, 1);
    return wr->lock_of ? 0 : -1;
}

/* Opening a passive epoch: not inside a fence epoch that has been used, nor a start epoch.
 * An unused fence epoch (the fence that opened it was the last call) just ends. */
static int may_open_passive(struct tm_winref *wr)
{
    if (wr->access || (wr->fence && wr->fence_ops)) return 0;
    wr->fence = 0;
    return 1;
}

TM_API int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return tm_win_err(me, wr, MPI_ERR_LOCKTYPE, fn, "invalid lock type %d", lock_type);
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= wr->w->size)
        return tm_win_err(me, wr, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    if (assert & ~MPI_MODE_NOCHECK)
        return tm_win_err(me, wr, MPI_ERR_ASSERT, fn, "invalid assertion %#x", assert);
    if (ensure_lock_tab(wr) < 0) return tm_win_err(me, wr, MPI_ERR_NO_MEM, fn, "out of memory");
    if (wr->lock_all || wr->lock_of[rank])
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "rank %d is already locked", rank);
    if (!may_open_passive(wr))
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "a fence or start epoch is open");
    int v = lock_type == MPI_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH;
    if (assert & MPI_MODE_NOCHECK) {
        v |= LOCK_NOCHECK;
    } else if (is_local(wr, rank)) {
        lock_local(me, &wr->w->m[rank], lock_type);
    } else {
        err = tm_rma_remote_ctl(me, wr, TM_RMA_LOCK, rank, lock_type);
        if (!err) err = tm_rma_remote_wait(me, wr, 0);
        if (err) return tm_win_err(me, wr, err, fn, "cannot lock rank %d (another node)", rank);
    }
    wr->lock_of[rank] = (uint8_t)v;
    wr->nlocks++;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_lock)

/* Ends the passive epoch on t (its operations complete at the target first). */
static int unlock_one(struct tm_rank *me, struct tm_winref *wr, int t, int v)
{
    int type = lock_type_of(v);
    if (is_local(wr, t)) {
        tm_rma_acc_net_wait(me, wr); /* the lock goes once its accumulates are applied */
        atomic_thread_fence(memory_order_seq_cst);
        tm_win_target_sync(wr->w);
        if (!(v & LOCK_NOCHECK)) tm_win_lock_release(wr->w, &wr->w->m[t], type);
        return 0;
    }
    if (wr->dirty) wr->dirty[t] = 0;
    /* UNLOCK is answered once the target applied everything before it (in order on the
     * link); with NOCHECK nothing is held there and a FLUSH does the same. */
    return tm_rma_remote_ctl(me, wr, (v & LOCK_NOCHECK) ? TM_RMA_FLUSH : TM_RMA_UNLOCK, t, type);
}

TM_API int PMPI_Win_unlock(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= wr->w->size)
        return tm_win_err(me, wr, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    if (!wr->lock_of || !wr->lock_of[rank])
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "rank %d is not locked", rank);
    err = unlock_one(me, wr, rank, wr->lock_of[rank]);
    if (!err && wr->org) err = tm_rma_remote_wait(me, wr, 0);
    wr->lock_of[rank] = 0;
    wr->nlocks--;
    if (err) return tm_win_err(me, wr, err, fn, "operations on rank %d failed", rank);
    return MPI_SUCCESS;
}
TM_ALIAS(Win_unlock)

TM_API int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock_all";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (assert & ~MPI_MODE_NOCHECK)
        return tm_win_err(me, wr, MPI_ERR_ASSERT, fn, "invalid assertion %#x", assert);
    if (wr->lock_all || wr->nlocks)
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "a passive epoch is already open");
    if (!may_open_passive(wr))
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "a fence or start epoch is open");
    wr->lock_all = LOCK_SH | ((assert &MPI_MODE_NOCHECK) ? LOCK_NOCHECK : 0);
    if (assert & MPI_MODE_NOCHECK) return MPI_SUCCESS;
    err = 0;
    for (int t = 0; t < wr->w->size && !err; t++) {
        if (is_local(wr, t))
            lock_local(me, &wr->w->m[t], MPI_LOCK_SHARED);
        else
            err = tm_rma_remote_ctl(me, wr, TM_RMA_LOCK, t, MPI_LOCK_SHARED);
    }
    if (!err && wr->org) err = tm_rma_remote_wait(me, wr, 0);
    if (err) return tm_win_err(me, wr, err, fn, "cannot lock a rank on another node");
    return MPI_SUCCESS;
}
TM_ALIAS(Win_lock_all)

TM_API int PMPI_Win_unlock_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock_all";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (!wr->lock_all)
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "no MPI_Win_lock_all epoch is open");
    err = 0;
    for (int t = 0; t < wr->w->size; t++) {
        int e = unlock_one(me, wr, t, wr->lock_all);
        if (!err) err = e;
    }
    if (wr->org) {
        int e = tm_rma_remote_wait(me, wr, 0);
        if (!err) err = e;
    }
    wr->lock_all = 0;
    if (err) return tm_win_err(me, wr, err, fn, "operations on another node failed");
    return MPI_SUCCESS;
}
TM_ALIAS(Win_unlock_all)

/* Flush and flush_local: on this node every operation is complete already. */
static int flush(const char *fn, int rank, MPI_Win win, int all, int local_only)
{
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (!all && rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (!all && (rank < 0 || rank >= wr->w->size))
        return tm_win_err(me, wr, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    if (all ? !(wr->lock_all || wr->nlocks) : !tm_win_passive(wr, rank))
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "no passive-target epoch");
    atomic_thread_fence(memory_order_seq_cst);
    if (!wr->org) return MPI_SUCCESS;
    if (all) {
        err = tm_rma_remote_flush_all(me, wr);
    } else {
        err = 0;
        if (!local_only && wr->dirty && wr->dirty[rank]) {
            wr->dirty[rank] = 0;
            err = tm_rma_remote_ctl(me, wr, TM_RMA_FLUSH, rank, 0);
        }
        if (!err) err = tm_rma_remote_wait(me, wr, local_only);
    }
    if (err) return tm_win_err(me, wr, err, fn, "operations on another node failed");
    return MPI_SUCCESS;
}

TM_API int PMPI_Win_flush(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush", rank, win, 0, 0);
}
TM_ALIAS(Win_flush)

TM_API int PMPI_Win_flush_all(MPI_Win win)
{
    return flush("MPI_Win_flush_all", 0, win, 1, 0);
}
TM_ALIAS(Win_flush_all)

TM_API int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush_local", rank, win, 0, 1);
}
TM_ALIAS(Win_flush_local)

TM_API int PMPI_Win_flush_local_all(MPI_Win win)
{
    return flush("MPI_Win_flush_local_all", 0, win, 1, 0);
}
TM_ALIAS(Win_flush_local_all)

/* The unified model has one copy of the window: a full memory fence is all there is to
 * synchronise. */
TM_API int PMPI_Win_sync(MPI_Win win)
{
    int err;
    struct tm_winref *wr = tm_win_enter(win, "MPI_Win_sync", &err);
    if (!wr) return err;
    atomic_thread_fence(memory_order_seq_cst);
    tm_win_target_sync(wr->w);
    return MPI_SUCCESS;
}
TM_ALIAS(Win_sync)
