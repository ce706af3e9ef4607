#include "fault.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"

#define FAULT_STACK_SIZE (64 * 1024)

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

/* Set while the handler ends a rank, so the exit path frees nothing from inside the handler. */
static __thread int in_fault;

int fault_in_handler(void)
{
    return in_fault;
}
#if defined(__SANITIZE_ADDRESS__)
#define FAULT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAULT_ASAN 1
#endif
#endif

#ifdef FAULT_ASAN
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);

/* The handler runs on the alternate signal stack and siglongjmps from there onto the rank's
 * stack.  ASan unpoisons the frames a longjmp abandons only when the jump leaves from the
 * stack it lands on, so here the redzones of every frame between the landing point and the
 * fault stay poisoned, and the next calls on that stack (the rank's RankExit, a carrier's next
 * rank) run into them: false stack-buffer-overflow reports.  Everything below the caller's
 * frame, down to the stack's lowest byte, is dead now.  noinline: this frame lies below the
 * caller's, so the caller's own redzones stay. */
__attribute__((noinline)) static void unpoison_dead_frames(const void *stack_lo)
{
    char *lo = (char *)stack_lo;
    if (!lo) {
        /* the rank's own thread: its pthread stack */
        pthread_attr_t attr;
        void *addr;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
        int r = pthread_attr_getstack(&attr, &addr, &size);
        pthread_attr_destroy(&attr);
        if (r != 0) return;
        lo = addr;
    }
    char *here = __builtin_frame_address(0);
    if (here > lo) __asan_unpoison_memory_region(lo, (size_t)(here - lo));
}
#endif

void fault_landed(const void *stack_lo)
{
#ifdef FAULT_ASAN
    unpoison_dead_frames(stack_lo);
#else
    (void)stack_lo;
#endif
    in_fault = 0;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    struct rank *r = rank_current();
    if (r) {
        in_fault = 1;
        /* The rank's main thread jumps back to its start; a thread the rank started ends
         * (rank_end fails the job for it). */
        char msg[96];
        snprintf(msg, sizeof msg, "killed by signal %d (%s) at address %p", sig, strsignal(sig),
                 si->si_addr);
        rank_end(RANK_END_FAULT, 128 + sig, msg);
    }
    /* Not a rank: let the default action take the process down. */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void *exit_at_once(void *arg)
{
    pthread_exit(arg);
}

int fault_init(void)
{
    /* The handler ends a thread a rank started with pthread_exit (rank_end), and glibc's first
     * pthread_exit in a process loads the unwinder with dlopen, which allocates: not safe in a
     * signal handler (TSan: "signal-unsafe call inside of a signal").  One thread that exits
     * that way here makes the load happen now. */
    pthread_t t;
    if (pthread_create(&t, NULL, exit_at_once, NULL) == 0) pthread_join(t, NULL);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fault_signals / sizeof fault_signals[0]; i++)
        if (sigaction(fault_signals[i], &sa, NULL) < 0) return -errno;
    return 0;
}

/* The calling thread's alternate stack and the one it replaced. */
static __thread struct {
    void *mem;
    stack_t old;
} fault_stack;

/* AddressSanitizer gives every thread an alternate stack of its own and unmaps it at thread
 * exit; replacing it would make that unmap fail.  Its stack serves our handler as well. */
#if defined(__SANITIZE_ADDRESS__)
#define FAULT_OWN_ALTSTACK 0
#else
#define FAULT_OWN_ALTSTACK 1
#endif

void fault_thread_setup(void)
{
    if (!FAULT_OWN_ALTSTACK) return;
    void *mem = malloc(FAULT_STACK_SIZE);
    if (!mem) return;
    stack_t ss = {.ss_sp = mem, .ss_size = FAULT_STACK_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, &fault_stack.old) < 0) {
        free(mem);
        return;
    }
    fault_stack.mem = mem;
}

void fault_thread_done(void)
{
    if (!fault_stack.mem) return;
    stack_t old = fault_stack.old;
    if (old.ss_flags & SS_DISABLE || !old.ss_sp) {
        old = (stack_t){.ss_flags = SS_DISABLE};
    }
    sigaltstack(&old, NULL);
    free(fault_stack.mem);
    fault_stack.mem = NULL;
}
