/* io_pool.c — the job's file system threads (io_pool.h). */
#include "io_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper_thread.h"
#include "job.h"
#include "mpi.h"
#include "size_text.h"
#include "svc_conf.h"
#include "wait.h"

struct tm_iop {
    struct tm_job *job;
    int max;    /* TMPI_IO_THREADS (read-only once published) */
    size_t min; /* TMPI_IO_OFFLOAD_MIN (read-only once published) */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* lock: the queue, the threads and their count, how many wait for work, stop */
    struct tm_iop_task *head, **tail;
    pthread_t threads[TM_IOP_THREADS_MAX];
    int nthreads, idle, stop;
    _Atomic int started; /* nthreads, for tm_iop_threads without the lock */
};

static void *pool_main(void *arg)
{
    struct tm_iop *p = arg;
    struct tm_job *j = p->job;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->stop) {
            p->idle++;
            pthread_cond_wait(&p->cond, &p->lock);
            p->idle--;
        }
        struct tm_iop_task *t = p->head;
        if (!t) break; /* stopped, nothing queued */
        p->head = t->next;
        if (!p->head) p->tail = &p->head;
        pthread_mutex_unlock(&p->lock);
        atomic_fetch_add_explicit(&j->helpers_busy, 1, memory_order_seq_cst);
        t->ret = t->run(t);
        /* t is the rank's again once done is set: read what the wake needs first */
        struct tm_rank *owner = t->owner;
        atomic_store_explicit(&t->done, 1, memory_order_seq_cst); /* wait.h */
        tm_wake(&owner->waker);
        atomic_fetch_sub_explicit(&j->helpers_busy, 1, memory_order_seq_cst);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Starts one more thread (lock held), with the process's CPU mask: it works for every rank of
 * the node (helper_thread.h). */
static int thread_add(struct tm_iop *p)
{
    int err = tm_helper_thread_start(&p->threads[p->nthreads], pool_main, p);
    if (err) return err;
    p->nthreads++;
    atomic_store_explicit(&p->started, p->nthreads, memory_order_relaxed);
    return 0;
}

/* Queues t, starting a thread when none waits for work.  0, or an errno when no thread runs
 * that could take it (then nothing is queued). */
static int submit(struct tm_iop *p, struct tm_iop_task *t)
{
    pthread_mutex_lock(&p->lock);
    /* every queued task is a thread's that is not idle: more of them than idle threads wants
     * another thread */
    int queued = 0;
    for (struct tm_iop_task *q = p->head; q; q = q->next)
        queued++;
    if (p->idle <= queued && p->nthreads < p->max) {
        int err = thread_add(p);
        if (err && p->nthreads == 0) {
            pthread_mutex_unlock(&p->lock);
            return err;
        }
    }
    t->next = NULL;
    *p->tail = t;
    p->tail = &t->next;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

/* The job ends (mpi/job_life.c): no rank runs, so nothing is queued; the threads end. */
static void pool_free(struct tm_job *j)
{
    struct tm_iop *p = atomic_load_explicit(&j->iop, memory_order_acquire);
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->cond);
    int n = p->nthreads;
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < n; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
    atomic_store_explicit(&j->iop, NULL, memory_order_relaxed);
}

/* A setting's value fits this (a number of threads, a size). */
#define IOP_VALUE_MAX 64

/* One setting: the job's environment (-x VAR=...) wins over tmpid.conf's [io] key, which the
 * agent tells by key (svc_conf.h) into buf; src (srclen bytes) names where it came from, for
 * the error message.  NULL when neither sets it. */
static const char *setting(struct tm_rank *me, const char *env, const char *key, char *buf,
                           char *src, size_t srclen)
{
    const char *v = getenv(env);
    if (v && *v) {
        snprintf(src, srclen, "%s", env);
        return v;
    }
    snprintf(src, srclen, "tmpid.conf [io] %s", key);
    return tm_svc_conf(me->job->svc, "io", key, buf, IOP_VALUE_MAX) ? buf : NULL;
}

/* The pool's two limits from the settings: 0, or -1 with msg saying which one is wrong. */
static int iop_limits(struct tm_rank *me, int *max, size_t *min, char *msg, size_t len)
{
    char buf[IOP_VALUE_MAX], src[64];
    uint64_t n = 0;
    const char *v = setting(me, "TMPI_IO_THREADS", "threads", buf, src, sizeof src);
    if (v) {
        if (size_text_parse(v, "", TM_IOP_THREADS_MAX, &n) < 0) {
            snprintf(msg, len, "%s=\"%s\": not a number of threads from 0 to %d", src, v,
                     TM_IOP_THREADS_MAX);
            return -1;
        }
        *max = (int)n;
    }
    v = setting(me, "TMPI_IO_OFFLOAD_MIN", "offload_min", buf, src, sizeof src);
    if (v) {
        if (size_text_parse(v, "kmg", SIZE_MAX, &n) < 0) {
            snprintf(msg, len, "%s=\"%s\": not a size (bytes, or a number with k, m or g)", src, v);
            return -1;
        }
        *min = (size_t)n;
    }
    return 0;
}

int tm_iop_setup(struct tm_rank *me, char *msg, size_t len)
{
    struct tm_job *j = me->job;
    if (atomic_load_explicit(&j->iop, memory_order_acquire)) return MPI_SUCCESS;
    int max = TM_IOP_THREADS_DEFAULT;
    size_t min = TM_IOP_MIN_DEFAULT;
    if (iop_limits(me, &max, &min, msg, len) < 0) return MPI_ERR_OTHER;
    struct tm_iop *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(msg, len, "out of memory");
        return MPI_ERR_NO_MEM;
    }
    p->job = j;
    p->max = max;
    p->min = min;
    p->tail = &p->head;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    struct tm_iop *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&j->iop, &none, p, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        /* another rank of the node made it first */
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return MPI_SUCCESS;
    }
    /* only the maker writes it; the job's end reads it after every rank ended */
    j->iop_free = pool_free;
    return MPI_SUCCESS;
}

static int task_done(void *arg)
{
    struct tm_iop_task *t = arg;
    return atomic_load_explicit(&t->done, memory_order_seq_cst);
}

int tm_iop_call(struct tm_rank *me, struct tm_iop_task *t, size_t bytes)
{
    struct tm_iop *p = atomic_load_explicit(&me->job->iop, memory_order_acquire);
    if (!p || p->max == 0 || bytes < p->min || !tm_wait_parks(me)) return t->run(t);
    t->owner = me;
    atomic_store_explicit(&t->done, 0, memory_order_relaxed);
    if (submit(p, t) != 0) return t->run(t);
    (void)tm_park_until(me, task_done, t); /* a carried rank: it parks */
    return t->ret;
}

int tm_iop_threads(struct tm_rank *me)
{
    struct tm_iop *p = atomic_load_explicit(&me->job->iop, memory_order_acquire);
    return p ? atomic_load_explicit(&p->started, memory_order_relaxed) : 0;
}
