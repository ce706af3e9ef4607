/* rma_errors.c — every misuse of the one-sided calls returns its error class under
 * MPI_ERRORS_RETURN and leaves the window usable: operations outside an epoch or outside the
 * window, unmatched unlocks and flushes, bad arguments, wrong window flavors; an access to an
 * unattached address of a dynamic window on another node comes back at the flush. */
#include <stdint.h>
#include <string.h>

#include "check.h"

static int cls(int err)
{
    int c = -1;
    MPI_Error_class(err, &c);
    return c;
}

#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(cls(e_) == (want), "%s: expected %s, got class %d", #call, #want, cls(e_));          \
    } while (0)

static int eh_calls, eh_code;
static MPI_Win eh_win;

static void count_errors(MPI_Win *win, int *code, ...)
{
    eh_calls++;
    eh_code = *code;
    eh_win = *win;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int right = (rank + 1) % size;

    int buf[16] = {0}, x = 1, y = 0;
    MPI_Win win;
    EXPECT(MPI_Win_create(buf, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
    EXPECT(MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
    EXPECT(MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_NULL, &win), MPI_ERR_COMM);
    EXPECT(MPI_Put(&x, 1, MPI_INT, right, 0, 1, MPI_INT, 12345), MPI_ERR_WIN);
    CHECK_MPI(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "a new window's handler is %d", eh);
    /* A user handler sees the window and the code; Win_call_errhandler calls it too. */
    MPI_Errhandler mine_eh;
    CHECK_MPI(MPI_Win_create_errhandler(count_errors, &mine_eh));
    CHECK_MPI(MPI_Win_set_errhandler(win, mine_eh));
    CHECK_MPI(MPI_Errhandler_free(&mine_eh));
    MPI_Put(&x, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    CHECK(eh_calls == 1 && cls(eh_code) == MPI_ERR_RMA_SYNC && eh_win == win,
          "user handler: %d calls, class %d", eh_calls, cls(eh_code));
    CHECK_MPI(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(eh_calls == 2 && eh_code == MPI_ERR_OTHER, "call_errhandler: %d calls, code %d", eh_calls,
          eh_code);
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    /* No epoch. */
    EXPECT(MPI_Put(&x, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Get(&y, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Accumulate(&x, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush_local(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    int flag;
    EXPECT(MPI_Win_test(win, &flag), MPI_ERR_RMA_SYNC);
    MPI_Group wg;
    CHECK_MPI(MPI_Win_get_group(win, &wg));
    EXPECT(MPI_Win_post(wg, MPI_MODE_NOSUCCEED, win), MPI_ERR_ASSERT);
    EXPECT(MPI_Win_start(MPI_GROUP_NULL, 0, win), MPI_ERR_GROUP);
    MPI_Group_free(&wg);

    /* Bad arguments inside a passive epoch. */
    EXPECT(MPI_Win_lock(99, right, 0, win), MPI_ERR_LOCKTYPE);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOPUT, win), MPI_ERR_ASSERT);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Put(&x, 1, MPI_INT, right, 16, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(buf, 2, MPI_INT, right, 15, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Get(&y, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP);
    EXPECT(MPI_Put(&x, -1, MPI_INT, right, 0, -1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT(MPI_Put(&x, 1, 9999, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    EXPECT(MPI_Put(&x, 1, MPI_INT, right, 0, 1, MPI_DOUBLE, win), MPI_ERR_TYPE);
    EXPECT(MPI_Put(&x, 1, MPI_INT, size + 3, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Accumulate(&x, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, win), MPI_ERR_OP);
    EXPECT(MPI_Accumulate(&x, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
    double d = 1, dc = 0, dr;
    EXPECT(MPI_Accumulate(&d, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND, win), MPI_ERR_OP);
    EXPECT(MPI_Compare_and_swap(&d, &dc, &dr, MPI_DOUBLE, right, 0, win), MPI_ERR_TYPE);
    MPI_Request rq;
    CHECK_MPI(MPI_Put(&x, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Rput(&x, 1, MPI_INT, right, 3, 1, MPI_INT, win, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_unlock(right, win));
    /* the window is still usable: the Rput landed */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(buf[3] == 1, "after the errors, the Rput's value: expected 1 got %d", buf[3]);

    /* Request forms outside a passive epoch; the fence epoch itself works. */
    CHECK_MPI(MPI_Win_fence(0, win));
    EXPECT(MPI_Rput(&x, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(&x, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_fence(0x40000, win), MPI_ERR_ASSERT);
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    EXPECT(MPI_Win_attach(win, buf, sizeof buf), MPI_ERR_RMA_FLAVOR);
    CHECK_MPI(MPI_Win_free(&win));

    /* Dynamic windows: overlapping attach, unknown detach, accesses outside what is
     * attached (here at once; on another node at the flush). */
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    /* the one flavor Win_shared_query refuses (MPI 4.1 §12.2.3) */
    EXPECT(MPI_Win_shared_query(win, 0, &(MPI_Aint){0}, &(int){0}, &(void *){0}),
           MPI_ERR_RMA_FLAVOR);
    CHECK_MPI(MPI_Win_attach(win, buf, sizeof buf));
    EXPECT(MPI_Win_attach(win, buf + 4, sizeof(int)), MPI_ERR_RMA_ATTACH);
    EXPECT(MPI_Win_detach(win, buf + 1), MPI_ERR_RMA_ATTACH);
    MPI_Aint mine = (MPI_Aint)(uintptr_t)buf, *addrs = malloc(sizeof *addrs * size);
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    int e = MPI_Put(&x, 1, MPI_INT, right, addrs[right] + sizeof buf, 1, MPI_INT, win);
    if (e == MPI_SUCCESS) e = MPI_Win_flush(right, win);
    CHECK(cls(e) == MPI_ERR_RMA_RANGE, "put past the attached region: class %d", cls(e));
    CHECK_MPI(MPI_Put(&x, 1, MPI_INT, right, addrs[right] + 4, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(buf[1] == 1, "dynamic window still usable: expected 1 got %d", buf[1]);
    CHECK_MPI(MPI_Win_detach(win, buf));
    CHECK_MPI(MPI_Win_free(&win));
    free(addrs);

    /* Win_allocate_shared needs ranks that share memory. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    int nmin;
    MPI_Allreduce(&nsize, &nmin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (nmin < size) { /* several nodes: every rank sees it */
        void *p;
        EXPECT(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win),
               MPI_ERR_RMA_SHARED);
    }
    return finish_ok();
}
