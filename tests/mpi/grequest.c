/* grequest.c — generalized requests (query/free/cancel callbacks called as MPI 3.1 §12.2
 * says, completion from another thread), Request_get_status, Status_set_elements/_cancelled,
 * and MPI_Cancel of a send whose message has not been matched. */
#include <pthread.h>
#include <string.h>

#include "check.h"

struct gstate {
    int queries, frees, cancels, last_complete;
    int value;
};

static int query_fn(void *extra, MPI_Status *st)
{
    struct gstate *g = extra;
    g->queries++;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    ((struct gstate *)extra)->frees++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    struct gstate *g = extra;
    g->cancels++;
    g->last_complete = complete;
    return MPI_SUCCESS;
}

static void *completer(void *arg)
{
    MPI_Request r = *(MPI_Request *)arg;
    MPI_Grequest_complete(r);
    return NULL;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Wait: query then free, once each; completed by another thread. */
    struct gstate g = {0};
    MPI_Request r;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    int flag = 1;
    MPI_Status st;
    CHECK_MPI(MPI_Test(&r, &flag, &st));
    CHECK(!flag && g.queries == 0, "Test of a pending grequest: flag %d queries %d", flag,
          g.queries);
    CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
    CHECK(!flag, "Request_get_status of a pending grequest: flag %d", flag);
    CHECK_MPI(MPI_Cancel(&r));
    CHECK(g.cancels == 1 && g.last_complete == 0, "cancel_fn: %d calls, complete %d", g.cancels,
          g.last_complete);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, completer, &r) == 0, "pthread_create");
    CHECK_MPI(MPI_Wait(&r, &st));
    pthread_join(t, NULL);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(r == MPI_REQUEST_NULL && g.queries == 1 && g.frees == 1 && count == 3,
          "Wait: request %p queries %d frees %d count %d", (void *)r, g.queries, g.frees, count);
    int canc = 1;
    MPI_Test_cancelled(&st, &canc);
    CHECK(!canc, "Test_cancelled: %d", canc);

    /* Request_get_status on a complete one queries without freeing; Request_free before
     * completion: free_fn runs at Grequest_complete, query_fn never. */
    struct gstate h = {0};
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &h, &r));
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag && h.queries == 1 && h.frees == 0, "get_status: flag %d queries %d frees %d", flag,
          h.queries, h.frees);
    CHECK_MPI(MPI_Cancel(&r));
    CHECK(h.cancels == 1 && h.last_complete == 1, "cancel after complete: complete %d",
          h.last_complete);
    CHECK_MPI(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && h.queries == 2 && h.frees == 1 && r == MPI_REQUEST_NULL,
          "Test: flag %d queries %d frees %d", flag, h.queries, h.frees);
    struct gstate k = {0};
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &k, &r));
    MPI_Request keep = r;
    CHECK_MPI(MPI_Request_free(&r));
    CHECK(k.frees == 0, "free_fn ran before completion");
    CHECK_MPI(MPI_Grequest_complete(keep));
    CHECK(k.frees == 1 && k.queries == 0, "after complete: frees %d queries %d", k.frees,
          k.queries);

    /* Waitall mixing a grequest and a receive */
    struct gstate m = {0};
    MPI_Request two[2];
    int v = rank, w = -1;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &m, &two[0]));
    CHECK_MPI(MPI_Irecv(&w, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &two[1]));
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, right, 3, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Grequest_complete(two[0]));
    CHECK_MPI(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
    CHECK(w == left && m.frees == 1, "Waitall: w %d frees %d", w, m.frees);

    /* Cancel of a send nobody receives: intra-node it is taken back; across nodes it may
     * not be (MPI lets the cancel fail): either way the receiver sees exactly what was not
     * cancelled.  A large send whose cancel failed completes only once received, so across
     * nodes only the small (eager) one is tried here. */
    int one_node = 0;
    {
        MPI_Comm shm;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
        int n;
        MPI_Comm_size(shm, &n);
        one_node = n == size;
        MPI_Comm_free(&shm);
    }
    int big_n = 50000;
    int *big = calloc((size_t)big_n, sizeof(int));
    MPI_Request sr[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, right, 77, MPI_COMM_WORLD, &sr[0]));
    if (one_node) CHECK_MPI(MPI_Isend(big, big_n, MPI_INT, right, 78, MPI_COMM_WORLD, &sr[1]));
    CHECK_MPI(MPI_Cancel(&sr[0]));
    if (one_node) CHECK_MPI(MPI_Cancel(&sr[1]));
    MPI_Status sst[2];
    CHECK_MPI(MPI_Waitall(2, sr, sst));
    int c0, c1 = 1;
    MPI_Test_cancelled(&sst[0], &c0);
    if (one_node) MPI_Test_cancelled(&sst[1], &c1);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int flags[2];
    int exp[2] = {!c0, !c1};
    int recvd[2] = {0, 0};
    MPI_Sendrecv(exp, 2, MPI_INT, right, 79, recvd, 2, MPI_INT, left, 79, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 2; i++) {
        if (recvd[i]) {
            CHECK_MPI(MPI_Probe(left, 77 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_MPI(
                MPI_Recv(big, big_n, MPI_INT, left, 77 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        CHECK_MPI(MPI_Iprobe(left, 77 + i, MPI_COMM_WORLD, &flags[i], MPI_STATUS_IGNORE));
        CHECK(!flags[i], "message %d: present after cancel %s", i,
              recvd[i] ? "failed and it was received" : "succeeded");
    }
    /* On one node an unmatched message is always taken back. */
    if (one_node) CHECK(c0 && c1, "intra-node cancel of unmatched sends: %d %d", c0, c1);
    free(big);

    /* Status setters: errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e = MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1);
    CHECK(e == MPI_ERR_TYPE, "Status_set_elements(NULL type): %d", e);
    e = MPI_Grequest_start(NULL, free_fn, cancel_fn, &g, &r);
    CHECK(e == MPI_ERR_ARG, "Grequest_start(NULL query): %d", e);
    MPI_Count cx = 5;
    CHECK_MPI(MPI_Status_set_elements_x(&st, MPI_DOUBLE, cx));
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 5, "set_elements_x then Get_count: %d", count);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish_ok();
}
