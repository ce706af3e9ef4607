/* A rank forks a child that ends with _exit(7), one that calls exit(5) and one that aborts;
 * the rank prints each child's status as waitpid reports it. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *how, pid_t pid)
{
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        printf("%s: no child\n", how);
    else if (WIFEXITED(st))
        printf("%s: exited %d\n", how, WEXITSTATUS(st));
    else
        printf("%s: signal %d\n", how, WTERMSIG(st));
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        fflush(stdout);
        pid_t p = fork();
        if (p == 0) _exit(7);
        report("_exit", p);
        fflush(stdout);
        p = fork();
        if (p == 0) exit(5);
        report("exit", p);
        fflush(stdout);
        p = fork();
        if (p == 0) abort();
        report("abort", p);
    }
    MPI_Finalize();
    return 0;
}
