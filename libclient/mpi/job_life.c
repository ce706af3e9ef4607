/* job_life.c — creating and tearing down the per-job state (job_life.h, core/job.h). */
#include "job_life.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "asym_fence.h"
#include "coll_inter.h"
#include "coll_net.h"
#include "comm_mst.h"
#include "ctx.h"
#include "envelope_pool.h"
#include "inbox.h"
#include "inter_nbops.h"
#include "mstate.h"
#include "type.h"
#include "type_copy.h"
#include "net.h"
#include "net_p2p.h"
#include "xjob.h"
#include "wake_timer.h"
#include "xconn.h"
#include "net_wait.h"
#include "p2p_api.h"
#include "request.h"
#include "rma.h"
#include "dyn_net.h"
#include "userop.h"

#define TM_CTX_WORLD 1
#define TM_CTX_FIRST_FREE 3 /* 2 is MPI_COMM_SELF's, see comm.c */

static void job_free(struct tm_job *j)
{
    if (!j) return;
    /* Runners of non-blocking rounds first: they use the links and the leaders' mailboxes. */
    pthread_mutex_lock(&j->progs_lock);
    struct tm_cprog *progs = j->progs;
    pthread_mutex_unlock(&j->progs_lock);
    for (struct tm_cprog *p = progs; p; p = tm_cprog_next(p))
        tm_cprog_stop(p);
    /* file system threads (io/io_pool.h): they wake ranks */
    if (j->iop_free) j->iop_free(j);
    tm_dyn_stop(j);     /* MPI_Comm_spawn's threads: they use the links and the ranks too */
    tm_net_job_fini(j); /* before the mailboxes: unexpected entries may hold pool buffers */
    tm_xjob_fini(j);
    tm_wake_timers_stop_all(j); /* before the ranks they wake */
    if (j->ranks) {
        /* handed-off envelopes go home before any home cache is freed */
        for (int i = 0; i < j->size; i++)
            tm_handoff_drop(&j->ranks[i]);
        for (int i = 0; i < j->size; i++) {
            struct tm_rank *r = &j->ranks[i];
            if (atomic_load_explicit(&r->prog.state, memory_order_acquire)) r->prog.fini(r);
            tm_fb_free(r);
            tm_mbox_destroy(&r->mbox);
            tm_commtab_destroy(r);
            tm_req_pool_destroy(r);
            tm_envl_pool_destroy(&r->envs);
            tm_comm_fini_shared(&r->self);
            free(r->scratch);
            tm_dtype_tab_free(r);
            tm_f90_cache_free(r);
            tm_userop_tab_free(r);
            tm_win_tab_free(r);
            tm_msg_tab_free(r);
            tm_mst_destroy(r);
        }
        free(j->ranks);
    }
    if (j->spawn_free) j->spawn_free(j);
    free(j->spawn_taken);
    if (j->hw_free) j->hw_free(j);
    tm_comm_fini_shared(&j->world);
    tm_ctxs_fini(&j->ctxs);
    tm_cprog_free_all(j);
    pthread_mutex_destroy(&j->progs_lock);
    pthread_mutex_destroy(&j->wt_lock);
    pthread_mutex_destroy(&j->wins_lock);
    pthread_mutex_destroy(&j->open_lock);
    pthread_mutex_destroy(&j->spawn_lock);
    pthread_mutex_destroy(&j->hw_lock);
    free(j);
}

static void *job_create(const struct tmpi_rank_info *info, void *arg)
{
    const struct tmpi_svc *svc = arg;
    struct tm_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->svc = svc;
    pthread_mutex_init(&j->progs_lock, NULL);
    pthread_mutex_init(&j->wins_lock, NULL);
    pthread_mutex_init(&j->open_lock, NULL);
    pthread_mutex_init(&j->spawn_lock, NULL);
    pthread_mutex_init(&j->wt_lock, NULL);
    pthread_mutex_init(&j->hw_lock, NULL);
    /* Room for the ranks MPI_Comm_spawn may start (their mailboxes are reached by world rank
     * like any other), on every node of a job across nodes too: node_of_rank says which. */
    j->world_size = info->size;
    j->size = info->universe > info->size ? info->universe : info->size;
    atomic_init(&j->spawn_next, info->size);
    j->id = info->job_id;
    /* The agent's values come from tmpid.conf and are taken as they are: 0 means no
     * spinning, or no buffering of messages that are not yet expected. */
    j->eager_limit = svc->eager_limit;
    /* Envelope classes stop at 2 MiB; above that the heap class would make every eager
     * message a malloc. */
    if (j->eager_limit > ((size_t)64 << (TM_ENVL_NCLASS - 1)))
        j->eager_limit = (size_t)64 << (TM_ENVL_NCLASS - 1);
    j->coop_min = svc->coop_min;
    j->spin_ns = svc->spin_ns;
    /* Across nodes an answer takes a network round trip, longer than the intra-node budget;
     * a rank that blocks then needs a daemon and a futex wake to run again, while a spinning
     * one reads its links itself (wait.c).  So it spins longer. */
    if (info->net && j->spin_ns <= UINT64_MAX / 10) j->spin_ns *= 10;
    atomic_init(&j->cancelled, 0);
    atomic_init(&j->next_ctx, TM_CTX_FIRST_FREE);
    tm_ctxs_init(&j->ctxs);
    if (tm_comm_init_shared(&j->world, TM_CTX_WORLD, j->world_size, NULL) < 0) goto err;
    j->world.builtin = 1;
    j->ranks = aligned_alloc(TM_CACHELINE, sizeof *j->ranks * (size_t)j->size);
    if (!j->ranks) goto err;
    memset(j->ranks, 0, sizeof *j->ranks * (size_t)j->size);
    for (int i = 0; i < j->size; i++) {
        struct tm_rank *r = &j->ranks[i];
        r->job = j;
        r->rank = i;
        if (tm_mbox_init(&r->mbox) < 0) {
            j->size = i; /* job_free must only touch the initialised ones */
            goto err;
        }
        if (tm_mst_init(r) < 0) {
            tm_mbox_destroy(&r->mbox);
            j->size = i;
            goto err;
        }
    }
    /* the waits' upcalls (wait.h), before any rank can wait */
    j->wait_poll = tm_inbox_wait_poll;
    j->asym_fence = tmpi_asym_register();
    j->mst_comm = tm_comm_mst;
    j->type_release = tm_type_release;
    j->inter = &tm_inter_ops;
    j->inter_idup = tm_inb_idup;
    if (tm_net_job_init(j, info) < 0) goto err;
    /* the paths to other jobs (MPI_Comm_connect); their arrivals are network kinds too */
    if (tm_xjob_init(j) < 0) goto err;
    tm_xconn_register(j);
    j->net_consume = tm_xjob_consume;
    if (j->net) {
        j->wait_net = &tm_net_wait;
        /* one-sided communication's frames ride on the links too (net_proto.h) */
        if (tm_rma_net_register(j) < 0) goto err;
        /* and MPI_Comm_spawn's requests between the hosts */
        if (tm_spawn_net_register(j) < 0) goto err;
    }
    return j;
err:
    job_free(j);
    return NULL;
}

/* Agent thread, must not block: flag the job and kick every rank's wake word. */
static void job_wake_all(void *state)
{
    struct tm_job *j = state;
    atomic_store_explicit(&j->cancelled, 1, memory_order_seq_cst);
    for (int i = 0; i < j->size; i++)
        tm_wake_force(&j->ranks[i].waker);
    tm_cprog_wake_all(j);
}

static void job_destroy(void *state)
{
    job_free(state);
}

static const struct tmpi_client_ops tm_job_ops = {
    .wake_all = job_wake_all,
    .destroy = job_destroy,
    .net_header = tm_net_header,
    .net_frame = tm_net_frame,
    .tls_get = tm_tls_get,
    .tls_set = tm_tls_set,
    .rank_mpi = tm_mst_rank_mpi,
    .helpers_busy = tm_mst_helpers_busy,
    .xjob_frame = tm_xjob_upcall,
};

int tm_job_get(const struct tmpi_svc *svc, struct tm_job **ret_job)
{
    void *st = NULL;
    int r = svc->job_state(job_create, (void *)svc, &tm_job_ops, &st);
    if (r < 0) return r;
    if (!st) return -ENOMEM;
    *ret_job = st;
    return 0;
}

/* The job state of a job host without ranks (svc.h TMPI_HOST_JOB_SYMBOL): made as the first
 * MPI_Init makes it, from the info the job host hands job_state for its job thread. */
TM_API int tmpi_host_job_state(void);
TM_API int tmpi_host_job_state(void)
{
    const struct tmpi_svc *svc = tm_lib_load();
    if (!svc) return -ENOSYS;
    struct tm_job *j;
    return tm_job_get(svc, &j);
}
