/* link.c — inter-node point-to-point: the per-job net state and its per-link records
 * (sequence counters, retained copies, ACK state; net_p2p.h), sending a frame on a link with
 * the ACK it owes, completing a receive, and protocol errors. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "net_int.h"
#include "wait.h"

int tm_net_job_init(struct tm_job *j, const struct tmpi_rank_info *info)
{
    if (!info->net) return 0;
    if (info->nnodes < 2 || info->node < 0 || info->node >= info->nnodes || !info->node_of_rank)
        return -EINVAL;
    struct tm_net *n = calloc(1, sizeof *n);
    if (!n) return -ENOMEM;
    n->job = j;
    n->svc = j->svc;
    n->link = info->net;
    n->node = info->node;
    n->nnodes = info->nnodes;
    n->node_of_rank = info->node_of_rank;
    /* Taken as configured (0: everything three-phase); an eager frame is one frame, so it
     * stays within the DATA frame size the agent accepts. */
    n->eager_limit = j->svc->net_eager_limit;
    if (n->eager_limit > TM_NET_CHUNK) n->eager_limit = TM_NET_CHUNK;
    size_t nl = (size_t)n->nnodes * TM_NET_NCHAN;
    n->tx = calloc(nl, sizeof *n->tx);
    n->rx = calloc(nl, sizeof *n->rx);
    if (!n->tx || !n->rx || tm_xfer_init(&n->xfers) < 0) goto err;
    for (size_t i = 0; i < nl; i++) {
        pthread_mutex_init(&n->tx[i].order, NULL);
        pthread_mutex_init(&n->tx[i].lock, NULL);
        tm_dl_init(&n->tx[i].retained);
        pthread_mutex_init(&n->rx[i].lock, NULL);
    }
    pthread_mutex_init(&n->err_lock, NULL);
    j->net = n;
    return 0;
err:
    free(n->tx);
    free(n->rx);
    free(n);
    return -ENOMEM;
}

static void free_xfer(void *p, int kind, void *arg)
{
    (void)arg;
    if (kind == TM_XFER_SEND) {
        struct net_send_op *op = p;
        free(op->own);
        free(op);
    } else if (kind == TM_XFER_RECV) {
        tm_net_rx_op_free(p);
    } else if (kind == TM_XFER_RMA_GET || kind == TM_XFER_CANCEL) {
        free(p);
    } /* TM_XFER_RMA_ORIGIN: freed with its rank's window table (rma/win.c) */
}

void tm_net_job_fini(struct tm_job *j)
{
    struct tm_net *n = j->net;
    if (!n) return;
    /* Unexpected eager messages hold pool buffers; the mailbox frees the envelopes. */
    for (int i = 0; i < j->size; i++) {
        struct tm_mbox *mb = &j->ranks[i].mbox;
        if (!mb->unexp_order.next) continue;
        for (struct tm_dl *d = mb->unexp_order.next; d != &mb->unexp_order; d = d->next) {
            struct tm_envl *e = tm_dl_entry(d, struct tm_envl, order);
            if (e->kind == TM_ENVL_NET && e->pbuf) n->svc->pool_free(e->pbuf, e->bytes);
            e->pbuf = NULL;
        }
    }
    size_t nl = (size_t)n->nnodes * TM_NET_NCHAN;
    for (size_t i = 0; i < nl; i++) {
        struct tm_net_tx *tx = &n->tx[i];
        while (!tm_dl_empty(&tx->retained)) {
            struct tm_net_copy *c = tm_dl_entry(tx->retained.next, struct tm_net_copy, link);
            tm_dl_unlink(&c->link);
            if (c->buf) n->svc->pool_free(c->buf, c->bytes);
            free(c);
        }
        pthread_mutex_destroy(&tx->order);
        pthread_mutex_destroy(&tx->lock);
        pthread_mutex_destroy(&n->rx[i].lock);
    }
    tm_xfer_fini(&n->xfers, free_xfer, NULL);
    pthread_mutex_destroy(&n->err_lock);
    free(n->tx);
    free(n->rx);
    free(n);
    j->net = NULL;
}

void tm_net_proto_error(struct tm_net *n, int node, const char *fmt, ...)
{
    pthread_mutex_lock(&n->err_lock);
    if (!n->first_err[0]) {
        int k = snprintf(n->first_err, sizeof n->first_err,
                         "inter-node protocol error (frame from node %d): ", node);
        va_list ap;
        va_start(ap, fmt);
        if (k > 0 && (size_t)k < sizeof n->first_err)
            vsnprintf(n->first_err + k, sizeof n->first_err - (size_t)k, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&n->err_lock);
    atomic_fetch_add_explicit(&n->net_errors, 1, memory_order_seq_cst);
    /* Ranks blocked in a wait look at net_errors when they wake (tm_net_check in wait.c). */
    struct tm_job *j = n->job;
    for (int i = 0; i < j->size; i++)
        if (n->node_of_rank[i] == n->node) tm_wake_force(&j->ranks[i].waker);
}

void tm_net_check_slow(struct tm_rank *me)
{
    struct tm_net *n = me->job->net;
    if (atomic_load_explicit(&n->net_errors, memory_order_seq_cst)) {
        char why[sizeof n->first_err];
        pthread_mutex_lock(&n->err_lock);
        memcpy(why, n->first_err, sizeof why);
        pthread_mutex_unlock(&n->err_lock);
        fprintf(stderr, "rank %d: %s\n", me->rank, why);
        n->svc->job_abort(1, why);
    }
}

int tm_net_xmit(struct tm_net *n, int node, int channel, unsigned flags, const struct tm_msg_hdr *h,
                const void *payload, void (*done)(void *arg, int err), void *arg)
{
    struct netd_hdr x;
    tm_msg_hdr_encode(h, &x);
    tm_net_hb_send(n);
    return n->svc->net_send(n->link, node, channel, flags, &x, payload, done, arg);
}

int tm_net_send_frame(struct tm_net *n, int node, int chan, struct tm_msg_hdr *h,
                      const void *payload, void (*done)(void *arg, int err), void *arg)
{
    h->ack = tm_net_ack_claim(n, node, chan);
    return tm_net_xmit(n, node, chan + 1, 0, h, payload, done, arg);
}

/* Completes a receive another thread owns: nothing may touch it after done. */
void tm_net_complete(struct tm_request *rr, int src, int tag, size_t msg_len, int err)
{
    struct tm_waker *w = &rr->owner->waker;
    size_t n = msg_len <= rr->cap ? msg_len : rr->cap;
    if (!err && msg_len > rr->cap) err = MPI_ERR_TRUNCATE;
    tm_req_set_done(rr, src, tag, n, err);
    tm_wake(w);
}

size_t tm_net_retained_bytes(struct tm_net *n)
{
    size_t sum = 0, nl = (size_t)n->nnodes * TM_NET_NCHAN;
    for (size_t i = 0; i < nl; i++) {
        pthread_mutex_lock(&n->tx[i].lock);
        sum += n->tx[i].retained_bytes;
        pthread_mutex_unlock(&n->tx[i].lock);
    }
    return sum;
}
