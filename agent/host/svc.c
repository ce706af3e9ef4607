/* svc.c — the service table libtmpi finds in this process (svc.h). */
#include "svc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "agent.h"
#include "carrier.h"
#include "config_items.h"
#include "host_names.h"
#include "host_xjob.h"
#include "job.h"
#include "job_hostname.h"
#include "job_net.h"
#include "job_spawn.h"
#include "job_thread.h"
#include "rank.h"
#include "svc_init.h"

static const struct tmpi_rank_info *svc_rank_self(void)
{
    struct rank *r = rank_current();
    return r ? &r->info : NULL;
}

/* The job host's job (one per host), for the svc calls another node's request makes on a
 * thread of libtmpi's own (svc_spawn): set at the first job_state, before the links resume. */
static _Atomic(struct job *) svc_job;

/* The job thread of a job host without ranks while libtmpi makes the job's state there
 * (svc_host_job_state): the job and the info that state is made from.  Set on that thread for
 * that call only. */
static _Thread_local struct job *svc_boot_job;
static _Thread_local const struct tmpi_rank_info *svc_boot_info;

static int svc_job_state(void *(*create)(const struct tmpi_rank_info *, void *), void *arg,
                         const struct tmpi_client_ops *ops, void **ret_state)
{
    struct rank *r = rank_current();
    struct job *j = r ? r->job : svc_boot_job;
    const struct tmpi_rank_info *info = r ? &r->info : svc_boot_info;
    if (!j) return -EPERM;
    int rc = 0;
    pthread_mutex_lock(&j->client_mu);
    if (!j->client_created) {
        void *st = create(info, arg);
        if (!st) {
            rc = -ENOMEM;
        } else {
            j->client_state = st;
            j->client_ops = *ops;
            j->client_created = 1;
        }
    }
    if (rc == 0) *ret_state = j->client_state;
    pthread_mutex_unlock(&j->client_mu);
    if (rc == 0) atomic_store_explicit(&svc_job, j, memory_order_release);
    /* Frames from other nodes wait (paused links) until there is a state to take them. */
    if (rc == 0 && j->net) job_net_resume(j->net);
    return rc;
}

__attribute__((noreturn)) static void svc_rank_exit(int code)
{
    struct rank *r = rank_current();
    if (r && job_cancelled(r->job)) rank_end(RANK_END_KILLED, code, NULL);
    rank_end(RANK_END_CODE, code, NULL);
}

__attribute__((noreturn)) static void svc_job_abort(int code, const char *why)
{
    struct rank *r = rank_current();
    if (r) job_fail(r->job, r, RANK_END_MPI_ABORT, code, why);
    rank_end(RANK_END_MPI_ABORT, code, why);
}

static void svc_rank_mpi_phase(int phase)
{
    struct rank *r = rank_current();
    if (r) __atomic_store_n(&r->mpi_phase, phase, __ATOMIC_RELEASE);
}

static int svc_job_cancelled(void)
{
    struct rank *r = rank_current();
    return r ? job_cancelled(r->job) : 0;
}

static int svc_spawn(const struct tmpi_spawn_app *apps, int napps, int first, char *err,
                     size_t errlen)
{
    struct rank *r = rank_current();
    struct job *j = r ? r->job : atomic_load_explicit(&svc_job, memory_order_acquire);
    if (!j) return -EPERM;
    return job_spawn_request(j, apps, napps, first, err, errlen);
}

static int svc_spawn_gate(int first, int go)
{
    struct rank *r = rank_current();
    struct job *j = r ? r->job : atomic_load_explicit(&svc_job, memory_order_acquire);
    if (!j) return -EPERM;
    return job_spawn_gate(j, first, go);
}

int svc_host_job_state(struct job *j, const struct tmpi_rank_info *info, tmpi_host_job_fn make)
{
    svc_boot_job = j;
    svc_boot_info = info;
    int rc = make();
    svc_boot_job = NULL;
    svc_boot_info = NULL;
    return rc;
}

static int svc_host_nodes(const char *host, int *out, int cap)
{
    struct rank *r = rank_current();
    struct job *j = r ? r->job : atomic_load_explicit(&svc_job, memory_order_acquire);
    return j ? job_host_nodes(j, host, out, cap) : 0;
}

/* Set by svc_init before any rank exists; read-only afterwards. */
static struct agent *svc_agent;

static int svc_runnable_ranks(void)
{
    return atomic_load_explicit(&svc_agent->runnable_ranks, memory_order_relaxed);
}

static void svc_rank_blocking(int delta)
{
    struct rank *r = rank_current();
    if (r) rank_set_runnable(r, delta > 0);
}

static void *svc_pool_alloc(size_t bytes)
{
    return pool_get(&svc_agent->pool, bytes);
}

static void svc_pool_free(void *p, size_t bytes)
{
    pool_put(&svc_agent->pool, p, bytes);
}

static int svc_config_item(int i, const char **section, const char **key, char *buf, size_t len)
{
    return config_item_text(&svc_agent->cfg, i, section, key, buf, len);
}

static int svc_link_traffic(int channel, uint64_t out[4])
{
    struct rank *r = rank_current();
    if (!r || channel < 1 || channel > 2) return -1;
    out[0] = out[1] = out[2] = out[3] = 0;
    if (!r->job->net) return 0;
    Tmpi__ChannelTraffic ch[2];
    job_net_traffic(r->job->net, ch);
    const Tmpi__ChannelTraffic *c = &ch[channel - 1];
    out[0] = c->frames_sent;
    out[1] = c->bytes_sent;
    out[2] = c->frames_received;
    out[3] = c->bytes_received;
    return 0;
}

static void svc_pool_usage(uint64_t *used, uint64_t *capacity)
{
    *used = atomic_load_explicit(&svc_agent->pool.used, memory_order_relaxed);
    *capacity = svc_agent->cfg.pool_size;
}

/* A rank waits for its agent's name service (host_names.h): not runnable meanwhile. */
static int svc_name_op(int op, const char *service, const char *port, char *out, size_t cap)
{
    svc_rank_blocking(-1);
    int rc = host_name_op(op, service, port, out, cap);
    svc_rank_blocking(+1);
    return rc;
}

__attribute__((visibility("default"))) struct tmpi_svc tmpi_svc = {
    .abi = TMPI_SVC_ABI,
    .rank_self = svc_rank_self,
    .job_state = svc_job_state,
    .rank_exit = svc_rank_exit,
    .job_abort = svc_job_abort,
    .rank_mpi_phase = svc_rank_mpi_phase,
    .job_cancelled = svc_job_cancelled,
    .runnable_ranks = svc_runnable_ranks,
    .rank_blocking = svc_rank_blocking,
    .net_send = job_net_send,
    .net_poll = job_net_poll,
    .net_hold = job_net_hold,
    .net_release = job_net_release,
    .pool_alloc = svc_pool_alloc,
    .pool_free = svc_pool_free,
    .rank_park = carrier_park,
    .rank_yield = carrier_yield,
    .config_item = svc_config_item,
    .link_traffic = svc_link_traffic,
    .pool_usage = svc_pool_usage,

    .spawn = svc_spawn,
    .spawn_gate = svc_spawn_gate,
    .name_op = svc_name_op,
    .net_mr_reg = job_net_mr_reg,
    .net_mr_dereg = job_net_mr_dereg,
    .net_put = job_net_put,
    .net_get = job_net_get,
    .xjob_send = host_xjob_send,
    .host_nodes = svc_host_nodes,
    .net_atomic_ok = job_net_atomic_ok,
    .net_atomic = job_net_atomic,
};

void svc_init(struct agent *a)
{
    svc_agent = a;
    tmpi_svc.ncpus = a->ncpus;
    tmpi_svc.spin_ns = a->cfg.spin_ns;
    tmpi_svc.eager_limit = a->cfg.intra_eager_limit;
    tmpi_svc.coop_min = a->cfg.intra_coop_min;
    tmpi_svc.net_eager_limit = a->cfg.eager_limit;
}
