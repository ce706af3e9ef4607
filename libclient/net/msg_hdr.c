/* msg_hdr.c — libtmpi's half of the inter-node frame header (msg_hdr.h). */
#include "msg_hdr.h"

#include "be_bytes.h"

#include <errno.h>
#include <string.h>

void tm_msg_hdr_encode(const struct tm_msg_hdr *m, struct netd_hdr *out)
{
    out->payload_len = m->payload_len;
    out->src_rank = m->src_rank;
    out->dst_rank = m->dst_rank;
    uint8_t *p = out->proto;
    memset(p, 0, NETD_PROTO_SIZE);
    p[0] = m->type;
    p[1] = m->flags;
    be_put32(p + 4, (uint32_t)m->tag);
    be_put32(p + 8, (uint32_t)m->context);
    be_put32(p + 12, (uint32_t)m->comm_src);
    be_put64(p + 16, m->msg_len);
    be_put64(p + 24, m->cookie);
    be_put64(p + 32, m->rcookie);
    be_put64(p + 40, m->ack);
}

int tm_msg_hdr_decode(const struct netd_hdr *h, struct tm_msg_hdr *ret)
{
    const uint8_t *p = h->proto;
    if (p[0] < TM_MSG_EAGER || p[0] >= TM_MSG_NTYPES) return -EPROTO;
    if (p[1] & ~(TM_MSG_F_SSEND | TM_MSG_F_HOLD | TM_MSG_F_RNDV | TM_MSG_F_CANCELLED) || p[2] ||
        p[3])
        return -EPROTO;
    for (int i = TM_MSG_HDR_SIZE; i < NETD_PROTO_SIZE; i++)
        if (p[i]) return -EPROTO;
    struct tm_msg_hdr m = {
        .chan = h->channel == TMPI_CH_COLL,
        .payload_len = h->payload_len,
        .src_rank = h->src_rank,
        .dst_rank = h->dst_rank,
        .type = p[0],
        .flags = p[1],
        .tag = (int32_t)be_get32(p + 4),
        .context = (int32_t)be_get32(p + 8),
        .comm_src = (int32_t)be_get32(p + 12),
        .msg_len = be_get64(p + 16),
        .cookie = be_get64(p + 24),
        .rcookie = be_get64(p + 32),
        .ack = be_get64(p + 40),
    };
    /* the cancel's flags on its two frames only, the others' never on them */
    const int cancel = m.type == TM_MSG_CANCEL || m.type == TM_MSG_CANCEL_ANS;
    if (cancel ? m.flags & ~(TM_MSG_F_RNDV | TM_MSG_F_CANCELLED) ||
                     (m.type == TM_MSG_CANCEL && m.flags & TM_MSG_F_CANCELLED)
               : m.flags & (TM_MSG_F_RNDV | TM_MSG_F_CANCELLED))
        return -EPROTO;
    switch (m.type) {
    case TM_MSG_EAGER:
        if (m.msg_len != m.payload_len) return -EPROTO;
        break;
    case TM_MSG_RTS:
    case TM_MSG_CTS:
    case TM_MSG_ACK:
    case TM_MSG_CANCEL:
    case TM_MSG_CANCEL_ANS:
        if (m.payload_len != 0) return -EPROTO;
        break;
    case TM_MSG_DATA:
        if (m.payload_len > m.msg_len) return -EPROTO;
        break;
    case TM_MSG_RMA:
    case TM_MSG_DYN:
        /* not part of point-to-point's sequence numbers and ACKs */
        if (m.flags || m.ack || m.comm_src) return -EPROTO;
        break;
    }
    *ret = m;
    return 0;
}
