/* rank_libc.c — what a rank's libc prints and runs at its end, one behaviour per mode (the
 * first argument), for rank_libc.bats:
 *   order   atexit A, on_exit B, atexit C, on_exit D, then main returns 0
 *   exit    the same handlers, then exit(3)
 *   nested  on_exit B, then an atexit handler that calls exit(4)
 *   _exit   the same handlers as order, then _exit(6): none runs
 *   quick   at_quick_exit Q1, Q2 and atexit A, then quick_exit(7): Q2, Q1
 *   getopt  the remaining arguments parsed with opterr set: glibc's messages on stderr
 * A rank that ends with a status other than 0 ends the job: the modes that do are run on one
 * rank, so that no other rank is stopped halfway through its handlers. */
#define _GNU_SOURCE
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank;

static void handler_a(void)
{
    printf("rank %d: atexit A\n", rank);
}
static void handler_c(void)
{
    printf("rank %d: atexit C\n", rank);
}
static void on_exit_print(int status, void *arg)
{
    printf("rank %d: on_exit %s status %d\n", rank, (const char *)arg, status);
}
static void exit_4(void)
{
    printf("rank %d: atexit calls exit(4)\n", rank);
    exit(4);
}
static void quick_1(void)
{
    printf("rank %d: at_quick_exit Q1\n", rank);
}
static void quick_2(void)
{
    printf("rank %d: at_quick_exit Q2\n", rank);
}

static void four_handlers(void)
{
    atexit(handler_a);
    on_exit(on_exit_print, "B");
    atexit(handler_c);
    on_exit(on_exit_print, "D");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "";
    MPI_Finalize();
    if (strcmp(mode, "order") == 0) {
        four_handlers();
        return 0;
    }
    if (strcmp(mode, "exit") == 0) {
        four_handlers();
        exit(3);
    }
    if (strcmp(mode, "nested") == 0) {
        on_exit(on_exit_print, "B");
        atexit(exit_4);
        return 0;
    }
    if (strcmp(mode, "_exit") == 0) {
        four_handlers();
        fflush(stdout);
        _exit(6);
    }
    if (strcmp(mode, "quick") == 0) {
        at_quick_exit(quick_1);
        at_quick_exit(quick_2);
        atexit(handler_a);
        fflush(stdout);
        quick_exit(7);
    }
    if (strcmp(mode, "getopt") == 0) {
        static const struct option lo[] = {{"file", required_argument, NULL, 'f'},
                                           {"filter", no_argument, NULL, 'F'},
                                           {NULL, 0, NULL, 0}};
        optind = 2;
        int c;
        while ((c = getopt_long(argc, argv, "ab:", lo, NULL)) != -1)
            printf("rank %d: option %c\n", rank, c);
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
