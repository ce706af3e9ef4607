/* host_ranks.c — the job host's answer to a RanksQuery (host_ranks.h). */
#include "host_ranks.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "frame.h"
#include "job.h"
#include "job_net.h"
#include "job_spawn.h"
#include "rank.h"
#include "svc.h"

static const char *activity_name(int a)
{
    switch (a) {
    case TMPI_ACT_WAITING:
        return "waiting";
    case TMPI_ACT_ENDED:
        return "ended";
    case TMPI_ACT_UNKNOWN:
        return "unknown";
    default:
        return "computing";
    }
}

static double mono_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int host_ranks_report(struct job *j, const Tmpi__RanksQuery *q, uint8_t **ret_buf, size_t *ret_len)
{
    /* the job's own ranks, then those MPI_Comm_spawn started here (job_spawn.h) */
    uint32_t nspawned = job_spawn_ranks(j, NULL, 0);
    struct rank **spawned = calloc(nspawned ? nspawned : 1, sizeof *spawned);
    if (!spawned) return -ENOMEM;
    job_spawn_ranks(j, spawned, nspawned); /* more may start meanwhile: the next query */
    uint32_t n = j->nprocs + nspawned;
    Tmpi__RankState *st = calloc(n ? n : 1, sizeof *st);
    Tmpi__RankState **ptrs = calloc(n ? n : 1, sizeof *ptrs);
    struct tmpi_rank_mpi *mpi = calloc(n ? n : 1, sizeof *mpi);
    char(*calls)[32] = calloc(n ? n : 1, sizeof *calls);
    if (!st || !ptrs || !mpi || !calls) {
        free(spawned);
        free(st);
        free(ptrs);
        free(mpi);
        free(calls);
        return -ENOMEM;
    }
    Tmpi__RanksReply rr = TMPI__RANKS_REPLY__INIT;
    rr.job_id = j->id;
    rr.query = q->query;
    rr.node = (uint32_t)j->node;
    /* The frame counters first, then the ranks: a frame handled after the counters were read
     * shows as a rank that is not blocked any more, or as a changed counter next time. */
    if (j->net) {
        rr.net_sent = atomic_load_explicit(&j->net->frames_sent, memory_order_seq_cst);
        rr.net_handled = atomic_load_explicit(&j->net->frames_handled, memory_order_seq_cst);
    }
    double now = mono_sec();
    /* libtmpi's state (and libtmpi itself) goes under client_mu at the job's end (job.c). */
    pthread_mutex_lock(&j->client_mu);
    int have = j->client_created && j->client_ops.rank_mpi;
    if (have && j->client_ops.helpers_busy)
        rr.helpers_busy = (uint32_t)j->client_ops.helpers_busy(j->client_state);
    for (uint32_t i = 0; i < n; i++) {
        /* From the job's own table, not ranks[i].info: the job's thread may still be writing
         * that when a query comes in (TSan) */
        int world = i < j->nprocs ? job_world_rank(j, i) : spawned[i - j->nprocs]->info.rank;
        if (!have || j->client_ops.rank_mpi(j->client_state, world, &mpi[i]) < 0)
            memset(&mpi[i], 0, sizeof mpi[i]);
        /* libtmpi's static string: copied while libtmpi surely stays loaded */
        snprintf(calls[i], sizeof calls[i], "%s", mpi[i].call ? mpi[i].call : "MPI");
    }
    pthread_mutex_unlock(&j->client_mu);
    /* A rank whose thread ended sends nothing any more, MPI_Finalize or not (a program
     * that never used MPI); a member whose ranks all ended waits for the others with libtmpi
     * gone. */
    int all_ended = atomic_load(&j->ranks_ended);
    /* atomics, no job lock: the loop thread must never wait for the job thread */
    for (uint32_t i = 0; i < n; i++) {
        struct rank *r = i < j->nprocs ? &j->ranks[i] : spawned[i - j->nprocs];
        if (all_ended || atomic_load(&r->finished)) mpi[i].activity = TMPI_ACT_ENDED;
    }
    for (uint32_t i = 0; i < n; i++) {
        Tmpi__RankState *s = &st[i];
        struct tmpi_rank_mpi *m = &mpi[i];
        tmpi__rank_state__init(s);
        s->rank =
            (uint32_t)(i < j->nprocs ? job_world_rank(j, i) : spawned[i - j->nprocs]->info.rank);
        s->activity = (char *)activity_name(m->activity);
        s->node = (char *)j->cfg->name;
        s->peer = TMPI_PEER_NONE;
        s->peer_world = -1;
        s->tag = TMPI_TAG_NONE;
        s->comm = (char *)"";
        s->call = (char *)"";
        if (m->activity == TMPI_ACT_WAITING) {
            s->call = calls[i];
            s->peer = m->peer;
            s->peer_is_dest = m->peer_is_dest != 0;
            s->peer_world = m->peer_world;
            s->tag = m->tag;
            s->comm = (char *)mpi[i].comm;
            s->comm_size = (uint32_t)m->comm_size;
            s->comm_world = m->comm_world != 0;
            double since = (double)m->since_ns / 1e9;
            s->waiting_sec = now > since ? now - since : 0;
            s->blocked = m->blocked != 0;
        }
        s->sleeps = m->sleeps;
        ptrs[i] = s;
    }
    rr.n_ranks = n;
    rr.ranks = ptrs;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_RANKS_REPLY;
    env.ranks_reply = &rr;
    int r = frame_encode(&env, FRAME_DEFAULT_MAX, ret_buf, ret_len);
    free(spawned);
    free(st);
    free(ptrs);
    free(mpi);
    free(calls);
    return r < 0 ? r : 0;
}
