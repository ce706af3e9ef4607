/* test_ranks_gather.c — the agent's gather of a job's rank states (agent/jobs/job_ranks.h):
 * a request that comes while a query is out is answered by the next query, never by the one
 * asked before it (its answer could miss a rank spawned in between). */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "agent.h"
#include "job_ranks.h"

struct probe {
    uint64_t asked; /* the query of the last send */
    int sends;
    int got[2];            /* answers per waiter */
    uint32_t got_ranks[2]; /* ranks in each waiter's snapshot */
    char err[64];          /* the last error a waiter heard */
};

static int send_query(void *arg, uint64_t query)
{
    struct probe *p = arg;
    p->sends++;
    p->asked = query;
    return 0;
}

static const struct ranks_gather_ops ops = {.send_query = send_query};

struct waiter_arg {
    struct probe *p;
    int idx;
};

static void done(void *arg, struct ranks_snap *snap, const char *err)
{
    struct waiter_arg *w = arg;
    w->p->got[w->idx]++;
    if (!snap) {
        snprintf(w->p->err, sizeof w->p->err, "%s", err ? err : "?");
        return;
    }
    uint32_t n = 0;
    for (uint32_t r = 0; r < snap->nranks; r++)
        if (snap->ranks[r]) n++;
    w->p->got_ranks[w->idx] = n;
    ranks_snap_free(snap);
}

/* The one part answers query with ranks 0 .. nranks-1. */
static void answer(struct ranks_gather *g, uint64_t query, uint32_t nranks)
{
    Tmpi__RanksReply r = TMPI__RANKS_REPLY__INIT;
    Tmpi__RankState st[4], *pst[4];
    for (uint32_t i = 0; i < nranks; i++) {
        tmpi__rank_state__init(&st[i]);
        st[i].rank = i;
        pst[i] = &st[i];
    }
    r.query = query;
    r.node = 0;
    r.n_ranks = nranks;
    r.ranks = pst;
    ranks_gather_part(g, &r);
}

static void spin(struct event_base *b)
{
    for (int i = 0; i < 5; i++) {
        struct timeval tv = {0, 10000};
        event_base_loopexit(b, &tv);
        event_base_dispatch(b);
    }
}

int main(void)
{
    struct agent a;
    memset(&a, 0, sizeof a);
    a.base = event_base_new();
    CHECK(a.base);
    a.cfg.query_timeout_ms = 100000;
    struct probe p = {0};
    /* 2 world ranks, universe 3: the third is spawned between the two requests */
    struct ranks_gather *g = ranks_gather_new(&a, 2, 3, 1, &ops, &p);
    CHECK(g);
    struct waiter_arg w0 = {&p, 0}, w1 = {&p, 1};
    CHECK(ranks_gather_ask(g, done, &w0));
    CHECK_EQ(p.sends, 1);
    uint64_t first = p.asked;
    CHECK(ranks_gather_ask(g, done, &w1)); /* while the first query is out */
    CHECK_EQ(p.sends, 1);
    answer(g, first, 2); /* asked before the spawn: two ranks */
    spin(a.base);
    CHECK_EQ(p.got[0], 1);
    CHECK_EQ(p.got_ranks[0], 2u);
    CHECK_EQ(p.got[1], 0); /* not the earlier query's answer */
    CHECK_EQ(p.sends, 2);
    CHECK(p.asked != first);
    answer(g, first, 3); /* a late answer to the old query is dropped */
    answer(g, p.asked, 3);
    spin(a.base);
    CHECK_EQ(p.got[1], 1);
    CHECK_EQ(p.got_ranks[1], 3u);
    CHECK_EQ(p.got[0], 1);
    /* a queued request that the job's end meets hears the end */
    CHECK(ranks_gather_ask(g, done, &w0));
    CHECK_EQ(p.sends, 3);
    ranks_gather_free(g, "the job ended");
    CHECK_EQ(p.got[0], 2);
    CHECK(strcmp(p.err, "the job ended") == 0, "%s", p.err);
    event_base_free(a.base);
    return 0;
}
