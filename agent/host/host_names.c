/* host_names.c — a rank's name operations through the agent (host_names.h). */
#include "host_names.h"

#include <errno.h>
#include <event2/bufferevent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frame.h"
#include "msg_check.h"

/* A rank waiting for its answer (on its own stack). */
struct name_wait {
    struct name_wait *next;
    uint64_t query;
    int done, err;
    char port[MSG_NAME_PORT_MAX + 1];
};

/* The host's waiting ranks: mu guards the list, next, gone and each wait's result; cv wakes
 * them (one for all: name operations are rare, each answer wakes the few that wait). */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct name_wait *waits;
    uint64_t next;
    int gone;
    _Atomic(struct bufferevent *) chan;
} hn = {.mu = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t cv_once = PTHREAD_ONCE_INIT;

static void cv_init(void)
{
    /* the deadline is on the monotonic clock: a step of the wall clock changes nothing */
    pthread_condattr_t at;
    pthread_condattr_init(&at);
    pthread_condattr_setclock(&at, CLOCK_MONOTONIC);
    pthread_cond_init(&hn.cv, &at);
    pthread_condattr_destroy(&at);
}

void host_names_channel(struct bufferevent *chan)
{
    pthread_once(&cv_once, cv_init);
    pthread_mutex_lock(&hn.mu);
    atomic_store(&hn.chan, chan);
    hn.gone = chan == NULL;
    if (hn.gone)
        for (struct name_wait *w = hn.waits; w; w = w->next)
            if (!w->done) {
                w->done = 1;
                w->err = -EPIPE;
            }
    pthread_cond_broadcast(&hn.cv);
    pthread_mutex_unlock(&hn.mu);
}

void host_names_reply(const Tmpi__NameReply *r)
{
    pthread_mutex_lock(&hn.mu);
    for (struct name_wait *w = hn.waits; w; w = w->next)
        if (w->query == r->query && !w->done) {
            w->done = 1;
            w->err = r->error > 0 ? -EPROTO : r->error;
            snprintf(w->port, sizeof w->port, "%s", r->port ? r->port : "");
            pthread_cond_broadcast(&hn.cv);
            break;
        }
    pthread_mutex_unlock(&hn.mu);
}

static void unlink_wait(struct name_wait *w)
{
    for (struct name_wait **pp = &hn.waits; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            return;
        }
}

int host_name_op(int op, const char *service, const char *port, char *out, size_t cap)
{
    pthread_once(&cv_once, cv_init);
    int port_op = op >= (int)MSG_NAME_PORT_OPEN;
    if (!service || (op != MSG_NAME_LOOKUP && !port_op && !port)) return -EINVAL;
    if (strlen(service) > MSG_NAME_SERVICE_MAX || (port && strlen(port) > MSG_NAME_PORT_MAX))
        return -ENAMETOOLONG;
    struct name_wait w = {.done = 0};
    pthread_mutex_lock(&hn.mu);
    struct bufferevent *chan = atomic_load(&hn.chan);
    if (hn.gone || !chan) {
        pthread_mutex_unlock(&hn.mu);
        return -EPIPE;
    }
    w.query = ++hn.next;
    w.next = hn.waits;
    hn.waits = &w;
    pthread_mutex_unlock(&hn.mu);

    Tmpi__NameRequest rq = TMPI__NAME_REQUEST__INIT;
    rq.query = w.query;
    rq.op = (uint32_t)op;
    rq.service = (char *)service;
    rq.port = (char *)(port && op != MSG_NAME_LOOKUP && !port_op ? port : "");
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_NAME_REQUEST;
    env.name_request = &rq;
    uint8_t *buf;
    size_t len;
    int rc = frame_encode(&env, FRAME_DEFAULT_MAX, &buf, &len);
    if (rc == 0) {
        /* the channel's bufferevent is thread-safe (host_channel.c host_channel_open) */
        rc = bufferevent_write(chan, buf, len) < 0 ? -EPIPE : 0;
        free(buf);
    }
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += HOST_NAMES_TIMEOUT_MS / 1000;
    dl.tv_nsec += (long)(HOST_NAMES_TIMEOUT_MS % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&hn.mu);
    while (rc == 0 && !w.done)
        if (pthread_cond_timedwait(&hn.cv, &hn.mu, &dl) == ETIMEDOUT && !w.done) rc = -ETIMEDOUT;
    if (rc == 0) rc = w.err;
    unlink_wait(&w);
    pthread_mutex_unlock(&hn.mu);
    /* a lookup's port; a find's words on the port's owner (-EACCES) */
    if ((rc == 0 && (op == MSG_NAME_LOOKUP || op == (int)MSG_NAME_XCTX)) ||
        op == (int)MSG_NAME_PORT_FIND)
        if (out && cap) snprintf(out, cap, "%s", w.port);
    return rc;
}
