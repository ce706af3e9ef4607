/* Rank WHO (argv[2]) ends with MODE (argv[1]): "exit CODE" returns CODE (argv[3]), "abort"
 * calls MPI_Abort(MPI_COMM_WORLD, CODE), "fatal" sends to an invalid rank under the default
 * handler (MPI_ERRORS_ARE_FATAL); the other ranks print "ready" and wait in MPI for a
 * message that never comes, so only the failure ends them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int who = argc > 2 ? atoi(argv[2]) : 0;
    int code = argc > 3 ? atoi(argv[3]) : 1;
    if (rank == who) {
        if (argc > 1 && strcmp(argv[1], "abort") == 0) MPI_Abort(MPI_COMM_WORLD, code);
        if (argc > 1 && strcmp(argv[1], "fatal") == 0)
            MPI_Send(&code, 1, MPI_INT, size + 40, 0, MPI_COMM_WORLD);
        return code;
    }
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
