/* lib.h — what every libtmpi file shares: the process-wide library state (the agent's service
 * table, found once), the calling thread's rank, visibility and PMPI alias macros.
 *
 * libtmpi is loaded once per agent process and shared by every rank of every job, so the only
 * process-wide mutable state is struct tm_lib (written once under pthread_once); everything
 * else hangs off the per-job state (job.h) reached through the calling rank. */
#ifndef TMPI_LIBCLIENT_LIB_H
#define TMPI_LIBCLIENT_LIB_H

#include <pthread.h>
#include <stddef.h>

#include "mpi.h"
#include "svc.h"

/* Exported symbols: MPI_* and PMPI_* only (the project builds with -fvisibility=hidden). */
#define TM_API __attribute__((visibility("default")))

/* Every entry point is written as PMPI_name; MPI_name is a weak alias so a profiling layer can
 * replace it and still call the PMPI_ version. */
#define TM_ALIAS(name)                                                                             \
    extern __typeof(PMPI_##name) MPI_##name                                                        \
        __attribute__((weak, alias("PMPI_" #name), visibility("default")));

#define TM_LIKELY(x) __builtin_expect(!!(x), 1)
#define TM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TM_CACHELINE 64

/* The largest tag a program may use; MPI_Comm_get_attr(MPI_TAG_UB) answers it. */
#define TM_TAG_UB 0x3fffffff

struct tm_rank;
struct tm_comm_coll;

/* Process-wide: the agent's service table.  Written once by tm_lib_load() under `once`, read
 * only afterwards. */
struct tm_lib {
    pthread_once_t once;
    const struct tmpi_svc *svc;
    int other_abi; /* an agent's svc of another TMPI_SVC_ABI was found (0: none) */
    /* per-thread state of threads a rank created (struct tm_tstate, freed at thread exit) */
    pthread_key_t thread_key;
    int thread_key_ok;
    /* The calling thread's rank, its state made if no model opened it yet (mpi/rank_open.h,
     * registered by mpi/init.c when libtmpi loads): an upcall for the calls of lower layers
     * that MPI allows before initialization (info objects, session error handlers). */
    struct tm_rank *(*rank_pre)(const char *fn);
    /* What communicators need of the collectives above them (comm/comm_coll.h: their
     * collective state, the rounds of Comm_dup and Comm_split), registered by mpi/init.c when
     * libtmpi loads (coll/coll_comm.c's table): comm/ calls through it. */
    const struct tm_comm_coll *comm_coll;
};
extern struct tm_lib tm_lib;

/* The rank the calling thread runs (set by MPI_Init, NULL before; in a thread the rank created,
 * set at that thread's first MPI call by tm_self_slow).  initial-exec: libtmpi is a load-time
 * dependency of every module, so its TLS sits in the static block and a read is one
 * instruction. */
extern __thread struct tm_rank *tm_cur __attribute__((tls_model("initial-exec")));
/* 1 in a thread the rank created (MPI_THREAD_MULTIPLE): it is a real thread of its own, never
 * a carried context, so it waits on the futex (wait.c) and is not MPI_Is_thread_main. */
extern __thread int tm_cur_child __attribute__((tls_model("initial-exec")));

/* tm_lib.rank_pre, or the current rank where it is not registered. */
static inline struct tm_rank *tm_rank_pre(const char *fn)
{
    return tm_lib.rank_pre ? tm_lib.rank_pre(fn) : tm_cur;
}

/* What a thread the rank created keeps for itself (tm_lib.thread_key, freed at its exit). */
struct tm_tstate {
    void *scratch; /* reduction scratch (coll.c tm_coll_scratch) */
    size_t scratch_size;
};
/* The calling thread's, made on first use; NULL when out of memory. */
struct tm_tstate *tm_tstate_get(void);

/* Finds the agent's table; NULL when the program does not run under a TMPI agent. */
const struct tmpi_svc *tm_lib_load(void);

/* tmpi_client_ops.tls_get / tls_set: the calling thread's rank record (tm_cur and what MPI_Init
 * compares it with), which a carrier thread moves with a rank's context (svc.h). */
void *tm_tls_get(void);
void tm_tls_set(void *rank);

/* A thread without tm_cur: the rank's, if the agent says it runs for a rank that called
 * MPI_Init (threads a rank creates inherit its context, agent interpose_thread.c). */
struct tm_rank *tm_self_slow(void);

static inline struct tm_rank *tm_self(void)
{
    struct tm_rank *me = tm_cur;
    if (TM_LIKELY(me != NULL)) return me;
    return tm_self_slow();
}

#endif
