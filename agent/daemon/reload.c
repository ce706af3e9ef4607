/* reload.c — re-reading the configuration while the agent runs.
 *
 * A setting belongs to one of three kinds.  LIVE settings are read only on the loop thread of
 * the agent (admission, control frames, the program cache), so the loop thread may simply
 * overwrite them.  JOB settings shape a job's ranks; every job host reads the configuration
 * file itself when it starts, so a reload (indeed any edit of the file) reaches the jobs
 * started afterwards and never a running one.  RESTART settings are baked into what the agent
 * built at start (sockets, the mesh and its key, threads, the buffer pool): a change is logged
 * and waits for a restart, and the running value stays. */
#include "reload.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "agent.h"
#include "config.h"
#include "fabric.h"
#include "log.h"

enum kind { LIVE, JOB, RESTART };
enum type { T_INT, T_U32, T_U64, T_SIZE, T_STR, T_LIT };

struct setting {
    const char *key; /* as in tmpid.conf(5) */
    enum type type;
    size_t off;
    enum kind kind;
};

#define S(key, type, field, kind)                                                                  \
    {                                                                                              \
        key, type, offsetof(struct agent_config, field), kind                                      \
    }
static const struct setting settings[] = {
    S("[agent] log_level", T_INT, log_level, LIVE),
    S("[agent] max_jobs", T_U32, max_jobs, LIVE),
    S("[agent] max_jobs_per_user", T_U32, max_jobs_per_user, LIVE),
    S("[agent] admin_reserve_jobs", T_U32, admin_reserve_jobs, LIVE),
    /* the control socket's limits are read at each accept, frame and sweep */
    S("[agent] max_connections", T_U32, max_connections, LIVE),
    S("[agent] max_connections_per_user", T_U32, max_connections_per_user, LIVE),
    S("[agent] idle_timeout", T_U32, idle_timeout_sec, LIVE),
    S("[agent] message_timeout", T_U32, message_timeout_sec, LIVE),
    S("[agent] max_buffered_input", T_SIZE, max_buffered_input, LIVE),
    S("[agent] max_unread_replies", T_SIZE, max_unread_replies, LIVE),
    S("[agent] max_args_size", T_SIZE, max_args_size, LIVE),
    S("[agent] max_env_size", T_SIZE, max_env_size, LIVE),
    S("[agent] shared_libraries", T_STR, shared_libraries, JOB),
    S("[agent] private_libraries", T_STR, private_libraries, JOB),
    S("[mesh] heartbeat_timeout_ms", T_U32, heartbeat_timeout_ms, RESTART),
    S("[mesh] link_reconnect_timeout_ms", T_U32, link_reconnect_timeout_ms, JOB),
    S("[mesh] link_resend_max", T_SIZE, link_resend_max, JOB),
    S("[agent] max_program_size", T_SIZE, max_program_size, LIVE),
    S("[agent] max_frame_size", T_SIZE, max_frame_size, LIVE),
    S("[agent] program_cache", T_U32, program_cache, LIVE),
    S("[agent] max_ranks", T_U32, max_ranks, LIVE),
    S("[agent] rank_stack_size", T_SIZE, rank_stack_size, JOB),
    S("[agent] kill_grace", T_U32, kill_grace_sec, RESTART),
    S("[agent] job_memory_max", T_U64, job_memory_max, LIVE),
    S("[agent] job_cpu_max", T_U32, job_cpu_max, LIVE),
    S("[agent] ended_job_keep", T_U32, ended_job_keep_sec, LIVE),
    S("[agent] deadlock_check_ms", T_U32, deadlock_check_ms, JOB),
    S("[agent] job_oom_score_adj", T_INT, job_oom_score_adj, JOB),
    S("[agent] oom_score_adj", T_INT, oom_score_adj, RESTART),
    S("[mpi] spin_ns", T_U32, spin_ns, JOB),
    S("[mpi] rank_switching", T_LIT, rank_switching, JOB),
    S("[mpi] kernel_ranks_per_cpu", T_U32, kernel_ranks_per_cpu, JOB),
    S("[mpi] carrier_placement", T_LIT, carrier_placement, JOB),
    S("[mpi] bind_to", T_LIT, bind_to, JOB),
    S("[mpi] intra_eager_limit", T_U32, intra_eager_limit, JOB),
    S("[mpi] intra_coop_min", T_U32, intra_coop_min, JOB),
    S("[mpi] eager_limit", T_U32, eager_limit, JOB),
    S("[mpi] coll_bcast", T_STR, coll_bcast, JOB),
    S("[mpi] coll_reduce", T_STR, coll_reduce, JOB),
    S("[mpi] coll_allreduce", T_STR, coll_allreduce, JOB),
    S("[mpi] coll_tree_file", T_STR, coll_tree_file, JOB),
    S("[agent] name", T_STR, name, RESTART),
    S("[agent] socket", T_STR, socket_path, RESTART),
    S("[mesh] listen", T_STR, listen, RESTART),
    S("[mesh] key_file", T_STR, key_file, RESTART),
    S("[mesh] heartbeat_ms", T_U32, heartbeat_ms, RESTART),
    S("[mesh] recv_threads", T_U32, recv_threads, RESTART),
    S("[mesh] recv_spin_ns", T_U32, recv_spin_ns, JOB),
    S("[mesh] transport", T_LIT, transport, JOB),
    S("[mesh] ofi_provider", T_STR, ofi_provider, JOB),
    S("[pool] size", T_SIZE, pool_size, RESTART),
    S("[io] threads", T_U32, io_threads, JOB),
    S("[io] offload_min", T_SIZE, io_offload_min, JOB),
    S("[mesh] node_number", T_U32, node_number, RESTART),
    S("[mesh] query_timeout_ms", T_U32, query_timeout_ms, LIVE),
    S("[metrics] listen", T_STR, metrics_listen, RESTART),
    S("[metrics] max_connections", T_U32, metrics_max_connections, RESTART),
    S("[metrics] timeout", T_U32, metrics_timeout_sec, RESTART),
    S("[metrics] max_request_size", T_SIZE, metrics_max_request, RESTART),
};
#undef S

static int str_differs(const char *x, const char *y)
{
    if (!x || !y) return x != y;
    return strcmp(x, y) != 0;
}

static int differs(const struct setting *s, const struct agent_config *old,
                   const struct agent_config *new)
{
    const char *o = (const char *)old + s->off, *n = (const char *)new + s->off;
    switch (s->type) {
    case T_INT:
        return *(const int *)o != *(const int *)n;
    case T_U32:
        return *(const uint32_t *)o != *(const uint32_t *)n;
    case T_U64:
        return *(const uint64_t *)o != *(const uint64_t *)n;
    case T_SIZE:
        return *(const size_t *)o != *(const size_t *)n;
    case T_STR:
    case T_LIT:
        return str_differs(*(char *const *)o, *(char *const *)n);
    }
    return 1;
}

/* Copies a LIVE setting (plain numbers only: no string is LIVE). */
static void apply(const struct setting *s, struct agent_config *old, const struct agent_config *new)
{
    size_t size = s->type == T_INT   ? sizeof(int)
                  : s->type == T_U32 ? sizeof(uint32_t)
                  : s->type == T_U64 ? sizeof(uint64_t)
                                     : sizeof(size_t);
    memcpy((char *)old + s->off, (const char *)new + s->off, size);
}

static int peers_differ(const struct agent_config *x, const struct agent_config *y)
{
    if (x->npeers != y->npeers) return 1;
    for (size_t i = 0; i < x->npeers; i++)
        if (strcmp(x->peers[i], y->peers[i]) != 0) return 1;
    return 0;
}

static int lists_differ(char **x, char **y)
{
    for (; x && *x && y && *y; x++, y++)
        if (strcmp(*x, *y) != 0) return 1;
    return (x && *x) || (y && *y);
}

/* [agent] allow_users / allow_groups / allow_users_dir are LIVE: submissions are checked on the
 * loop thread. The lists are swapped, so config_free(new) frees the old ones. */
static unsigned apply_lists(struct agent_config *old, struct agent_config *new)
{
    unsigned n = 0;
    if (lists_differ(old->allow_users, new->allow_users)) {
        char **t = old->allow_users;
        old->allow_users = new->allow_users;
        new->allow_users = t;
        log_notice("reload: [agent] allow_users changed: applied now");
        n++;
    }
    if (lists_differ(old->allow_groups, new->allow_groups)) {
        char **t = old->allow_groups;
        old->allow_groups = new->allow_groups;
        new->allow_groups = t;
        log_notice("reload: [agent] allow_groups changed: applied now");
        n++;
    }
    const char *od = old->allow_users_dir, *nd = new->allow_users_dir;
    if ((od || nd) && (!od || !nd || strcmp(od, nd) != 0)) {
        char *t = old->allow_users_dir;
        old->allow_users_dir = new->allow_users_dir;
        new->allow_users_dir = t;
        log_notice("reload: [agent] allow_users_dir changed: applied now");
        n++;
    }
    return n;
}

int agent_reload(struct agent *a)
{
    if (!a->configure) {
        log_notice("reload: a private agent has no configuration file; nothing to do");
        return 0;
    }
    sd_notify(0, "RELOADING=1");
    struct agent_config new;
    int r = config_defaults(&new);
    if (r == 0 && a->configure(a->configure_arg, &new) != 0) r = -EINVAL;
    if (r < 0) {
        /* the reason is on stderr (the journal) already, with the file and line */
        log_error("reload: the new configuration was refused; the running one stays");
        config_free(&new);
        sd_notify(0, "READY=1");
        return -EINVAL;
    }
    unsigned live = 0, job = 0, restart = 0;
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const struct setting *s = &settings[i];
        if (!differs(s, &a->cfg, &new)) continue;
        switch (s->kind) {
        case LIVE:
            apply(s, &a->cfg, &new);
            log_notice("reload: %s changed: applied now", s->key);
            live++;
            break;
        case JOB:
            log_notice("reload: %s changed: applies to jobs started from now", s->key);
            job++;
            break;
        case RESTART:
            log_warning("reload: %s changed: needs a restart (systemctl restart tmpid); the "
                        "running value stays",
                        s->key);
            restart++;
            break;
        }
    }
    live += apply_lists(&a->cfg, &new);
    if (peers_differ(&a->cfg, &new)) {
        log_warning("reload: [mesh] peers changed: needs a restart; the running list stays");
        restart++;
    }
    /* the job hosts started from now read this text (jobhost.h): the JOB settings */
    char *text = a->cfg.text;
    a->cfg.text = new.text;
    a->cfg.text_len = new.text_len;
    new.text = text;
    log_set_level(a->cfg.log_level);
    /* the job hosts started from now read new's transport: decide auto for them afresh */
    if (a->cfg.listen || a->cfg.npeers) agent_fabric_probe(a, new.transport);
    progcache_set_keep(&a->cache, a->cfg.program_cache);
    log_notice("reload: done (%u applied, %u for new jobs, %u need a restart)", live, job, restart);
    config_free(&new);
    sd_notify(0, "READY=1");
    return 0;
}
