/* mn_bcast_count.c — one Bcast of 4 ints from rank 5, counted with MPIX_Coll_counters: the
 * first rank of each node prints "node N bcast messages D" (its node's leader messages for
 * that Bcast), so the caller can sum them over the nodes; every rank checks the data; rank 0
 * prints OK. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, lr;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lr);
    int root = size > 5 ? 5 : size - 1, v[4] = {rank, rank, rank, rank};
    MPI_Count b0, b1;
    /* nobody starts the Bcast before every node has read its counter, and nobody reads it
     * again before every node is done */
    MPI_Barrier(MPI_COMM_WORLD);
    MPIX_Coll_counters(MPIX_COLL_BCAST, NULL, &b0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(v, 4, MPI_INT, root, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPIX_Coll_counters(MPIX_COLL_BCAST, NULL, &b1);
    for (int i = 0; i < 4; i++)
        if (v[i] != root) {
            fprintf(stderr, "rank %d: bcast [%d] = %d, expected %d\n", rank, i, v[i], root);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(name, &len);
    if (lr == 0) printf("node %s bcast messages %lld\n", name, (long long)(b1 - b0));
    MPI_Comm_free(&local);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("OK\n");
    MPI_Finalize();
    return 0;
}
