/* config_items.c — tmpid.conf settings as text, one by one (config_items.h). */
#include "config_items.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum kind { K_STR, K_U32, K_SIZE, K_U64, K_INT, K_LIST };

struct item {
    const char *section, *key;
    enum kind kind;
    size_t off;
};

#define IT(s, k, kind, field)                                                                      \
    {                                                                                              \
        s, k, kind, offsetof(struct agent_config, field)                                           \
    }
static const struct item items[] = {
    IT("agent", "name", K_STR, name),
    IT("agent", "socket", K_STR, socket_path),
    IT("agent", "log_level", K_INT, log_level),
    IT("agent", "max_jobs", K_U32, max_jobs),
    IT("agent", "max_ranks", K_U32, max_ranks),
    IT("agent", "shared_libraries", K_STR, shared_libraries),
    IT("agent", "private_libraries", K_STR, private_libraries),
    IT("agent", "rank_stack_size", K_SIZE, rank_stack_size),
    IT("agent", "max_program_size", K_SIZE, max_program_size),
    IT("agent", "max_frame_size", K_SIZE, max_frame_size),
    IT("agent", "max_connections", K_U32, max_connections),
    IT("agent", "max_connections_per_user", K_U32, max_connections_per_user),
    IT("agent", "idle_timeout", K_U32, idle_timeout_sec),
    IT("agent", "message_timeout", K_U32, message_timeout_sec),
    IT("agent", "max_buffered_input", K_SIZE, max_buffered_input),
    IT("agent", "max_unread_replies", K_SIZE, max_unread_replies),
    IT("agent", "max_args_size", K_SIZE, max_args_size),
    IT("agent", "max_env_size", K_SIZE, max_env_size),
    IT("agent", "program_cache", K_U32, program_cache),
    IT("agent", "kill_grace", K_U32, kill_grace_sec),
    IT("agent", "deadlock_check_ms", K_U32, deadlock_check_ms),
    IT("agent", "ended_job_keep", K_U32, ended_job_keep_sec),
    IT("agent", "oom_score_adj", K_INT, oom_score_adj),
    IT("agent", "job_oom_score_adj", K_INT, job_oom_score_adj),
    IT("agent", "job_memory_max", K_U64, job_memory_max),
    IT("agent", "job_cpu_max", K_U32, job_cpu_max),
    IT("agent", "allow_users", K_LIST, allow_users),
    IT("agent", "allow_groups", K_LIST, allow_groups),
    IT("agent", "allow_users_dir", K_STR, allow_users_dir),
    IT("mpi", "spin_ns", K_U32, spin_ns),
    IT("mpi", "rank_switching", K_STR, rank_switching),
    IT("mpi", "kernel_ranks_per_cpu", K_U32, kernel_ranks_per_cpu),
    IT("mpi", "carrier_placement", K_STR, carrier_placement),
    IT("mpi", "bind_to", K_STR, bind_to),
    IT("mpi", "intra_eager_limit", K_U32, intra_eager_limit),
    IT("mpi", "intra_coop_min", K_U32, intra_coop_min),
    IT("mpi", "eager_limit", K_U32, eager_limit),
    IT("mpi", "coll_bcast", K_STR, coll_bcast),
    IT("mpi", "coll_reduce", K_STR, coll_reduce),
    IT("mpi", "coll_allreduce", K_STR, coll_allreduce),
    IT("mpi", "coll_tree_file", K_STR, coll_tree_file),
    IT("mesh", "listen", K_STR, listen),
    IT("mesh", "peers", K_LIST, peers),
    IT("mesh", "heartbeat_ms", K_U32, heartbeat_ms),
    IT("mesh", "heartbeat_timeout_ms", K_U32, heartbeat_timeout_ms),
    IT("mesh", "link_reconnect_timeout_ms", K_U32, link_reconnect_timeout_ms),
    IT("mesh", "link_resend_max", K_SIZE, link_resend_max),
    IT("mesh", "recv_threads", K_U32, recv_threads),
    IT("mesh", "recv_spin_ns", K_U32, recv_spin_ns),
    IT("mesh", "transport", K_STR, transport),
    IT("mesh", "ofi_provider", K_STR, ofi_provider),
    IT("mesh", "node_number", K_U32, node_number),
    IT("mesh", "query_timeout_ms", K_U32, query_timeout_ms),
    IT("metrics", "listen", K_STR, metrics_listen),
    IT("metrics", "max_connections", K_U32, metrics_max_connections),
    IT("metrics", "timeout", K_U32, metrics_timeout_sec),
    IT("metrics", "max_request_size", K_SIZE, metrics_max_request),
    IT("pool", "size", K_SIZE, pool_size),
    IT("io", "threads", K_U32, io_threads),
    IT("io", "offload_min", K_SIZE, io_offload_min),
};

int config_item_text(const struct agent_config *c, int i, const char **section, const char **key,
                     char *buf, size_t len)
{
    if (i < 0 || (size_t)i >= sizeof items / sizeof items[0]) return -1;
    const struct item *it = &items[i];
    const char *p = (const char *)c + it->off;
    *section = it->section;
    *key = it->key;
    if (len) buf[0] = '\0';
    switch (it->kind) {
    case K_STR: {
        const char *s = *(char *const *)p;
        return snprintf(buf, len, "%s", s ? s : "");
    }
    case K_U32:
        return snprintf(buf, len, "%" PRIu32, *(const uint32_t *)p);
    case K_SIZE:
        return snprintf(buf, len, "%zu", *(const size_t *)p);
    case K_U64:
        return snprintf(buf, len, "%" PRIu64, *(const uint64_t *)p);
    case K_INT:
        return snprintf(buf, len, "%d", *(const int *)p);
    default: {
        /* peers has a count beside it; the allow lists end with NULL */
        char *const *v = *(char **const *)p;
        size_t n = 0, total = 0;
        size_t count = v == c->peers ? c->npeers : SIZE_MAX;
        for (; v && n < count && v[n]; n++) {
            int w = snprintf(total < len ? buf + total : NULL, total < len ? len - total : 0,
                             "%s%s", n ? ", " : "", v[n]);
            total += (size_t)w;
        }
        return (int)total;
    }
    }
}
