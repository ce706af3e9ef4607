/* A rank starts a thread of its own; argv[1] says how that thread ends. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const char *how;
static void *child(void *a)
{
    printf("child of rank %d says hi\n", *(int *)a);
    if (!strcmp(how, "exit")) exit(9);
    if (!strcmp(how, "segv")) {
        volatile int *p = 0;
        *p = 1;
    }
    return NULL;
}
int main(int argc, char **argv)
{
    int rank;
    how = argc > 1 ? argv[1] : "ok";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pthread_t t;
    pthread_create(&t, NULL, child, &rank);
    pthread_join(t, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
