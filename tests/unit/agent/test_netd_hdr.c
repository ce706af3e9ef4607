/* Data-plane header: round trip of every field, byte order on the wire, and refusal of
 * malformed or oversized headers (a peer's bytes are untrusted even after authentication). */
#include <errno.h>
#include <string.h>

#include "../check.h"
#include "netd_hdr.h"

int main(void)
{
    struct netd_hdr h = {.type = NETD_DATA,
                         .flags = NETD_F_SSEND,
                         .payload_len = 4096,
                         .job_id = 0x0102030405060708ull,
                         .src_rank = 7,
                         .dst_rank = 4095,
                         .tag = 32767,
                         .context = 3,
                         .msg_len = 1 << 20,
                         .cookie = 42,
                         .rcookie = 0x1122334455667788ull,
                         .ack = 0x99aabbccddeeff01ull};
    uint8_t wire[NETD_HDR_SIZE];
    netd_hdr_encode(&h, wire);
    CHECK_EQ(wire[0], NETD_VERSION);
    /* network byte order: the job id's most significant byte first */
    CHECK_EQ(wire[8], 0x01);
    CHECK_EQ(wire[15], 0x08);
    struct netd_hdr d;
    CHECK_EQ(netd_hdr_decode(wire, 1 << 20, &d), 0);
    CHECK(d.type == h.type && d.flags == h.flags && d.payload_len == h.payload_len);
    CHECK(d.job_id == h.job_id && d.src_rank == 7 && d.dst_rank == 4095 && d.tag == 32767);
    CHECK(d.context == 3 && d.msg_len == h.msg_len && d.cookie == 42);
    CHECK(d.rcookie == h.rcookie && wire[48] == 0x11 && wire[55] == 0x88);
    CHECK(d.ack == h.ack && wire[56] == 0x99 && wire[63] == 0x01);
    /* EAGER and RTS carry the sender's communicator rank in the rcookie slot (comm_src) */
    struct netd_hdr eg = {.type = NETD_EAGER, .payload_len = 8, .msg_len = 8, .comm_src = 5};
    uint8_t ewire[NETD_HDR_SIZE];
    netd_hdr_encode(&eg, ewire);
    CHECK(ewire[48] == 0 && ewire[55] == 5);
    CHECK_EQ(netd_hdr_decode(ewire, 1 << 20, &d), 0);
    CHECK(d.comm_src == 5);

    /* oversized payload refused before any payload byte is read */
    CHECK_EQ(netd_hdr_decode(wire, 4095, &d), -EMSGSIZE);
    /* wrong version, unknown type */
    uint8_t bad[NETD_HDR_SIZE];
    memcpy(bad, wire, sizeof bad);
    bad[0] = 9;
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    memcpy(bad, wire, sizeof bad);
    bad[1] = 0;
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    bad[1] = 77;
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    /* inconsistent lengths */
    struct netd_hdr e = {.type = NETD_EAGER, .payload_len = 10, .msg_len = 11};
    netd_hdr_encode(&e, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    struct netd_hdr r = {.type = NETD_RTS, .payload_len = 1, .msg_len = 1 << 20};
    netd_hdr_encode(&r, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    struct netd_hdr x = {.type = NETD_DATA, .payload_len = 20, .msg_len = 10};
    netd_hdr_encode(&x, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    struct netd_hdr neg = {.type = NETD_EAGER, .src_rank = -1};
    netd_hdr_encode(&neg, bad);
    CHECK_EQ(netd_hdr_decode(bad, 1 << 20, &d), -EPROTO);
    /* a zero-length eager message is fine */
    struct netd_hdr z = {.type = NETD_EAGER};
    netd_hdr_encode(&z, bad);
    CHECK_EQ(netd_hdr_decode(bad, 0, &d), 0);
    puts("netd header: ok");
    return 0;
}
