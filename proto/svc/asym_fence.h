/* asym_fence.h — the wake-up handshake's fence, paid by the side that goes to sleep (libtmpi's
 * waits, wait.h, and the agent's idle carriers, carrier.c) instead of by every message.
 *
 * The handshake is a Dekker pair: a waker publishes an event, then reads whether anyone sleeps;
 * a sleeper counts itself asleep, then looks at the event again.  Each side needs its store
 * ordered before its load, or both can miss the other (the store sits in the store buffer
 * while the load runs).  The sleeper pays a locked read-modify-write for its count anyway; a
 * fast-box sender paid a full fence (a seq_cst store: xchg on x86) per message, 95 % of
 * tm_fb_push's samples (issue 37).
 *
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes every other running thread of the process
 * execute a full barrier before it returns.  So a sleeper that calls it after counting itself
 * and before its last look orders the waker's store before the waker's load for it: either the
 * waker's store was before that barrier (then the look sees the event), or its load of the
 * count comes after it (then the waker sees the sleeper counted).  The waker needs only a
 * compiler barrier.  The process must have registered for the command (tmpi_asym_register,
 * once, before any waker relies on it); where that fails (an old kernel, a seccomp filter),
 * wakers keep their seq_cst store and the sleeper's call fails harmlessly. */
#ifndef TMPI_PROTO_ASYM_FENCE_H
#define TMPI_PROTO_ASYM_FENCE_H

#include <linux/membarrier.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

/* 1 when the process may rely on tmpi_asym_heavy (registers the process; idempotent). */
static inline int tmpi_asym_register(void)
{
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* The sleeper's side: after counting itself asleep, before the last look. */
static inline void tmpi_asym_heavy(void)
{
    (void)syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

/* The waker's side, between publishing its event (a release store) and reading the sleepers'
 * count, in a process that registered: keeps the compiler from moving the load above the
 * store; the processor may, and the sleeper's tmpi_asym_heavy covers that.  A process that did
 * not register publishes with a seq_cst store instead. */
static inline void tmpi_asym_light(void)
{
    atomic_signal_fence(memory_order_seq_cst);
}

#endif
