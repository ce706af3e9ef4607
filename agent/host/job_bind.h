/* job_bind.h — where a job's rank threads run (tmpi-launch --bind-to, --report-bindings), in
 * its job host.
 *
 * The threads pinned are the ones that run ranks: one per rank, or under user-level switching
 * (carrier.h) the carriers, since a carried rank runs on whichever carrier resumes it.  Thread
 * k (local rank, or carrier, order) takes object (first + k) mod n of the kind, where first is
 * bind_first, the agent's count of the ranks of its other running jobs, plus the global rank of
 * this node's first rank: small jobs side by side, and the nodes of a job whose agents share
 * one machine (a test cluster on loopback), then start on different cores instead of all on
 * core 0; on a cluster of equal nodes the second term is usually a multiple of the cores.
 *
 * The kind: the launch's --bind-to, else tmpid.conf [mpi] bind_to, whose default "auto" is the
 * following.  It looks at the threads, not the ranks: core when they fit the
 * node's cores, hwthread when they fit its hardware threads, else none.  So a job whose ranks
 * fit the cores gets a core per rank (it keeps its caches and is never moved, as with Open
 * MPI); an oversubscribed job on carriers (one per CPU) gets its carriers spread one per core,
 * and they balance the ranks between them in user space; an oversubscribed job with a thread
 * per rank (a program with thread-local variables) is left to the kernel, since a rank pinned
 * to a busy core could not take a core that falls idle (docs/USER.md "Binding", the binding
 * rows of make bench).
 *
 * All of it runs on the job thread, between the creation of the threads and the opening of
 * the start gate, so no user code runs before its thread is pinned and reported. */
#ifndef TMPI_AGENT_JOB_BIND_H
#define TMPI_AGENT_JOB_BIND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct job;

/* Decides the kind (j->bind_kind) for nthreads threads that run the ranks and loads the
 * topology when it is needed.  0, or a negative errno with the job's failure in reason (the
 * binding was asked for and cannot be done). */
int job_bind_prepare(struct job *j, uint32_t nthreads, char *reason, size_t rlen);

/* Pins the job's thread number index.  0, or a negative errno with reason; a failure to apply
 * the default binding is only logged (the job runs unbound). */
int job_bind_thread(struct job *j, uint32_t index, pthread_t thread, char *reason, size_t rlen);

/* --report-bindings: one line per local rank on the rank's stderr, in local rank order. */
void job_bind_report(struct job *j);

/* Frees the topology (job thread, or job_free). */
void job_bind_free(struct job *j);

#endif
