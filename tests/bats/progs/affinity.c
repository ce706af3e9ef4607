/* affinity.c — every rank prints the CPUs its own thread may run on and the one it runs on:
 * "rank R affinity LIST cpu C" (LIST as "0-3,6", like hwloc's and the report's).  Read before
 * MPI_Init, so a rank on carriers still runs on the carrier that started it; read with the
 * system call itself, which answers for the thread (a carried rank's sched_getaffinity answers
 * every CPU its job's carriers may run on, tests/mpi/rank_process.c). */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* "0-3,6" */
static void cpu_list(const cpu_set_t *set, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && n < len; c++) {
        if (!CPU_ISSET(c, set)) continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int w = e > c ? snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", c, e)
                      : snprintf(buf + n, len - n, "%s%d", n ? "," : "", c);
        if (w < 0) break;
        n += (size_t)w;
        c = e;
    }
}

int main(int argc, char **argv)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    char list[4096] = "?";
    if (syscall(SYS_sched_getaffinity, 0, sizeof set, &set) > 0) cpu_list(&set, list, sizeof list);
    int cpu = sched_getcpu();
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d affinity %s cpu %d\n", rank, list, cpu);
    MPI_Finalize();
    return 0;
}
