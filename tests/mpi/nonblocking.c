/* nonblocking.c — Isend/Irecv with Waitall, Waitany, Waitsome, Test, Probe, Cancel. */
#include "check.h"

#define N 32

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int in[N], out[N];
    MPI_Request rr[N], sr[N];
    for (int i = 0; i < N; i++) {
        out[i] = rank * 1000 + i;
        in[i] = -1;
        CHECK_MPI(MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &rr[i]));
    }
    for (int i = N - 1; i >= 0; i--)
        CHECK_MPI(MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &sr[i]));
    int done = 0;
    while (done < N) {
        int idx;
        MPI_Status st;
        CHECK_MPI(MPI_Waitany(N, rr, &idx, &st));
        CHECK(idx >= 0 && idx < N && in[idx] == left * 1000 + idx && st.MPI_TAG == idx,
              "Waitany: index %d value %d tag %d", idx, idx >= 0 && idx < N ? in[idx] : -1,
              st.MPI_TAG);
        CHECK(rr[idx] == MPI_REQUEST_NULL, "request %d not nulled", idx);
        done++;
    }
    int outcount;
    int ind[N];
    CHECK_MPI(MPI_Waitsome(N, sr, &outcount, ind, MPI_STATUSES_IGNORE));
    CHECK(outcount >= 1, "Waitsome: outcount %d", outcount);
    CHECK_MPI(MPI_Waitall(N, sr, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(sr[i] == MPI_REQUEST_NULL, "send request %d not nulled", i);

    /* Test polls until done; Probe sees a message before it is received */
    int v = rank, w = -1, flag = 0;
    MPI_Request q;
    CHECK_MPI(MPI_Irecv(&w, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &q));
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, right, 78, MPI_COMM_WORLD));
    MPI_Status st;
    CHECK_MPI(MPI_Probe(left, 78, MPI_COMM_WORLD, &st));
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 1 && st.MPI_SOURCE == left, "Probe: count %d source %d", cnt, st.MPI_SOURCE);
    int z;
    CHECK_MPI(MPI_Recv(&z, 1, MPI_INT, left, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, right, 77, MPI_COMM_WORLD));
    while (!flag)
        CHECK_MPI(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    CHECK(w == left, "Test: expected %d got %d", left, w);

    /* a receive nobody sends to can be cancelled */
    CHECK_MPI(MPI_Irecv(&w, 1, MPI_INT, left, 999, MPI_COMM_WORLD, &q));
    CHECK_MPI(MPI_Cancel(&q));
    CHECK_MPI(MPI_Wait(&q, &st));
    CHECK_MPI(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "receive was not cancelled");
    return finish_ok();
}
