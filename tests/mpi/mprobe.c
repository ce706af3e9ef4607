/* mprobe.c — matched probe: Mprobe/Improbe take a message out of matching so no other receive
 * or probe gets it, Mrecv/Imrecv receive it (small and large: eager, rendezvous,
 * three-phase), wildcard probes racing with receives, MPI_MESSAGE_NO_PROC for MPI_PROC_NULL. */
#include <string.h>

#include "check.h"

#define N 40
#define BIG 70000

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Every rank sends N messages to its right, alternating small and large; the receiver
     * takes them with Mprobe on MPI_ANY_SOURCE/ANY_TAG while an Irecv on the same tags is
     * posted for the last one only: matched probe must never hand a message twice. */
    int *big = malloc(BIG * sizeof(int)), *in = malloc(BIG * sizeof(int));
    MPI_Request sreq[N];
    int small[N];
    int *bigs[N] = {0}; /* a buffer per large send: a rendezvous reads it until matched */
    for (int i = 0; i < N; i++) {
        small[i] = rank * 100 + i;
        if (i % 4 == 3) {
            bigs[i] = malloc(BIG * sizeof(int));
            for (int k = 0; k < BIG; k += 1000)
                bigs[i][k] = rank + i;
            CHECK_MPI(MPI_Isend(bigs[i], BIG, MPI_INT, right, i, MPI_COMM_WORLD, &sreq[i]));
        } else {
            CHECK_MPI(MPI_Isend(&small[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &sreq[i]));
        }
    }
    for (int i = 0; i < N; i++) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        if (i % 2) {
            int flag = 0;
            while (!flag)
                CHECK_MPI(
                    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
        } else {
            CHECK_MPI(MPI_Mprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
        }
        CHECK(msg != MPI_MESSAGE_NULL, "message %d: MPI_MESSAGE_NULL", i);
        /* the message is gone from matching: a probe for exactly it finds nothing now */
        int again = 1;
        CHECK_MPI(MPI_Iprobe(left, st.MPI_TAG, MPI_COMM_WORLD, &again, MPI_STATUS_IGNORE));
        CHECK(!again, "message tag %d still matchable after Mprobe", st.MPI_TAG);
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == i,
              "message %d: source %d (expected %d) tag %d (in order)", i, st.MPI_SOURCE, left,
              st.MPI_TAG);
        int count;
        MPI_Get_count(&st, MPI_INT, &count);
        MPI_Status rst;
        if (i % 3 == 0) {
            MPI_Request r;
            CHECK_MPI(MPI_Imrecv(in, BIG, MPI_INT, &msg, &r));
            CHECK(msg == MPI_MESSAGE_NULL, "Imrecv did not null the message");
            CHECK_MPI(MPI_Wait(&r, &rst));
        } else {
            CHECK_MPI(MPI_Mrecv(in, BIG, MPI_INT, &msg, &rst));
            CHECK(msg == MPI_MESSAGE_NULL, "Mrecv did not null the message");
        }
        int rcount;
        MPI_Get_count(&rst, MPI_INT, &rcount);
        CHECK(rcount == count && rst.MPI_SOURCE == left && rst.MPI_TAG == i,
              "Mrecv %d: count %d (probe said %d) source %d tag %d", i, rcount, count,
              rst.MPI_SOURCE, rst.MPI_TAG);
        if (i % 4 == 3)
            CHECK(count == BIG && in[0] == left + i && in[BIG - 1000] == left + i,
                  "large message %d: count %d data %d", i, count, in[0]);
        else
            CHECK(count == 1 && in[0] == left * 100 + i, "small message %d: %d", i, in[0]);
    }
    CHECK_MPI(MPI_Waitall(N, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++)
        free(bigs[i]);

    /* Racing: a receive posted with ANY_SOURCE and a matched probe want the same kind of
     * message; each of two messages goes to exactly one of them. */
    int v = rank, got_r = -1;
    MPI_Request rr;
    CHECK_MPI(MPI_Irecv(&got_r, 1, MPI_INT, MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &rr));
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, right, 50, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, right, 50, MPI_COMM_WORLD));
    MPI_Message msg;
    MPI_Status st;
    CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &msg, &st));
    int got_m = -1;
    CHECK_MPI(MPI_Mrecv(&got_m, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    CHECK(got_r == left && got_m == left, "race: receive got %d, mrecv got %d", got_r, got_m);
    int extra = 1;
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &extra, MPI_STATUS_IGNORE));
    CHECK(!extra, "a third message appeared");

    /* Zero-count message through matched probe. */
    CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, right, 51, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Mprobe(left, 51, MPI_COMM_WORLD, &msg, &st));
    int c = -1;
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(c == 0, "zero-count mprobe: count %d", c);
    CHECK_MPI(MPI_Mrecv(NULL, 0, MPI_INT, &msg, &st));

    /* MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, then a receive of nothing. */
    CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL,
          "Mprobe(PROC_NULL): message %p source %d", (void *)msg, st.MPI_SOURCE);
    int flag = 0;
    CHECK_MPI(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL): flag %d", flag);
    in[0] = 42;
    CHECK_MPI(MPI_Mrecv(in, 1, MPI_INT, &msg, &st));
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG &&
              c == 0 && in[0] == 42,
          "Mrecv(NO_PROC): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, c);
    msg = MPI_MESSAGE_NO_PROC;
    MPI_Request r;
    CHECK_MPI(MPI_Imrecv(in, 1, MPI_INT, &msg, &r));
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Imrecv(NO_PROC): source %d", st.MPI_SOURCE);

    /* Improbe with nothing there; error classes. */
    CHECK_MPI(MPI_Improbe(left, 999, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(!flag && msg == MPI_MESSAGE_NULL, "Improbe found a message that was never sent");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    msg = MPI_MESSAGE_NULL;
    int e = MPI_Mrecv(in, 1, MPI_INT, &msg, &st);
    CHECK(e == MPI_ERR_REQUEST, "Mrecv(MPI_MESSAGE_NULL): expected MPI_ERR_REQUEST got %d", e);
    e = MPI_Mprobe(size, 0, MPI_COMM_WORLD, &msg, &st);
    CHECK(e == MPI_ERR_RANK, "Mprobe(rank %d): expected MPI_ERR_RANK got %d", size, e);
    /* truncation through Mrecv */
    int two[2] = {1, 2};
    CHECK_MPI(MPI_Send(two, 2, MPI_INT, right, 52, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Mprobe(left, 52, MPI_COMM_WORLD, &msg, &st));
    e = MPI_Mrecv(in, 1, MPI_INT, &msg, &st);
    CHECK(e == MPI_ERR_TRUNCATE, "Mrecv of 2 ints into 1: expected MPI_ERR_TRUNCATE got %d", e);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(big);
    free(in);
    return finish_ok();
}
