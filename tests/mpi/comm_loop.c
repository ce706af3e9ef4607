/* comm_loop.c — creating and freeing communicators in a loop neither runs out of context ids
 * nor slows down: 20000 Comm_dup/Comm_free, then Comm_split and Comm_create_group loops, each
 * new communicator used once; the last tenth of the dup loop may not take much longer than the
 * first tenth. */
#include "check.h"

#define NDUP 20000
#define NOTHER 2000

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double t_first = 0, t_last = 0;
    for (int i = 0; i < NDUP; i++) {
        double t0 = MPI_Wtime();
        MPI_Comm c;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 1000 == 0) {
            int v = i, s = 0;
            CHECK_MPI(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, c));
            CHECK(s == i * size, "iteration %d: sum %d, expected %d", i, s, i * size);
        }
        CHECK_MPI(MPI_Comm_free(&c));
        double dt = MPI_Wtime() - t0;
        if (i < NDUP / 10) t_first += dt;
        if (i >= NDUP - NDUP / 10) t_last += dt;
    }
    /* A slowdown that grows with the number of communicators made shows here; a loaded
     * machine's noise does not reach 4x over 2000 iterations. */
    CHECK(t_last < 4 * t_first + 0.5, "last %d dups took %.3f s, first %.3f s", NDUP / 10, t_last,
          t_first);
    MPI_Group wg;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int i = 0; i < NOTHER; i++) {
        MPI_Comm c, g;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c));
        CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, wg, i % 100, &g));
        if (i % 500 == 0) {
            int n = 0;
            CHECK_MPI(MPI_Allreduce(&rank, &n, 1, MPI_INT, MPI_MAX, g));
            CHECK(n == size - 1, "create_group max %d", n);
            CHECK_MPI(MPI_Barrier(c));
        }
        CHECK_MPI(MPI_Comm_free(&c));
        CHECK_MPI(MPI_Comm_free(&g));
    }
    CHECK_MPI(MPI_Group_free(&wg));
    if (rank == 0) printf("dups: first %.3f s, last %.3f s\n", t_first, t_last);
    return finish_ok();
}
