/* helper_thread.c — threads of libtmpi's own, unpinned (helper_thread.h). */
#include "helper_thread.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

int tm_helper_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    int err = pthread_attr_init(&attr);
    if (err) return err;
    cpu_set_t all;
    CPU_ZERO(&all);
    /* the system calls themselves: a rank's getpid and sched_getaffinity answer the rank's
     * (agent/interpose/interpose_proc.c), and the thread wants the process's */
    if (syscall(SYS_sched_getaffinity, (pid_t)syscall(SYS_getpid), sizeof all, &all) > 0)
        (void)pthread_attr_setaffinity_np(&attr, sizeof all, &all); /* best effort: inherit */
    err = pthread_create(t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return err;
}
