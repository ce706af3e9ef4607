/* job_link.c — data links of a member job, agent side (job_link.h). */
#include "job_link.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "job.h"
#include "job_member.h"
#include "jobhost.h"
#include "log.h"

static struct job_link_slot *slot_at(struct job_link *jl, int node, int channel)
{
    return &jl->slots[node * 2 + channel - 1];
}

int job_link_new(struct job *j, uint64_t uid, int self, size_t nnodes,
                 Tmpi__NodePlacement *const *nodes, struct job_link **ret)
{
    struct job_link *jl = calloc(1, sizeof *jl);
    if (!jl) return -ENOMEM;
    jl->addr = calloc(nnodes, sizeof *jl->addr);
    jl->slots = calloc(nnodes * 2, sizeof *jl->slots);
    if (!jl->addr || !jl->slots) {
        free(jl->addr);
        free(jl->slots);
        free(jl);
        return -ENOMEM;
    }
    jl->job = j;
    jl->uid = uid;
    jl->self = self;
    jl->nnodes = (int)nnodes;
    for (size_t i = 0; i < nnodes; i++) {
        const char *h = nodes[i]->host ? nodes[i]->host : "";
        snprintf(jl->addr[i], sizeof jl->addr[i], strchr(h, ':') ? "[%s]:%u" : "%s:%u", h,
                 nodes[i]->port);
        for (int ch = TMPI_CH_P2P; ch <= TMPI_CH_COLL; ch++) {
            struct job_link_slot *s = slot_at(jl, (int)i, ch);
            s->jl = jl;
            s->node = (int)i;
            s->channel = ch;
            s->fd = -1;
        }
    }
    *ret = jl;
    return 0;
}

/* Tells the coordinator the first failure (the host reports success once it holds every
 * link). */
static void report_failure(struct job_link *jl, int err, const char *why)
{
    if (jl->failed) return;
    jl->failed = 1;
    job_member_linked(jl->job, err, why);
}

/* Gives s's socket to the host; keeps it for job_link_flush while the host's socket is full. */
static void hand_over(struct job_link_slot *s)
{
    struct job_link *jl = s->jl;
    int r = jobhost_pass_link(jl->job, s->node, s->channel, s->fd);
    if (r == -EAGAIN) return;
    s->fd = -1; /* passed, or closed by jobhost_pass_link */
    if (r == 0) {
        s->handed = 1;
        return;
    }
    char msg[400];
    snprintf(msg, sizeof msg, "cannot hand the link to node %d (%s) to the job's process: %s",
             s->node, jl->addr[s->node], strerror(-r));
    report_failure(jl, r, msg);
}

/* fd is an authenticated data socket to s's node: the host's from now on.  A link handed
 * over before is handed over again: the peer made it anew (job_link_relink).  A socket still
 * waiting for the host gives way to the newer one: the node below dials again only when its
 * last socket failed on its side. */
static void take(struct job_link_slot *s, int fd)
{
    if (s->fd >= 0) close(s->fd);
    s->fd = fd;
    hand_over(s);
}

static uint64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static int dial(struct job_link_slot *s);

static void on_redial(evutil_socket_t fd, short what, void *arg)
{
    struct job_link_slot *s = arg;
    if (!s->dial && dial(s) < 0) {
        /* cannot even start one (out of descriptors): try again at the next interval */
        struct timeval tv = {0, JOB_LINK_REDIAL_MS * 1000};
        event_add(s->redial, &tv);
    }
}

/* A relink's dial, now or at the interval's end. */
static void redial_later(struct job_link_slot *s)
{
    struct job_link *jl = s->jl;
    if (!s->redial) s->redial = evtimer_new(jl->job->agent->base, on_redial, s);
    if (!s->redial || event_pending(s->redial, EV_TIMEOUT, NULL)) return;
    uint64_t since = mono_ms() - s->dialled_ms;
    uint64_t wait = since >= JOB_LINK_REDIAL_MS ? 0 : JOB_LINK_REDIAL_MS - since;
    struct timeval tv = {(time_t)(wait / 1000), (suseconds_t)(wait % 1000) * 1000};
    event_add(s->redial, &tv);
}

void job_link_flush(struct job_link *jl)
{
    for (int i = 0; i < jl->nnodes * 2; i++)
        if (jl->slots[i].fd >= 0) {
            hand_over(&jl->slots[i]);
            if (jl->slots[i].fd >= 0) return; /* still full */
        }
}

static void dialled(void *arg, int fd, int err, const char *why)
{
    struct job_link_slot *s = arg;
    struct job_link *jl = s->jl;
    s->dial = NULL;
    if (fd >= 0) {
        take(s, fd);
        return;
    }
    const char *what = why && *why ? why : strerror(-err);
    if (s->relink) { /* the host waits (link_reconnect_timeout_ms): try again */
        log_info("job %llu: cannot reconnect the data link to node %d (%s), channel %d: %s; "
                 "trying again",
                 (unsigned long long)jl->job->id, s->node, jl->addr[s->node], s->channel, what);
        redial_later(s);
        return;
    }
    /* The first set-up: a fault of the way (a handshake that timed out under loss, a reset)
     * is retried within the reconnect budget; a peer that refuses our key is not. */
    int auth = err == -EACCES || err == -EPROTO;
    if (!auth && mono_ms() < jl->setup_deadline_ms) {
        log_info("job %llu: cannot connect the data link to node %d (%s), channel %d: %s; "
                 "trying again",
                 (unsigned long long)jl->job->id, s->node, jl->addr[s->node], s->channel, what);
        redial_later(s);
        return;
    }
    char msg[400];
    if (auth)
        snprintf(msg, sizeof msg, "cannot connect to node %d (%s): %s", s->node, jl->addr[s->node],
                 what);
    else
        snprintf(msg, sizeof msg,
                 "cannot connect to node %d (%s): the data link timed out: %s, and it was not "
                 "set up within %.1f s (link_reconnect_timeout_ms)",
                 s->node, jl->addr[s->node], what, jl->setup_budget_ms / 1000.0);
    report_failure(jl, err, msg);
}

void job_link_connect(struct job_link *jl)
{
    if (jl->connecting) return;
    jl->connecting = 1;
    jl->setup_budget_ms = jl->job->agent->cfg.link_reconnect_timeout_ms;
    jl->setup_deadline_ms = mono_ms() + jl->setup_budget_ms;
    /* One node (the agent of a one-node Slurm allocation, coordinated from elsewhere): no
     * link to make, so no host will report them; the job is linked now. */
    if (jl->nnodes == 1) {
        job_member_linked(jl->job, 0, NULL);
        return;
    }
    for (int node = jl->self + 1; node < jl->nnodes; node++)
        for (int ch = TMPI_CH_P2P; ch <= TMPI_CH_COLL; ch++) {
            struct job_link_slot *s = slot_at(jl, node, ch);
            int r = dial(s);
            if (r < 0) {
                char msg[400];
                snprintf(msg, sizeof msg, "cannot connect to node %d (%s): %s", node,
                         jl->addr[node], strerror(-r));
                report_failure(jl, r, msg);
                return;
            }
        }
}

/* Starts the connection of s (a node above us) with its join record.  0 or a negative errno. */
static int dial(struct job_link_slot *s)
{
    struct job_link *jl = s->jl;
    uint8_t join[MESH_JOIN_SIZE];
    mesh_join_encode(join, jl->uid, (uint32_t)jl->self, (uint32_t)s->channel);
    s->dialled_ms = mono_ms();
    int r = mesh_data_connect(jl->job->agent->mesh, jl->addr[s->node], (uint32_t)s->channel, join,
                              dialled, s, &s->dial);
    if (r < 0) s->dial = NULL;
    return r;
}

int job_link_relink(struct job_link *jl, int node, int channel)
{
    if (node < 0 || node >= jl->nnodes || node == jl->self ||
        (channel != TMPI_CH_P2P && channel != TMPI_CH_COLL))
        return -EINVAL;
    struct job_link_slot *s = slot_at(jl, node, channel);
    /* The node below dials: the peer's agent takes it (job_link_accept) and hands it over. */
    if (node < jl->self || !s->handed) return 0;
    s->relink = 1;
    if (s->dial || (s->redial && event_pending(s->redial, EV_TIMEOUT, NULL)))
        return 0; /* one on its way: a host asking again and again costs nothing more */
    log_info("job %llu: the job's process asks for the data link to node %d (%s), channel %d, "
             "anew",
             (unsigned long long)jl->job->id, node, jl->addr[node], channel);
    redial_later(s);
    return 0;
}

void job_link_accept(struct agent *a, const uint8_t join[MESH_JOIN_SIZE], uint32_t channel, int fd,
                     const char *peer)
{
    uint64_t uid;
    uint32_t node, ch;
    mesh_join_decode(join, &uid, &node, &ch);
    struct job *j;
    for (j = a->jobs; j; j = j->next)
        if (j->link && j->link->uid == uid) break;
    if (!j) {
        log_warning("mesh: data connection from %s for an unknown job; closing", peer);
        close(fd);
        return;
    }
    struct job_link *jl = j->link;
    if (ch != channel || (ch != TMPI_CH_P2P && ch != TMPI_CH_COLL) || node >= (uint32_t)jl->self) {
        log_warning("job %llu: data connection from %s with a bad join record (node %u, "
                    "channel %u); closing",
                    (unsigned long long)j->id, peer, node, ch);
        close(fd);
        return;
    }
    take(slot_at(jl, (int)node, (int)ch), fd);
}

void job_link_free(struct job_link *jl)
{
    if (!jl) return;
    for (int i = 0; i < jl->nnodes * 2; i++) {
        mesh_conn_close(jl->slots[i].dial);
        if (jl->slots[i].redial) event_free(jl->slots[i].redial);
        if (jl->slots[i].fd >= 0) close(jl->slots[i].fd);
    }
    free(jl->addr);
    free(jl->slots);
    free(jl);
}
