#include "config.h"
#include "ring.h"

#include <mpi.h>
#include <stdio.h>

/* configure found MPI_Init and did not find the function nobody defines. */
#if !defined(HAVE_MPI_INIT) || defined(HAVE_TMPI_NO_SUCH_FUNCTION)
#error "configure's function checks went wrong"
#endif

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int got = ring_pass(0);
    if (rank == 0) {
        if (got != size) {
            printf("ring: token came back as %d, expected %d\n", got, size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("ring of %d ranks\nOK\n", size);
    }
    MPI_Finalize();
    return 0;
}
