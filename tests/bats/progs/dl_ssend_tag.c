/* A send to a rank that waits on another tag: rank 0 sends with MPI_Ssend (or, with the
 * argument "large", a 4 MiB MPI_Send that cannot be buffered; with "isend", MPI_Issend and
 * MPI_Wait) tag 1 to rank 1, which waits in MPI_Recv for tag 2 from rank 0.  Ranks beyond 1
 * finish at once. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, large = argc > 1 && strcmp(argv[1], "large") == 0;
    int isend = argc > 1 && strcmp(argv[1], "isend") == 0;
    int n = large ? 1 << 20 : 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *buf = calloc((size_t)n, sizeof *buf);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        MPI_Request rq;
        if (large) {
            MPI_Send(buf, n, MPI_INT, 1, 1, MPI_COMM_WORLD);
        } else if (isend) {
            MPI_Issend(buf, n, MPI_INT, 1, 1, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } else
            MPI_Ssend(buf, n, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(buf, n, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
