/* names_park.c — a carried rank waiting for the agent's answer to MPI_Lookup_name parks and
 * leaves its carrier to the other ranks (dynproc.bats).
 *   names_park GO DONE   (2 ranks per CPU, TMPI_RANK_SWITCHING=user, block placement: ranks
 *                        2c and 2c + 1 share carrier c) once the file GO exists, every even
 *                        rank looks up a name while the test holds the agent stopped, which
 *                        would hold every carrier; rank 1 meanwhile receives from rank 3
 *                        (which sends a second later) and creates the file DONE.
 * Prints "names_park ok" on rank 0 when the lookup failed with MPI_ERR_NAME as it should. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, v = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("ready\n");
        fflush(stdout);
    }
    while (access(argv[1], F_OK) != 0)
        usleep(10000);
    if (rank % 2 == 0) {
        char port[MPI_MAX_PORT_NAME];
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int cls = -1, rc = MPI_Lookup_name("names-park-no-such-service", MPI_INFO_NULL, port);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_NAME) {
            fprintf(stderr, "lookup: class %d, not MPI_ERR_NAME\n", cls);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    } else if (rank == 1) {
        MPI_Recv(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        FILE *f = fopen(argv[2], "w");
        if (f) fclose(f);
    } else if (rank == 3) {
        sleep(1);
        v = 7;
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("names_park ok\n");
    MPI_Finalize();
    return 0;
}
