/* host_channel.c — the job host's channel to the agent (host_channel.h): the frames the agent
 * sends (cancel, stdin, go and release, ranks queries, name replies), the data links it
 * passes, rank 0's stdin pump, leaving once the job is over and its frames left. */
#include "host_channel.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"
#include "frame.h"
#include "host_names.h"
#include "host_xjob.h"
#include "host_proc.h"
#include "host_ranks.h"
#include "host_stdio.h"
#include "job.h"
#include "job_net.h"
#include "job_thread.h"
#include "jobhost.h"
#include "log.h"

void host_channel_maybe_leave(struct host_proc *h)
{
    if (h->done && evbuffer_get_length(bufferevent_get_output(h->chan)) == 0)
        event_base_loopbreak(h->a->base);
}

static void on_abandon(evutil_socket_t fd, short what, void *arg)
{
    struct host_proc *h = arg;
    /* h->job stays: the process leaves with _exit once the channel is flushed, the
     * remaining images never unloaded (their destructors would need ld.so's lock, which the
     * job thread holds) */
    h->done = 1;
    host_channel_maybe_leave(h);
}

static void on_orphan_timeout(evutil_socket_t fd, short what, void *arg)
{
    log_warning("job host: the agent went away and the ranks did not stop: leaving");
    _exit(1);
}

static void send_stdin_ack(struct host_proc *h, uint64_t bytes)
{
    Tmpi__StdinAck ack = TMPI__STDIN_ACK__INIT;
    ack.bytes = bytes;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_STDIN_ACK;
    env.stdin_ack = &ack;
    uint8_t *buf;
    size_t len;
    if (frame_encode(&env, FRAME_DEFAULT_MAX, &buf, &len) == 0) {
        bufferevent_write(h->chan, buf, len);
        free(buf);
    }
}

static void close_stdin(struct host_proc *h)
{
    if (h->stdin_ev) event_del(h->stdin_ev);
    close(h->stdin_fd);
    h->stdin_fd = -1;
}

/* Moves what the launcher sent into the pipe as far as it takes it; each move is
 * acknowledged, so the launcher sends more only as rank 0 reads. */
static void stdin_pump(struct host_proc *h)
{
    while (h->stdin_fd >= 0 && evbuffer_get_length(h->stdin_buf) > 0) {
        int n = evbuffer_write(h->stdin_buf, h->stdin_fd);
        if (n > 0) {
            send_stdin_ack(h, (uint64_t)n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            event_add(h->stdin_ev, NULL);
            return;
        }
        /* nobody can read it any more (EPIPE): take the rest, so the launcher is not stuck */
        size_t rest = evbuffer_get_length(h->stdin_buf);
        evbuffer_drain(h->stdin_buf, rest);
        send_stdin_ack(h, rest);
        close_stdin(h);
    }
    if (h->stdin_fd >= 0 && h->stdin_eof && evbuffer_get_length(h->stdin_buf) == 0)
        close_stdin(h); /* rank 0 reads end of file */
}

static void on_stdin_writable(evutil_socket_t fd, short what, void *arg)
{
    stdin_pump(arg);
}

static void on_stdin_data(struct host_proc *h, const Tmpi__StdinData *d)
{
    if (h->stdin_fd < 0) {
        send_stdin_ack(h, d->data.len); /* closed already: taken and dropped */
        return;
    }
    if (d->data.len) evbuffer_add(h->stdin_buf, d->data.data, d->data.len);
    if (d->eof) h->stdin_eof = 1;
    stdin_pump(h);
}

/* What the ranks do now (host_ranks.h); a query of another job's uid gets no answer. */
static void on_ranks_query(struct host_proc *h, const Tmpi__RanksQuery *q)
{
    if (q->uid != h->member_uid) return;
    uint8_t *buf;
    size_t len;
    if (host_ranks_report(h->job, q, &buf, &len) < 0) {
        log_warning("job %llu: no memory to report its ranks", (unsigned long long)h->job->id);
        return;
    }
    bufferevent_write(h->chan, buf, len);
    free(buf);
}

static void chan_read(struct bufferevent *bev, void *arg)
{
    struct host_proc *h = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    while (evbuffer_get_length(in) >= FRAME_HEADER_SIZE) {
        uint8_t hdr[FRAME_HEADER_SIZE];
        size_t len;
        evbuffer_copyout(in, hdr, sizeof hdr);
        if (frame_parse_header(hdr, FRAME_DEFAULT_MAX, &len) < 0) break;
        if (evbuffer_get_length(in) < FRAME_HEADER_SIZE + len) return;
        evbuffer_drain(in, FRAME_HEADER_SIZE);
        Tmpi__Envelope *env = frame_decode(evbuffer_pullup(in, (ev_ssize_t)len), len);
        evbuffer_drain(in, len);
        if (!env) break;
        if (env->msg_case == TMPI__ENVELOPE__MSG_JOB_CANCEL && h->job)
            job_cancel(h->job, env->job_cancel->exit_status,
                       env->job_cancel->reason ? env->job_cancel->reason : "cancelled");
        else if (env->msg_case == TMPI__ENVELOPE__MSG_STDIN_DATA)
            on_stdin_data(h, env->stdin_data);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_JOB_GO && h->job && h->job->net)
            job_go(h->job);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_JOB_RELEASE && h->job && h->job->net)
            job_release(h->job);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_RANKS_QUERY && h->job)
            on_ranks_query(h, env->ranks_query);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_NAME_REPLY)
            host_names_reply(env->name_reply);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_XFRAME)
            host_xjob_frame(h->job, env->xframe);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_XGONE)
            host_xjob_gone(h->job, env->xgone);
        frame_free(env);
    }
    if (evbuffer_get_length(in) >= FRAME_HEADER_SIZE) {
        log_error("job host: malformed frame from the agent");
        if (h->job) job_cancel(h->job, 1, "malformed frame from the agent");
        evbuffer_drain(in, evbuffer_get_length(in));
    }
}

/* Every link is up: say so, and what carries each (the agent keeps it for tmpictl status). */
static void send_linked(struct job *j)
{
    struct job_net *n = j->net;
    Tmpi__JobLinked jl = TMPI__JOB_LINKED__INIT;
    jl.uid = n->uid;
    jl.ok = 1;
    jl.error = "";
    size_t max = (size_t)n->nnodes * 2;
    Tmpi__LinkCarrier *lc = calloc(max ? max : 1, sizeof *lc);
    Tmpi__LinkCarrier **lp = calloc(max ? max : 1, sizeof *lp);
    char(*text)[80] = calloc(max ? max : 1, sizeof *text);
    if (lc && lp && text) { /* out of memory: linked all the same, status shows no links */
        for (int node = 0; node < n->nnodes; node++)
            for (int ch = TMPI_CH_P2P; ch <= TMPI_CH_COLL; ch++) {
                size_t k = jl.n_links;
                job_net_carrier(n, node, ch, text[k], sizeof text[k]);
                if (!text[k][0]) continue; /* no link to ourselves */
                tmpi__link_carrier__init(&lc[k]);
                lc[k].node = (uint32_t)node;
                lc[k].channel = (uint32_t)ch;
                lc[k].peer = n->addr[node];
                lc[k].carrier = text[k];
                lp[k] = &lc[k];
                jl.n_links++;
            }
        jl.links = lp;
    }
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_LINKED;
    env.job_linked = &jl;
    (void)job_send(j, &env);
    free(lc);
    free(lp);
    free(text);
}

/* A link's socket broke (job_net.h, "Reconnecting"): ask the agent for it anew, a bare
 * jobhost_link_msg on the links socket (one datagram: any thread may send it). */
static int ask_relink(struct job *j, int node, int channel)
{
    struct jobhost_link_msg m = {.node = (uint32_t)node, .channel = (uint32_t)channel};
    ssize_t n;
    do
        n = send(JOBHOST_LINKS_FD, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof m ? 0 : n < 0 ? -errno : -EIO;
}

/* One link from the agent per message (jobhost_pass_link); once every link is here the
 * coordinator hears JobLinked from us, so no JobGo can come before the links. */
void host_channel_on_links(evutil_socket_t fd, short what, void *arg)
{
    struct host_proc *h = arg;
    for (;;) {
        struct jobhost_link_msg m;
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = ctl.buf,
                             .msg_controllen = sizeof ctl.buf};
        ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            event_del(h->links_ev); /* the agent closed it: no more links */
            return;
        }
        int link_fd = -1;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(&link_fd, CMSG_DATA(c), sizeof link_fd);
        struct job *j = h->job;
        if (link_fd < 0 || n != (ssize_t)sizeof m || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
            !j || !j->net) {
            if (link_fd >= 0) close(link_fd);
            if (j) job_cancel(j, 1, "malformed link from the agent");
            continue;
        }
        j->net->linked = send_linked; /* when the hellos are done (job_net_tp.c) */
        /* once, before the first link exists: receive daemons read it from then on */
        if (!j->net->relink) j->net->relink = ask_relink;
        int r = job_net_add(j->net, (int)m.node, (int)m.channel, link_fd);
        if (r < 0 && r != -ECANCELED) {
            char why[160];
            snprintf(why, sizeof why, "cannot take the link to node %u: %s", m.node, strerror(-r));
            job_cancel(j, 1, why);
        }
    }
}

static void chan_write(struct bufferevent *bev, void *arg)
{
    struct host_proc *h = arg;
    struct job *j = h->job;
    if (j) {
        pthread_mutex_lock(&j->drain_mu);
        atomic_fetch_add(&j->drain_gen, 1);
        pthread_cond_broadcast(&j->drain_cv);
        pthread_mutex_unlock(&j->drain_mu);
    }
    host_channel_maybe_leave(h);
}

static void chan_event(struct bufferevent *bev, short what, void *arg)
{
    struct host_proc *h = arg;
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))) return;
    if (h->done) {
        event_base_loopbreak(h->a->base);
        return;
    }
    host_names_channel(NULL); /* no answer will come */
    host_xjob_channel(NULL);
    if (h->job) job_detach(h->job, "the agent went away");
    struct timeval tv = {.tv_sec = h->a->cfg.kill_grace_sec};
    evtimer_add(h->orphan_timer, &tv);
}

/* A member's data-link counters to the agent now and then, so that its metrics move while
 * the job runs (the last count goes with JobUnloaded). */
void host_channel_on_traffic(evutil_socket_t fd, short what, void *arg)
{
    struct host_proc *h = arg;
    if (h->job && h->job->net) job_send_link_traffic(h->job);
}

/* Channel: the event base, the agent's channel as a bufferevent, the orphan and abandon
 * events and rank 0's stdin pump.  0 or -1 (what was made is freed by host_teardown). */
int host_channel_open(struct host_proc *h)
{
    struct agent *a = h->a;
    a->base = event_base_new();
    if (!a->base) return -1;
    h->orphan_timer = evtimer_new(a->base, on_orphan_timeout, NULL);
    h->abandon_ev = event_new(a->base, -1, 0, on_abandon, h);
    h->chan = bufferevent_socket_new(a->base, JOBHOST_CHANNEL_FD,
                                     BEV_OPT_CLOSE_ON_FREE | BEV_OPT_THREADSAFE |
                                         BEV_OPT_DEFER_CALLBACKS | BEV_OPT_UNLOCK_CALLBACKS);
    if (!h->chan || !h->orphan_timer || !h->abandon_ev) return -1;
    h->stdin_buf = evbuffer_new();
    if (!h->stdin_buf) return -1;
    if (h->stdin_fd >= 0) {
        h->stdin_ev = event_new(a->base, h->stdin_fd, EV_WRITE, on_stdin_writable, h);
        if (!h->stdin_ev) return -1;
    }
    evutil_make_socket_nonblocking(JOBHOST_CHANNEL_FD);
    bufferevent_setcb(h->chan, chan_read, chan_write, chan_event, h);
    bufferevent_enable(h->chan, EV_READ | EV_WRITE);
    host_stdio_channel(h->chan);
    host_names_channel(h->chan);
    host_xjob_channel(h->chan);
    return 0;
}
