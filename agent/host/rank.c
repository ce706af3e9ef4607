#include "rank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carrier.h"
#include "fault.h"
#include "host_app.h"
#include "job.h"
#include "job_spawn.h"
#include "job_thread.h"

/* The rank of the calling thread.  local-exec TLS in the executable: the cheapest lookup,
 * made on every interposed libc call. */
static __thread struct rank *current_rank;

struct rank *rank_current(void)
{
    return current_rank;
}
void rank_set_current(struct rank *r)
{
    current_rank = r;
}

void rank_set_runnable(struct rank *r, int runnable)
{
    if (r->runnable == runnable) return;
    r->runnable = runnable;
    atomic_fetch_add_explicit(r->job->runnable_ranks, runnable ? 1 : -1, memory_order_relaxed);
}

int rank_on_own_thread(const struct rank *r)
{
    return r && (r->carried ? carrier_running() == r : pthread_equal(pthread_self(), r->thread));
}

void rank_end(int kind, int code, const char *msg)
{
    struct rank *r = current_rank;
    if (r && r->unloading && pthread_equal(pthread_self(), r->unloader))
        job_end_in_unload(r->job, r, kind, code, msg);
    if (!rank_on_own_thread(r)) {
        /* A thread the rank started itself: we cannot unwind the rank's main from here, so
         * the job is torn down and this thread ends. */
        if (r && !(kind == RANK_END_CODE && code == 0))
            job_fail(r->job, r, kind, code, msg ? msg : "called exit() from a thread it started");
        else if (r)
            job_fail(r->job, r, RANK_END_CODE, 1, "called exit(0) from a thread it started");
        current_rank = NULL;
        /* from inside the fault handler nothing may be freed: its 64 KiB stack stays behind */
        if (!fault_in_handler()) fault_thread_done();
        pthread_exit(NULL);
    }
    r->end_kind = kind;
    r->end_code = code;
    if (msg) snprintf(r->end_msg, sizeof r->end_msg, "%s", msg);
    siglongjmp(r->exit_jmp, 1);
}

/* What a process's libc sets from argv before main: program_invocation_name (__progname_full)
 * is argv[0], program_invocation_short_name (__progname) its last component ("" both without
 * an argv[0]). */
static void set_prognames(struct rank *r, char **argv)
{
    char *full = argv[0] ? argv[0] : (char *)"";
    char *slash = strrchr(full, '/');
    RANK_VAR(&r->vars, RANK_VAR_PROGNAME_FULL, char *) = full;
    RANK_VAR(&r->vars, RANK_VAR_PROGNAME, char *) = slash ? slash + 1 : full;
}

/* What exit() (and a return from main) does next in a process: the rank's atexit and on_exit
 * handlers, newest first, on_exit's with the status (rank_exit.h).  exit() in a handler ends
 * that handler, and the rest run with the new status; _exit, quick_exit, abort or a fault in
 * one ends the rank without the rest. */
static void run_exit_handlers(struct rank *r)
{
    struct rank_exit *e = &r->libc.exit;
    while (r->end_kind == RANK_END_CODE && !e->skip) {
        if (sigsetjmp(r->exit_jmp, 1) == 0) {
            if (!rank_exit_run_one(e, &e->at_exit, r->end_code)) return;
        } else {
            fault_landed(r->carried ? r->carried->ctx.stack_lo : NULL);
            /* exit() in a handler: say where the status came from, as job_end_in_unload
             * does for the handlers that run at unload */
            if (r->end_kind == RANK_END_CODE && r->end_code != 0)
                snprintf(r->end_msg, sizeof r->end_msg,
                         "exited with code %d in an atexit handler or destructor", r->end_code);
        }
    }
}

void rank_life(struct rank *r, int run)
{
    struct job *j = r->job;
    if (run) {
        /* main may modify argv and its strings: each rank has its own (rank_argv.h), kept
         * until its image is unloaded, as is its process state (rank_proc.h).  volatile: it
         * is read again after siglongjmp (-Wclobbered at -O2). */
        int argc = r->app->argc;
        if (rank_argv_make(&r->app->host->args, &r->args) < 0) r->args.argv = NULL;
        char **volatile argv = r->args.argv;
        if (argv && rank_proc_start(r) < 0) argv = NULL;
        if (!argv) {
            r->end_kind = RANK_END_FAULT;
            r->end_code = 1;
            snprintf(r->end_msg, sizeof r->end_msg, "out of memory starting the rank");
        } else if (sigsetjmp(r->exit_jmp, 1) == 0) {
            /* a carried rank is counted by its carrier (carrier.c) */
            if (!r->carried) rank_set_runnable(r, 1);
            atomic_store_explicit(&r->sig_live, 1, memory_order_release);
            set_prognames(r, argv);
            int code = r->image.main(argc, argv);
            r->end_kind = RANK_END_CODE;
            r->end_code = code;
        } else {
            /* a carrier goes on running other ranks after a fault ended this one */
            fault_landed(r->carried ? r->carried->ctx.stack_lo : NULL);
        }
        if (argv) run_exit_handlers(r);
        /* both paths (return and longjmp) land here still counted as runnable */
        atomic_store_explicit(&r->sig_live, 0, memory_order_release);
        rank_set_runnable(r, 0);
    } else {
        r->end_kind = RANK_END_KILLED;
        r->end_code = 1;
    }
    output_flush(r);
    job_rank_finished(j, r);
}

void *rank_thread_main(void *arg)
{
    struct rank *r = arg;
    current_rank = r;
    fault_thread_setup();
    int run = job_wait_gate(r->job) == 0;
    /* a spawned rank runs once every node of its spawn started its share (job_spawn.h) */
    int go = run && r->spawn_batch ? job_spawn_wait_go(r) : run;
    if (go == 0 && run) {
        r->end_kind = RANK_END_CODE; /* never ran: no failure of the job */
        r->end_code = 0;
        job_rank_finished(r->job, r);
    } else {
        rank_life(r, go > 0);
    }
    current_rank = NULL;
    fault_thread_done();
    return NULL;
}
