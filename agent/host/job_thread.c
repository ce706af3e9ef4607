/* job_thread.c — the job host's job thread and its parts of a job (job_thread.h). */
#include "job_thread.h"

#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "carrier.h"
#include "carrier_join.h"
#include "frame.h"
#include "host_app.h"
#include "host_proc.h"
#include "job.h"
#include "job_bind.h"
#include "job_limits.h"
#include "job_net.h"
#include "job_pools.h"
#include "host_signal.h"
#include "job_spare.h"
#include "job_spawn.h"
#include "jobhost.h"
#include "log.h"
#include "output.h"
#include "rank.h"
#include "rank_argv.h"

void job_fail(struct job *j, struct rank *r, int kind, int code, const char *msg)
{
    char reason[400];
    int status;
    switch (kind) {
    case RANK_END_ABORT:
        status = 128 + SIGABRT;
        snprintf(reason, sizeof reason, "rank %d %s", r->info.rank, msg ? msg : "aborted");
        break;
    case RANK_END_MPI_ABORT:
        status = code;
        snprintf(reason, sizeof reason, "rank %d: %s", r->info.rank,
                 msg ? msg : "MPI_Abort called");
        break;
    case RANK_END_FAULT:
        status = code ? code : 1;
        snprintf(reason, sizeof reason, "rank %d failed: %s", r->info.rank, msg ? msg : "fault");
        break;
    default:
        status = code;
        if (msg)
            snprintf(reason, sizeof reason, "rank %d %s", r->info.rank, msg);
        else
            snprintf(reason, sizeof reason, "rank %d exited with code %d", r->info.rank, code);
        break;
    }
    if (j->nnodes > 1) {
        /* across nodes, the launcher also learns where the rank ran */
        size_t len = strlen(reason);
        snprintf(reason + len, sizeof reason - len, " (on %s)", j->agent->cfg.name);
    }
    job_fail_rank(j, r->info.rank, status, reason);
}

static void send_rank_exit(struct job *j, struct rank *r)
{
    Tmpi__RankExit re = TMPI__RANK_EXIT__INIT;
    re.rank = (uint32_t)r->info.rank;
    re.kind = (Tmpi__ExitKind)r->end_kind;
    re.code = r->end_code;
    re.message = r->end_msg;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_RANK_EXIT;
    env.rank_exit = &re;
    (void)job_send(j, &env);
}

void job_rank_finished(struct job *j, struct rank *r)
{
    int kind = r->end_kind;
    if (kind == RANK_END_CODE && r->end_code != 0)
        job_fail(j, r, kind, r->end_code, r->end_msg[0] ? r->end_msg : NULL);
    else if (kind == RANK_END_CODE && r->mpi_phase == TMPI_PHASE_INIT && !job_cancelled(j))
        job_fail(
            j, r, kind, 1,
            "exited without calling MPI_Finalize (or MPI_Session_finalize of an open session)");
    else if (kind == RANK_END_ABORT || kind == RANK_END_FAULT || kind == RANK_END_MPI_ABORT)
        job_fail(j, r, kind, r->end_code, r->end_msg[0] ? r->end_msg : NULL);
    send_rank_exit(j, r);
    atomic_store(&r->finished, 1);
    pthread_mutex_lock(&j->mu);
    j->nfinished++;
    /* the job thread waits for spawned ranks too (job_spawn.h) */
    if (j->nfinished >= j->nprocs) pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void send_job_end(struct job *j)
{
    pthread_mutex_lock(&j->mu);
    int already = j->end_sent;
    j->end_sent = 1;
    Tmpi__JobEnd je = TMPI__JOB_END__INIT;
    je.job_id = j->id;
    je.exit_status = j->failed ? j->exit_status : 0;
    je.failed_rank = j->failed ? j->fail_rank : -1;
    je.reason = j->failed ? j->reason : "";
    pthread_mutex_unlock(&j->mu);
    if (already) return;
    if (j->before_end) j->before_end(j);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_END;
    env.job_end = &je;
    (void)job_send(j, &env);
}

static void send_job_started(struct job *j)
{
    Tmpi__JobStarted js = TMPI__JOB_STARTED__INIT;
    js.job_id = j->id;
    js.nprocs = j->nprocs;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_STARTED;
    env.job_started = &js;
    (void)job_send(j, &env);
}

/* Each program's arguments, shared by its ranks (rank_argv.h). */
static int prepare_args(struct job *j)
{
    for (uint32_t k = 0; k < j->napps; k++) {
        struct job_app *app = &j->apps[k];
        int rc = rank_argv_src_init(&app->host->args, app->argc, app->argv);
        if (rc < 0) {
            char reason[160];
            snprintf(reason, sizeof reason, "cannot prepare the arguments of the ranks on %s: %s",
                     j->agent->cfg.name, strerror(-rc));
            job_cancel(j, 1, reason);
            return rc;
        }
        app->host->args_ready = 1;
    }
    return 0;
}

int job_app_open(struct job *j, struct job_app *app, int appnum, char *err, size_t errlen)
{
    char label[64];
    int rc = 0;
    snprintf(label, sizeof label, "tmpi-job%llu-program%d", (unsigned long long)j->id, appnum);
    /* libraries the admin (tmpid.conf) and the job (-x TMPI_SHARED_LIBS) keep shared */
    const char *mine = job_app_getenv(j, app, "TMPI_SHARED_LIBS");
    char *shared = NULL;
    if (asprintf(&shared, "%s %s",
                 j->agent->cfg.shared_libraries ? j->agent->cfg.shared_libraries : "",
                 mine ? mine : "") < 0) {
        shared = NULL;
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
    }
    /* the programs opened before lend their libraries' masters (image_private.h) */
    struct image_private_lenders lend = {0};
    const struct image_private **earlier = calloc(j->napps, sizeof *earlier);
    if (!earlier && rc == 0) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
    }
    for (uint32_t k = 0; earlier && k < j->napps; k++)
        if (j->apps[k].host->image_open) earlier[lend.n++] = &j->apps[k].host->image.priv;
    lend.sets = earlier;
    if (rc == 0)
        rc = image_program_open_after(&app->host->image, app->prog->bytes, app->prog->size, label,
                                      shared, j->agent->cfg.private_libraries, &lend, err, errlen);
    free(earlier);
    free(shared);
    if (rc == 0 && app->host->image.priv.n)
        log_job(LOG_INFO, j->id, j->owner, "%s: %zu libraries copied per rank", app->program_name,
                app->host->image.priv.n);
    if (rc == 0 && app->host->image.priv_note[0])
        log_job(LOG_NOTICE, j->id, j->owner, "%s: %s", app->program_name,
                app->host->image.priv_note);
    app->host->image_open = rc == 0;
    if (rc == 0 && app->host->image.why_dlopen[0])
        log_job(LOG_INFO, j->id, j->owner, "each copy of %s is dlopen'ed: %s", app->program_name,
                app->host->image.why_dlopen);
    return rc;
}

/* Loads every rank's copy from its program (loader.h): copies of one program share its
 * read-only pages through one template memfd, closed once all are loaded (their mappings keep
 * it). */
static int load_images(struct job *j)
{
    char err[400], reason[480], label[64];
    long maps_first = -1;
    int rc0 = prepare_args(j);
    if (rc0 == 0) rc0 = job_pools_size(j);
    if (rc0 < 0) return rc0;
    for (uint32_t i = 0; i < j->nprocs; i++) {
        struct rank *r = &j->ranks[i];
        int g = r->info.rank;
        struct job_app *app = r->app;
        int rc = 0;
        if (!app->host->image_open) rc = job_app_open(j, app, r->info.appnum, err, sizeof err);
        if (rc == 0) {
            snprintf(label, sizeof label, "tmpi-job%llu-rank%d", (unsigned long long)j->id, g);
            rank_vars_init(&r->vars);
            rc = image_program_load(&app->host->image, label, &r->vars, &r->image, err, sizeof err);
        }
        if (rc < 0) {
            snprintf(reason, sizeof reason, "cannot load the program for rank %d on %s: %s", g,
                     j->agent->cfg.name, err);
            job_cancel(j, 1, reason);
            return rc;
        }
        if (job_cancelled(j)) return -ECANCELED;
        /* The maps one image takes, measured between the first and second (the first also
         * maps the libraries the program needs): checked once, before the limit is hit deep
         * into a big job's loading. */
        if (i == 0) maps_first = job_limits_maps_now();
        if (i == 1 && maps_first >= 0) {
            long now = job_limits_maps_now();
            char why[96];
            long stack_maps = job_limits_stack_maps(carrier_wanted(j, why, sizeof why) > 0);
            if (now >= 0 &&
                (rc = job_limits_check(j->nprocs, 2, now,
                                       now - maps_first + rank_argv_maps(&r->app->host->args),
                                       stack_maps, r->image.fd >= 0, err, sizeof err))) {
                snprintf(reason, sizeof reason, "cannot load %u ranks on %s: %s", j->nprocs,
                         j->agent->cfg.name, err);
                job_cancel(j, 1, reason);
                return rc;
            }
        }
    }
    for (uint32_t k = 0; k < j->napps; k++)
        if (j->apps[k].host->image_open) image_program_loaded(&j->apps[k].host->image);
    return 0;
}

/* The program a global rank runs (apps hold ascending blocks of ranks). */
static uint32_t app_of_rank(const struct job *j, int g)
{
    uint32_t k = 0;
    while (k + 1 < j->napps && (uint32_t)g >= j->apps[k + 1].first_rank)
        k++;
    return k;
}

static void init_rank_info(struct job *j, uint32_t i)
{
    struct rank *r = &j->ranks[i];
    int g = job_world_rank(j, i);
    uint32_t app = app_of_rank(j, g);
    r->job = j;
    r->app = &j->apps[app];
    r->image.fd = -1;
    r->info = (struct tmpi_rank_info){
        .appnum = (int)app,
        .job_id = j->id,
        .rank = g,
        .size = (int)j->world_size,
        .node = j->node,
        .nnodes = j->nnodes,
        .local_rank = (int)i,
        .local_size = (int)j->nprocs,
        .hostname = j->agent->cfg.name,
        .node_of_rank = j->node_of_rank,
        .local_rank_of = j->local_rank_of,
        /* A member that is the job's only node (a one-node Slurm allocation coordinated from
         * elsewhere) has no link: to the ranks it is a job on one node. */
        .net = j->nnodes > 1 ? j->net : NULL,
        .universe = (int)job_spawn_universe(j),
    };
}

static uint32_t start_ranks(struct job *j)
{
    char why[96], reason[480];
    j->host_umask = rank_proc_host_umask();
    int carried = carrier_wanted(j, why, sizeof why);
    if (carried < 0 ||
        job_bind_prepare(j, carried ? carrier_count(j) : j->nprocs, reason, sizeof reason) < 0) {
        job_cancel(j, 1, carried < 0 ? why : reason);
        job_open_gate(j, 0);
        return 0;
    }
    if (carried) return carriers_start(j);
    log_debug("job %llu: one thread per rank (%s)", (unsigned long long)j->id, why);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, j->agent->cfg.rank_stack_size);
    uint32_t started = 0;
    for (; started < j->nprocs; started++) {
        struct rank *r = &j->ranks[started];
        int rc = pthread_create(&r->thread, &attr, rank_thread_main, r);
        if (rc != 0) {
            snprintf(reason, sizeof reason, "cannot start rank %u on %s: %s%s", started,
                     j->agent->cfg.name, strerror(rc), job_limits_thread_hint(rc));
            job_cancel(j, 1, reason);
            break;
        }
        r->thread_started = 1;
        /* pinned before the gate opens: no user code runs unpinned */
        if (job_bind_thread(j, started, r->thread, reason, sizeof reason) < 0) {
            job_cancel(j, 1, reason);
            started++;
            break;
        }
    }
    pthread_attr_destroy(&attr);
    if (started == j->nprocs && !job_cancelled(j)) job_bind_report(j);
    /* All or nothing: the gate opens only if every rank thread exists. */
    job_open_gate(j, started == j->nprocs);
    return started;
}

void job_open_gate(struct job *j, int all_started)
{
    pthread_mutex_lock(&j->mu);
    j->gate = (all_started && !job_cancelled(j)) ? 1 : -1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void deadline_in(struct timespec *ts, unsigned sec)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += sec;
}

/* Waits for the started ranks, enforcing the timeout and the kill grace. */
static void wait_ranks(struct job *j, uint32_t started)
{
    struct timespec deadline;
    int have_deadline = j->timeout_sec > 0;
    if (have_deadline) deadline_in(&deadline, j->timeout_sec);
    int grace_armed = 0;

    /* A spare member (job_spare.h) serves spawns until its coordinator releases it, and its
     * spawned ranks until they end.  Its spawned ranks may all end while the job goes on
     * elsewhere and spawns here again (MPI_Comm_spawn in a loop), so it stays; it tells the
     * coordinator when they ended, which counts it idle again (and may release the job). */
    int spare = job_is_spare(j);
    pthread_mutex_lock(&j->mu);
    while (j->nfinished < started + job_spawn_started_locked(j) ||
           (spare && !j->released && !j->failed && !job_cancelled(j))) {
        if (job_spawn_serve_locked(j)) continue;
        if (spare && job_spawn_started_locked(j) > 0 &&
            j->nfinished >= job_spawn_started_locked(j)) {
            /* no new rank can start meanwhile: only this thread serves spawns */
            pthread_mutex_unlock(&j->mu);
            job_spawn_tell_ended(j);
            pthread_mutex_lock(&j->mu);
            if (j->released || j->failed || job_cancelled(j)) continue;
        }
        if (job_cancelled(j) && !grace_armed) {
            /* Ranks outside libtmpi cannot be interrupted; after the grace the launcher is
             * told anyway and the job stays "ending" until they stop. */
            deadline_in(&deadline, j->agent->cfg.kill_grace_sec);
            have_deadline = grace_armed = 1;
        }
        int rc = have_deadline ? pthread_cond_timedwait(&j->cv, &j->mu, &deadline)
                               : pthread_cond_wait(&j->cv, &j->mu);
        if (rc != ETIMEDOUT) continue;
        if (!grace_armed) {
            char reason[128];
            snprintf(reason, sizeof reason, "job timed out after %u s", j->timeout_sec);
            pthread_mutex_unlock(&j->mu);
            job_cancel(j, 124, reason);
            pthread_mutex_lock(&j->mu);
        } else {
            uint32_t left = started + job_spawn_started_locked(j) - j->nfinished;
            pthread_mutex_unlock(&j->mu);
            log_warning("job %llu: %u rank(s) still running %u s after the job was torn down",
                        (unsigned long long)j->id, left, j->agent->cfg.kill_grace_sec);
            send_job_end(j);
            pthread_mutex_lock(&j->mu);
            have_deadline = 0;
        }
    }
    pthread_mutex_unlock(&j->mu);
}

/* A member job, loaded or not: tells the coordinator, then waits for JobGo (every member
 * loaded and linked) or the end.  1 when the ranks may start. */
static int member_loaded(struct job *j, int ok)
{
    Tmpi__JobLoaded jl = TMPI__JOB_LOADED__INIT;
    char error[sizeof j->reason];
    pthread_mutex_lock(&j->mu);
    snprintf(error, sizeof error, "%s", ok ? "" : j->reason);
    pthread_mutex_unlock(&j->mu);
    jl.uid = j->net->uid;
    jl.ok = ok;
    jl.error = error;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_LOADED;
    env.job_loaded = &jl;
    (void)job_send(j, &env);
    if (!ok) return 0;
    pthread_mutex_lock(&j->mu);
    while (!j->go && !job_cancelled(j))
        pthread_cond_wait(&j->cv, &j->mu);
    int go = j->go && !job_cancelled(j);
    pthread_mutex_unlock(&j->mu);
    return go;
}

/* A member job whose ranks have ended reports it (JobEnd), then, if it succeeded, keeps its
 * links open until every member ended (JobRelease): another node may still be reading. */
static void member_ranks_ended(struct job *j)
{
    send_job_end(j);
    atomic_store(&j->ranks_ended, 1);
    pthread_mutex_lock(&j->mu);
    while (!j->released && !j->failed)
        pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
}

void job_send_link_traffic(struct job *j)
{
    Tmpi__ChannelTraffic ch[2];
    Tmpi__ChannelTraffic *chp[2] = {&ch[0], &ch[1]};
    job_net_traffic(j->net, ch);
    Tmpi__LinkTraffic lt = TMPI__LINK_TRAFFIC__INIT;
    lt.n_channels = 2;
    lt.channels = chp;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_LINK_TRAFFIC;
    env.link_traffic = &lt;
    (void)job_send(j, &env);
}
/* The job's end when its images cannot be unloaded: JobEnd (and JobUnloaded), then the job
 * host leaves without unloading (jobhost_abandon).  Job thread only; never returns. */
static void end_without_unload(struct job *j) __attribute__((noreturn));

static void send_job_unloaded(struct job *j)
{
    Tmpi__JobUnloaded ju = TMPI__JOB_UNLOADED__INIT;
    ju.uid = j->net->uid;
    ju.failed_rank = -1;
    ju.reason = "";
    pthread_mutex_lock(&j->mu);
    if (j->failed_in_unload) {
        ju.exit_status = j->exit_status;
        ju.failed_rank = j->fail_rank;
        ju.reason = j->reason;
    }
    pthread_mutex_unlock(&j->mu);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_UNLOADED;
    env.job_unloaded = &ju;
    (void)job_send(j, &env);
}

/* The job thread only loads, waits and unloads, but glibc's dlclose keeps arrays the size of
 * the whole link map on the stack (_dl_close_worker's maps[] of every loaded object and
 * _dl_sort_maps' work arrays: tens of bytes per object, one object per rank).  A fixed
 * 256 KiB ran out between 8,192 and 16,384 ranks and the last unload overflowed the stack
 * (SIGSEGV after the job's output); only the pages a job's size needs are ever touched. */
#define JOB_THREAD_STACK_BASE (256 * 1024)
#define JOB_THREAD_STACK_PER_RANK 64

static size_t job_thread_stack_size(uint32_t nprocs)
{
    return JOB_THREAD_STACK_BASE + (size_t)nprocs * JOB_THREAD_STACK_PER_RANK;
}

static double clock_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void job_rank_unload(struct rank *r)
{
    /* The copy's destructors (atexit handlers, static destructors) run now: whatever they
     * print goes to the launcher as the rank's output. */
    r->unloader = pthread_self();
    r->unloading = 1;
    rank_set_current(r);
    image_finish(&r->image);
    rank_set_current(NULL);
    rank_argv_free(&r->args);
    rank_proc_free(&r->proc);
    output_flush(r);
}

static void *job_thread(void *arg)
{
    struct job *j = arg;
    struct agent *a = j->agent;

    int spawn_ok = job_spawn_prepare(j, &a->cfg, a->ncpus) == 0;
    for (uint32_t i = 0; i < j->nprocs; i++)
        init_rank_info(j, i);
    uint32_t started = 0;
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    int run = spawn_ok && load_images(j) == 0;
    if (run && job_is_spare(j)) {
        char err[480];
        if (job_spare_load(j, err, sizeof err) < 0) {
            job_cancel(j, 1, err);
            run = 0;
        }
    }
    double t_load = clock_s(CLOCK_MONOTONIC), c_load = clock_s(CLOCK_THREAD_CPUTIME_ID);
    double t_start = t_load;
    if (j->net) run = member_loaded(j, run);
    if (run) {
        atomic_store(&j->state, JOB_RUNNING);
        if (!j->net) send_job_started(j);
        if (job_is_spare(j)) {
            run = job_spare_start(j) == 0;
            job_open_gate(j, run); /* the gate every rank passes, spawned ones too */
        } else
            started = start_ranks(j);
        t_start = clock_s(CLOCK_MONOTONIC);
        if (run) wait_ranks(j, started);
    }
    job_spawn_close(j);
    double t_run = clock_s(CLOCK_MONOTONIC);
    if (j->net) member_ranks_ended(j);
    atomic_store(&j->state, JOB_ENDING);
    if (j->cpool)
        carriers_join(j);
    else
        for (uint32_t i = 0; i < started; i++)
            pthread_join(j->ranks[i].thread, NULL);
    job_spawn_join(j);
    /* No frame may reach libtmpi once its state is gone. */
    if (j->net) job_net_close(j->net);

    /* libclient's per-job state goes before the images: the last dlclose unloads libtmpi. */
    pthread_mutex_lock(&j->client_mu);
    if (j->client_created && j->client_ops.destroy) j->client_ops.destroy(j->client_state);
    j->client_created = 0;
    pthread_mutex_unlock(&j->client_mu);
    carriers_free(j);
    host_signal_close();
    int left = atomic_load_explicit(&j->child_threads, memory_order_acquire);
    if (left > 0) {
        /* Unloading would pull the code from under them: the process ends instead, and they
         * with it; the images' destructors and atexit handlers do not run. */
        log_job(LOG_NOTICE, j->id, j->owner,
                "%d thread(s) the ranks started still run: the job ends without unloading", left);
        end_without_unload(j);
    }
    for (uint32_t i = 0; i < j->nprocs; i++)
        job_rank_unload(&j->ranks[i]);
    job_spawn_unload(j);

    /* what the rank count costs, phase by phase (docs/ARCHITECTURE.md "How many ranks") */
    log_job(LOG_DEBUG, j->id, j->owner,
            "%u ranks: loaded in %.3f s (%.3f s CPU), started in %.3f s, ran %.3f s, ended in "
            "%.3f s",
            j->nprocs, t_load - t0, c_load - c0, t_start - t_load, t_run - t_start,
            clock_s(CLOCK_MONOTONIC) - t_run);
    /* under mu: a cancel from the loop thread (the launcher's, a timeout) may still record
     * the first failure now */
    pthread_mutex_lock(&j->mu);
    int failed = j->failed;
    pthread_mutex_unlock(&j->mu);
    if (failed) atomic_fetch_add(&a->jobs_failed, 1);
    send_job_end(j);
    if (j->net) {
        job_send_link_traffic(j); /* the last count: the host leaves after JobUnloaded */
        send_job_unloaded(j);
    }
    for (uint32_t k = 0; k < j->napps; k++) {
        struct host_app *h = j->apps[k].host;
        if (h->image_open) image_program_close(&h->image);
        h->image_open = 0;
        progcache_release(&a->cache, j->apps[k].prog);
        j->apps[k].prog = NULL;
    }
    event_active(j->done_ev, 0, 0);
    return NULL;
}

static void end_without_unload(struct job *j)
{
    if (j->failed) atomic_fetch_add(&j->agent->jobs_failed, 1);
    send_job_end(j);
    if (j->net) send_job_unloaded(j);
    jobhost_abandon();
    for (;;)
        pause();
}

void job_end_in_unload(struct job *j, struct rank *r, int kind, int code, const char *msg)
{
    char why[160];
    if (kind == RANK_END_CODE) {
        snprintf(why, sizeof why, "exited with code %d in an atexit handler or destructor", code);
        msg = why;
    }
    if (!(kind == RANK_END_CODE && code == 0)) {
        job_fail(j, r, kind, code, msg);
        /* a member's JobEnd went before the unload: its JobUnloaded carries the failure */
        pthread_mutex_lock(&j->mu);
        j->failed_in_unload = j->failed;
        pthread_mutex_unlock(&j->mu);
    }
    output_flush(r);
    end_without_unload(j);
}

static void job_done_cb(evutil_socket_t fd, short what, void *arg)
{
    struct job *j = arg;
    pthread_join(j->thread, NULL);
    agent_job_done(j->agent, j);
}

/* host_parts start (job.h): the job thread of the job host's one job. */
static int host_job_start(struct job *j)
{
    struct agent *a = j->agent;
    /* each program's part here (host_app.h), freed by host_job_free */
    for (uint32_t k = 0; k < j->napps; k++)
        if (!j->apps[k].host && !(j->apps[k].host = host_app_new())) return -ENOMEM;
    j->done_ev = event_new(a->base, -1, 0, job_done_cb, j);
    if (!j->done_ev) return -ENOMEM;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, job_thread_stack_size(j->nprocs));
    int rc = pthread_create(&j->thread, &attr, job_thread, j);
    pthread_attr_destroy(&attr);
    if (rc != 0) return -rc;
    atomic_fetch_add(&a->jobs_started, 1);
    log_job(LOG_INFO, j->id, j->owner, "%u ranks of %s%s for %s (uid %u)", j->nprocs,
            j->program_name, j->napps > 1 ? " and other programs" : "", j->owner, (unsigned)j->uid);
    return 0;
}

/* host_parts free (job.h): also the spawned ranks' batches (job_spawn.h). */
static void host_job_free(struct job *j)
{
    for (uint32_t k = 0; j->apps && k < j->napps; k++) {
        host_app_free(j->apps[k].host);
        j->apps[k].host = NULL;
    }
    if (j->net) job_net_free(j->net);
    j->net = NULL;
    /* the job thread frees them after unloading; what a failed start left is freed here */
    for (uint32_t i = 0; j->ranks && i < j->nprocs; i++) {
        rank_argv_free(&j->ranks[i].args);
        rank_libc_free(&j->ranks[i].libc);
        rank_proc_free(&j->ranks[i].proc);
    }
    job_bind_free(j);
    job_spare_free(j);
    if (j->children) carrier_children_free(j); /* threads nobody joined */
    job_spawn_free(j); /* after the job thread: rank queries read its ranks until then */
}

static int host_on_rank_thread(void)
{
    return rank_current() != NULL;
}

const struct job_host_parts job_thread_parts = {
    .rank_size = sizeof(struct rank),
    .net_new = job_net_new,
    .net_stop_rx = job_net_stop_rx,
    .free = host_job_free,
    .start = host_job_start,
    .on_rank_thread = host_on_rank_thread,
};
