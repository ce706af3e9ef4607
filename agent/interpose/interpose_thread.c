/* interpose_thread.c — threads a rank starts belong to the rank.
 *
 * A program may start its own threads (OpenMP-style helpers, I/O threads).  They inherit the
 * rank's context so that their output reaches the launcher and their exit(), abort() or
 * crash fails the job instead of ending the agent (rank_end and fault.c handle a thread that
 * is not the rank's main thread).  libtmpi finds their rank through this context (svc
 * rank_self) at their first MPI call, so under MPI_THREAD_MULTIPLE they call MPI for it; a job
 * whose program starts threads runs every rank on a thread of its own (carrier.c) unless
 * TMPI_RANK_SWITCHING=user: then a rank's pthread_join parks the rank, not its carrier
 * (carrier_join.h).
 *
 * pthread_exit on a rank's own thread ends the rank as a return from main would: the real one
 * would end the thread (or the carrier under other ranks) without the rank ever reporting its
 * end, and the job waited for it for ever. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "carrier_join.h"
#include "fault.h"
#include "job.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

struct rank_child {
    void *(*fn)(void *);
    void *arg;
    struct rank *rank;
    struct carrier_child *joinable; /* NULL unless a carried rank may join it parked */
    locale_t locale;                /* the rank's locale when it started the thread, or 0 */
};

/* However the thread ends (return, pthread_exit, exit from it, a fault, cancellation). */
static void child_gone(void *arg)
{
    const struct rank_child *c = arg;
    struct job *j = c->rank->job;
    carrier_child_ended(j, c->joinable);
    atomic_fetch_sub_explicit(&j->child_threads, 1, memory_order_release);
}

static void *rank_child_main(void *p)
{
    struct rank_child c = *(struct rank_child *)p;
    free(p);
    void *ret;
    pthread_cleanup_push(child_gone, &c);
    rank_set_current(c.rank);
    /* a process's new thread follows its global locale: the rank's (rank_locale.h) */
    if (c.locale) rank_locale_apply(c.locale);
    fault_thread_setup();
    ret = c.fn(c.arg);
    fault_thread_done();
    rank_set_current(NULL);
    pthread_cleanup_pop(1);
    return ret;
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static pthread_create_fn real;
    if (!real) {
        /* a benign race: every thread stores the same pointer */
        pthread_create_fn f = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    pthread_create_fn realfn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!realfn) return ENOSYS;
    struct rank *r = rank_current();
    if (!r) return realfn(t, attr, fn, arg);
    struct rank_child *c = malloc(sizeof *c);
    if (!c) return EAGAIN;
    int detached = PTHREAD_CREATE_JOINABLE;
    if (attr) pthread_attr_getdetachstate(attr, &detached);
    *c = (struct rank_child){
        .fn = fn, .arg = arg, .rank = r, .locale = rank_locale_for_thread(&r->libc.locale)};
    if (detached == PTHREAD_CREATE_JOINABLE) c->joinable = carrier_child_new(r->job);
    struct carrier_child *joinable = c->joinable; /* c is the thread's from here */
    struct job *j = r->job;
    atomic_fetch_add_explicit(&j->child_threads, 1, memory_order_relaxed);
    int rc = realfn(t, attr, rank_child_main, c);
    carrier_child_created(j, joinable, rc, rc == 0 ? *t : (pthread_t)0);
    if (rc != 0) {
        atomic_fetch_sub_explicit(&j->child_threads, 1, memory_order_relaxed);
        free(c);
    }
    return rc;
}

typedef int (*pthread_join_fn)(pthread_t, void **);

/* A carried rank that joins one of its threads parks until the thread ended, so that its
 * carrier runs the other ranks meanwhile (carrier_join.h); the real join then only collects it. */
EXPORT int pthread_join(pthread_t t, void **ret)
{
    struct rank *r = rank_current();
    if (r && r->carried) (void)carrier_child_wait(r->job, t);
    pthread_join_fn realfn = (pthread_join_fn)dlsym(RTLD_NEXT, "pthread_join");
    return realfn ? realfn(t, ret) : ENOSYS;
}

typedef int (*pthread_detach_fn)(pthread_t);

EXPORT int pthread_detach(pthread_t t)
{
    struct rank *r = rank_current();
    if (r && r->carried) carrier_child_forget(r->job, t);
    pthread_detach_fn realfn = (pthread_detach_fn)dlsym(RTLD_NEXT, "pthread_detach");
    return realfn ? realfn(t) : ENOSYS;
}

typedef void (*pthread_exit_fn)(void *) __attribute__((noreturn));

EXPORT __attribute__((noreturn)) void pthread_exit(void *ret)
{
    struct rank *r = rank_current();
    /* the rank's cleanup handlers and thread-local destructors do not run: its stack is left
     * by siglongjmp, as for exit() */
    if (r && rank_on_own_thread(r)) rank_end(RANK_END_CODE, 0, NULL);
    if (r) {
        /* a thread the rank started: what rank_child_main does after a return */
        fault_thread_done();
        rank_set_current(NULL);
    }
    pthread_exit_fn realfn = (pthread_exit_fn)dlsym(RTLD_NEXT, "pthread_exit");
    if (realfn) realfn(ret);
    /* without libc's pthread_exit nothing else can end just this thread */
    abort();
}
