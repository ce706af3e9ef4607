/* wake_timer.c — a deadline for a rank's wait (wake_timer.h). */
#include "wake_timer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "helper_thread.h"
#include "job.h"
#include "wait.h"

/* mu guards stop; expired is set once, under mu, before the wake.  The thread is joined by
 * tm_wake_timer_stop, which frees the timer. */
struct tm_wake_timer {
    struct tm_wake_timer *next; /* the job's armed timers (wt_lock) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    struct tm_rank *rank;
    struct timespec deadline;
    int stop;
    int counted; /* in the job's helpers_busy: armed, so the job is not stuck */
    _Atomic int expired;
};

/* mu held: the timer no longer counts as work in flight (once). */
static void uncount(struct tm_wake_timer *t)
{
    if (!t->counted) return;
    t->counted = 0;
    atomic_fetch_sub_explicit(&t->rank->job->helpers_busy, 1, memory_order_seq_cst);
}

static void *timer_main(void *arg)
{
    struct tm_wake_timer *t = arg;
    pthread_mutex_lock(&t->mu);
    int rc = 0;
    while (!t->stop && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&t->cv, &t->mu, &t->deadline);
    if (!t->stop) {
        atomic_store(&t->expired, 1);
        tm_wake(&t->rank->waker);
        uncount(t);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

struct tm_wake_timer *tm_wake_timer_start(struct tm_rank *me, int64_t ms)
{
    if (ms < 0) return NULL;
    struct tm_wake_timer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->rank = me;
    atomic_init(&t->expired, 0);
    clock_gettime(CLOCK_MONOTONIC, &t->deadline);
    t->deadline.tv_sec += (time_t)(ms / 1000);
    t->deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t->deadline.tv_nsec >= 1000000000L) {
        t->deadline.tv_sec++;
        t->deadline.tv_nsec -= 1000000000L;
    }
    pthread_condattr_t at;
    pthread_condattr_init(&at);
    pthread_condattr_setclock(&at, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &at);
    pthread_condattr_destroy(&at);
    pthread_mutex_init(&t->mu, NULL);
    /* the deadlock watch: a rank that waits with a deadline is not stuck (mstate.h) */
    t->counted = 1;
    struct tm_job *j = me->job;
    atomic_fetch_add_explicit(&j->helpers_busy, 1, memory_order_seq_cst);
    if (tm_helper_thread_start(&t->th, timer_main, t) != 0) {
        atomic_fetch_sub_explicit(&j->helpers_busy, 1, memory_order_seq_cst);
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return NULL;
    }
    pthread_mutex_lock(&j->wt_lock);
    t->next = j->wtimers;
    j->wtimers = t;
    pthread_mutex_unlock(&j->wt_lock);
    return t;
}

int tm_wake_timer_expired(struct tm_wake_timer *t)
{
    return t && atomic_load(&t->expired);
}

void tm_wake_timer_stop(struct tm_wake_timer *t)
{
    if (!t) return;
    struct tm_job *j = t->rank->job;
    pthread_mutex_lock(&j->wt_lock);
    for (struct tm_wake_timer **pp = &j->wtimers; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    pthread_mutex_unlock(&j->wt_lock);
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    uncount(t);
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    /* the thread is out of the timer (and of libtmpi's code) before it goes */
    pthread_join(t->th, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

void tm_wake_timers_stop_all(struct tm_job *j)
{
    for (;;) {
        pthread_mutex_lock(&j->wt_lock);
        struct tm_wake_timer *t = j->wtimers;
        pthread_mutex_unlock(&j->wt_lock);
        if (!t) return;
        tm_wake_timer_stop(t);
    }
}
