/* Waits for a forwarded signal.  usr_signal MODE: "handler" (default) installs a handler for
 * SIGUSR1 and SIGUSR2 in every rank (sigaction with SA_SIGINFO on even ranks, signal() on
 * odd ones), "none" installs nothing.  Rank 0 prints "ready" once every rank has its handler;
 * each rank then waits (up to 30 s) for a signal and prints "rank R got signal S". */
#include <mpi.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* this rank's own copy: each rank has private globals.  Atomic, not just volatile: the
 * handler may run on another thread of the job's process (tmpi-launch(1), Signals). */
static atomic_int got_sig;
static atomic_int got_info_sig;

static void on_info(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    got_info_sig = info ? info->si_signo : -1;
    got_sig = sig;
}

static void on_plain(int sig)
{
    got_sig = sig;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int handler = !(argc > 1 && strcmp(argv[1], "none") == 0);
    if (handler && rank % 2 == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_info;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGUSR1, &sa, NULL) != 0 || sigaction(SIGUSR2, &sa, NULL) != 0) {
            printf("rank %d: sigaction failed\n", rank);
            return 1;
        }
        struct sigaction back;
        if (sigaction(SIGUSR1, NULL, &back) != 0 || back.sa_sigaction != on_info) {
            printf("rank %d: sigaction does not return the handler installed\n", rank);
            return 1;
        }
    } else if (handler) {
        if (signal(SIGUSR1, on_plain) == SIG_ERR || signal(SIGUSR2, on_plain) != SIG_DFL) {
            printf("rank %d: signal failed\n", rank);
            return 1;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        puts("ready");
        fflush(stdout);
    }
    struct timespec step = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 3000 && !got_sig; i++)
        nanosleep(&step, NULL);
    if (!got_sig) {
        printf("rank %d: no signal within 30 s\n", rank);
        return 1;
    }
    if (rank % 2 == 0 && got_info_sig != got_sig) {
        printf("rank %d: siginfo says %d, the handler got %d\n", rank, got_info_sig, got_sig);
        return 1;
    }
    printf("rank %d got signal %d\n", rank, got_sig);
    MPI_Finalize();
    return 0;
}
