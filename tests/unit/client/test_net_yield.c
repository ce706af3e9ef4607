/* test_net_yield.c — net_yield.h on its own: when a rank spinning on its job's links yields
 * (wait.c spin_net), driven with made-up yield durations and clock values, no threads. */
#include <stdio.h>

#include "../check.h"
#include "net_yield.h"

#define US 1000ull
#define MS 1000000ull

/* How many of turns 1..n would yield at time `now` (without any yield happening). */
static int yields_due(struct tm_net_yield *y, unsigned n, uint64_t now)
{
    int k = 0;
    for (unsigned i = 1; i <= n; i++)
        k += tm_net_yield_turn(y, i) && tm_net_yield_allowed(y, now);
    return k;
}

/* A fresh rank yields on every TM_NET_YIELD_EVERY-th turn; a yield that returns at once
 * (nobody else wants the core) changes nothing. */
static void test_idle_core(void)
{
    struct tm_net_yield y = {0};
    CHECK_EQ(yields_due(&y, 64, 1 * MS), 64 / TM_NET_YIELD_EVERY);
    tm_net_yield_took(&y, 1 * MS, 1 * MS + 500);
    CHECK_EQ(yields_due(&y, 64, 1 * MS), 64 / TM_NET_YIELD_EVERY);
}

/* A yield that gave the core away for a few microseconds (the peer shares the core and gave it
 * back) makes every turn yield, for TM_NET_YIELD_TURNS quick yields. */
static void test_peer_shares_core(void)
{
    struct tm_net_yield y = {0};
    tm_net_yield_took(&y, 1 * MS, 1 * MS + 5 * US);
    CHECK_EQ(yields_due(&y, 16, 2 * MS), 16);
    for (int k = 0; k < TM_NET_YIELD_TURNS; k++)
        tm_net_yield_took(&y, 2 * MS, 2 * MS + 300);
    CHECK_EQ(yields_due(&y, 16, 3 * MS), 1);
}

/* Yields that keep the core away for a scheduler slice, TM_NET_YIELD_STRIKES in a row: the core
 * went to a program that keeps it, and the rank stops yielding for TM_NET_YIELD_OFF_NS (before,
 * it yielded on every turn, a slice each under EEVDF), then tries again. */
static void test_stranger_keeps_core(void)
{
    struct tm_net_yield y = {0};
    uint64_t t = 10 * MS;
    for (int k = 0; k < TM_NET_YIELD_STRIKES; k++) {
        CHECK(tm_net_yield_allowed(&y, t));
        tm_net_yield_took(&y, t, t + 1500 * US);
        t += 1500 * US;
    }
    CHECK_EQ(yields_due(&y, 256, t), 0);
    CHECK_EQ(yields_due(&y, 256, t + TM_NET_YIELD_OFF_NS - 1), 0);
    /* the pause is over: every TM_NET_YIELD_EVERY-th turn again, not every turn */
    CHECK_EQ(yields_due(&y, 256, t + TM_NET_YIELD_OFF_NS), 256 / TM_NET_YIELD_EVERY);
}

/* Strikes that come back right after each pause double it, up to TM_NET_YIELD_OFF_MAX_NS; a
 * quick yield brings it back to TM_NET_YIELD_OFF_NS. */
static void strike_out(struct tm_net_yield *y, uint64_t *t)
{
    for (int k = 0; k < TM_NET_YIELD_STRIKES; k++) {
        CHECK(tm_net_yield_allowed(y, *t));
        tm_net_yield_took(y, *t, *t + 2 * MS);
        *t += 2 * MS;
    }
}

static void test_pause_backs_off(void)
{
    struct tm_net_yield y = {0};
    uint64_t t = 10 * MS, off = TM_NET_YIELD_OFF_NS;
    for (int round = 0; round < 10; round++) {
        strike_out(&y, &t);
        CHECK(!tm_net_yield_allowed(&y, t + off - 1));
        CHECK(tm_net_yield_allowed(&y, t + off));
        t += off;
        off = off * 2 > TM_NET_YIELD_OFF_MAX_NS ? TM_NET_YIELD_OFF_MAX_NS : off * 2;
    }
    CHECK_EQ(off, TM_NET_YIELD_OFF_MAX_NS);
    tm_net_yield_took(&y, t, t + 5 * US); /* the peer's again */
    t += 5 * US;
    strike_out(&y, &t);
    CHECK(!tm_net_yield_allowed(&y, t + TM_NET_YIELD_OFF_NS - 1));
    CHECK(tm_net_yield_allowed(&y, t + TM_NET_YIELD_OFF_NS));
}

/* One slice-long yield alone (bad luck on a busy machine) does not stop the yields when a quick
 * one follows: the peer that shares the core keeps getting it. */
static void test_one_strike_forgiven(void)
{
    struct tm_net_yield y = {0};
    uint64_t t = 10 * MS;
    for (int round = 0; round < 10; round++) {
        for (int k = 0; k < TM_NET_YIELD_STRIKES - 1; k++) {
            tm_net_yield_took(&y, t, t + 2 * MS);
            t += 2 * MS;
        }
        CHECK(tm_net_yield_allowed(&y, t));
        tm_net_yield_took(&y, t, t + 5 * US);
        t += 5 * US;
        CHECK(tm_net_yield_allowed(&y, t));
        CHECK_EQ(yields_due(&y, 16, t), 16);
    }
}

int main(void)
{
    test_idle_core();
    test_peer_shares_core();
    test_stranger_keeps_core();
    test_one_strike_forgiven();
    test_pause_backs_off();
    printf("PASS net_yield\n");
    return 0;
}
