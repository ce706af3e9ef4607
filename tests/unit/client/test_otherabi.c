/* test_otherabi.c — a program whose libtmpi speaks another agent interface version than the
 * agent it runs in (built against another installation) must not run on a table it misreads:
 * MPI_Init says which versions disagree and what to do, and exits 1. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "mpi.h"
#include "svc.h"

/* What an agent of the next interface version exports (found through the executable's dynamic
 * symbol table: -rdynamic). */
__attribute__((visibility("default"))) struct tmpi_svc tmpi_svc = {.abi = TMPI_SVC_ABI + 1};

int main(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 2);
        MPI_Init(NULL, NULL);
        fprintf(stderr, "MPI_Init returned\n");
        _exit(0);
    }
    close(p[1]);
    char out[1024];
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof out && (r = read(p[0], out + got, sizeof out - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = 0;
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    fprintf(stderr, "child said: %s", out);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    char want[128];
    snprintf(want, sizeof want, "interface version %d, the agent runs version %d", TMPI_SVC_ABI,
             TMPI_SVC_ABI + 1);
    CHECK(strstr(out, want) != NULL);
    return 0;
}
