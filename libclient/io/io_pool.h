/* io_pool.h — the job's file system threads: long file system calls of a carried rank leave
 * its carrier (docs/ARCHITECTURE.md "MPI-IO").
 *
 * Why.  A rank that runs on a carrier (user-level switching, agent/host/carrier.h) holds the
 * carrier while it is inside a system call: a pwritev that the kernel throttles for dirty
 * pages, an fdatasync, an open on a slow file system.  The carrier's other ranks then wait
 * although they have work, and the halves of a job write one after the other (measured with
 * IOR, docs/bench/ANALYSIS.md "MPI-IO: independent I/O on one node").  So such a call is
 * handed to a thread of this pool, and the rank parks (core/wait.h tm_park_until) until the
 * thread is done: its carrier runs the node's other ranks meanwhile (what Go's scheduler does
 * for a blocking system call).  A rank on a thread of its own makes its calls itself (the
 * kernel schedules it; a hand-off would only add two wake-ups).
 *
 * Limits (docs/USER.md "MPI-IO"), from the environment of the first rank that opens a file
 * (-x VAR=... reaches every rank), else from the agent's tmpid.conf [io] threads and
 * offload_min (docs/ADMIN.md; the agent refuses bad values there when it loads the file):
 *   TMPI_IO_THREADS      threads of the pool, 0 (calls stay on the rank) to TM_IOP_THREADS_MAX;
 *                        default TM_IOP_THREADS_DEFAULT.  Threads start when there is work for
 *                        them and stay until the job ends.
 *   TMPI_IO_OFFLOAD_MIN  reads and writes of fewer bytes stay on the rank (a page-cache copy
 *                        of a few KiB is cheaper than the hand-off); a size with an optional
 *                        k, m or g suffix; default TM_IOP_MIN_DEFAULT.  Sync, set_size,
 *                        preallocate and open go to the pool whatever their size.
 *
 * Errors: a task's own result (its errno or error class) comes back to the rank that made
 * it, so EIO or ENOSPC still reach the call that did the I/O.
 *
 * Threads: the pool's queue is under its lock; a task belongs to the rank that made it until
 * it is queued, then to the pool thread until `done` (seq_cst) is set, then to the rank again.
 * The pool threads are counted in the job's helpers_busy while they run a task, so the
 * agent's deadlock check does not take a rank parked on its I/O for a stuck job. */
#ifndef TMPI_LIBCLIENT_IO_POOL_H
#define TMPI_LIBCLIENT_IO_POOL_H

#include <stdatomic.h>
#include <stddef.h>

struct tm_rank;

#define TM_IOP_THREADS_DEFAULT 4
#define TM_IOP_THREADS_MAX 64
#define TM_IOP_MIN_DEFAULT ((size_t)256 << 10)
#define TM_IOP_ANY ((size_t)-1) /* a call that goes to the pool whatever its size */

/* One call for a pool thread, embedded first in the caller's record of its arguments. */
struct tm_iop_task {
    /* runs on a pool thread (or on the rank when the call stays there): returns the call's
     * outcome as the caller wants it (0, an errno value or an error class) */
    int (*run)(struct tm_iop_task *t);
    int ret;
    struct tm_rank *owner;    /* whom `done` wakes */
    struct tm_iop_task *next; /* the pool's queue (pool lock) */
    _Atomic int done;
};

/* Makes the job's pool if no rank did yet, from the calling rank's environment (MPI_File_open
 * calls it).  0, or MPI_ERR_OTHER with msg saying which setting is wrong (nothing is made: the
 * next open looks again). */
int tm_iop_setup(struct tm_rank *me, char *msg, size_t len);

/* Runs t->run for me and returns its result: on a pool thread while me parks when me is a
 * carried rank, the pool has threads and `bytes` (the bytes the call moves, TM_IOP_ANY for a
 * call of no size) reaches TMPI_IO_OFFLOAD_MIN; else on the calling thread (also when no pool
 * thread can be started). */
int tm_iop_call(struct tm_rank *me, struct tm_iop_task *t, size_t bytes);

/* Pool threads started so far in me's job (the tests: a carried rank's writes ran there). */
int tm_iop_threads(struct tm_rank *me);

#endif
