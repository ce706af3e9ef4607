/* rma_net.c — one-sided operations on targets of another node: TM_MSG_RMA frames on the
 * point-to-point channel, applied by the target node's receive daemon in its upcall, with no
 * involvement of the target rank (docs/ARCHITECTURE.md "One-sided communication",
 * docs/PROTOCOL.md "One-sided communication").
 *
 * Frame fields (the protocol half, msg_hdr.h; the transport half only carries the ranks):
 * src_rank/dst_rank world ranks; context the window id; tag the kind
 * (enum tm_rma_kind) | op or lock type << 8 | basic type << 16 (ANSWER: | error class << 8,
 * | 1 << 24 when it counts as an answer the origin waits for); msg_len the byte offset in the
 * target's window (dynamic windows: the address); cookie the origin's answer record
 * (struct tm_rma_origin, transfer table kind RMA_ORIGIN); rcookie a fetching operation's
 * record (RMA_GET), echoed by the answer that carries the data.
 *
 * Order: frames of one link are handled one after the other in sending order, so a FLUSH or
 * UNLOCK is answered after every operation the origin sent before it has been applied.  A
 * PUT's payload is read by the daemon straight into the window, and a GET's answer is sent
 * straight from the window memory and read straight into the origin's buffer: no copy beyond
 * the socket's. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "msg_hdr.h"
#include "net_p2p.h"
#include "request.h"
#include "rma.h"
#include "type.h"
#include "type_copy.h"
#include "type_flat.h"
#include "wait.h"

/* Payloads up to this size are copied at the origin (the call's buffer, e.g. a CAS's stack
 * pair, is free again at once); larger ones are sent from the caller's buffer, which MPI
 * keeps untouched until the operation completes. */
#define RMA_COPY_MAX 256
/* Operations up to this size may be held back (below, "Holding back"); larger ones leave at
 * once, so that their transfer overlaps whatever the rank does before it synchronises.  Holding
 * saves half a round trip on an Accumulate or Put and its flush (2.4 us across two agents on
 * loopback: osu_acc_latency 512 B 8.6 against 6.2 us at 256 B, docs/bench/ANALYSIS.md
 * "Accumulate across agents"); it may delay the payload by its own time on the wire, about as
 * much at this size. */
#define RMA_HOLD_MAX 8192
#define RMA_ANSWER_COUNTS (1 << 24)
/* Bits 24-25 of a PUT or ACC tag: what the target does once the operation is applied, as a
 * FLUSH or UNLOCK frame right behind it would (a counted answer).  A flush or unlock of the
 * target whose last operation was held back sets them on that operation instead of sending a
 * frame of its own (below, "Holding back"). */
#define RMA_THEN(tag) (((uint32_t)(tag) >> 24) & 3)
enum { RMA_THEN_NONE, RMA_THEN_FLUSH, RMA_THEN_UNLOCK_SH, RMA_THEN_UNLOCK_EX };
/* Largest frame of an operation: a GET carries its length in the tag's upper 24 bits. */
#define RMA_CHUNK ((size_t)1 << 22)
/* Bit of the kind byte of an operation whose payload starts with the target's pieces (a
 * non-contiguous target datatype): struct rma_pieces, then n struct rma_piece, then the packed
 * data.  (The kind byte: a GET uses every bit above it for its length.) */
#define RMA_BLOCKS 0x80
#define RMA_KIND(tag) ((tag)&0x7f)
/* Pieces one frame names at most (16 bytes each: 64 KiB of layout per frame). */
#define RMA_MAX_PIECES 4096

struct rma_pieces {
    uint32_t n, reserved;
};
/* One contiguous run of target memory: the byte offset in the window (dynamic windows: the
 * address), and its length; the frame's data (or answer) holds the runs' bytes in order.  On
 * the wire both are big-endian, like every integer of the headers. */
struct rma_piece {
    uint64_t off, len;
};

static inline int32_t rma_tag(int kind, int a, int basic)
{
    return (int32_t)(kind | (a << 8) | (basic << 16));
}

/* A fetching operation waiting for its data (RMA_GET).  A non-contiguous destination gets
 * the packed answer in tmp (allocated with the record, so the transfer table's teardown frees
 * it with free()), unpacked into packed bytes [pos, pos + len) of (dst, dcount, dt) on arrival;
 * dt is held until then. */
struct rma_get {
    struct tm_rma_origin *org;
    void *buf;
    size_t len;
    struct tm_request *req; /* completes with the answer, may be NULL */
    void *dst;
    size_t dcount, pos;
    const struct tm_type *dt; /* NULL: buf is the destination itself */
    unsigned char tmp[];
};

/* What a send completion releases. */
struct rma_sent {
    struct tm_rma_origin *org;
    void *own;              /* copied payload */
    struct tm_request *req; /* Rput/Raccumulate: complete locally now */
};

int tm_rma_origin_init(struct tm_rank *me, struct tm_winref *wr)
{
    struct tm_win *w = wr->w;
    struct tm_net *n = me->job->net;
    if (!n) return 0;
    int remote = 0;
    for (int i = 0; i < w->size && !remote; i++)
        remote = w->m[i].node != n->node;
    if (!remote) return 0;
    wr->org = calloc(1, sizeof *wr->org);
    wr->dirty = calloc((size_t)w->size, 1);
    if (!wr->org || !wr->dirty) goto err;
    wr->org->owner = me;
    wr->org->w = w;
    if (tm_xfer_put(&n->xfers, TM_XFER_RMA_ORIGIN, wr->org, &wr->org->cookie) < 0) goto err;
    return 0;
err:
    tm_rma_origin_free(wr->org);
    free(wr->dirty);
    wr->org = NULL;
    wr->dirty = NULL;
    return -ENOMEM;
}

void tm_rma_origin_free(struct tm_rma_origin *org)
{
    if (!org) return;
    struct rma_sent *s = org->held.sent;
    if (s) {
        free(s->own);
        free(s);
    }
    free(org);
}

void tm_rma_origin_fini(struct tm_rank *me, struct tm_winref *wr)
{
    if (!wr->org) return;
    tm_xfer_take(&me->job->net->xfers, wr->org->cookie, TM_XFER_RMA_ORIGIN);
    tm_rma_origin_free(wr->org);
    wr->org = NULL;
}

static void sent_done(void *arg, int err)
{
    struct rma_sent *s = arg;
    struct tm_rma_origin *org = s->org;
    struct tm_waker *wk = &org->owner->waker;
    free(s->own);
    if (s->req) {
        struct tm_rank *owner = s->req->owner; /* the request may be reused once done */
        tm_req_set_done(s->req, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, err ? MPI_ERR_OTHER : 0);
        tm_wake(&owner->waker);
    }
    free(s);
    if (err) {
        int z = 0;
        atomic_compare_exchange_strong(&org->err, &z, MPI_ERR_OTHER);
    }
    atomic_fetch_add_explicit(&org->sent, 1, memory_order_seq_cst);
    tm_wake(wk);
}

/* Hands one frame to the link of target t's node; s (may be NULL) is released by the send's
 * completion.  0 or MPI_ERR_OTHER (the link is gone; s is the caller's again). */
static int xmit(struct tm_rank *me, struct tm_winref *wr, int t, int32_t tag, uint64_t off,
                const void *data, size_t bytes, uint64_t rcookie, struct rma_sent *s)
{
    struct tm_net *n = me->job->net;
    const struct tm_win_member *m = &wr->w->m[t];
    struct tm_msg_hdr h = {
        .type = TM_MSG_RMA,
        .payload_len = (uint32_t)bytes,
        .src_rank = me->rank,
        .dst_rank = m->world,
        .tag = tag,
        .context = wr->w->id,
        .msg_len = off,
        .cookie = wr->org->cookie,
        .rcookie = rcookie,
    };
    /* In one write: a large Put + flush is faster so, a two-sided message in pieces
     * (TMPI_NET_WHOLE). */
    int r = tm_net_xmit(n, m->node, TMPI_CH_P2P, TMPI_NET_WHOLE, &h, bytes ? data : NULL,
                        s ? sent_done : NULL, s);
    return r < 0 ? MPI_ERR_OTHER : 0;
}

/* Holding back.  A Put followed by a flush of its target used to be two frames in two writes
 * (PUT, then FLUSH), and the flush's answer came after the target had read both: about one and
 * a half round trips across two agents on loopback, where a Fetch_and_op and its answer take
 * one (docs/bench/ANALYSIS.md, RMA).  So the last small PUT or ACC of a rank on a window is
 * not sent at once: it leaves in front of the rank's next frame on the window, or before the
 * rank waits for anything there (every synchronisation call does), and a flush or unlock of
 * its target sets RMA_THEN_FLUSH (RMA_THEN_UNLOCK_*) on it instead of sending a FLUSH (UNLOCK):
 * one frame, one write, one answer.  MPI only promises an operation complete at the window's
 * next synchronisation, so it may wait until then; a sequence of Puts still leaves one write
 * per call (each pushes the one before). */

/* Sends the held operation, asking for `then` (RMA_THEN_*).  0 or an MPI error class. */
static int push_held(struct tm_rank *me, struct tm_winref *wr, int then)
{
    struct tm_rma_held *hd = &wr->org->held;
    struct rma_sent *s = hd->sent;
    if (!s) return 0;
    const void *payload = hd->payload;
    hd->sent = NULL;
    hd->payload = NULL;
    int err = xmit(me, wr, hd->t, hd->tag | (int32_t)((uint32_t)then << 24), hd->off, payload,
                   hd->bytes, 0, s);
    if (err) {
        wr->org->sending--;
        free(s->own);
        free(s);
    }
    return err;
}

/* Sends one frame of an operation to target t (after what is held), or holds it back.  0 or
 * an MPI error class. */
static int send_op(struct tm_rank *me, struct tm_winref *wr, int t, int32_t tag, size_t off,
                   const void *data, size_t bytes, void *own, uint64_t rcookie,
                   struct tm_request *req)
{
    struct tm_rma_origin *org = wr->org;
    int err = push_held(me, wr, RMA_THEN_NONE);
    if (err) {
        free(own);
        return err;
    }
    struct rma_sent *s = NULL;
    if (bytes || req) {
        s = calloc(1, sizeof *s);
        if (!s) {
            free(own);
            return MPI_ERR_NO_MEM;
        }
        s->org = org;
        s->req = req;
        s->own = own;
        if (!own && bytes && bytes <= RMA_COPY_MAX) {
            s->own = malloc(bytes);
            if (!s->own) {
                free(s);
                return MPI_ERR_NO_MEM;
            }
            memcpy(s->own, data, bytes);
            data = s->own;
        }
        org->sending++;
    }
    /* Only an operation of up to RMA_HOLD_MAX bytes that nobody waits for by itself (no
     * answer, no request).  Its payload is the rank's copy, or the caller's buffer, which MPI
     * keeps unchanged until the window's next synchronisation completes the operation, and
     * every one of them sends what is held first. */
    const int kind = RMA_KIND(tag);
    if (s && !req && !rcookie && bytes <= RMA_HOLD_MAX &&
        (kind == TM_RMA_PUT || kind == TM_RMA_ACC)) {
        org->held = (struct tm_rma_held){t, tag, off, bytes, (void *)data, s};
        return 0;
    }
    err = xmit(me, wr, t, tag, off, data, bytes, rcookie, s);
    if (err) {
        if (s) {
            org->sending--;
            free(s->own);
            free(s);
        } else {
            free(own);
        }
    }
    return err;
}

/* A walk over the target's layout in packed order (element e, block i, bytes inb into it). */
struct tcursor {
    const struct tm_block *b;
    size_t nb, e, i, inb, ext;
    struct tm_block one;
};

/* Registers the record of a fetching frame: its answer fills packed bytes [pos, pos + len)
 * of res.  0 or an MPI error class. */
static int get_record(struct tm_net *n, struct tm_rma_origin *org, const struct tm_rma_typed *res,
                      size_t pos, size_t len, struct tm_request *req, uint64_t *ret_rc)
{
    const int direct = res->t->contig;
    struct rma_get *g = calloc(1, sizeof *g + (direct ? 0 : len));
    if (!g) return MPI_ERR_NO_MEM;
    g->org = org;
    g->len = len;
    g->req = req;
    if (direct) {
        g->buf = (char *)res->buf + pos;
    } else {
        g->buf = g->tmp;
        g->dst = res->buf;
        g->dcount = res->count;
        g->pos = pos;
        g->dt = res->t;
        tm_type_hold(res->t);
    }
    if (tm_xfer_put(&n->xfers, TM_XFER_RMA_GET, g, ret_rc) < 0) {
        tm_type_release(g->dt);
        free(g);
        return MPI_ERR_NO_MEM;
    }
    org->asked++;
    return 0;
}

static void get_record_drop(struct tm_net *n, struct tm_rma_origin *org, uint64_t rc)
{
    struct rma_get *g = tm_xfer_take(&n->xfers, rc, TM_XFER_RMA_GET);
    if (g) tm_type_release(g->dt);
    free(g);
    org->asked--;
}

int tm_rma_remote_op(struct tm_rank *me, struct tm_winref *wr, int kind, int t, size_t off,
                     size_t tcount, const struct tm_type *tt, const struct tm_rma_typed *data,
                     const struct tm_rma_typed *result, enum tm_opkind op, enum tm_basic type,
                     struct tm_request *req)
{
    struct tm_net *n = me->job->net;
    struct tm_rma_origin *org = wr->org;
    /* Long transfers go as several frames of whole elements (packed: a padded pair's bytes
     * without its padding); a target layout with gaps names its pieces in each frame (at most
     * RMA_MAX_PIECES). */
    const size_t es = tm_basic_psize(type) ? tm_basic_psize(type) : 1;
    const size_t chunk = RMA_CHUNK / es * es;
    /* A padded pair can lie in two pieces (value, index) and merged pieces of SHORT_INT cross
     * pairs: the frame's last piece is cut where a pair ends, for the target applies whole
     * pairs (rma_atomic.c tm_rma_acc_walk). */
    const int split = es != (tm_basic_size(type) ? tm_basic_size(type) : 1);
    const size_t total = tcount * tt->psize;
    const int blocks = !tt->contig && total;
    struct tcursor c = {.ext = tt->extent};
    c.b = tm_type_blocks(tt, &c.one, &c.nb);
    /* What a flush must ask the target for.  An operation with a result is complete once its
     * answer came back (the target applied it before answering), so waiting for the answers
     * flushes it: no FLUSH round trip after a Fetch_and_op or Compare_and_swap. */
    if (kind != TM_RMA_GET && !result) wr->dirty[t] = 1;
    size_t pos = 0;
    do {
        size_t len = 0, np = 0;
        struct rma_piece *pc = NULL;
        if (blocks) {
            size_t cap = 64;
            pc = malloc(cap * sizeof *pc);
            if (!pc) return MPI_ERR_NO_MEM;
            while (pos + len < total && len < chunk && np < RMA_MAX_PIECES) {
                const struct tm_block blk = tm_type_block(tt, c.b, c.i), *b = &blk;
                size_t take = b->len - c.inb;
                if (take > chunk - len) take = chunk - len;
                if (split && np == RMA_MAX_PIECES - 1) {
                    const size_t r = (pos + len) % es;
                    if (!r) break;
                    if (take > es - r) take = es - r;
                }
                if (np == cap) {
                    struct rma_piece *q = realloc(pc, 2 * cap * sizeof *pc);
                    if (!q) {
                        free(pc);
                        return MPI_ERR_NO_MEM;
                    }
                    pc = q;
                    cap *= 2;
                }
                /* Offsets below the displacement wrap around as 64-bit numbers; the target
                 * refuses whatever lands outside the window. */
                pc[np++] = (struct rma_piece){
                    htobe64((uint64_t)off + (uint64_t)(c.e * c.ext) + (uint64_t)b->off + c.inb),
                    htobe64(take)};
                len += take;
                c.inb += take;
                if (c.inb == b->len) {
                    c.inb = 0;
                    if (++c.i == c.nb) {
                        c.i = 0;
                        c.e++;
                    }
                }
            }
        } else {
            len = total - pos > chunk ? chunk : total - pos;
        }
        const int last = pos + len >= total;
        uint64_t rc = 0;
        int err = 0;
        if (result && (err = get_record(n, org, result, pos, len, last ? req : NULL, &rc))) {
            free(pc);
            return err;
        }
        /* The payload: pieces (if any), then the data packed (or straight from a contiguous
         * origin buffer).  MPI_NO_OP on a contiguous target sends a stand-in of the length. */
        const size_t dl = data || (kind == TM_RMA_GACC && !blocks) ? len : 0;
        const size_t hl = blocks ? sizeof(struct rma_pieces) + np * sizeof *pc : 0;
        const void *payload = NULL;
        void *own = NULL;
        if (hl || (data && !data->t->contig) || (!data && dl)) {
            own = calloc(1, hl + dl ? hl + dl : 1);
            if (!own) {
                err = MPI_ERR_NO_MEM;
            } else {
                if (hl) {
                    struct rma_pieces ph = {htobe32((uint32_t)np), 0};
                    memcpy(own, &ph, sizeof ph);
                    memcpy((char *)own + sizeof ph, pc, np * sizeof *pc);
                }
                if (data && dl)
                    tm_type_pack((char *)own + hl, data->buf, data->count, data->t, pos, dl);
                payload = own;
            }
        } else if (data && dl) {
            payload = (const char *)data->buf + pos;
        }
        free(pc);
        if (!err) {
            int32_t tag = kind == TM_RMA_GET && !blocks
                              ? (int32_t)((uint32_t)kind | (uint32_t)len << 8)
                              : rma_tag(kind, op, type) | (blocks ? RMA_BLOCKS : 0);
            err = send_op(me, wr, t, tag, blocks ? 0 : off + pos, payload, hl + dl, own, rc,
                          result || !last ? NULL : req);
        }
        if (err) {
            if (rc) get_record_drop(n, org, rc);
            return err;
        }
        pos += len;
    } while (pos < total);
    return 0;
}

int tm_rma_remote_cas(struct tm_rank *me, struct tm_winref *wr, int t, size_t off, const void *two,
                      size_t es, void *result, enum tm_basic type)
{
    struct tm_net *n = me->job->net;
    struct tm_rma_origin *org = wr->org;
    const struct tm_type bytes = {.size = es, .extent = es, .contig = 1, .psize = es};
    const struct tm_rma_typed res = {result, 1, &bytes};
    uint64_t rc;
    int err = get_record(n, org, &res, 0, es, NULL, &rc);
    if (err) return err;
    err = send_op(me, wr, t, rma_tag(TM_RMA_CAS, TM_OP_REPLACE, type), off, two, 2 * es, NULL, rc,
                  NULL);
    if (err) get_record_drop(n, org, rc);
    return err;
}

/* Remote memory access.  A Put or Get of contiguous bytes (both datatypes contiguous) to a
 * member that registered its window memory (win.c: Win_create and Win_allocate memory, the
 * key and address in the window's allgathered info) goes as one remote write or read per
 * RMA_CHUNK on the link to the target's node (svc net_put / net_get: fi_write with delivery
 * complete, fi_read), which the provider carries out at the target without its rank or any
 * handler of frames there (on a real fabric without the target's CPU at all).  Complete when
 * the transfer's completion comes (a Put's bytes are in the target's memory then), counted in
 * direct_posted / direct_done, which every wait on the window waits for, so a flush or fence
 * after it needs no FLUSH frame.  Frames that end an epoch at the target (UNLOCK, COMPLETE)
 * follow on the link behind the operations they cover, which a transfer outside the link's
 * frames is not: they wait for the transfers first (tm_rma_remote_ctl).  Accumulates stay
 * frames: they are atomic per element against each other and against the target's own
 * accumulates, which a remote write is not. */
struct rma_direct {
    struct tm_rma_origin *org;
    struct tm_request *req; /* completes with the last chunk, may be NULL */
};

static void direct_done(void *arg, int err)
{
    struct rma_direct *d = arg;
    struct tm_rma_origin *org = d->org;
    struct tm_waker *wk = &org->owner->waker;
    if (err) {
        int z = 0;
        atomic_compare_exchange_strong(&org->err, &z, MPI_ERR_OTHER);
    }
    if (d->req) {
        struct tm_rank *owner = d->req->owner; /* the request may be reused once done */
        tm_req_set_done(d->req, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, err ? MPI_ERR_OTHER : 0);
        tm_wake(&owner->waker);
    }
    free(d);
    atomic_fetch_add_explicit(&org->direct_done, 1, memory_order_seq_cst);
    tm_wake(wk);
}

int tm_rma_direct(struct tm_rank *me, struct tm_winref *wr, int write, int t, size_t off, void *buf,
                  size_t len, struct tm_request *req, int *taken)
{
    struct tm_net *n = me->job->net;
    const struct tm_win_member *m = &wr->w->m[t];
    *taken = 0;
    if (!n || !wr->org || !m->rma_ok || !len || !n->svc->net_put || !n->svc->net_get) return 0;
    for (size_t pos = 0; pos < len;) {
        const size_t c = len - pos > RMA_CHUNK ? RMA_CHUNK : len - pos;
        struct rma_direct *d = malloc(sizeof *d);
        if (!d) return MPI_ERR_NO_MEM;
        *d = (struct rma_direct){wr->org, pos + c == len ? req : NULL};
        wr->org->direct_posted++;
        const uint64_t ra = m->raddr + off + pos;
        int r = write ? n->svc->net_put(n->link, m->node, (char *)buf + pos, c, ra, m->rkey,
                                        direct_done, d)
                      : n->svc->net_get(n->link, m->node, (char *)buf + pos, c, ra, m->rkey,
                                        direct_done, d);
        if (r < 0) {
            wr->org->direct_posted--;
            free(d);
            /* the link has no remote access (it fell back to TCP): frames, all of it */
            if (pos == 0 && (r == -ENOTSUP || r == -EMSGSIZE)) return 0;
            return r == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
        }
        *taken = 1;
        pos += c;
    }
    return 0;
}

static int direct_idle(void *p)
{
    struct tm_rma_origin *org = p;
    return atomic_load_explicit(&org->direct_done, memory_order_seq_cst) >= org->direct_posted;
}

int tm_rma_remote_ctl(struct tm_rank *me, struct tm_winref *wr, int kind, int t, int arg)
{
    struct tm_rma_origin *org = wr->org;
    /* An epoch's end at the target comes after the remote accesses it covers (above). */
    if ((kind == TM_RMA_UNLOCK || kind == TM_RMA_COMPLETE) && !direct_idle(org))
        tm_wait(me, direct_idle, org);
    const int counted = kind == TM_RMA_LOCK || kind == TM_RMA_UNLOCK || kind == TM_RMA_FLUSH;
    if (counted) org->asked++;
    int err;
    /* The held operation asks for the answer itself. */
    if (kind == TM_RMA_FLUSH && org->held.sent && org->held.t == t)
        err = push_held(me, wr, RMA_THEN_FLUSH);
    else if (kind == TM_RMA_UNLOCK && org->held.sent && org->held.t == t)
        err =
            push_held(me, wr, arg == MPI_LOCK_EXCLUSIVE ? RMA_THEN_UNLOCK_EX : RMA_THEN_UNLOCK_SH);
    else
        err = send_op(me, wr, t, rma_tag(kind, arg, 0), 0, NULL, 0, NULL, 0, NULL);
    if (err && counted) org->asked--;
    return err;
}

struct wait_arg {
    struct tm_rma_origin *org;
    int local_only;
};

static int all_answered(void *p)
{
    struct wait_arg *a = p;
    struct tm_rma_origin *org = a->org;
    return atomic_load_explicit(&org->sent, memory_order_seq_cst) >= org->sending &&
           atomic_load_explicit(&org->answers, memory_order_seq_cst) >= org->asked &&
           atomic_load_explicit(&org->direct_done, memory_order_seq_cst) >= org->direct_posted;
}

int tm_rma_remote_wait(struct tm_rank *me, struct tm_winref *wr, int local_only)
{
    struct tm_rma_origin *org = wr->org;
    if (!org) return 0;
    int err = push_held(me, wr, RMA_THEN_NONE);
    if (err) return err;
    struct wait_arg a = {org, local_only};
    if (!all_answered(&a)) tm_wait(me, all_answered, &a);
    return atomic_exchange(&org->err, 0);
}

int tm_rma_remote_flush_all(struct tm_rank *me, struct tm_winref *wr)
{
    int err = 0;
    for (int t = 0; t < wr->w->size && !err; t++)
        if (wr->dirty[t]) {
            wr->dirty[t] = 0;
            err = tm_rma_remote_ctl(me, wr, TM_RMA_FLUSH, t, 0);
        }
    int e = tm_rma_remote_wait(me, wr, 0);
    return err ? err : e;
}

/* ---- target side (receive daemon) ---- */

struct rma_reply {
    struct tm_win *w; /* replies_inflight held */
    void *own;
};

static void reply_done(void *arg, int err)
{
    (void)err; /* a lost answer: the origin's link is gone, its job ends */
    struct rma_reply *r = arg;
    free(r->own);
    atomic_fetch_sub_explicit(&r->w->replies_inflight, 1, memory_order_release);
    free(r);
}

/* Sends an answer to the origin of h: data (may be NULL) released through reply_done. */
static void answer(struct tm_net *n, struct tm_win *w, int node, const struct tm_msg_hdr *h,
                   int err, int counts, const void *data, size_t len, void *own)
{
    struct tm_msg_hdr a = {
        .type = TM_MSG_RMA,
        .payload_len = (uint32_t)len,
        .src_rank = h->dst_rank,
        .dst_rank = h->src_rank,
        .tag = rma_tag(TM_RMA_ANSWER, err, 0) | (counts ? RMA_ANSWER_COUNTS : 0),
        .context = h->context,
        .cookie = h->cookie,
        .rcookie = h->rcookie,
    };
    struct rma_reply *r = NULL;
    if (len) {
        r = malloc(sizeof *r);
        if (!r) {
            free(own);
            a.payload_len = 0;
            a.tag = rma_tag(TM_RMA_ANSWER, MPI_ERR_NO_MEM, 0) | RMA_ANSWER_COUNTS;
            len = 0;
        } else {
            r->w = w;
            r->own = own;
            atomic_fetch_add_explicit(&w->replies_inflight, 1, memory_order_relaxed);
        }
    }
    /* A Get's data in one write, as a Put's (xmit). */
    if (tm_net_xmit(n, node, TMPI_CH_P2P, TMPI_NET_WHOLE, &a, len ? data : NULL,
                    r ? reply_done : NULL, r) < 0 &&
        r) {
        free(own);
        atomic_fetch_sub_explicit(&w->replies_inflight, 1, memory_order_release);
        free(r);
    }
}

/* A queued or granted lock request answers its origin with a counted answer. */
static void grant(struct tm_net *n, struct tm_win *w, const struct tm_win_lockreq *q)
{
    struct tm_msg_hdr h = {
        .src_rank = q->origin_world,
        .dst_rank = q->target_world,
        .context = w->id,
        .cookie = q->cookie,
    };
    answer(n, w, q->node, &h, 0, 1, NULL, 0, NULL);
}

void tm_rma_grant_queued(struct tm_win *w, struct tm_win_member *m)
{
    struct tm_net *n = w->net;
    pthread_mutex_lock(&m->lockq_lock);
    while (m->lockq && tm_win_lock_try(m, m->lockq->type)) {
        struct tm_win_lockreq *q = m->lockq;
        m->lockq = q->next;
        if (!m->lockq) m->lockq_tail = NULL;
        atomic_fetch_sub_explicit(&m->lockq_len, 1, memory_order_seq_cst);
        grant(n, w, q);
        free(q);
    }
    pthread_mutex_unlock(&m->lockq_lock);
}

static void lock_frame(struct tm_net *n, struct tm_win *w, int t, int node,
                       const struct tm_msg_hdr *h, int type)
{
    struct tm_win_member *m = &w->m[t];
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE) {
        answer(n, w, node, h, MPI_ERR_LOCKTYPE, 1, NULL, 0, NULL);
        return;
    }
    if (!atomic_load_explicit(&m->lockq_len, memory_order_seq_cst) && tm_win_lock_try(m, type)) {
        answer(n, w, node, h, 0, 1, NULL, 0, NULL);
        return;
    }
    struct tm_win_lockreq *q = calloc(1, sizeof *q);
    if (!q) {
        answer(n, w, node, h, MPI_ERR_NO_MEM, 1, NULL, 0, NULL);
        return;
    }
    q->origin_world = h->src_rank;
    q->target_world = h->dst_rank;
    q->node = node;
    q->type = type;
    q->cookie = h->cookie;
    pthread_mutex_lock(&m->lockq_lock);
    if (m->lockq_tail)
        m->lockq_tail->next = q;
    else
        m->lockq = q;
    m->lockq_tail = q;
    atomic_fetch_add_explicit(&m->lockq_len, 1, memory_order_seq_cst);
    pthread_mutex_unlock(&m->lockq_lock);
    /* The holder may have released before it could see us counted. */
    tm_rma_grant_queued(w, m);
}

/* What the header upcall found, for the frame upcall. */
struct rma_rx {
    struct tm_win *w;
    int t;             /* target's window rank (operations) */
    char *addr;        /* target memory, NULL: out of the window */
    void *buf;         /* ACC/GACC/CAS payload */
    struct rma_get *g; /* ANSWER with data */
};

static struct tm_win *frame_win(struct tm_net *n, int node, const struct tm_msg_hdr *h, int *ret_t)
{
    struct tm_win *w = tm_win_find(n->job, h->context);
    int t = w ? tm_win_member_of(w, h->dst_rank) : -1;
    if (t < 0) {
        tm_net_proto_error(n, node, "RMA frame for window %d rank %d: no such window here",
                           h->context, h->dst_rank);
        return NULL;
    }
    *ret_t = t;
    return w;
}

void *tm_rma_net_header(struct tm_job *j, int node, const struct tm_msg_hdr *h, void **ctx)
{
    struct tm_net *n = j->net;
    *ctx = NULL;
    if (!n || node < 0 || node >= n->nnodes || node == n->node) return NULL;
    const int kind = RMA_KIND(h->tag);
    if (kind == TM_RMA_ANSWER) {
        if (!h->rcookie) return NULL;
        struct rma_get *g = tm_xfer_get(&n->xfers, h->rcookie, TM_XFER_RMA_GET);
        if (!g || h->payload_len > g->len) {
            tm_net_proto_error(n, node, "RMA answer (rcookie %#llx, %u bytes) fits no operation",
                               (unsigned long long)h->rcookie, h->payload_len);
            return NULL;
        }
        return h->payload_len ? g->buf : NULL;
    }
    if (!h->payload_len) return NULL;
    int t;
    struct tm_win *w = frame_win(n, node, h, &t);
    if (!w) return NULL;
    struct rma_rx *rx = calloc(1, sizeof *rx);
    if (!rx) return NULL;
    rx->w = w;
    rx->t = t;
    *ctx = rx;
    if (kind == TM_RMA_PUT && !(h->tag & RMA_BLOCKS)) {
        rx->addr = tm_win_at(w, t, h->msg_len, h->payload_len);
        return rx->addr; /* NULL: out of the window, the payload is dropped */
    }
    rx->buf = malloc(h->payload_len);
    return rx->buf;
}

/* The origin's answer: a grant, a flush or unlock done, or a fetch's data (in g->buf; a
 * non-contiguous destination's is unpacked from there). */
static void answer_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h)
{
    const int err = (h->tag >> 8) & 0xff, counts = (h->tag & RMA_ANSWER_COUNTS) != 0;
    struct tm_rma_origin *org;
    struct tm_request *req = NULL;
    if (h->rcookie) {
        struct rma_get *g = tm_xfer_take(&n->xfers, h->rcookie, TM_XFER_RMA_GET);
        if (!g) return; /* reported by the header upcall */
        org = g->org;
        req = g->req;
        if (g->dt) {
            if (!err) tm_type_unpack(g->dst, g->dcount, g->dt, g->pos, g->tmp, h->payload_len);
            tm_type_release(g->dt);
        }
        free(g);
    } else {
        org = tm_xfer_get(&n->xfers, h->cookie, TM_XFER_RMA_ORIGIN);
        if (!org) {
            tm_net_proto_error(n, node, "RMA answer for an unknown origin %#llx",
                               (unsigned long long)h->cookie);
            return;
        }
    }
    if (err) {
        int z = 0;
        atomic_compare_exchange_strong(&org->err, &z, err);
    }
    struct tm_waker *wk = &org->owner->waker;
    if (req) {
        /* once done, its owner may free the request and take it again: read the owner first */
        struct tm_rank *owner = req->owner;
        tm_req_set_done(req, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, err);
        tm_wake(&owner->waker);
    }
    if (counts || h->rcookie) atomic_fetch_add_explicit(&org->answers, 1, memory_order_seq_cst);
    tm_wake(wk);
}

/* Releases the lock of type `type` on member t that an origin holds: 0, or MPI_ERR_RMA_SYNC
 * when no such lock is held. */
static int unlock_target(struct tm_win *w, int t, int type)
{
    struct tm_win_member *m = &w->m[t];
    int64_t v = atomic_load_explicit(&m->lockw, memory_order_relaxed);
    if ((type == MPI_LOCK_EXCLUSIVE && v != -1) || (type == MPI_LOCK_SHARED && v <= 0))
        return MPI_ERR_RMA_SYNC;
    tm_win_lock_release(w, m, type);
    return 0;
}

/* The end of a PUT or ACC: its error (an uncounted answer), and what its tag asks for after
 * it (RMA_THEN: a flush or unlock, counted). */
static void op_done(struct tm_net *n, struct tm_win *w, int t, int node, const struct tm_msg_hdr *h,
                    int err)
{
    const int then = RMA_THEN(h->tag);
    if (then == RMA_THEN_UNLOCK_SH || then == RMA_THEN_UNLOCK_EX) {
        int e =
            unlock_target(w, t, then == RMA_THEN_UNLOCK_EX ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED);
        if (!err) err = e;
    }
    if (err || then) answer(n, w, node, h, err, then != RMA_THEN_NONE, NULL, 0, NULL);
}

/* An operation whose payload names the target's pieces (a non-contiguous target datatype):
 * every piece checked against the window first (nothing applied if one is outside), then
 * applied in order; fetching kinds answer with the pieces' bytes in order. */
static void blocks_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h, struct tm_win *w,
                         int t, const char *buf)
{
    const int kind = RMA_KIND(h->tag), a = (h->tag >> 8) & 0xff, basic = (h->tag >> 16) & 0xff;
    const size_t plen = h->payload_len;
    struct rma_pieces ph;
    if (!buf || plen < sizeof ph) {
        if (kind == TM_RMA_PUT || kind == TM_RMA_ACC)
            op_done(n, w, t, node, h, MPI_ERR_NO_MEM);
        else
            answer(n, w, node, h, MPI_ERR_NO_MEM, 1, NULL, 0, NULL);
        return;
    }
    memcpy(&ph, buf, sizeof ph);
    ph.n = be32toh(ph.n);
    const size_t hl = sizeof ph + (size_t)ph.n * sizeof(struct rma_piece);
    if (ph.n > RMA_MAX_PIECES || hl > plen) {
        tm_net_proto_error(n, node, "RMA frame names %u pieces in %zu bytes", ph.n, plen);
        return;
    }
    const char *pcs = buf + sizeof ph, *data = buf + hl;
    const int has_data =
        kind == TM_RMA_PUT || kind == TM_RMA_ACC || (kind == TM_RMA_GACC && a != TM_OP_NO_OP);
    const int fetch = kind == TM_RMA_GET || kind == TM_RMA_GACC;
    size_t sum = 0;
    for (uint32_t i = 0; i < ph.n; i++) {
        struct rma_piece p;
        memcpy(&p, pcs + i * sizeof p, sizeof p);
        p.off = be64toh(p.off);
        p.len = be64toh(p.len);
        if (p.len > RMA_CHUNK || (sum += p.len) > RMA_CHUNK) {
            sum = SIZE_MAX;
            break;
        }
    }
    if (sum > RMA_CHUNK || (has_data ? plen - hl != sum : plen != hl)) {
        tm_net_proto_error(n, node, "RMA frame: its pieces' %zu bytes do not match its payload",
                           sum);
        return;
    }
    int err = 0;
    size_t es = 1, ps = 1;
    if (kind == TM_RMA_ACC || kind == TM_RMA_GACC) {
        es = basic < TM_T__COUNT ? tm_basic_size((enum tm_basic)basic) : 0;
        ps = basic < TM_T__COUNT ? tm_basic_psize((enum tm_basic)basic) : 0;
        if (!es || a >= TM_OP__COUNT || !tm_op_defined((enum tm_opkind)a, (enum tm_basic)basic))
            err = MPI_ERR_OP;
        /* the data is whole packed elements; a padded pair's pieces may split it (ps < es) */
        else if (sum % ps)
            err = MPI_ERR_OP;
    } else if (kind != TM_RMA_PUT && kind != TM_RMA_GET) {
        tm_net_proto_error(n, node, "RMA frame of kind %d names pieces", kind);
        return;
    }
    for (uint32_t i = 0; i < ph.n && !err; i++) {
        struct rma_piece p;
        memcpy(&p, pcs + i * sizeof p, sizeof p);
        p.off = be64toh(p.off);
        p.len = be64toh(p.len);
        if (ps == es && p.len % es)
            err = MPI_ERR_OP;
        else if (!tm_win_at(w, t, p.off, p.len) && p.len)
            err = MPI_ERR_RMA_RANGE;
    }
    char *res = NULL;
    if (!err && fetch && sum && !(res = malloc(sum))) err = MPI_ERR_NO_MEM;
    struct tm_rma_acc_walk acc;
    tm_rma_acc_walk_init(&acc, w, (enum tm_opkind)a, (enum tm_basic)basic, has_data ? data : NULL,
                         res);
    size_t pos = 0;
    for (uint32_t i = 0; i < ph.n && !err; i++) {
        struct rma_piece p;
        memcpy(&p, pcs + i * sizeof p, sizeof p);
        p.off = be64toh(p.off);
        p.len = be64toh(p.len);
        char *addr = tm_win_at(w, t, p.off, p.len);
        if (!p.len) continue;
        if (!addr) { /* a dynamic window's region detached meanwhile: misuse by the target */
            err = MPI_ERR_RMA_RANGE;
            break;
        }
        if (kind == TM_RMA_PUT)
            memcpy(addr, data + pos, p.len);
        else if (kind == TM_RMA_GET)
            memcpy(res + pos, addr, p.len);
        else
            tm_rma_acc_walk_piece(&acc, addr, p.len);
        pos += p.len;
    }
    if (!err && (kind == TM_RMA_ACC || kind == TM_RMA_GACC) && tm_rma_acc_walk_end(&acc))
        err = MPI_ERR_OP;
    if (fetch)
        answer(n, w, node, h, err, 1, res, err ? 0 : sum, res);
    else
        op_done(n, w, t, node, h, err);
    if (err) free(res);
}

/* An operation on member t of w (on this node): applied here, answered if it fetches.
 * Returns the window it acted on, NULL if h names none. */
static struct tm_win *op_apply(struct tm_net *n, int node, const struct tm_msg_hdr *h,
                               struct rma_rx *rx)
{
    int t;
    struct tm_win *w = rx ? rx->w : frame_win(n, node, h, &t);
    if (!w) return NULL;
    if (rx) t = rx->t;
    const int kind = RMA_KIND(h->tag), a = (h->tag >> 8) & 0xff, basic = (h->tag >> 16) & 0xff;
    const size_t es = basic < TM_T__COUNT ? tm_basic_size((enum tm_basic)basic) : 0;
    const uint64_t off = h->msg_len;
    char *addr;
    if (h->tag & RMA_BLOCKS) {
        blocks_frame(n, node, h, w, t, rx ? rx->buf : NULL);
        return w;
    }
    switch (kind) {
    case TM_RMA_PUT:
        op_done(n, w, t, node, h, h->payload_len && !(rx && rx->addr) ? MPI_ERR_RMA_RANGE : 0);
        return w;
    case TM_RMA_GET: {
        size_t len = (uint32_t)h->tag >> 8;
        addr = tm_win_at(w, t, off, len);
        if (!addr && len)
            answer(n, w, node, h, MPI_ERR_RMA_RANGE, 1, NULL, 0, NULL);
        else
            answer(n, w, node, h, 0, 1, addr, len, NULL);
        return w;
    }
    case TM_RMA_ACC:
    case TM_RMA_GACC:
    case TM_RMA_CAS: {
        const int fetch = kind != TM_RMA_ACC;
        size_t len = kind == TM_RMA_CAS ? es : h->payload_len;
        int err = 0;
        if (!es || a >= TM_OP__COUNT || h->payload_len % es ||
            (kind == TM_RMA_CAS && h->payload_len != 2 * es) ||
            !tm_op_defined((enum tm_opkind)a, (enum tm_basic)basic))
            err = MPI_ERR_OP;
        else if (h->payload_len && !(rx && rx->buf))
            err = MPI_ERR_NO_MEM;
        addr = err ? NULL : tm_win_at(w, t, off, len);
        if (!err && !addr && len) err = MPI_ERR_RMA_RANGE;
        void *res = NULL;
        if (!err && fetch && len && !(res = malloc(len))) err = MPI_ERR_NO_MEM;
        if (!err && kind == TM_RMA_CAS)
            tm_rma_cas_apply(w, (enum tm_basic)basic, rx->buf, (char *)rx->buf + es, addr, res);
        else if (!err)
            tm_rma_acc_apply(w, (enum tm_opkind)a, (enum tm_basic)basic, rx ? rx->buf : NULL, addr,
                             len / es, res);
        if (fetch)
            answer(n, w, node, h, err, 1, res, err ? 0 : len, res);
        else
            op_done(n, w, t, node, h, err);
        if (err) free(res);
        return w;
    }
    case TM_RMA_LOCK:
        lock_frame(n, w, t, node, h, a);
        return w;
    case TM_RMA_UNLOCK:
        answer(n, w, node, h, unlock_target(w, t, a), 1, NULL, 0, NULL);
        return w;
    case TM_RMA_FLUSH:
        answer(n, w, node, h, 0, 1, NULL, 0, NULL);
        return w;
    case TM_RMA_POST:
    case TM_RMA_COMPLETE: {
        /* PSCW (rma_sync_pscw.c): t is the origin a target posted to, or the target an origin
         * completed its access epoch on. */
        int from = tm_win_member_of(w, h->src_rank);
        if (from < 0) {
            tm_net_proto_error(n, node, "RMA %s from rank %d, not a member of window %d",
                               kind == TM_RMA_POST ? "POST" : "COMPLETE", h->src_rank, w->id);
            return w;
        }
        if (kind == TM_RMA_POST)
            atomic_fetch_add_explicit(&w->m[t].posts[from], 1, memory_order_seq_cst);
        else
            atomic_fetch_add_explicit(&w->m[t].completes, 1, memory_order_seq_cst);
        tm_wake(&tm_job_rank(n->job, h->dst_rank)->waker);
        return w;
    }
    default:
        tm_net_proto_error(n, node, "RMA frame of unknown kind %d", kind);
    }
    return w;
}

/* The links' accesses to a window (Put and Accumulate stores, Get answers written from it)
 * happen on a receive daemon or on a rank polling a link.  The target rank's own accesses are
 * ordered after them by messages that may come over other links and even through other
 * nodes (a fence's barrier), which a thread sanitizer cannot follow.  So each operation ends
 * with a release on the window that the target's synchronisation calls acquire
 * (tm_win_target_sync); Get answers still in the socket release replies_inflight when the
 * socket took them. */
static void op_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h, struct rma_rx *rx)
{
    struct tm_win *w = op_apply(n, node, h, rx);
    if (w) atomic_fetch_add_explicit(&w->target_seq, 1, memory_order_release);
}

void tm_rma_net_frame(struct tm_job *j, int node, const struct tm_msg_hdr *h, void *ctx)
{
    struct tm_net *n = j->net;
    struct rma_rx *rx = ctx;
    if (!n || node < 0 || node >= n->nnodes || node == n->node) {
        if (n) tm_net_proto_error(n, node, "RMA frame from a node that is not a peer");
        return;
    }
    if (RMA_KIND(h->tag) == TM_RMA_ANSWER)
        answer_frame(n, node, h);
    else
        op_frame(n, node, h, rx);
    if (rx) {
        free(rx->buf);
        free(rx);
    }
}
