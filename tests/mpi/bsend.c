/* bsend.c — buffered mode to the letter: Bsend/Ibsend/Bsend_init use the attached buffer, each
 * message taking its size plus MPI_BSEND_OVERHEAD until it has left; MPI_ERR_BUFFER without a
 * buffer or when it does not fit; Buffer_detach blocks until the buffered messages left. */
#include <string.h>
#include <time.h>

#include "check.h"

#define N 1000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int one_node;
    {
        MPI_Comm shm;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
        int n;
        MPI_Comm_size(shm, &n);
        one_node = n == size;
        MPI_Comm_free(&shm);
    }
    int msg[N], in[N];
    for (int i = 0; i < N; i++)
        msg[i] = rank * N + i;
    int per = (int)sizeof msg + MPI_BSEND_OVERHEAD;

    /* no buffer attached */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e = MPI_Bsend(msg, N, MPI_INT, right, 1, MPI_COMM_WORLD);
    CHECK(e == MPI_ERR_BUFFER, "Bsend without a buffer: expected MPI_ERR_BUFFER got %d", e);
    /* PROC_NULL needs no room */
    CHECK_MPI(MPI_Bsend(msg, N, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));

    /* room for two messages, one byte short of a third; the overhead counts */
    int bsize = 2 * per + per - 1;
    char *buf = malloc((size_t)bsize);
    CHECK_MPI(MPI_Buffer_attach(buf, bsize));
    e = MPI_Buffer_attach(buf, bsize);
    CHECK(e == MPI_ERR_BUFFER, "second Buffer_attach: expected MPI_ERR_BUFFER got %d", e);
    CHECK_MPI(MPI_Bsend(msg, N, MPI_INT, right, 2, MPI_COMM_WORLD));
    MPI_Request r;
    CHECK_MPI(MPI_Ibsend(msg, N, MPI_INT, right, 3, MPI_COMM_WORLD, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE)); /* complete: the data is buffered */
    msg[0] = -5;                                /* the buffered copies keep what was sent */
    /* across nodes a message leaves the buffer when it is handed over: nothing to check */
    if (one_node) {
        e = MPI_Bsend(msg, N, MPI_INT, right, 4, MPI_COMM_WORLD);
        CHECK(e == MPI_ERR_BUFFER, "third Bsend: expected MPI_ERR_BUFFER got %d", e);
        e = MPI_Ibsend(msg, N, MPI_INT, right, 4, MPI_COMM_WORLD, &r);
        CHECK(e == MPI_ERR_BUFFER, "Ibsend that does not fit: expected MPI_ERR_BUFFER got %d", e);
        CHECK_MPI(MPI_Bsend(msg, 1, MPI_INT, right, 5, MPI_COMM_WORLD)); /* a small one fits */
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* nobody receives before everybody checked */
    MPI_Status st;
    CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 2, MPI_COMM_WORLD, &st));
    CHECK(in[0] == left * N && in[N - 1] == left * N + N - 1, "Bsend data: %d %d", in[0],
          in[N - 1]);
    CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 3, MPI_COMM_WORLD, &st));
    CHECK(in[0] == left * N, "Ibsend data: %d", in[0]);
    if (one_node) CHECK_MPI(MPI_Recv(in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &st));
    msg[0] = rank * N;

    /* detach waits for what is still buffered: rank 0's message to rank 1 is received only
     * after rank 1 slept */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (size > 1 && one_node && rank < 2) {
        if (rank == 0) {
            CHECK_MPI(MPI_Bsend(msg, N, MPI_INT, 1, 6, MPI_COMM_WORLD));
            double t0 = now();
            void *b;
            int bs;
            CHECK_MPI(MPI_Buffer_detach(&b, &bs));
            double waited = now() - t0;
            CHECK(b == buf && bs == bsize, "Buffer_detach: %p %d", b, bs);
            CHECK(waited > 0.15, "Buffer_detach returned after %.3f s, before the message left",
                  waited);
            CHECK_MPI(MPI_Buffer_attach(buf, bsize));
        } else {
            struct timespec ts = {0, 300 * 1000 * 1000};
            nanosleep(&ts, NULL);
            CHECK_MPI(MPI_Recv(in, N, MPI_INT, 0, 6, MPI_COMM_WORLD, &st));
        }
    }

    /* Bsend_init: each start takes room again, given back as the messages are received */
    MPI_Request pr;
    CHECK_MPI(MPI_Bsend_init(msg, N, MPI_INT, right, 7, MPI_COMM_WORLD, &pr));
    for (int k = 0; k < 5; k++) {
        CHECK_MPI(MPI_Start(&pr));
        CHECK_MPI(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 7, MPI_COMM_WORLD, &st));
        CHECK(in[5] == left * N + 5, "Bsend_init round %d: %d", k, in[5]);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* this round's message left every buffer */
    }
    CHECK_MPI(MPI_Request_free(&pr));
    void *b;
    int bs;
    CHECK_MPI(MPI_Buffer_detach(&b, &bs));
    CHECK(b == buf && bs == bsize, "final Buffer_detach: %p %d", b, bs);
    e = MPI_Bsend(msg, N, MPI_INT, right, 8, MPI_COMM_WORLD);
    CHECK(e == MPI_ERR_BUFFER, "Bsend after detach: expected MPI_ERR_BUFFER got %d", e);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(buf);
    return finish_ok();
}
