/* job_spawn.c — ranks a job starts while it runs (job_spawn.h). */
#include "job_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "host_app.h"
#include "job.h"
#include "job_thread.h"
#include "log.h"
#include "rank.h"

/* The ranks of one spawn: its programs and their ranks. */
struct spawn_batch {
    struct spawn_batch *next;
    uint32_t napps, n;
    struct job_app *apps; /* napps, each with its bytes in prog_bytes */
    uint8_t **prog_bytes;
    struct rank *ranks; /* n, of apps in order */
    uint32_t loaded;    /* ranks[0 .. loaded) have an image */
    uint32_t started;   /* ranks[0 .. started) have a thread */
    int first;          /* the spawn's first world rank (on every node of it) */
    /* [n], job thread only: the rank's end was told the agent (RanksSpawned.ended) */
    uint8_t *ended_told;
    /* j->mu: 0 the ranks wait before main, 1 they run it, -1 they end without (every node
     * of the spawn did not start its share: job_spawn_gate) */
    int gate;
};

struct job_spawn {
    const struct agent_config *cfg;
    uint32_t universe;
    /* The request of the rank thread being served, under j->mu: state 0 none, 1 posted, 2
     * taken by the job thread, 3 answered (rc, err). */
    int state;
    const struct tmpi_spawn_app *apps;
    int napps, first, rc;
    char *err;
    size_t errlen;
    uint32_t started; /* j->mu */
    int closed;       /* j->mu: the job thread serves no more spawns */
    /* Written by the job thread only (each batch once it is complete); read by the loop
     * thread's rank queries (job_spawn_ranks) too. */
    struct spawn_batch *_Atomic batches;
};

uint32_t job_spawn_universe(const struct job *j)
{
    return j->spawn ? j->spawn->universe : j->world_size;
}

int job_spawn_prepare(struct job *j, const struct agent_config *cfg, int ncpus)
{
    struct job_spawn *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    s->cfg = cfg;
    uint32_t u = j->world_size;
    if (j->spawn_universe) {
        /* placed by the launcher (a host file, -H, Slurm): the slots it gave each node
         * (JobAssign), the maps grown to them; on one node TMPI_UNIVERSE_SIZE agrees */
        if (j->spawn_universe > u) u = j->spawn_universe;
    } else if (ncpus > 0 && (uint32_t)ncpus > u) {
        u = (uint32_t)ncpus;
    }
    if (j->nnodes <= 1) {
        const char *v = job_getenv(j, "TMPI_UNIVERSE_SIZE");
        if (v && *v) {
            char *end;
            unsigned long n = strtoul(v, &end, 10);
            if (*end || v[0] == '-' || n < j->world_size || n > JOB_SPAWN_MAX_UNIVERSE) {
                char reason[200];
                snprintf(reason, sizeof reason,
                         "TMPI_UNIVERSE_SIZE=%s: not a number of ranks from the job's %u to %d", v,
                         j->world_size, JOB_SPAWN_MAX_UNIVERSE);
                free(s);
                job_cancel(j, 1, reason);
                return -EINVAL;
            }
            u = (uint32_t)n;
        }
    }
    if (u > j->world_size && j->nnodes <= 1) {
        int32_t *nr = realloc(j->node_of_rank, sizeof *nr * u);
        if (!nr) {
            free(s);
            return -ENOMEM;
        }
        j->node_of_rank = nr;
        int32_t *lr = realloc(j->local_rank_of, sizeof *lr * u);
        if (!lr) {
            free(s);
            return -ENOMEM;
        }
        j->local_rank_of = lr;
        /* one node: a spawned rank is on it, its local rank its world rank */
        for (uint32_t g = j->world_size; g < u; g++) {
            nr[g] = 0;
            lr[g] = (int32_t)g;
        }
    }
    s->universe = u;
    __atomic_store_n(&j->spawn, s, __ATOMIC_RELEASE); /* job_spawn_ranks reads it */
    return 0;
}

int job_spawn_request(struct job *j, const struct tmpi_spawn_app *apps, int napps, int first,
                      char *err, size_t errlen)
{
    struct job_spawn *s = j->spawn;
    if (!s) {
        snprintf(err, errlen, "the job cannot spawn ranks");
        return -ENOTSUP;
    }
    pthread_mutex_lock(&j->mu);
    while (s->state != 0 && !job_cancelled(j) && !s->closed)
        pthread_cond_wait(&j->cv, &j->mu);
    if (job_cancelled(j) || s->closed) {
        pthread_mutex_unlock(&j->mu);
        snprintf(err, errlen, "the job is ending%s",
                 s->closed ? " (its ranks on this node have ended)" : "");
        return -ECANCELED;
    }
    s->apps = apps;
    s->napps = napps;
    s->first = first;
    s->err = err;
    s->errlen = errlen;
    s->state = 1;
    pthread_cond_broadcast(&j->cv);
    /* once taken, the job thread answers whatever happens: the request lives on this stack */
    while (s->state != 3 && !(s->state == 1 && (job_cancelled(j) || s->closed)))
        pthread_cond_wait(&j->cv, &j->mu);
    int rc = s->state == 3 ? s->rc : -ECANCELED;
    if (s->state != 3) snprintf(err, errlen, "the job is ending");
    s->state = 0;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* The program command names: a path (relative to dir) if it has a '/', else the first
 * regular file of that name in path's directories, dir, then the job's PATH. */
static int find_program(struct job *j, const struct tmpi_spawn_app *a, const char *dir, char *out,
                        size_t len)
{
    struct stat st;
    if (strchr(a->command, '/')) {
        int n = a->command[0] == '/' ? snprintf(out, len, "%s", a->command)
                                     : snprintf(out, len, "%s/%s", dir, a->command);
        if (n < 0 || (size_t)n >= len) return -ENAMETOOLONG;
        return stat(out, &st) == 0 && S_ISREG(st.st_mode) ? 0 : -ENOENT;
    }
    const char *envpath = job_getenv(j, "PATH");
    const char *lists[3] = {a->path, dir, envpath ? envpath : "/usr/local/bin:/usr/bin:/bin"};
    for (int l = 0; l < 3; l++) {
        for (const char *p = lists[l]; p && *p;) {
            const char *e = strchr(p, ':');
            size_t dl = e ? (size_t)(e - p) : strlen(p);
            int n = snprintf(out, len, "%.*s/%s", (int)dl, dl ? p : ".", a->command);
            if (n > 0 && (size_t)n < len && stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
                if (out[0] != '/') {
                    char abs[PATH_MAX];
                    if ((size_t)snprintf(abs, sizeof abs, "%s/%s", j->cwd, out) >= sizeof abs)
                        return -ENAMETOOLONG;
                    snprintf(out, len, "%s", abs);
                }
                return 0;
            }
            p = e ? e + 1 : NULL;
        }
    }
    return -ENOENT;
}

static int read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > max) {
        int e = fstat(fd, &st) < 0 ? -errno : st.st_size > 0 ? -EFBIG : -ENOEXEC;
        close(fd);
        return e;
    }
    size_t size = (size_t)st.st_size, got = 0;
    uint8_t *b = malloc(size);
    if (!b) {
        close(fd);
        return -ENOMEM;
    }
    while (got < size) {
        ssize_t n = read(fd, b + got, size - got);
        if (n <= 0) {
            int e = n < 0 ? -errno : -EIO;
            free(b);
            close(fd);
            return e;
        }
        got += (size_t)n;
    }
    close(fd);
    *ret = b;
    *ret_size = size;
    return 0;
}

/* app's private libraries into v[*n], if its program is open here (host_app.h). */
static void add_lender(const struct job_app *app, const struct image_private **v, size_t *n)
{
    if (app->host && app->host->image_open) v[(*n)++] = &app->host->image.priv;
}

/* The private libraries of the programs this job host opened before app k of b (the job's,
 * earlier spawns', b's first k), whose masters app k borrows (image_private.h); ret->sets is
 * malloc'd (NULL: no memory). */
static void lenders(const struct job *j, const struct spawn_batch *b, uint32_t k,
                    struct image_private_lenders *ret)
{
    size_t n = j->napps + k;
    for (const struct spawn_batch *o = j->spawn->batches; o; o = o->next)
        n += o->napps;
    const struct image_private **v = calloc(n ? n : 1, sizeof *v);
    *ret = (struct image_private_lenders){v, 0};
    if (!v) return;
    for (uint32_t i = 0; i < j->napps; i++)
        add_lender(&j->apps[i], v, &ret->n);
    for (const struct spawn_batch *o = j->spawn->batches; o; o = o->next)
        for (uint32_t i = 0; i < o->napps; i++)
            add_lender(&o->apps[i], v, &ret->n);
    for (uint32_t i = 0; i < k; i++)
        add_lender(&b->apps[i], v, &ret->n);
}

/* One command into app (its directory, arguments and program open); 0 or a negative errno
 * with the reason in err. */
static int app_setup(struct job *j, struct spawn_batch *b, uint32_t k,
                     const struct tmpi_spawn_app *a, uint32_t first, char *err, size_t errlen)
{
    struct job_app *app = &b->apps[k];
    char dir[PATH_MAX], path[PATH_MAX];
    struct stat st;
    if (a->wdir && *a->wdir) {
        int n = a->wdir[0] == '/' ? snprintf(dir, sizeof dir, "%s", a->wdir)
                                  : snprintf(dir, sizeof dir, "%s/%s", j->cwd, a->wdir);
        if (n < 0 || (size_t)n >= sizeof dir || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "wdir %s: no such directory", a->wdir);
            return -ENOENT;
        }
    } else {
        snprintf(dir, sizeof dir, "%s", j->cwd);
    }
    int rc = find_program(j, a, dir, path, sizeof path);
    if (rc < 0) {
        snprintf(err, errlen, "%s: no such program%s%s", a->command, a->path ? " in " : "",
                 a->path ? a->path : "");
        return rc;
    }
    size_t size = 0;
    rc = read_file(path, j->spawn->cfg->max_program_size, &b->prog_bytes[k], &size);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path,
                 rc == -EFBIG ? "larger than max_program_size" : strerror(-rc));
        return rc;
    }
    int argc = 1;
    while (a->argv && a->argv[argc - 1])
        argc++;
    app->argv = calloc((size_t)argc + 1, sizeof *app->argv);
    app->program_name = strdup(a->command);
    app->cwd = strdup(dir);
    if (!app->argv || !app->program_name || !app->cwd) return -ENOMEM;
    app->argc = argc;
    for (int i = 0; i < argc; i++)
        if (!(app->argv[i] = strdup(i == 0 ? a->command : a->argv[i - 1]))) return -ENOMEM;
    app->first_rank = first;
    app->nprocs = (uint32_t)a->maxprocs;
    struct host_app *h = app->host;
    if ((rc = rank_argv_src_init(&h->args, app->argc, app->argv)) < 0) return rc;
    h->args_ready = 1;
    char label[64];
    snprintf(label, sizeof label, "tmpi-job%llu-spawned", (unsigned long long)j->id);
    const char *mine = job_getenv(j, "TMPI_SHARED_LIBS");
    char *shared = NULL;
    if (asprintf(&shared, "%s %s",
                 j->spawn->cfg->shared_libraries ? j->spawn->cfg->shared_libraries : "",
                 mine ? mine : "") < 0)
        return -ENOMEM;
    char why[400];
    struct image_private_lenders lend;
    lenders(j, b, k, &lend);
    rc = lend.sets
             ? image_program_open_after(&h->image, b->prog_bytes[k], size, label, shared,
                                        j->spawn->cfg->private_libraries, &lend, why, sizeof why)
             : -ENOMEM;
    if (!lend.sets) snprintf(why, sizeof why, "out of memory");
    free((void *)lend.sets);
    free(shared);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", a->command, why);
        return rc;
    }
    h->image_open = 1;
    return 0;
}

static int serve(struct job *j, struct spawn_batch *b, const struct tmpi_spawn_app *apps, int napps,
                 int first, char *err, size_t errlen)
{
    uint32_t total = 0;
    /* each command's world ranks lie in the universe beyond the world */
    for (int k = 0; k < napps; k++) {
        const struct tmpi_spawn_app *a = &apps[k];
        if (a->maxprocs < 1 || a->first < (int)j->world_size ||
            (uint64_t)a->first + (uint64_t)a->maxprocs > j->spawn->universe) {
            snprintf(err, errlen, "ranks %d..%d are not free slots of the universe (%u)", a->first,
                     a->first + a->maxprocs - 1, j->spawn->universe);
            return -EINVAL;
        }
        total += (uint32_t)a->maxprocs;
    }
    if (napps < 1 || first != apps[0].first) {
        snprintf(err, errlen, "a spawn is named by its first command's first rank, not %d", first);
        return -EINVAL;
    }
    /* Across nodes each node starts the spawn's ranks its slots hold (node_of_rank, fixed
     * when the job was assigned); the node of the spawning root asks the others. */
    uint32_t here = 0, local_size = 0;
    for (int k = 0; k < napps; k++)
        for (int i = 0; i < apps[k].maxprocs; i++)
            here += j->node_of_rank[(uint32_t)(apps[k].first + i)] == j->node;
    for (uint32_t g = 0; g < j->spawn->universe; g++)
        local_size += j->node_of_rank[g] == j->node;
    if (here == 0) {
        snprintf(err, errlen, "the spawn from rank %d has no rank on this node", first);
        return -EINVAL;
    }
    b->first = first;
    b->napps = (uint32_t)napps;
    b->apps = calloc((size_t)napps, sizeof *b->apps);
    b->prog_bytes = calloc((size_t)napps, sizeof *b->prog_bytes);
    b->ranks = calloc(here, sizeof *b->ranks);
    b->ended_told = calloc(here, 1);
    if (!b->apps || !b->prog_bytes || !b->ranks || !b->ended_told) return -ENOMEM;
    b->n = here;
    for (int k = 0; k < napps; k++)
        if (!(b->apps[k].host = host_app_new())) return -ENOMEM;
    for (int k = 0; k < napps; k++) {
        uint32_t g = (uint32_t)apps[k].first;
        int mine = 0;
        for (int i = 0; i < apps[k].maxprocs; i++)
            mine |= j->node_of_rank[g + (uint32_t)i] == j->node;
        b->apps[k].first_rank = g;
        int rc = mine ? app_setup(j, b, (uint32_t)k, &apps[k], g, err, errlen) : 0;
        if (rc < 0) return rc;
    }
    char why[400], label[64];
    /* i: the rank in the spawn's MPI_COMM_WORLD, command k's from base on */
    for (uint32_t k = 0, i = 0, base = 0, n = 0; k < b->napps; base += (uint32_t)apps[k++].maxprocs)
        for (i = 0; i < (uint32_t)apps[k].maxprocs; i++) {
            int w = apps[k].first + (int)i;
            if (j->node_of_rank[w] != j->node) continue;
            struct rank *r = &b->ranks[n++];
            r->job = j;
            r->app = &b->apps[k];
            r->spawn_batch = b;
            r->image.fd = -1;
            r->info = (struct tmpi_rank_info){
                .appnum = apps[k].appnum,
                .job_id = j->id,
                .rank = w,
                .size = (int)total,
                .node = j->nnodes > 1 ? j->node : 0,
                .nnodes = j->nnodes > 1 ? j->nnodes : 1,
                .local_rank = j->local_rank_of[w],
                .local_size = (int)local_size,
                .hostname = j->spawn->cfg->name,
                .node_of_rank = j->node_of_rank,
                .local_rank_of = j->local_rank_of,
                .net = j->nnodes > 1 ? j->net : NULL,
                .universe = (int)j->spawn->universe,
                .spawned = 1,
                .spawn_first = first,
                .spawn_size = (int)total,
                .spawn_rank = (int)(base + i),
            };
            snprintf(label, sizeof label, "tmpi-job%llu-rank%d", (unsigned long long)j->id,
                     r->info.rank);
            rank_vars_init(&r->vars);
            int rc = image_program_load(&r->app->host->image, label, &r->vars, &r->image, why,
                                        sizeof why);
            if (rc < 0) {
                snprintf(err, errlen, "cannot load %s for rank %d: %s", r->app->program_name,
                         r->info.rank, why);
                return rc;
            }
            b->loaded = n;
        }
    for (uint32_t k = 0; k < b->napps; k++)
        if (b->apps[k].host->image_open) image_program_loaded(&b->apps[k].host->image);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, j->spawn->cfg->rank_stack_size);
    int rc = 0;
    for (uint32_t i = 0; i < here && rc == 0; i++) {
        rc = -pthread_create(&b->ranks[i].thread, &attr, rank_thread_main, &b->ranks[i]);
        if (rc == 0) {
            b->ranks[i].thread_started = 1;
            /* job_spawn_ranks (the rank query thread) reads it unlocked */
            __atomic_store_n(&b->started, i + 1, __ATOMIC_RELEASE);
        }
    }
    pthread_attr_destroy(&attr);
    pthread_mutex_lock(&j->mu);
    j->spawn->started += b->started;
    pthread_mutex_unlock(&j->mu);
    if (rc < 0) {
        /* some run already: all or nothing is only kept by ending the job */
        snprintf(err, errlen, "cannot start spawned rank %d: %s", b->ranks[b->started].info.rank,
                 strerror(-rc));
        job_cancel(j, 1, err);
    }
    return rc;
}

/* RanksSpawned: ranks more started here, ended of the earlier ones (ended_untold). */
static void send_ranks_spawned(struct job *j, uint32_t ranks, uint32_t ended)
{
    Tmpi__RanksSpawned rs = TMPI__RANKS_SPAWNED__INIT;
    rs.ranks = ranks;
    rs.ended = ended;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_RANKS_SPAWNED;
    env.ranks_spawned = &rs;
    (void)job_send(j, &env);
}

/* The ranks of earlier spawns here that finalized (libtmpi then gave their world ranks back
 * to the universe, for later spawns), ended, or never ran, not told the agent yet: the agent
 * counts the job's live ranks (RanksSpawned.ended).  The job thread, j->mu not held. */
static uint32_t ended_untold(struct job *j, const struct spawn_batch *now)
{
    uint32_t n = 0;
    for (struct spawn_batch *b = atomic_load_explicit(&j->spawn->batches, memory_order_relaxed); b;
         b = b->next) {
        if (b == now || !b->ended_told) continue;
        pthread_mutex_lock(&j->mu);
        int unrun = b->gate < 0;
        pthread_mutex_unlock(&j->mu);
        for (uint32_t i = 0; i < b->started; i++) {
            struct rank *r = &b->ranks[i];
            if (b->ended_told[i]) continue;
            if (unrun || atomic_load(&r->finished) ||
                __atomic_load_n(&r->mpi_phase, __ATOMIC_ACQUIRE) == TMPI_PHASE_FINALIZED) {
                b->ended_told[i] = 1;
                n++;
            }
        }
    }
    return n;
}

int job_spawn_serve_locked(struct job *j)
{
    struct job_spawn *s = j->spawn;
    if (!s || s->state != 1) return 0;
    s->state = 2;
    pthread_mutex_unlock(&j->mu);
    struct spawn_batch *b = calloc(1, sizeof *b);
    int rc = b ? serve(j, b, s->apps, s->napps, s->first, s->err, s->errlen) : -ENOMEM;
    if (rc == -ENOMEM) snprintf(s->err, s->errlen, "out of memory");
    if (b) {
        b->next = atomic_load_explicit(&s->batches, memory_order_relaxed);
        atomic_store_explicit(&s->batches, b, memory_order_release);
    }
    if (rc == 0) {
        log_job(LOG_INFO, j->id, j->owner, "spawned %u rank(s) here of those from %d", b->n,
                s->first);
        /* the agent's count of the job's ranks (tmpictl jobs) */
        send_ranks_spawned(j, b->n, ended_untold(j, b));
    }
    pthread_mutex_lock(&j->mu);
    s->rc = rc;
    s->state = 3;
    pthread_cond_broadcast(&j->cv);
    return 1;
}

void job_spawn_tell_ended(struct job *j)
{
    if (!j->spawn) return;
    uint32_t ended = ended_untold(j, NULL);
    if (ended) send_ranks_spawned(j, 0, ended);
}

void job_spawn_close(struct job *j)
{
    if (!j->spawn) return;
    pthread_mutex_lock(&j->mu);
    j->spawn->closed = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

int job_spawn_wait_go(struct rank *r)
{
    struct job *j = r->job;
    struct spawn_batch *b = r->spawn_batch;
    pthread_mutex_lock(&j->mu);
    while (b->gate == 0 && !job_cancelled(j))
        pthread_cond_wait(&j->cv, &j->mu);
    int go = job_cancelled(j) ? -1 : b->gate > 0 ? 1 : 0;
    pthread_mutex_unlock(&j->mu);
    return go;
}

int job_spawn_gate(struct job *j, int first, int go)
{
    struct job_spawn *s = __atomic_load_n(&j->spawn, __ATOMIC_ACQUIRE);
    int rc = -ENOENT;
    pthread_mutex_lock(&j->mu);
    for (struct spawn_batch *b = s ? atomic_load_explicit(&s->batches, memory_order_acquire) : NULL;
         b; b = b->next)
        if (b->first == first && b->gate == 0) {
            b->gate = go ? 1 : -1;
            rc = 0;
        }
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    if (rc == 0 && !go)
        log_job(LOG_INFO, j->id, j->owner,
                "the spawn of ranks from %d failed on another node: its ranks here end unrun",
                first);
    return rc;
}

uint32_t job_spawn_ranks(struct job *j, struct rank **out, uint32_t cap)
{
    struct job_spawn *s = __atomic_load_n(&j->spawn, __ATOMIC_ACQUIRE);
    uint32_t n = 0;
    for (struct spawn_batch *b = s ? atomic_load_explicit(&s->batches, memory_order_acquire) : NULL;
         b; b = b->next)
        for (uint32_t i = 0, k = __atomic_load_n(&b->started, __ATOMIC_ACQUIRE); i < k; i++, n++)
            if (n < cap) out[n] = &b->ranks[i];
    return n;
}

uint32_t job_spawn_started_locked(const struct job *j)
{
    return j->spawn ? j->spawn->started : 0;
}

void job_spawn_join(struct job *j)
{
    for (struct spawn_batch *b = j->spawn ? atomic_load(&j->spawn->batches) : NULL; b; b = b->next)
        for (uint32_t i = 0; i < b->started; i++)
            pthread_join(b->ranks[i].thread, NULL);
}

void job_spawn_unload(struct job *j)
{
    for (struct spawn_batch *b = j->spawn ? atomic_load(&j->spawn->batches) : NULL; b; b = b->next)
        for (uint32_t i = 0; i < b->loaded; i++)
            job_rank_unload(&b->ranks[i]);
}

void job_spawn_free(struct job *j)
{
    struct job_spawn *s = j->spawn;
    if (!s) return;
    for (struct spawn_batch *b = atomic_load(&s->batches), *next; b; b = next) {
        next = b->next;
        for (uint32_t k = 0; b->apps && k < b->napps; k++) {
            struct job_app *app = &b->apps[k];
            host_app_free(app->host);
            for (int i = 0; app->argv && i < app->argc; i++)
                free(app->argv[i]);
            free(app->argv);
            free(app->program_name);
            free(app->cwd);
            free(b->prog_bytes[k]);
        }
        free(b->apps);
        free(b->prog_bytes);
        free(b->ranks);
        free(b->ended_told);
        free(b);
    }
    free(s);
    j->spawn = NULL;
}
