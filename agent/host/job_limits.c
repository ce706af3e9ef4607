/* job_limits.c — the kernel limits a job's size runs into (job_limits.h). */
#include "job_limits.h"

#include "stack_guard.h"

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>

long job_limits_maps_now(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return -errno;
    long n = 0;
    int c;
    while ((c = getc(f)) != EOF)
        if (c == '\n') n++;
    fclose(f);
    return n;
}

/* A sysctl's value, or -1 when it cannot be read (then nothing is checked against it). */
static long read_sysctl(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    long v = -1;
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

long job_limits_stack_maps(int carried)
{
    return carried && stack_guard_maps() == 0 ? 0 : JOB_LIMITS_STACK_MAPS;
}

int job_limits_check(uint32_t nprocs, uint32_t loaded, long maps_now, long maps_per_image,
                     long stack_maps, int file_per_image, char *why, size_t whylen)
{
    long left = nprocs > loaded ? (long)(nprocs - loaded) : 0;
    /* stacks of every rank come after loading, the images still to load before */
    long need = maps_now + left * maps_per_image + (long)nprocs * stack_maps + JOB_LIMITS_SLACK;
    long max = read_sysctl("/proc/sys/vm/max_map_count");
    if (max > 0 && need > max) {
        long want = 65536;
        while (want < need)
            want *= 2;
        snprintf(why, whylen,
                 "%u ranks need about %ld memory maps (%ld per rank) but vm.max_map_count is "
                 "%ld: raise it (as root: sysctl -w vm.max_map_count=%ld) or run fewer ranks "
                 "per node",
                 nprocs, need, maps_per_image + stack_maps, max, want);
        return -ENOMEM;
    }
    struct rlimit rl;
    /* a dlopen'ed image's memfd stays open for the job's life */
    if (file_per_image && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)nprocs + JOB_LIMITS_SLACK > rl.rlim_cur) {
        snprintf(why, whylen,
                 "%u ranks need %u open files (one per rank image) but the job host may open "
                 "%llu (RLIMIT_NOFILE, inherited from tmpid): raise LimitNOFILE= in tmpid's "
                 "unit or ulimit -n before starting tmpid",
                 nprocs, nprocs + JOB_LIMITS_SLACK, (unsigned long long)rl.rlim_cur);
        return -EMFILE;
    }
    return 0;
}

const char *job_limits_thread_hint(int err)
{
    if (err != EAGAIN) return "";
    return " (threads are bounded by kernel.threads-max, kernel.pid_max, the pids cgroup's "
           "pids.max and RLIMIT_NPROC; raise them, or set rank_switching = user to run the "
           "ranks on one carrier thread per CPU)";
}
