/* test_ctx — user-level contexts (agent/host/ctx.c): first entry, switching back and forth, values
 * held in registers and on the stack across switches, many contexts in a ring, the
 * floating-point control word staying per context, and a thread of its own per test. */
#include <fenv.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "../check.h"
#include "ctx.h"

#define STACK (256 * 1024)
#define NCTX 8
#define ROUNDS 1000

static struct ctx home;
static struct ctx ctxs[NCTX];
static long visits[NCTX];
static int order_ok = 1;
static int last = -1;

static void *stack_new(void)
{
    void *p = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    return p;
}

/* Each context adds to a sum kept in locals (registers or stack) across every switch; the
 * ring goes 0 -> 1 -> ... -> NCTX-1 -> 0; after ROUNDS laps context 0 returns home. */
static void ring_fn(void *arg)
{
    int me = (int)(intptr_t)arg;
    volatile double scale = 1.5;
    long sum = 0;
    double fsum = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (last != (me + NCTX - 1) % NCTX && !(me == 0 && last == -1)) order_ok = 0;
        last = me;
        visits[me]++;
        sum += me + r;
        fsum += scale * r;
        ctx_switch(&ctxs[me], &ctxs[(me + 1) % NCTX]);
    }
    long want = 0;
    double fwant = 0;
    for (int r = 0; r < ROUNDS; r++)
        want += me + r, fwant += 1.5 * r;
    if (sum != want || fsum != fwant) order_ok = 0;
    /* context 0 ends the ring after its last lap; the others wait for it there */
    if (me == 0) ctx_switch(&ctxs[0], &home);
    ctx_switch(&ctxs[me], &ctxs[(me + 1) % NCTX]);
    __builtin_trap();
}

static int deep(int n)
{
    volatile char buf[512];
    buf[0] = (char)n;
    return n == 0 ? buf[0] : deep(n - 1) + 1;
}

static struct ctx a_ctx;
static int deep_result;
static int round_mode;

static void deep_fn(void *arg)
{
    (void)arg;
    deep_result = deep(300); /* ~150 KiB of frames on the context's own stack */
    /* the rounding mode is the context's own: set here, not seen at home */
    fesetround(FE_UPWARD);
    ctx_switch(&a_ctx, &home);
    round_mode = fegetround();
    ctx_switch(&a_ctx, &home);
    __builtin_trap();
}

static void *run_tests(void *unused)
{
    (void)unused;
    ctx_init_thread(&home);

    void *stacks[NCTX];
    for (int i = 0; i < NCTX; i++) {
        stacks[i] = stack_new();
        CHECK_EQ(ctx_init(&ctxs[i], stacks[i], STACK, ring_fn, (void *)(intptr_t)i), 0);
    }
    ctx_switch(&home, &ctxs[0]);
    CHECK(order_ok);
    for (int i = 0; i < NCTX; i++)
        CHECK_EQ(visits[i], ROUNDS);
    for (int i = 0; i < NCTX; i++) {
        ctx_destroy(&ctxs[i]);
        munmap(stacks[i], STACK);
    }

    void *s = stack_new();
    CHECK_EQ(ctx_init(&a_ctx, s, STACK, deep_fn, NULL), 0);
    fesetround(FE_TONEAREST);
    ctx_switch(&home, &a_ctx);
    CHECK_EQ(deep_result, 300);
    CHECK_EQ(fegetround(), FE_TONEAREST);
    fesetround(FE_DOWNWARD);
    ctx_switch(&home, &a_ctx);
    CHECK_EQ(round_mode, FE_UPWARD);
    CHECK_EQ(fegetround(), FE_DOWNWARD);
    fesetround(FE_TONEAREST);
    ctx_destroy(&a_ctx);
    munmap(s, STACK);
    return NULL;
}

int main(void)
{
    /* on a thread of its own, as a carrier runs: not the process's main stack */
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, run_tests, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    printf("ok\n");
    return 0;
}
