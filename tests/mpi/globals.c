/* globals.c — every rank has its own copy of the program's globals: a counter each rank
 * increments once must read 1 everywhere. */
#include "check.h"

int counter;
static int initialised = 42;
static char buffer[64];

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(initialised == 42, "initialised global: expected 42, got %d", initialised);
    initialised = rank;
    counter++;
    snprintf(buffer, sizeof buffer, "rank %d", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(counter == 1, "counter: expected 1, got %d", counter);
    CHECK(initialised == rank, "global changed by another rank: %d", initialised);
    int total = 0;
    CHECK_MPI(MPI_Allreduce(&counter, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == size, "sum of counters: expected %d, got %d", size, total);
    char want[64];
    snprintf(want, sizeof want, "rank %d", rank);
    for (int i = 0; want[i]; i++)
        CHECK(buffer[i] == want[i], "buffer: expected \"%s\", got \"%s\"", want, buffer);
    return finish_ok();
}
