/* persistent_coll_free.c — persistent collectives made, started and freed in a loop, as a
 * time-step loop does, on MPI_COMM_WORLD and on duplicates freed in the loop: the job host's
 * threads must not grow with them.  Across nodes each persistent collective has a runner thread
 * on each node (coll_net_nb.c), which ends when the node's members free the request or their
 * communicator; before, it stayed until the job ended, a thread per *_init ever made.  Every
 * result is checked. */
#include <stdio.h>
#include <string.h>

#include "check.h"

#define CYCLES 150
/* threads the loop may leave (a communicator's group runner, the library's own helpers) */
#define SLACK 24

/* Threads of this process (the job host: every rank of the node), from /proc. */
static int threads_now(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    fclose(f);
    CHECK(n > 0);
    return n;
}

static void cycle(MPI_Comm comm, int rank, int size, int k)
{
    MPI_Request r[2];
    int v = rank + k, sum = -1, bc = rank == 0 ? k : -1;
    CHECK_MPI(MPI_Allreduce_init(&v, &sum, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &r[0]));
    CHECK_MPI(MPI_Bcast_init(&bc, 1, MPI_INT, 0, comm, MPI_INFO_NULL, &r[1]));
    CHECK_MPI(MPI_Startall(2, r));
    CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(sum == size * (size - 1) / 2 + size * k);
    CHECK(bc == k);
    CHECK_MPI(MPI_Request_free(&r[0]));
    CHECK_MPI(MPI_Request_free(&r[1]));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* the first round makes what stays (the world's runners) */
    cycle(MPI_COMM_WORLD, rank, size, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    int before = threads_now();
    for (int k = 1; k <= CYCLES; k++) {
        cycle(MPI_COMM_WORLD, rank, size, k);
        if (k % 10 == 0) { /* a duplicate's persistent runners go with it */
            MPI_Comm d;
            CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d));
            cycle(d, rank, size, k);
            CHECK_MPI(MPI_Comm_free(&d));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int after = threads_now();
    if (after - before > SLACK)
        fprintf(stderr,
                "rank %d: %d threads before %d cycles of persistent collectives, %d after\n", rank,
                before, CYCLES, after);
    CHECK(after - before <= SLACK);
    return finish_ok();
}
