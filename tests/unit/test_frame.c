/* Frame codec: round trip, oversized and malformed frames are refused. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "frame.h"

static void test_roundtrip(void)
{
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    Tmpi__CancelJob c = TMPI__CANCEL_JOB__INIT;
    c.job_id = 42;
    env.msg_case = TMPI__ENVELOPE__MSG_CANCEL;
    env.cancel = &c;
    uint8_t *buf;
    size_t len, body;
    CHECK(frame_encode(&env, FRAME_DEFAULT_MAX, &buf, &len) == 0);
    CHECK(frame_parse_header(buf, FRAME_DEFAULT_MAX, &body) == 0);
    CHECK(body + FRAME_HEADER_SIZE == len);
    Tmpi__Envelope *out = frame_decode(buf + FRAME_HEADER_SIZE, body);
    CHECK(out && out->msg_case == TMPI__ENVELOPE__MSG_CANCEL && out->cancel->job_id == 42);
    CHECK(strcmp(frame_msg_name(out), "cancel") == 0);
    frame_free(out);
    /* a frame larger than the reader allows is refused before reading the body */
    CHECK(frame_parse_header(buf, body - 1, &body) == -EMSGSIZE);
    CHECK(frame_encode(&env, 1, &buf, &len) == -EMSGSIZE || (free(buf), 0));
    free(buf);
}

static void test_malformed(void)
{
    uint8_t zero[4] = {0, 0, 0, 0};
    size_t len;
    CHECK(frame_parse_header(zero, 100, &len) == -EBADMSG);
    uint8_t huge[4] = {0xff, 0xff, 0xff, 0xff};
    CHECK(frame_parse_header(huge, FRAME_DEFAULT_MAX, &len) == -EMSGSIZE);
    uint8_t junk[] = {0xff, 0xff, 0xff, 0x01, 0x02};
    CHECK(frame_decode(junk, sizeof junk) == NULL);
    /* a well-formed but empty Envelope carries no message */
    CHECK(frame_decode((const uint8_t *)"", 0) == NULL);
}

static void test_fd_io(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    Tmpi__JobsRequest jr = TMPI__JOBS_REQUEST__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOBS_REQUEST;
    env.jobs_request = &jr;
    CHECK(frame_write_fd(sv[0], &env, FRAME_DEFAULT_MAX) == 0);
    Tmpi__Envelope *out = NULL;
    CHECK(frame_read_fd(sv[1], FRAME_DEFAULT_MAX, &out) == 0);
    CHECK(out->msg_case == TMPI__ENVELOPE__MSG_JOBS_REQUEST);
    frame_free(out);
    /* truncated body: the stream ends inside a frame */
    uint8_t part[] = {0, 0, 0, 10, 1, 2};
    CHECK(write(sv[0], part, sizeof part) == (ssize_t)sizeof part);
    close(sv[0]);
    CHECK(frame_read_fd(sv[1], FRAME_DEFAULT_MAX, &out) == -EBADMSG);
    CHECK(frame_read_fd(sv[1], FRAME_DEFAULT_MAX, &out) == -ECONNRESET);
    close(sv[1]);
}

int main(void)
{
    test_roundtrip();
    test_malformed();
    test_fd_io();
    puts("frame codec: ok");
    return 0;
}
