/* net_yield.h — when a rank that spins on its job's links gives its core away (wait.c
 * spin_net).
 *
 * Agents do not see each other's ranks: several "nodes" on one machine (or other work) may want
 * the core while the agent counts it free.  A yield lets the peer we wait for run when it shares
 * our core; when nobody else wants the core it is a wasted system call, which delays noticing the
 * message.  So spin_net yields on every turn while yields give the core away (they take longer
 * than a bare system call), otherwise on every TM_NET_YIELD_EVERY-th.
 *
 * A yield that keeps the core away for a scheduler slice went to a program that does not give it
 * back (a compiler, another job): the peer, waiting for us, yields back within microseconds.
 * Under the kernel's EEVDF scheduler (Linux 6.6 and later) every yield with such a program on
 * the core costs the yielder a whole slice (its deadline is pushed back by one), and yielding on
 * every turn made every message wait one or more slices: 8 B across two agents on this 2-core
 * machine took 3-24 ms with one busy loop per core, 6-131 us with no yields at all
 * (docs/bench/ANALYSIS.md "Milliseconds across agents").  After TM_NET_YIELD_STRIKES such
 * yields with no quick one between them (one alone may be bad luck on a busy machine, while the
 * peer shares our core and gives it back) the rank does not yield for TM_NET_YIELD_OFF_NS: it
 * polls on, sharing the core as a busy-polling Open MPI process does, and its spin budget still
 * ends in a sleep.  Finding out costs the strikes themselves, and a yield to such a program was
 * seen to take 5-60 ms here (strace of main, one busy loop per core), so the pause doubles each
 * time the strikes come back right after it, up to TM_NET_YIELD_OFF_MAX_NS, and a quick yield
 * (the core is ours or the peer's again) brings it back to TM_NET_YIELD_OFF_NS.
 *
 * State: one per rank, kept across waits (on the latency path a wait is shorter than the turns
 * it takes to tell); threads of a THREAD_MULTIPLE rank share it with relaxed atomics: a hint. */
#ifndef TMPI_LIBCLIENT_NET_YIELD_H
#define TMPI_LIBCLIENT_NET_YIELD_H

#include <stdatomic.h>
#include <stdint.h>

#define TM_NET_YIELD_EVERY 16
/* a yield this long gave the core to someone (a bare system call returns in 0.25-1 us here) */
#define TM_NET_YIELD_GAVE_NS 1500
#define TM_NET_YIELD_TURNS 64
/* a yield this long went to a program that kept the core for a slice (EEVDF's base slice is
 * 0.75 ms and more; a peer that waits for us gives the core back in microseconds) */
#define TM_NET_YIELD_STRANGER_NS 250000
#define TM_NET_YIELD_STRIKES 2
#define TM_NET_YIELD_OFF_NS 100000000ull
#define TM_NET_YIELD_OFF_MAX_NS 6400000000ull

struct tm_net_yield {
    atomic_uint turns;          /* turns left on which to yield every time */
    atomic_uint strikes;        /* slice-long yields since the last quick one */
    _Atomic uint64_t off_until; /* monotonic ns: no yield before this */
    _Atomic uint64_t off_ns;    /* the last pause (0: none since the last quick yield) */
};

/* 1 if turn i of a spin may yield (without a clock: the caller looks at the clock only then). */
static inline int tm_net_yield_turn(struct tm_net_yield *y, unsigned i)
{
    return atomic_load_explicit(&y->turns, memory_order_relaxed) || (i % TM_NET_YIELD_EVERY) == 0;
}

/* 1 if a yield at time now is allowed: no stranger took the core in the last pause. */
static inline int tm_net_yield_allowed(struct tm_net_yield *y, uint64_t now)
{
    return now >= atomic_load_explicit(&y->off_until, memory_order_relaxed);
}

/* A yield that started at `start` returned at `now`: what the next turns do. */
static inline void tm_net_yield_took(struct tm_net_yield *y, uint64_t start, uint64_t now)
{
    uint64_t ns = now - start;
    unsigned t = atomic_load_explicit(&y->turns, memory_order_relaxed);
    unsigned k = atomic_load_explicit(&y->strikes, memory_order_relaxed);
    if (ns >= TM_NET_YIELD_STRANGER_NS) {
        t = 0;
        if (++k >= TM_NET_YIELD_STRIKES) {
            uint64_t off = atomic_load_explicit(&y->off_ns, memory_order_relaxed);
            off = !off                                ? TM_NET_YIELD_OFF_NS
                  : off * 2 > TM_NET_YIELD_OFF_MAX_NS ? TM_NET_YIELD_OFF_MAX_NS
                                                      : off * 2;
            atomic_store_explicit(&y->off_ns, off, memory_order_relaxed);
            atomic_store_explicit(&y->off_until, now + off, memory_order_relaxed);
            k = 0;
        }
    } else {
        k = 0;
        atomic_store_explicit(&y->off_ns, 0, memory_order_relaxed);
        if (ns >= TM_NET_YIELD_GAVE_NS)
            t = TM_NET_YIELD_TURNS;
        else if (t)
            t--;
    }
    atomic_store_explicit(&y->strikes, k, memory_order_relaxed);
    atomic_store_explicit(&y->turns, t, memory_order_relaxed);
}

#endif
