/* cancel.c — MPI_Cancel of a send to a rank on another node (MPI 4.1 §3.8.4): the message has
 * left, so only the receiver's node can say whether a receive matched it.  The sender asks it
 * (CANCEL, naming the message by its match key, its link and its handle there); that node's
 * receive daemon takes the message out of the receiver's unexpected queue if it is still
 * there and answers (CANCEL_ANS, CANCELLED or not).  The send's request completes with the
 * answer: cancelled (the message is never received, MPI_Test_cancelled true) or as it would
 * have (a receive had it already).  docs/PROTOCOL.md "Cancelling a send" has the frames.
 *
 * The three kinds of send (net_p2p.h):
 *  - eager: complete since it started; the CANCEL makes it pending again until the answer.
 *    Taken out, its pool buffer at the receiver goes; the sender's retained copy goes with
 *    the next cumulative ACK as usual, or now if the receiver held it (HOLD: no CTS will come).
 *  - three-phase: pending until its CTS and DATA; taken out (its RTS entry), the send's record
 *    goes and the request completes cancelled; too late, the CTS completes it as usual.
 *  - buffered three-phase: complete since it started (its own copy), like eager until the
 *    answer; taken out, its record and copy go.
 * Frames of one link are handled in order, so a CANCEL finds the message's entry queued
 * unless a receive took it (or a receive posted before the message came had it at once). */
#include <errno.h>
#include <stdlib.h>

#include "job.h"
#include "match.h"
#include "net_int.h"
#include "wait.h"

/* An MPI_Cancel waiting for its answer (xfer table, TM_XFER_CANCEL, named by the CANCEL's
 * rcookie).  Filled before it is published; taken by the daemon that reads the answer. */
struct net_cancel_op {
    struct tm_request *req;
    uint64_t mcookie; /* the message's handle: eager sequence number or the send's cookie */
    int node, chan;
    int32_t dst_w;
    int rndv;     /* went three-phase */
    int was_done; /* the request was complete (eager, buffered): the answer completes it again */
    size_t bytes; /* its st_bytes then */
};

/* Completes req from another thread (the answer's daemon): nothing touches it after done. */
static void finish(struct tm_request *req, int cancelled, size_t bytes)
{
    struct tm_waker *w = &req->owner->waker;
    req->st_cancelled = cancelled;
    tm_req_set_done(req, req->st_source, req->st_tag, cancelled ? 0 : bytes, req->st_error);
    tm_wake(w);
}

int tm_net_cancel_send(struct tm_rank *me, struct tm_request *req)
{
    struct tm_net *n = me->job->net;
    const int how = req->env_net;
    if (!n || !how) return 0;
    const int w = req->env_dst1 - 1;
    const uint64_t mcookie = req->env_serial;
    /* one CANCEL per send: a second MPI_Cancel, or one after the answer, does nothing */
    req->env_net = 0;
    req->env_dst1 = 0;
    const int rndv = how != TM_ENV_NET_EAGER;
    const int was_done = atomic_load_explicit(&req->done, memory_order_seq_cst) != 0;
    /* A three-phase send whose CTS came was matched: nothing to ask (a plain one is complete
     * only after its CTS).  A CTS that comes after this look finds the CANCEL too late. */
    if (how == TM_ENV_NET_RNDV && was_done) return 0;
    if (rndv && !tm_xfer_get(&n->xfers, mcookie, TM_XFER_SEND)) return 0;
    struct net_cancel_op *op = malloc(sizeof *op);
    if (!op) return -ENOMEM;
    *op = (struct net_cancel_op){
        .req = req,
        .mcookie = mcookie,
        .node = n->node_of_rank[w],
        .chan = 0, /* only point-to-point sends are noted (tm_net_note_send) */
        .dst_w = w,
        .rndv = rndv,
        .was_done = was_done,
        .bytes = req->st_bytes,
    };
    uint64_t cc;
    int r = tm_xfer_put(&n->xfers, TM_XFER_CANCEL, op, &cc);
    if (r < 0) {
        free(op);
        return r;
    }
    /* Pending again until the answer (MPI_Wait of a send marked for cancellation returns once
     * the cancel is decided); the owner alone has looked at it since it completed. */
    if (was_done) atomic_store_explicit(&req->done, 0, memory_order_seq_cst);
    struct tm_msg_hdr h = {
        .type = TM_MSG_CANCEL,
        .flags = (uint8_t)(rndv ? TM_MSG_F_RNDV : 0),
        .src_rank = me->rank,
        .dst_rank = w,
        .tag = req->tag,
        .context = req->ctx,
        .comm_src = req->env_src,
        .cookie = mcookie,
        .rcookie = cc,
    };
    /* Same link as the message, after it: the receiver's node has handled the message first. */
    r = tm_net_send_frame(n, op->node, op->chan, &h, NULL, NULL, NULL);
    if (r < 0) {
        /* not sent, so no answer: the send goes on as it was (a cancel may fail) */
        if (tm_xfer_take(&n->xfers, cc, TM_XFER_CANCEL) == op) {
            if (was_done) atomic_store_explicit(&req->done, 1, memory_order_seq_cst);
            free(op);
        }
        return r;
    }
    return 1;
}

/* The receiver's node: which queued entry is the message a CANCEL names. */
struct cancel_key {
    int node, chan, wsrc, rndv;
    uint64_t cookie;
};

static int is_message(const struct tm_envl *e, const void *arg)
{
    const struct cancel_key *k = arg;
    const int kind = k->rndv ? e->kind == TM_ENVL_NET_RTS
                             : e->kind == TM_ENVL_NET || e->kind == TM_ENVL_NET_HELD;
    return kind && e->node == k->node && e->chan == k->chan && e->wsrc == k->wsrc &&
           e->cookie == k->cookie;
}

void tm_net_cancel_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h)
{
    const struct cancel_key k = {
        .node = node,
        .chan = h->chan,
        .wsrc = h->src_rank,
        .rndv = (h->flags & TM_MSG_F_RNDV) != 0,
        .cookie = h->cookie,
    };
    struct tm_mbox *mb = &tm_job_rank(n->job, h->dst_rank)->mbox;
    pthread_mutex_lock(&mb->lock);
    struct tm_envl *e = tm_unexp_take_if(mb, h->context, h->comm_src, h->tag, is_message, &k);
    pthread_mutex_unlock(&mb->lock);
    if (e) {
        /* A stored eager message owns its pool buffer; RTS and held entries are headers. */
        if (e->kind == TM_ENVL_NET && e->pbuf) n->svc->pool_free(e->pbuf, e->bytes);
        free(e);
    }
    struct tm_msg_hdr a = {
        .type = TM_MSG_CANCEL_ANS,
        .flags = (uint8_t)((h->flags & TM_MSG_F_RNDV) | (e ? TM_MSG_F_CANCELLED : 0)),
        .src_rank = h->dst_rank,
        .dst_rank = h->src_rank,
        .tag = h->tag,
        .context = h->context,
        .cookie = h->cookie,
        .rcookie = h->rcookie,
    };
    /* A lost link fails the job on both nodes; the sender's request goes with it. */
    (void)tm_net_send_frame(n, node, h->chan, &a, NULL, NULL, NULL);
}

void tm_net_cancel_ans_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h)
{
    struct net_cancel_op *op = tm_xfer_take(&n->xfers, h->rcookie, TM_XFER_CANCEL);
    const int rndv = (h->flags & TM_MSG_F_RNDV) != 0;
    if (!op) {
        tm_net_proto_error(n, node, "CANCEL_ANS names no pending cancel (rcookie %#llx)",
                           (unsigned long long)h->rcookie);
        return;
    }
    int cancelled = (h->flags & TM_MSG_F_CANCELLED) != 0;
    if (op->node != node || op->chan != h->chan || op->dst_w != h->src_rank ||
        op->mcookie != h->cookie || op->rndv != rndv) {
        /* Not ours after all (the cookie is spent): the send stays as it was. */
        tm_net_proto_error(n, node, "CANCEL_ANS does not fit the cancel of message %#llx",
                           (unsigned long long)op->mcookie);
        cancelled = 0;
    } else if (cancelled && rndv) {
        /* No CTS will come for a send whose RTS entry went: its record (and a buffered send's
         * copy) goes here, and the request completes below. */
        struct net_send_op *s = tm_xfer_take(&n->xfers, op->mcookie, TM_XFER_SEND);
        if (s) {
            free(s->own);
            free(s);
        } else {
            tm_net_proto_error(n, node, "CANCEL_ANS cancels send %#llx, which a CTS took",
                               (unsigned long long)op->mcookie);
            cancelled = 0;
        }
    } else if (cancelled) {
        /* A message the receiver had held (pool full: no payload kept) will never be fetched
         * with a CTS: its copy goes now.  One it stored goes with the cumulative ACK that
         * already counts it. */
        struct tm_net_copy *c = tm_net_take_held(n, node, op->chan, op->mcookie);
        if (c) tm_net_copy_put(c, COPY_RELEASED);
    }
    /* Cancelled: nothing else completes the request.  Too late: a complete one (eager,
     * buffered) completes again; a three-phase one completes when its DATA is out. */
    if (cancelled || op->was_done) finish(op->req, cancelled, op->bytes);
    free(op);
}
