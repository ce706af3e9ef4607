/* persistent.c — persistent requests (Send/Ssend/Rsend/Bsend/Recv_init, Start, Startall,
 * Request_free on active and inactive requests), inactive-request semantics of Wait/Test and
 * their any/some/all forms, Request_get_status, Isendrecv and Isendrecv_replace, with
 * MPI_PROC_NULL and zero-count messages. */
#include <string.h>

#include "check.h"

#define ROUNDS 20
#define BIG 100000 /* above the eager limits: rendezvous / three-phase */

static void check_empty(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: expected empty status, got source %d tag %d count %d", what, st->MPI_SOURCE,
          st->MPI_TAG, count);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* A ring of persistent sends and receives, restarted every round, each mode. */
    int out[4], in[4];
    MPI_Request req[8];
    CHECK_MPI(MPI_Recv_init(&in[0], 1, MPI_INT, left, 1, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Recv_init(&in[1], 1, MPI_INT, left, 2, MPI_COMM_WORLD, &req[1]));
    CHECK_MPI(MPI_Recv_init(&in[2], 1, MPI_INT, left, 3, MPI_COMM_WORLD, &req[2]));
    CHECK_MPI(MPI_Recv_init(&in[3], 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &req[3]));
    CHECK_MPI(MPI_Send_init(&out[0], 1, MPI_INT, right, 1, MPI_COMM_WORLD, &req[4]));
    CHECK_MPI(MPI_Ssend_init(&out[1], 1, MPI_INT, right, 2, MPI_COMM_WORLD, &req[5]));
    CHECK_MPI(MPI_Rsend_init(&out[2], 1, MPI_INT, right, 3, MPI_COMM_WORLD, &req[6]));
    int bsize = 4 * ((int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    CHECK_MPI(MPI_Buffer_attach(bbuf, bsize));
    CHECK_MPI(MPI_Bsend_init(&out[3], 1, MPI_INT, right, 4, MPI_COMM_WORLD, &req[7]));

    /* inactive: Wait/Test return at once with an empty status, the handle stays */
    MPI_Status st;
    int flag = 0;
    CHECK_MPI(MPI_Wait(&req[0], &st));
    check_empty(&st, "Wait on an inactive request");
    CHECK(req[0] != MPI_REQUEST_NULL, "Wait freed an inactive persistent request");
    CHECK_MPI(MPI_Test(&req[4], &flag, &st));
    CHECK(flag, "Test on an inactive request: flag 0");
    check_empty(&st, "Test on an inactive request");
    int idx = 7;
    CHECK_MPI(MPI_Waitany(8, req, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany over inactive requests: index %d", idx);
    check_empty(&st, "Waitany over inactive requests");
    CHECK_MPI(MPI_Testany(8, req, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany over inactive: flag %d index %d", flag, idx);
    int outcount = 5, indices[8];
    CHECK_MPI(MPI_Waitsome(8, req, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome over inactive: outcount %d", outcount);
    CHECK_MPI(MPI_Testsome(8, req, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED, "Testsome over inactive: outcount %d", outcount);
    MPI_Status sts[8];
    CHECK_MPI(MPI_Waitall(8, req, sts));
    for (int i = 0; i < 8; i++)
        check_empty(&sts[i], "Waitall over inactive");
    CHECK_MPI(MPI_Request_get_status(req[1], &flag, &st));
    CHECK(flag, "Request_get_status of an inactive request: flag 0");

    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < 4; k++)
            out[k] = rank * 1000 + round * 10 + k, in[k] = -1;
        /* receives first (Rsend needs its receive posted: a barrier orders it) */
        CHECK_MPI(MPI_Startall(4, req));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (round % 2) {
            CHECK_MPI(MPI_Startall(4, req + 4));
        } else {
            for (int k = 4; k < 8; k++)
                CHECK_MPI(MPI_Start(&req[k]));
        }
        /* active: starting again is an error */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int err = MPI_Start(&req[0]);
        CHECK(err == MPI_ERR_REQUEST || (err == MPI_SUCCESS && 0), "Start of an active request: %d",
              err);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        if (round % 3 == 0) {
            CHECK_MPI(MPI_Waitall(8, req, sts));
        } else {
            int left_ = 8;
            while (left_ > 0) {
                CHECK_MPI(MPI_Waitsome(8, req, &outcount, indices, sts));
                CHECK(outcount != MPI_UNDEFINED && outcount > 0, "Waitsome: outcount %d", outcount);
                left_ -= outcount;
            }
            CHECK_MPI(MPI_Waitsome(8, req, &outcount, indices, sts));
            CHECK(outcount == MPI_UNDEFINED, "Waitsome after all done: %d", outcount);
        }
        for (int k = 0; k < 4; k++)
            CHECK(in[k] == left * 1000 + round * 10 + k, "round %d mode %d: expected %d got %d",
                  round, k, left * 1000 + round * 10 + k, in[k]);
        for (int k = 0; k < 8; k++)
            CHECK(req[k] != MPI_REQUEST_NULL, "completion freed persistent request %d", k);
    }
    for (int k = 0; k < 8; k++) {
        CHECK_MPI(MPI_Request_free(&req[k]));
        CHECK(req[k] == MPI_REQUEST_NULL, "Request_free did not null request %d", k);
    }
    int bs;
    void *bp;
    CHECK_MPI(MPI_Buffer_detach(&bp, &bs));
    CHECK(bp == bbuf && bs == bsize, "Buffer_detach: %p %d", bp, bs);
    free(bbuf);

    /* Large persistent messages (rendezvous intra-node, three-phase across nodes) and a
     * persistent receive freed while active: it still completes into its buffer. */
    int *big = malloc(BIG * sizeof(int)), *bigin = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        big[i] = rank + i;
    MPI_Request bs_req, br_req;
    CHECK_MPI(MPI_Send_init(big, BIG, MPI_INT, right, 9, MPI_COMM_WORLD, &bs_req));
    CHECK_MPI(MPI_Recv_init(bigin, BIG, MPI_INT, left, 9, MPI_COMM_WORLD, &br_req));
    for (int round = 0; round < 3; round++) {
        memset(bigin, 0xff, BIG * sizeof(int));
        CHECK_MPI(MPI_Start(&br_req));
        CHECK_MPI(MPI_Start(&bs_req));
        flag = 0;
        while (!flag)
            CHECK_MPI(MPI_Test(&br_req, &flag, &st));
        int count;
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == BIG && st.MPI_SOURCE == left && st.MPI_TAG == 9,
              "large persistent: count %d source %d tag %d", count, st.MPI_SOURCE, st.MPI_TAG);
        CHECK_MPI(MPI_Wait(&bs_req, MPI_STATUS_IGNORE));
        for (int i = 0; i < BIG; i += 997)
            CHECK(bigin[i] == left + i, "large persistent [%d]: %d", i, bigin[i]);
    }
    CHECK_MPI(MPI_Request_free(&bs_req));
    int late = -1, lv = rank;
    CHECK_MPI(MPI_Start(&br_req)); /* freed while active: completes on its own */
    CHECK_MPI(MPI_Request_free(&br_req));
    MPI_Request lr;
    CHECK_MPI(MPI_Recv_init(&late, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &lr));
    CHECK_MPI(MPI_Start(&lr));
    CHECK_MPI(MPI_Request_free(&lr));
    CHECK_MPI(MPI_Send(&lv, 1, MPI_INT, right, 10, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Send(big, BIG, MPI_INT, right, 9, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    while (*(volatile int *)&late == -1) { /* the freed receive completes on its own */
        int f;
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
    }
    CHECK(late == left, "freed active receive: expected %d got %d", left, late);

    /* Isendrecv and Isendrecv_replace around the ring, small and large. */
    for (int n = 1; n <= BIG; n *= 100) {
        for (int i = 0; i < n; i++)
            big[i] = rank * 7 + i;
        MPI_Request r;
        CHECK_MPI(MPI_Isendrecv(big, n, MPI_INT, right, 20, bigin, n, MPI_INT, left, 20,
                                MPI_COMM_WORLD, &r));
        CHECK_MPI(MPI_Wait(&r, &st));
        int count;
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(r == MPI_REQUEST_NULL && count == n && st.MPI_SOURCE == left,
              "Isendrecv: count %d source %d", count, st.MPI_SOURCE);
        CHECK(bigin[n - 1] == left * 7 + n - 1, "Isendrecv data: %d", bigin[n - 1]);
        CHECK_MPI(MPI_Isendrecv_replace(big, n, MPI_INT, right, 21, left, 21, MPI_COMM_WORLD, &r));
        flag = 0;
        while (!flag)
            CHECK_MPI(MPI_Test(&r, &flag, &st));
        CHECK(big[0] == left * 7 && big[n - 1] == left * 7 + n - 1, "Isendrecv_replace data: %d %d",
              big[0], big[n - 1]);
    }

    /* Isendrecv_replace with a non-contiguous type (every other int), small and large: the
     * gaps keep their values, the status counts the elements received. */
    MPI_Datatype every2;
    CHECK_MPI(MPI_Type_vector(BIG / 2, 1, 2, MPI_INT, &every2));
    CHECK_MPI(MPI_Type_commit(&every2));
    for (int nv = 0; nv < 2; nv++) {
        MPI_Datatype vt = nv ? every2 : MPI_DATATYPE_NULL;
        MPI_Datatype small;
        if (!nv) {
            CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_INT, &small));
            CHECK_MPI(MPI_Type_commit(&small));
            vt = small;
        }
        const int nint = nv ? BIG : 6;
        for (int i = 0; i < nint; i++)
            big[i] = i % 2 ? -i : rank * 11 + i;
        MPI_Request r;
        CHECK_MPI(MPI_Isendrecv_replace(big, 1, vt, right, 22, left, 22, MPI_COMM_WORLD, &r));
        CHECK_MPI(MPI_Wait(&r, &st));
        int count = -1;
        MPI_Get_count(&st, vt, &count);
        CHECK(count == 1 && st.MPI_SOURCE == left,
              "Isendrecv_replace of a vector: count %d source %d", count, st.MPI_SOURCE);
        for (int i = 0; i < nint; i++) {
            int want = i % 2 ? -i : left * 11 + i;
            CHECK(big[i] == want, "Isendrecv_replace of a vector [%d]: expected %d got %d", i, want,
                  big[i]);
        }
        if (!nv) CHECK_MPI(MPI_Type_free(&small));
    }
    CHECK_MPI(MPI_Type_free(&every2));

    /* MPI_PROC_NULL and zero counts: complete at once, status source PROC_NULL, count 0. */
    MPI_Request pn[4];
    CHECK_MPI(MPI_Send_init(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pn[0]));
    CHECK_MPI(MPI_Recv_init(bigin, 5, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pn[1]));
    CHECK_MPI(MPI_Startall(2, pn));
    CHECK_MPI(MPI_Waitall(2, pn, sts));
    int c = -1;
    MPI_Get_count(&sts[1], MPI_INT, &c);
    CHECK(sts[1].MPI_SOURCE == MPI_PROC_NULL && sts[1].MPI_TAG == MPI_ANY_TAG && c == 0,
          "PROC_NULL persistent receive: source %d tag %d count %d", sts[1].MPI_SOURCE,
          sts[1].MPI_TAG, c);
    MPI_Request_free(&pn[0]);
    MPI_Request_free(&pn[1]);
    CHECK_MPI(MPI_Isendrecv(big, 3, MPI_INT, MPI_PROC_NULL, 0, bigin, 3, MPI_INT, MPI_PROC_NULL, 0,
                            MPI_COMM_WORLD, &pn[2]));
    CHECK_MPI(MPI_Wait(&pn[2], &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Isendrecv PROC_NULL source %d", st.MPI_SOURCE);
    CHECK_MPI(MPI_Isendrecv(NULL, 0, MPI_INT, right, 30, NULL, 0, MPI_INT, left, 30, MPI_COMM_WORLD,
                            &pn[3]));
    CHECK_MPI(MPI_Wait(&pn[3], &st));
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 30 && c == 0,
          "zero-count Isendrecv: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, c);

    /* error classes */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request bad;
    int e = MPI_Send_init(big, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &bad);
    CHECK(e == MPI_ERR_RANK, "Send_init to rank %d: expected MPI_ERR_RANK got %d", size, e);
    e = MPI_Recv_init(big, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &bad);
    CHECK(e == MPI_ERR_TAG, "Recv_init tag -5: expected MPI_ERR_TAG got %d", e);
    e = MPI_Send_init(big, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &bad);
    CHECK(e == MPI_ERR_COUNT, "Send_init count -1: expected MPI_ERR_COUNT got %d", e);
    MPI_Request nul = MPI_REQUEST_NULL;
    e = MPI_Start(&nul);
    CHECK(e == MPI_ERR_REQUEST, "Start(MPI_REQUEST_NULL): expected MPI_ERR_REQUEST got %d", e);
    MPI_Request ir;
    CHECK_MPI(MPI_Isend(big, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &ir));
    e = MPI_Start(&ir);
    CHECK(e == MPI_ERR_REQUEST, "Start of a nonpersistent request: expected %d got %d",
          MPI_ERR_REQUEST, e);
    CHECK_MPI(MPI_Wait(&ir, MPI_STATUS_IGNORE));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(big);
    free(bigin);
    return finish_ok();
}
