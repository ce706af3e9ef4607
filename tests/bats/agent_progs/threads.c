/* A rank starts a thread of its own; argv[1] says how that thread ends. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* A store through a null pointer, on purpose: UBSan (make sanitize) must not report it first,
 * nor TSan (make tsan) the same store from two threads as a data race: the agent's fault
 * handler is what the test checks. */
static volatile int *volatile null_ptr; /* read at run time: the compiler sees no UB */
__attribute__((noinline, no_sanitize("undefined", "thread"))) static void crash(void)
{
    *null_ptr = 1;
}

static const char *how;
static void *child(void *a)
{
    printf("child of rank %d says hi\n", *(int *)a);
    if (!strcmp(how, "exit")) exit(9);
    if (!strcmp(how, "segv")) crash();
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
