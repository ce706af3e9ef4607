/* interpose_proc.c — what a rank learns about its process: its pid, its umask, the CPUs it
 * may run on and how many there are (rank_proc.h).
 *
 * getpid: a rank with a thread of its own answers that thread's id.  Users of a process per
 * rank expect every rank of a node to have its own pid (temporary names built from it,
 * srand(getpid()), "host:pid" as an identity); the thread id is one the kernel gives no other
 * process or thread while the rank runs, so it collides with nothing, and the kernel accepts
 * it where a pid goes: kill(getpid(), s) reaches the job host as kill of the real pid does
 * (a signal to a thread id is sent to its whole process), /proc/PID/ names the rank's thread,
 * sched_getaffinity(getpid()) and sched_setaffinity answer and move the rank's own thread.
 * A carried rank (carrier.h) has no thread of its own, shares its carrier's with other ranks
 * and moves between carriers: it answers the job host's pid, as every rank did before.
 * raise() goes through libc's own thread id and still signals the calling thread.
 *
 * CPUs: a rank on a thread of its own is pinned there (job_bind.h), so the kernel's answer
 * for its thread is already the rank's.  A carried rank may run on any of its job's carriers:
 * sched_getaffinity and pthread_getaffinity_np of its own context answer their union.  When
 * the job's ranks are bound, sysconf(_SC_NPROCESSORS_ONLN) and get_nprocs count the rank's
 * CPUs (what OpenBLAS and OpenMP size their pools by); unbound, they count the node's online
 * CPUs as they do for any process. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "interpose.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

static struct rank *proc_rank(void)
{
    struct rank *r = rank_current();
    return r && r->proc.ready ? r : NULL;
}

EXPORT pid_t getpid(void)
{
    struct rank *r = proc_rank();
    if (r) return r->proc.pid;
    return INTERPOSE_REAL(pid_t(*)(void), getpid)();
}

EXPORT mode_t umask(mode_t mask)
{
    struct rank *r = proc_rank();
    if (!r) return INTERPOSE_REAL(mode_t(*)(mode_t), umask)(mask);
    return (mode_t)atomic_exchange_explicit(&r->proc.umask, (unsigned)mask & 0777,
                                            memory_order_relaxed);
}

/* Whether pid names the calling carried rank itself: 0, its getpid(), or its carrier's thread
 * id asked from the rank's own context. */
static int carried_self(const struct rank *r, pid_t pid)
{
    if (!r->carried || !rank_on_own_thread(r)) return 0;
    return pid == 0 || pid == r->proc.pid || pid == (pid_t)syscall(SYS_gettid);
}

/* cpus into the caller's set of size bytes, as the kernel fills one: -EINVAL when a CPU of it
 * does not fit, the bytes past it zero. */
static int copy_cpus(const cpu_set_t *cpus, size_t size, cpu_set_t *set)
{
    for (int c = (int)(size * 8); c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, cpus)) return -EINVAL;
    size_t n = size < sizeof *cpus ? size : sizeof *cpus;
    memcpy(set, cpus, n);
    if (size > n) memset((char *)set + n, 0, size - n);
    return 0;
}

typedef int (*getaff_fn)(pid_t, size_t, cpu_set_t *);
typedef int (*pgetaff_fn)(pthread_t, size_t, cpu_set_t *);

EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
    struct rank *r = proc_rank();
    if (r && carried_self(r, pid)) {
        int rc = copy_cpus(&r->proc.carrier_cpus, size, set);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        return 0;
    }
    return INTERPOSE_REAL(getaff_fn, sched_getaffinity)(pid, size, set);
}

EXPORT int pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *set)
{
    struct rank *r = proc_rank();
    if (r && pthread_equal(t, pthread_self()) && carried_self(r, 0))
        return -copy_cpus(&r->proc.carrier_cpus, size, set);
    return INTERPOSE_REAL(pgetaff_fn, pthread_getaffinity_np)(t, size, set);
}

/* The CPUs of a bound rank, or 0 (not bound, or unknown). */
static long bound_cpus(const struct rank *r)
{
    if (!r->proc.bound) return 0;
    if (r->carried) return CPU_COUNT(&r->proc.carrier_cpus);
    cpu_set_t set;
    /* the rank's own thread, also when one it started asks */
    if (INTERPOSE_REAL(getaff_fn, sched_getaffinity)(r->proc.pid, sizeof set, &set) == 0 ||
        INTERPOSE_REAL(getaff_fn, sched_getaffinity)(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    return 0;
}

/* glibc's own entry point of sysconf. */
long __sysconf(int name);

/* Sanitizer runtimes call sysconf while they initialise, before any instrumented code may run
 * (ThreadSanitizer crashed in its own init when this function or the ones it calls were
 * instrumented): every other name goes straight to glibc, and this function itself is not
 * instrumented. */
__attribute__((no_sanitize_thread, no_sanitize_address)) EXPORT long sysconf(int name)
{
    if (name != _SC_NPROCESSORS_ONLN) return __sysconf(name);
    struct rank *r = proc_rank();
    long n;
    if (r && name == _SC_NPROCESSORS_ONLN && (n = bound_cpus(r)) > 0) return n;
    return INTERPOSE_REAL(long (*)(int), sysconf)(name);
}

EXPORT int get_nprocs(void)
{
    struct rank *r = proc_rank();
    long n;
    if (r && (n = bound_cpus(r)) > 0) return (int)n;
    return INTERPOSE_REAL(int (*)(void), get_nprocs)();
}
