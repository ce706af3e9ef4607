/* Rank 0 prints "started"; then every rank sleeps ("sleep") or computes ("spin") for a minute
 * outside the library, where no cancel can reach it: only the kill grace ends the job early. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        puts("started");
        fflush(stdout);
    }
    if (argc > 1 && strcmp(argv[1], "spin") == 0) {
        volatile unsigned long x = 0;
        time_t end = time(NULL) + 60;
        while (time(NULL) < end)
            x++;
    } else {
        sleep(60);
    }
    MPI_Finalize();
    return 0;
}
