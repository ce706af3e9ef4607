/* launch_output.c — the ranks' output on our stdout and stderr.
 *
 * Output frames carry whole lines, except possibly the last piece of a rank's stream.  Without
 * a line prefix we pass bytes straight through.  With --tag-output each line gets "[RANK] " in
 * front, with --timestamp-output the local time as Open MPI prints it ("Tue Mar 14 10:15:02
 * 2025 ", when the line reaches us), with both the time first; a piece without its newline is
 * held back per (rank, stream) until the rest of the line comes (or the rank ends), so
 * another rank's line can never land in the middle of it.  --merge-stderr-to-stdout sends
 * the ranks' stderr where their stdout goes, as one stream per rank.
 *
 * With --output-filename DIR, each rank's streams go to files instead, laid out as Open MPI
 * does: DIR/1/rank.N/stdout and .../stderr (1: the job, as in a single-job run).  A file is
 * created (truncated) at the first output of its stream in this run, and opened for each frame
 * and closed again, so thousands of ranks never need thousands of open descriptors.
 *
 * Held pieces are rare (at most one per rank still running and mid-line), so they live in a
 * small array searched linearly; a rank's entry goes away when its line completes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fd_write.h"
#include "launch.h"

/* A held piece longer than this is written out anyway, so a rank printing one endless line
 * cannot make us buffer without bound; the continuation is then written without a prefix. */
#define OUTPUT_MAX_PARTIAL (64u << 10)

struct launch_partial {
    uint32_t rank;
    uint32_t stream;
    char *buf;
    size_t len;
    bool open; /* the prefix for this line was already written (after an overlong piece) */
};

void launch_output_init(struct launch_output *out, const struct launch_opts *o)
{
    memset(out, 0, sizeof *out);
    out->tag = o->tag_output;
    out->timestamp = o->timestamp_output;
    out->merge = o->merge_stderr;
    out->dir = o->output_dir;
}

static int out_fd(uint32_t stream)
{
    return stream == 2 ? STDERR_FILENO : STDOUT_FILENO;
}

/* An output buffer assembled per frame, so one frame is one write() and lines of different
 * ranks interleave only at line boundaries even when stdout and stderr are the same file. */
struct obuf {
    char *p;
    size_t len, cap;
};

static int obuf_add(struct obuf *b, const void *data, size_t len)
{
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) return -ENOMEM;
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
    return 0;
}

/* ctime's layout, "Www Mmm dd hh:mm:ss yyyy", which Open MPI's --timestamp-output uses, and
 * a blank. */
#define OUTPUT_TIME_FORMAT "%a %b %e %H:%M:%S %Y "

static int obuf_prefix(const struct launch_output *out, struct obuf *b, uint32_t rank)
{
    char pre[80];
    size_t n = 0;
    if (out->timestamp) {
        time_t now = time(NULL);
        struct tm tm;
        if (localtime_r(&now, &tm)) n = strftime(pre, sizeof pre, OUTPUT_TIME_FORMAT, &tm);
    }
    if (out->tag) n += (size_t)snprintf(pre + n, sizeof pre - n, "[%" PRIu32 "] ", rank);
    return obuf_add(b, pre, n);
}

static struct launch_partial *find_partial(struct launch_output *out, uint32_t rank,
                                           uint32_t stream)
{
    for (size_t i = 0; i < out->n_partial; i++)
        if (out->partial[i].rank == rank && out->partial[i].stream == stream)
            return &out->partial[i];
    return NULL;
}

static void drop_partial(struct launch_output *out, struct launch_partial *p)
{
    free(p->buf);
    *p = out->partial[--out->n_partial];
}

/* Start a line: the held piece if there is one (it already has its prefix or gets one now). */
static int begin_line(const struct launch_output *out, struct obuf *b, struct launch_partial *p,
                      uint32_t rank)
{
    int r = 0;
    if (!p || !p->open) r = obuf_prefix(out, b, rank);
    if (r == 0 && p) r = obuf_add(b, p->buf, p->len);
    return r;
}

static int hold(struct launch_output *out, struct launch_partial *p, struct obuf *b, uint32_t rank,
                uint32_t stream, const uint8_t *data, size_t len)
{
    if (!p) {
        if (out->n_partial == out->cap_partial) {
            size_t cap = out->cap_partial ? 2 * out->cap_partial : 8;
            struct launch_partial *np = realloc(out->partial, cap * sizeof *np);
            if (!np) return -ENOMEM;
            out->partial = np;
            out->cap_partial = cap;
        }
        p = &out->partial[out->n_partial++];
        *p = (struct launch_partial){.rank = rank, .stream = stream};
    }
    if (p->len + len > OUTPUT_MAX_PARTIAL) {
        int r = begin_line(out, b, p, rank);
        if (r == 0) r = obuf_add(b, data, len);
        p->len = 0;
        p->open = true;
        return r;
    }
    char *nb = realloc(p->buf, p->len + len);
    if (!nb) return -ENOMEM;
    memcpy(nb + p->len, data, len);
    p->buf = nb;
    p->len += len;
    return 0;
}

static int tag_lines(struct launch_output *out, struct obuf *b, uint32_t rank, uint32_t stream,
                     const uint8_t *data, size_t len)
{
    struct launch_partial *p = find_partial(out, rank, stream);
    int r = 0;
    while (r == 0 && len > 0) {
        const uint8_t *nl = memchr(data, '\n', len);
        if (!nl) return hold(out, p, b, rank, stream, data, len);
        size_t n = (size_t)(nl - data) + 1;
        r = begin_line(out, b, p, rank);
        if (r == 0) r = obuf_add(b, data, n);
        if (p) {
            drop_partial(out, p);
            p = NULL;
        }
        data += n;
        len -= n;
    }
    return r;
}

static int mkdir_one(const char *path)
{
    return mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : -errno;
}

/* Append data to DIR/1/rank.N/stdout|stderr, creating the directories, and the file afresh at
 * the stream's first output in this run. */
static int write_file(struct launch_output *out, uint32_t rank, uint32_t stream,
                      const uint8_t *data, size_t len)
{
    if (rank >= out->n_started) {
        size_t n = out->n_started ? out->n_started : 64;
        while (n <= rank)
            n *= 2;
        uint8_t *ns = realloc(out->started, n);
        if (!ns) return -ENOMEM;
        memset(ns + out->n_started, 0, n - out->n_started);
        out->started = ns;
        out->n_started = n;
    }
    unsigned bit = stream == 2 ? 2u : 1u;
    bool first = !(out->started[rank] & bit);
    char path[4096];
    int r = 0;
    if (first) {
        snprintf(path, sizeof path, "%s/1", out->dir);
        r = mkdir_one(out->dir);
        if (r == 0) r = mkdir_one(path);
        snprintf(path, sizeof path, "%s/1/rank.%" PRIu32, out->dir, rank);
        if (r == 0) r = mkdir_one(path);
    }
    int n = snprintf(path, sizeof path, "%s/1/rank.%" PRIu32 "/%s", out->dir, rank,
                     stream == 2 ? "stderr" : "stdout");
    if (r == 0 && (n < 0 || (size_t)n >= sizeof path)) r = -ENAMETOOLONG;
    int fd = -1;
    if (r == 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (first ? O_TRUNC : O_APPEND), 0666);
        if (fd < 0) r = -errno;
    }
    if (r == 0) r = fd_write_all(fd, data, len);
    if (fd >= 0 && close(fd) < 0 && r == 0) r = -errno;
    if (r < 0) {
        fprintf(stderr, "tmpi-launch: cannot write rank %" PRIu32 "'s output to %s: %s\n", rank,
                path, strerror(-r));
        return r;
    }
    out->started[rank] |= (uint8_t)bit;
    return 0;
}

int launch_output_write(struct launch_output *out, uint32_t rank, uint32_t stream,
                        const uint8_t *data, size_t len)
{
    if (out->broken) return 0;
    if (out->merge) stream = 1;
    int r;
    if (out->dir) {
        r = write_file(out, rank, stream, data, len);
    } else if (!out->tag && !out->timestamp) {
        r = fd_write_all(out_fd(stream), data, len);
    } else {
        struct obuf b = {0};
        r = tag_lines(out, &b, rank, stream, data, len);
        if (r == 0 && b.len) r = fd_write_all(out_fd(stream), b.p, b.len);
        free(b.p);
    }
    if (r < 0) out->broken = true;
    return r;
}

void launch_output_flush(struct launch_output *out, int64_t rank)
{
    size_t i = 0;
    while (i < out->n_partial) {
        struct launch_partial *p = &out->partial[i];
        if (rank >= 0 && p->rank != (uint64_t)rank) {
            i++;
            continue;
        }
        /* Tagged output is line-oriented: end the rank's last line so the next rank's prefix
         * starts a line of its own. */
        struct obuf b = {0};
        if (!out->broken && begin_line(out, &b, p, p->rank) == 0 && obuf_add(&b, "\n", 1) == 0 &&
            fd_write_all(out_fd(p->stream), b.p, b.len) < 0)
            out->broken = true;
        free(b.p);
        drop_partial(out, p);
    }
}

void launch_output_free(struct launch_output *out)
{
    for (size_t i = 0; i < out->n_partial; i++)
        free(out->partial[i].buf);
    free(out->partial);
    free(out->started);
    memset(out, 0, sizeof *out);
}
