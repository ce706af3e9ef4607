/* persist.c — persistent point-to-point requests, MPI_Start/Startall, MPI_Isendrecv and
 * MPI_Isendrecv_replace (persist.h). */
#include "persist.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm_idup.h"
#include "errh.h"
#include "job.h"
#include "nbr.h"
#include "p2p.h"
#include "p2p_api.h"
#include "part.h"
#include "type.h"
#include "type_copy.h"

/* Owner-only (persist.h). */
struct tm_preq {
    tm_pstart_fn start;        /* PERSIST */
    tm_pfree_fn on_free;       /* PERSIST: NULL, or told when the request is freed */
    struct tm_request *inner;  /* PERSIST: the started operation, NULL: inactive; PAIR: recv */
    struct tm_request *inner2; /* PAIR: the send */
    void *tmp;                 /* PAIR of Isendrecv_replace: the receive's buffer ... */
    void *dst;                 /* ... copied here when both are complete */
    const struct tm_type *dt;  /* ... unpacked as dcount of dt (held) if dt is not contiguous */
    size_t dcount;
    MPI_Datatype held; /* PERSIST point-to-point: a handle of its own for a derived type
                        * (tm_type_handle_hold), so the program may free its handle after the
                        * *_init (MPI 3.1 §4.1.9); dropped with the request */
    _Alignas(16) unsigned char args[];
};

int tm_req_compound_done(struct tm_request *r)
{
    if (r->kind == TM_REQ_GREQ) return atomic_load_explicit(&r->done, memory_order_seq_cst);
    if (r->kind == TM_REQ_MULTI) return tm_nbr_done(r);
    if (r->kind == TM_REQ_IDUP) return tm_idup_done(r);
    if (r->kind == TM_REQ_PART) return tm_part_done(r);
    struct tm_preq *p = r->pr;
    if (r->kind == TM_REQ_PERSIST) return !p->inner || tm_req_complete(p->inner);
    return tm_req_complete(p->inner) && tm_req_complete(p->inner2);
}

int tm_preq_inactive(const struct tm_request *r)
{
    return !r->pr->inner;
}

int tm_preq_new(struct tm_rank *me, const char *fn, MPI_Comm comm, tm_pstart_fn start,
                const void *args, size_t size, MPI_Request *request)
{
    if (TM_UNLIKELY(!request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    struct tm_preq *p = malloc(sizeof *p + size);
    struct tm_request *r = p ? tm_req_alloc(me, TM_REQ_PERSIST) : NULL;
    if (!r) {
        free(p);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    memset(p, 0, sizeof *p);
    p->start = start;
    memcpy(p->args, args, size);
    r->pr = p;
    r->comm = comm;
    /* The handle itself is never pending: the pool may take it back at once when freed. */
    atomic_store_explicit(&r->done, 1, memory_order_relaxed);
    *request = r;
    return MPI_SUCCESS;
}

void tm_preq_on_free(struct tm_request *r, tm_pfree_fn fn)
{
    ((struct tm_preq *)r->pr)->on_free = fn;
}

static void status_of(struct tm_request *q, MPI_Status *status)
{
    if (q && q->kind == TM_REQ_MULTI)
        tm_nbr_status(q, status);
    else if (q)
        tm_req_status(q, status);
    else
        tm_status_empty(status);
}

void tm_preq_status(struct tm_request *r, MPI_Status *status)
{
    struct tm_preq *p = r->pr;
    status_of(p->inner, status);
}

/* The receive of a PAIR is done: Isendrecv_replace's data goes where the program wants it. */
static void pair_release(struct tm_rank *me, struct tm_preq *p)
{
    if (p->tmp) {
        size_t got = p->inner->st_bytes;
        if (got && p->dt)
            tm_type_unpack(p->dst, p->dcount, p->dt, 0, p->tmp, got);
        else if (got)
            memcpy(p->dst, p->tmp, got);
        free(p->tmp);
    }
    tm_type_release(p->dt);
    tm_req_free(me, p->inner);
    tm_req_free(me, p->inner2);
    free(p);
}

int tm_preq_finish(struct tm_rank *me, MPI_Request *rp, MPI_Status *status)
{
    struct tm_request *r = *rp;
    struct tm_preq *p = r->pr;
    if (r->kind == TM_REQ_PERSIST) {
        struct tm_request *q = p->inner;
        if (q && q->kind == TM_REQ_MULTI) { /* a persistent neighbourhood collective */
            p->inner = NULL;
            return tm_nbr_finish(me, q, status);
        }
        status_of(q, status);
        if (!q) return MPI_SUCCESS;
        int err = q->st_error;
        p->inner = NULL;
        tm_req_free(me, q);
        return err;
    }
    int err = p->inner->st_error ? p->inner->st_error : p->inner2->st_error;
    tm_req_status(p->inner, status);
    pair_release(me, p);
    tm_req_free(me, r);
    *rp = MPI_REQUEST_NULL;
    return err;
}

void tm_preq_free(struct tm_rank *me, struct tm_request *r)
{
    struct tm_preq *p = r->pr;
    if (r->kind == TM_REQ_PAIR) {
        /* Isendrecv_replace's receive writes into tmp until it completes: only then can tmp
         * go (and be copied, as the program expects the data in its buffer). */
        if (p->tmp) tm_wait(me, tm_req_done_cond, p->inner);
        pair_release(me, p);
    } else {
        /* An active operation completes on its own (MPI 3.1 §3.7.3); its request then goes
         * back to the pool (request.c orphans). */
        if (p->inner && p->inner->kind == TM_REQ_MULTI)
            tm_nbr_free(me, p->inner);
        else if (p->inner)
            tm_req_free(me, p->inner);
        if (p->held != MPI_DATATYPE_NULL) tm_type_handle_drop(me, p->held);
        if (p->on_free) p->on_free(p->args);
        free(p);
    }
    tm_req_free(me, r);
}

void tm_preq_cancel(struct tm_rank *me, struct tm_request *r)
{
    struct tm_preq *p = r->pr;
    if (p->inner) tm_req_cancel_op(me, p->inner);
    if (r->kind == TM_REQ_PAIR) tm_req_cancel_op(me, p->inner2);
}

/* ---- MPI_Start ---- */

static int start_one(struct tm_rank *me, const char *fn, MPI_Request *rp)
{
    if (TM_UNLIKELY(!rp || !*rp))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "request is MPI_REQUEST_NULL");
    struct tm_request *r = *rp;
    if (r->kind == TM_REQ_PART) return tm_part_start(me, fn, r);
    if (TM_UNLIKELY(r->kind != TM_REQ_PERSIST))
        return tm_err(me, r->comm, MPI_ERR_REQUEST, fn, "not a persistent request");
    struct tm_preq *p = r->pr;
    if (TM_UNLIKELY(p->inner))
        return tm_err(me, r->comm, MPI_ERR_REQUEST, fn, "the request is already active");
    MPI_Request q = MPI_REQUEST_NULL;
    int err = p->start(p->args, &q);
    if (err == MPI_SUCCESS) p->inner = q;
    return err;
}

TM_API int PMPI_Start(MPI_Request *request)
{
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, "MPI_Start", TM_ERR_NOINIT);
    return start_one(me, "MPI_Start", request);
}
TM_ALIAS(Start)

TM_API int PMPI_Startall(int count, MPI_Request requests[])
{
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, "MPI_Startall", TM_ERR_NOINIT);
    if (TM_UNLIKELY(count < 0 || (count > 0 && !requests)))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Startall", "invalid request array");
    /* Check every handle first: a bad one starts none (nothing half-started to unwind). */
    for (int i = 0; i < count; i++) {
        struct tm_request *r = requests[i];
        int part = r && r->kind == TM_REQ_PART;
        if (!r || (!part && r->kind != TM_REQ_PERSIST) ||
            (part ? !tm_part_inactive(r) : r->pr->inner != NULL))
            return tm_err(me, r ? r->comm : MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Startall",
                          "request %d is %s", i,
                          !r                                   ? "MPI_REQUEST_NULL"
                          : !part && r->kind != TM_REQ_PERSIST ? "not persistent"
                                                               : "already active");
    }
    for (int i = 0; i < count; i++) {
        int err = start_one(me, "MPI_Startall", &requests[i]);
        if (err) return err;
    }
    return MPI_SUCCESS;
}
TM_ALIAS(Startall)

/* ---- persistent point-to-point ---- */

typedef int (*isend_fn)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

struct p2p_args {
    isend_fn isend; /* NULL: a receive */
    void *buf;
    MPI_Count count;
    MPI_Datatype dt;
    int peer, tag;
    MPI_Comm comm;
};

static int p2p_start(void *args, MPI_Request *inner)
{
    const struct p2p_args *a = args;
    if (a->isend) return a->isend(a->buf, a->count, a->dt, a->peer, a->tag, a->comm, inner);
    return PMPI_Irecv_c(a->buf, a->count, a->dt, a->peer, a->tag, a->comm, inner);
}

static int p2p_init(const char *fn, isend_fn isend, const void *buf, MPI_Count count,
                    MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPI_Request *request)
{
    struct tm_rank *me = tm_self();
    int err = tm_p2p_check(me, fn, comm, buf, count, dt, peer, tag, isend == NULL);
    if (TM_UNLIKELY(err)) return err;
    MPI_Datatype h = dt;
    err = tm_type_handle_hold(me, dt, &h);
    if (TM_UNLIKELY(err)) return tm_err(me, comm, err, fn, "out of memory");
    struct p2p_args a = {isend, (void *)buf, count, h, peer, tag, comm};
    err = tm_preq_new(me, fn, comm, p2p_start, &a, sizeof a, request);
    if (err) {
        tm_type_handle_drop(me, h);
        return err;
    }
    if (h != dt) ((struct tm_preq *)(*request)->pr)->held = h;
    return MPI_SUCCESS;
}

static int send_init_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                       int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return p2p_init(tm_fn, PMPI_Isend_c, buf, count, datatype, dest, tag, comm, request);
}
TM_API int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm, MPI_Request *request)
{
    return send_init_x("MPI_Send_init", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Send_init)

TM_API int PMPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_init_x("MPI_Send_init_c", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Send_init_c)

static int ssend_init_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                        int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return p2p_init(tm_fn, PMPI_Issend_c, buf, count, datatype, dest, tag, comm, request);
}
TM_API int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request *request)
{
    return ssend_init_x("MPI_Ssend_init", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Ssend_init)

TM_API int PMPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int tag, MPI_Comm comm, MPI_Request *request)
{
    return ssend_init_x("MPI_Ssend_init_c", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Ssend_init_c)

static int rsend_init_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                        int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return p2p_init(tm_fn, PMPI_Irsend_c, buf, count, datatype, dest, tag, comm, request);
}
TM_API int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request *request)
{
    return rsend_init_x("MPI_Rsend_init", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Rsend_init)

TM_API int PMPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int tag, MPI_Comm comm, MPI_Request *request)
{
    return rsend_init_x("MPI_Rsend_init_c", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Rsend_init_c)

static int bsend_init_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                        int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return p2p_init(tm_fn, PMPI_Ibsend_c, buf, count, datatype, dest, tag, comm, request);
}
TM_API int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request *request)
{
    return bsend_init_x("MPI_Bsend_init", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Bsend_init)

TM_API int PMPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int tag, MPI_Comm comm, MPI_Request *request)
{
    return bsend_init_x("MPI_Bsend_init_c", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Bsend_init_c)

static int recv_init_x(const char *tm_fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                       int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    return p2p_init(tm_fn, NULL, buf, count, datatype, source, tag, comm, request);
}
TM_API int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Request *request)
{
    return recv_init_x("MPI_Recv_init", buf, count, datatype, source, tag, comm, request);
}
TM_ALIAS(Recv_init)

TM_API int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                            MPI_Comm comm, MPI_Request *request)
{
    return recv_init_x("MPI_Recv_init_c", buf, count, datatype, source, tag, comm, request);
}
TM_ALIAS(Recv_init_c)

/* ---- MPI_Isendrecv, MPI_Isendrecv_replace (MPI 4.0 §3.10) ---- */

static int pair_start(struct tm_rank *me, const char *fn, const void *sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                      MPI_Comm comm, void *tmp, const struct tm_type *layout, MPI_Request *request)
{
    struct tm_preq *p = calloc(1, sizeof *p);
    struct tm_request *r = p ? tm_req_alloc(me, TM_REQ_PAIR) : NULL;
    if (!r) {
        free(p);
        free(tmp);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    atomic_store_explicit(&r->done, 1, memory_order_relaxed); /* as in tm_preq_new */
    r->comm = comm;
    r->pr = p;
    p->tmp = tmp;
    p->dst = tmp ? recvbuf : NULL;
    /* A non-contiguous layout is received packed (any message may be received as MPI_PACKED)
     * and unpacked into the program's layout at the end: tmp holds no gaps. */
    if (layout) {
        p->dt = layout;
        p->dcount = (size_t)recvcount;
        tm_type_hold(layout);
        recvcount = (MPI_Count)((size_t)recvcount * layout->psize);
        recvtype = MPI_PACKED;
    }
    /* The receive first, as MPI_Sendrecv does: two ranks exchanging large messages both find
     * theirs posted. */
    int err =
        PMPI_Irecv_c(tmp ? tmp : recvbuf, recvcount, recvtype, source, recvtag, comm, &p->inner);
    if (!err) {
        err = PMPI_Isend_c(sendbuf, sendcount, sendtype, dest, sendtag, comm, &p->inner2);
        if (err) { /* take the receive back (it may have matched: then wait for it) */
            tm_req_cancel_op(me, p->inner);
            tm_wait(me, tm_req_done_cond, p->inner);
            tm_req_free(me, p->inner);
        }
    }
    if (err) {
        free(tmp);
        tm_type_release(p->dt);
        free(p);
        tm_req_free(me, r);
        return err;
    }
    *request = r;
    return MPI_SUCCESS;
}

static int isendrecv_x(const char *tm_fn, const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                       MPI_Comm comm, MPI_Request *request)
{
    const char *fn = tm_fn;
    struct tm_rank *me = tm_self();
    int err = tm_p2p_check(me, fn, comm, sendbuf, sendcount, sendtype, dest, sendtag, 0);
    if (!err) err = tm_p2p_check(me, fn, comm, recvbuf, recvcount, recvtype, source, recvtag, 1);
    if (TM_UNLIKELY(err)) return err;
    if (TM_UNLIKELY(!request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    return pair_start(me, fn, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                      recvtype, source, recvtag, comm, NULL, NULL, request);
}
TM_API int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                          int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return isendrecv_x("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                       recvcount, recvtype, source, recvtag, comm, request);
}
TM_ALIAS(Isendrecv)

TM_API int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                            MPI_Request *request)
{
    return isendrecv_x("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                       recvcount, recvtype, source, recvtag, comm, request);
}
TM_ALIAS(Isendrecv_c)

static int isendrecv_replace_x(const char *tm_fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                               int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                               MPI_Request *request)
{
    const char *fn = tm_fn;
    struct tm_rank *me = tm_self();
    int err = tm_p2p_check(me, fn, comm, buf, count, datatype, dest, sendtag, 0);
    if (!err) err = tm_p2p_check(me, fn, comm, buf, count, datatype, source, recvtag, 1);
    if (TM_UNLIKELY(err)) return err;
    if (TM_UNLIKELY(!request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    /* Receive into a copy-sized temporary: the send reads buf until it completes. */
    size_t bytes = tm_p2p_bytes(count, datatype);
    const struct tm_type *layout = tm_type_moved(tm_type_get(datatype));
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    return pair_start(me, fn, buf, count, datatype, dest, sendtag, buf, count, datatype, source,
                      recvtag, comm, tmp, layout, request);
}
TM_API int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
                                  int sendtag, int source, int recvtag, MPI_Comm comm,
                                  MPI_Request *request)
{
    return isendrecv_replace_x("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag, source,
                               recvtag, comm, request);
}
TM_ALIAS(Isendrecv_replace)

TM_API int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                    int sendtag, int source, int recvtag, MPI_Comm comm,
                                    MPI_Request *request)
{
    return isendrecv_replace_x("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag,
                               source, recvtag, comm, request);
}
TM_ALIAS(Isendrecv_replace_c)
