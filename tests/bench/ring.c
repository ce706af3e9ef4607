/* ring: a token (one int, or -s BYTES) goes round all ranks: 0 -> 1 -> ... -> n-1 -> 0.
 * Prints  RESULT name=ring ranks=P size=S iters=LAPS usec=TIME_PER_HOP_US
 * Checked: each rank adds its rank to the token; rank 0 tests the sum after every lap. */
#include "bench.h"

struct rg {
    int rank, size;
    int *tok;
    int n;
};

static void run(void *vctx, long laps)
{
    struct rg *c = vctx;
    int next = (c->rank + 1) % c->size, prev = (c->rank + c->size - 1) % c->size;
    for (long l = 0; l < laps; l++) {
        if (c->rank == 0) {
            c->tok[0] = 0;
            MPI_Send(c->tok, c->n, MPI_INT, next, 9, MPI_COMM_WORLD);
            MPI_Recv(c->tok, c->n, MPI_INT, prev, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (c->tok[0] != c->size * (c->size - 1) / 2)
                BENCH_FAIL("ring: token sum %d, want %d", c->tok[0], c->size * (c->size - 1) / 2);
        } else {
            MPI_Recv(c->tok, c->n, MPI_INT, prev, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            c->tok[0] += c->rank;
            MPI_Send(c->tok, c->n, MPI_INT, next, 9, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv);
    struct rg c;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    if (c.size < 2) BENCH_FAIL("ring needs 2 ranks");
    long bytes = bench_opt_long(argc, argv, "-s", 4);
    c.n = bytes < 4 ? 1 : (int)(bytes / 4);
    c.tok = calloc((size_t)c.n, sizeof(int));
    bench_warmup(MPI_COMM_WORLD, 0.2);
    run(&c, 2);
    long iters;
    double t = bench_measure(MPI_COMM_WORLD, run, &c, 10000000, &iters);
    if (c.rank == 0)
        bench_result("name=ring ranks=%d size=%d iters=%ld usec=%.4f", c.size, c.n * 4, iters,
                     t / c.size * 1e6);
    free(c.tok);
    MPI_Finalize();
    return 0;
}
