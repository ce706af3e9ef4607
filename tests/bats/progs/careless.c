/* Careless programs (docs/RELIABILITY.md, "Careless programs"): each mode does one thing a
 * program should not, and the job must still end, whole and without leftovers.
 *   bigwrite N [R] rank R (default 0) writes N bytes of 'x' ending in a newline with one
 *                 write(2)
 *   pthread_exit  rank 1 ends its main thread with pthread_exit (after MPI_Finalize when the
 *                 second argument is "finalized", else before)
 *   leftover      every rank starts a thread that never ends, then finalizes and returns
 *   leak MIB      every rank allocates MIB MiB in 4 KiB blocks and opens 64 files it never
 *                 frees or closes
 * In these two modes rank 0 prints "host PID" first: the process its job ran in.
 *   sleep SEC     sleeps SEC seconds, then finalizes
 *   atexit HOW    the last rank registers an atexit handler that calls exit(3) (HOW "exit3"),
 *                 exit(0) ("exit0") or abort() ("abort"); it runs when the job unloads the
 *                 rank's image, after main returned
 *   argv F ARGS.. every rank writes its rank into the first bytes of its last argument and,
 *                 after a barrier, checks it still reads its own (each rank's strings are its
 *                 own); rank 0 prints "host PID" and "args N bytes", then waits for file F */
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* points into argv: as in any process, argv outlives main (the handler runs after it) */
static const char *atexit_how;

static void careless_handler(void)
{
    printf("atexit handler runs\n");
    if (strcmp(atexit_how, "abort") == 0) abort();
    exit(strcmp(atexit_how, "exit3") == 0 ? 3 : 0);
}

static void *spin_forever(void *arg)
{
    volatile unsigned long *n = arg;
    /* mostly in the program's own code, so an unload under it would show */
    for (;;) {
        for (int i = 0; i < 1000000; i++)
            (*n)++;
        usleep(100);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "bigwrite") == 0 && argc > 2) {
        size_t n = strtoull(argv[2], NULL, 10);
        int writer = argc > 3 ? atoi(argv[3]) : 0;
        if (rank == writer && n > 0) {
            char *buf = malloc(n);
            if (!buf) return 2;
            memset(buf, 'x', n - 1);
            buf[n - 1] = '\n';
            ssize_t w = write(1, buf, n);
            free(buf);
            if (w != (ssize_t)n) {
                fprintf(stderr, "write returned %zd of %zu\n", w, n);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
    } else if (strcmp(mode, "pthread_exit") == 0) {
        int finalized = argc > 2 && strcmp(argv[2], "finalized") == 0;
        if (rank == 1) {
            if (finalized) MPI_Finalize();
            printf("rank 1 calls pthread_exit\n");
            fflush(stdout);
            pthread_exit(NULL);
        }
    }
    if (rank == 0 && (strcmp(mode, "leftover") == 0 || strcmp(mode, "leak") == 0))
        printf("host %ld\n", (long)syscall(SYS_getpid));
    if (strcmp(mode, "leftover") == 0) {
        static unsigned long counter;
        pthread_t t;
        if (pthread_create(&t, NULL, spin_forever, &counter) != 0) return 2;
    } else if (strcmp(mode, "leak") == 0 && argc > 2) {
        size_t mib = strtoull(argv[2], NULL, 10);
        /* the compiler may not drop an allocation it can see is never used */
        static void *volatile sink;
        for (size_t i = 0; i < mib * 256; i++) {
            char *p = malloc(4096);
            if (!p) return 2;
            memset(p, 1, 4096);
            sink = p;
        }
        for (int i = 0; i < 64; i++)
            if (open("/dev/null", O_RDONLY) < 0) return 2;
    } else if (strcmp(mode, "atexit") == 0 && argc > 2) {
        int size;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        atexit_how = argv[2];
        if (rank == size - 1 && atexit(careless_handler) != 0) return 2;
    } else if (strcmp(mode, "argv") == 0 && argc > 3) {
        char *last = argv[argc - 1];
        /* only its first bytes: a rank touches no more of its arguments than it uses */
        size_t len = strnlen(last, 16);
        char mine[16];
        int n = snprintf(mine, sizeof mine, "%d:", rank);
        if ((size_t)n > len) return 2;
        memcpy(last, mine, (size_t)n);
        MPI_Barrier(MPI_COMM_WORLD);
        if (memcmp(last, mine, (size_t)n) != 0) {
            fprintf(stderr, "rank %d: its last argument reads '%.8s', another rank's\n", rank,
                    last);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        if (rank == 0) {
            size_t total = 0;
            for (int i = 0; i < argc; i++)
                total += strlen(argv[i]) + 1;
            printf("host %ld\nargs %zu bytes\n", (long)syscall(SYS_getpid), total);
            fflush(stdout);
            while (access(argv[2], F_OK) != 0)
                usleep(20000);
        }
    } else if (strcmp(mode, "sleep") == 0 && argc > 2) {
        sleep((unsigned)atoi(argv[2]));
    }
    MPI_Finalize();
    if (rank == 0) printf("OK\n");
    return 0;
}
