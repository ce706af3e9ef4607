/* rma_null.c — every one-sided communication call with target MPI_PROC_NULL succeeds and
 * does nothing, in every synchronisation mode (fence, post-start-complete-wait, lock,
 * lock_all, the flushes), on a created, an allocated and a dynamic window (MPI 4.1 §12.3:
 * "the call returns immediately"); a request form's request is complete at once.  The
 * window, the origin and the result buffers keep their bytes.  Prints OK. */
#include <string.h>

#include "check.h"

#define N 8

static int win_buf[N], origin[N], result[N], compare[N];

/* nothing of the window, origin or result was written */
static void check_untouched(const char *mode)
{
    for (int i = 0; i < N; i++) {
        CHECK(win_buf[i] == -1, "%s: window element %d became %d", mode, i, win_buf[i]);
        CHECK(origin[i] == i + 1, "%s: origin element %d became %d", mode, i, origin[i]);
        CHECK(result[i] == -7, "%s: result element %d became %d", mode, i, result[i]);
    }
}

/* A request of an operation on MPI_PROC_NULL is complete without waiting. */
static void check_done(MPI_Request *rq)
{
    int flag = 0;
    CHECK_MPI(MPI_Test(rq, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "a request on MPI_PROC_NULL is not complete at once");
    CHECK(*rq == MPI_REQUEST_NULL, "MPI_Test did not free the completed request");
}

static void ops(MPI_Win win, int requests, const char *mode)
{
    const int P = MPI_PROC_NULL;
    CHECK_MPI(MPI_Put(origin, N, MPI_INT, P, 0, N, MPI_INT, win));
    CHECK_MPI(MPI_Get(result, N, MPI_INT, P, 0, N, MPI_INT, win));
    CHECK_MPI(MPI_Accumulate(origin, N, MPI_INT, P, 0, N, MPI_INT, MPI_SUM, win));
    CHECK_MPI(
        MPI_Get_accumulate(origin, N, MPI_INT, result, N, MPI_INT, P, 0, N, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, result, N, MPI_INT, P, 0, N, MPI_INT,
                                 MPI_NO_OP, win));
    CHECK_MPI(MPI_Fetch_and_op(origin, result, MPI_INT, P, 0, MPI_SUM, win));
    CHECK_MPI(MPI_Fetch_and_op(NULL, result, MPI_INT, P, 0, MPI_NO_OP, win));
    CHECK_MPI(MPI_Compare_and_swap(origin, compare, result, MPI_INT, P, 0, win));
    if (requests) {
        MPI_Request rq;
        CHECK_MPI(MPI_Rput(origin, N, MPI_INT, P, 0, N, MPI_INT, win, &rq));
        check_done(&rq);
        CHECK_MPI(MPI_Rget(result, N, MPI_INT, P, 0, N, MPI_INT, win, &rq));
        check_done(&rq);
        CHECK_MPI(MPI_Raccumulate(origin, N, MPI_INT, P, 0, N, MPI_INT, MPI_MAX, win, &rq));
        check_done(&rq);
        CHECK_MPI(MPI_Rget_accumulate(origin, N, MPI_INT, result, N, MPI_INT, P, 0, N, MPI_INT,
                                      MPI_REPLACE, win, &rq));
        check_done(&rq);
    }
    check_untouched(mode);
}

static void all_modes(MPI_Win win, MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Win_fence(0, win));
    ops(win, 0, "fence");
    CHECK_MPI(MPI_Win_fence(0, win));

    /* an access and exposure epoch of this rank alone: the group holds only itself */
    MPI_Group world, self;
    MPI_Comm_group(comm, &world);
    MPI_Group_incl(world, 1, &rank, &self);
    CHECK_MPI(MPI_Win_post(self, 0, win));
    CHECK_MPI(MPI_Win_start(self, 0, win));
    ops(win, 0, "post-start");
    CHECK_MPI(MPI_Win_complete(win));
    CHECK_MPI(MPI_Win_wait(win));
    MPI_Group_free(&self);
    MPI_Group_free(&world);

    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, win));
    ops(win, 1, "lock on MPI_PROC_NULL");
    CHECK_MPI(MPI_Win_flush(MPI_PROC_NULL, win));
    CHECK_MPI(MPI_Win_flush_local(MPI_PROC_NULL, win));
    CHECK_MPI(MPI_Win_unlock(MPI_PROC_NULL, win));

    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    ops(win, 1, "lock on self");
    CHECK_MPI(MPI_Win_unlock(rank, win));

    CHECK_MPI(MPI_Win_lock_all(0, win));
    ops(win, 1, "lock_all");
    CHECK_MPI(MPI_Win_flush_all(win));
    ops(win, 1, "lock_all after flush_all");
    CHECK_MPI(MPI_Win_flush_local_all(win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(comm);
    check_untouched("after the epochs");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int i = 0; i < N; i++) {
        win_buf[i] = -1;
        origin[i] = i + 1;
        result[i] = -7;
        compare[i] = -1;
    }
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    all_modes(win, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_free(&win));

    int *base;
    CHECK_MPI(
        MPI_Win_allocate(sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    all_modes(win, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_free(&win));

    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_attach(win, win_buf, sizeof win_buf));
    all_modes(win, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_detach(win, win_buf));
    CHECK_MPI(MPI_Win_free(&win));

    MPI_Finalize();
    printf("OK\n");
    return 0;
}
