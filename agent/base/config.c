#include "config.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "coll_tree.h"
#include "lib_list.h"
#include "limits_fmt.h"
#include "log.h"
#include "msg_check.h"
#include "oom_score.h"
#include "size_text.h"
#include "tmpi_config.h"

int config_defaults(struct agent_config *c)
{
    char host[256];
    if (gethostname(host, sizeof host) < 0) strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    *c = (struct agent_config){
        .name = strdup(host),
        .socket_path = strdup(TMPI_SYSTEM_SOCKET),
        .log_level = LOG_INFO,
        .key_fd = -1,
        .max_jobs = 64,
        .admin_reserve_jobs = 8,
        .max_ranks = 16384,
        .rank_stack_size = 2u << 20,
        .max_program_size = 256u << 20,
        .max_frame_size = 4u << 20,
        .max_connections = 1024,
        .max_connections_per_user = 128,
        .idle_timeout_sec = 60,
        .message_timeout_sec = 10,
        .max_buffered_input = 32u << 20,
        .max_unread_replies = 1u << 20,
        .max_args_size = 2u << 20,
        .max_env_size = 1u << 20,
        .program_cache = 16,
        .spin_ns = 20000,
        .rank_switching = "auto",
        .kernel_ranks_per_cpu = CONFIG_KERNEL_RANKS_PER_CPU_DEFAULT,
        .carrier_placement = "block",
        .transport = "auto",
        .bind_to = "auto",
        .intra_eager_limit = 16384,
        .intra_coop_min = 256 * 1024,
        .eager_limit = 100 * 1024,
        .pool_size = 64u << 20,
        /* libtmpi's own defaults (io_pool.h TM_IOP_*_DEFAULT), for a job without these */
        .io_threads = 4,
        .io_offload_min = 256u << 10,
        .kill_grace_sec = 1,
        .deadlock_check_ms = 1000,
        .ended_job_keep_sec = 30,
        .oom_score_adj = OOM_SCORE_AGENT_DEFAULT,
        .job_oom_score_adj = OOM_SCORE_JOB_DEFAULT,
        .heartbeat_ms = 1000,
        .heartbeat_timeout_ms = 20000,
        .link_reconnect_timeout_ms = 20000,
        .link_resend_max = 4u << 20,
        .recv_threads = 2,
        .recv_spin_ns = 50000,
        .node_number = CONFIG_NODE_UNSET,
        .query_timeout_ms = CONFIG_QUERY_TIMEOUT_MS_DEFAULT,
        .metrics_max_connections = 16,
        .metrics_timeout_sec = 10,
        .metrics_max_request = 8192,
    };
    if (!c->name || !c->socket_path) return -ENOMEM;
    return 0;
}

int config_parse_size(const char *s, size_t *ret)
{
    uint64_t v;
    int r = size_text_parse(s, "kmg", SIZE_MAX, &v);
    if (r < 0) return r;
    *ret = (size_t)v;
    return 0;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *ret)
{
    size_t v;
    int r = config_parse_size(s, &v);
    if (r < 0) return r;
    if (v < min || v > max) return -ERANGE;
    *ret = (uint32_t)v;
    return 0;
}

/* An oom_score_adj value: an integer from -1000 to 1000, with an optional sign. */
static int parse_oom_score(const char *s, int *ret)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end) return -EINVAL;
    if (v < OOM_SCORE_ADJ_MIN || v > OOM_SCORE_ADJ_MAX) return -ERANGE;
    *ret = (int)v;
    return 0;
}

int config_add_peer(struct agent_config *c, const char *address)
{
    char **np = realloc(c->peers, (c->npeers + 1) * sizeof *np);
    if (!np) return -ENOMEM;
    c->peers = np;
    if (!(np[c->npeers] = strdup(address))) return -ENOMEM;
    c->npeers++;
    return 0;
}

/* "a:1, b:2" -> two peers.  Empty items are refused. */
static int add_peer_list(struct agent_config *c, const char *list)
{
    char buf[4096];
    if (strlen(list) >= sizeof buf) return -E2BIG;
    strcpy(buf, list);
    char *rest = buf, *tok;
    int n = 0;
    /* strsep, not strtok: an empty item between commas is an error, not skipped */
    while ((tok = strsep(&rest, ",")) != NULL) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        char *end = tok + strlen(tok);
        while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        if (!*tok) return -EINVAL;
        int r = config_add_peer(c, tok);
        if (r < 0) return r;
        n++;
    }
    return n ? 0 : -EINVAL;
}

static int set_string(char **dst, const char *v)
{
    char *s = strdup(v);
    if (!s) return -ENOMEM;
    free(*dst);
    *dst = s;
    return 0;
}

struct load_ctx {
    struct agent_config *c;
    const char *path;
    int error;
    char msg[512];
    /* the text's lines as inih reads them (config_reader): which line a key is on */
    const char *next;
    int lineno;
    int nerrors, first_error_line;
};

/* Each bad setting is reported with its own line, and the parse goes on: --check-config
 * lists every problem of a file, not only the first. */
static void report(struct load_ctx *ctx)
{
    fprintf(stderr, "%s:%d: %s\n", ctx->path, ctx->lineno, ctx->msg);
    if (ctx->nerrors++ == 0) ctx->first_error_line = ctx->lineno;
}

/* inih's line reader over the text (fgets-like), counting lines. */
static char *config_reader(char *str, int num, void *stream)
{
    struct load_ctx *ctx = stream;
    if (!*ctx->next || num < 2) return NULL;
    size_t n = 0;
    while (ctx->next[n] && ctx->next[n] != '\n' && n + 1 < (size_t)num - 1)
        n++;
    if (ctx->next[n] == '\n') n++;
    memcpy(str, ctx->next, n);
    str[n] = '\0';
    ctx->next += n;
    ctx->lineno++;
    return str;
}

/* coll_bcast / coll_reduce: a tree shape name; coll_allreduce: an Allreduce algorithm.  A
 * refusal lists what is accepted. */
static int set_coll_algo(struct load_ctx *ctx, char **dst, const char *key, const char *v,
                         int allreduce)
{
    enum tm_tree_shape s;
    enum tm_allreduce_algo a;
    int r = allreduce ? tm_allreduce_parse(v, &a) : tm_tree_shape_parse(v, &s);
    if (r < 0) {
        char names[200];
        snprintf(
            ctx->msg, sizeof ctx->msg, "bad value for [mpi] %s: \"%s\" (one of %s)", key, v,
            tm_coll_algo_names(allreduce ? TM_COLL_ALLREDUCE : TM_COLL_BCAST, names, sizeof names));
        return r;
    }
    return set_string(dst, v);
}

/* The tree file must parse now, so a bad one stops the agent at start instead of failing
 * jobs later; why it was rejected goes into ctx->msg. */
static int set_tree_file(struct load_ctx *ctx, const char *v)
{
    if (*v != '/') {
        snprintf(ctx->msg, sizeof ctx->msg,
                 "bad value for [mpi] coll_tree_file: \"%s\" (not an absolute path)", v);
        return -EINVAL;
    }
    struct tm_tree_file t;
    char why[256];
    int r = tm_tree_file_load(v, &t, why, sizeof why);
    if (r < 0) {
        snprintf(ctx->msg, sizeof ctx->msg, "bad value for [mpi] coll_tree_file: %s", why);
        return r;
    }
    tm_tree_file_free(&t);
    return set_string(&ctx->c->coll_tree_file, v);
}

/* "alice, bob" -> {"alice", "bob", NULL}, replacing *dst.  Empty items are refused. */
static int set_name_list(char ***dst, const char *list)
{
    char *buf = strdup(list);
    if (!buf) return -ENOMEM;
    size_t n = 0;
    char **v = NULL, *rest = buf, *tok;
    int r = 0;
    while ((tok = strsep(&rest, ",")) != NULL) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        char *end = tok + strlen(tok);
        while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        char **nv = *tok ? realloc(v, (n + 2) * sizeof *nv) : NULL;
        if (!nv || !(nv[n] = strdup(tok))) {
            r = *tok ? -ENOMEM : -EINVAL;
            if (nv) v = nv;
            break;
        }
        v = nv;
        v[++n] = NULL;
    }
    free(buf);
    if (r < 0 || n == 0) {
        for (size_t i = 0; i < n; i++)
            free(v[i]);
        free(v);
        return r < 0 ? r : -EINVAL;
    }
    config_free_list(*dst);
    *dst = v;
    return 0;
}

/* [mesh] transport: one of the three words (transport.h); kept as a literal. */
static int set_transport(struct agent_config *c, const char *v)
{
    static const char *const words[] = {"auto", "tcp", "ofi"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(v, words[i]) == 0) {
            c->transport = words[i];
            return 0;
        }
    return -EINVAL;
}

const char *config_carrier_placement_word(const char *v)
{
    static const char *const words[] = {"block", "cyclic"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(v, words[i]) == 0) return words[i];
    return NULL;
}

/* [mpi] carrier_placement: kept as a literal. */
static int set_carrier_placement(struct agent_config *c, const char *v)
{
    const char *w = config_carrier_placement_word(v);
    if (!w) return -EINVAL;
    c->carrier_placement = w;
    return 0;
}

/* [mpi] rank_switching: one of the three words (carrier.h); kept as a literal. */
static int set_rank_switching(struct agent_config *c, const char *v)
{
    static const char *const words[] = {"auto", "kernel", "user"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(v, words[i]) == 0) {
            c->rank_switching = words[i];
            return 0;
        }
    return -EINVAL;
}

/* [mpi] bind_to: auto or a kind of tmpi-launch --bind-to (socket is package); a literal. */
static int set_bind_to(struct agent_config *c, const char *v)
{
    static const char *const words[] = {"auto",    "none", "hwthread", "core",
                                        "l3cache", "numa", "package"};
    if (strcmp(v, "socket") == 0) v = "package";
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(v, words[i]) == 0) {
            c->bind_to = words[i];
            return 0;
        }
    return -EINVAL;
}

/* inih calls this per key; 0 stops the parse and ini_parse returns that line. */
static int on_key(void *user, const char *section, const char *key, const char *value)
{
    struct load_ctx *ctx = user;
    struct agent_config *c = ctx->c;
    int r = -ENOENT;
    size_t sz;

    if (strcmp(section, "agent") == 0) {
        if (strcmp(key, "name") == 0)
            r = *value ? set_string(&c->name, value) : -EINVAL;
        else if (strcmp(key, "socket") == 0)
            r = *value ? set_string(&c->socket_path, value) : -EINVAL;
        else if (strcmp(key, "log_level") == 0) {
            int l = log_level_parse(value);
            r = l < 0 ? l : (c->log_level = l, 0);
        } else if (strcmp(key, "max_jobs") == 0)
            r = parse_u32(value, 1, 100000, &c->max_jobs);
        else if (strcmp(key, "max_jobs_per_user") == 0)
            r = parse_u32(value, 1, 100000, &c->max_jobs_per_user);
        else if (strcmp(key, "admin_reserve_jobs") == 0)
            r = parse_u32(value, 0, 100000, &c->admin_reserve_jobs);
        else if (strcmp(key, "max_ranks") == 0)
            r = parse_u32(value, 1, 1u << 20, &c->max_ranks);
        else if (strcmp(key, "shared_libraries") == 0)
            r = set_string(&c->shared_libraries, value);
        else if (strcmp(key, "private_libraries") == 0) {
            char why[256];
            r = lib_list_check_private(value, why, sizeof why);
            if (r < 0) {
                snprintf(ctx->msg, sizeof ctx->msg, "bad value for [agent] private_libraries: %s",
                         why);
                ctx->error = r;
                report(ctx);
                return 0;
            }
            r = set_string(&c->private_libraries, value);
        } else if (strcmp(key, "rank_stack_size") == 0) {
            r = config_parse_size(value, &sz);
            if (r == 0 && (sz < 64 * 1024 || sz > (1ull << 30))) r = -ERANGE;
            if (r == 0) c->rank_stack_size = sz;
        } else if (strcmp(key, "max_program_size") == 0) {
            r = config_parse_size(value, &sz);
            if (r == 0 && (sz < 4096 || sz > (4ull << 30))) r = -ERANGE;
            if (r == 0) c->max_program_size = sz;
        } else if (strcmp(key, "max_frame_size") == 0) {
            r = config_parse_size(value, &sz);
            if (r == 0 && (sz < 64 * 1024 || sz > (1ull << 30))) r = -ERANGE;
            if (r == 0) c->max_frame_size = sz;
        } else if (strcmp(key, "max_connections") == 0)
            r = parse_u32(value, 1, 65536, &c->max_connections);
        else if (strcmp(key, "max_connections_per_user") == 0)
            r = parse_u32(value, 1, 65536, &c->max_connections_per_user);
        else if (strcmp(key, "idle_timeout") == 0)
            r = parse_u32(value, 1, 86400, &c->idle_timeout_sec);
        else if (strcmp(key, "message_timeout") == 0)
            r = parse_u32(value, 1, 3600, &c->message_timeout_sec);
        else if (strcmp(key, "max_buffered_input") == 0) {
            r = config_parse_size(value, &sz);
            if (r == 0 && (sz < 64 * 1024 || sz > (64ull << 30))) r = -ERANGE;
            if (r == 0) c->max_buffered_input = sz;
        } else if (strcmp(key, "max_unread_replies") == 0) {
            r = config_parse_size(value, &sz);
            if (r == 0 && (sz < 64 * 1024 || sz > (1ull << 30))) r = -ERANGE;
            if (r == 0) c->max_unread_replies = sz;
        } else if (strcmp(key, "max_args_size") == 0) {
            r = config_parse_size(value, &sz);
            if (r == 0 && (sz < 4096 || sz > MSG_MAX_ARGS_BYTES)) r = -ERANGE;
            if (r == 0) c->max_args_size = sz;
        } else if (strcmp(key, "max_env_size") == 0) {
            r = config_parse_size(value, &sz);
            if (r == 0 && (sz < 4096 || sz > MSG_MAX_ENV_BYTES)) r = -ERANGE;
            if (r == 0) c->max_env_size = sz;
        } else if (strcmp(key, "program_cache") == 0)
            r = parse_u32(value, 0, 100000, &c->program_cache);
        else if (strcmp(key, "kill_grace") == 0)
            r = parse_u32(value, 0, 3600, &c->kill_grace_sec);
        else if (strcmp(key, "deadlock_check_ms") == 0)
            r = parse_u32(value, 0, 3600000, &c->deadlock_check_ms);
        else if (strcmp(key, "ended_job_keep") == 0)
            r = parse_u32(value, 0, 86400, &c->ended_job_keep_sec);
        else if (strcmp(key, "oom_score_adj") == 0)
            r = parse_oom_score(value, &c->oom_score_adj);
        else if (strcmp(key, "job_oom_score_adj") == 0)
            r = parse_oom_score(value, &c->job_oom_score_adj);
        else if (strcmp(key, "job_memory_max") == 0) {
            r = config_parse_size(value, &sz);
            if (r == 0 && sz != 0 && sz < (1u << 20)) r = -ERANGE;
            if (r == 0) c->job_memory_max = sz;
        } else if (strcmp(key, "job_cpu_max") == 0)
            r = strcmp(value, "0") == 0 ? (c->job_cpu_max = 0, 0)
                                        : limits_parse_cpus(value, &c->job_cpu_max);
        else if (strcmp(key, "allow_users") == 0)
            r = set_name_list(&c->allow_users, value);
        else if (strcmp(key, "allow_groups") == 0)
            r = set_name_list(&c->allow_groups, value);
        else if (strcmp(key, "allow_users_dir") == 0)
            r = value[0] == '/' ? set_string(&c->allow_users_dir, value) : -EINVAL;
    } else if (strcmp(section, "mpi") == 0) {
        if (strcmp(key, "spin_ns") == 0)
            r = parse_u32(value, 0, 1000000000, &c->spin_ns);
        else if (strcmp(key, "rank_switching") == 0)
            r = set_rank_switching(c, value);
        else if (strcmp(key, "kernel_ranks_per_cpu") == 0)
            r = parse_u32(value, 1, CONFIG_KERNEL_RANKS_PER_CPU_MAX, &c->kernel_ranks_per_cpu);
        else if (strcmp(key, "carrier_placement") == 0)
            r = set_carrier_placement(c, value);
        else if (strcmp(key, "bind_to") == 0)
            r = set_bind_to(c, value);
        else if (strcmp(key, "intra_eager_limit") == 0)
            r = parse_u32(value, 0, 1u << 30, &c->intra_eager_limit);
        else if (strcmp(key, "intra_coop_min") == 0)
            r = parse_u32(value, 0, 1u << 30, &c->intra_coop_min);
        else if (strcmp(key, "eager_limit") == 0)
            r = parse_u32(value, 0, 1u << 30, &c->eager_limit);
        else if (strncmp(key, "coll_", 5) == 0) {
            /* these write their own message into ctx->msg */
            ctx->msg[0] = '\0';
            if (strcmp(key, "coll_bcast") == 0)
                r = set_coll_algo(ctx, &c->coll_bcast, key, value, 0);
            else if (strcmp(key, "coll_reduce") == 0)
                r = set_coll_algo(ctx, &c->coll_reduce, key, value, 0);
            else if (strcmp(key, "coll_allreduce") == 0)
                r = set_coll_algo(ctx, &c->coll_allreduce, key, value, 1);
            else if (strcmp(key, "coll_tree_file") == 0)
                r = set_tree_file(ctx, value);
            if (r < 0 && ctx->msg[0]) {
                ctx->error = r;
                report(ctx);
                return 0;
            }
        }
    } else if (strcmp(section, "mesh") == 0) {
        if (strcmp(key, "listen") == 0)
            r = *value ? set_string(&c->listen, value) : -EINVAL;
        else if (strcmp(key, "key_file") == 0)
            r = *value ? set_string(&c->key_file, value) : -EINVAL;
        else if (strcmp(key, "peers") == 0)
            r = add_peer_list(c, value);
        else if (strcmp(key, "heartbeat_ms") == 0)
            r = parse_u32(value, 50, 600000, &c->heartbeat_ms);
        else if (strcmp(key, "heartbeat_timeout_ms") == 0)
            r = parse_u32(value, 200, 3600000, &c->heartbeat_timeout_ms);
        else if (strcmp(key, "link_reconnect_timeout_ms") == 0)
            r = parse_u32(value, 200, 3600000, &c->link_reconnect_timeout_ms);
        else if (strcmp(key, "link_resend_max") == 0) {
            r = config_parse_size(value, &sz);
            if (r == 0 && (sz < 65536 || sz > (1u << 30))) r = -ERANGE;
            if (r == 0) c->link_resend_max = sz;
        } else if (strcmp(key, "recv_threads") == 0)
            r = parse_u32(value, 1, 64, &c->recv_threads);
        else if (strcmp(key, "recv_spin_ns") == 0)
            r = parse_u32(value, 0, 10000000, &c->recv_spin_ns);
        else if (strcmp(key, "transport") == 0)
            r = set_transport(c, value);
        else if (strcmp(key, "ofi_provider") == 0)
            r = *value ? set_string(&c->ofi_provider, value) : -EINVAL;
        else if (strcmp(key, "node_number") == 0)
            r = parse_u32(value, 0, CONFIG_NODE_NUMBER_MAX, &c->node_number);
        else if (strcmp(key, "query_timeout_ms") == 0)
            r = parse_u32(value, 100, 600000, &c->query_timeout_ms);
    } else if (strcmp(section, "metrics") == 0) {
        if (strcmp(key, "listen") == 0)
            r = *value ? set_string(&c->metrics_listen, value) : -EINVAL;
        else if (strcmp(key, "max_connections") == 0)
            r = parse_u32(value, 1, 4096, &c->metrics_max_connections);
        else if (strcmp(key, "timeout") == 0)
            r = parse_u32(value, 1, 3600, &c->metrics_timeout_sec);
        else if (strcmp(key, "max_request_size") == 0) {
            r = config_parse_size(value, &c->metrics_max_request);
            if (r == 0 && (c->metrics_max_request < 256 || c->metrics_max_request > (1u << 20)))
                r = -ERANGE;
        }
    } else if (strcmp(section, "pool") == 0) {
        if (strcmp(key, "size") == 0) r = config_parse_size(value, &c->pool_size);
    } else if (strcmp(section, "io") == 0) {
        if (strcmp(key, "threads") == 0)
            r = parse_u32(value, 0, CONFIG_IO_THREADS_MAX, &c->io_threads);
        else if (strcmp(key, "offload_min") == 0)
            r = config_parse_size(value, &c->io_offload_min);
    }

    if (r == 0) return 1;
    ctx->error = r;
    if (r == -ENOENT)
        snprintf(ctx->msg, sizeof ctx->msg, "unknown setting [%s] %s", section, key);
    else
        snprintf(ctx->msg, sizeof ctx->msg, "bad value for [%s] %s: \"%s\" (%s)", section, key,
                 value, strerror(-r));
    report(ctx);
    return 0;
}

/* The whole file, NUL-terminated, at most CONFIG_MAX_BYTES.  0 or a negative errno. */
static int read_text(const char *path, char **ret, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (!f) return -errno;
    char *buf = malloc(CONFIG_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        return -ENOMEM;
    }
    size_t n = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
    int err = ferror(f) ? -EIO : 0;
    fclose(f);
    if (!err && n > CONFIG_MAX_BYTES) err = -EFBIG;
    if (!err && memchr(buf, '\0', n)) err = -EINVAL;
    if (err) {
        free(buf);
        return err;
    }
    buf[n] = '\0';
    *ret = buf;
    *len = n;
    return 0;
}

int config_load(struct agent_config *c, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    int r = read_text(path, &text, &len);
    if (r == -EFBIG || r == -EINVAL) {
        fprintf(stderr, "%s: %s\n", path,
                r == -EFBIG ? "larger than " CONFIG_MAX_BYTES_TEXT : "contains a NUL byte");
        return -EINVAL;
    }
    if (r < 0) return r;
    struct load_ctx ctx = {.c = c, .path = path, .next = text};
    int line = ini_parse_stream(config_reader, &ctx, on_key, &ctx);
    if (line != 0) {
        free(text);
        if (line < 0) return -ENOMEM;
        /* inih returns the first bad line: a syntax error there has not been reported */
        if (ctx.nerrors == 0 || line != ctx.first_error_line)
            fprintf(stderr, "%s:%d: syntax error\n", path, line);
        return -EINVAL;
    }
    if (c->job_oom_score_adj <= c->oom_score_adj) {
        /* otherwise a node out of memory could lose its agent, and every job with it */
        free(text);
        fprintf(stderr,
                "%s: [agent] job_oom_score_adj (%d) must be above oom_score_adj (%d): the "
                "kernel must end a job before the agent\n",
                path, c->job_oom_score_adj, c->oom_score_adj);
        return -EINVAL;
    }
    free(c->text);
    c->text = text;
    c->text_len = len;
    return 0;
}

void config_free_list(char **v)
{
    if (!v) return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

void config_free(struct agent_config *c)
{
    config_free_list(c->allow_users);
    config_free_list(c->allow_groups);
    free(c->allow_users_dir);
    c->allow_users_dir = NULL;
    c->allow_users = c->allow_groups = NULL;
    free(c->text);
    c->text = NULL;
    c->text_len = 0;
    free(c->name);
    free(c->socket_path);
    free(c->listen);
    free(c->key_file);
    free(c->metrics_listen);
    free(c->ofi_provider);
    c->ofi_provider = NULL;
    free(c->coll_bcast);
    free(c->coll_reduce);
    free(c->coll_allreduce);
    free(c->coll_tree_file);
    free(c->shared_libraries);
    c->shared_libraries = NULL;
    free(c->private_libraries);
    c->private_libraries = NULL;
    c->coll_bcast = c->coll_reduce = c->coll_allreduce = c->coll_tree_file = NULL;
    for (size_t i = 0; i < c->npeers; i++)
        free(c->peers[i]);
    free(c->peers);
    c->peers = NULL;
    c->npeers = 0;
    c->name = c->socket_path = c->listen = c->key_file = NULL;
}
