/* interpose_rand.c — the random generators with hidden state, per rank: rand/srand,
 * random/srandom/initstate/setstate and the drand48 family.  A rank draws the same numbers a
 * fresh process draws from glibc (unseeded, or after the same seed): glibc's rand is its
 * random, and both run here on glibc's reentrant functions (random_r, drand48_r ...) over the
 * rank's state (rank_libc.h), set up as a process's starts.  Callers that are not ranks get
 * libc's. */
#include <stdlib.h>
#include <string.h>

#include "interpose_next.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
    void *_Atomic rand, *_Atomic srand, *_Atomic random, *_Atomic srandom, *_Atomic initstate,
        *_Atomic setstate, *_Atomic drand48, *_Atomic erand48, *_Atomic lrand48, *_Atomic nrand48,
        *_Atomic mrand48, *_Atomic jrand48, *_Atomic srand48, *_Atomic seed48, *_Atomic lcong48;
} next;

/* The rank's random state, set up at its first use as a process's starts: initstate(1) on a
 * 128-byte table, which is what glibc's own static table holds. */
static struct random_data *rank_random(struct rank *r)
{
    struct rank_rand *s = &r->libc.rand;
    if (!s->ready) {
        memset(&s->random, 0, sizeof s->random);
        initstate_r(1, (char *)s->table, sizeof s->table, &s->random);
        s->ready = 1;
    }
    return &s->random;
}

static long rank_draw(struct rank *r)
{
    int32_t x = 0;
    random_r(rank_random(r), &x);
    return x;
}

EXPORT long random(void)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, random)();
    return rank_draw(r);
}

EXPORT int rand(void)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, rand)();
    return (int)rank_draw(r);
}

EXPORT void srandom(unsigned int seed)
{
    struct rank *r = rank_current();
    if (!r) {
        INTERPOSE_NEXT(next, srandom)(seed);
        return;
    }
    srandom_r(seed, rank_random(r));
}

EXPORT void srand(unsigned int seed)
{
    struct rank *r = rank_current();
    if (!r) {
        INTERPOSE_NEXT(next, srand)(seed);
        return;
    }
    srandom_r(seed, rank_random(r));
}

/* initstate and setstate answer the state in use before, as glibc's do: the start of the
 * buffer last given (the word before the table proper holds its type and position). */
EXPORT char *initstate(unsigned int seed, char *state, size_t n)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, initstate)(seed, state, n);
    struct random_data *rd = rank_random(r);
    char *old = (char *)&rd->state[-1];
    return initstate_r(seed, state, n, rd) < 0 ? NULL : old;
}

EXPORT char *setstate(char *state)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, setstate)(state);
    struct random_data *rd = rank_random(r);
    char *old = (char *)&rd->state[-1];
    return setstate_r(state, rd) < 0 ? NULL : old;
}

/* ---- drand48 and friends: all zeros is a fresh process's state ---- */

EXPORT double drand48(void)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, drand48)();
    double d = 0;
    drand48_r(&r->libc.rand.drand48, &d);
    return d;
}

/* the x*48 forms take the value from the caller and the multiplier and addend from the
 * rank's state (lcong48 may have changed them) */
EXPORT double erand48(unsigned short xsubi[3])
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, erand48)(xsubi);
    double d = 0;
    erand48_r(xsubi, &r->libc.rand.drand48, &d);
    return d;
}

EXPORT long lrand48(void)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, lrand48)();
    long x = 0;
    lrand48_r(&r->libc.rand.drand48, &x);
    return x;
}

EXPORT long nrand48(unsigned short xsubi[3])
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, nrand48)(xsubi);
    long x = 0;
    nrand48_r(xsubi, &r->libc.rand.drand48, &x);
    return x;
}

EXPORT long mrand48(void)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, mrand48)();
    long x = 0;
    mrand48_r(&r->libc.rand.drand48, &x);
    return x;
}

EXPORT long jrand48(unsigned short xsubi[3])
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, jrand48)(xsubi);
    long x = 0;
    jrand48_r(xsubi, &r->libc.rand.drand48, &x);
    return x;
}

EXPORT void srand48(long seed)
{
    struct rank *r = rank_current();
    if (!r) {
        INTERPOSE_NEXT(next, srand48)(seed);
        return;
    }
    srand48_r(seed, &r->libc.rand.drand48);
}

/* the previous value, in the rank's state as glibc keeps it in its own */
EXPORT unsigned short *seed48(unsigned short seed16v[3])
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, seed48)(seed16v);
    seed48_r(seed16v, &r->libc.rand.drand48);
    return r->libc.rand.drand48.__old_x;
}

EXPORT void lcong48(unsigned short param[7])
{
    struct rank *r = rank_current();
    if (!r) {
        INTERPOSE_NEXT(next, lcong48)(param);
        return;
    }
    lcong48_r(param, &r->libc.rand.drand48);
}
