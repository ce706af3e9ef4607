/* test_mstate.c — what libtmpi tells the agent about a rank (mstate.h, svc.h rank_mpi): a rank
 * in MPI_Recv is "waiting" with its call, source, tag and communicator, and blocked once it
 * sleeps; it computes again after the call; a collective names itself without a peer; a
 * finalized rank has ended; an MPI_THREAD_MULTIPLE rank is unknown. */
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "svc.h"

static _Atomic int go_on; /* ranks are threads of this process: a plain shared flag */

static void pause_a_bit(void)
{
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Waits (bounded: 20 s on a loaded machine) until rank r's record says what want() wants. */
static int await(int r, int (*want)(const struct tmpi_rank_mpi *), struct tmpi_rank_mpi *out)
{
    for (int i = 0; i < 10000; i++) {
        if (th_rank_mpi(r, out) == 0 && want(out)) return 1;
        pause_a_bit();
    }
    return 0;
}

static int is_blocked(const struct tmpi_rank_mpi *m)
{
    return m->activity == TMPI_ACT_WAITING && m->blocked;
}
static int is_computing(const struct tmpi_rank_mpi *m)
{
    return m->activity == TMPI_ACT_COMPUTING;
}
static int is_ended(const struct tmpi_rank_mpi *m)
{
    return m->activity == TMPI_ACT_ENDED;
}

static int rank_recv(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    int x = 0;
    struct tmpi_rank_mpi m;
    if (rank == 1) {
        TH_MPI(MPI_Recv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        TH_MPI(MPI_Send(&x, 1, MPI_INT, 0, 10, MPI_COMM_WORLD));
        while (!atomic_load(&go_on)) /* computing, as far as MPI knows */
            sched_yield();
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        TH_CHECK(await(1, is_blocked, &m), "rank 1 never showed as blocked in MPI_Recv");
        TH_CHECK(m.call && strcmp(m.call, "MPI_Recv") == 0, "call %s", m.call ? m.call : "NULL");
        TH_CHECK(m.peer == 0 && m.peer_world == 0 && m.tag == 9, "peer %d/%d tag %d", m.peer,
                 m.peer_world, m.tag);
        TH_CHECK(strcmp(m.comm, "MPI_COMM_WORLD") == 0 && m.comm_world && m.comm_size == 2,
                 "comm %s world %d size %d", m.comm, m.comm_world, m.comm_size);
        TH_CHECK(m.sleeps >= 1 && m.since_ns > 0, "sleeps %llu since %llu",
                 (unsigned long long)m.sleeps, (unsigned long long)m.since_ns);
        TH_MPI(MPI_Send(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        TH_MPI(MPI_Recv(&x, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        /* rank 1 sent its answer after its MPI_Recv returned: it computes now */
        TH_CHECK(th_rank_mpi(1, &m) == 0 && is_computing(&m) && !m.blocked,
                 "rank 1: activity %d blocked %d after its call", m.activity, m.blocked);
        atomic_store(&go_on, 1);
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (rank == 1) {
        TH_MPI(MPI_Finalize());
        return 0;
    }
    TH_MPI(MPI_Finalize());
    TH_CHECK(await(1, is_ended, &m), "rank 1 never showed as ended after MPI_Finalize");
    return 0;
}

/* Rank 1 watches rank 0 in MPI_Barrier while it computes, then joins it. */
static int rank_barrier(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    struct tmpi_rank_mpi m;
    if (rank == 1) {
        TH_CHECK(await(0, is_blocked, &m), "rank 0 never showed as blocked in MPI_Barrier");
        TH_CHECK(m.call && strcmp(m.call, "MPI_Barrier") == 0, "call %s", m.call ? m.call : "NULL");
        TH_CHECK(m.peer == TMPI_PEER_ALL && m.tag == TMPI_TAG_NONE && m.peer_world == -1,
                 "peer %d tag %d", m.peer, m.tag);
    }
    TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TH_MPI(MPI_Finalize());
    return 0;
}

static int rank_multiple(int rank, int size, void *arg)
{
    int provided = 0;
    TH_MPI(MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided));
    struct tmpi_rank_mpi m;
    if (provided == MPI_THREAD_MULTIPLE && rank == 0) {
        TH_CHECK(th_rank_mpi(0, &m) == 0 && m.activity == TMPI_ACT_UNKNOWN && !m.blocked,
                 "activity %d", m.activity);
    }
    TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TH_MPI(MPI_Finalize());
    return 0;
}

static int t_recv(void)
{
    struct th_opts o = {.nranks = 2};
    return th_run(&o, rank_recv, NULL, NULL);
}

static int t_barrier(void)
{
    struct th_opts o = {.nranks = 2};
    return th_run(&o, rank_barrier, NULL, NULL);
}

static int t_multiple(void)
{
    struct th_opts o = {.nranks = 2};
    return th_run(&o, rank_multiple, NULL, NULL);
}

int main(int argc, char **argv)
{
    static const struct th_test tests[] = {
        {"recv", t_recv}, {"barrier", t_barrier}, {"multiple", t_multiple}, {NULL, NULL}};
    return th_main(argc, argv, tests);
}
