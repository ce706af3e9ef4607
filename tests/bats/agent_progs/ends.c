/* Ends rank 1 in the way argv[1] names (or computes for ever: spin); the others wait in MPI.
 * nomem: rank 1 limits its process's address space (RLIMIT_AS) to 256 MiB above what it maps
 * now, allocates 1 MiB blocks until malloc fails, says after how many, and aborts. */
#include <assert.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* A store through a null pointer, on purpose: UBSan (make sanitize) must not report it first,
 * nor TSan (make tsan) the same store from two threads as a data race: the agent's fault
 * handler is what the test checks. */
static volatile int *volatile null_ptr; /* read at run time: the compiler sees no UB */
__attribute__((noinline, no_sanitize("undefined", "thread"))) static void crash(void)
{
    *null_ptr = 1;
}

/* Bytes of address space the process maps now (VmSize), 0 when unknown. */
static unsigned long long vm_size(void)
{
    char line[256];
    unsigned long long kib = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %llu kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib * 1024;
}

static void exhaust_address_space(void)
{
    unsigned long long now = vm_size();
    struct rlimit rl;
    if (now == 0 || getrlimit(RLIMIT_AS, &rl) < 0) {
        printf("cannot read the address space\n");
        return;
    }
    rl.rlim_cur = now + (256ull << 20);
    if (setrlimit(RLIMIT_AS, &rl) < 0) {
        printf("cannot limit the address space\n");
        return;
    }
    /* the blocks stay allocated; the first is given back so that printing has room */
    void *first = malloc(1 << 20);
    size_t mib = first ? 1 : 0;
    while (first && malloc(1 << 20))
        mib++;
    free(first);
    printf("malloc failed after %zu MiB\n", mib);
    fflush(stdout);
    abort();
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *how = argc > 1 ? argv[1] : "return0";
    /* The address-space limit is the whole process's: every rank must be running before rank
     * 1 sets it, or a rank still starting fails instead of rank 1's malloc. */
    if (!strcmp(how, "nomem")) MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 % size) {
        printf("rank %d ends by %s\n", rank, how);
        if (!strcmp(how, "exit3")) exit(3);
        if (!strcmp(how, "_exit4")) _exit(4);
        if (!strcmp(how, "return5")) return 5;
        if (!strcmp(how, "abort")) abort();
        if (!strcmp(how, "nomem")) exhaust_address_space();
        if (!strcmp(how, "assert")) assert(size < 0);
        if (!strcmp(how, "segv")) crash();
        if (!strcmp(how, "mpiabort")) MPI_Abort(MPI_COMM_WORLD, 7);
        if (!strcmp(how, "nofinalize")) return 0;
        if (!strcmp(how, "killself")) {
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
        if (!strcmp(how, "quitself")) {
            /* SIGQUIT's default action ends the process with a core dump, if the system's
             * policy allows one */
            fflush(stdout);
            kill(getpid(), SIGQUIT);
        }
        if (!strcmp(how, "spin"))
            for (volatile unsigned long n = 0;; n++)
                ;
    }
    if (strcmp(how, "return0") != 0) {
        /* wait for a message that never comes: the job must be torn down around us */
        int x;
        MPI_Recv(&x, 1, MPI_INT, 1 % size, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
