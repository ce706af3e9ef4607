/* fault.h — a rank that crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL) ends its job, not the agent.
 *
 * Each rank thread runs with an alternate signal stack; the handler, when the faulting thread
 * is a rank's own thread, records the signal and jumps back to the rank's start, where the
 * rank ends as failed.  A fault in any other thread is the agent's own bug: the default action
 * runs (core dump, systemd restarts the service). */
#ifndef TMPI_AGENT_FAULT_H
#define TMPI_AGENT_FAULT_H

#include <stddef.h>

/* Installs the handlers.  Call once before the first rank starts.  0 or a negative errno. */
int fault_init(void);

/* Per rank thread: give the thread an alternate stack (the fault may be a stack overflow).
 * If that fails, faults still end the rank when there is stack left to run the handler. */
void fault_thread_setup(void);
/* Puts back the thread's previous alternate stack (a sanitizer runtime may own one) and frees
 * ours.  Safe to call twice and on threads that never called fault_thread_setup. */
void fault_thread_done(void);

/* Nonzero while the fault handler is ending the calling thread's rank. */
int fault_in_handler(void);
/* The faulting rank's context is back at its start (rank_life): the thread is no longer in the
 * handler.  A carrier thread goes on running its other ranks.  stack_lo: the lowest byte of the
 * stack the rank runs on (its context's; NULL: the thread's own), whose abandoned frames
 * AddressSanitizer builds clean up here. */
void fault_landed(const void *stack_lo);

#endif
