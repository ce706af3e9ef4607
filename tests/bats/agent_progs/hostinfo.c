/* What a rank sees of its process: argv[1] says what rank 0 reports.
 *   id        pid, uid, gid, supplementary groups, umask and working directory
 *   caps      the capability lines of /proc/self/status
 *   env       the names and values of the process environment, sorted by the caller
 *   write F   creates F (relative to the working directory) with one line
 *   read F    prints F's first line, or "cannot open F: <error>"
 *   waitfile F  waits until F exists (another job's failures must not end this one)
 *   waitfifo F  waits in open(2) of the FIFO F until a writer opens it, then reads it to the end:
 *             a job that waits allocating nothing (waitfile's lookups allocate dentries, which
 *             the kernel charges to the job's cgroup)
 *   stdin     the lines of its standard input, then "EOF"; other ranks say whether they see
 *             end of file at once
 *   stdinsum  rank 0 reads its standard input to the end with read(0) and prints
 *             "bytes=N fnv=H" (FNV-1a, hex); the other ranks' read(0) must return 0 at once
 *   cgroup    rank 0 prints its process's /proc/self/cgroup lines, then waits for file F
 *             (argv[2]) when one is given
 *   eat N     rank 0 allocates and touches N MiB, then prints "ate N MiB"
 *   oomscore  rank 0 prints "oom_score_adj N", its process's OOM score adjustment
 * Every rank ends with MPI_Finalize; rank 0 prints "OK" last. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *what = argc > 1 ? argv[1] : "id";
    const char *file = argc > 2 ? argv[2] : "";
    char line[4096];
    if (rank == 0 && !strcmp(what, "id")) {
        mode_t m = umask(0);
        umask(m);
        char cwd[4096];
        gid_t groups[64];
        int ng = getgroups(64, groups);
        printf("pid=%d uid=%u gid=%u umask=%03o cwd=%s groups=", (int)getpid(), (unsigned)getuid(),
               (unsigned)getgid(), (unsigned)m, getcwd(cwd, sizeof cwd) ? cwd : "?");
        for (int i = 0; i < ng; i++)
            printf("%s%u", i ? "," : "", (unsigned)groups[i]);
        printf("\n");
    } else if (rank == 0 && !strcmp(what, "caps")) {
        FILE *f = fopen("/proc/self/status", "r");
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "Cap", 3)) printf("%s", line);
        if (f) fclose(f);
    } else if (rank == 0 && !strcmp(what, "env")) {
        for (char **e = environ; *e; e++)
            printf("env %s\n", *e);
    } else if (rank == 0 && !strcmp(what, "write")) {
        FILE *f = fopen(file, "w");
        if (!f || fprintf(f, "written by rank 0\n") < 0 || fclose(f) != 0)
            printf("cannot write %s: %s\n", file, strerror(errno));
    } else if (rank == 0 && !strcmp(what, "read")) {
        FILE *f = fopen(file, "r");
        if (!f)
            printf("cannot open %s: %s\n", file, strerror(errno));
        else {
            printf("read: %s", fgets(line, sizeof line, f) ? line : "(empty)\n");
            fclose(f);
        }
    } else if (rank == 0 && !strcmp(what, "waitfile")) {
        while (access(file, F_OK) != 0)
            usleep(10000);
        printf("waited\n");
    } else if (rank == 0 && !strcmp(what, "waitfifo")) {
        FILE *f = fopen(file, "r");
        if (!f) {
            printf("cannot open %s: %s\n", file, strerror(errno));
        } else {
            while (fgets(line, sizeof line, f))
                ;
            fclose(f);
            printf("waited\n");
        }
    } else if (!strcmp(what, "stdin")) {
        if (rank == 0) {
            while (fgets(line, sizeof line, stdin))
                printf("stdin: %s", line);
            printf("EOF\n");
        } else {
            printf("rank %d stdin: %s\n", rank, fgets(line, sizeof line, stdin) ? "data" : "EOF");
        }
    } else if (!strcmp(what, "stdinsum")) {
        unsigned long long n = 0, h = 1469598103934665603ull;
        ssize_t got;
        char buf[65536];
        if (rank == 0) {
            while ((got = read(0, buf, sizeof buf)) > 0)
                for (ssize_t i = 0; i < got; i++) {
                    h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
                    n++;
                }
            printf("bytes=%llu fnv=%llx%s\n", n, h, got < 0 ? " (read error)" : "");
        } else if ((got = read(0, buf, sizeof buf)) != 0) {
            printf("rank %d: read(0) returned %zd, expected 0\n", rank, got);
        }
    } else if (rank == 0 && !strcmp(what, "cgroup")) {
        FILE *f = fopen("/proc/self/cgroup", "r");
        while (f && fgets(line, sizeof line, f))
            printf("cgroup %s", line);
        if (f) fclose(f);
        fflush(stdout);
        while (*file && access(file, F_OK) != 0)
            usleep(10000);
    } else if (rank == 0 && !strcmp(what, "oomscore")) {
        FILE *f = fopen("/proc/self/oom_score_adj", "r");
        printf("oom_score_adj %s", f && fgets(line, sizeof line, f) ? line : "unreadable\n");
        if (f) fclose(f);
    } else if (rank == 0 && !strcmp(what, "eat")) {
        size_t mib = (size_t)atol(file);
        for (size_t i = 0; i < mib; i++) {
            char *p = malloc(1 << 20);
            if (!p) {
                printf("malloc failed after %zu MiB\n", i);
                break;
            }
            memset(p, (int)i, 1 << 20);
        }
        printf("ate %zu MiB\n", mib);
    }
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("OK\n");
    MPI_Finalize();
    return 0;
}
