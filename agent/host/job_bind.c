/* job_bind.c — a job's binding policy and report (job_bind.h); hwloc is binding.c's. */
#include "job_bind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "binding.h"
#include "carrier.h"
#include "config.h"
#include "job.h"
#include "log.h"
#include "rank.h"

/* tmpid.conf [mpi] bind_to as a kind (config.c accepted the word). */
static int config_kind(const struct job *j)
{
    for (int k = BIND_KIND_NONE; k <= BIND_KIND_PACKAGE; k++)
        if (strcmp(j->cfg->bind_to, bind_kind_name((enum bind_kind)k)) == 0) return k;
    return BIND_KIND_DEFAULT;
}

int job_bind_prepare(struct job *j, uint32_t nthreads, char *reason, size_t rlen)
{
    /* the launch's --bind-to, else the node's bind_to, else the default below */
    int asked = j->bind_to != BIND_KIND_DEFAULT ? j->bind_to : config_kind(j);
    j->bind_kind = asked;
    /* Nothing to pin and nothing to show: no topology (it costs a few milliseconds). */
    if (asked == BIND_KIND_NONE && !j->report_bindings) return 0;
    /* The default looks at the ranks, not at the threads that run them: an oversubscribed
     * node is left to the kernel, as Open MPI does, also when carriers run its ranks.  Pinned
     * carriers of several job hosts sharing cores under load stalled jobs for minutes (the
     * nothing_lost stress across three loopback agents: 4 of 6 runs lost the 60 s deadline,
     * 0 of 6 unbound), while an unbound carrier simply moves to a free core. */
    if (asked == BIND_KIND_DEFAULT && j->nprocs > (uint32_t)j->ncpus && !j->report_bindings) {
        j->bind_kind = BIND_KIND_NONE;
        return 0;
    }
    int r = bind_topo_load(&j->topo);
    if (r < 0) {
        /* only a binding the launch asked for fails the job */
        if (j->bind_to == BIND_KIND_DEFAULT || asked == BIND_KIND_NONE) {
            log_warning("job %llu: cannot read the CPU topology (%s): its ranks are not bound",
                        (unsigned long long)j->id, strerror(-r));
            j->bind_kind = BIND_KIND_NONE;
            return 0;
        }
        snprintf(reason, rlen, "--bind-to %s: cannot read the CPU topology of %s: %s",
                 bind_kind_name(asked), j->cfg->name, strerror(-r));
        return r;
    }
    if (asked == BIND_KIND_DEFAULT) {
        uint32_t cores = bind_topo_cores(j->topo);
        uint32_t pus = bind_topo_count(j->topo, BIND_KIND_HWTHREAD);
        j->bind_kind = j->nprocs <= cores ? BIND_KIND_CORE
                       : j->nprocs <= pus ? BIND_KIND_HWTHREAD
                                          : BIND_KIND_NONE;
        log_debug("job %llu: %u thread(s) run its %u rank(s) here, %u core(s), %u hardware "
                  "thread(s): bound to %s by default",
                  (unsigned long long)j->id, nthreads, j->nprocs, cores, pus,
                  bind_kind_name(j->bind_kind));
    }
    return 0;
}

int job_bind_thread(struct job *j, uint32_t index, pthread_t thread, char *reason, size_t rlen)
{
    if (j->bind_kind == BIND_KIND_NONE || !j->topo) return 0;
    uint32_t first = j->bind_first + (j->global_rank ? (uint32_t)j->global_rank[0] : 0);
    int r = bind_thread(j->topo, j->bind_kind, first + index, thread);
    if (r == 0) return 0;
    if (j->bind_to == BIND_KIND_DEFAULT) {
        log_warning("job %llu: cannot bind thread %u to a %s (%s): it runs unbound",
                    (unsigned long long)j->id, index, bind_kind_name(j->bind_kind), strerror(-r));
        return 0;
    }
    snprintf(reason, rlen, "--bind-to %s: cannot bind rank thread %u on %s: %s",
             bind_kind_name(j->bind_kind), index, j->cfg->name, strerror(-r));
    return r;
}

static void send_line(struct job *j, struct rank *r, const char *text)
{
    Tmpi__Output out = TMPI__OUTPUT__INIT;
    out.rank = (uint32_t)r->info.rank;
    out.stream = 2;
    out.data.data = (uint8_t *)text;
    out.data.len = strlen(text);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_OUTPUT;
    env.output = &out;
    (void)job_send(j, &env); /* a launcher that is gone needs no report */
}

void job_bind_report(struct job *j)
{
    if (!j->report_bindings) return;
    char desc[BIND_LINE_MAX], line[BIND_LINE_MAX + 160];
    for (uint32_t i = 0; i < j->nprocs; i++) {
        struct rank *r = &j->ranks[i];
        if (!j->topo) {
            /* the default went on unbound (logged): say so rather than stay silent */
            snprintf(line, sizeof line, "[%s:rank %d] not bound: the CPU topology is unknown\n",
                     j->cfg->name, r->info.rank);
            send_line(j, r, line);
            continue;
        }
        pthread_t th = r->thread;
        char carrier[64] = "";
        if (r->carried && j->cpool) {
            struct carrier *home = r->carried->home;
            th = home->thread;
            snprintf(carrier, sizeof carrier, " on carrier %u of %u",
                     (unsigned)(home - j->cpool->carriers), j->cpool->ncarriers);
        }
        int rc = bind_describe(j->topo, th, (enum bind_kind)j->bind_kind, desc, sizeof desc);
        if (rc < 0) snprintf(desc, sizeof desc, "binding unknown: %s", strerror(-rc));
        snprintf(line, sizeof line, "[%s:rank %d] %s%s\n", j->cfg->name, r->info.rank, desc,
                 carrier);
        send_line(j, r, line);
    }
}

void job_bind_free(struct job *j)
{
    bind_topo_free(j->topo);
    j->topo = NULL;
}
