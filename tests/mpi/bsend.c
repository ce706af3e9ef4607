/* bsend.c — buffered mode to the letter: Bsend/Ibsend/Bsend_init use the attached buffer, each
 * message taking its size plus MPI_BSEND_OVERHEAD until it has left; MPI_ERR_BUFFER without a
 * buffer or when it does not fit; Buffer_detach blocks until the buffered messages left.
 * MPI 4.1: a communicator's buffer, else its session's, else the rank's; MPI_BUFFER_AUTOMATIC;
 * the flush calls, the non-blocking ones completing once the messages have left. */
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

/* MPI 4.1 §3.6: buffers per communicator and per session, automatic buffers, flushes. */
static void buffers_41(int rank, int size, int one_node)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int msg[N], in[N], e, bs;
    void *b;
    for (int i = 0; i < N; i++)
        msg[i] = rank * N + i;
    int per = (int)sizeof msg + MPI_BSEND_OVERHEAD;
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);

    /* the rank's buffer is the rank's own: rank 0's automatic one is not rank 1's */
    if (rank == 0) CHECK_MPI(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        e = MPI_Bsend(msg, N, MPI_INT, 0, 20, c);
        CHECK(e == MPI_ERR_BUFFER, "rank 1 used rank 0's buffer: %d", e);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank != 0) CHECK_MPI(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));

    /* automatic: as many messages as the program sends, none received yet */
    for (int k = 0; k < 4; k++)
        CHECK_MPI(MPI_Bsend(msg, N, MPI_INT, right, 21, c));
    for (int k = 0; k < 4; k++)
        CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 21, c, MPI_STATUS_IGNORE));
    CHECK(in[3] == left * N + 3, "automatic buffer: data %d", in[3]);

    /* the communicator's buffer comes first: one too small fails, the rank's is not used */
    char *small = malloc((size_t)per);
    CHECK_MPI(MPI_Comm_attach_buffer(c, small, per - 1));
    e = MPI_Comm_attach_buffer(c, small, per - 1);
    CHECK(e == MPI_ERR_BUFFER, "second Comm_attach_buffer: expected MPI_ERR_BUFFER got %d", e);
    e = MPI_Bsend(msg, N, MPI_INT, right, 22, c);
    CHECK(e == MPI_ERR_BUFFER, "Bsend beyond the communicator's buffer: %d", e);
    CHECK_MPI(MPI_Bsend(msg, N, MPI_INT, right, 22, MPI_COMM_WORLD)); /* the rank's: automatic */
    CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Comm_detach_buffer(c, &b, &bs));
    CHECK(b == small && bs == per - 1, "Comm_detach_buffer: %p %d", b, bs);
    e = MPI_Comm_detach_buffer(c, &b, &bs);
    CHECK(e == MPI_ERR_BUFFER, "Comm_detach_buffer without a buffer: %d", e);
    free(small);

    /* Comm_iflush_buffer completes once the communicator's messages have left */
    CHECK_MPI(MPI_Comm_attach_buffer_c(c, MPI_BUFFER_AUTOMATIC, 0));
    MPI_Request fr;
    int flag = 0;
    if (size > 1 && rank < 2) {
        if (rank == 0) {
            CHECK_MPI(MPI_Bsend(msg, N, MPI_INT, 1, 23, c));
            CHECK_MPI(MPI_Comm_iflush_buffer(c, &fr));
            CHECK_MPI(MPI_Test(&fr, &flag, MPI_STATUS_IGNORE));
            /* across nodes the message left when the network took its copy */
            CHECK(!one_node || !flag, "Comm_iflush_buffer complete before the receive");
        }
        CHECK_MPI(MPI_Barrier(c));
        if (rank == 1) CHECK_MPI(MPI_Recv(in, N, MPI_INT, 0, 23, c, MPI_STATUS_IGNORE));
        if (rank == 0 && !flag) CHECK_MPI(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Barrier(c));
    }
    CHECK_MPI(MPI_Comm_flush_buffer(c));
    CHECK_MPI(MPI_Comm_iflush_buffer(c, &fr)); /* nothing buffered: complete at once */
    CHECK_MPI(MPI_Test(&fr, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "Comm_iflush_buffer with nothing buffered is not complete");
    MPI_Count cs;
    CHECK_MPI(MPI_Comm_detach_buffer_c(c, &b, &cs));
    CHECK(b == MPI_BUFFER_AUTOMATIC && cs == 0, "detach of an automatic buffer: %p %lld", b,
          (long long)cs);
    CHECK_MPI(MPI_Comm_free(&c));

    /* the rank's: flush, iflush, detach of an automatic buffer */
    CHECK_MPI(MPI_Buffer_flush());
    CHECK_MPI(MPI_Buffer_iflush(&fr));
    CHECK_MPI(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Buffer_detach(&b, &bs));
    CHECK(b == MPI_BUFFER_AUTOMATIC && bs == 0, "Buffer_detach of an automatic buffer: %p %d", b,
          bs);

    /* a session's buffer serves the communicators made from its groups, and their dups */
    MPI_Session ses;
    CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ses));
    MPI_Group g;
    CHECK_MPI(MPI_Group_from_session_pset(ses, "mpi://WORLD", &g));
    MPI_Comm sc, sd;
    CHECK_MPI(
        MPI_Comm_create_from_group(g, "org.tmpi.bsend", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
    CHECK_MPI(MPI_Group_free(&g));
    CHECK_MPI(MPI_Comm_dup(sc, &sd));
    e = MPI_Bsend(msg, N, MPI_INT, right, 24, sc);
    CHECK(e == MPI_ERR_BUFFER, "Bsend on a session's communicator without any buffer: %d", e);
    char *sbuf = malloc((size_t)(2 * per));
    CHECK_MPI(MPI_Session_attach_buffer(ses, sbuf, 2 * per));
    e = MPI_Session_attach_buffer(ses, sbuf, 2 * per);
    CHECK(e == MPI_ERR_BUFFER, "second Session_attach_buffer: %d", e);
    CHECK_MPI(MPI_Bsend(msg, N, MPI_INT, right, 24, sc));
    CHECK_MPI(MPI_Bsend(msg, N, MPI_INT, right, 25, sd));
    e = MPI_Bsend(msg, N, MPI_INT, right, 26, MPI_COMM_WORLD);
    CHECK(e == MPI_ERR_BUFFER, "the session's buffer served MPI_COMM_WORLD: %d", e);
    CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 24, sc, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Recv(in, N, MPI_INT, left, 25, sd, MPI_STATUS_IGNORE));
    CHECK(in[7] == left * N + 7, "session buffer: data %d", in[7]);
    CHECK_MPI(MPI_Session_flush_buffer(ses));
    CHECK_MPI(MPI_Session_iflush_buffer(ses, &fr));
    CHECK_MPI(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Session_detach_buffer(ses, &b, &bs));
    CHECK(b == sbuf && bs == 2 * per, "Session_detach_buffer: %p %d", b, bs);
    e = MPI_Session_detach_buffer(ses, &b, &bs);
    CHECK(e == MPI_ERR_BUFFER, "Session_detach_buffer without a buffer: %d", e);
    e = MPI_Session_attach_buffer(ses, NULL, 10);
    CHECK(e == MPI_ERR_ARG, "Session_attach_buffer(NULL, 10): %d", e);
    e = MPI_Comm_attach_buffer(MPI_COMM_NULL, sbuf, 10);
    CHECK(e == MPI_ERR_COMM, "Comm_attach_buffer(MPI_COMM_NULL): %d", e);
    free(sbuf);
    CHECK_MPI(MPI_Comm_free(&sd));
    CHECK_MPI(MPI_Comm_free(&sc));
    CHECK_MPI(MPI_Session_finalize(&ses));
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
    free(buf);
    buffers_41(rank, size, one_node);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish_ok();
}
