/* nbc_progress.c — non-blocking collectives progress while the ranks do something else: rank
 * 0 starts each operation and only then sends a token to the last rank, which receives it
 * before it starts its own (legal MPI; an I* call that waited for the others would hang).
 * Then 16 operations pending at once with a blocking Allreduce in between, completed by Test
 * loops in reverse order.  Every result is checked on every rank. */
#include <string.h>

#include "check.h"

#define CNT 5000 /* above the eager limit between agents, with 4-byte ints: 20 KB */

static int v(int rank, int i)
{
    return rank * 100 + i % 89;
}

static void start(int k, int *in, int *out, int cnt, MPI_Request *rq)
{
    switch (k) {
    case 0:
        CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, rq));
        break;
    case 1:
        CHECK_MPI(MPI_Ibcast(in, cnt, MPI_INT, 0, MPI_COMM_WORLD, rq));
        break;
    case 2:
        CHECK_MPI(MPI_Iallreduce(in, out, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, rq));
        break;
    default:
        CHECK_MPI(MPI_Iallgather(in, cnt, MPI_INT, out, cnt, MPI_INT, MPI_COMM_WORLD, rq));
        break;
    }
}

static void check(int k, const int *in, const int *out, int cnt, int rank, int size)
{
    for (int i = 0; i < cnt; i++) {
        if (k == 1) CHECK(in[i] == v(0, i), "Ibcast element %d: %d", i, in[i]);
        if (k == 2) {
            int s = 0;
            for (int r = 0; r < size; r++)
                s += v(r, i);
            CHECK(out[i] == s, "Iallreduce element %d: %d, expected %d", i, out[i], s);
        }
        if (k == 3)
            for (int r = 0; r < size; r++)
                CHECK(out[r * cnt + i] == v(r, i), "Iallgather block %d element %d: %d", r, i,
                      out[r * cnt + i]);
    }
    (void)rank;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int last = size - 1;
    int *in = malloc(sizeof(int) * CNT * 16), *out = malloc(sizeof(int) * CNT * (size_t)size * 16);
    CHECK(in && out, "out of memory");
    for (int k = 0; k < 4; k++)
        for (int cnt = 1; cnt <= CNT; cnt += CNT - 1) {
            for (int i = 0; i < cnt; i++)
                in[i] = v(rank, i);
            MPI_Request rq;
            int token = 10 * k + 1;
            if (rank == last && last != 0)
                CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            start(k, in, out, cnt, &rq);
            if (rank == 0 && last != 0)
                CHECK_MPI(MPI_Send(&token, 1, MPI_INT, last, 3, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            CHECK(token == 10 * k + 1, "token %d", token);
            check(k, in, out, cnt, rank, size);
        }
    /* 16 pending at once, each with its own buffers */
    MPI_Request rq[16];
    for (int j = 0; j < 16; j++) {
        for (int i = 0; i < 16; i++)
            in[j * 16 + i] = v(rank, i);
        start(j % 4, in + j * 16, out + (size_t)j * 16 * (size_t)size, 16, &rq[j]);
    }
    int one = 1, all = 0;
    CHECK_MPI(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(all == size, "blocking Allreduce among pending ones: %d", all);
    for (int j = 15; j >= 0; j--) {
        int flag = 0;
        while (!flag)
            CHECK_MPI(MPI_Test(&rq[j], &flag, MPI_STATUS_IGNORE));
        check(j % 4, in + j * 16, out + (size_t)j * 16 * (size_t)size, 16, rank, size);
    }
    free(in);
    free(out);
    return finish_ok();
}
