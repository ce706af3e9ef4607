/* job_spare.c — a member job host without ranks of its own (job_spare.h). */
#include "job_spare.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "dl_lock.h"
#include "host_app.h"
#include "job.h"
#include "job_spawn.h"
#include "job_thread.h"
#include "log.h"
#include "module_marker.h"
#include "svc.h"
#include "svc_init.h"

struct job_spare {
    struct tmpi_rank_info info; /* what libtmpi's job state is made from: no rank */
    tmpi_host_job_fn make_state;
    void *lib; /* libtmpi opened by its soname (the program's copies are dlopen'ed), or NULL */
};

int job_is_spare(const struct job *j)
{
    return j->net && j->nprocs == 0;
}

int job_spare_idle(struct job *j)
{
    if (!job_is_spare(j)) return 0;
    pthread_mutex_lock(&j->mu);
    int idle = j->nfinished >= job_spawn_started_locked(j);
    pthread_mutex_unlock(&j->mu);
    return idle;
}

int job_spare_load(struct job *j, char *err, size_t errlen)
{
    struct job_spare *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    j->spare = s;
    struct job_app *app = &j->apps[0];
    char why[400];
    int rc = job_app_open(j, app, 0, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errlen, "cannot open %s on %s: %s", app->program_name, j->agent->cfg.name,
                 why);
        return rc;
    }
    /* The program's master loaded libtmpi as one of its libraries: a lookup on its handle
     * finds libtmpi's symbols.  Without a master (each copy is dlopen'ed) libtmpi is not
     * loaded yet: it is found by its soname, as ld.so finds it for the copies. */
    void *sym = app->host->image.src.master
                    ? dlsym(app->host->image.src.master, TMPI_HOST_JOB_SYMBOL)
                    : NULL;
    if (!sym) {
        s->lib = dl_open(TMPI_LIB_NAME ".0", RTLD_NOW | RTLD_LOCAL);
        if (s->lib) sym = dlsym(s->lib, TMPI_HOST_JOB_SYMBOL);
    }
    if (!sym) {
        snprintf(err, errlen,
                 "%s on %s: its libtmpi has no %s (an older libtmpi), so MPI_Comm_spawn cannot "
                 "start ranks on this node of the host file",
                 app->program_name, j->agent->cfg.name, TMPI_HOST_JOB_SYMBOL);
        return -ENOTSUP;
    }
    s->make_state = (tmpi_host_job_fn)sym;
    return 0;
}

int job_spare_start(struct job *j)
{
    struct job_spare *s = j->spare;
    s->info = (struct tmpi_rank_info){
        .job_id = j->id,
        .rank = -1,
        .size = (int)j->world_size,
        .node = j->node,
        .nnodes = j->nnodes,
        .local_rank = -1,
        .local_size = 0,
        .hostname = j->agent->cfg.name,
        .node_of_rank = j->node_of_rank,
        .local_rank_of = j->local_rank_of,
        .net = j->net,
        .universe = (int)job_spawn_universe(j),
    };
    int rc = svc_host_job_state(j, &s->info, s->make_state);
    if (rc < 0) {
        char reason[300];
        snprintf(reason, sizeof reason, "cannot set up the job's state on %s for spawned ranks: %s",
                 j->agent->cfg.name, strerror(-rc));
        job_cancel(j, 1, reason);
        return rc;
    }
    uint32_t slots = 0;
    for (uint32_t g = j->world_size; g < job_spawn_universe(j); g++)
        slots += j->node_of_rank[g] == j->node;
    log_job(LOG_DEBUG, j->id, j->owner, "no ranks here: %u spawn slots wait for MPI_Comm_spawn",
            slots);
    return 0;
}

void job_spare_free(struct job *j)
{
    struct job_spare *s = j->spare;
    if (!s) return;
    if (s->lib) dl_close(s->lib);
    free(s);
    j->spare = NULL;
}
