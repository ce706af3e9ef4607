/* msg_hdr.c, libtmpi's half of the inter-node frame header: round trip of every field through
 * the transport header, its byte layout inside netd_hdr.proto, and refusal of unknown types
 * and flags, set reserved bytes and lengths that do not fit the type; RMA frames without
 * point-to-point's flags and ACK. */
#include <errno.h>
#include <string.h>

#include "../check.h"
#include "msg_hdr.h"

static struct netd_hdr encoded(const struct tm_msg_hdr *m, int channel)
{
    struct netd_hdr h = {0};
    tm_msg_hdr_encode(m, &h);
    h.channel = (uint8_t)channel; /* the agent's part */
    return h;
}

int main(void)
{
    struct tm_msg_hdr m = {.payload_len = 4096,
                           .src_rank = 7,
                           .dst_rank = 4095,
                           .type = TM_MSG_DATA,
                           .flags = TM_MSG_F_SSEND,
                           .tag = 32767,
                           .context = 3,
                           .comm_src = 0x0a0b0c0d,
                           .msg_len = 1 << 20,
                           .cookie = 42,
                           .rcookie = 0x1122334455667788ull,
                           .ack = 0x99aabbccddeeff01ull};
    struct netd_hdr h = encoded(&m, TMPI_CH_COLL);
    /* the transport fields libtmpi fills */
    CHECK(h.payload_len == 4096 && h.src_rank == 7 && h.dst_rank == 4095);
    /* layout (msg_hdr.h), network byte order */
    CHECK(h.proto[0] == TM_MSG_DATA && h.proto[1] == TM_MSG_F_SSEND);
    CHECK(h.proto[2] == 0 && h.proto[3] == 0);
    CHECK(h.proto[6] == 0x7f && h.proto[7] == 0xff);   /* tag */
    CHECK(h.proto[12] == 0x0a && h.proto[15] == 0x0d); /* comm_src */
    CHECK(h.proto[32] == 0x11 && h.proto[39] == 0x88); /* rcookie */
    CHECK(h.proto[40] == 0x99 && h.proto[47] == 0x01); /* ack */
    struct tm_msg_hdr d;
    CHECK_EQ(tm_msg_hdr_decode(&h, &d), 0);
    CHECK(d.chan == 1 && d.payload_len == 4096 && d.src_rank == 7 && d.dst_rank == 4095);
    CHECK(d.type == m.type && d.flags == m.flags && d.tag == m.tag && d.context == m.context);
    CHECK(d.comm_src == m.comm_src && d.msg_len == m.msg_len && d.cookie == m.cookie);
    CHECK(d.rcookie == m.rcookie && d.ack == m.ack);
    h.channel = TMPI_CH_P2P;
    CHECK_EQ(tm_msg_hdr_decode(&h, &d), 0);
    CHECK_EQ(d.chan, 0);

    /* unknown type, unknown flag, reserved bytes */
    struct netd_hdr bad;
    const int offs[] = {0, 0, 1, 2, 3};
    const uint8_t vals[] = {0, TM_MSG_NTYPES, 16, 1, 1};
    for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
        bad = h;
        bad.proto[offs[i]] = vals[i];
        CHECK_EQ(tm_msg_hdr_decode(&bad, &d), -EPROTO);
    }
    /* lengths that do not fit the type */
    const struct tm_msg_hdr wrong[] = {
        {.type = TM_MSG_EAGER, .payload_len = 10, .msg_len = 11},
        {.type = TM_MSG_RTS, .payload_len = 1, .msg_len = 1 << 20},
        {.type = TM_MSG_CTS, .payload_len = 1},
        {.type = TM_MSG_ACK, .payload_len = 8},
        {.type = TM_MSG_DATA, .payload_len = 20, .msg_len = 10},
        /* one-sided frames take no part in point-to-point's flags and ACKs */
        {.type = TM_MSG_RMA, .ack = 3},
        {.type = TM_MSG_RMA, .flags = TM_MSG_F_SSEND},
        {.type = TM_MSG_RMA, .comm_src = 1},
        /* the cancel's frames: no payload, their flags on them only, CANCELLED on the answer */
        {.type = TM_MSG_CANCEL, .payload_len = 4},
        {.type = TM_MSG_CANCEL, .flags = TM_MSG_F_CANCELLED},
        {.type = TM_MSG_CANCEL_ANS, .flags = TM_MSG_F_HOLD},
        {.type = TM_MSG_EAGER, .flags = TM_MSG_F_RNDV},
        {.type = TM_MSG_ACK, .flags = TM_MSG_F_CANCELLED},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        bad = encoded(&wrong[i], TMPI_CH_P2P);
        if (tm_msg_hdr_decode(&bad, &d) != -EPROTO) {
            fprintf(stderr, "case %zu (type %u): expected -EPROTO, got %d\n", i, wrong[i].type,
                    tm_msg_hdr_decode(&bad, &d));
            return 1;
        }
    }
    /* what fits: a zero-length eager message, a partial DATA chunk */
    const struct tm_msg_hdr right[] = {
        {.type = TM_MSG_EAGER},
        {.type = TM_MSG_DATA, .payload_len = 10, .msg_len = 20},
        {.type = TM_MSG_ACK, .flags = TM_MSG_F_HOLD, .cookie = 5},
        {.type = TM_MSG_CANCEL, .flags = TM_MSG_F_RNDV, .comm_src = 3, .cookie = 5, .rcookie = 6},
        {.type = TM_MSG_CANCEL_ANS, .flags = TM_MSG_F_RNDV | TM_MSG_F_CANCELLED, .ack = 2},
        /* an RMA answer with fetched data: payload and msg_len (a window offset) unrelated */
        {.type = TM_MSG_RMA,
         .payload_len = 64,
         .tag = 9 | (1 << 24),
         .context = 5,
         .msg_len = 4096,
         .cookie = 7,
         .rcookie = 8},
    };
    for (size_t i = 0; i < sizeof right / sizeof *right; i++) {
        bad = encoded(&right[i], TMPI_CH_P2P);
        CHECK_EQ(tm_msg_hdr_decode(&bad, &d), 0);
    }
    puts("msg header: ok");
    return 0;
}
