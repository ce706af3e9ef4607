#include "output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "rank.h"

/* A line longer than this leaves in pieces rather than growing the buffer without bound. */
#define OUTPUT_MAX_PENDING (64 * 1024)

/* The most one Output frame carries.  A single write may be any size (a 4 MiB write did not
 * fit in one frame, FRAME_DEFAULT_MAX, and was lost); it leaves in frames of at most this
 * many bytes, well under the frame limit with the envelope, and each waits for the job's
 * output throttle like any other line. */
#define OUTPUT_MAX_PIECE (1024 * 1024)

static int send_frame(struct rank *r, int stream, const char *data, size_t len)
{
    Tmpi__Output out = TMPI__OUTPUT__INIT;
    out.rank = (uint32_t)r->info.rank;
    out.stream = (uint32_t)stream;
    out.data.data = (uint8_t *)data;
    out.data.len = len;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_OUTPUT;
    env.output = &out;
    return job_send(r->job, &env);
}

static int send_piece(struct rank *r, int stream, const char *data, size_t len)
{
    while (len > OUTPUT_MAX_PIECE) {
        int rc = send_frame(r, stream, data, OUTPUT_MAX_PIECE);
        if (rc < 0) return rc;
        data += OUTPUT_MAX_PIECE;
        len -= OUTPUT_MAX_PIECE;
    }
    return send_frame(r, stream, data, len);
}

static int reserve(struct output_stream *s, size_t need)
{
    if (s->cap >= need) return 0;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < need)
        cap *= 2;
    char *nb = realloc(s->buf, cap);
    if (!nb) return -ENOMEM;
    s->buf = nb;
    s->cap = cap;
    return 0;
}

int output_write(struct rank *r, int stream, const void *data, size_t len)
{
    struct output_stream *s = &r->out[stream - 1];
    const char *p = data;

    if (job_cancelled(r->job) && !r->unloading) rank_end(RANK_END_KILLED, 1, NULL);

    /* Whole lines in data: send the pending tail plus everything up to the last newline. */
    const char *nl = len ? memrchr(p, '\n', len) : NULL;
    if (nl) {
        size_t head = (size_t)(nl - p) + 1;
        int rc;
        if (s->len) {
            if ((rc = reserve(s, s->len + head)) < 0) return rc;
            memcpy(s->buf + s->len, p, head);
            rc = send_piece(r, stream, s->buf, s->len + head);
            s->len = 0;
        } else {
            rc = send_piece(r, stream, p, head);
        }
        if (rc < 0) return rc;
        p += head;
        len -= head;
    }
    if (len == 0) return 0;
    int rc = reserve(s, s->len + len);
    if (rc < 0) return rc;
    memcpy(s->buf + s->len, p, len);
    s->len += len;
    if (s->len >= OUTPUT_MAX_PENDING) {
        rc = send_piece(r, stream, s->buf, s->len);
        s->len = 0;
    }
    return rc;
}

void output_flush(struct rank *r)
{
    for (int i = 0; i < 2; i++) {
        struct output_stream *s = &r->out[i];
        /* An unfinished last line is finished here, so it cannot run into another rank's. */
        if (s->len && reserve(s, s->len + 1) == 0) {
            s->buf[s->len++] = '\n';
            (void)send_piece(r, i + 1, s->buf, s->len);
        }
        free(s->buf);
        *s = (struct output_stream){0};
    }
}
