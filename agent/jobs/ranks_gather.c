/* ranks_gather.c — the agent's side of tmpictl ranks and the deadlock watch (job_ranks.h). */
#include "job_ranks.h"

#include <errno.h>
#include <stdio.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "fanout.h"
#include "log.h"

/* One deadlock report at most this long (a cycle through thousands of ranks is cut). */
#define RANKS_REPORT_MAX 2048
/* A part that has not answered within [mesh] query_timeout_ms (fanout.h; a stopped node) is
 * left out: the tool gets what came, marked incomplete, and the watch sees an incomplete
 * snapshot (never a deadlock). */

struct ranks_waiter {
    struct ranks_gather *g;
    ranks_done_fn done;
    void *arg;
    struct ranks_waiter *next;
};

struct ranks_gather {
    struct agent *a;
    uint32_t nranks, nparts;
    uint32_t universe; /* >= nranks: the snapshots' size */
    const struct ranks_gather_ops *ops;
    void *arg;
    struct fanout *fan;           /* the parts' RanksReplies to the round out (our own copies) */
    struct ranks_waiter *waiters; /* of the round out */
    /* asked while a round was out: that round's question went before theirs, so its answer
     * could miss what they saw (a rank spawned meanwhile); they get the next round */
    struct ranks_waiter *queued;
    char why[240];  /* the first part of the round that did not answer, and why */
    int ask_failed; /* the round's question could not go out */
    /* the deadlock watch */
    struct event *timer;
    uint32_t interval_ms;
    struct ranks_waiter *watching; /* its waiter while a query of its own is out */
    struct ranks_snap *prev;
    int reported; /* a deadlock was reported and nothing changed since */
    void (*found)(void *arg, const char *report);
    void *found_arg;
};

struct snap_owned {
    uint32_t nworld; /* the ranks a complete snapshot knows */
    Tmpi__RanksReply **parts;
    uint32_t nparts;
};

void ranks_snap_free(struct ranks_snap *s)
{
    if (!s) return;
    struct snap_owned *o = s->owned;
    if (o) {
        for (uint32_t i = 0; i < o->nparts; i++)
            if (o->parts[i]) tmpi__ranks_reply__free_unpacked(o->parts[i], NULL);
        free(o->parts);
        free(o);
    }
    free(s->ranks);
    free(s->sent);
    free(s->handled);
    free(s);
}

int ranks_snap_reply(const struct ranks_snap *s, uint64_t job_id, Tmpi__RanksReply *out)
{
    tmpi__ranks_reply__init(out);
    out->job_id = job_id;
    out->ranks = calloc(s->nranks ? s->nranks : 1, sizeof *out->ranks);
    if (!out->ranks) return -ENOMEM;
    for (uint32_t r = 0; r < s->nranks; r++)
        if (s->ranks[r]) out->ranks[out->n_ranks++] = s->ranks[r];
    for (uint32_t i = 0; i < s->nparts; i++) {
        out->net_sent += s->sent[i];
        out->net_handled += s->handled[i];
    }
    out->helpers_busy = s->helpers_busy;
    return 0;
}

/* A snapshot of nparts parts (it takes the array and the parts). */
static struct ranks_snap *build(uint32_t nranks, uint32_t nworld, uint32_t nparts,
                                Tmpi__RanksReply **parts)
{
    struct ranks_snap *s = calloc(1, sizeof *s);
    struct snap_owned *o = calloc(1, sizeof *o);
    if (o) {
        o->parts = parts;
        o->nparts = nparts;
        o->nworld = nworld;
    }
    if (s) {
        s->owned = o;
        s->ranks = calloc(nranks ? nranks : 1, sizeof *s->ranks);
        s->sent = calloc(nparts ? nparts : 1, sizeof *s->sent);
        s->handled = calloc(nparts ? nparts : 1, sizeof *s->handled);
    }
    if (!s || !o || !s->ranks || !s->sent || !s->handled) {
        if (!s || !o) {
            for (uint32_t i = 0; i < nparts; i++)
                if (parts[i]) tmpi__ranks_reply__free_unpacked(parts[i], NULL);
            free(parts);
            free(o);
        }
        ranks_snap_free(s);
        return NULL;
    }
    s->nranks = nranks;
    s->nparts = nparts;
    int complete = 1;
    for (uint32_t i = 0; i < nparts; i++) {
        Tmpi__RanksReply *p = parts[i];
        if (!p) {
            complete = 0;
            continue;
        }
        s->sent[i] = p->net_sent;
        s->handled[i] = p->net_handled;
        s->helpers_busy += p->helpers_busy;
        for (size_t k = 0; k < p->n_ranks; k++)
            if (p->ranks[k]->rank < nranks) s->ranks[p->ranks[k]->rank] = p->ranks[k];
    }
    for (uint32_t r = 0; r < nworld && complete; r++)
        if (!s->ranks[r]) complete = 0;
    s->complete = complete;
    return s;
}

/* Our own copy of a part (pack and unpack: the caller's is freed with its envelope). */
static Tmpi__RanksReply *part_copy(const Tmpi__RanksReply *r)
{
    size_t len = tmpi__ranks_reply__get_packed_size(r);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) return NULL;
    tmpi__ranks_reply__pack(r, buf);
    Tmpi__RanksReply *copy = tmpi__ranks_reply__unpack(NULL, len, buf);
    free(buf);
    return copy;
}

/* A snapshot of its own for one more waiter. */
static struct ranks_snap *snap_copy(const struct ranks_snap *s)
{
    const struct snap_owned *o = s->owned;
    Tmpi__RanksReply **parts = calloc(o->nparts ? o->nparts : 1, sizeof *parts);
    if (!parts) return NULL;
    for (uint32_t i = 0; i < o->nparts; i++) {
        if (o->parts[i] && !(parts[i] = part_copy(o->parts[i]))) {
            for (uint32_t k = 0; k < i; k++)
                if (parts[k]) tmpi__ranks_reply__free_unpacked(parts[k], NULL);
            free(parts);
            return NULL;
        }
    }
    struct ranks_snap *c = build(s->nranks, o->nworld, o->nparts, parts);
    if (c) memcpy(c->missing, s->missing, sizeof c->missing);
    return c;
}

/* The answers of the round become a snapshot (it takes them from the engine). */
static struct ranks_snap *merge(struct ranks_gather *g)
{
    Tmpi__RanksReply **parts = calloc(g->nparts ? g->nparts : 1, sizeof *parts);
    if (!parts) return NULL;
    for (uint32_t i = 0; i < g->nparts; i++)
        parts[i] = fanout_take(g->fan, i);
    struct ranks_snap *s = build(g->universe, g->nranks, g->nparts, parts);
    if (s) snprintf(s->missing, sizeof s->missing, "%s", g->why);
    return s;
}

/* Every waiter of the round gets its answer (a snapshot of its own, or err); with again, the
 * queued waiters' round starts first (a done callback may free g). */
static void finish(struct ranks_gather *g, const char *err, int again)
{
    struct ranks_waiter *w = g->waiters;
    g->waiters = NULL;
    struct ranks_snap *s = err ? NULL : merge(g);
    if (!err && !s) err = "out of memory";
    if (again && g->queued) {
        g->waiters = g->queued;
        g->queued = NULL;
        (void)fanout_start(g->fan, g->a->cfg.query_timeout_ms); /* none is out: it starts */
    }
    while (w) {
        struct ranks_waiter *n = w->next;
        struct ranks_snap *mine = NULL;
        if (s && !n) { /* the last one takes it */
            mine = s;
            s = NULL;
        } else if (s) {
            mine = snap_copy(s); /* few waiters (tools): a copy each */
        }
        w->done(w->arg, mine, mine ? NULL : err ? err : "out of memory");
        free(w);
        w = n;
    }
    ranks_snap_free(s);
}

/* Every part answered, or the rest did not in time: the waiters get what came, with the
 * first silent part's reason (the snapshot is then incomplete). */
static void fan_done(void *arg, struct fanout *f)
{
    struct ranks_gather *g = arg;
    if (g->ask_failed) {
        finish(g, "cannot reach the job's processes", 1);
        return;
    }
    g->why[0] = 0;
    for (size_t i = 0; i < g->nparts && !g->why[0]; i++)
        if (fanout_state_of(f, i) != FANOUT_UP) {
            const char *name = g->ops->part_name ? g->ops->part_name(g->arg, (uint32_t)i) : NULL;
            if (name)
                snprintf(g->why, sizeof g->why, "%s: %s", name, fanout_error(f, i));
            else
                snprintf(g->why, sizeof g->why, "%s", fanout_error(f, i));
        }
    finish(g, NULL, 1);
}

static int fan_ask(void *arg, uint64_t round)
{
    struct ranks_gather *g = arg;
    int r = g->ops->send_query(g->arg, round);
    g->ask_failed = r < 0;
    return r;
}

static void free_part(void *p)
{
    tmpi__ranks_reply__free_unpacked(p, NULL);
}

static const struct fanout_ops fan_ops = {
    .ask = fan_ask,
    .done = fan_done,
    .free_answer = free_part,
};

struct ranks_gather *ranks_gather_new(struct agent *a, uint32_t nranks, uint32_t universe,
                                      uint32_t nparts, const struct ranks_gather_ops *ops,
                                      void *arg)
{
    struct ranks_gather *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    if (fanout_new(a->base, nparts, &fan_ops, g, &g->fan) < 0) {
        free(g);
        return NULL;
    }
    g->a = a;
    g->nranks = nranks;
    g->universe = universe > nranks ? universe : nranks;
    g->nparts = nparts;
    g->ops = ops;
    g->arg = arg;
    return g;
}

void ranks_gather_free(struct ranks_gather *g, const char *err)
{
    if (!g) return;
    if (g->timer) event_free(g->timer);
    g->timer = NULL;
    struct ranks_waiter **tail = &g->waiters; /* the queued hear it too */
    while (*tail)
        tail = &(*tail)->next;
    *tail = g->queued;
    g->queued = NULL;
    finish(g, err ? err : "the job ended", 0);
    fanout_free(g->fan);
    ranks_snap_free(g->prev);
    free(g);
}

struct ranks_waiter *ranks_gather_ask(struct ranks_gather *g, ranks_done_fn done, void *arg)
{
    struct ranks_waiter *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->g = g;
    w->done = done;
    w->arg = arg;
    if (fanout_busy(g->fan)) {
        w->next = g->queued;
        g->queued = w;
        return w;
    }
    w->next = g->waiters;
    g->waiters = w;
    if (!fanout_start(g->fan, g->a->cfg.query_timeout_ms)) {
        g->waiters = w->next; /* its caller hears NULL: nothing is called */
        free(w);
        return NULL;
    }
    return w;
}

void ranks_waiter_cancel(struct ranks_waiter *w)
{
    if (!w) return;
    struct ranks_waiter **lists[] = {&w->g->waiters, &w->g->queued};
    for (size_t l = 0; l < 2; l++)
        for (struct ranks_waiter **p = lists[l]; *p; p = &(*p)->next) {
            if (*p == w) {
                *p = w->next;
                free(w);
                return;
            }
        }
}

void ranks_gather_part(struct ranks_gather *g, const Tmpi__RanksReply *r)
{
    if (!fanout_wants(g->fan, r->query, r->node)) return;
    Tmpi__RanksReply *copy = part_copy(r);
    if (copy)
        (void)fanout_answer(g->fan, r->query, r->node, copy);
    else
        fanout_fail(g->fan, r->query, r->node, "out of memory for its answer");
}

/* ---- the deadlock watch ---- */

static void watch_arm(struct ranks_gather *g);

static void watch_done(void *arg, struct ranks_snap *snap, const char *err)
{
    struct ranks_gather *g = arg;
    g->watching = NULL;
    if (err || !snap) {
        ranks_snap_free(snap);
        ranks_snap_free(g->prev);
        g->prev = NULL;
        watch_arm(g);
        return;
    }
    char report[RANKS_REPORT_MAX];
    int dl = deadlock_find(g->prev, snap, report, sizeof report);
    ranks_snap_free(g->prev);
    g->prev = snap;
    if (!dl) {
        g->reported = 0;
        watch_arm(g);
        return;
    }
    watch_arm(g);
    if (g->reported) return;
    g->reported = 1;
    g->found(g->found_arg, report); /* may free g (abort): last */
}

static void on_watch(evutil_socket_t fd, short what, void *arg)
{
    struct ranks_gather *g = arg;
    if (g->watching || g->waiters || g->queued) {
        /* a tool's query is out: the watch joins the next round */
        watch_arm(g);
        return;
    }
    g->watching = ranks_gather_ask(g, watch_done, g);
    if (!g->watching) watch_arm(g);
}

static void watch_arm(struct ranks_gather *g)
{
    if (!g->timer) return;
    uint32_t ms = g->interval_ms;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    evtimer_add(g->timer, &tv);
}

int ranks_watch_start(struct ranks_gather *g, uint32_t interval_ms,
                      void (*found)(void *arg, const char *report), void *arg)
{
    if (!interval_ms) return 0;
    g->timer = evtimer_new(g->a->base, on_watch, g);
    if (!g->timer) return -ENOMEM;
    g->interval_ms = interval_ms;
    g->found = found;
    g->found_arg = arg;
    watch_arm(g);
    return 0;
}

int ranks_deadlock_frame(uint64_t job_id, Tmpi__DeadlockAction action, const char *report,
                         Tmpi__Deadlock *d, Tmpi__Envelope *env)
{
    int abort = action == TMPI__DEADLOCK_ACTION__DEADLOCK_ABORT;
    log_notice("job %llu: %s%s", (unsigned long long)job_id, report,
               abort ? " (ending the job: --on-deadlock=abort)" : "");
    tmpi__deadlock__init(d);
    d->job_id = job_id;
    d->report = (char *)report;
    d->abort = abort;
    tmpi__envelope__init(env);
    env->msg_case = TMPI__ENVELOPE__MSG_DEADLOCK;
    env->deadlock = d;
    return abort;
}
