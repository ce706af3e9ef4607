/* fanout.c — one question to N parts, their answers gathered by a deadline (fanout.h). */
#include "fanout.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A part's error as tmpictl shows it; longer words are cut. */
#define FANOUT_ERROR_MAX 200

struct fanout_part {
    enum fanout_state state;
    void *answer;
    char error[FANOUT_ERROR_MAX];
};

struct fanout {
    const struct fanout_ops *ops;
    void *arg;
    size_t n;
    struct fanout_part *parts;
    uint64_t next_round;
    uint64_t round;      /* the round out, 0: none */
    size_t pending;      /* parts of `round` still waiting */
    uint32_t timeout_ms; /* of `round` */
    struct event *timer; /* the deadline, or made active when the last part is in */
};

static const char *const state_names[] = {
    [FANOUT_WAITING] = "timeout",
    [FANOUT_UP] = "up",
    [FANOUT_DOWN] = "down",
    [FANOUT_TIMEOUT] = "timeout",
};

const char *fanout_state_name(enum fanout_state st)
{
    return (unsigned)st < sizeof state_names / sizeof *state_names ? state_names[st] : "unknown";
}

static void clear_parts(struct fanout *f)
{
    for (size_t i = 0; i < f->n; i++) {
        if (f->parts[i].answer) f->ops->free_answer(f->parts[i].answer);
        f->parts[i].answer = NULL;
        f->parts[i].state = FANOUT_WAITING;
        f->parts[i].error[0] = 0;
    }
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct fanout *f = arg;
    if (!f->round) return;
    char why[120];
    snprintf(why, sizeof why, "no answer within %u ms (query_timeout_ms)", f->timeout_ms);
    for (size_t i = 0; i < f->n; i++)
        if (f->parts[i].state == FANOUT_WAITING) {
            f->parts[i].state = FANOUT_TIMEOUT;
            snprintf(f->parts[i].error, sizeof f->parts[i].error, "%s", why);
        }
    f->round = 0;
    f->pending = 0;
    /* the caller may start the next round from done (a waiter that came meanwhile) */
    f->ops->done(f->arg, f);
}

int fanout_new(struct event_base *base, size_t nparts, const struct fanout_ops *ops, void *arg,
               struct fanout **ret)
{
    struct fanout *f = calloc(1, sizeof *f);
    if (!f) return -ENOMEM;
    f->parts = calloc(nparts ? nparts : 1, sizeof *f->parts);
    f->timer = evtimer_new(base, on_timer, f);
    if (!f->parts || !f->timer) {
        if (f->timer) event_free(f->timer);
        free(f->parts);
        free(f);
        return -ENOMEM;
    }
    f->ops = ops;
    f->arg = arg;
    f->n = nparts;
    f->next_round = 1;
    *ret = f;
    return 0;
}

void fanout_free(struct fanout *f)
{
    if (!f) return;
    event_free(f->timer);
    clear_parts(f);
    free(f->parts);
    free(f);
}

int fanout_busy(const struct fanout *f)
{
    return f->round != 0;
}

/* The last part is in: done comes from the loop, never from the caller's stack. */
static void settle(struct fanout *f)
{
    if (--f->pending == 0) event_active(f->timer, EV_TIMEOUT, 1);
}

uint64_t fanout_start(struct fanout *f, uint32_t timeout_ms)
{
    if (f->round) return 0;
    clear_parts(f);
    f->round = f->next_round++;
    f->pending = f->n;
    f->timeout_ms = timeout_ms;
    uint64_t round = f->round;
    if (f->n == 0) {
        event_active(f->timer, EV_TIMEOUT, 1);
        return round;
    }
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    evtimer_add(f->timer, &tv);
    int r = f->ops->ask(f->arg, round);
    if (r < 0 && f->round == round) {
        char why[120];
        snprintf(why, sizeof why, "cannot ask: %s", strerror(-r));
        for (size_t i = 0; i < f->n; i++)
            if (f->parts[i].state == FANOUT_WAITING) fanout_fail(f, round, i, why);
    }
    return round;
}

int fanout_wants(const struct fanout *f, uint64_t round, size_t part)
{
    return round && round == f->round && part < f->n && f->parts[part].state == FANOUT_WAITING;
}

int fanout_answer(struct fanout *f, uint64_t round, size_t part, void *answer)
{
    if (!fanout_wants(f, round, part)) {
        if (answer) f->ops->free_answer(answer);
        return -ESTALE;
    }
    f->parts[part].answer = answer;
    f->parts[part].state = FANOUT_UP;
    settle(f);
    return 0;
}

void fanout_fail(struct fanout *f, uint64_t round, size_t part, const char *why)
{
    if (!fanout_wants(f, round, part)) return;
    f->parts[part].state = FANOUT_DOWN;
    snprintf(f->parts[part].error, sizeof f->parts[part].error, "%s", why ? why : "");
    settle(f);
}

size_t fanout_nparts(const struct fanout *f)
{
    return f->n;
}

enum fanout_state fanout_state_of(const struct fanout *f, size_t part)
{
    return part < f->n ? f->parts[part].state : FANOUT_DOWN;
}

void *fanout_answer_of(const struct fanout *f, size_t part)
{
    return part < f->n ? f->parts[part].answer : NULL;
}

void *fanout_take(struct fanout *f, size_t part)
{
    if (part >= f->n) return NULL;
    void *a = f->parts[part].answer;
    f->parts[part].answer = NULL;
    return a;
}

const char *fanout_error(const struct fanout *f, size_t part)
{
    return part < f->n ? f->parts[part].error : "";
}

size_t fanout_answered(const struct fanout *f)
{
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++)
        k += f->parts[i].state == FANOUT_UP;
    return k;
}
