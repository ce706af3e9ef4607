#include "rank_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "binding.h"
#include "carrier.h"
#include "job.h"
#include "rank.h"

extern char **environ; /* the job host's own: never a rank's (rank_vars.h) */

/* The variables scripts and libraries written for other MPIs find their place by, and ours
 * (docs/USER.md "What your ranks see").  Open MPI's NODE_RANK counts the processes of every
 * job on the node: with one job per host process that is the local rank; TMPI_NODE_RANK is
 * the node's index among the job's nodes. */
enum proc_value { V_RANK, V_SIZE, V_LOCAL_RANK, V_LOCAL_SIZE, V_NODE, V_UNIVERSE };

static const struct {
    const char *name;
    enum proc_value v;
} proc_vars[] = {
    {"OMPI_COMM_WORLD_RANK", V_RANK},
    {"OMPI_COMM_WORLD_SIZE", V_SIZE},
    {"OMPI_COMM_WORLD_LOCAL_RANK", V_LOCAL_RANK},
    {"OMPI_COMM_WORLD_LOCAL_SIZE", V_LOCAL_SIZE},
    {"OMPI_COMM_WORLD_NODE_RANK", V_LOCAL_RANK},
    {"OMPI_UNIVERSE_SIZE", V_UNIVERSE},
    {"PMI_RANK", V_RANK},
    {"PMI_SIZE", V_SIZE},
    {"PMIX_RANK", V_RANK},
    {"MPI_LOCALRANKID", V_LOCAL_RANK},
    {"MPI_LOCALNRANKS", V_LOCAL_SIZE},
    {"TMPI_RANK", V_RANK},
    {"TMPI_SIZE", V_SIZE},
    {"TMPI_LOCAL_RANK", V_LOCAL_RANK},
    {"TMPI_LOCAL_SIZE", V_LOCAL_SIZE},
    {"TMPI_NODE_RANK", V_NODE},
};

static int proc_value(const struct tmpi_rank_info *in, enum proc_value v)
{
    switch (v) {
    case V_RANK: /* a spawned rank's is in its own MPI_COMM_WORLD */
        return in->spawned ? in->spawn_rank : in->rank;
    case V_SIZE:
        return in->size;
    case V_LOCAL_RANK:
        return in->local_rank;
    case V_LOCAL_SIZE:
        return in->local_size;
    case V_NODE:
        return in->node;
    case V_UNIVERSE: /* MPI_UNIVERSE_SIZE (job_spawn.h) */
        return in->universe > in->size ? in->universe : in->size;
    }
    return -1;
}

char ***rank_proc_environ(struct rank *r)
{
    return &RANK_VAR(&r->vars, RANK_VAR_ENVIRON, char **);
}

/* What job_app_getenv answered over the process environment, then the rank's own. */
static int env_build(struct rank *r, const char *cwd)
{
    struct rank_env *e = &r->proc.env;
    char ***slot = rank_proc_environ(r);
    *slot = NULL;
    int rc = 0;
    for (char **v = environ; v && *v && rc == 0; v++)
        rc = rank_env_put(e, slot, *v);
    for (char **v = r->job->env; v && *v && rc == 0; v++)
        rc = rank_env_put(e, slot, *v);
    for (char **v = r->app->env; v && *v && rc == 0; v++)
        rc = rank_env_put(e, slot, *v);
    char num[16];
    for (size_t i = 0; i < sizeof proc_vars / sizeof proc_vars[0] && rc == 0; i++) {
        snprintf(num, sizeof num, "%d", proc_value(&r->info, proc_vars[i].v));
        rc = rank_env_set(e, slot, proc_vars[i].name, num, 1);
    }
    if (rc == 0) rc = rank_env_set(e, slot, "PWD", cwd, 1);
    if (rc == 0) rank_env_seal(e);
    return rc;
}

int rank_proc_start(struct rank *r)
{
    struct rank_proc *p = &r->proc;
    struct job *j = r->job;
    memset(p, 0, sizeof *p);
    rank_env_init(&p->env);
    pthread_mutex_init(&p->cwd_mu, NULL);
    pthread_mutex_init(&p->popen_mu, NULL);
    /* the kernel would report the directory by its canonical name */
    char canon[PATH_MAX];
    const char *dir = r->app->cwd && r->app->cwd[0] ? r->app->cwd : j->cwd;
    char *cwd = strdup(realpath(dir, canon) ? canon : dir);
    if (!cwd) goto oom;
    atomic_store_explicit(&p->cwd, cwd, memory_order_release);
    p->host_umask = j->host_umask;
    atomic_store_explicit(&p->umask, j->host_umask, memory_order_relaxed);
    p->pid = r->carried ? (pid_t)syscall(SYS_getpid) : (pid_t)syscall(SYS_gettid);
    /* set by the job thread before the start gate opened */
    p->bound = j->bind_kind != BIND_KIND_NONE && j->topo;
    if (r->carried) p->carrier_cpus = j->cpool->cpus;
    if (env_build(r, cwd) < 0) goto oom;
    p->ready = 1;
    return 0;
oom:
    rank_proc_free(p);
    return -ENOMEM;
}

void rank_proc_free(struct rank_proc *p)
{
    /* NULL-safe throughout: also for a rank that never started (all zero) */
    p->ready = 0;
    rank_env_free(&p->env);
    free(atomic_load_explicit(&p->cwd, memory_order_relaxed));
    for (size_t i = 0; i < p->nretired; i++)
        free(p->retired[i]);
    free(p->retired);
    for (struct rank_popen *q = p->popens, *next; q; q = next) {
        next = q->next;
        free(q);
    }
    pthread_mutex_destroy(&p->cwd_mu);
    pthread_mutex_destroy(&p->popen_mu);
    memset(p, 0, sizeof *p);
}

/* The cwd string, pinned against chdir's free until unpin (seq_cst: chdir swaps, then looks
 * at the readers; a reader counts itself, then loads: one of the two sees the other). */
static const char *cwd_pin(struct rank_proc *p)
{
    atomic_fetch_add(&p->cwd_readers, 1);
    return atomic_load(&p->cwd);
}

static void cwd_unpin(struct rank_proc *p)
{
    atomic_fetch_sub(&p->cwd_readers, 1);
}

int rank_proc_join(struct rank_proc *p, const char *path, char buf[PATH_MAX])
{
    const char *cwd = cwd_pin(p);
    int n = strcmp(path, ".") == 0  ? snprintf(buf, PATH_MAX, "%s", cwd)
            : strcmp(cwd, "/") == 0 ? snprintf(buf, PATH_MAX, "/%s", path)
                                    : snprintf(buf, PATH_MAX, "%s/%s", cwd, path);
    cwd_unpin(p);
    return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

int rank_proc_getcwd(struct rank_proc *p, char *buf, size_t size)
{
    const char *cwd = cwd_pin(p);
    size_t n = strlen(cwd) + 1;
    if (n <= size) memcpy(buf, cwd, n);
    cwd_unpin(p);
    return n <= size ? 0 : -ERANGE;
}

size_t rank_proc_cwd_len(struct rank_proc *p)
{
    size_t n = strlen(cwd_pin(p));
    cwd_unpin(p);
    return n;
}

/* Makes canon (a checked directory) the rank's directory. */
static int cwd_set(struct rank_proc *p, const char *canon)
{
    char *fresh = strdup(canon);
    if (!fresh) return -ENOMEM;
    pthread_mutex_lock(&p->cwd_mu);
    char *old = atomic_exchange(&p->cwd, fresh);
    int r = 0;
    if (p->nretired == p->retired_cap) {
        size_t cap = p->retired_cap ? p->retired_cap * 2 : 4;
        char **grown = realloc(p->retired, cap * sizeof *grown);
        if (grown) {
            p->retired = grown;
            p->retired_cap = cap;
        }
    }
    if (p->nretired < p->retired_cap) {
        p->retired[p->nretired++] = old;
    } else {
        /* no room to keep it: undo rather than free a string a reader may hold */
        atomic_store(&p->cwd, old);
        free(fresh);
        r = -ENOMEM;
    }
    if (atomic_load(&p->cwd_readers) == 0) {
        for (size_t i = 0; i < p->nretired; i++)
            free(p->retired[i]);
        p->nretired = 0;
    }
    pthread_mutex_unlock(&p->cwd_mu);
    return r;
}

/* A directory the rank may enter: what chdir(2) checks. */
static int check_dir(const char *canon)
{
    struct stat st;
    if (stat(canon, &st) < 0) return -errno;
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    if (access(canon, X_OK) < 0) return -errno;
    return 0;
}

int rank_proc_chdir(struct rank_proc *p, const char *path)
{
    if (!path) return -EFAULT;
    if (!path[0]) return -ENOENT;
    char joined[PATH_MAX], canon[PATH_MAX];
    if (path[0] != '/') {
        int r = rank_proc_join(p, path, joined);
        if (r < 0) return r;
        path = joined;
    }
    if (!realpath(path, canon)) return -errno;
    int r = check_dir(canon);
    return r < 0 ? r : cwd_set(p, canon);
}

int rank_proc_fchdir(struct rank_proc *p, int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    char link[64], canon[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, canon, sizeof canon - 1);
    if (n < 0) return -errno;
    canon[n] = '\0';
    if (canon[0] != '/') return -ENOENT; /* not a path any more (removed, another namespace) */
    int r = check_dir(canon);
    return r < 0 ? r : cwd_set(p, canon);
}

unsigned rank_proc_host_umask(void)
{
    /* read, not set: umask(2) cannot be read without changing it meanwhile */
    FILE *f = fopen("/proc/self/status", "re");
    char line[128];
    unsigned m = 0;
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "Umask: %o", &m) == 1;
    if (f) fclose(f);
    if (!found) {
        mode_t old = umask(022);
        umask(old);
        m = old;
    }
    return m & 0777;
}

mode_t rank_proc_mode(struct rank_proc *p, mode_t mode, int *fix)
{
    mode_t want = mode & ~(mode_t)atomic_load_explicit(&p->umask, memory_order_relaxed) & 07777;
    *fix = (want & p->host_umask) != 0;
    return want;
}
