/* test_fanout.c — the agent's one fan-out engine (agent/base/fanout.h): answers, failures,
 * the deadline, stale answers, a caller that starts the next round from done. */
#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "fanout.h"

struct probe {
    struct fanout *f;
    uint64_t asked;  /* the round of the last ask */
    int asks, dones; /* calls so far */
    int ask_rc;      /* what ask returns */
    int fail_part;   /* ask fails this part at once (-1: none) */
    int restart;     /* done starts one more round */
    size_t up, down, timeout, waiting;
    char error[256]; /* part 0's error at done */
    int in_call;     /* 1 while a fanout_* call of the test runs: done must not come then */
};

static int freed;

static void free_answer(void *a)
{
    freed++;
    free(a);
}

static int ask(void *arg, uint64_t round)
{
    struct probe *p = arg;
    p->asks++;
    p->asked = round;
    if (p->fail_part >= 0) fanout_fail(p->f, round, (size_t)p->fail_part, "refused");
    return p->ask_rc;
}

static void done(void *arg, struct fanout *f)
{
    struct probe *p = arg;
    CHECK(!p->in_call, "done ran from inside the engine's call");
    p->dones++;
    p->up = p->down = p->timeout = p->waiting = 0;
    for (size_t i = 0; i < fanout_nparts(f); i++) {
        switch (fanout_state_of(f, i)) {
        case FANOUT_UP:
            p->up++;
            break;
        case FANOUT_DOWN:
            p->down++;
            break;
        case FANOUT_TIMEOUT:
            p->timeout++;
            break;
        case FANOUT_WAITING:
            p->waiting++;
            break;
        }
    }
    snprintf(p->error, sizeof p->error, "%s", fanout_error(f, 0));
    CHECK(!fanout_busy(f), "the round is still out in done");
    if (p->restart) {
        p->restart = 0;
        CHECK(fanout_start(f, 100000) != 0);
    }
}

static const struct fanout_ops ops = {.ask = ask, .done = done, .free_answer = free_answer};

static void *answer(int v)
{
    int *a = malloc(sizeof *a);
    *a = v;
    return a;
}

/* Runs the loop until done was called `want` times in all (bounded by 5 s). */
static void run_until(struct event_base *b, struct probe *p, int want)
{
    for (int i = 0; i < 500 && p->dones < want; i++) {
        struct timeval tv = {0, 10000};
        event_base_loopexit(b, &tv);
        event_base_dispatch(b);
    }
    CHECK_EQ(p->dones, want);
}

static void test_all_answer(struct event_base *b)
{
    struct probe p = {.fail_part = -1};
    CHECK_EQ(fanout_new(b, 3, &ops, &p, &p.f), 0);
    p.in_call = 1;
    uint64_t r = fanout_start(p.f, 100000);
    CHECK(r != 0);
    CHECK_EQ(p.asks, 1);
    CHECK_EQ(fanout_start(p.f, 100000), 0); /* one round at a time: a second asker joins */
    CHECK_EQ(p.asks, 1);
    CHECK(fanout_wants(p.f, r, 1));
    CHECK_EQ(fanout_answer(p.f, r, 1, answer(11)), 0);
    CHECK(!fanout_wants(p.f, r, 1), "an answered part is not asked again");
    CHECK_EQ(fanout_answer(p.f, r, 1, answer(12)), -ESTALE);     /* a second answer: freed */
    CHECK_EQ(fanout_answer(p.f, r + 1, 0, answer(13)), -ESTALE); /* another round's */
    CHECK_EQ(fanout_answer(p.f, r, 3, answer(14)), -ESTALE);     /* no such part */
    CHECK_EQ(freed, 3);
    CHECK_EQ(fanout_answer(p.f, r, 0, answer(10)), 0);
    fanout_fail(p.f, r, 2, "went away");
    p.in_call = 0;
    run_until(b, &p, 1); /* long before the 100 s deadline: the last part ends the round */
    CHECK_EQ(p.up, 2);
    CHECK_EQ(p.down, 1);
    CHECK_EQ(*(int *)fanout_answer_of(p.f, 1), 11);
    CHECK(strcmp(fanout_error(p.f, 2), "went away") == 0);
    int *taken = fanout_take(p.f, 0);
    CHECK(taken && *taken == 10);
    CHECK(fanout_answer_of(p.f, 0) == NULL);
    free(taken);
    freed = 0;
    fanout_free(p.f); /* the one answer still kept (part 1) */
    CHECK_EQ(freed, 1);
    freed = 0;
}

static void test_deadline(struct event_base *b)
{
    struct probe p = {.fail_part = -1};
    CHECK_EQ(fanout_new(b, 2, &ops, &p, &p.f), 0);
    uint64_t r = fanout_start(p.f, 100);
    CHECK_EQ(fanout_answer(p.f, r, 1, answer(1)), 0);
    run_until(b, &p, 1);
    CHECK_EQ(p.up, 1);
    CHECK_EQ(p.timeout, 1);
    CHECK(strstr(p.error, "100 ms") && strstr(p.error, "query_timeout_ms"), "got \"%s\"", p.error);
    CHECK(strcmp(fanout_state_name(FANOUT_TIMEOUT), "timeout") == 0);
    /* a late answer to the ended round is not kept */
    CHECK_EQ(fanout_answer(p.f, r, 0, answer(2)), -ESTALE);
    /* the next round starts clean, with a round of its own */
    p.restart = 0;
    uint64_t r2 = fanout_start(p.f, 100000);
    CHECK(r2 > r);
    CHECK(fanout_answer_of(p.f, 1) == NULL, "the last round's answer is gone");
    CHECK_EQ(fanout_answer(p.f, r2, 0, answer(3)), 0);
    CHECK_EQ(fanout_answer(p.f, r2, 1, answer(4)), 0);
    run_until(b, &p, 2);
    CHECK_EQ(p.up, 2);
    fanout_free(p.f);
}

static void test_ask_fails(struct event_base *b)
{
    /* ask fails part 0 itself and then the rest at once */
    struct probe p = {.fail_part = 0, .ask_rc = -EHOSTUNREACH};
    CHECK_EQ(fanout_new(b, 3, &ops, &p, &p.f), 0);
    p.in_call = 1;
    CHECK(fanout_start(p.f, 100000) != 0);
    p.in_call = 0;
    run_until(b, &p, 1);
    CHECK_EQ(p.down, 3);
    CHECK(strcmp(p.error, "refused") == 0, "part 0's own reason stays: got \"%s\"", p.error);
    CHECK(strstr(fanout_error(p.f, 1), strerror(EHOSTUNREACH)), "got \"%s\"", fanout_error(p.f, 1));
    fanout_free(p.f);
}

static void test_restart_from_done(struct event_base *b)
{
    /* no parts: done comes from the loop all the same, and may start the next round */
    struct probe p = {.fail_part = -1, .restart = 1};
    CHECK_EQ(fanout_new(b, 0, &ops, &p, &p.f), 0);
    p.in_call = 1;
    CHECK(fanout_start(p.f, 100000) != 0);
    p.in_call = 0;
    run_until(b, &p, 2);
    CHECK_EQ(p.asks, 0); /* nobody to ask */
    fanout_free(p.f);
}

int main(void)
{
    struct event_base *b = event_base_new();
    CHECK(b);
    test_all_answer(b);
    test_deadline(b);
    test_ask_fails(b);
    test_restart_from_done(b);
    event_base_free(b);
    return 0;
}
