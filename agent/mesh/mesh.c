#include "mesh.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "frame.h"
#include "keyfile.h"
#include "log.h"
#include "mesh_auth.h"
#include "mesh_budget.h"

/* A peer gets this long to complete the handshake, counted from the connection, however
 * slowly its bytes arrive: a peer dripping a byte every few seconds cannot hold a slot. */
#define MESH_HANDSHAKE_SEC 5
/* Bound on connections in any state, so strangers cannot exhaust the agent.  Incoming
 * connections that have not proved the key yet are bounded by mesh_budget.h. */
#define MESH_MAX_CONNS 1024
/* The largest mesh frame: a JobAssign carries a submission's arguments and environment (up to
 * the coordinator's max_frame_size) and every node's rank list; program bytes travel in
 * FRAME_PROGRAM_CHUNKs. */
#define MESH_MAX_FRAME (16u << 20)

/* ST_WAIT_JOIN: an accepted data connection (channel 1 or 2) waits for its join record. */
enum conn_state {
    ST_WAIT_HELLO,
    ST_WAIT_CHALL,
    ST_WAIT_PROOF,
    ST_WAIT_ACK,
    ST_READY,
    ST_WAIT_JOIN
};

/* One mesh connection; loop thread only. */
struct mesh_conn {
    struct mesh *m;
    struct bufferevent *bev;
    int outgoing;
    enum conn_state state;
    struct mesh_hs hs;
    char addr[96];
    char host[INET6_ADDRSTRLEN]; /* incoming: the peer's address without the port */
    int from_peer;               /* incoming from a configured peer's address (mesh_budget.h) */
    struct event *deadline;      /* until the handshake completes (MESH_HANDSHAKE_SEC) */
    /* outgoing ping (tmpictl ping) */
    mesh_ping_cb done;
    void *done_arg;
    double t0;
    uint64_t nonce;
    int closing;
    struct mesh_peer *peer; /* an outgoing connection to a configured peer */
    uint32_t channel;       /* outgoing: the channel the HELLO asks for */
    /* a connection that carries a job (mesh_ctl_connect, mesh_conn_set_ops) */
    const struct mesh_ctl_ops *ops;
    void *ops_arg;
    /* an outgoing data connection: the join record, then the fd goes to data_cb */
    mesh_data_cb data_cb;
    void *data_arg;
    uint8_t join[MESH_JOIN_SIZE];
    /* Inside one of the ops callbacks conn_free only marks the connection dead; the caller of
     * the callback frees it when it returns, so a callback may close its own connection. */
    int busy, dead;
    int err; /* why the connection ends, for on_close / data_cb */
    char why[160];
    /* Liveness (mesh_liveness): when bytes last arrived, and when closing began (a close
     * waits for the output to flush, but not for ever: a stopped peer never reads it). */
    double last_rx, closing_since;
    struct mesh_conn *prev, *next;
};

enum peer_state { PEER_DOWN, PEER_CONNECTING, PEER_UP };

/* A configured peer ([mesh] peers, --peer): kept connected, checked by heartbeats. */
struct mesh_peer {
    struct mesh *m;
    char address[288];
    char name[MESH_NAME_SIZE + 1];
    enum peer_state state;
    struct mesh_conn *conn;
    struct event *timer; /* heartbeat while up, reconnect while down */
    double t0, last_seen, rtt_usec;
    uint64_t nonce;
    unsigned missed;
    uint64_t ups;
    char last_error[128];
    struct mesh_peer *next;
};

struct mesh {
    const struct agent_config *cfg; /* the agent's: a reload changes it in place */
    struct event_base *base;
    struct mesh_key key;
    struct evconnlistener *listener;
    char listen_addr[96];
    uint16_t listen_port;
    struct mesh_conn *conns;
    unsigned nconns;
    uint64_t accepted;
    uint64_t auth_failures;
    uint64_t refused_pending; /* incoming connections refused by the budgets (mesh_budget.h) */
    struct mesh_budget budget;
    struct mesh_peer *peers;
    unsigned npeers;
    const struct mesh_accept_ops *accept_ops; /* NULL: connections for jobs are refused */
    void *accept_arg;
    struct event *liveness; /* heartbeats of the connections that carry a job */
    /* Frames of the control channel this agent wrote and read (the metrics endpoint); atomic:
     * mesh_send may be called off the loop thread.  Data channels are the job hosts'. */
    atomic_uint_fast64_t tx_frames, tx_bytes, rx_frames, rx_bytes;
    double last_tick; /* when it last ran: a longer gap means this agent was stopped */
};

/* Heartbeats missed before a peer counts as lost. */
#define PEER_MISSED_MAX 3

static void peer_down(struct mesh_peer *p, const char *why);
static void peer_up(struct mesh_peer *p, struct mesh_conn *c);
static void peer_pong(struct mesh_peer *p, uint64_t nonce);
static void data_socket_liveness(const struct mesh *m, int fd);
static int liveness_start(struct mesh *m);

static void addr_string(const struct sockaddr *sa, char *out, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        port = ntohs(in->sin_port);
        snprintf(out, len, "%s:%u", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        port = ntohs(in6->sin6_port);
        snprintf(out, len, "[%s]:%u", host, port);
    } else {
        snprintf(out, len, "unknown");
    }
}

int mesh_parse_address(const char *s, char *host, size_t hostlen, char *port, size_t portlen)
{
    const char *p;
    size_t hl;
    if (!s || !*s) return -EINVAL;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end) return -EINVAL;
        hl = (size_t)(end - s - 1);
        if (hl == 0 || hl >= hostlen) return -EINVAL;
        memcpy(host, s + 1, hl);
        host[hl] = '\0';
        p = end[1] == ':' ? end + 2 : (end[1] ? NULL : "");
        if (!p) return -EINVAL;
    } else {
        const char *colon = strrchr(s, ':');
        if (colon && strchr(s, ':') != colon) return -EINVAL; /* bare IPv6 needs brackets */
        hl = colon ? (size_t)(colon - s) : strlen(s);
        if (hl >= hostlen) return -EINVAL;
        memcpy(host, s, hl);
        host[hl] = '\0';
        p = colon ? colon + 1 : "";
    }
    if (!*p) {
        snprintf(port, portlen, "%u", MESH_DEFAULT_PORT);
        return 0;
    }
    char *end;
    long v = strtol(p, &end, 10);
    if (*end || v < 0 || v > 65535) return -EINVAL;
    snprintf(port, portlen, "%ld", v);
    return 0;
}

/* An address to connect to: a host is required and port 0 means nothing. */
static int parse_remote(const char *s, char *host, size_t hostlen, char *port, size_t portlen)
{
    if (mesh_parse_address(s, host, hostlen, port, portlen) < 0 || !*host || strcmp(port, "0") == 0)
        return -EINVAL;
    return 0;
}

static void conn_free(struct mesh_conn *c)
{
    struct mesh *m = c->m;
    if (c->busy) {
        c->dead = 1;
        bufferevent_disable(c->bev, EV_READ);
        return;
    }
    if (c->data_cb) {
        mesh_data_cb cb = c->data_cb;
        c->data_cb = NULL;
        cb(c->data_arg, -1, c->err, c->why);
    }
    if (c->ops) {
        const struct mesh_ctl_ops *ops = c->ops;
        c->ops = NULL;
        ops->on_close(c->ops_arg, c, c->err, c->why);
    }
    if (c->peer) {
        struct mesh_peer *p = c->peer;
        c->peer = NULL;
        p->conn = NULL;
        peer_down(p, c->closing ? "closed" : "the connection ended");
    }
    if (c->done) {
        mesh_ping_cb cb = c->done;
        c->done = NULL;
        cb(c->done_arg, -ECONNABORTED, c->hs.peer_name, 0, "the connection closed");
    }
    if (c->deadline) event_free(c->deadline);
    if (c->prev)
        c->prev->next = c->next;
    else
        m->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    m->nconns--;
    bufferevent_free(c->bev);
    free(c);
}

/* The handshake is over (either side): the deadline no longer applies. */
static void handshake_done(struct mesh_conn *c)
{
    if (c->deadline) {
        event_free(c->deadline);
        c->deadline = NULL;
    }
}

/* Reports the outcome of a ping once, then closes. */
static void ping_finish(struct mesh_conn *c, int rc, double rtt, const char *err)
{
    mesh_ping_cb cb = c->done;
    c->done = NULL;
    if (cb) cb(c->done_arg, rc, c->hs.peer_name, rtt, err);
    conn_free(c);
}

/* Ends a connection with a reason for its owner (on_close, data_cb, ping). */
static void conn_end(struct mesh_conn *c, int err, const char *why)
{
    if (c->done) {
        ping_finish(c, err, 0, why);
        return;
    }
    c->err = err;
    snprintf(c->why, sizeof c->why, "%s", why);
    conn_free(c);
}

static void close_after_flush(struct mesh_conn *c)
{
    c->closing = 1;
    c->closing_since = agent_now();
    bufferevent_disable(c->bev, EV_READ);
    if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) conn_free(c);
}

static void count_tx(struct mesh *m, size_t len)
{
    atomic_fetch_add_explicit(&m->tx_frames, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->tx_bytes, len, memory_order_relaxed);
}

static void send_env(struct mesh_conn *c, const Tmpi__Envelope *env)
{
    uint8_t *buf;
    size_t len;
    if (frame_encode(env, MESH_MAX_FRAME, &buf, &len) == 0) {
        count_tx(c->m, len);
        bufferevent_write(c->bev, buf, len);
        free(buf);
    }
}

static void send_ping(struct mesh_conn *c)
{
    Tmpi__MeshPing p = TMPI__MESH_PING__INIT;
    randombytes_buf(&c->nonce, sizeof c->nonce);
    p.nonce = c->nonce;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_MESH_PING;
    env.mesh_ping = &p;
    c->t0 = agent_now();
    send_env(c, &env);
}

/* Frames on an authenticated connection.  Returns -1 if the connection is gone. */
static int on_frame(struct mesh_conn *c, const Tmpi__Envelope *env)
{
    /* The heartbeats of a job's connection (mesh_liveness) are the mesh's business: its
     * owner never sees them.  Any byte that arrives counts as a sign of life (read_cb). */
    if (c->ops && env->msg_case == TMPI__ENVELOPE__MSG_MESH_PONG) return 0;
    if (c->ops && env->msg_case != TMPI__ENVELOPE__MSG_MESH_PING) {
        c->ops->on_frame(c->ops_arg, c, env);
        return c->dead || c->closing ? -1 : 0;
    }
    switch (env->msg_case) {
    case TMPI__ENVELOPE__MSG_JOB_ASSIGN:
        if (c->outgoing || c->hs.channel != TMPI_CH_CTL) break;
        if (!c->m->accept_ops || !c->m->accept_ops->job_assign) {
            log_warning("mesh: %s (%s) assigns a job, but this agent takes none; closing", c->addr,
                        c->hs.peer_name);
            close_after_flush(c);
            return -1;
        }
        c->m->accept_ops->job_assign(c->m->accept_arg, c, env->job_assign);
        return c->dead || c->closing ? -1 : 0;
    case TMPI__ENVELOPE__MSG_NODE_QUERY:
        if (c->outgoing || c->hs.channel != TMPI_CH_CTL) break;
        if (!c->m->accept_ops || !c->m->accept_ops->node_query) {
            close_after_flush(c);
            return -1;
        }
        c->m->accept_ops->node_query(c->m->accept_arg, c, env->node_query);
        return c->dead || c->closing ? -1 : 0;
    case TMPI__ENVELOPE__MSG_NAME_REQUEST:
        if (c->outgoing || c->hs.channel != TMPI_CH_CTL) break;
        if (!c->m->accept_ops || !c->m->accept_ops->name_request) {
            close_after_flush(c);
            return -1;
        }
        c->m->accept_ops->name_request(c->m->accept_arg, c, env->name_request);
        return c->dead || c->closing ? -1 : 0;
    case TMPI__ENVELOPE__MSG_XFRAME:
    case TMPI__ENVELOPE__MSG_XGONE:
        if (c->outgoing || c->hs.channel != TMPI_CH_CTL) break;
        if (!c->m->accept_ops || !c->m->accept_ops->xlink) {
            close_after_flush(c);
            return -1;
        }
        c->m->accept_ops->xlink(c->m->accept_arg, c, env);
        return c->dead || c->closing ? -1 : 0;
    case TMPI__ENVELOPE__MSG_MESH_PING: {
        Tmpi__MeshPong p = TMPI__MESH_PONG__INIT;
        p.nonce = env->mesh_ping->nonce;
        Tmpi__Envelope out = TMPI__ENVELOPE__INIT;
        out.msg_case = TMPI__ENVELOPE__MSG_MESH_PONG;
        out.mesh_pong = &p;
        send_env(c, &out);
        return 0;
    }
    case TMPI__ENVELOPE__MSG_MESH_PONG:
        if (c->peer) {
            peer_pong(c->peer, env->mesh_pong->nonce);
            return 0;
        }
        if (c->outgoing && c->done && env->mesh_pong->nonce == c->nonce) {
            ping_finish(c, 0, (agent_now() - c->t0) * 1e6, NULL);
            return -1;
        }
        break;
    default:
        break;
    }
    log_warning("mesh: unexpected '%s' from %s (%s); closing", frame_msg_name(env), c->addr,
                c->hs.peer_name);
    close_after_flush(c);
    return -1;
}

static void read_frames(struct mesh_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    while (!c->closing && evbuffer_get_length(in) >= FRAME_HEADER_SIZE) {
        uint8_t hdr[FRAME_HEADER_SIZE];
        size_t len;
        evbuffer_copyout(in, hdr, sizeof hdr);
        if (frame_parse_header(hdr, MESH_MAX_FRAME, &len) < 0) {
            log_warning("mesh: bad frame header from %s; closing", c->addr);
            conn_end(c, -EPROTO, "bad frame header");
            return;
        }
        if (evbuffer_get_length(in) < FRAME_HEADER_SIZE + len) return;
        evbuffer_drain(in, FRAME_HEADER_SIZE);
        Tmpi__Envelope *env = frame_decode(evbuffer_pullup(in, (ev_ssize_t)len), len);
        evbuffer_drain(in, len);
        atomic_fetch_add_explicit(&c->m->rx_frames, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->m->rx_bytes, FRAME_HEADER_SIZE + len, memory_order_relaxed);
        if (!env) {
            log_warning("mesh: malformed frame from %s; closing", c->addr);
            conn_end(c, -EPROTO, "malformed frame");
            return;
        }
        c->busy++;
        int r = on_frame(c, env);
        c->busy--;
        frame_free(env);
        if (c->dead) {
            c->dead = 0;
            conn_free(c);
            return;
        }
        if (r < 0) return;
    }
}

static void auth_failed(struct mesh_conn *c, const char *why)
{
    c->m->auth_failures++;
    log_warning("mesh: %s %s refused: %s", c->outgoing ? "connection to" : "connection from",
                c->addr, why);
}

/* Moves the handshake on as far as the buffered input allows. */
/* Client side of a data connection, authenticated: the socket leaves the mesh.  The join
 * record goes out on it directly (16 bytes into an empty socket buffer: written whole), so no
 * byte of ours stays behind in the bufferevent we free; the server sends nothing after ACK. */
static void data_handover(struct mesh_conn *c)
{
    int fd = fcntl(bufferevent_getfd(c->bev), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        int e = -errno;
        conn_end(c, e, strerror(-e));
        return;
    }
    data_socket_liveness(c->m, fd);
    if (send(fd, c->join, MESH_JOIN_SIZE, MSG_NOSIGNAL) != MESH_JOIN_SIZE) {
        int e = errno ? -errno : -EIO;
        close(fd);
        conn_end(c, e, "cannot send the join record");
        return;
    }
    mesh_data_cb cb = c->data_cb;
    void *arg = c->data_arg;
    c->data_cb = NULL;
    conn_free(c);
    cb(arg, fd, 0, NULL);
}

/* Server side of a data connection: the join record names the job; the socket goes to it.
 * What the connecting side sends after the record is its job host's (read_cb stops reading at
 * the record), so anything beyond it in the buffer is a protocol error. */
static void data_accept(struct mesh_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    if (evbuffer_get_length(in) != MESH_JOIN_SIZE) {
        log_warning("mesh: data connection from %s (%s) sent more than its join record; "
                    "closing",
                    c->addr, c->hs.peer_name);
        conn_free(c);
        return;
    }
    uint8_t join[MESH_JOIN_SIZE];
    evbuffer_remove(in, join, sizeof join);
    char peer[MESH_NAME_SIZE + 100];
    snprintf(peer, sizeof peer, "%s (%s)", c->addr, c->hs.peer_name);
    uint32_t channel = c->hs.channel;
    struct mesh *m = c->m;
    if (!m->accept_ops || !m->accept_ops->data_accept) {
        log_warning("mesh: data connection from %s, but this agent takes none; closing", peer);
        conn_free(c);
        return;
    }
    int fd = fcntl(bufferevent_getfd(c->bev), F_DUPFD_CLOEXEC, 0);
    int e = errno;
    conn_free(c);
    if (fd < 0) {
        log_errno(LOG_WARNING, -e, "mesh: data connection from %s", peer);
        return;
    }
    data_socket_liveness(m, fd);
    m->accept_ops->data_accept(m->accept_arg, join, channel, fd, peer);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    struct mesh_conn *c = arg;
    struct mesh *m = c->m;
    struct evbuffer *in = bufferevent_get_input(bev);
    c->last_rx = agent_now();
    for (;;) {
        size_t have = evbuffer_get_length(in);
        switch (c->state) {
        case ST_WAIT_HELLO: {
            if (have < MESH_HELLO_SIZE) return;
            uint8_t hello[MESH_HELLO_SIZE], chall[MESH_CHALL_SIZE];
            evbuffer_remove(in, hello, sizeof hello);
            if (mesh_hello_answer(&c->hs, &m->key, m->cfg->name, hello, chall) < 0) {
                auth_failed(c, "not a TMPI mesh handshake");
                conn_free(c);
                return;
            }
            bufferevent_write(bev, chall, sizeof chall);
            c->state = ST_WAIT_PROOF;
            break;
        }
        case ST_WAIT_PROOF: {
            if (have < MESH_PROOF_SIZE) return;
            uint8_t proof[MESH_PROOF_SIZE], ack;
            evbuffer_remove(in, proof, sizeof proof);
            if (mesh_proof_check(&c->hs, &m->key, proof) < 0) {
                auth_failed(c, "wrong cluster key");
                ack = 0;
                bufferevent_write(bev, &ack, 1);
                close_after_flush(c);
                return;
            }
            ack = 1;
            bufferevent_write(bev, &ack, 1);
            m->accepted++;
            log_info("mesh: %s (%s) authenticated", c->addr, c->hs.peer_name);
            if (c->hs.channel != TMPI_CH_CTL) {
                /* a data connection: the join record must follow within the deadline.  The
                 * connecting job host speaks right after it (its transport hello,
                 * job_net_tp.c), before this side's job host has the socket: read no byte
                 * beyond the record, the rest is the job host's.  (Reading on into the hello
                 * closed the link now and then: "sent more than its join record".) */
                bufferevent_setwatermark(bev, EV_READ, 0, MESH_JOIN_SIZE);
                c->state = ST_WAIT_JOIN;
                break;
            }
            c->state = ST_READY;
            handshake_done(c);
            bufferevent_set_timeouts(bev, NULL, NULL);
            break;
        }
        case ST_WAIT_JOIN:
            if (have < MESH_JOIN_SIZE) return;
            handshake_done(c);
            data_accept(c);
            return;
        case ST_WAIT_CHALL: {
            if (have < MESH_CHALL_SIZE) return;
            uint8_t chall[MESH_CHALL_SIZE], proof[MESH_PROOF_SIZE];
            evbuffer_remove(in, chall, sizeof chall);
            int r = mesh_chall_answer(&c->hs, &m->key, chall, proof);
            if (r < 0) {
                const char *why =
                    r == -EACCES ? "the peer does not hold our cluster key" : "not a TMPI agent";
                auth_failed(c, why);
                conn_end(c, r, why);
                return;
            }
            bufferevent_write(bev, proof, sizeof proof);
            c->state = ST_WAIT_ACK;
            break;
        }
        case ST_WAIT_ACK: {
            if (have < MESH_ACK_SIZE) return;
            uint8_t ack;
            evbuffer_remove(in, &ack, 1);
            if (ack != 1) {
                auth_failed(c, "the peer refused our cluster key");
                conn_end(c, -EACCES, "the peer refused our cluster key");
                return;
            }
            c->state = ST_READY;
            handshake_done(c);
            bufferevent_set_timeouts(bev, NULL, NULL);
            if (c->peer) {
                peer_up(c->peer, c);
            } else if (c->data_cb) {
                data_handover(c);
                return;
            } else if (c->ops) {
                c->busy++;
                c->ops->on_ready(c->ops_arg, c);
                c->busy--;
                if (c->dead) {
                    c->dead = 0;
                    conn_free(c);
                    return;
                }
            } else {
                send_ping(c);
            }
            break;
        }
        case ST_READY:
            read_frames(c);
            return;
        }
    }
}

static void write_cb(struct bufferevent *bev, void *arg)
{
    struct mesh_conn *c = arg;
    if (c->closing) {
        if (evbuffer_get_length(bufferevent_get_output(bev)) == 0) conn_free(c);
        return;
    }
    if (c->ops && c->ops->on_drain) {
        c->busy++;
        c->ops->on_drain(c->ops_arg, c);
        c->busy--;
        if (c->dead) {
            c->dead = 0;
            conn_free(c);
        }
    }
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct mesh_conn *c = arg;
    if (what & BEV_EVENT_CONNECTED) {
        int one = 1;
        setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        uint8_t hello[MESH_HELLO_SIZE];
        mesh_hello_make(&c->hs, c->channel, c->m->cfg->name, hello);
        bufferevent_write(bev, hello, sizeof hello);
        c->state = ST_WAIT_CHALL;
        return;
    }
    const char *why = (what & BEV_EVENT_TIMEOUT) ? "handshake timed out"
                      : (what & BEV_EVENT_EOF)   ? "the peer closed the connection"
                                                 : "connection error";
    if (!c->outgoing && c->state == ST_WAIT_PROOF)
        /* a client that checked our MAC and left does not hold our key */
        auth_failed(c, (what & BEV_EVENT_EOF) ? "the peer left the handshake (a different "
                                                "cluster key?)"
                                              : why);
    else if (!c->outgoing && c->state != ST_READY && !(what & BEV_EVENT_EOF))
        auth_failed(c, why);
    char msg[160];
    int err = EVUTIL_SOCKET_ERROR();
    if ((what & BEV_EVENT_ERROR) && err)
        snprintf(msg, sizeof msg, "%s: %s", why, evutil_socket_error_to_string(err));
    else
        snprintf(msg, sizeof msg, "%s", why);
    if (c->outgoing && c->done) {
        ping_finish(c, -ECONNREFUSED, 0, msg);
        return;
    }
    /* Before the handshake is done, say which fault it was: a connection nobody takes
     * (-ECONNREFUSED and the like) differs from one that timed out or was cut on the way
     * (-ETIMEDOUT, -ECONNRESET), which the job code retries (job_link.h, job_coord.c). */
    int code = c->state == ST_READY              ? -ECONNRESET
               : (what & BEV_EVENT_TIMEOUT)      ? -ETIMEDOUT
               : (what & BEV_EVENT_ERROR) && err ? -err
               : (what & BEV_EVENT_EOF)          ? -ECONNRESET
                                                 : -ECONNREFUSED;
    conn_end(c, code, msg);
}

/* The whole handshake took too long: end it as an idle timeout would. */
static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
    struct mesh_conn *c = arg;
    event_free(c->deadline);
    c->deadline = NULL;
    event_cb(c->bev, BEV_EVENT_TIMEOUT | BEV_EVENT_READING, c);
}

/* Incoming connections from host (all hosts but the configured peers': NULL) still in the
 * handshake. */
static unsigned pending_from(const struct mesh *m, const char *host)
{
    unsigned n = 0;
    for (const struct mesh_conn *c = m->conns; c; c = c->next)
        if (!c->outgoing && c->deadline && (host ? strcmp(c->host, host) == 0 : !c->from_peer)) n++;
    return n;
}

static struct mesh_conn *conn_new(struct mesh *m, evutil_socket_t fd, int outgoing)
{
    if (m->nconns >= MESH_MAX_CONNS) return NULL;
    struct mesh_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->m = m;
    c->outgoing = outgoing;
    c->channel = TMPI_CH_CTL;
    c->err = -ECONNRESET;
    snprintf(c->why, sizeof c->why, "the connection ended");
    /* Thread-safe: the rank threads of a member job write their output to its coordinator
     * connection (job.h: out_mu, then the bufferevent lock; callbacks run unlocked). */
    c->bev = bufferevent_socket_new(m->base, fd,
                                    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_THREADSAFE |
                                        BEV_OPT_DEFER_CALLBACKS | BEV_OPT_UNLOCK_CALLBACKS);
    if (!c->bev) {
        free(c);
        return NULL;
    }
    c->next = m->conns;
    if (c->next) c->next->prev = c;
    m->conns = c;
    m->nconns++;
    struct timeval tv = {.tv_sec = MESH_HANDSHAKE_SEC};
    bufferevent_set_timeouts(c->bev, &tv, &tv);
    /* The idle timeouts above restart with every byte; this one does not. */
    c->deadline = evtimer_new(m->base, deadline_cb, c);
    if (!c->deadline || evtimer_add(c->deadline, &tv) < 0) {
        conn_free(c);
        return NULL;
    }
    bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    return c;
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    struct mesh *m = arg;
    char addr[96];
    addr_string(sa, addr, sizeof addr);
    char host[INET6_ADDRSTRLEN] = "";
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof host);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host, sizeof host);
    int peer = mesh_budget_is_peer(&m->budget, host);
    unsigned all = pending_from(m, NULL), mine = pending_from(m, host);
    const char *limit = mesh_budget_refuse(peer, all, mine);
    if (limit) {
        /* Logged once per 100 so a flood does not flood the journal too. */
        if (m->refused_pending++ % 100 == 0)
            log_warning("mesh: refusing %s: %u handshakes pending (%u from that address; "
                        "%s reached), %llu refused so far",
                        addr, all, mine, limit, (unsigned long long)m->refused_pending);
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct mesh_conn *c = conn_new(m, fd, 0);
    if (!c) {
        log_warning("mesh: refusing %s: %u connections open", addr, m->nconns);
        close(fd);
        return;
    }
    snprintf(c->addr, sizeof c->addr, "%s", addr);
    snprintf(c->host, sizeof c->host, "%s", host);
    c->from_peer = peer;
    c->state = ST_WAIT_HELLO;
}

int mesh_init(struct mesh **ret, const struct agent_config *cfg, struct event_base *base)
{
    struct mesh *m = calloc(1, sizeof *m);
    if (!m) return -ENOMEM;
    m->cfg = cfg;
    m->base = base;
    *ret = m;
    if (!config_has_key(cfg)) return 0;
    char err[256];
    int r = cfg->key_fd >= 0 ? keyfile_read_fd(cfg->key_fd, &m->key, err, sizeof err)
                             : keyfile_load(cfg->key_file, &m->key, err, sizeof err);
    if (r < 0) {
        log_error("%s", err);
        return r;
    }
    r = liveness_start(m);
    if (r < 0) return r;
    for (size_t i = 0; i < cfg->npeers; i++) {
        r = mesh_add_peer(m, cfg->peers[i]);
        if (r < 0) {
            log_error("bad peer address: %s (HOST:PORT expected)", cfg->peers[i]);
            return r;
        }
    }
    if (!cfg->listen) return 0;
    if (mesh_budget_init(&m->budget, cfg->peers, cfg->npeers) < 0) return -ENOMEM;

    char host[256], port[16];
    if (mesh_parse_address(cfg->listen, host, sizeof host, port, sizeof port) < 0) {
        log_error("bad listen address: %s (HOST:PORT expected)", cfg->listen);
        return -EINVAL;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res;
    int g = getaddrinfo(*host ? host : NULL, port, &hints, &res);
    if (g != 0) {
        log_error("cannot resolve listen address %s: %s", cfg->listen, gai_strerror(g));
        return -EINVAL;
    }
    m->listener = evconnlistener_new_bind(
        base, accept_cb, m, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE, 128,
        res->ai_addr, (int)res->ai_addrlen);
    if (!m->listener) {
        r = -errno;
        log_errno(LOG_ERR, r ? r : -EADDRINUSE, "cannot listen on %s", cfg->listen);
        freeaddrinfo(res);
        return r ? r : -EADDRINUSE;
    }
    /* report the port really bound (port 0 picks a free one) */
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(evconnlistener_get_fd(m->listener), (struct sockaddr *)&ss, &sl);
    addr_string((struct sockaddr *)&ss, m->listen_addr, sizeof m->listen_addr);
    m->listen_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                    : ((struct sockaddr_in *)&ss)->sin_port);
    freeaddrinfo(res);
    log_info("mesh: listening on %s", m->listen_addr);
    return 0;
}

void mesh_set_accept_ops(struct mesh *m, const struct mesh_accept_ops *ops, void *arg)
{
    m->accept_ops = ops;
    m->accept_arg = arg;
}

/* Starts an outgoing connection; the handshake runs from event_cb.  Negative errno. */
static int conn_connect(struct mesh *m, const char *address, struct mesh_conn **ret)
{
    char host[256], port[16];
    if (parse_remote(address, host, sizeof host, port, sizeof port) < 0) return -EINVAL;
    /* Names resolve from /etc/hosts or numerically; a slow DNS would stall the loop. */
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res;
    if (getaddrinfo(host, port, &hints, &res) != 0) return -EHOSTUNREACH;
    struct mesh_conn *c = conn_new(m, -1, 1);
    if (!c) {
        freeaddrinfo(res);
        return -EMFILE;
    }
    snprintf(c->addr, sizeof c->addr, "%s", address);
    c->state = ST_WAIT_CHALL;
    int r = bufferevent_socket_connect(c->bev, res->ai_addr, (int)res->ai_addrlen);
    freeaddrinfo(res);
    if (r < 0) {
        conn_free(c);
        return -ECONNREFUSED;
    }
    *ret = c;
    return 0;
}

/* An outgoing connection for one of the public dialers below: only with a cluster key. */
static int dial(struct mesh *m, const char *address, struct mesh_conn **ret)
{
    if (!config_has_key(m->cfg)) return -ENOKEY;
    return conn_connect(m, address, ret);
}

int mesh_ping(struct mesh *m, const char *address, mesh_ping_cb cb, void *arg,
              struct mesh_conn **ret)
{
    struct mesh_conn *c;
    int r = dial(m, address, &c);
    if (r < 0) return r;
    c->done = cb;
    c->done_arg = arg;
    *ret = c;
    return 0;
}

/* ---- configured peers ---- */

static void peer_arm(struct mesh_peer *p, unsigned ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    evtimer_add(p->timer, &tv);
}

static void peer_try_connect(struct mesh_peer *p)
{
    struct mesh_conn *c;
    int r = conn_connect(p->m, p->address, &c);
    if (r < 0) {
        snprintf(p->last_error, sizeof p->last_error, "%s", strerror(-r));
        p->state = PEER_DOWN;
        return;
    }
    p->state = PEER_CONNECTING;
    p->conn = c;
    c->peer = p;
}

static void peer_timer(evutil_socket_t fd, short what, void *arg)
{
    struct mesh_peer *p = arg;
    unsigned hb = p->m->cfg->heartbeat_ms;
    switch (p->state) {
    case PEER_UP:
        if (p->missed >= PEER_MISSED_MAX) {
            char why[96];
            snprintf(why, sizeof why, "no heartbeat answer for %u ms", hb * p->missed);
            struct mesh_conn *c = p->conn;
            snprintf(p->last_error, sizeof p->last_error, "%s", why);
            if (c) {
                c->peer = NULL;
                p->conn = NULL;
                conn_free(c);
            }
            peer_down(p, why);
            return;
        }
        p->missed++;
        {
            Tmpi__MeshPing ping = TMPI__MESH_PING__INIT;
            randombytes_buf(&p->nonce, sizeof p->nonce);
            ping.nonce = p->nonce;
            Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
            env.msg_case = TMPI__ENVELOPE__MSG_MESH_PING;
            env.mesh_ping = &ping;
            p->t0 = agent_now();
            send_env(p->conn, &env);
        }
        peer_arm(p, hb);
        break;
    case PEER_DOWN:
        peer_try_connect(p);
        /* the handshake has its own deadline; try again after it */
        peer_arm(p, hb > 2000 ? hb : 2000);
        break;
    case PEER_CONNECTING:
        peer_arm(p, hb);
        break;
    }
}

static void peer_up(struct mesh_peer *p, struct mesh_conn *c)
{
    p->state = PEER_UP;
    p->missed = 0;
    p->last_seen = agent_now();
    p->ups++;
    p->last_error[0] = '\0';
    snprintf(p->name, sizeof p->name, "%s", c->hs.peer_name);
    log_notice("mesh: peer %s (%s) is up", p->address, p->name);
    evtimer_del(p->timer);
    peer_timer(-1, 0, p); /* first heartbeat now */
}

static void peer_pong(struct mesh_peer *p, uint64_t nonce)
{
    if (nonce != p->nonce) return;
    p->missed = 0;
    p->last_seen = agent_now();
    p->rtt_usec = (p->last_seen - p->t0) * 1e6;
}

static void peer_down(struct mesh_peer *p, const char *why)
{
    int was_up = p->state == PEER_UP;
    p->state = PEER_DOWN;
    if (!p->last_error[0]) snprintf(p->last_error, sizeof p->last_error, "%s", why);
    if (was_up) log_warning("mesh: peer %s (%s) is down: %s", p->address, p->name, p->last_error);
    if (p->timer) {
        evtimer_del(p->timer);
        peer_arm(p, 1000);
    }
}

int mesh_add_peer(struct mesh *m, const char *address)
{
    char host[256], port[16];
    if (parse_remote(address, host, sizeof host, port, sizeof port) < 0) return -EINVAL;
    struct mesh_peer *p = calloc(1, sizeof *p);
    if (!p) return -ENOMEM;
    p->m = m;
    snprintf(p->address, sizeof p->address, "%s:%s", host, port);
    p->timer = evtimer_new(m->base, peer_timer, p);
    if (!p->timer) {
        free(p);
        return -ENOMEM;
    }
    p->next = m->peers;
    m->peers = p;
    m->npeers++;
    peer_try_connect(p);
    peer_arm(p, 2000);
    return 0;
}

size_t mesh_peers(const struct mesh *m, struct mesh_peer_info *out, size_t max)
{
    size_t n = 0;
    double now = agent_now();
    for (const struct mesh_peer *p = m ? m->peers : NULL; p && n < max; p = p->next, n++) {
        static const char *const names[] = {"down", "connecting", "up"};
        out[n] = (struct mesh_peer_info){
            .address = p->address,
            .name = p->name,
            .state = names[p->state],
            .rtt_usec = p->rtt_usec,
            .since_seen_sec = p->last_seen > 0 ? now - p->last_seen : -1,
            .ups = p->ups,
            .last_error = p->last_error,
        };
    }
    return n;
}

size_t mesh_npeers(const struct mesh *m)
{
    return m ? m->npeers : 0;
}

void mesh_ping_forget(struct mesh_conn *c)
{
    if (c) c->done = NULL;
}

/* ---- liveness of the agents of a job ---- */

/* Every connection that carries a job (a coordinator's to each member, a member's to its
 * coordinator) is pinged every tick from both ends, and every byte that arrives counts as an
 * answer.  One whose peer sent nothing for heartbeat_timeout_ms ends with -ETIMEDOUT ("stopped
 * answering for N s"): its owner fails or tears down the job (job_coord.c, job_member.c).  A
 * stopped, swapped-out or partitioned agent is found so; a dead one sooner, by its socket. */

/* The tick: heartbeat_ms, but at least four per timeout so that one late ping never counts
 * as silence. */
static unsigned liveness_tick_ms(const struct mesh *m)
{
    unsigned t = m->cfg->heartbeat_ms, max = m->cfg->heartbeat_timeout_ms / 4;
    if (t > max) t = max;
    return t < 50 ? 50 : t;
}

/* A connection to end for silence, or NULL.  Pings and refreshes the others on the way. */
static struct mesh_conn *liveness_scan(struct mesh *m, double now, int stalled, int ping)
{
    double timeout = m->cfg->heartbeat_timeout_ms / 1000.0;
    for (struct mesh_conn *c = m->conns; c; c = c->next) {
        if (c->closing) {
            if (now - c->closing_since >= timeout) return c;
            continue;
        }
        if (!c->ops || c->state != ST_READY || c->dead) continue;
        /* Our own silence is not the peer's: after this agent was stopped itself, or while its
         * owner does not read (a coordinator whose launcher is slow), the clock restarts. */
        if (stalled || !(bufferevent_get_enabled(c->bev) & EV_READ)) c->last_rx = now;
        if (now - c->last_rx >= timeout) return c;
        if (ping) {
            Tmpi__MeshPing p = TMPI__MESH_PING__INIT;
            Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
            env.msg_case = TMPI__ENVELOPE__MSG_MESH_PING;
            env.mesh_ping = &p;
            send_env(c, &env);
        }
    }
    return NULL;
}

static void liveness_timer(evutil_socket_t fd, short what, void *arg)
{
    struct mesh *m = arg;
    double now = agent_now(), tick = liveness_tick_ms(m) / 1000.0;
    int stalled = m->last_tick > 0 && now - m->last_tick > 2 * tick + (tick < 1.0 ? tick : 1.0);
    if (stalled)
        log_notice("mesh: this agent did not run for %.1f s (stopped or starved); the heartbeat "
                   "clocks of its jobs restart",
                   now - m->last_tick);
    m->last_tick = now;
    /* Ending a connection runs its owner's on_close, which may close others: rescan from the
     * start after each one (they are rare). */
    int ping = 1;
    struct mesh_conn *c;
    while ((c = liveness_scan(m, now, stalled, ping))) {
        ping = 0; /* the first scan reached at least this far; a second ping does no harm */
        if (c->closing) {
            log_notice("mesh: %s (%s) did not take our last bytes in %u ms; dropping it", c->addr,
                       c->hs.peer_name, m->cfg->heartbeat_timeout_ms);
            conn_free(c);
            continue;
        }
        char why[96];
        snprintf(why, sizeof why, "stopped answering for %g s",
                 m->cfg->heartbeat_timeout_ms / 1000.0);
        log_warning("mesh: %s (%s) %s", c->addr, c->hs.peer_name, why);
        conn_end(c, -ETIMEDOUT, why);
    }
}

static int liveness_start(struct mesh *m)
{
    unsigned ms = liveness_tick_ms(m);
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    m->liveness = event_new(m->base, -1, EV_PERSIST, liveness_timer, m);
    if (!m->liveness || event_add(m->liveness, &tv) < 0) return -ENOMEM;
    m->last_tick = agent_now();
    return 0;
}

/* A data connection leaves the mesh (its owner reads it): no heartbeat frames can go there, so
 * TCP watches it.  Keepalive probes find a link that went dark while idle, within about the
 * heartbeat timeout; the user timeout a link where our bytes stay unacknowledged, within half
 * of it: a job's link is reconnected (job_net.h), and under heavy loss a connection made anew
 * with fresh retransmission timers moves sooner than one whose backoff is waited out, while
 * the heartbeat still tells a node that is gone.  Best effort: a kernel without these options
 * leaves only the job's heartbeats. */
static void data_socket_liveness(const struct mesh *m, int fd)
{
    unsigned ms = m->cfg->heartbeat_timeout_ms;
    int one = 1, idle = (int)(ms / 2000), intvl = (int)(ms / 6000), cnt = 3;
    unsigned user = ms / 2;
    if (idle < 1) idle = 1;
    if (intvl < 1) intvl = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user, sizeof user);
}

/* ---- connections that carry a job ---- */

int mesh_ctl_connect(struct mesh *m, const char *address, const struct mesh_ctl_ops *ops, void *arg,
                     struct mesh_conn **ret)
{
    struct mesh_conn *c;
    int r = dial(m, address, &c);
    if (r < 0) return r;
    c->ops = ops;
    c->ops_arg = arg;
    *ret = c;
    return 0;
}

void mesh_conn_set_ops(struct mesh_conn *c, const struct mesh_ctl_ops *ops, void *arg)
{
    c->ops = ops;
    c->ops_arg = arg;
}

int mesh_send(struct mesh_conn *c, const Tmpi__Envelope *env)
{
    if (c->closing || c->dead) return -ENOTCONN;
    uint8_t *buf;
    size_t len;
    int r = frame_encode(env, MESH_MAX_FRAME, &buf, &len);
    if (r < 0) return r;
    r = bufferevent_write(c->bev, buf, len) < 0 ? -ENOMEM : 0;
    if (r == 0) count_tx(c->m, len);
    free(buf);
    return r;
}

struct bufferevent *mesh_conn_bev(struct mesh_conn *c)
{
    return c->bev;
}

const char *mesh_conn_peer_name(const struct mesh_conn *c)
{
    return c->hs.peer_name;
}

void mesh_conn_close(struct mesh_conn *c)
{
    if (!c) return;
    c->ops = NULL;
    c->data_cb = NULL;
    if (!c->closing) close_after_flush(c);
}

int mesh_data_connect(struct mesh *m, const char *address, uint32_t channel,
                      const uint8_t join[MESH_JOIN_SIZE], mesh_data_cb cb, void *arg,
                      struct mesh_conn **ret)
{
    struct mesh_conn *c;
    int r = dial(m, address, &c);
    if (r < 0) return r;
    c->channel = channel;
    memcpy(c->join, join, MESH_JOIN_SIZE);
    c->data_cb = cb;
    c->data_arg = arg;
    *ret = c;
    return 0;
}

void mesh_join_encode(uint8_t out[MESH_JOIN_SIZE], uint64_t uid, uint32_t node, uint32_t channel)
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(uid >> (56 - 8 * i));
    for (int i = 0; i < 4; i++) {
        out[8 + i] = (uint8_t)(node >> (24 - 8 * i));
        out[12 + i] = (uint8_t)(channel >> (24 - 8 * i));
    }
}

void mesh_join_decode(const uint8_t in[MESH_JOIN_SIZE], uint64_t *uid, uint32_t *node,
                      uint32_t *channel)
{
    uint64_t u = 0;
    uint32_t n = 0, ch = 0;
    for (int i = 0; i < 8; i++)
        u = u << 8 | in[i];
    for (int i = 0; i < 4; i++) {
        n = n << 8 | in[8 + i];
        ch = ch << 8 | in[12 + i];
    }
    *uid = u;
    *node = n;
    *channel = ch;
}

uint16_t mesh_listen_port(const struct mesh *m)
{
    return m && m->listener ? m->listen_port : 0;
}

void mesh_stats(const struct mesh *m, const char **ret_listen, uint64_t *ret_accepted,
                uint64_t *ret_failures)
{
    *ret_listen = m && m->listener ? m->listen_addr : "";
    *ret_accepted = m ? m->accepted : 0;
    *ret_failures = m ? m->auth_failures : 0;
}

void mesh_traffic(struct mesh *m, struct mesh_traffic *ret)
{
    *ret = (struct mesh_traffic){0};
    if (!m) return;
    ret->frames_sent = atomic_load_explicit(&m->tx_frames, memory_order_relaxed);
    ret->bytes_sent = atomic_load_explicit(&m->tx_bytes, memory_order_relaxed);
    ret->frames_received = atomic_load_explicit(&m->rx_frames, memory_order_relaxed);
    ret->bytes_received = atomic_load_explicit(&m->rx_bytes, memory_order_relaxed);
}

void mesh_close(struct mesh *m)
{
    if (!m) return;
    for (struct mesh_peer *p = m->peers, *n; p; p = n) {
        n = p->next;
        if (p->conn) p->conn->peer = NULL;
        event_free(p->timer);
        p->timer = NULL;
        free(p);
    }
    m->peers = NULL;
    if (m->liveness) event_free(m->liveness);
    while (m->conns)
        conn_free(m->conns);
    if (m->listener) evconnlistener_free(m->listener);
    sodium_memzero(&m->key, sizeof m->key);
    mesh_budget_free(&m->budget);
    free(m);
}
