/* interpose.c — process-ending calls, for rank threads.  The output overrides are in
 * interpose_stdio.c, the environment in interpose_env.c. */
#include "interpose.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

/* Filled once (pthread_once), read-only afterwards.  Resolved lazily too, so that any
 * program linking the agent's modules (unit tests) gets working libc calls. */
static struct interpose_real real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static int real_status;

#define RESOLVE(name)                                                                              \
    do {                                                                                           \
        *(void **)&real.name = dlsym(RTLD_NEXT, #name);                                            \
        if (!real.name) return -ENOENT;                                                            \
    } while (0)

static int resolve_all(void)
{
    RESOLVE(exit);
    RESOLVE(abort);
    RESOLVE(write);
    RESOLVE(vfprintf);
    RESOLVE(vdprintf);
    RESOLVE(fputs);
    RESOLVE(puts);
    RESOLVE(fputc);
    RESOLVE(fwrite);
    RESOLVE(fflush);
    RESOLVE(perror);
    RESOLVE(getenv);
    RESOLVE(sigaction);
    RESOLVE(signal);
    return 0;
}

static void resolve_once(void)
{
    real_status = resolve_all();
}

/* The child of a rank's fork() is a process of its own, not a rank of the job: its exit,
 * _exit and abort must end it with its status (they would unwind to the rank's exit point in a
 * copy of the job host), so its one thread runs as an agent thread does. */
static void forked_child(void)
{
    rank_set_current(NULL);
}

int interpose_init(void)
{
    pthread_once(&real_once, resolve_once);
    /* Now, while only one thread runs: resolved lazily, pthread_once would hold its lock across
     * dlsym, which takes the loader's lock, while a thread inside dlopen (the agent's fabric
     * probe loading libfabric, whose libnuma reads a file from its constructor) holds the
     * loader's lock and calls the override; each waited for the other at agent start-up. */
    interpose_stdin_resolve();
    if (real_status == 0 && pthread_atfork(NULL, NULL, forked_child) != 0) return -ENOMEM;
    return real_status;
}

const struct interpose_real *interpose_real(void)
{
    pthread_once(&real_once, resolve_once);
    return &real;
}

ssize_t interpose_real_write(int fd, const void *buf, size_t n)
{
    const struct interpose_real *rl = interpose_real();
    if (rl->write) return rl->write(fd, buf, n);
    return (ssize_t)syscall(SYS_write, fd, buf, n);
}

EXPORT void exit(int code)
{
    if (rank_current()) rank_end(RANK_END_CODE, code, NULL);
    interpose_real()->exit(code);
}

/* _exit and _Exit end a rank without its exit handlers (rank_exit.h). */
EXPORT void _exit(int code)
{
    struct rank *r = rank_current();
    if (r) {
        if (rank_on_own_thread(r)) r->libc.exit.skip = 1;
        rank_end(RANK_END_CODE, code, NULL);
    }
    syscall(SYS_exit_group, code);
    __builtin_unreachable();
}

EXPORT void _Exit(int code)
{
    _exit(code);
}

EXPORT void abort(void)
{
    if (rank_current()) rank_end(RANK_END_ABORT, 128 + SIGABRT, "called abort()");
    interpose_real()->abort();
}
