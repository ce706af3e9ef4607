/* netd_hdr.c — the transport half of the data-plane header (netd_hdr.h). */
#include "netd_hdr.h"

#include "be_bytes.h"

#include <errno.h>
#include <string.h>

void netd_hdr_encode(const struct netd_hdr *h, uint8_t out[NETD_HDR_SIZE])
{
    out[0] = NETD_VERSION;
    out[1] = h->channel;
    out[2] = h->flags;
    out[3] = 0;
    be_put32(out + 4, h->payload_len);
    be_put64(out + 8, h->job_id);
    be_put32(out + 16, (uint32_t)h->src_rank);
    be_put32(out + 20, (uint32_t)h->dst_rank);
    be_put64(out + 24, h->seq);
    memcpy(out + NETD_PROTO_OFF, h->proto, NETD_PROTO_SIZE);
}

void netd_hdr_set_seq(uint8_t out[NETD_HDR_SIZE], uint64_t seq)
{
    be_put64(out + 24, seq);
}

int netd_hdr_decode(const uint8_t in[NETD_HDR_SIZE], size_t max_payload, struct netd_hdr *ret)
{
    if (in[0] != NETD_VERSION || (in[1] != TMPI_CH_P2P && in[1] != TMPI_CH_COLL) ||
        (in[2] & ~(NETD_F_ACK | NETD_F_ACKREQ | NETD_F_BYE)) || in[3])
        return -EPROTO;
    ret->channel = in[1];
    ret->flags = in[2];
    ret->payload_len = be_get32(in + 4);
    ret->job_id = be_get64(in + 8);
    ret->src_rank = (int32_t)be_get32(in + 16);
    ret->dst_rank = (int32_t)be_get32(in + 20);
    ret->seq = be_get64(in + 24);
    if (ret->payload_len > max_payload) return -EMSGSIZE;
    if (ret->src_rank < 0 || ret->dst_rank < 0) return -EPROTO;
    /* an acknowledgement is a header alone and asks for nothing */
    if ((ret->flags & NETD_F_ACK) && (ret->payload_len || (ret->flags & NETD_F_ACKREQ)))
        return -EPROTO;
    if ((ret->flags & NETD_F_BYE) && !(ret->flags & NETD_F_ACK)) return -EPROTO;
    memcpy(ret->proto, in + NETD_PROTO_OFF, NETD_PROTO_SIZE);
    return 0;
}
