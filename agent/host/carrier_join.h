/* carrier_join.h — a carried rank that joins a thread it started parks until the thread ended.
 *
 * Why: pthread_join on a rank's context would block its carrier thread in the kernel, and the
 * carrier's other ranks with it.  An MPI_THREAD_MULTIPLE program whose main joins its workers
 * while the workers talk to ranks of the same carrier then stops for good (seen: tests/mpi
 * thread_multiple and task_farm with TMPI_RANK_SWITCHING=user, 4 ranks on 2 carriers: both
 * carriers sat in pthread_join while ranks 1 and 3 never got to start their workers).
 *
 * Every joinable thread a carried rank's context starts gets a record (interpose_thread.c):
 * the thread marks it ended as the last thing it does and wakes sleeping carriers; a join on a
 * carried rank's context parks until then (carrier_park), and only then joins for real (the
 * thread is past its own code: the kernel's part of its exit is left).  Records live in the job
 * (children_mu), not in the carrier pool: a thread may end after the pool is gone. */
#ifndef TMPI_AGENT_CARRIER_JOIN_H
#define TMPI_AGENT_CARRIER_JOIN_H

#include <pthread.h>

struct job;
struct carrier_child;

/* Before pthread_create of a joinable thread by a rank of j: its record when the caller is a
 * carried rank's context, else NULL (ranks with threads of their own, a thread a rank
 * started; or memory ran out: a join then blocks the carrier, as before). */
struct carrier_child *carrier_child_new(struct job *j);
/* After pthread_create: rc 0 lists the record under thread t; otherwise it is freed. */
void carrier_child_created(struct job *j, struct carrier_child *c, int rc, pthread_t t);
/* On the thread itself, as the last thing it does: marks it ended, wakes sleeping carriers. */
void carrier_child_ended(struct job *j, struct carrier_child *c);
/* pthread_join: when the caller is a carried rank's context and t a listed thread, parks until
 * t ended and returns 0 (the caller then joins t for real); -ENOTSUP otherwise. */
int carrier_child_wait(struct job *j, pthread_t t);
/* pthread_detach: t's record is nobody's to wait for any more. */
void carrier_child_forget(struct job *j, pthread_t t);
/* Job's end: drops every record still listed (threads never joined). */
void carrier_children_free(struct job *j);

#endif
