/* ctx.h — user-level execution contexts: a stack and the registers a function call preserves.
 *
 * A carrier thread (carrier.h) runs several ranks by switching between their contexts when a
 * rank waits.  The switch is a plain function call that saves the callee-saved registers on
 * the old stack and restores them from the new one: no system call (swapcontext would save
 * and restore the signal mask with one, which is most of a switch's cost), no floating-point
 * state beyond the control words (caller-saved by the ABI).
 *
 * The sanitizers are told about every switch (ASan: fake stacks and stack bounds; TSan: one
 * fiber per context, so races between ranks sharing a carrier are still seen). */
#ifndef TMPI_AGENT_CTX_H
#define TMPI_AGENT_CTX_H

#include <stddef.h>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

struct ctx {
#if defined(__x86_64__)
    void *sp; /* saved stack pointer while the context is not running */
#else
    ucontext_t uc;
#endif
    void *stack_lo; /* the stack's lowest usable byte (NULL: the thread's own stack) */
    size_t stack_size;
    void *tsan_fiber; /* TSan's fiber of this context (TSan builds only) */
    int tsan_own;     /* the fiber was created here and is destroyed by ctx_destroy */
};

/* Makes `c` describe the calling thread's current context, to switch away from and back to. */
void ctx_init_thread(struct ctx *c);

/* Prepares `c` to run fn(arg) on [stack_lo, stack_lo + size) at its first switch.  fn must never
 * return (it switches away for good instead).  0, or -ENOMEM (TSan's fiber). */
int ctx_init(struct ctx *c, void *stack_lo, size_t size, void (*fn)(void *), void *arg);

/* Saves the running context into `from` and continues `to`; returns when something switches
 * back to `from`.  `from` must be the context running on the calling thread. */
void ctx_switch(struct ctx *from, struct ctx *to);

/* Releases what ctx_init made (the stack is the caller's).  Not for the running context. */
void ctx_destroy(struct ctx *c);

#endif
