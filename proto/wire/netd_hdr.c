/* netd_hdr.c — the transport half of the data-plane header (netd_hdr.h). */
#include "netd_hdr.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

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
    out[1] = h->channel;
    out[2] = out[3] = 0;
    put32(out + 4, h->payload_len);
    put64(out + 8, h->job_id);
    put32(out + 16, (uint32_t)h->src_rank);
    put32(out + 20, (uint32_t)h->dst_rank);
    put64(out + 24, h->seq);
    memcpy(out + NETD_PROTO_OFF, h->proto, NETD_PROTO_SIZE);
}

void netd_hdr_set_seq(uint8_t out[NETD_HDR_SIZE], uint64_t seq)
{
    put64(out + 24, seq);
}

int netd_hdr_decode(const uint8_t in[NETD_HDR_SIZE], size_t max_payload, struct netd_hdr *ret)
{
    if (in[0] != NETD_VERSION || (in[1] != NETD_CH_P2P && in[1] != NETD_CH_COLL) || in[2] || in[3])
        return -EPROTO;
    ret->channel = in[1];
    ret->payload_len = get32(in + 4);
    ret->job_id = get64(in + 8);
    ret->src_rank = (int32_t)get32(in + 16);
    ret->dst_rank = (int32_t)get32(in + 20);
    ret->seq = get64(in + 24);
    if (ret->payload_len > max_payload) return -EMSGSIZE;
    if (ret->src_rank < 0 || ret->dst_rank < 0) return -EPROTO;
    memcpy(ret->proto, in + NETD_PROTO_OFF, NETD_PROTO_SIZE);
    return 0;
}
