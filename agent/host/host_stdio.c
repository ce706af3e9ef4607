/* host_stdio.c — the job host's fds 1 and 2 to the launcher, its log to the agent
 * (host_stdio.h). */
#include "host_stdio.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "job.h"
#include "jobhost.h"
#include "log.h"

/* A line longer than this leaves in pieces (as a rank's, output.c). */
#define HOST_STDIO_MAX_PENDING (64 * 1024)
/* The reader waits while the channel holds this much for the launcher (as job_send does for
 * ranks), so a program that floods its fd 1 cannot grow the host without bound. */
#define HOST_STDIO_HIGH (4u << 20)
/* How often the reader looks whether it should stop while no byte comes. */
#define HOST_STDIO_POLL_MS 200
/* How long a process a sanitizer ends waits for its last output to leave on the channel. */
#define HOST_STDIO_LAST_WORDS_MS 2000

/* Present when a sanitizer runtime is in the process (a sanitized program preloads it,
 * jobhost.c; a test build links it): called after its report, before it ends the process. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

struct host_stream {
    int fd; /* read end, non-blocking; -1 once at end of file */
    char buf[HOST_STDIO_MAX_PENDING];
    size_t len;
};

/* The host's one pair of streams, its reader and the log's way to the agent.  mu guards job
 * and the streams' buffers; chan and chan_gone are read by any thread that logs. */
static struct {
    pthread_mutex_t mu;
    struct job *job;
    struct host_stream s[2]; /* fd 1, fd 2 */
    pthread_t reader;
    int reader_started;
    atomic_int stop;
    _Atomic(struct bufferevent *) chan;
    atomic_int chan_gone;
} hs = {.mu = PTHREAD_MUTEX_INITIALIZER, .s = {{.fd = -1}, {.fd = -1}}};

static void sink(int level, const char *msg, size_t len)
{
    if (atomic_load(&hs.chan_gone)) return;
    Tmpi__HostLog hl = TMPI__HOST_LOG__INIT;
    hl.level = level;
    hl.message = (char *)msg;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_HOST_LOG;
    env.host_log = &hl;
    struct bufferevent *chan = atomic_load(&hs.chan);
    if (!chan) {
        (void)frame_write_fd(JOBHOST_CHANNEL_FD, &env, FRAME_DEFAULT_MAX);
        return;
    }
    uint8_t *buf;
    size_t n;
    if (frame_encode(&env, FRAME_DEFAULT_MAX, &buf, &n) == 0) {
        bufferevent_write(chan, buf, n);
        free(buf);
    }
    (void)len;
}

/* A pipe whose write end becomes fd target (inherited by what the ranks start). */
static int pipe_onto(int target, int *ret_read)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return -errno;
    int r = dup2(p[1], target) < 0 ? -errno : 0; /* dup2 clears close-on-exec on target */
    close(p[1]);
    if (r < 0) {
        close(p[0]);
        return r;
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    *ret_read = p[0];
    return 0;
}

int host_stdio_setup(void)
{
    for (int i = 0; i < 2; i++) {
        int r = pipe_onto(i + 1, &hs.s[i].fd);
        if (r < 0) return r;
    }
    log_set_sink(sink);
    return 0;
}

void host_stdio_channel(struct bufferevent *chan)
{
    if (!chan) atomic_store(&hs.chan_gone, 1);
    atomic_store(&hs.chan, chan);
}

/* The node's first rank: who the process's own bytes are shown as. */
static uint32_t first_rank(const struct job *j)
{
    return j->global_rank ? (uint32_t)j->global_rank[0] : 0;
}

static void send_out(struct job *j, int stream, const char *data, size_t len)
{
    Tmpi__Output out = TMPI__OUTPUT__INIT;
    out.rank = first_rank(j);
    out.stream = (uint32_t)stream;
    out.data.data = (uint8_t *)data;
    out.data.len = len;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_OUTPUT;
    env.output = &out;
    (void)job_send(j, &env);
}

/* Reads what stream i holds now and sends its whole lines; mu held.  1 if bytes came. */
static int pump(struct job *j, int i, int final)
{
    struct host_stream *s = &hs.s[i];
    int got = 0;
    while (s->fd >= 0) {
        ssize_t n = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) {
            close(s->fd);
            s->fd = -1;
            final = 1;
            break;
        }
        if (n < 0) break; /* EAGAIN: empty for now */
        got = 1;
        s->len += (size_t)n;
        char *nl = memrchr(s->buf, '\n', s->len);
        size_t head = nl ? (size_t)(nl - s->buf) + 1 : s->len == sizeof s->buf ? s->len : 0;
        if (head) {
            send_out(j, i + 1, s->buf, head);
            memmove(s->buf, s->buf + head, s->len - head);
            s->len -= head;
        }
    }
    /* a read that fills the buffer sends it: there is always room for the newline */
    if (final && s->len) {
        if (s->buf[s->len - 1] != '\n') s->buf[s->len++] = '\n';
        send_out(j, i + 1, s->buf, s->len);
        s->len = 0;
    }
    return got;
}

/* Bytes the channel holds for the launcher. */
static size_t queued(struct job *j)
{
    pthread_mutex_lock(&j->out_mu);
    size_t n = j->bev ? evbuffer_get_length(bufferevent_get_output(j->bev)) : 0;
    pthread_mutex_unlock(&j->out_mu);
    return n;
}

static void *reader_main(void *arg)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = hs.s[0].fd, .events = POLLIN},
                              {.fd = hs.s[1].fd, .events = POLLIN}};
        (void)poll(p, 2, HOST_STDIO_POLL_MS);
        pthread_mutex_lock(&hs.mu);
        struct job *j = hs.job;
        if (!j || atomic_load(&hs.stop)) {
            pthread_mutex_unlock(&hs.mu);
            return NULL;
        }
        for (int i = 0; i < 2; i++)
            (void)pump(j, i, 0);
        int open = hs.s[0].fd >= 0 || hs.s[1].fd >= 0;
        pthread_mutex_unlock(&hs.mu);
        if (!open) return NULL;
        while (!atomic_load(&hs.stop) && queued(j) >= HOST_STDIO_HIGH)
            usleep(10 * 1000);
    }
    (void)arg;
}

/* Writes what the channel holds now, from the calling thread, for at most
 * HOST_STDIO_LAST_WORDS_MS: the process is about to end and its loop may never run again. */
static void flush_channel(struct job *j)
{
    pthread_mutex_lock(&j->out_mu);
    struct bufferevent *bev = j->bev;
    if (bev) {
        bufferevent_lock(bev);
        struct evbuffer *out = bufferevent_get_output(bev);
        int fd = (int)bufferevent_getfd(bev);
        /* only the bufferevent drains its output (its start is frozen): this once, we do */
        evbuffer_unfreeze(out, 1);
        for (int waited = 0; fd >= 0 && evbuffer_get_length(out) > 0;) {
            if (evbuffer_write(out, fd) >= 0) continue;
            if ((errno != EAGAIN && errno != EINTR) || waited >= HOST_STDIO_LAST_WORDS_MS) break;
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            (void)poll(&p, 1, 100);
            waited += 100;
        }
        evbuffer_freeze(out, 1);
        bufferevent_unlock(bev);
    }
    pthread_mutex_unlock(&j->out_mu);
}

/* A sanitizer's report is the process's last words on fd 2: they reach the launcher before
 * the runtime ends the process, instead of dying unread in the pipe. */
static void on_sanitizer_death(void)
{
    pthread_mutex_lock(&hs.mu);
    struct job *j = hs.job;
    if (j)
        for (int i = 0; i < 2; i++)
            (void)pump(j, i, 1);
    pthread_mutex_unlock(&hs.mu);
    if (j) flush_channel(j);
}

int host_stdio_start(struct job *j)
{
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(on_sanitizer_death);
    pthread_mutex_lock(&hs.mu);
    hs.job = j;
    pthread_mutex_unlock(&hs.mu);
    int r = pthread_create(&hs.reader, NULL, reader_main, NULL);
    if (r) return -r;
    hs.reader_started = 1;
    return 0;
}

void host_stdio_drain(struct job *j)
{
    pthread_mutex_lock(&hs.mu);
    if (hs.job == j)
        for (int i = 0; i < 2; i++)
            (void)pump(j, i, 1);
    pthread_mutex_unlock(&hs.mu);
}

void host_stdio_stop(void)
{
    atomic_store(&hs.stop, 1);
    pthread_mutex_lock(&hs.mu);
    hs.job = NULL;
    pthread_mutex_unlock(&hs.mu);
    if (hs.reader_started) pthread_join(hs.reader, NULL);
    hs.reader_started = 0;
}
