/* host_stdio.c — what a rank's process holds of the agent: its descriptors ("fd N TARGET"
 * for each entry of /proc/self/fd), the environment it was started with ("environ NAME" for
 * each of /proc/self/environ, which clearenv does not change), and where the process's own
 * fds 1 and 2 lead: rank 0 runs a shell that writes a forged journal line to its stderr and
 * a line to its stdout, and writes to fd 2 with the system call itself. */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void list_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        perror("/proc/self/fd");
        exit(1);
    }
    int self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == self) continue;
        char path[64], target[4096];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n < 0 ? 0 : n] = '\0';
        printf("fd %s %s\n", e->d_name, target);
    }
    closedir(d);
}

static void list_environ(void)
{
    FILE *f = fopen("/proc/self/environ", "r");
    if (!f) {
        perror("/proc/self/environ");
        exit(1);
    }
    char var[65536];
    size_t n = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (c && n + 1 < sizeof var) {
            var[n++] = (char)c;
            continue;
        }
        var[n] = '\0';
        char *eq = strchr(var, '=');
        if (eq) *eq = '\0';
        if (n) printf("environ %s\n", var);
        n = 0;
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        list_fds();
        list_environ();
        fflush(stdout);
        if (system("echo '<3>FORGED by a rank' >&2; echo shell-stdout-line") != 0) return 1;
        static const char raw[] = "raw-fd2-write\n";
        syscall(SYS_write, 2, raw, sizeof raw - 1);
    }
    MPI_Finalize();
    return 0;
}
