/* harness.c — a unit-test stand-in for the agent's side of agent/svc.h (harness.h). */
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "svc.h"

struct th_job {
    struct tmpi_rank_info *infos;
    int32_t *node_of_rank, *local_rank_of;
    int size;
    pthread_mutex_t lock;
    void *state;
    struct tmpi_client_ops ops;
    int have_state;
    _Atomic int cancelled;
    _Atomic int runnable;
    _Atomic int phase_init, phase_fin;
    /* results: lock */
    int *codes;
    int aborted, abort_code;
    char abort_why[256];
    th_rank_fn fn;
    void *arg;
};

struct th_thread {
    struct th_job *job;
    int rank;
    pthread_t tid;
};

/* The test program runs one job at a time: this is it. */
static struct th_job *th_cur_job;
static __thread struct th_thread *th_self;

static const struct tmpi_rank_info *svc_rank_self(void)
{
    return th_self ? &th_self->job->infos[th_self->rank] : NULL;
}

static int svc_job_state(void *(*create)(const struct tmpi_rank_info *, void *), void *arg,
                         const struct tmpi_client_ops *ops, void **ret_state)
{
    struct th_job *j = th_self->job;
    pthread_mutex_lock(&j->lock);
    if (!j->have_state) {
        j->state = create(&j->infos[th_self->rank], arg);
        j->have_state = 1;
        if (j->state) j->ops = *ops;
    }
    void *st = j->state;
    pthread_mutex_unlock(&j->lock);
    if (!st) return -ENOMEM;
    *ret_state = st;
    return 0;
}

static void record(struct th_job *j, int rank, int code)
{
    pthread_mutex_lock(&j->lock);
    j->codes[rank] = code;
    pthread_mutex_unlock(&j->lock);
}

__attribute__((noreturn)) static void svc_rank_exit(int code)
{
    record(th_self->job, th_self->rank, code);
    pthread_exit(NULL);
}

__attribute__((noreturn)) static void svc_job_abort(int code, const char *why)
{
    struct th_job *j = th_self->job;
    pthread_mutex_lock(&j->lock);
    int first = !j->aborted;
    if (first) {
        j->aborted = 1;
        j->abort_code = code;
        snprintf(j->abort_why, sizeof j->abort_why, "%s", why);
    }
    j->codes[th_self->rank] = code;
    pthread_mutex_unlock(&j->lock);
    if (first) {
        atomic_store(&j->cancelled, 1);
        if (j->state && j->ops.wake_all) j->ops.wake_all(j->state);
    }
    pthread_exit(NULL);
}

static void svc_rank_mpi_phase(int phase)
{
    struct th_job *j = th_self->job;
    if (phase == TMPI_PHASE_INIT)
        atomic_fetch_add(&j->phase_init, 1);
    else if (phase == TMPI_PHASE_FINALIZED)
        atomic_fetch_add(&j->phase_fin, 1);
}

static int svc_job_cancelled(void)
{
    return atomic_load(&th_self->job->cancelled);
}
static int svc_runnable_ranks(void)
{
    return atomic_load(&th_cur_job->runnable);
}
static void svc_rank_blocking(int delta)
{
    atomic_fetch_add(&th_self->job->runnable, delta);
}

/* Exported: libtmpi finds it with dlsym(RTLD_DEFAULT, "tmpi_svc") (link with export_dynamic). */
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
};

static void *rank_main(void *p)
{
    struct th_thread *t = p;
    th_self = t;
    int code = t->job->fn(t->rank, t->job->size, t->job->arg);
    record(t->job, t->rank, code);
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int th_run(const struct th_opts *o, th_rank_fn fn, void *arg, struct th_result *ret)
{
    int n = o->nranks;
    struct th_job *j = calloc(1, sizeof *j);
    struct th_thread *th = calloc((size_t)n, sizeof *th);
    if (!j || !th) abort();
    j->size = n;
    j->fn = fn;
    j->arg = arg;
    j->infos = calloc((size_t)n, sizeof *j->infos);
    j->node_of_rank = calloc((size_t)n, sizeof(int32_t));
    j->local_rank_of = calloc((size_t)n, sizeof(int32_t));
    j->codes = calloc((size_t)n, sizeof(int));
    if (!j->infos || !j->node_of_rank || !j->local_rank_of || !j->codes) abort();
    static uint64_t next_job_id = 1;
    uint64_t id = next_job_id++;
    for (int i = 0; i < n; i++) {
        j->local_rank_of[i] = i;
        j->infos[i] = (struct tmpi_rank_info){.job_id = id,
                                              .rank = i,
                                              .size = n,
                                              .node = 0,
                                              .nnodes = 1,
                                              .local_rank = i,
                                              .local_size = n,
                                              .hostname = "harness",
                                              .node_of_rank = j->node_of_rank,
                                              .local_rank_of = j->local_rank_of};
    }
    pthread_mutex_init(&j->lock, NULL);
    atomic_init(&j->runnable, n);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    tmpi_svc.ncpus = o->ncpus ? o->ncpus : (int)(cpus > 0 ? cpus : 1);
    /* the agent always fills these from tmpid.conf; 0 here picks its defaults */
    tmpi_svc.spin_ns = o->spin_ns ? o->spin_ns : 20000;
    tmpi_svc.eager_limit = o->eager_limit ? o->eager_limit : 16384;
    th_cur_job = j;

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    double t0 = now();
    for (int i = 0; i < n; i++) {
        th[i].job = j;
        th[i].rank = i;
        if (pthread_create(&th[i].tid, &attr, rank_main, &th[i]) != 0) {
            fprintf(stderr, "harness: pthread_create failed\n");
            abort();
        }
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i].tid, NULL);
    double t1 = now();
    pthread_attr_destroy(&attr);

    struct th_result res = {.failed_rank = -1, .seconds = t1 - t0};
    for (int i = 0; i < n; i++) {
        if (j->codes[i] && res.failed_rank < 0) {
            res.failed_rank = i;
            res.code = j->codes[i];
        }
    }
    res.aborted = j->aborted;
    res.abort_code = j->abort_code;
    snprintf(res.abort_why, sizeof res.abort_why, "%s", j->abort_why);
    if (j->state && j->ops.destroy) j->ops.destroy(j->state);
    th_cur_job = NULL;
    pthread_mutex_destroy(&j->lock);
    free(j->infos);
    free(j->node_of_rank);
    free(j->local_rank_of);
    free(j->codes);
    free(j);
    free(th);
    if (ret) *ret = res;
    return res.failed_rank >= 0 || res.aborted;
}

int th_main(int argc, char **argv, const struct th_test *tests)
{
    int failed = 0, ran = 0;
    for (const struct th_test *t = tests; t->name; t++) {
        int want = argc <= 1;
        for (int i = 1; i < argc; i++)
            want |= strcmp(argv[i], t->name) == 0;
        if (!want) continue;
        double t0 = now();
        int r = t->run();
        printf("%s %s (%.3f s)\n", r ? "FAIL" : "PASS", t->name, now() - t0);
        fflush(stdout);
        failed += r != 0;
        ran++;
    }
    printf("%d tests, %d failed\n", ran, failed);
    return failed ? 1 : (ran ? 0 : 1);
}
