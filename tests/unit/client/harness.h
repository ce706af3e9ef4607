/* harness.h — runs libtmpi without an agent: this test program exports the agent's service
 * table (proto/svc/svc.h) itself and starts N threads as the ranks of one job, each calling a test
 * function that uses the MPI API.  Aborts and cancellations go through the same upcalls the
 * agent uses, so a test can check that every blocked rank is woken.
 *
 * With nnodes > 1 the ranks are split over simulated nodes: one libtmpi job state per node
 * (job_state is per node, as in separate agents), info->net set, a net_send that queues each
 * frame (header encoded with netd_hdr_encode) per (source node, destination node, channel),
 * one receive daemon thread per node that decodes and checks the header as the agent does and
 * calls net_header / net_frame in order, and a bounded buffer pool per node.  done callbacks
 * run inline (payload copied at once) or later from the daemon (payload read from the
 * sender's buffer only at delivery), alternating, so both orders are exercised. */
#ifndef TMPI_TEST_CLIENT_HARNESS_H
#define TMPI_TEST_CLIENT_HARNESS_H

#include <stdint.h>
#include <stdio.h>

#include "mpi.h"

#include "../../check.h"

enum { TH_DONE_MIXED = 0, TH_DONE_INLINE = 1, TH_DONE_LATER = 2 };
#define TH_COOP_OFF UINT32_MAX

struct th_opts {
    int nranks;
    uint32_t eager_limit; /* 0: libtmpi's default */
    uint32_t coop_min;    /* 0: the agent's default (256 KiB); TH_COOP_OFF: no shared copies */
    uint32_t spin_ns;     /* 0: libtmpi's default */
    int ncpus;            /* 0: the machine's */
    /* simulated nodes (0 or 1: one node, no network) */
    int nnodes;
    int round_robin;          /* rank i on node i % nnodes; else blocks of consecutive ranks */
    size_t pool_bytes;        /* per node; 0: 256 MiB */
    const size_t *pool_of;    /* NULL, or nnodes entries overriding pool_bytes (0: keep it) */
    uint32_t net_eager_limit; /* 0: 100 KiB, the agent's default */
    int done_mode;            /* TH_DONE_* */
};

/* What a run ended with. */
struct th_result {
    int failed_rank; /* the first rank to fail (returned or exited nonzero: that ends the job,
                      * as in the agent), -1 if none */
    int code;        /* its code */
    int aborted;     /* job_abort was called */
    int abort_code;
    char abort_why[256];
    double seconds;
    /* simulated network (nnodes > 1): frames by netd type, HOLD ACKs, refused pool requests */
    uint64_t frames[16];
    uint64_t hold_acks;
    uint64_t pool_refused;
};

typedef int (*th_rank_fn)(int rank, int size, void *arg);

/* Runs fn(rank, size, arg) on o->nranks threads as one job; 0 if every rank returned 0 and
 * nobody aborted, else 1 (details in *ret, which may be NULL). */
int th_run(const struct th_opts *o, th_rank_fn fn, void *arg, struct th_result *ret);

/* Queues a frame from node `from` to node `to` as if that node's agent had sent it (tests of
 * protocol errors).  Rank threads only, nnodes > 1; 0 or -EINVAL. */
struct netd_hdr;
int th_net_inject(int from, int to, int channel, const struct netd_hdr *h);
/* From now on net_send from node `from` to node `to` fails with -EPIPE (a lost link). */
int th_net_break(int from, int to);

/* libtmpi's record of what world_rank does in MPI (tmpi_client_ops.rank_mpi, as the agent
 * asks it); 0, -ENOENT before its node's state exists, -EINVAL. */
struct tmpi_rank_mpi;
int th_rank_mpi(int world_rank, struct tmpi_rank_mpi *out);

/* Registers and runs named tests: th_main(argc, argv, tests) runs those named on the command
 * line, or all; prints PASS/FAIL per test; returns the process exit status. */
struct th_test {
    const char *name;
    int (*run)(void); /* 0 on success */
};
int th_main(int argc, char **argv, const struct th_test *tests);

/* The message of a failed check: rank, place, condition, then what came instead. */
#define TH_REPORT(condstr, ...) check_report_(__FILE__, __LINE__, condstr, "" __VA_ARGS__)

/* Inside a rank function: fail with what was expected and what came instead (tests/check.h;
 * the rank function returns 1). */
#define TH_CHECK(cond, ...) CHECK_OR(return 1, cond, __VA_ARGS__)

#define TH_MPI(call)                                                                               \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        TH_CHECK(e_ == MPI_SUCCESS, "expected MPI_SUCCESS from %s, got %d", #call, e_);            \
    } while (0)

#endif
