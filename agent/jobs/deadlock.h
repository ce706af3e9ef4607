/* deadlock.h — is a job deadlocked, and who waits for whom (docs/ARCHITECTURE.md "Deadlock
 * detection").  Pure functions over two snapshots of the job taken one check interval apart
 * (job_ranks.h gathers them); no I/O, no clock.
 *
 * The rule (no false positive for a correct program): the job is deadlocked when, in both
 * snapshots, every rank is either ended (MPI_Finalize returned) or blocked (asleep in a wait
 * of a blocking MPI call and not woken since it last found the wait's condition false) in the
 * same sleep (same sleep count), at least one is blocked, no libtmpi helper thread is
 * running a round, every node's frame counters are the same in both, and the frames sent
 * by all nodes equal the frames all nodes handled (nothing in flight).  Why that suffices:
 * each node's two samples bracket one instant common to all nodes (the second round of
 * queries starts after every answer of the first came back); at that instant every rank
 * sleeps with a false condition, nothing can wake it (a wake would have changed its count),
 * no frame travels, and nothing else runs that could send one: nothing will ever change. */
#ifndef TMPI_AGENT_DEADLOCK_H
#define TMPI_AGENT_DEADLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"

/* One snapshot of a whole job, merged from its parts. */
struct ranks_snap {
    uint32_t nranks;         /* the job's universe: its world and the ranks it may spawn */
    Tmpi__RankState **ranks; /* [nranks], NULL where no part told (a part missing, a rank not
                              * spawned) */
    uint32_t nparts;
    uint64_t *sent, *handled; /* [nparts]: each node's frame counters */
    uint32_t helpers_busy;    /* summed over the parts */
    int complete;             /* every part answered and every rank of the world is known */
    char missing[240];        /* when a part did not answer: which and why ("" otherwise) */
    void *owned;              /* the decoded parts the pointers above point into */
};
/* 1 when cur (taken after prev) shows a deadlock, with a one-line report of the cycle of
 * waits ("deadlock: rank 0 in MPI_Recv(source 1, tag 7, MPI_COMM_WORLD) waits for rank 1;
 * ...") in report; 0 otherwise. */
int deadlock_find(const struct ranks_snap *prev, const struct ranks_snap *cur, char *report,
                  size_t len);

#endif
