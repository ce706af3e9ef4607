/* Each rank's two threads increment the rank's own counter unsynchronised (a real race, one per
 * rank: the counter is the rank's, as every global is). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static int counter;

static void *bump(void *arg)
{
    for (int i = 0; i < 100000; i++)
        counter++;
    return arg;
}

int main(int argc, char **argv)
{
    int provided, rank, sum = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    pthread_t t;
    pthread_create(&t, NULL, bump, NULL);
    bump(NULL);
    pthread_join(t, NULL);
    printf("rank %d sum %d\n", rank, sum);
    MPI_Finalize();
    return 0;
}
