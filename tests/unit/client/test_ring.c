/* test_ring.c — waiting behaviour: a 16-rank ring must finish quickly, also when the node is
 * oversubscribed (ranks > cpus: waiters must block, not spin), and ping-pong latency stays in
 * the spin regime when there are cores to spare. */
#include <stdlib.h>

#include "harness.h"

#define ROUNDS 2000

static int rank_ring(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int token = 0;
    for (int k = 0; k < ROUNDS; k++) {
        if (rank == 0) {
            token = k;
            TH_MPI(MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD));
            TH_MPI(MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            TH_CHECK(token == k + size - 1, "round %d: expected %d, got %d", k, k + size - 1,
                     token);
        } else {
            TH_MPI(MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            token++;
            TH_MPI(MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD));
        }
    }
    TH_MPI(MPI_Finalize());
    return 0;
}

static int ring(int n, int ncpus, double limit)
{
    struct th_opts o = {.nranks = n, .ncpus = ncpus};
    struct th_result res;
    if (th_run(&o, rank_ring, NULL, &res)) return 1;
    double per = res.seconds / ROUNDS / n * 1e6;
    printf("  ring %d ranks, ncpus %d: %.3f s (%.2f us per hop)\n", n, ncpus, res.seconds, per);
    if (res.seconds > limit) {
        fprintf(stderr, "  expected under %.1f s, took %.3f s\n", limit, res.seconds);
        return 1;
    }
    return 0;
}

static int t_ring16(void)
{
    return ring(16, 0, 20.0);
}
static int t_ring16_two_cpus(void)
{
    return ring(16, 2, 20.0);
}
static int t_ring64_one_cpu(void)
{
    return ring(64, 1, 60.0);
}

int main(int argc, char **argv)
{
    static const struct th_test tests[] = {{"ring16", t_ring16},
                                           {"ring16_two_cpus", t_ring16_two_cpus},
                                           {"ring64_one_cpu", t_ring64_one_cpu},
                                           {NULL, NULL}};
    return th_main(argc, argv, tests);
}
