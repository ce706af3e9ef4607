/* part.c — partitioned communication: the requests, their rounds and the MPI calls (part.h). */
#include "part.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "inbox.h"
#include "job.h"
#include "p2p.h"
#include "p2p_route.h"
#include "type.h"
#include "type_copy.h"
#include "wait.h"

/* The setup message a receiver sends its sender (part.h). */
struct part_setup {
    uint32_t chan;  /* first data tag, less TM_TAG_UB + 1 */
    int32_t parts;  /* the receiver's partition count */
    uint64_t bytes; /* its whole buffer in packed bytes */
};

enum { SETUP_NONE, SETUP_BUSY, SETUP_READY };

/* Receiver fields are owner-only but for `unpacked` (MPI_Parrived may run on any thread);
 * sender fields marked (any) are touched by the threads calling MPI_Pready. */
struct tm_part {
    int send;      /* 1: MPI_Psend_init, 0: MPI_Precv_init */
    int active;    /* started and not yet completed by Wait/Test (owner) */
    int started;   /* rounds started so far (owner) */
    int peer, tag; /* comm rank of the other side (MPI_PROC_NULL allowed), program's tag */
    MPI_Comm comm;
    void *buf;
    size_t count;            /* elements of t in the whole buffer (partitions * count) */
    const struct tm_type *t; /* held */
    int parts;               /* this side's partitions */
    size_t pbytes;           /* packed bytes of one of them */
    size_t bytes;            /* of the whole buffer */
    unsigned char *stage;    /* packed copy of a non-contiguous buffer, else NULL */

    /* receiver */
    uint32_t chan;
    struct part_setup out;           /* the setup message (lives while its send may be pending) */
    struct tm_request *setup_sq;     /* its send */
    struct tm_request **rq;          /* parts receives of the round, NULL when not posted */
    _Atomic unsigned char *unpacked; /* 0, 1 (being unpacked), 2: partition j is laid out */

    /* sender */
    struct part_setup in; /* the receiver's setup, once setup_rq is done */
    struct tm_request *setup_rq;
    _Atomic int have;             /* SETUP_*: in read and the arrays below made (any) */
    int rparts;                   /* the receiver's partitions (messages per round) */
    size_t rpbytes;               /* its partition size */
    int *ilo, *ihi;               /* message j needs my partitions ilo[j]..ihi[j] */
    int *jlo, *jhi;               /* my partition i feeds messages jlo[i]..jhi[i] */
    _Atomic int *need;            /* message j: partitions still to be ready (any) */
    _Atomic unsigned char *ready; /* my partition i is ready this round (any) */
    struct tm_request **sq;       /* message j's send, stored before nsent counts it (any) */
    _Atomic int nsent;
    _Atomic int err; /* the round's first failure (any) */
};

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

/* A stand-in of the communicator on the partitioned context: tm_send reads the context, the
 * member maps and the sender's rank during the call only (as the neighbourhood collectives'). */
struct part_comm {
    struct tm_comm c;
    struct tm_commref cr;
};
static int part_comm(struct tm_rank *me, MPI_Comm comm, struct part_comm *pc)
{
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    if (!cr) return -EINVAL;
    memset(pc, 0, sizeof *pc);
    pc->c.ctx = TM_CTX_PART(cr->c->ctx);
    pc->c.size = cr->c->size;
    pc->c.world_of = cr->c->world_of;
    pc->c.inter = cr->c->inter;
    pc->c.remote_size = cr->c->remote_size;
    pc->c.remote_of = cr->c->remote_of;
    pc->cr.c = &pc->c;
    pc->cr.rank = cr->rank;
    pc->cr.eh = MPI_ERRORS_RETURN;
    return 0;
}

static int data_tag(uint32_t chan, int j)
{
    return TM_TAG_UB + 1 + (int)((chan + (uint32_t)j) % TM_PART_TAGS);
}

/* ---- completion ---- */

int tm_part_inactive(const struct tm_request *r)
{
    return !r->part->active;
}

int tm_part_done(struct tm_request *r)
{
    struct tm_part *p = r->part;
    if (!p->active || p->peer == MPI_PROC_NULL) return 1;
    if (!p->send) {
        for (int j = 0; j < p->parts; j++)
            if (!tm_req_complete(p->rq[j])) return 0;
        return 1;
    }
    if (atomic_load_explicit(&p->have, memory_order_acquire) != SETUP_READY) return 0;
    if (atomic_load_explicit(&p->nsent, memory_order_acquire) != p->rparts) return 0;
    for (int j = 0; j < p->rparts; j++)
        if (p->sq[j] && !tm_req_complete(p->sq[j])) return 0;
    return 1;
}

/* Lays out receive partition j from the staging copy (non-contiguous types), once. */
static void unpack_part(struct tm_part *p, int j)
{
    unsigned char z = 0;
    if (!p->stage || !atomic_compare_exchange_strong(&p->unpacked[j], &z, 1)) return;
    size_t got = p->rq[j]->st_bytes;
    tm_type_unpack(p->buf, p->count, p->t, (size_t)j * p->pbytes, p->stage + (size_t)j * p->pbytes,
                   got);
    atomic_store_explicit(&p->unpacked[j], 2, memory_order_release);
}

static void round_status(struct tm_request *r, MPI_Status *status)
{
    struct tm_part *p = r->part;
    if (!p->active) {
        tm_status_empty(status);
        return;
    }
    if (p->peer == MPI_PROC_NULL) { /* as a receive from MPI_PROC_NULL (MPI 3.1 §3.11) */
        r->st_source = MPI_PROC_NULL;
        r->st_tag = MPI_ANY_TAG;
        r->st_bytes = 0;
        r->st_cancelled = 0;
        tm_req_status(r, status);
        return;
    }
    r->st_source = p->send ? MPI_ANY_SOURCE : p->peer;
    r->st_tag = p->send ? MPI_ANY_TAG : p->tag;
    r->st_cancelled = 0;
    size_t bytes = 0;
    if (p->send) {
        bytes = p->bytes;
    } else {
        for (int j = 0; j < p->parts; j++)
            bytes += p->rq[j]->st_bytes;
    }
    r->st_bytes = bytes;
    tm_req_status(r, status);
}

void tm_part_status(struct tm_request *r, MPI_Status *status)
{
    round_status(r, status);
}

static int round_error(struct tm_part *p)
{
    int err = atomic_load_explicit(&p->err, memory_order_relaxed);
    int n = p->send ? p->rparts : p->parts;
    struct tm_request **q = p->send ? p->sq : p->rq;
    for (int j = 0; j < n && !err; j++)
        err = q[j] ? q[j]->st_error : 0;
    return err;
}

int tm_part_finish(struct tm_rank *me, MPI_Request *rp, MPI_Status *status)
{
    struct tm_request *r = *rp;
    struct tm_part *p = r->part;
    round_status(r, status);
    if (!p->active) return MPI_SUCCESS;
    int err = 0;
    if (p->peer != MPI_PROC_NULL) {
        err = round_error(p);
        int n = p->send ? p->rparts : p->parts;
        struct tm_request **q = p->send ? p->sq : p->rq;
        for (int j = 0; j < n; j++) {
            if (!p->send) unpack_part(p, j);
            if (q[j]) tm_req_free(me, q[j]);
            q[j] = NULL;
        }
    }
    p->active = 0;
    return err;
}

/* ---- the requests ---- */

static void part_release(struct tm_rank *me, struct tm_part *p)
{
    if (p->setup_rq) {
        if (!tm_req_complete(p->setup_rq)) tm_cancel_recv(me, p->setup_rq);
        tm_req_free(me, p->setup_rq);
    }
    if (p->setup_sq) tm_req_free(me, p->setup_sq); /* orphaned until its message left */
    tm_type_release(p->t);
    free(p->stage);
    free(p->rq);
    free((void *)p->unpacked);
    free(p->ilo);
    free(p->ihi);
    free(p->jlo);
    free(p->jhi);
    free((void *)p->need);
    free((void *)p->ready);
    free(p->sq);
    free(p);
}

int tm_part_free(struct tm_rank *me, struct tm_request *r)
{
    struct tm_part *p = r->part;
    if (p->active)
        return tm_err(me, p->comm, MPI_ERR_REQUEST, "MPI_Request_free",
                      "the partitioned request is active: complete it with MPI_Wait or MPI_Test "
                      "first");
    /* The setup message must not stay behind in a queue where a later request of the same
     * pair and tag would take it: a receiver frees its own only once it left. */
    part_release(me, p);
    tm_req_free(me, r);
    return MPI_SUCCESS;
}

/* Checks of both inits (MPI_Psend_init / MPI_Precv_init: MPI 4.0 §4.2.2). */
static int init_check(struct tm_rank *me, const char *fn, const void *buf, int partitions,
                      MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                      MPI_Request *request, const struct tm_type **rt, size_t *pbytes)
{
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (TM_UNLIKELY(!cr))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (TM_UNLIKELY(!request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    if (TM_UNLIKELY(partitions < 1))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "invalid partition count %d (at least 1)",
                      partitions);
    if (TM_UNLIKELY(count < 0))
        return tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid count %lld", (long long)count);
    const struct tm_type *t = tm_type_get(dt);
    if (TM_UNLIKELY(!t)) return tm_err(me, comm, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
    size_t total;
    if (TM_UNLIKELY(__builtin_mul_overflow((size_t)count, (size_t)partitions, &total) ||
                    __builtin_mul_overflow(total, t->psize, pbytes) ||
                    *pbytes > (size_t)PTRDIFF_MAX))
        return tm_err(me, comm, MPI_ERR_COUNT, fn,
                      "%d partitions of %lld elements of %s exceed the address space", partitions,
                      (long long)count, t->name);
    if (TM_UNLIKELY(tm_buf_missing(buf, (long long)total, t)))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn, "buffer is NULL with %zu elements", total);
    /* Wildcards are not allowed: a partitioned pair is one channel between two ranks. */
    if (TM_UNLIKELY(peer >= tm_comm_peer_size(cr->c) || (peer < 0 && peer != MPI_PROC_NULL)))
        return tm_err(me, comm, MPI_ERR_RANK, fn, "invalid rank %d", peer);
    if (TM_UNLIKELY(tag < 0 || tag > TM_TAG_UB))
        return tm_err(me, comm, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    *rt = t;
    *pbytes = (size_t)count * t->psize;
    return MPI_SUCCESS;
}

static int part_new(struct tm_rank *me, const char *fn, int send, const void *buf, int partitions,
                    MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                    MPI_Request *request, struct tm_part **ret)
{
    const struct tm_type *t = NULL;
    size_t pbytes = 0;
    int err = init_check(me, fn, buf, partitions, count, dt, peer, tag, comm, request, &t, &pbytes);
    if (err) return err;
    struct tm_part *p = calloc(1, sizeof *p);
    struct tm_request *r = p ? tm_req_alloc(me, TM_REQ_PART) : NULL;
    if (!r) {
        free(p);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    p->send = send;
    p->peer = peer;
    p->tag = tag;
    p->comm = comm;
    p->buf = (void *)buf;
    p->count = (size_t)count * (size_t)partitions;
    p->t = t;
    tm_type_hold(t);
    p->parts = partitions;
    p->pbytes = pbytes;
    p->bytes = pbytes * (size_t)partitions;
    r->part = p;
    r->comm = comm;
    /* The handle is never pending itself (tm_part_done says when a round is complete). */
    atomic_store_explicit(&r->done, 1, memory_order_relaxed);
    if (tm_type_moved(t) && p->bytes) {
        p->stage = malloc(p->bytes);
        if (!p->stage) goto nomem;
    }
    *ret = p;
    *request = r;
    return MPI_SUCCESS;
nomem:
    part_release(me, p);
    tm_req_free(me, r);
    return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
}

static int psend_init_x(const char *fn, const void *buf, int partitions, MPI_Count count,
                        MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    NEED_ME(fn);
    struct tm_part *p = NULL;
    int err = part_new(me, fn, 1, buf, partitions, count, dt, dest, tag, comm, request, &p);
    if (err || dest == MPI_PROC_NULL) return err;
    p->ready = calloc((size_t)partitions, sizeof *p->ready);
    p->jlo = malloc(sizeof *p->jlo * (size_t)partitions);
    p->jhi = malloc(sizeof *p->jhi * (size_t)partitions);
    p->setup_rq = tm_req_alloc(me, TM_REQ_RECV);
    if (!p->ready || !p->jlo || !p->jhi || !p->setup_rq) {
        part_release(me, p);
        tm_req_free(me, *request);
        *request = MPI_REQUEST_NULL;
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    p->setup_rq->comm = comm;
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    tm_recv_ctx(me, TM_CTX_PART(cr->c->ctx), &p->in, sizeof p->in, dest, tag, p->setup_rq);
    return MPI_SUCCESS;
}

static int precv_init_x(const char *fn, void *buf, int partitions, MPI_Count count, MPI_Datatype dt,
                        int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    NEED_ME(fn);
    struct tm_part *p = NULL;
    int err = part_new(me, fn, 0, buf, partitions, count, dt, source, tag, comm, request, &p);
    if (err || source == MPI_PROC_NULL) return err;
    p->rq = calloc((size_t)partitions, sizeof *p->rq);
    p->unpacked = calloc((size_t)partitions, sizeof *p->unpacked);
    p->setup_sq = tm_req_alloc(me, TM_REQ_SEND);
    struct part_comm pc;
    if (!p->rq || !p->unpacked || !p->setup_sq || part_comm(me, comm, &pc)) {
        part_release(me, p);
        tm_req_free(me, *request);
        *request = MPI_REQUEST_NULL;
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    p->setup_sq->comm = comm;
    p->chan =
        atomic_fetch_add_explicit(&me->part_next, (uint32_t)partitions, memory_order_relaxed) %
        TM_PART_TAGS;
    p->out = (struct part_setup){p->chan, partitions, p->bytes};
    int rc =
        tm_send(me, &pc.cr, &p->out, sizeof p->out, source, tag, TM_SEND_STANDARD, p->setup_sq);
    if (rc < 0) {
        atomic_store_explicit(&p->setup_sq->done, 1, memory_order_relaxed);
        part_release(me, p);
        tm_req_free(me, *request);
        *request = MPI_REQUEST_NULL;
        return tm_err(me, comm, rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER, fn,
                      "cannot send the partitioned setup to rank %d: %s", source, strerror(-rc));
    }
    return MPI_SUCCESS;
}

TM_API int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints of its own: any info is accepted (MPI 4.0 §4.2.2) */
    return psend_init_x("MPI_Psend_init", buf, partitions, count, datatype, dest, tag, comm,
                        request);
}
TM_ALIAS(Psend_init)

TM_API int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                           int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return precv_init_x("MPI_Precv_init", buf, partitions, count, datatype, source, tag, comm,
                        request);
}
TM_ALIAS(Precv_init)

/* ---- the sender's side: the receiver's partitioning ---- */

/* Message j's byte range [lo, hi) of my buffer: the receiver's partition j, the last one
 * running to my end when I have more (the receiver then sees its receive truncated). */
static void msg_range(const struct tm_part *p, int j, size_t *lo, size_t *hi)
{
    size_t a = (size_t)j * p->rpbytes, b = a + p->rpbytes;
    if (j == p->rparts - 1 && p->bytes > b) b = p->bytes;
    *lo = a < p->bytes ? a : p->bytes;
    *hi = b < p->bytes ? b : p->bytes;
}

/* Makes the maps between my partitions and the receiver's from its setup. */
static int setup_maps(struct tm_part *p)
{
    p->rparts = p->in.parts;
    p->rpbytes = p->rparts > 0 ? (size_t)(p->in.bytes / (uint64_t)p->rparts) : 0;
    size_t n = (size_t)p->rparts;
    p->ilo = malloc(sizeof *p->ilo * n);
    p->ihi = malloc(sizeof *p->ihi * n);
    p->need = malloc(sizeof *p->need * n);
    p->sq = calloc(n, sizeof *p->sq);
    if (!p->ilo || !p->ihi || !p->need || !p->sq) return MPI_ERR_NO_MEM;
    for (int i = 0; i < p->parts; i++)
        p->jlo[i] = p->rparts, p->jhi[i] = -1;
    for (int j = 0; j < p->rparts; j++) {
        size_t lo, hi;
        msg_range(p, j, &lo, &hi);
        int a, b;
        if (hi > lo && p->pbytes) {
            a = (int)(lo / p->pbytes);
            b = (int)((hi - 1) / p->pbytes);
        } else { /* an empty message: sent with the partition at its proportional place */
            a = b = (int)((long long)j * p->parts / p->rparts);
        }
        p->ilo[j] = a;
        p->ihi[j] = b;
        for (int i = a; i <= b; i++) {
            if (j < p->jlo[i]) p->jlo[i] = j;
            if (j > p->jhi[i]) p->jhi[i] = j;
        }
    }
    return MPI_SUCCESS;
}

static void round_reset(struct tm_part *p)
{
    for (int i = 0; i < p->parts; i++)
        atomic_store_explicit(&p->ready[i], 0, memory_order_relaxed);
    for (int j = 0; j < p->rparts; j++)
        atomic_store_explicit(&p->need[j], p->ihi[j] - p->ilo[j] + 1, memory_order_relaxed);
    atomic_store_explicit(&p->nsent, 0, memory_order_relaxed);
    atomic_store_explicit(&p->err, 0, memory_order_relaxed);
}

static int setup_arrived(void *arg)
{
    struct tm_part *p = arg;
    return tm_req_complete(p->setup_rq) ||
           atomic_load_explicit(&p->have, memory_order_acquire) == SETUP_READY;
}
static int setup_ready(void *arg)
{
    struct tm_part *p = arg;
    return atomic_load_explicit(&p->have, memory_order_acquire) == SETUP_READY;
}

/* The receiver's setup, waited for if it has not come (the first round's first Pready). */
static int need_setup(struct tm_rank *me, const char *fn, struct tm_part *p, int block)
{
    if (TM_LIKELY(atomic_load_explicit(&p->have, memory_order_acquire) == SETUP_READY)) return 0;
    if (!block && !tm_req_complete(p->setup_rq)) return 0;
    tm_wait_prog(me, setup_arrived, p);
    int none = SETUP_NONE;
    if (!atomic_compare_exchange_strong(&p->have, &none, SETUP_BUSY)) {
        tm_wait(me, setup_ready, p); /* another thread of the rank reads it */
        return 0;
    }
    int err = p->setup_rq->st_error;
    if (!err && p->setup_rq->st_bytes != sizeof p->in) err = MPI_ERR_INTERN;
    if (!err) err = setup_maps(p);
    if (err) {
        atomic_store_explicit(&p->have, SETUP_NONE, memory_order_release);
        return tm_err(me, p->comm, err, fn, "no partitioned receive setup from rank %d", p->peer);
    }
    round_reset(p);
    atomic_store_explicit(&p->have, SETUP_READY, memory_order_release);
    return 0;
}

/* Sends message j (all its partitions are ready); any thread of the rank. */
static void send_msg(struct tm_rank *me, struct tm_part *p, int j)
{
    size_t lo, hi;
    msg_range(p, j, &lo, &hi);
    const unsigned char *src = (const unsigned char *)p->buf + lo;
    if (p->stage) {
        tm_type_pack(p->stage + lo, p->buf, p->count, p->t, lo, hi - lo);
        src = p->stage + lo;
    }
    struct tm_request *q = tm_req_alloc(me, TM_REQ_SEND);
    struct part_comm pc;
    int rc = q ? part_comm(me, p->comm, &pc) : -ENOMEM;
    if (!rc) {
        q->comm = p->comm;
        rc = tm_send(me, &pc.cr, src, hi - lo, p->peer, data_tag(p->in.chan, j), TM_SEND_STANDARD,
                     q);
    }
    if (rc < 0) {
        int e = rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER, z = 0;
        atomic_compare_exchange_strong(&p->err, &z, e); /* a NULL q counts as done */
    }
    if (rc < 0 && q) { /* stands for the message in the round: done, with the failure */
        q->st_error = atomic_load(&p->err);
        atomic_store_explicit(&q->done, 1, memory_order_release);
    }
    p->sq[j] = q;
    atomic_fetch_add_explicit(&p->nsent, 1, memory_order_release);
}

static struct tm_part *pready_req(struct tm_rank *me, const char *fn, MPI_Request request, int *err)
{
    if (TM_UNLIKELY(!request || request->kind != TM_REQ_PART || !request->part->send)) {
        *err = tm_err(me, request ? request->comm : MPI_COMM_WORLD, MPI_ERR_REQUEST, fn,
                      "not a partitioned send request (MPI_Psend_init)");
        return NULL;
    }
    struct tm_part *p = request->part;
    if (TM_UNLIKELY(!p->active)) {
        *err = tm_err(me, p->comm, MPI_ERR_REQUEST, fn,
                      "the partitioned request is inactive (MPI_Start it first)");
        return NULL;
    }
    *err = p->peer == MPI_PROC_NULL ? 0 : need_setup(me, fn, p, 1);
    return *err ? NULL : p;
}

static int pready_one(struct tm_rank *me, const char *fn, struct tm_part *p, int i)
{
    if (TM_UNLIKELY(i < 0 || i >= p->parts))
        return tm_err(me, p->comm, MPI_ERR_ARG, fn, "partition %d out of range [0, %d)", i,
                      p->parts);
    if (p->peer == MPI_PROC_NULL) return MPI_SUCCESS;
    if (TM_UNLIKELY(atomic_exchange_explicit(&p->ready[i], 1, memory_order_acq_rel)))
        return tm_err(me, p->comm, MPI_ERR_ARG, fn, "partition %d is already ready in this round",
                      i);
    for (int j = p->jlo[i]; j <= p->jhi[i]; j++)
        if (i >= p->ilo[j] && i <= p->ihi[j] &&
            atomic_fetch_sub_explicit(&p->need[j], 1, memory_order_acq_rel) == 1)
            send_msg(me, p, j);
    return MPI_SUCCESS;
}

TM_API int PMPI_Pready(int partition, MPI_Request request)
{
    NEED_ME("MPI_Pready");
    int err;
    struct tm_part *p = pready_req(me, "MPI_Pready", request, &err);
    return p ? pready_one(me, "MPI_Pready", p, partition) : err;
}
TM_ALIAS(Pready)

TM_API int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    const char *fn = "MPI_Pready_range";
    NEED_ME(fn);
    int err;
    struct tm_part *p = pready_req(me, fn, request, &err);
    if (!p) return err;
    if (TM_UNLIKELY(partition_low < 0 || partition_high >= p->parts ||
                    partition_low > partition_high))
        return tm_err(me, p->comm, MPI_ERR_ARG, fn, "partition range [%d, %d] not in [0, %d)",
                      partition_low, partition_high, p->parts);
    for (int i = partition_low; i <= partition_high; i++)
        if ((err = pready_one(me, fn, p, i))) return err;
    return MPI_SUCCESS;
}
TM_ALIAS(Pready_range)

TM_API int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    const char *fn = "MPI_Pready_list";
    NEED_ME(fn);
    int err;
    struct tm_part *p = pready_req(me, fn, request, &err);
    if (!p) return err;
    if (TM_UNLIKELY(length < 0 || (length > 0 && !array_of_partitions)))
        return tm_err(me, p->comm, MPI_ERR_ARG, fn, "invalid partition list (length %d)", length);
    /* All checked first: a bad entry marks none ready. */
    for (int k = 0; k < length; k++)
        if (TM_UNLIKELY(array_of_partitions[k] < 0 || array_of_partitions[k] >= p->parts))
            return tm_err(me, p->comm, MPI_ERR_ARG, fn,
                          "partition %d (entry %d) out of range "
                          "[0, %d)",
                          array_of_partitions[k], k, p->parts);
    for (int k = 0; k < length; k++)
        if ((err = pready_one(me, fn, p, array_of_partitions[k]))) return err;
    return MPI_SUCCESS;
}
TM_ALIAS(Pready_list)

/* ---- the receiver's side ---- */

TM_API int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    const char *fn = "MPI_Parrived";
    NEED_ME(fn);
    if (TM_UNLIKELY(!request || request->kind != TM_REQ_PART || request->part->send))
        return tm_err(me, request ? request->comm : MPI_COMM_WORLD, MPI_ERR_REQUEST, fn,
                      "not a partitioned receive request (MPI_Precv_init)");
    struct tm_part *p = request->part;
    if (TM_UNLIKELY(!flag)) return tm_err(me, p->comm, MPI_ERR_ARG, fn, "flag is NULL");
    if (TM_UNLIKELY(partition < 0 || partition >= p->parts))
        return tm_err(me, p->comm, MPI_ERR_ARG, fn, "partition %d out of range [0, %d)", partition,
                      p->parts);
    /* An inactive request has nothing pending: its partitions are all there (MPI 4.1 §4.2.2). */
    if (!p->active || p->peer == MPI_PROC_NULL) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    struct tm_request *q = p->rq[partition];
    if (!tm_req_complete(q)) {
        tm_inbox_poll(me);
        tm_progress_poll(me);
    }
    if (!tm_req_complete(q)) {
        *flag = 0;
        tm_poll_idle(me); /* a rank sharing a carrier lets the sender run */
        return MPI_SUCCESS;
    }
    unpack_part(p, partition);
    *flag = !p->stage || atomic_load_explicit(&p->unpacked[partition], memory_order_acquire) == 2;
    return MPI_SUCCESS;
}
TM_ALIAS(Parrived)

/* ---- MPI_Start ---- */

int tm_part_start(struct tm_rank *me, const char *fn, struct tm_request *r)
{
    struct tm_part *p = r->part;
    if (TM_UNLIKELY(p->active))
        return tm_err(me, p->comm, MPI_ERR_REQUEST, fn, "the request is already active");
    if (p->peer == MPI_PROC_NULL) {
        p->active = 1;
        return MPI_SUCCESS;
    }
    struct tm_commref *cr = tm_comm_get(&me->comms, p->comm);
    if (TM_UNLIKELY(!cr))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "the request's communicator is freed");
    if (p->send) {
        int err = need_setup(me, fn, p, 0); /* read it now if it came, else at the first Pready */
        if (err) return err;
        if (p->started && atomic_load_explicit(&p->have, memory_order_acquire) == SETUP_READY)
            round_reset(p);
    } else {
        int ctx = TM_CTX_PART(cr->c->ctx);
        for (int j = 0; j < p->parts; j++) {
            struct tm_request *q = tm_req_alloc(me, TM_REQ_RECV);
            if (!q) {
                for (int k = 0; k < j; k++) {
                    tm_cancel_recv(me, p->rq[k]);
                    tm_wait(me, tm_req_done_cond, p->rq[k]);
                    tm_req_free(me, p->rq[k]);
                    p->rq[k] = NULL;
                }
                return tm_err(me, p->comm, MPI_ERR_NO_MEM, fn, "out of memory");
            }
            q->comm = p->comm;
            unsigned char *dst =
                (p->stage ? p->stage : (unsigned char *)p->buf) + (size_t)j * p->pbytes;
            atomic_store_explicit(&p->unpacked[j], 0, memory_order_relaxed);
            p->rq[j] = q;
            tm_recv_ctx(me, ctx, dst, p->pbytes, p->peer, data_tag(p->chan, j), q);
        }
    }
    p->started++;
    p->active = 1;
    return MPI_SUCCESS;
}
