/* mpit_vars.c — the table of MPI_T variables, categories and enumerations (mpit.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "mpit.h"
#include "svc_conf.h"

enum { CAT_AGENT, CAT_JOB, CAT_COLL, CAT_RANK, CAT_LINK, CAT_POOL };
const struct tm_t_cat tm_t_cats[] = {
    [CAT_AGENT] = {"tmpi.agent", "tmpid.conf settings of the node's agent (read at its start)"},
    [CAT_JOB] = {"tmpi.job", "the job's settings as libtmpi applies them"},
    [CAT_COLL] = {"tmpi.coll", "collectives of the job on this node (MPIX_Coll_counters)"},
    [CAT_RANK] = {"tmpi.rank", "counters of the calling rank"},
    [CAT_LINK] = {"tmpi.link", "the job's data-link traffic on this node (the metrics endpoint's "
                               "tmpi_messages_total and tmpi_bytes_total)"},
    [CAT_POOL] = {"tmpi.pool", "the node agent's shared buffer pool (the metrics endpoint's "
                               "tmpi_pool_used_bytes and tmpi_pool_capacity_bytes)"},
};
const int tm_t_ncats = sizeof tm_t_cats / sizeof tm_t_cats[0];

static const char *const thread_levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                            "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
enum { ENUM_THREAD_LEVEL };
const struct tm_t_enum tm_t_enums[] = {
    [ENUM_THREAD_LEVEL] = {"thread_level", 4, thread_levels},
};
const int tm_t_nenums = sizeof tm_t_enums / sizeof tm_t_enums[0];

/* ---- readers ---- */
enum { SVC_SPIN, SVC_EAGER, SVC_COOP, SVC_NET_EAGER, SVC_NCPUS };
static void rd_svc(struct tm_rank *me, int arg, uint64_t *v, const char **s, char *buf)
{
    const struct tmpi_svc *svc = me->job->svc;
    (void)s;
    switch (arg) {
    case SVC_SPIN:
        *v = svc->spin_ns;
        break;
    case SVC_EAGER:
        *v = svc->eager_limit;
        break;
    case SVC_COOP:
        *v = svc->coop_min;
        break;
    case SVC_NET_EAGER:
        *v = svc->net_eager_limit;
        break;
    default:
        *v = (uint64_t)svc->ncpus;
        break;
    }
}

enum { COLL_BCAST, COLL_REDUCE, COLL_ALLREDUCE, COLL_TREE_FILE };
static void rd_svc_str(struct tm_rank *me, int arg, uint64_t *v, const char **s, char *buf)
{
    static const char *const key[] = {"coll_bcast", "coll_reduce", "coll_allreduce",
                                      "coll_tree_file"};
    (void)v;
    /* the agent tells its settings by key (svc_conf.h); unset: NULL, shown as "" */
    *s = tm_svc_conf(me->job->svc, "mpi", key[arg], buf, TM_T_STR_MAX) ? buf : NULL;
}

/* The job's TMPI_COLL_* (the rank's environment; they win over tmpid.conf, coll_net.h). */
static const char *const coll_env[] = {"TMPI_COLL_BCAST", "TMPI_COLL_REDUCE", "TMPI_COLL_ALLREDUCE",
                                       "TMPI_COLL_TREE_FILE"};
static void rd_env(struct tm_rank *me, int arg, uint64_t *v, const char **s, char *buf)
{
    (void)me, (void)v;
    *s = getenv(coll_env[arg]);
}

enum { JOB_EAGER, JOB_SPIN, JOB_COOP, JOB_THREAD_LEVEL, JOB_NODES };
static void rd_job(struct tm_rank *me, int arg, uint64_t *v, const char **s, char *buf)
{
    struct tm_job *j = me->job;
    (void)s;
    switch (arg) {
    case JOB_EAGER:
        *v = j->eager_limit;
        break;
    case JOB_SPIN:
        *v = j->spin_ns;
        break;
    case JOB_COOP:
        *v = j->coop_min;
        break;
    case JOB_THREAD_LEVEL:
        *v = (uint64_t)me->thread_level;
        break;
    default:
        *v = (uint64_t)me->info->nnodes;
        break;
    }
}

static void rd_coll_ops(struct tm_rank *me, int kind, uint64_t *v, const char **s, char *buf)
{
    (void)s;
    *v = atomic_load_explicit(&me->job->coll_stats.ops[kind], memory_order_relaxed);
}

static void rd_coll_net(struct tm_rank *me, int kind, uint64_t *v, const char **s, char *buf)
{
    (void)s;
    *v = atomic_load_explicit(&me->job->coll_stats.net[kind], memory_order_relaxed);
}

enum { RANK_WAKES, RANK_BSEND };
static void rd_rank(struct tm_rank *me, int arg, uint64_t *v, const char **s, char *buf)
{
    (void)s;
    if (arg == RANK_WAKES)
        *v = atomic_load_explicit(&me->waker.wakes, memory_order_relaxed);
    else
        *v = atomic_load_explicit(&me->bsend.used, memory_order_relaxed);
}

/* arg 0: bytes in use, 1: capacity. */
static void rd_pool(struct tm_rank *me, int arg, uint64_t *v, const char **s, char *buf)
{
    (void)me, (void)s, (void)buf;
    const struct tmpi_svc *svc = tm_lib_load();
    uint64_t used = 0, cap = 0;
    if (svc && svc->pool_usage) svc->pool_usage(&used, &cap);
    *v = arg ? cap : used;
}

/* arg: bit 2 bytes (else frames), bit 1 the coll channel (else p2p), bit 0 received. */
static void rd_link(struct tm_rank *me, int arg, uint64_t *v, const char **s, char *buf)
{
    (void)me, (void)s, (void)buf;
    const struct tmpi_svc *svc = tm_lib_load();
    uint64_t t[4] = {0, 0, 0, 0};
    if (svc && svc->link_traffic) svc->link_traffic((arg >> 1 & 1) + 1, t);
    *v = t[(arg & 1) * 2 + (arg >> 2 & 1)];
}

/* ---- control variables ---- */
#define AGENT(nm, d, a)                                                                            \
    {                                                                                              \
        nm, d, TM_T_UNSIGNED, MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_SCOPE_READONLY, 0, CAT_AGENT, -1, \
            rd_svc, a                                                                              \
    }
#define AGENT_S(nm, d, a)                                                                          \
    {                                                                                              \
        nm, d, TM_T_STRING, MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_SCOPE_READONLY, 0, CAT_AGENT, -1,   \
            rd_svc_str, a                                                                          \
    }
#define ENV_S(nm, d, a)                                                                            \
    {                                                                                              \
        nm, d, TM_T_STRING, MPI_T_VERBOSITY_USER_BASIC, MPI_T_SCOPE_READONLY, 0, CAT_JOB, -1,      \
            rd_env, a                                                                              \
    }
#define JOB(nm, d, t, sc, e, a)                                                                    \
    {                                                                                              \
        nm, d, t, MPI_T_VERBOSITY_USER_BASIC, sc, 0, CAT_JOB, e, rd_job, a                         \
    }
static const struct tm_t_var cvars[] = {
    AGENT("mpi.spin_ns", "[mpi] spin_ns: nanoseconds a wait spins before it sleeps", SVC_SPIN),
    AGENT("mpi.intra_eager_limit",
          "[mpi] intra_eager_limit: bytes from which a message on one node waits for its receive",
          SVC_EAGER),
    AGENT("mpi.intra_coop_min",
          "[mpi] intra_coop_min: bytes from which both ranks share a copy (0: never)", SVC_COOP),
    AGENT("mpi.eager_limit",
          "[mpi] eager_limit: bytes from which a message between nodes takes three phases",
          SVC_NET_EAGER),
    {"agent.ncpus", "CPUs of the node the agent counts", TM_T_UNSIGNED, MPI_T_VERBOSITY_USER_BASIC,
     MPI_T_SCOPE_CONSTANT, 0, CAT_AGENT, -1, rd_svc, SVC_NCPUS},
    AGENT_S("mpi.coll_bcast", "[mpi] coll_bcast: Bcast algorithm across nodes", COLL_BCAST),
    AGENT_S("mpi.coll_reduce", "[mpi] coll_reduce: Reduce algorithm across nodes", COLL_REDUCE),
    AGENT_S("mpi.coll_allreduce", "[mpi] coll_allreduce: Allreduce algorithm across nodes",
            COLL_ALLREDUCE),
    AGENT_S("mpi.coll_tree_file", "[mpi] coll_tree_file: tree file of the collectives",
            COLL_TREE_FILE),
    ENV_S("TMPI_COLL_BCAST", "the job's Bcast algorithm across nodes (wins over mpi.coll_bcast)",
          COLL_BCAST),
    ENV_S("TMPI_COLL_REDUCE", "the job's Reduce algorithm across nodes", COLL_REDUCE),
    ENV_S("TMPI_COLL_ALLREDUCE", "the job's Allreduce algorithm across nodes", COLL_ALLREDUCE),
    ENV_S("TMPI_COLL_TREE_FILE", "the job's tree file of the collectives", COLL_TREE_FILE),
    JOB("job.intra_eager_limit", "the eager limit on one node as applied (capped at 2 MiB)",
        TM_T_UNSIGNED, MPI_T_SCOPE_READONLY, -1, JOB_EAGER),
    JOB("job.spin_ns", "the spin budget as applied (ten times mpi.spin_ns across nodes)", TM_T_ULL,
        MPI_T_SCOPE_READONLY, -1, JOB_SPIN),
    JOB("job.intra_coop_min", "the shared-copy threshold as applied", TM_T_UNSIGNED,
        MPI_T_SCOPE_READONLY, -1, JOB_COOP),
    JOB("job.thread_level", "the rank's thread level (MPI_Init_thread, MPI_Session_init)", TM_T_INT,
        MPI_T_SCOPE_READONLY, ENUM_THREAD_LEVEL, JOB_THREAD_LEVEL),
    JOB("job.nodes", "nodes the job runs on", TM_T_INT, MPI_T_SCOPE_CONSTANT, -1, JOB_NODES),
};

/* ---- performance variables: per collective kind two counters, then the rank's ---- */
static const char *const coll_names[MPIX_COLL_KINDS] = {
    "barrier",  "bcast",     "reduce",    "allreduce",      "gather",
    "gatherv",  "scatter",   "scatterv",  "allgather",      "allgatherv",
    "alltoall", "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block",
    "scan",     "exscan"};
static const struct tm_t_var rank_pvars[] = {
    {"rank.slow_wakes", "wakes of the rank that went through the futex", TM_T_ULL,
     MPI_T_VERBOSITY_TUNER_BASIC, 0, MPI_T_PVAR_CLASS_COUNTER, CAT_RANK, -1, rd_rank, RANK_WAKES},
    {"rank.bsend_bytes_used",
     "bytes of the rank's own attached buffer (MPI_Buffer_attach) buffered sends hold now",
     TM_T_ULL, MPI_T_VERBOSITY_USER_BASIC, 0, MPI_T_PVAR_CLASS_LEVEL, CAT_RANK, -1, rd_rank,
     RANK_BSEND},
    {"tmpi_pool_used_bytes", "bytes of the node agent's buffer pool in use", TM_T_ULL,
     MPI_T_VERBOSITY_USER_BASIC, 0, MPI_T_PVAR_CLASS_LEVEL, CAT_POOL, -1, rd_pool, 0},
    {"tmpi_pool_capacity_bytes", "the node agent's buffer pool size ([pool] size)", TM_T_ULL,
     MPI_T_VERBOSITY_USER_BASIC, 0, MPI_T_PVAR_CLASS_SIZE, CAT_POOL, -1, rd_pool, 1},
};
#define NCOLL_PVARS (2 * MPIX_COLL_KINDS)
#define NRANK_PVARS ((int)(sizeof rank_pvars / sizeof rank_pvars[0]))
/* Link traffic: {messages, bytes} x {p2p, coll} x {sent, received}, named after the metric and
 * its channel and direction labels: tmpi_bytes_total.coll.received is this job's share on this
 * node of tmpi_bytes_total{channel="coll",direction="received"} (docs/USER.md). */
#define NLINK_PVARS 8
static const char *const link_metric[2] = {"tmpi_messages_total", "tmpi_bytes_total"};
static const char *const link_channel[2] = {"p2p", "coll"};
static const char *const link_dir[2] = {"sent", "received"};

#define NFIXED ((int)(sizeof cvars / sizeof cvars[0]))

static const char *fixed_name_at(int i, void *arg, char buf[TM_T_NAME_MAX])
{
    return i < NFIXED ? cvars[i].name : NULL;
}

/* The agent's tmpid.conf settings beyond the fixed ones (svc config_item), as strings named
 * <section>.<key>: item k of the agent is the (k - skipped)-th of them, where the ones the
 * fixed table already shows (with their numeric types) are skipped. */
static int conf_name(int k, char name[TM_T_NAME_MAX], char *val, size_t len)
{
    const struct tmpi_svc *svc = tm_lib_load();
    if (!svc || !svc->config_item) return -1;
    const char *sec, *key;
    if (svc->config_item(k, &sec, &key, val, len) < 0) return -1;
    snprintf(name, TM_T_NAME_MAX, "%s.%s", sec, key);
    return tm_t_find(name, fixed_name_at, NULL) >= 0;
}

/* Agent item of the n-th extra variable, -1 if there are not that many. */
static int conf_item(int n, char name[TM_T_NAME_MAX])
{
    char val[8];
    for (int k = 0;; k++) {
        int r = conf_name(k, name, val, sizeof val);
        if (r < 0) return -1;
        if (r == 0 && n-- == 0) return k;
    }
}

static void rd_conf(struct tm_rank *me, int k, uint64_t *v, const char **s, char *buf)
{
    char name[TM_T_NAME_MAX];
    (void)me, (void)v;
    *s = conf_name(k, name, buf, TM_T_STR_MAX) < 0 ? NULL : buf;
}

int tm_t_cvar(int i, struct tm_t_var *out, char name[TM_T_NAME_MAX])
{
    if (i < 0) return -1;
    if (i < NFIXED) {
        *out = cvars[i];
        return 0;
    }
    int k = conf_item(i - NFIXED, name);
    if (k < 0) return -1;
    *out = (struct tm_t_var){name,
                             "tmpid.conf setting of the node's agent (tmpid.conf(5)), as text",
                             TM_T_STRING,
                             MPI_T_VERBOSITY_TUNER_DETAIL,
                             MPI_T_SCOPE_READONLY,
                             0,
                             CAT_AGENT,
                             -1,
                             rd_conf,
                             k};
    return 0;
}

/* The collective counters are named from their kind: coll.<kind>.operations and
 * coll.<kind>.net_messages, made here rather than kept in a table of 34 lines. */
int tm_t_pvar(int i, struct tm_t_var *out, char name[TM_T_NAME_MAX])
{
    if (i < 0 || i >= tm_t_npvars()) return -1;
    if (i >= NCOLL_PVARS + NRANK_PVARS) {
        int k = i - NCOLL_PVARS - NRANK_PVARS; /* bit 2: bytes, bit 1: coll, bit 0: received */
        int bytes = k >> 2 & 1, ch = k >> 1 & 1, rx = k & 1;
        snprintf(name, TM_T_NAME_MAX, "%s.%s.%s", link_metric[bytes], link_channel[ch],
                 link_dir[rx]);
        *out = (struct tm_t_var){name,
                                 bytes ? "bytes of the job's data-link frames on this node, "
                                         "headers included"
                                       : "data-link frames of the job on this node",
                                 TM_T_ULL,
                                 MPI_T_VERBOSITY_USER_BASIC,
                                 0,
                                 MPI_T_PVAR_CLASS_COUNTER,
                                 CAT_LINK,
                                 -1,
                                 rd_link,
                                 k};
        return 0;
    }
    if (i >= NCOLL_PVARS) {
        *out = rank_pvars[i - NCOLL_PVARS];
        return 0;
    }
    int k = i / 2, net = i % 2;
    snprintf(name, TM_T_NAME_MAX, "coll.%s.%s", coll_names[k], net ? "net_messages" : "operations");
    *out = (struct tm_t_var){
        name,
        net ? "network messages the collective's inter-node phase sent (this node's ranks)"
            : "calls of the collective, counted once per call (by its rank 0, on this node)",
        TM_T_ULL,
        MPI_T_VERBOSITY_USER_BASIC,
        0,
        MPI_T_PVAR_CLASS_COUNTER,
        CAT_COLL,
        -1,
        net ? rd_coll_net : rd_coll_ops,
        k};
    return 0;
}

int tm_t_ncvars(void)
{
    char name[TM_T_NAME_MAX], val[8];
    int n = NFIXED;
    for (int k = 0;; k++) {
        int r = conf_name(k, name, val, sizeof val);
        if (r < 0) return n;
        n += r == 0;
    }
}

int tm_t_npvars(void)
{
    return NCOLL_PVARS + NRANK_PVARS + NLINK_PVARS;
}
