/* msg_check.c — structural checks of job messages (msg_check.h). */
#include "msg_check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

static int path_ok(const char *s, int absolute)
{
    if (!s || !*s) return 0;
    if (absolute && s[0] != '/') return 0;
    return strnlen(s, MSG_MAX_PATH + 1) <= MSG_MAX_PATH;
}

static int env_name_ok(const char *n)
{
    return n && *n && !strchr(n, '=');
}

int msg_check_job_text(const struct msg_job_text *t, char *err, size_t errlen)
{
    if (t->program_hash.len != MSG_PROGRAM_HASH_SIZE)
        return fail(err, errlen, "malformed job: program hash of %zu bytes", t->program_hash.len);
    if (t->program_size == 0) return fail(err, errlen, "malformed job: an empty program");
    if (!path_ok(t->program_name, 0))
        return fail(err, errlen, "malformed job: program name empty or over %u bytes",
                    MSG_MAX_PATH);
    if (!path_ok(t->cwd, 1))
        return fail(err, errlen, "malformed job: working directory not absolute or over %u bytes",
                    MSG_MAX_PATH);
    if (t->n_args > MSG_MAX_ARGS)
        return fail(err, errlen, "job refused: %zu arguments (at most %u)", t->n_args,
                    MSG_MAX_ARGS);
    size_t bytes = 0;
    for (size_t i = 0; i < t->n_args; i++) {
        if (!t->args[i]) return fail(err, errlen, "malformed job: argument %zu missing", i);
        bytes += strlen(t->args[i]) + 1;
        if (bytes > MSG_MAX_ARGS_BYTES)
            return fail(err, errlen, "job refused: arguments over %u bytes", MSG_MAX_ARGS_BYTES);
    }
    if (t->n_env > MSG_MAX_ENV)
        return fail(err, errlen, "job refused: %zu environment variables (at most %u)", t->n_env,
                    MSG_MAX_ENV);
    bytes = 0;
    for (size_t i = 0; i < t->n_env; i++) {
        const Tmpi__EnvVar *v = t->env[i];
        if (!v || !env_name_ok(v->name))
            return fail(err, errlen, "malformed job: bad environment variable name");
        bytes += strlen(v->name) + (v->value ? strlen(v->value) : 0) + 2;
        if (bytes > MSG_MAX_ENV_BYTES)
            return fail(err, errlen, "job refused: environment over %u bytes", MSG_MAX_ENV_BYTES);
    }
    return 0;
}

int msg_check_apps(const struct msg_job_text *t, size_t n_apps, Tmpi__JobApp *const *apps,
                   uint32_t nprocs, char *err, size_t errlen)
{
    if (n_apps == 0) return msg_check_job_text(t, err, errlen);
    if (n_apps > MSG_MAX_APPS)
        return fail(err, errlen, "job refused: %zu programs (at most %u)", n_apps, MSG_MAX_APPS);
    if (t->program_hash.len != 0 || t->program_size != 0 || (t->program_name && *t->program_name) ||
        t->n_args != 0)
        return fail(err, errlen,
                    "malformed job: a job of several programs names them in apps only");
    /* the job's own directory and environment, checked with a stand-in program */
    static const uint8_t zero_hash[MSG_PROGRAM_HASH_SIZE];
    struct msg_job_text job = *t;
    job.program_hash.data = (uint8_t *)zero_hash;
    job.program_hash.len = sizeof zero_hash;
    job.program_size = 1;
    job.program_name = "-";
    int r = msg_check_job_text(&job, err, errlen);
    if (r < 0) return r;
    uint64_t total = 0;
    for (size_t i = 0; i < n_apps; i++) {
        const Tmpi__JobApp *a = apps[i];
        if (!a || a->nprocs == 0)
            return fail(err, errlen, "malformed job: program %zu has no ranks", i);
        struct msg_job_text at = {a->program_hash, a->program_size,
                                  a->program_name, a->n_args,
                                  a->args,         a->cwd && *a->cwd ? a->cwd : t->cwd,
                                  a->n_env,        a->env};
        r = msg_check_job_text(&at, err, errlen);
        if (r < 0) {
            /* say which program: "program 1: malformed job: ..." */
            char inner[200];
            snprintf(inner, sizeof inner, "%s", err);
            return fail(err, errlen, "program %zu: %s", i, inner);
        }
        total += a->nprocs;
    }
    if (total != nprocs)
        return fail(err, errlen, "malformed job: the programs have %llu ranks in all, the job %u",
                    (unsigned long long)total, nprocs);
    return 0;
}

int msg_check_placement(size_t n_nodes, Tmpi__NodePlacement *const *nodes, uint32_t nprocs,
                        char *err, size_t errlen)
{
    if (n_nodes < 1 || n_nodes > MSG_MAX_NODES || nprocs > MSG_MAX_RANKS)
        return fail(err, errlen,
                    "a job across nodes needs 1 to %u nodes and at most %u ranks, one or more "
                    "on each node (or spawn slots on a spare one)",
                    MSG_MAX_NODES, MSG_MAX_RANKS);
    /* One bit per rank: a rank placed twice is found without sorting. */
    uint8_t *seen = calloc((nprocs + 7) / 8, 1);
    if (!seen) return -ENOMEM;
    uint64_t total = 0;
    int r = 0;
    for (size_t i = 0; i < n_nodes && r == 0; i++) {
        const Tmpi__NodePlacement *np = nodes[i];
        if (!np || !np->host || !*np->host || strlen(np->host) > 255 || np->port == 0 ||
            np->port > 65535 || (np->n_ranks == 0 && np->spawn_slots == 0) ||
            (i == 0 && np->n_ranks == 0)) {
            /* a spare node (no ranks, MPI_Comm_spawn's room) is never node 0 */
            r = fail(err, errlen,
                     "malformed placement: node %zu needs a host, a port and ranks (or spawn "
                     "slots)",
                     i);
            break;
        }
        total += np->n_ranks;
        for (size_t l = 0; l < np->n_ranks && r == 0; l++) {
            uint32_t g = np->ranks[l];
            if (g >= nprocs || (seen[g / 8] & (1u << (g % 8))))
                r = fail(err, errlen, "malformed placement: rank %u placed twice or out of range",
                         g);
            else
                seen[g / 8] |= (uint8_t)(1u << (g % 8));
        }
    }
    free(seen);
    /* the universe (world plus spawn slots) within the world's bound too (job_spawn.h) */
    uint64_t spare = 0;
    for (size_t i = 0; i < n_nodes && r == 0; i++)
        spare += nodes[i]->spawn_slots;
    if (r == 0 && (spare > MSG_MAX_SPAWN_SLOTS || nprocs + spare > MSG_MAX_RANKS))
        r = fail(err, errlen, "malformed placement: %llu spawn slots (at most %u)",
                 (unsigned long long)spare, MSG_MAX_SPAWN_SLOTS);
    if (r == 0 && total != nprocs)
        r = fail(err, errlen, "malformed placement: %llu ranks placed for a job of %u",
                 (unsigned long long)total, nprocs);
    return r;
}

/* An agent that does not know a binding kind refuses the job rather than running it unbound. */
static int check_bind_to(int bind_to, char *err, size_t errlen)
{
    if (bind_to < TMPI__BIND_TO__BIND_DEFAULT || bind_to > TMPI__BIND_TO__BIND_PACKAGE)
        return fail(err, errlen, "unknown binding kind %d (--bind-to)", bind_to);
    return 0;
}

int msg_check_submit(const Tmpi__SubmitJob *s, char *err, size_t errlen)
{
    struct msg_job_text t = {s->program_hash, s->program_size, s->program_name, s->n_args,
                             s->args,         s->cwd,          s->n_env,        s->env};
    int r = msg_check_apps(&t, s->n_apps, s->apps, s->nprocs, err, errlen);
    if (r == 0) r = check_bind_to(s->bind_to, err, errlen);
    if (r < 0) return r;
    if (s->nprocs < 1 || s->nprocs > MSG_MAX_RANKS)
        return fail(err, errlen, "a job needs 1 to %u ranks (asked for %u)", MSG_MAX_RANKS,
                    s->nprocs);
    if (s->n_nodes == 0) return 0;
    return msg_check_placement(s->n_nodes, s->nodes, s->nprocs, err, errlen);
}

int msg_check_assign(const Tmpi__JobAssign *ja, char *err, size_t errlen)
{
    struct msg_job_text t = {ja->program_hash, ja->program_size, ja->program_name, ja->n_args,
                             ja->args,         ja->cwd,          ja->n_env,        ja->env};
    int r = msg_check_apps(&t, ja->n_apps, ja->apps, ja->nprocs, err, errlen);
    if (r == 0) r = check_bind_to(ja->bind_to, err, errlen);
    if (r < 0) return r;
    if (ja->node >= ja->n_nodes)
        return fail(err, errlen, "malformed job assignment: node %u of %zu", ja->node, ja->n_nodes);
    return msg_check_placement(ja->n_nodes, ja->nodes, ja->nprocs, err, errlen);
}

int msg_check_output(const Tmpi__Output *o, uint32_t nranks, size_t max_data, char *err,
                     size_t errlen)
{
    if (o->rank >= nranks)
        return fail(err, errlen, "output of rank %u in a job of %u ranks", o->rank, nranks);
    if (o->stream != MSG_STREAM_STDOUT && o->stream != MSG_STREAM_STDERR)
        return fail(err, errlen, "output on stream %u (1 or 2)", o->stream);
    if (o->data.len > max_data)
        return fail(err, errlen, "output frame of %zu bytes (at most %zu)", o->data.len, max_data);
    return 0;
}

int msg_check_rank_exit(const Tmpi__RankExit *e, uint32_t nranks, char *err, size_t errlen)
{
    if (e->rank >= nranks)
        return fail(err, errlen, "exit of rank %u in a job of %u ranks", e->rank, nranks);
    return 0;
}

int msg_check_signal(const Tmpi__SignalJob *s, char *err, size_t errlen)
{
    if (s->signo != MSG_SIGNAL_USR1 && s->signo != MSG_SIGNAL_USR2)
        return fail(err, errlen, "signal %d cannot be forwarded (only %u SIGUSR1 and %u SIGUSR2)",
                    s->signo, MSG_SIGNAL_USR1, MSG_SIGNAL_USR2);
    return 0;
}

int msg_check_name_request(const Tmpi__NameRequest *rq, char *err, size_t errlen)
{
    if (rq->op < MSG_NAME_PUBLISH || rq->op > MSG_NAME_JOB_FIND)
        return fail(err, errlen,
                    "name operation %u (1 publish, 2 unpublish, 3 lookup, 4 open, 5 close and "
                    "6 find a port, 7 context ids between jobs, 8 find a job's node)",
                    rq->op);
    if (rq->op == MSG_NAME_JOB_FIND)
        return rq->job_id ? 0 : fail(err, errlen, "a job find without a job");
    if (rq->op >= MSG_NAME_PORT_OPEN) {
        size_t nl = rq->service ? strlen(rq->service) : 0;
        if (nl == 0 || nl > MSG_NAME_PORT_MAX)
            return fail(err, errlen, "a port name of %zu bytes (1 to %u)", nl, MSG_NAME_PORT_MAX);
        return 0;
    }
    size_t sl = rq->service ? strlen(rq->service) : 0, pl = rq->port ? strlen(rq->port) : 0;
    if (sl == 0 || sl > MSG_NAME_SERVICE_MAX)
        return fail(err, errlen, "a service name of %zu bytes (1 to %u)", sl, MSG_NAME_SERVICE_MAX);
    if (rq->op != MSG_NAME_LOOKUP && (pl == 0 || pl > MSG_NAME_PORT_MAX))
        return fail(err, errlen, "a port name of %zu bytes (1 to %u)", pl, MSG_NAME_PORT_MAX);
    return 0;
}
