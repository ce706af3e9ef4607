/* ack.c — cumulative ACKs: the receiver counts the eager messages of each link it has stored,
 * delivered or held and says so (in another frame's ack field, or an ACK frame past the
 * thresholds or before it blocks); the sender frees its retained copies up to that number. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "net_int.h"
#include "wait.h"

void tm_net_send_ack(struct tm_net *n, int node, int chan, int32_t here, int32_t there,
                     uint8_t flags, uint64_t seq)
{
    struct tm_msg_hdr h = {
        .type = TM_MSG_ACK,
        .flags = flags,
        .src_rank = here,
        .dst_rank = there,
        .cookie = seq,
    };
    /* A lost ACK only keeps copies longer (until the next one or the job's end). */
    if (tm_net_xmit(n, node, chan + 1, 0, &h, NULL, NULL, NULL) == 0)
        atomic_fetch_add_explicit(&n->n_acks_sent, 1, memory_order_relaxed);
}

/* The link's cumulative ACK if one is owed and forced or past a threshold, taken as said
 * (acked moves up to it); 0 if none.  Caller holds rx->lock. */
static uint64_t take_owed(struct tm_net_rx *rx, int force)
{
    if (rx->hi <= rx->acked ||
        !(force || rx->n_since >= TM_NET_ACK_MSGS || rx->bytes_since >= TM_NET_ACK_BYTES))
        return 0;
    rx->acked = rx->hi;
    rx->n_since = 0;
    rx->bytes_since = 0;
    return rx->acked;
}

uint64_t tm_net_ack_claim(struct tm_net *n, int node, int chan)
{
    struct tm_net_rx *rx = rx_of(n, node, chan);
    pthread_mutex_lock(&rx->lock);
    uint64_t seq = take_owed(rx, 1);
    pthread_mutex_unlock(&rx->lock);
    return seq;
}

/* Sends the link's cumulative ACK if one is owed (force) or a threshold is reached. */
void tm_net_ack_link(struct tm_net *n, int node, int chan, int force)
{
    struct tm_net_rx *rx = rx_of(n, node, chan);
    pthread_mutex_lock(&rx->lock);
    uint64_t seq = take_owed(rx, force);
    int32_t here = rx->here, there = rx->there;
    pthread_mutex_unlock(&rx->lock);
    if (seq) tm_net_send_ack(n, node, chan, here, there, 0, seq);
}

/* An eager message of the link was stored, delivered or held.  Called after any HOLD ACK for
 * it went out: a cumulative ACK covering seq must not overtake it on the wire. */
void tm_net_eager_seen(struct tm_net *n, int node, int chan, const struct tm_msg_hdr *h)
{
    struct tm_net_rx *rx = rx_of(n, node, chan);
    pthread_mutex_lock(&rx->lock);
    if (h->cookie > rx->hi) rx->hi = h->cookie;
    rx->n_since++;
    rx->bytes_since += h->payload_len;
    rx->here = h->dst_rank;
    rx->there = h->src_rank;
    pthread_mutex_unlock(&rx->lock);
    tm_net_ack_link(n, node, chan, 0);
    /* Below the thresholds the ACK is owed lazily: the next rank thread of this node that is
     * about to block flushes it (tm_net_idle), and so does the next frame of another kind from
     * this link. */
    atomic_store_explicit(&n->ack_dirty, 1, memory_order_seq_cst);
}

void tm_net_flush_acks(struct tm_net *n)
{
    atomic_store_explicit(&n->ack_dirty, 0, memory_order_seq_cst);
    for (int node = 0; node < n->nnodes; node++)
        for (int chan = 0; chan < TM_NET_NCHAN; chan++)
            if (node != n->node) tm_net_ack_link(n, node, chan, 1);
}

void tm_net_acked(struct tm_net *n, int node, int chan, uint64_t seq, int hold)
{
    struct tm_net_tx *tx = tx_of(n, node, chan);
    struct tm_dl done;
    tm_dl_init(&done);
    int bad = 0, never = 0;
    pthread_mutex_lock(&tx->lock);
    if (seq > tx->next_seq) {
        bad = never = 1;
    } else if (hold) {
        bad = 1;
        for (struct tm_dl *d = tx->retained.next; d != &tx->retained; d = d->next) {
            struct tm_net_copy *c = tm_dl_entry(d, struct tm_net_copy, link);
            if (c->seq == seq) {
                c->held = 1;
                bad = 0;
                break;
            }
        }
    } else {
        /* Cumulative: everything up to cookie is stored or delivered, except what was held. */
        struct tm_dl *d = tx->retained.next;
        while (d != &tx->retained) {
            struct tm_net_copy *c = tm_dl_entry(d, struct tm_net_copy, link);
            if (c->seq > seq) break;
            d = d->next;
            if (c->held) continue;
            tm_dl_unlink(&c->link);
            tx->retained_bytes -= c->bytes;
            tm_dl_append(&done, &c->link);
        }
    }
    pthread_mutex_unlock(&tx->lock);
    while (!tm_dl_empty(&done)) {
        struct tm_net_copy *c = tm_dl_entry(done.next, struct tm_net_copy, link);
        tm_dl_unlink(&c->link);
        tm_net_copy_put(c, COPY_RELEASED);
    }
    if (bad)
        tm_net_proto_error(n, node, "%sACK for eager message %llu, which %s", hold ? "HOLD " : "",
                           (unsigned long long)seq, never ? "was never sent" : "is not retained");
}
