/* mesh.c: two mesh instances (two struct agent on one event loop) on loopback.  The handshake
 * and a ping; a data connection and a JobAssign reach the callbacks registered with
 * mesh_set_accept_ops (and are refused when none is registered); a wrong cluster key is
 * refused on both sides; a connection that never starts the handshake is cut at the deadline. */
#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "agent.h"
#include "log.h"
#include "mesh.h"
#include "mesh_auth.h"

/* mesh.c's handshake deadline (MESH_HANDSHAKE_SEC); the test allows this much more. */
#define HANDSHAKE_SEC 5
#define SLACK_SEC 3

static struct event_base *base;
static char dir[] = "/tmp/test_mesh.XXXXXX";

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs the loop until done(arg) or secs pass; 1 if done. */
static int run_until(int (*done)(void *), void *arg, double secs)
{
    double end = now() + secs;
    while (!done(arg)) {
        if (now() > end) return 0;
        struct timeval tv = {.tv_usec = 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    return 1;
}

static int flag_set(void *arg)
{
    return *(volatile int *)arg != 0;
}

static void write_key(const char *path, const char *key)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK_EQ(write(fd, key, strlen(key)), (long long)strlen(key));
    close(fd);
}

static void agent_new(struct agent *a, const char *name, const char *key_file, const char *listen)
{
    memset(a, 0, sizeof *a);
    CHECK_EQ(config_defaults(&a->cfg), 0);
    free(a->cfg.name);
    a->cfg.name = strdup(name);
    a->cfg.key_file = strdup(key_file);
    a->cfg.listen = listen ? strdup(listen) : NULL;
    CHECK(a->cfg.name && a->cfg.key_file);
    a->base = base;
    CHECK_EQ(mesh_init(&a->mesh, &a->cfg, a->base), 0);
}

static void agent_free(struct agent *a)
{
    mesh_close(a->mesh);
    config_free(&a->cfg);
}

/* ---- what the server's upcalls saw ---- */
static struct {
    int data_calls, assign_calls;
    uint64_t uid;
    uint32_t node, channel;
    int fd;
    char peer[200];
    uint64_t assign_uid;
} up = {.fd = -1};

static void up_data(void *arg, const uint8_t join[MESH_JOIN_SIZE], uint32_t channel, int fd,
                    const char *peer)
{
    CHECK(arg == &up);
    up.data_calls++;
    mesh_join_decode(join, &up.uid, &up.node, &up.channel);
    CHECK_EQ(up.channel, channel);
    up.fd = fd;
    snprintf(up.peer, sizeof up.peer, "%s", peer);
}

static void up_assign(void *arg, struct mesh_conn *c, const Tmpi__JobAssign *ja)
{
    CHECK(arg == &up);
    up.assign_calls++;
    up.assign_uid = ja->uid;
    mesh_conn_close(c); /* the callee owns the connection: here it declines it */
}

static const struct mesh_accept_ops up_ops = {.job_assign = up_assign, .data_accept = up_data};

/* ---- client-side outcomes ---- */
struct ping_result {
    int done, rc;
    char peer[64];
};

static void ping_cb(void *arg, int rc, const char *peer, double rtt_usec, const char *err)
{
    struct ping_result *p = arg;
    p->done = 1;
    p->rc = rc;
    snprintf(p->peer, sizeof p->peer, "%s", peer ? peer : "");
    if (rc == 0) CHECK(rtt_usec >= 0);
    (void)err;
}

struct data_result {
    int done, fd, err;
};

static void data_cb(void *arg, int fd, int err, const char *why)
{
    struct data_result *d = arg;
    d->done = 1;
    d->fd = fd;
    d->err = err;
    (void)why;
}

/* A connecting job host that speaks at once (its transport hello, job_net_tp.c): its bytes
 * follow the join record into the socket before the server has read the record. */
static void data_cb_speaks(void *arg, int fd, int err, const char *why)
{
    data_cb(arg, fd, err, why);
    if (fd >= 0) CHECK_EQ(write(fd, "hello at once", 13), 13);
}

struct ctl_result {
    int ready, closed, err;
};

static void ctl_ready(void *arg, struct mesh_conn *c)
{
    struct ctl_result *r = arg;
    r->ready = 1;
    Tmpi__JobAssign ja = TMPI__JOB_ASSIGN__INIT;
    ja.uid = 0xfeedbeefcafe;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_ASSIGN;
    env.job_assign = &ja;
    CHECK_EQ(mesh_send(c, &env), 0);
}

static void ctl_frame(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env)
{
    (void)arg, (void)c, (void)env;
    CHECK(!"the server sends no frame");
}

static void ctl_close(void *arg, struct mesh_conn *c, int err, const char *why)
{
    struct ctl_result *r = arg;
    r->closed = 1;
    r->err = err;
    (void)c, (void)why;
}

static const struct mesh_ctl_ops ctl_ops = {
    .on_ready = ctl_ready, .on_frame = ctl_frame, .on_close = ctl_close};

/* A plain TCP connection to the listener that never says anything. */
static int silent_connect(const char *addr)
{
    const char *colon = strrchr(addr, ':');
    CHECK(colon);
    struct sockaddr_in sin = {.sin_family = AF_INET,
                              .sin_port = htons((uint16_t)atoi(colon + 1)),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    CHECK_EQ(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    return fd;
}

static int peer_closed(void *arg)
{
    char b;
    ssize_t n = recv(*(int *)arg, &b, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

int main(void)
{
    log_set_level(LOG_WARNING);
    CHECK_EQ(evthread_use_pthreads(), 0);
    base = event_base_new();
    CHECK(base);
    CHECK(mkdtemp(dir));
    char key_a[64], key_b[64];
    snprintf(key_a, sizeof key_a, "%s/a.key", dir);
    snprintf(key_b, sizeof key_b, "%s/b.key", dir);
    write_key(key_a, "the cluster key of this test, 32+ bytes");
    write_key(key_b, "a different key, also long enough!!");

    struct agent server, client, stranger;
    agent_new(&server, "server", key_a, "127.0.0.1:0");
    agent_new(&client, "client", key_a, NULL);
    agent_new(&stranger, "stranger", key_b, NULL);
    const char *addr;
    uint64_t accepted, failures;
    mesh_stats(server.mesh, &addr, &accepted, &failures);
    CHECK(strncmp(addr, "127.0.0.1:", 10) == 0 && strcmp(addr, "127.0.0.1:0") != 0);
    char server_addr[96];
    snprintf(server_addr, sizeof server_addr, "%s", addr);

    /* The deadline: started first, checked last (the other cases run meanwhile). */
    int silent = silent_connect(server_addr);
    double silent_t0 = now();

    /* Handshake and ping with the same key. */
    struct mesh_conn *c;
    struct ping_result ping = {0};
    CHECK_EQ(mesh_ping(client.mesh, server_addr, ping_cb, &ping, &c), 0);
    CHECK(run_until(flag_set, &ping.done, 10));
    CHECK_EQ(ping.rc, 0);
    CHECK(strcmp(ping.peer, "server") == 0);

    /* Without registered upcalls the server takes no job's connection: a JobAssign ends the
     * control connection, a data connection is closed after its join record. */
    struct ctl_result ctl = {0};
    CHECK_EQ(mesh_ctl_connect(client.mesh, server_addr, &ctl_ops, &ctl, &c), 0);
    CHECK(run_until(flag_set, &ctl.closed, 10));
    CHECK_EQ(ctl.ready, 1);
    CHECK(ctl.err < 0);
    uint8_t join[MESH_JOIN_SIZE];
    mesh_join_encode(join, 42, 1, TMPI_CH_P2P);
    struct data_result data = {.fd = -1};
    CHECK_EQ(mesh_data_connect(client.mesh, server_addr, TMPI_CH_P2P, join, data_cb, &data, &c), 0);
    CHECK(run_until(flag_set, &data.done, 10));
    CHECK(data.fd >= 0);
    CHECK(run_until(peer_closed, &data.fd, 10));
    close(data.fd);
    CHECK_EQ(up.data_calls + up.assign_calls, 0);

    /* With them: the data socket and the JobAssign reach the callbacks. */
    mesh_set_accept_ops(server.mesh, &up_ops, &up);
    data = (struct data_result){.fd = -1};
    mesh_join_encode(join, 0x0102030405060708ull, 3, TMPI_CH_COLL);
    CHECK_EQ(mesh_data_connect(client.mesh, server_addr, TMPI_CH_COLL, join, data_cb, &data, &c),
             0);
    CHECK(run_until(flag_set, &up.data_calls, 10));
    CHECK(data.done && data.fd >= 0 && data.err == 0);
    CHECK(up.uid == 0x0102030405060708ull && up.node == 3 && up.channel == TMPI_CH_COLL);
    CHECK(up.fd >= 0 && strstr(up.peer, "(client)"));
    /* the two ends are one connection, no mesh byte left in between */
    CHECK_EQ(write(data.fd, "xyz", 3), 3);
    char got[4] = {0};
    CHECK_EQ(read(up.fd, got, 3), 3);
    CHECK(strcmp(got, "xyz") == 0);
    close(data.fd);
    close(up.fd);

    /* Bytes right behind the join record are the job host's, not a protocol error. */
    data = (struct data_result){.fd = -1};
    up.fd = -1;
    int calls0 = up.data_calls;
    mesh_join_encode(join, 7, 2, TMPI_CH_P2P);
    CHECK_EQ(
        mesh_data_connect(client.mesh, server_addr, TMPI_CH_P2P, join, data_cb_speaks, &data, &c),
        0);
    CHECK(run_until(flag_set, &data.done, 10));
    CHECK(data.fd >= 0);
    double t_deadline = now() + 10;
    while (up.data_calls == calls0 && now() < t_deadline) {
        struct timeval tv = {.tv_usec = 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    CHECK_EQ(up.data_calls, calls0 + 1);
    CHECK(up.fd >= 0 && up.uid == 7 && up.channel == TMPI_CH_P2P);
    char hello[14] = {0};
    CHECK_EQ(read(up.fd, hello, 13), 13);
    CHECK(strcmp(hello, "hello at once") == 0);
    close(data.fd);
    close(up.fd);

    ctl = (struct ctl_result){0};
    CHECK_EQ(mesh_ctl_connect(client.mesh, server_addr, &ctl_ops, &ctl, &c), 0);
    CHECK(run_until(flag_set, &up.assign_calls, 10));
    CHECK(up.assign_uid == 0xfeedbeefcafe);
    CHECK(run_until(flag_set, &ctl.closed, 10)); /* the callee closed it */

    /* A wrong key: the client refuses the server's proof, the server counts a failure. */
    mesh_stats(server.mesh, &addr, &accepted, &failures);
    uint64_t failures0 = failures, accepted0 = accepted;
    ping = (struct ping_result){0};
    CHECK_EQ(mesh_ping(stranger.mesh, server_addr, ping_cb, &ping, &c), 0);
    CHECK(run_until(flag_set, &ping.done, 10));
    CHECK_EQ(ping.rc, -EACCES);
    double t_end = now() + 10;
    do {
        struct timeval tv = {.tv_usec = 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
        mesh_stats(server.mesh, &addr, &accepted, &failures);
    } while (failures == failures0 && now() < t_end);
    CHECK_EQ(failures, failures0 + 1);
    CHECK_EQ(accepted, accepted0);

    /* The silent connection is cut once the handshake deadline passes, not before. */
    CHECK(run_until(peer_closed, &silent, HANDSHAKE_SEC + SLACK_SEC));
    double waited = now() - silent_t0;
    if (waited < HANDSHAKE_SEC - 0.5) {
        fprintf(stderr, "silent connection cut after %.1f s, expected about %d s\n", waited,
                HANDSHAKE_SEC);
        return 1;
    }
    close(silent);

    agent_free(&stranger);
    agent_free(&client);
    agent_free(&server);
    event_base_free(base);
    unlink(key_a);
    unlink(key_b);
    rmdir(dir);
    return 0;
}
