/* task_farm.c — an application-style MPI_THREAD_MULTIPLE program: every rank runs NT worker
 * threads that ask rank 0 for tasks, compute and send results back, while a dispatcher thread
 * of rank 0 serves requests and results with MPI_ANY_SOURCE / MPI_ANY_TAG receives.  Each
 * worker thread first duplicates its own communicator with MPI_Comm_idup (dups started from
 * several threads at once) and at the end takes part in an Allreduce over it (collectives on
 * distinct communicators at once).  Every task must be done exactly once. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

#define NT 3         /* worker threads per rank */
#define NTASKS 600   /* tasks in all */
#define TAG_REQ 1    /* worker -> dispatcher: {rank, thread} */
#define TAG_RES 2    /* worker -> dispatcher: {task, result} */
#define TAG_WORK 100 /* dispatcher -> worker thread t: TAG_WORK + t, a task or -1 (stop) */

static int rank, size;
static MPI_Comm tcomm[NT];    /* per thread: its dup'd communicator */
static MPI_Comm ctl;          /* requests and results (the dispatcher's wildcards) */
static _Atomic int done_here; /* tasks this rank's threads did */

static long work(int task)
{
    long v = task;
    for (int i = 0; i < 50; i++)
        v = (v * 1103515245 + 12345) % 2147483648L;
    return v;
}

static void *worker(void *arg)
{
    const int t = (int)(long)arg;
    MPI_Comm mine;
    MPI_Request r;
    CHECK_MPI(MPI_Comm_idup(tcomm[t], &mine, &r));
    int mydone = 0;
    for (;;) {
        int req[2] = {rank, t}, task;
        CHECK_MPI(MPI_Send(req, 2, MPI_INT, 0, TAG_REQ, ctl));
        CHECK_MPI(MPI_Recv(&task, 1, MPI_INT, 0, TAG_WORK + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (task < 0) break;
        long res[2] = {task, work(task)};
        CHECK_MPI(MPI_Send(res, 2, MPI_LONG, 0, TAG_RES, ctl));
        mydone++;
    }
    atomic_fetch_add(&done_here, mydone);
    /* the dup completes whenever; then the threads' collectives run side by side */
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int total = -1;
    CHECK_MPI(MPI_Allreduce(&mydone, &total, 1, MPI_INT, MPI_SUM, mine));
    CHECK(total >= 0 && total <= NTASKS, "thread %d: Allreduce over its dup gave %d", t, total);
    int n = 0;
    CHECK_MPI(MPI_Comm_size(mine, &n));
    CHECK(n == size, "thread %d: dup of size %d", t, n);
    CHECK_MPI(MPI_Comm_free(&mine));
    return NULL;
}

/* Rank 0: hands out tasks 0..NTASKS-1, checks each result, stops every worker. */
static void *dispatcher(void *arg)
{
    (void)arg;
    static unsigned char seen[NTASKS];
    int next = 0, results = 0, stopped = 0;
    while (results < NTASKS || stopped < size * NT) {
        MPI_Status st;
        long buf[2];
        CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, ctl, &st));
        if (st.MPI_TAG == TAG_RES) {
            CHECK_MPI(MPI_Recv(buf, 2, MPI_LONG, st.MPI_SOURCE, TAG_RES, ctl, MPI_STATUS_IGNORE));
            int task = (int)buf[0];
            CHECK(task >= 0 && task < NTASKS && !seen[task], "result for task %d (seen %d)", task,
                  task >= 0 && task < NTASKS ? seen[task] : -1);
            CHECK(buf[1] == work(task), "task %d: result %ld, expected %ld", task, buf[1],
                  work(task));
            seen[task] = 1;
            results++;
            continue;
        }
        CHECK(st.MPI_TAG == TAG_REQ, "unexpected tag %d from %d", st.MPI_TAG, st.MPI_SOURCE);
        int req[2];
        CHECK_MPI(MPI_Recv(req, 2, MPI_INT, st.MPI_SOURCE, TAG_REQ, ctl, MPI_STATUS_IGNORE));
        CHECK(req[0] == st.MPI_SOURCE && req[1] >= 0 && req[1] < NT, "request %d/%d from %d",
              req[0], req[1], st.MPI_SOURCE);
        int task = next < NTASKS ? next++ : -1;
        if (task < 0) stopped++;
        CHECK_MPI(MPI_Send(&task, 1, MPI_INT, req[0], TAG_WORK + req[1], MPI_COMM_WORLD));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int t = 0; t < NT; t++)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &ctl));
    pthread_t th[NT], disp;
    if (rank == 0) CHECK(!pthread_create(&disp, NULL, dispatcher, NULL), "pthread_create");
    for (int t = 0; t < NT; t++)
        CHECK(!pthread_create(&th[t], NULL, worker, (void *)(long)t), "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    if (rank == 0) pthread_join(disp, NULL);
    int mine = atomic_load(&done_here), all = -1;
    CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(all == NTASKS, "%d tasks done, expected %d", all, NTASKS);
    for (int t = 0; t < NT; t++)
        CHECK_MPI(MPI_Comm_free(&tcomm[t]));
    CHECK_MPI(MPI_Comm_free(&ctl));
    return finish_ok();
}
