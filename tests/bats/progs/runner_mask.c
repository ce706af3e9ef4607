/* runner_mask.c — the threads libtmpi starts for a rank (the runner of non-blocking
 * collectives across nodes) must not inherit the rank's --bind-to pinning.  Rank 0 lists the
 * job host's threads before and after an MPI_Ibarrier and prints "new thread TID cpus LIST"
 * (Cpus_allowed_list) for each thread that appeared. */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TIDS 4096

static int list_tids(long *tids)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_TIDS)
        if (e->d_name[0] != '.') tids[n++] = atol(e->d_name);
    closedir(d);
    return n;
}

static void print_mask(long tid)
{
    char path[96], line[512];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    FILE *f = fopen(path, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0)
            printf("new thread %ld cpus %s", tid, line + 18 + strspn(line + 18, " \t"));
    fclose(f);
}

int main(int argc, char **argv)
{
    static long before[MAX_TIDS], after[MAX_TIDS];
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int nb = rank == 0 ? list_tids(before) : 0;
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rank == 0) {
        int na = list_tids(after);
        for (int i = 0; i < na; i++) {
            int old = 0;
            for (int k = 0; k < nb && !old; k++)
                old = before[k] == after[i];
            if (!old) print_mask(after[i]);
        }
        puts("done");
    }
    MPI_Finalize();
    return 0;
}
