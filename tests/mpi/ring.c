/* ring.c — a token passed around all ranks many times; must stay quick with many ranks on
 * few cores (waiters block instead of spinning). */
#include "check.h"

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int rounds = 1000, token = 0;
    double t0 = MPI_Wtime();
    for (int k = 0; k < rounds; k++) {
        if (rank == 0) {
            token = k;
            CHECK_MPI(MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(token == k + size - 1, "round %d: expected %d got %d", k, k + size - 1, token);
        } else {
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            token++;
            CHECK_MPI(MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD));
        }
    }
    if (rank == 0)
        printf("ring: %d ranks, %d rounds, %.2f us per hop\n", size, rounds,
               (MPI_Wtime() - t0) / rounds / size * 1e6);
    return finish_ok();
}
