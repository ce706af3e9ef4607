#include "netd_hdr.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
    v = htobe16(v);
    memcpy(p, &v, 2);
}
static void put32(uint8_t *p, uint32_t v)
{
    v = htobe32(v);
    memcpy(p, &v, 4);
}
static void put64(uint8_t *p, uint64_t v)
{
    v = htobe64(v);
    memcpy(p, &v, 8);
}
static uint16_t get16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return be16toh(v);
}
static uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return be32toh(v);
}
static uint64_t get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return be64toh(v);
}

void netd_hdr_encode(const struct netd_hdr *h, uint8_t out[NETD_HDR_SIZE])
{
    out[0] = NETD_VERSION;
    out[1] = h->type;
    put16(out + 2, h->flags);
    put32(out + 4, h->payload_len);
    put64(out + 8, h->job_id);
    put32(out + 16, (uint32_t)h->src_rank);
    put32(out + 20, (uint32_t)h->dst_rank);
    put32(out + 24, (uint32_t)h->tag);
    put32(out + 28, (uint32_t)h->context);
    put64(out + 32, h->msg_len);
    put64(out + 40, h->cookie);
    put64(out + 48, h->rcookie);
    put64(out + 56, h->ack);
}

int netd_hdr_decode(const uint8_t in[NETD_HDR_SIZE], size_t max_payload, struct netd_hdr *ret)
{
    if (in[0] != NETD_VERSION || in[1] < NETD_EAGER || in[1] > NETD_RMA) return -EPROTO;
    struct netd_hdr h = {
        .type = in[1],
        .flags = get16(in + 2),
        .payload_len = get32(in + 4),
        .job_id = get64(in + 8),
        .src_rank = (int32_t)get32(in + 16),
        .dst_rank = (int32_t)get32(in + 20),
        .tag = (int32_t)get32(in + 24),
        .context = (int32_t)get32(in + 28),
        .msg_len = get64(in + 32),
        .cookie = get64(in + 40),
        .rcookie = get64(in + 48),
        .ack = get64(in + 56),
    };
    if (h.payload_len > max_payload) return -EMSGSIZE;
    if (h.src_rank < 0 || h.dst_rank < 0) return -EPROTO;
    switch (h.type) {
    case NETD_EAGER:
        if (h.msg_len != h.payload_len) return -EPROTO;
        break;
    case NETD_RTS:
    case NETD_CTS:
    case NETD_ACK:
        if (h.payload_len != 0) return -EPROTO;
        break;
    case NETD_DATA:
        if (h.payload_len > h.msg_len) return -EPROTO;
        break;
    default:
        break;
    }
    *ret = h;
    return 0;
}
