/* init.c — finding the agent, MPI_Init/Finalize and the environment queries. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attr.h"
#include "coll.h"
#include "coll_net.h"
#include "comm.h"
#include "dyn_net.h"
#include "errh.h"
#include "info.h"
#include "job_life.h"
#include "mstate.h"
#include "lib.h"
#include "objtab.h"
#include "rank_open.h"

struct tm_lib tm_lib = {.once = PTHREAD_ONCE_INIT, .svc = NULL};
__thread struct tm_rank *tm_cur __attribute__((tls_model("initial-exec")));
__thread int tm_cur_child __attribute__((tls_model("initial-exec")));
/* The rank info tm_cur was set for: if the agent reuses a thread for a later job, tm_cur is
 * stale and this differs from what rank_self() says (compared as pointers, never read). */
static __thread const struct tmpi_rank_info *tm_cur_info __attribute__((tls_model("initial-exec")));

void *tm_tls_get(void)
{
    return tm_cur;
}

void tm_tls_set(void *rank)
{
    struct tm_rank *me = rank;
    tm_cur = me;
    tm_cur_info = me ? me->info : NULL;
}

#if defined(__SANITIZE_THREAD__)
#define TM_BUILT_WITH_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TM_BUILT_WITH_TSAN 1
#endif
#endif

/* A TSan process that loads an uninstrumented libtmpi (a module linked by another build's
 * tmpicc: its RUNPATH picks that build's libtmpi; or a program built with -fsanitize=thread,
 * whose runtime the agent preloads into the job host) sees none of our atomics, which carry all
 * of the p2p and collective synchronisation, yet still sees our memcpy/memset through its
 * interceptors: every message then looks like a data race.  Say so once instead of leaving
 * the user to chase false reports. */
static void warn_tsan_mismatch(void)
{
#ifndef TM_BUILT_WITH_TSAN
    if (!dlsym(RTLD_DEFAULT, "__tsan_init")) return;
    Dl_info di;
    const char *path = dladdr((void *)&tm_lib, &di) && di.dli_fname ? di.dli_fname : "libtmpi";
    fprintf(stderr,
            "libtmpi: %s is not built with ThreadSanitizer but the process runs it: TSan cannot "
            "see libtmpi's synchronisation between ranks, so races it reports inside libtmpi "
            "(the memcpy of message data) are false, those in the program's own threads are "
            "real; for a run without them use a TMPI built with make tsan and its tmpicc\n",
            path);
#endif
}

static void tstate_free(void *p)
{
    struct tm_tstate *t = p;
    free(t->scratch);
    free(t);
}

struct tm_tstate *tm_tstate_get(void)
{
    if (!tm_lib.thread_key_ok) return NULL;
    struct tm_tstate *t = pthread_getspecific(tm_lib.thread_key);
    if (t) return t;
    t = calloc(1, sizeof *t);
    if (t && pthread_setspecific(tm_lib.thread_key, t) != 0) {
        free(t);
        t = NULL;
    }
    return t;
}

struct tm_rank *tm_self_slow(void)
{
    const struct tmpi_svc *svc = tm_lib_load();
    const struct tmpi_rank_info *info = svc ? svc->rank_self() : NULL;
    if (!info) return NULL;
    struct tm_job *job;
    if (tm_job_get(svc, &job) < 0) return NULL;
    struct tm_rank *me = tm_job_rank(job, info->rank);
    /* Its rank has not called MPI_Init (that thread created this one before it did: the
     * program may call MPI_Initialized and friends, which answer for the rank). */
    if (me->info != info || me->state == TM_RANK_NEW) return NULL;
    tm_cur = me;
    tm_cur_info = info;
    tm_cur_child = 1;
    return me;
}

static void lib_load_once(void)
{
    tm_lib.thread_key_ok = pthread_key_create(&tm_lib.thread_key, tstate_free) == 0;
    const struct tmpi_svc *svc = dlsym(RTLD_DEFAULT, TMPI_SVC_SYMBOL);
    if (svc && svc->abi == TMPI_SVC_ABI) {
        tm_lib.svc = svc;
        warn_tsan_mismatch();
    } else if (svc) {
        tm_lib.other_abi = svc->abi;
    }
}

const struct tmpi_svc *tm_lib_load(void)
{
    pthread_once(&tm_lib.once, lib_load_once);
    return tm_lib.svc;
}

/* The rank's libtmpi state is made by the first of MPI_Init and MPI_Session_init and kept
 * until the job ends; the agent hears TMPI_PHASE_INIT whenever the rank goes from no model
 * open to one, TMPI_PHASE_FINALIZED when its last one closes (MPI_Finalize with no session
 * open, the last MPI_Session_finalize after MPI_Finalize or without MPI_Init). */
/* A later open asks for more threads than the rank has: MULTIPLE can be switched on while
 * the rank has no fast boxes out (they have one producer, fbox.h, and tm_fb_out makes none
 * once mt is set) — the only thread in MPI now is the caller, as the lower levels promise. */
static void rank_upgrade(struct tm_rank *me, int required)
{
    if (required <= me->thread_level || me->mt) return;
    if (required < MPI_THREAD_MULTIPLE) {
        me->thread_level = required;
        return;
    }
    if (me->fb_out) return;
    if (tm_objtab_make(&me->dtypes) < 0 || tm_objtab_make(&me->uops) < 0 ||
        tm_objtab_make(&me->freqs) < 0 || tm_objtab_make(&me->fmsgs) < 0)
        return;
    me->thread_level = MPI_THREAD_MULTIPLE;
    me->mt = 1;
    tm_mst_multiple(me);
}

/* A spawned rank starts on the world rank of one that finalized and gave it back
 * (tm_spawn_release): the MPI state that one's program made goes (its communicators, MPI_COMM_SELF,
 * its attached buffer, its parent); the mailbox, pools and fast boxes stay, as other ranks'
 * rings point into them.  job->open_lock held. */
static void rank_slot_reset(struct tm_rank *me)
{
    tm_commtab_destroy(me);
    tm_comm_fini_shared(&me->self);
    memset(&me->self, 0, sizeof me->self);
    me->bsend.buf = NULL;
    me->bsend.size = 0;
    me->world_model = 0;
    me->nsessions = 0;
    me->parent_made = 0;
    me->parent = MPI_COMM_NULL;
    me->slot_freed = 0;
    tm_mst_reopened(me);
}

/* The rank's libtmpi state is made by the first of MPI_Init, MPI_Session_init and the calls
 * MPI allows before them (info objects, MPI_T) and kept until the job ends; the agent hears
 * TMPI_PHASE_INIT whenever the rank goes from no model open to one, TMPI_PHASE_FINALIZED when
 * its last one closes (MPI_Finalize with no session open, the last MPI_Session_finalize after
 * MPI_Finalize or without MPI_Init). */
int tm_rank_open(const char *fn, int required, enum tm_open what, struct tm_rank **ret_me)
{
    const struct tmpi_svc *svc = tm_lib_load();
    if (!svc && tm_lib.other_abi) {
        fprintf(stderr,
                "%s: this libtmpi speaks the agent interface version %d, the agent runs version "
                "%d: run the program with the libtmpi of the agent's installation\n",
                fn, TMPI_SVC_ABI, tm_lib.other_abi);
        exit(1);
    }
    if (!svc) {
        fprintf(stderr,
                "%s: not running under a TMPI agent; start the program with "
                "tmpi-launch -n N PROGRAM\n",
                fn);
        exit(1);
    }
    const struct tmpi_rank_info *info = svc->rank_self();
    if (!info) {
        fprintf(stderr, "%s: called from a thread that is not an MPI rank's main thread\n", fn);
        return MPI_ERR_OTHER;
    }
    struct tm_job *job;
    int r = tm_job_get(svc, &job);
    if (r < 0) {
        fprintf(stderr, "rank %d: %s: cannot set up the job's state: %s\n", info->rank, fn,
                strerror(-r));
        svc->job_abort(1, "MPI_Init failed: cannot set up the job's state");
    }
    struct tm_rank *me = tm_job_rank(job, info->rank);
    pthread_mutex_lock(&job->open_lock);
    int fresh = me->info != info || me->state == TM_RANK_NEW;
    if (!fresh && me->slot_freed) {
        pthread_mutex_unlock(&job->open_lock);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_OTHER, fn,
                      "this spawned rank finalized and gave its world rank %d back to the "
                      "universe: MPI cannot be opened again in it",
                      me->rank);
    }
    if (fresh && me->state != TM_RANK_NEW) rank_slot_reset(me);
    if (fresh) {
        me->info = info;
        me->main_thread = pthread_self();
        /* Every level up to MPI_THREAD_MULTIPLE: threads the rank creates find it at their
         * first MPI call (tm_self_slow).  MULTIPLE switches on the locks of what is otherwise
         * the rank thread's own (request pool, envelope cache) and keeps its sends off the
         * fast boxes, which have one producer (job.h tm_rank.mt); the lower levels keep the
         * single-threaded path as it is. */
        me->thread_level = me->mt ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
        r = tm_commtab_init(me);
        if (r < 0) {
            fprintf(stderr, "rank %d: %s: out of memory\n", info->rank, fn);
            svc->job_abort(1, "MPI_Init failed: out of memory");
        }
        me->state = TM_RANK_INIT;
    } else if (what == TM_OPEN_WORLD && me->world_model) {
        pthread_mutex_unlock(&job->open_lock);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_OTHER, fn, "MPI is already %s",
                      me->world_model == 2 ? "finalized" : "initialized");
    }
    int was_open = me->world_model == 1 || me->nsessions > 0;
    if (what != TM_OPEN_NONE) rank_upgrade(me, required);
    if (what == TM_OPEN_WORLD) me->world_model = 1;
    if (what == TM_OPEN_SESSION) me->nsessions++;
    pthread_mutex_unlock(&job->open_lock);
    tm_cur = me;
    tm_cur_info = info;
    if (!was_open && what != TM_OPEN_NONE) {
        if (!fresh) tm_mst_reopened(me);
        svc->rank_mpi_phase(TMPI_PHASE_INIT);
    }
    *ret_me = me;
    return MPI_SUCCESS;
}

static struct tm_rank *rank_pre(const char *fn)
{
    struct tm_rank *me = tm_self();
    if (me) return me;
    const struct tmpi_svc *svc = tm_lib_load();
    if (!svc || !svc->rank_self()) return NULL;
    return tm_rank_open(fn, MPI_THREAD_SINGLE, TM_OPEN_NONE, &me) == MPI_SUCCESS ? me : NULL;
}

/* Before any MPI call: libtmpi's constructors run when the program loads.  The upcalls of
 * lower layers into higher ones that need no job (core/lib.h). */
__attribute__((constructor)) static void register_rank_pre(void)
{
    tm_lib.rank_pre = rank_pre;
    tm_lib.comm_coll = &tm_coll_comm;
}

void tm_rank_close(struct tm_rank *me, enum tm_open what)
{
    struct tm_job *job = me->job;
    pthread_mutex_lock(&job->open_lock);
    if (what == TM_OPEN_WORLD) me->world_model = 2;
    if (what == TM_OPEN_SESSION) me->nsessions--;
    int closed = me->world_model != 1 && me->nsessions == 0;
    pthread_mutex_unlock(&job->open_lock);
    if (!closed) return;
    tm_mst_finalized(me);
    job->svc->rank_mpi_phase(TMPI_PHASE_FINALIZED);
    /* a spawned rank is done with MPI: its world rank may hold a later spawn's rank */
    if (me->spawn) {
        pthread_mutex_lock(&job->open_lock);
        me->slot_freed = tm_spawn_release(me, me->rank, 1) == 0;
        pthread_mutex_unlock(&job->open_lock);
    }
}

static int init_common(const char *fn, int required, int *provided, int *argc, char ***argv)
{
    struct tm_rank *me = NULL;
    int r = tm_rank_open(fn, required, TM_OPEN_WORLD, &me);
    if (r != MPI_SUCCESS) return r;
    /* the collective settings are the job's: a bad one is this call's error (coll_net.h) */
    char why[256];
    if (tm_coll_conf_check(me->job->svc, why, sizeof why) < 0)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "%s", why);
    if (argc && argv) tm_info_env_args(me, *argc, *argv);
    if (provided) *provided = me->thread_level;
    return MPI_SUCCESS;
}

TM_API int PMPI_Init(int *argc, char ***argv)
{
    return init_common("MPI_Init", MPI_THREAD_SINGLE, NULL, argc, argv);
}
TM_ALIAS(Init)

TM_API int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return init_common("MPI_Init_thread", required, provided, argc, argv);
}
TM_ALIAS(Init_thread)

TM_API int PMPI_Finalize(void)
{
    struct tm_rank *me = tm_self();
    if (!me || me->world_model != 1)
        return tm_err_noco(MPI_ERR_OTHER, "MPI_Finalize", TM_ERR_NOINIT);
    int r = tm_comm_finalize_attrs(me);
    if (r != MPI_SUCCESS)
        return tm_err(me, MPI_COMM_WORLD, r, "MPI_Finalize", "an attribute delete callback failed");
    /* MPI_Finalize is collective over MPI_COMM_WORLD: no rank may leave (and have its
     * memory go) while a peer may still read from it. */
    int began =
        tm_mst_begin(me, "MPI_Finalize", NULL, MPI_COMM_WORLD, TMPI_PEER_ALL, TMPI_TAG_NONE);
    struct tm_commref *world = tm_comm_get(&me->comms, MPI_COMM_WORLD);
    if (tm_coll_net_spans(me, world->c)) {
        r = PMPI_Barrier(MPI_COMM_WORLD);
    } else {
        /* its own rendezvous, which a peer's collective cannot pair with (coll_fin.c) */
        char why[256];
        if (tm_coll_finalize_sync(me, world, why, sizeof why) < 0) me->job->svc->job_abort(1, why);
        /* every member is in MPI_Finalize now: the collectives' barrier pairs with nothing
         * else, and keeps each member until the others are past their last collective */
        r = PMPI_Barrier(MPI_COMM_WORLD);
    }
    tm_mst_end(me, began);
    if (r != MPI_SUCCESS) return r;
    tm_rank_close(me, TM_OPEN_WORLD);
    return MPI_SUCCESS;
}
TM_ALIAS(Finalize)

TM_API int PMPI_Initialized(int *flag)
{
    if (!flag) return tm_err_noco(MPI_ERR_ARG, "MPI_Initialized", "flag is NULL");
    /* The world model's (MPI 4.0 §11.2.1): a rank that only opened sessions is not. */
    struct tm_rank *me = tm_self();
    *flag = me && me->world_model != 0;
    return MPI_SUCCESS;
}
TM_ALIAS(Initialized)

TM_API int PMPI_Finalized(int *flag)
{
    if (!flag) return tm_err_noco(MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
    struct tm_rank *me = tm_self();
    *flag = me && me->world_model == 2;
    return MPI_SUCCESS;
}
TM_ALIAS(Finalized)

TM_API int PMPI_Query_thread(int *provided)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Query_thread", TM_ERR_NOINIT);
    if (!provided) return tm_err_noco(MPI_ERR_ARG, "MPI_Query_thread", "provided is NULL");
    *provided = me->thread_level;
    return MPI_SUCCESS;
}
TM_ALIAS(Query_thread)

TM_API int PMPI_Is_thread_main(int *flag)
{
    struct tm_rank *me = tm_self();
    if (!flag) return tm_err_noco(MPI_ERR_ARG, "MPI_Is_thread_main", "flag is NULL");
    /* The thread that called MPI_Init holds the rank's context (it may move between carrier
     * threads, so pthread_self() says nothing); threads the rank created are children. */
    *flag = me && !tm_cur_child;
    return MPI_SUCCESS;
}
TM_ALIAS(Is_thread_main)

TM_API int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    const struct tmpi_svc *svc = tm_lib_load();
    char why[128];
    snprintf(why, sizeof why, "MPI_Abort called on %s (errorcode %d)",
             comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "a communicator", errorcode);
    if (svc && svc->rank_self()) svc->job_abort(errorcode, why);
    fprintf(stderr, "%s\n", why);
    exit(errorcode);
}
TM_ALIAS(Abort)

TM_API int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Get_processor_name", "name or resultlen is NULL");
    struct tm_rank *me = tm_self();
    const char *h = me && me->info && me->info->hostname ? me->info->hostname : "localhost";
    int n = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", h);
    *resultlen = n < MPI_MAX_PROCESSOR_NAME ? n : MPI_MAX_PROCESSOR_NAME - 1;
    return MPI_SUCCESS;
}
TM_ALIAS(Get_processor_name)

TM_API int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Get_version", "version or subversion is NULL");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
TM_ALIAS(Get_version)

TM_API int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Get_library_version", "argument is NULL");
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "TMPI (threaded MPI), MPI %d.%d",
                     MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}
TM_ALIAS(Get_library_version)

/* A hook for profiling libraries, which interpose MPI_Pcontrol and read level; the MPI library
 * itself returns at once (MPI 3.1 §14.2.4), before MPI_Init and after MPI_Finalize too. */
TM_API int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}
TM_ALIAS(Pcontrol)

TM_API double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
TM_ALIAS(Wtime)

TM_API double PMPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) < 0) return 1e-9;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
TM_ALIAS(Wtick)
