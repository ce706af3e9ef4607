/* netd_out.c, the pieces a frame goes into its socket in: a small frame in one write with its
 * header, a large one in NETD_WRITE_MAX pieces, a NETD_SEND_WHOLE one in a single write, and
 * each continued exactly where a short write stopped (in the header or in the payload). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "netd_out.h"

static struct netd_out frame(const uint8_t *payload, size_t len, unsigned flags, size_t done)
{
    struct netd_out o = {.payload = payload, .len = len, .flags = flags, .done = done};
    return o;
}

/* Writes o as a socket that takes at most `take` bytes per call would; returns the calls. */
static int write_all(struct netd_out *o, size_t take, size_t *largest)
{
    struct iovec iov[2];
    int cnt, calls = 0;
    *largest = 0;
    while ((cnt = netd_out_iov(o, iov)) > 0) {
        size_t n = 0;
        for (int i = 0; i < cnt; i++)
            n += iov[i].iov_len;
        /* the pieces are the frame's next bytes, in order */
        size_t at = o->done;
        const uint8_t *want0 = at < NETD_HDR_SIZE ? o->hdr + at : o->payload + (at - NETD_HDR_SIZE);
        CHECK(iov[0].iov_base == want0);
        if (cnt == 2) {
            CHECK(at < NETD_HDR_SIZE);
            CHECK_EQ(iov[0].iov_len, NETD_HDR_SIZE - at);
            CHECK(iov[1].iov_base == o->payload);
        }
        if (n > *largest) *largest = n;
        o->done += n < take ? n : take;
        calls++;
    }
    CHECK_EQ(o->done, NETD_HDR_SIZE + o->len);
    return calls;
}

int main(void)
{
    const size_t big = (size_t)1 << 20;
    uint8_t *p = malloc(big);
    CHECK(p != NULL);
    memset(p, 7, big);
    struct iovec iov[2];
    size_t largest;

    /* no payload: the header alone */
    struct netd_out o = frame(NULL, 0, 0, 0);
    CHECK_EQ(netd_out_iov(&o, iov), 1);
    CHECK_EQ(iov[0].iov_len, NETD_HDR_SIZE);
    o.done = NETD_HDR_SIZE;
    CHECK_EQ(netd_out_iov(&o, iov), 0);

    /* a small frame: header and payload in one write */
    o = frame(p, 100, 0, 0);
    CHECK_EQ(netd_out_iov(&o, iov), 2);
    CHECK_EQ(iov[0].iov_len + iov[1].iov_len, NETD_HDR_SIZE + 100);

    /* 1 MiB in pieces: the header with the first NETD_WRITE_MAX bytes, then the rest */
    o = frame(p, big, 0, 0);
    CHECK_EQ(write_all(&o, SIZE_MAX, &largest), (int)((big + NETD_WRITE_MAX - 1) / NETD_WRITE_MAX));
    CHECK_EQ(largest, NETD_HDR_SIZE + NETD_WRITE_MAX);

    /* 1 MiB whole: a single write of header and payload */
    o = frame(p, big, NETD_SEND_WHOLE, 0);
    CHECK_EQ(write_all(&o, SIZE_MAX, &largest), 1);
    CHECK_EQ(largest, NETD_HDR_SIZE + big);

    /* short writes: continued inside the header, then inside the payload, never past a piece */
    o = frame(p, big, 0, 0);
    CHECK(write_all(&o, 30, &largest) > 1);
    CHECK(largest <= NETD_HDR_SIZE + NETD_WRITE_MAX);
    o = frame(p, big, NETD_SEND_WHOLE, 30);
    CHECK_EQ(netd_out_iov(&o, iov), 2);
    CHECK_EQ(iov[0].iov_len, NETD_HDR_SIZE - 30);
    CHECK_EQ(iov[1].iov_len, big);
    o.done = NETD_HDR_SIZE + 1000;
    CHECK_EQ(netd_out_iov(&o, iov), 1);
    CHECK(iov[0].iov_base == p + 1000);
    CHECK_EQ(iov[0].iov_len, big - 1000);
    o.flags = 0;
    CHECK_EQ(netd_out_iov(&o, iov), 1);
    CHECK_EQ(iov[0].iov_len, NETD_WRITE_MAX);
    o.done = NETD_HDR_SIZE + big - 5;
    CHECK_EQ(netd_out_iov(&o, iov), 1);
    CHECK_EQ(iov[0].iov_len, 5);

    free(p);
    puts("netd_out: ok");
    return 0;
}
