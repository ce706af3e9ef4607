/* netd_hdr.c, the transport half of the data-plane header: round trip of every field, byte
 * order on the wire, the protocol half carried unchanged, and refusal of malformed or
 * oversized headers (a peer's bytes are untrusted even after authentication). */
#include <errno.h>
#include <string.h>

#include "../check.h"
#include "netd_hdr.h"

int main(void)
{
    struct netd_hdr h = {.channel = TMPI_CH_COLL,
                         .payload_len = 4096,
                         .job_id = 0x0102030405060708ull,
                         .src_rank = 7,
                         .dst_rank = 4095,
                         .seq = 0x1122334455667788ull};
    for (int i = 0; i < NETD_PROTO_SIZE; i++)
        h.proto[i] = (uint8_t)(0xa0 + i);
    uint8_t wire[NETD_HDR_SIZE];
    netd_hdr_encode(&h, wire);
    CHECK_EQ(wire[0], NETD_VERSION);
    CHECK_EQ(wire[1], TMPI_CH_COLL);
    CHECK(wire[2] == 0 && wire[3] == 0);
    /* network byte order: the job id's most significant byte first */
    CHECK_EQ(wire[8], 0x01);
    CHECK_EQ(wire[15], 0x08);
    CHECK(wire[24] == 0x11 && wire[31] == 0x88);
    /* the protocol half follows the transport half byte for byte */
    CHECK(memcmp(wire + NETD_PROTO_OFF, h.proto, NETD_PROTO_SIZE) == 0);
    struct netd_hdr d;
    CHECK_EQ(netd_hdr_decode(wire, 1 << 20, &d), 0);
    CHECK(d.channel == h.channel && d.payload_len == h.payload_len && d.job_id == h.job_id);
    CHECK(d.src_rank == 7 && d.dst_rank == 4095 && d.seq == h.seq);
    CHECK(memcmp(d.proto, h.proto, NETD_PROTO_SIZE) == 0);
    /* netd stamps the frame number into an encoded header */
    netd_hdr_set_seq(wire, 42);
    CHECK_EQ(netd_hdr_decode(wire, 1 << 20, &d), 0);
    CHECK_EQ(d.seq, 42);

    /* oversized payload refused before any payload byte is read */
    CHECK_EQ(netd_hdr_decode(wire, 4095, &d), -EMSGSIZE);
    CHECK_EQ(netd_hdr_decode(wire, 4096, &d), 0);
    /* wrong version, unknown channel, reserved bytes set */
    uint8_t bad[NETD_HDR_SIZE];
    const int offs[] = {0, 1, 1, 2, 2, 3};
    const uint8_t vals[] = {NETD_VERSION + 1, 0, 3, 4, 0x80, 0x80};
    for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
        memcpy(bad, wire, sizeof bad);
        bad[offs[i]] = vals[i];
        CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    }
    /* flags round trip; an acknowledgement carries no payload and asks for none */
    struct netd_hdr f = {.channel = TMPI_CH_P2P, .flags = NETD_F_ACKREQ, .payload_len = 9};
    netd_hdr_encode(&f, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), 0);
    CHECK_EQ(d.flags, NETD_F_ACKREQ);
    f = (struct netd_hdr){.channel = TMPI_CH_P2P, .flags = NETD_F_ACK, .seq = 77};
    netd_hdr_encode(&f, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), 0);
    CHECK(d.flags == NETD_F_ACK && d.seq == 77);
    f.payload_len = 1;
    netd_hdr_encode(&f, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    f = (struct netd_hdr){.channel = TMPI_CH_P2P, .flags = NETD_F_ACK | NETD_F_ACKREQ};
    netd_hdr_encode(&f, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    /* a goodbye is an acknowledgement's */
    f = (struct netd_hdr){.channel = TMPI_CH_P2P, .flags = NETD_F_ACK | NETD_F_BYE};
    netd_hdr_encode(&f, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), 0);
    f.flags = NETD_F_BYE;
    netd_hdr_encode(&f, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    /* negative ranks */
    struct netd_hdr neg = {.channel = TMPI_CH_P2P, .src_rank = -1};
    netd_hdr_encode(&neg, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    neg = (struct netd_hdr){.channel = TMPI_CH_P2P, .dst_rank = -5};
    netd_hdr_encode(&neg, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    /* a header-only frame with any protocol bytes is the transport's business: fine */
    struct netd_hdr z = {.channel = TMPI_CH_P2P};
    netd_hdr_encode(&z, bad);
    CHECK_EQ(netd_hdr_decode(bad, 0, &d), 0);
    puts("netd header: ok");
    return 0;
}
