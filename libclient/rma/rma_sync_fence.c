/* rma_sync_fence.c — active-target synchronisation with MPI_Win_fence (MPI 3.1 §11.5.1).
 *
 * Operations on targets of this node are complete when their call returns, so a fence is:
 * every operation to other nodes answered (FLUSH to each target written since the last
 * synchronisation), then a barrier of the window's members (their private communicator),
 * which also orders every member's plain stores before the next epoch's accesses. */
#include "errh.h"
#include "job.h"
#include "rma.h"

#define FENCE_ASSERTS (MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

TM_API int PMPI_Win_fence(int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_fence";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (assert & ~FENCE_ASSERTS)
        return tm_win_err(me, wr, MPI_ERR_ASSERT, fn, "invalid assertion %#x", assert);
    if (wr->lock_all || wr->nlocks || wr->access || wr->exposure)
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn,
                          "a lock or post/start epoch is open on this window");
    if (wr->org && (err = tm_rma_remote_flush_all(me, wr)))
        return tm_win_err(me, wr, err, fn, "operations to another node failed");
    err = PMPI_Barrier(wr->comm);
    if (err) return err;
    atomic_thread_fence(memory_order_seq_cst);
    tm_win_target_sync(wr->w);
    wr->fence = !(assert &MPI_MODE_NOSUCCEED);
    wr->fence_ops = 0;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_fence)
