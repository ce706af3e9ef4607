/* mstate.c — publishing what a rank is doing in MPI (mstate.h). */
#include "mstate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int tm_mst_init(struct tm_rank *me)
{
    memset(&me->mst, 0, sizeof me->mst);
    return -pthread_mutex_init(&me->mst.lock, NULL);
}

void tm_mst_destroy(struct tm_rank *me)
{
    pthread_mutex_destroy(&me->mst.lock);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tm_mst_publish(struct tm_rank *me, uint64_t since_ns)
{
    struct tm_mstate *m = &me->mst;
    struct tmpi_rank_mpi p = {.activity = TMPI_ACT_WAITING,
                              .peer = TMPI_PEER_NONE,
                              .peer_world = -1,
                              .tag = TMPI_TAG_NONE};
    /* A wait outside the calls that say what they wait for: an MPI call all the same. */
    p.call = m->call ? m->call : "MPI";
    /* the communicator, its peer and the tag, from the layer that knows communicators */
    if (m->call && me->job->mst_comm) me->job->mst_comm(me, m, &p);
    p.since_ns = since_ns ? since_ns : mono_ns();
    pthread_mutex_lock(&m->lock);
    p.sleeps = m->pub.sleeps;
    m->pub = p;
    pthread_mutex_unlock(&m->lock);
    m->published = 1;
}

void tm_mst_unpublish(struct tm_rank *me)
{
    struct tm_mstate *m = &me->mst;
    pthread_mutex_lock(&m->lock);
    m->pub.activity = TMPI_ACT_COMPUTING;
    m->pub.call = NULL;
    m->asleep = 0;
    pthread_mutex_unlock(&m->lock);
    m->published = 0;
}

void tm_mst_asleep(struct tm_rank *me, uint32_t seen)
{
    struct tm_mstate *m = &me->mst;
    pthread_mutex_lock(&m->lock);
    m->asleep = 1;
    m->wakes_seen = seen;
    m->pub.sleeps++;
    pthread_mutex_unlock(&m->lock);
}

void tm_mst_awake(struct tm_rank *me)
{
    struct tm_mstate *m = &me->mst;
    pthread_mutex_lock(&m->lock);
    m->asleep = 0;
    pthread_mutex_unlock(&m->lock);
}

void tm_mst_finalized(struct tm_rank *me)
{
    struct tm_mstate *m = &me->mst;
    pthread_mutex_lock(&m->lock);
    m->ended = 1;
    pthread_mutex_unlock(&m->lock);
}

void tm_mst_reopened(struct tm_rank *me)
{
    struct tm_mstate *m = &me->mst;
    pthread_mutex_lock(&m->lock);
    m->ended = 0;
    pthread_mutex_unlock(&m->lock);
}

void tm_mst_multiple(struct tm_rank *me)
{
    struct tm_mstate *m = &me->mst;
    pthread_mutex_lock(&m->lock);
    m->multiple = 1;
    pthread_mutex_unlock(&m->lock);
}

int tm_mst_rank_mpi(void *state, int world_rank, struct tmpi_rank_mpi *out)
{
    struct tm_job *j = state;
    if (world_rank < 0 || world_rank >= j->size) return -EINVAL;
    struct tm_rank *r = tm_job_rank(j, world_rank);
    struct tm_mstate *m = &r->mst;
    pthread_mutex_lock(&m->lock);
    *out = m->pub;
    /* after reading what the rank saw: a wake counted since shows as a difference */
    uint32_t wakes = atomic_load_explicit(&r->waker.wakes, memory_order_seq_cst);
    out->blocked = m->asleep && m->wakes_seen == wakes;
    if (m->ended) {
        out->activity = TMPI_ACT_ENDED;
        out->call = NULL;
        out->blocked = 0;
    } else if (m->multiple) {
        out->activity = TMPI_ACT_UNKNOWN;
        out->blocked = 0;
    }
    pthread_mutex_unlock(&m->lock);
    return 0;
}

int tm_mst_helpers_busy(void *state)
{
    struct tm_job *j = state;
    return atomic_load_explicit(&j->helpers_busy, memory_order_seq_cst);
}
