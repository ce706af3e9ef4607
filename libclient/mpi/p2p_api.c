/* p2p_api.c — the MPI point-to-point entry points: argument checks, then the engine (p2p.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "type.h"
#include "type_copy.h"
#include "envelope_pool.h"
#include "errh.h"
#include "fbox.h"
#include "job.h"
#include "mstate.h"
#include "p2p.h"
#include "p2p_route.h"
#include "p2p_api.h"

#include "bsend_buf.h"
#include "t_event.h"
#include "wait.h"

/* Checks shared by every send and receive; on success *ret_bytes is the buffer size in
 * packed bytes and *ret_dt (if ret_dt) the layout the engine must follow: NULL for contiguous
 * types (plain bytes, the fast path), the type otherwise (type_copy.h). */
static inline int check_args(struct tm_rank *me, struct tm_commref **ret_cr, const char *fn,
                             MPI_Comm comm, const void *buf, MPI_Count count, MPI_Datatype dt,
                             int peer, int tag, int is_recv, size_t *ret_bytes,
                             const struct tm_type **ret_dt)
{
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    if (TM_UNLIKELY(!cr))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    *ret_cr = cr;
    if (TM_UNLIKELY(count < 0))
        return tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid count %lld", count);
    const struct tm_type *t = tm_type_get(dt);
    if (TM_UNLIKELY(!t)) return tm_err(me, comm, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
    if (TM_UNLIKELY(tm_buf_missing(buf, count, t)))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn, "buffer is NULL with count %lld", count);
    if (TM_UNLIKELY(peer >= tm_comm_peer_size(cr->c) ||
                    (peer < 0 && peer != MPI_PROC_NULL && !(is_recv && peer == MPI_ANY_SOURCE))))
        return tm_err(me, comm, MPI_ERR_RANK, fn, "invalid rank %d", peer);
    if (TM_UNLIKELY(tag > TM_TAG_UB || (tag < 0 && !(is_recv && tag == MPI_ANY_TAG))))
        return tm_err(me, comm, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    if (TM_UNLIKELY(__builtin_mul_overflow((size_t)count, t->psize, ret_bytes) ||
                    *ret_bytes > (size_t)PTRDIFF_MAX))
        return tm_err(me, comm, MPI_ERR_COUNT, fn, "%lld elements of %s exceed the address space",
                      count, t->name);
    if (ret_dt) *ret_dt = tm_type_moved(t);
    return MPI_SUCCESS;
}

int tm_p2p_check(struct tm_rank *me, const char *fn, MPI_Comm comm, const void *buf,
                 MPI_Count count, MPI_Datatype dt, int peer, int tag, int is_recv)
{
    struct tm_commref *cr = NULL;
    size_t bytes = 0;
    return check_args(me, &cr, fn, comm, buf, count, dt, peer, tag, is_recv, &bytes, NULL);
}

const struct tm_type *tm_p2p_layout(MPI_Datatype dt)
{
    const struct tm_type *t = tm_type_get(dt);
    return t ? tm_type_moved(t) : NULL;
}

size_t tm_p2p_bytes(MPI_Count count, MPI_Datatype dt)
{
    const struct tm_type *t = tm_type_get(dt);
    return t ? (size_t)count * t->psize : 0;
}

/* A send that could not start: out of memory, or (inter-node) the link to the peer's node is
 * gone. */
static int send_failed(struct tm_rank *me, MPI_Comm comm, const char *fn, int r)
{
    if (r == -ENOMEM) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    return tm_err(me, comm, MPI_ERR_OTHER, fn, "cannot send to the peer's node: %s", strerror(-r));
}

/* A buffered send takes bytes + MPI_BSEND_OVERHEAD of the buffer it uses (the communicator's,
 * its session's or the rank's: bsend_buf.h) until its message has left (received on this
 * node; handed to the network layer's own copy for another node): MPI_ERR_BUFFER when no
 * buffer is attached or the rest of it is too small (MPI 4.1 §3.6); MPI_BUFFER_AUTOMATIC
 * has no limit. */
static int bsend_reserve(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                         int dest, size_t bytes, struct tm_request *sreq)
{
    struct tm_bsbuf *b = tm_bsend_pick(me, cr);
    if (!b)
        return tm_err(me, comm, MPI_ERR_BUFFER, fn, "no buffer is attached (MPI_Buffer_attach)");
    size_t need = bytes + MPI_BSEND_OVERHEAD, size = b->size;
    size_t used = atomic_load_explicit(&b->used, memory_order_relaxed);
    if (b->buf == MPI_BUFFER_AUTOMATIC)
        atomic_fetch_add_explicit(&b->used, need, memory_order_relaxed);
    else
        do {
            if (used + need > size) {
                struct tm_t_ev_bsend ev = {dest, 0, (int64_t)need, (int64_t)(size - used)};
                tm_t_event(me, TM_T_EV_BSEND_FULL, &ev);
                return tm_err(me, comm, MPI_ERR_BUFFER, fn,
                              "the attached buffer of %zu bytes has %zu free, the message needs "
                              "%zu (%zu + MPI_BSEND_OVERHEAD)",
                              size, size - used, need, bytes);
            }
        } while (!atomic_compare_exchange_weak_explicit(
            &b->used, &used, used + need, memory_order_relaxed, memory_order_relaxed));
    sreq->bsend = need;
    sreq->bsb = b;
    return MPI_SUCCESS;
}

/* After tm_send: what it did not hand to a queued envelope has left the buffer. */
static inline void bsend_done(struct tm_rank *me, struct tm_request *sreq)
{
    if (TM_UNLIKELY(sreq->bsend)) {
        tm_bsend_release(sreq->bsb, sreq->bsend);
        sreq->bsend = 0;
    }
}

static int send_blocking(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt,
                         int dest, int tag, MPI_Comm comm, enum tm_send_mode mode)
{
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = NULL;
    size_t bytes = 0;
    const struct tm_type *sdt;
    int err = check_args(me, &cr, fn, comm, buf, count, dt, dest, tag, 0, &bytes, &sdt);
    if (TM_UNLIKELY(err)) return err;
    struct tm_request sreq;
    tm_req_init_stack(&sreq, me, TM_REQ_SEND, comm);
    sreq.dt = sdt;
    if (mode == TM_SEND_BUFFERED && dest != MPI_PROC_NULL) {
        err = bsend_reserve(me, cr, comm, fn, dest, bytes, &sreq);
        if (err) return err;
    }
    int r = tm_send(me, cr, buf, bytes, dest, tag, mode, &sreq);
    bsend_done(me, &sreq);
    if (TM_UNLIKELY(r < 0)) return send_failed(me, comm, fn, r);
    if (r == 1) {
        int began = tm_mst_begin(me, fn, cr, comm, dest, tag);
        tm_mst_dest(me, began);
        tm_wait_prog(me, tm_req_done_cond, &sreq);
        tm_mst_end(me, began);
    }
    if (TM_UNLIKELY(sreq.st_error)) /* inter-node: the link failed while sending */
        return tm_err(me, comm, sreq.st_error, fn, "the message to rank %d was lost", dest);
    return MPI_SUCCESS;
}

static int send_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                  int dest, int tag, MPI_Comm comm)
{
    return send_blocking(tm_fn, buf, count, datatype, dest, tag, comm, TM_SEND_STANDARD);
}
TM_API int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm)
{
    return send_x("MPI_Send", buf, count, datatype, dest, tag, comm);
}
TM_ALIAS(Send)

TM_API int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm)
{
    return send_x("MPI_Send_c", buf, count, datatype, dest, tag, comm);
}
TM_ALIAS(Send_c)

static int ssend_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm)
{
    return send_blocking(tm_fn, buf, count, datatype, dest, tag, comm, TM_SEND_SYNC);
}
TM_API int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm)
{
    return ssend_x("MPI_Ssend", buf, count, datatype, dest, tag, comm);
}
TM_ALIAS(Ssend)

TM_API int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm)
{
    return ssend_x("MPI_Ssend_c", buf, count, datatype, dest, tag, comm);
}
TM_ALIAS(Ssend_c)

/* A ready send may behave as a standard one (MPI 3.1 §3.4). */
static int rsend_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm)
{
    return send_blocking(tm_fn, buf, count, datatype, dest, tag, comm, TM_SEND_STANDARD);
}
TM_API int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm)
{
    return rsend_x("MPI_Rsend", buf, count, datatype, dest, tag, comm);
}
TM_ALIAS(Rsend)

TM_API int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm)
{
    return rsend_x("MPI_Rsend_c", buf, count, datatype, dest, tag, comm);
}
TM_ALIAS(Rsend_c)

/* Buffered sends copy into an envelope of their own size, so they complete locally whatever
 * the size; the attached buffer is accounted as MPI defines it (bsend_reserve): a message
 * holds its size plus MPI_BSEND_OVERHEAD of it until it has left. */
static int bsend_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm)
{
    return send_blocking(tm_fn, buf, count, datatype, dest, tag, comm, TM_SEND_BUFFERED);
}
TM_API int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm)
{
    return bsend_x("MPI_Bsend", buf, count, datatype, dest, tag, comm);
}
TM_ALIAS(Bsend)

TM_API int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm)
{
    return bsend_x("MPI_Bsend_c", buf, count, datatype, dest, tag, comm);
}
TM_ALIAS(Bsend_c)

static int noco_err(struct tm_rank *me, int obj, int code, const char *fn, const char *msg)
{
    (void)me;
    (void)obj;
    return tm_err_noco(code, fn, "%s", msg);
}

static int comm_err(struct tm_rank *me, int obj, int code, const char *fn, const char *msg)
{
    return tm_err(me, (MPI_Comm)obj, code, fn, "%s", msg);
}

/* One body for MPI_Buffer_attach and MPI_Buffer_attach_c: the rank's buffer. */
static int buffer_attach(const char *fn, void *buffer, MPI_Count size)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    return tm_bsbuf_attach(me, &me->bsend, noco_err, 0, fn, buffer, size);
}
TM_API int PMPI_Buffer_attach(void *buffer, int size)
{
    return buffer_attach("MPI_Buffer_attach", buffer, size);
}
TM_ALIAS(Buffer_attach)
TM_API int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return buffer_attach("MPI_Buffer_attach_c", buffer, size);
}
TM_ALIAS(Buffer_attach_c)

/* One body for MPI_Buffer_detach (int_size) and MPI_Buffer_detach_c (count_size). */
static int buffer_detach(const char *fn, void *buffer_addr, int *int_size, MPI_Count *count_size)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    return tm_bsbuf_detach(me, &me->bsend, noco_err, 0, fn, buffer_addr, int_size, count_size);
}
TM_API int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    return buffer_detach("MPI_Buffer_detach", buffer_addr, size, NULL);
}
TM_ALIAS(Buffer_detach)
TM_API int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return buffer_detach("MPI_Buffer_detach_c", buffer_addr, NULL, size);
}
TM_ALIAS(Buffer_detach_c)

TM_API int PMPI_Buffer_flush(void)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Buffer_flush", TM_ERR_NOINIT);
    tm_bsbuf_flush(me, &me->bsend);
    return MPI_SUCCESS;
}
TM_ALIAS(Buffer_flush)

TM_API int PMPI_Buffer_iflush(MPI_Request *request)
{
    const char *fn = "MPI_Buffer_iflush";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    return tm_bsbuf_iflush(me, &me->bsend, noco_err, 0, fn, request);
}
TM_ALIAS(Buffer_iflush)

/* ---- a communicator's buffer (MPI 4.1 §3.6.2): the calling rank's handle's ---- */

#define COMM_BUF_ENTER(fn, comm)                                                                   \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);                    \
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);                                    \
    if (TM_UNLIKELY(!cr))                                                                          \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);

static int comm_attach(const char *fn, MPI_Comm comm, void *buffer, MPI_Count size)
{
    COMM_BUF_ENTER(fn, comm);
    if (!cr->bsb && !(cr->bsb = tm_bsbuf_new(me)))
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    return tm_bsbuf_attach(me, cr->bsb, comm_err, comm, fn, buffer, size);
}
TM_API int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
    return comm_attach("MPI_Comm_attach_buffer", comm, buffer, size);
}
TM_ALIAS(Comm_attach_buffer)
TM_API int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    return comm_attach("MPI_Comm_attach_buffer_c", comm, buffer, size);
}
TM_ALIAS(Comm_attach_buffer_c)

static int comm_detach(const char *fn, MPI_Comm comm, void *buffer_addr, int *int_size,
                       MPI_Count *count_size)
{
    COMM_BUF_ENTER(fn, comm);
    return tm_bsbuf_detach(me, cr->bsb, comm_err, comm, fn, buffer_addr, int_size, count_size);
}
TM_API int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    return comm_detach("MPI_Comm_detach_buffer", comm, buffer_addr, size, NULL);
}
TM_ALIAS(Comm_detach_buffer)
TM_API int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    return comm_detach("MPI_Comm_detach_buffer_c", comm, buffer_addr, NULL, size);
}
TM_ALIAS(Comm_detach_buffer_c)

TM_API int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
    COMM_BUF_ENTER("MPI_Comm_flush_buffer", comm);
    tm_bsbuf_flush(me, cr->bsb);
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_flush_buffer)

TM_API int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    const char *fn = "MPI_Comm_iflush_buffer";
    COMM_BUF_ENTER(fn, comm);
    return tm_bsbuf_iflush(me, cr->bsb, comm_err, comm, fn, request);
}
TM_ALIAS(Comm_iflush_buffer)

static int send_nonblocking(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt,
                            int dest, int tag, MPI_Comm comm, enum tm_send_mode mode,
                            MPI_Request *request)
{
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = NULL;
    size_t bytes = 0;
    const struct tm_type *sdt;
    int err = check_args(me, &cr, fn, comm, buf, count, dt, dest, tag, 0, &bytes, &sdt);
    if (TM_UNLIKELY(err)) return err;
    if (TM_UNLIKELY(!request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    struct tm_request *r = tm_req_alloc(me, TM_REQ_SEND);
    if (TM_UNLIKELY(!r)) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    r->comm = comm;
    /* a send request is never posted: its match key says whom MPI_Wait waits for (mstate.h) */
    r->src = dest;
    r->tag = tag;
    if (TM_UNLIKELY(sdt)) { /* the program may free the type before the send completes */
        tm_type_hold(sdt);
        r->dt = sdt;
    }
    if (mode == TM_SEND_BUFFERED && dest != MPI_PROC_NULL) {
        err = bsend_reserve(me, cr, comm, fn, dest, bytes, r);
        if (err) {
            atomic_store_explicit(&r->done, 1, memory_order_relaxed);
            tm_req_free(me, r);
            return err;
        }
    }
    int rc = tm_send(me, cr, buf, bytes, dest, tag, mode, r);
    bsend_done(me, r);
    if (TM_UNLIKELY(rc < 0)) {
        atomic_store_explicit(&r->done, 1, memory_order_relaxed);
        tm_req_free(me, r);
        return send_failed(me, comm, fn, rc);
    }
    *request = r;
    return MPI_SUCCESS;
}

static int isend_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(tm_fn, buf, count, datatype, dest, tag, comm, TM_SEND_STANDARD,
                            request);
}
TM_API int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return isend_x("MPI_Isend", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Isend)

TM_API int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, MPI_Request *request)
{
    return isend_x("MPI_Isend_c", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Isend_c)

static int issend_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(tm_fn, buf, count, datatype, dest, tag, comm, TM_SEND_SYNC, request);
}
TM_API int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request)
{
    return issend_x("MPI_Issend", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Issend)

TM_API int PMPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    return issend_x("MPI_Issend_c", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Issend_c)

static int irsend_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(tm_fn, buf, count, datatype, dest, tag, comm, TM_SEND_STANDARD,
                            request);
}
TM_API int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request)
{
    return irsend_x("MPI_Irsend", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Irsend)

TM_API int PMPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    return irsend_x("MPI_Irsend_c", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Irsend_c)

static int ibsend_x(const char *tm_fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(tm_fn, buf, count, datatype, dest, tag, comm, TM_SEND_BUFFERED,
                            request);
}
TM_API int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request)
{
    return ibsend_x("MPI_Ibsend", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Ibsend)

TM_API int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    return ibsend_x("MPI_Ibsend_c", buf, count, datatype, dest, tag, comm, request);
}
TM_ALIAS(Ibsend_c)

static int recv_x(const char *tm_fn, void *buf, MPI_Count count, MPI_Datatype datatype, int source,
                  int tag, MPI_Comm comm, MPI_Status *status)
{
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = NULL;
    size_t cap = 0;
    const struct tm_type *rdt;
    int err = check_args(me, &cr, tm_fn, comm, buf, count, datatype, source, tag, 1, &cap, &rdt);
    if (TM_UNLIKELY(err)) return err;
    struct tm_request rreq;
    tm_req_init_stack(&rreq, me, TM_REQ_RECV, comm);
    rreq.dt = rdt;
    int began = tm_mst_begin(me, tm_fn, cr, comm, source, tag);
    if (cap <= TM_FB_MAX_BYTES && !me->job->net && !me->mt && !cr->c->xjob &&
        !atomic_load_explicit(&me->prog.pending, memory_order_relaxed)) {
        tm_recv_wait_small(me, cr, buf, cap, source, tag, &rreq);
    } else {
        tm_recv(me, cr, buf, cap, source, tag, &rreq);
        tm_wait_prog(me, tm_req_done_cond, &rreq);
    }
    tm_mst_end(me, began);
    tm_req_status(&rreq, status);
    if (TM_UNLIKELY(rreq.st_error))
        return tm_err(me, comm, rreq.st_error, tm_fn,
                      "message from rank %d tag %d does not fit in %zu bytes", rreq.st_source,
                      rreq.st_tag, cap);
    return MPI_SUCCESS;
}
TM_API int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Status *status)
{
    return recv_x("MPI_Recv", buf, count, datatype, source, tag, comm, status);
}
TM_ALIAS(Recv)

TM_API int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Status *status)
{
    return recv_x("MPI_Recv_c", buf, count, datatype, source, tag, comm, status);
}
TM_ALIAS(Recv_c)

static int irecv_x(const char *tm_fn, void *buf, MPI_Count count, MPI_Datatype datatype, int source,
                   int tag, MPI_Comm comm, MPI_Request *request)
{
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = NULL;
    size_t cap = 0;
    const struct tm_type *rdt;
    int err = check_args(me, &cr, tm_fn, comm, buf, count, datatype, source, tag, 1, &cap, &rdt);
    if (TM_UNLIKELY(err)) return err;
    if (TM_UNLIKELY(!request)) return tm_err(me, comm, MPI_ERR_ARG, tm_fn, "request is NULL");
    struct tm_request *r = tm_req_alloc(me, TM_REQ_RECV);
    if (TM_UNLIKELY(!r)) return tm_err(me, comm, MPI_ERR_NO_MEM, tm_fn, "out of memory");
    r->comm = comm;
    if (TM_UNLIKELY(rdt)) { /* the program may free the type before the receive completes */
        tm_type_hold(rdt);
        r->dt = rdt;
    }
    tm_recv(me, cr, buf, cap, source, tag, r);
    *request = r;
    return MPI_SUCCESS;
}
TM_API int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return irecv_x("MPI_Irecv", buf, count, datatype, source, tag, comm, request);
}
TM_ALIAS(Irecv)

TM_API int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Request *request)
{
    return irecv_x("MPI_Irecv_c", buf, count, datatype, source, tag, comm, request);
}
TM_ALIAS(Irecv_c)

static int sendrecv_x(const char *tm_fn, const void *sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                      MPI_Comm comm, MPI_Status *status)
{
    const char *fn = tm_fn;
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = NULL;
    size_t bytes = 0, cap = 0;
    const struct tm_type *sdt = NULL, *rdt = NULL;
    int err =
        check_args(me, &cr, fn, comm, sendbuf, sendcount, sendtype, dest, sendtag, 0, &bytes, &sdt);
    if (!err)
        err = check_args(me, &cr, fn, comm, recvbuf, recvcount, recvtype, source, recvtag, 1, &cap,
                         &rdt);
    if (TM_UNLIKELY(err)) return err;
    /* Post the receive first so two ranks exchanging large messages both find theirs. */
    struct tm_request rreq, sreq;
    tm_req_init_stack(&rreq, me, TM_REQ_RECV, comm);
    tm_req_init_stack(&sreq, me, TM_REQ_SEND, comm);
    rreq.dt = rdt;
    sreq.dt = sdt;
    tm_recv(me, cr, recvbuf, cap, source, recvtag, &rreq);
    int r = tm_send(me, cr, sendbuf, bytes, dest, sendtag, TM_SEND_STANDARD, &sreq);
    if (TM_UNLIKELY(r < 0)) {
        /* The receive stays posted on the stack: take it back before returning. */
        if (!tm_cancel_recv(me, &rreq)) tm_wait(me, tm_req_done_cond, &rreq);
        return send_failed(me, comm, fn, r);
    }
    int began = tm_mst_begin(me, fn, cr, comm, source, recvtag);
    if (r == 1) tm_wait_prog(me, tm_req_done_cond, &sreq);
    tm_wait_prog(me, tm_req_done_cond, &rreq);
    tm_mst_end(me, began);
    tm_req_status(&rreq, status);
    if (TM_UNLIKELY(rreq.st_error))
        return tm_err(me, comm, rreq.st_error, fn,
                      "message from rank %d tag %d does not fit in %zu bytes", rreq.st_source,
                      rreq.st_tag, cap);
    return MPI_SUCCESS;
}
TM_API int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                         int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_x("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                      recvcount, recvtype, source, recvtag, comm, status);
}
TM_ALIAS(Sendrecv)

TM_API int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
                           MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                           MPI_Status *status)
{
    return sendrecv_x("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                      recvcount, recvtype, source, recvtag, comm, status);
}
TM_ALIAS(Sendrecv_c)

static int sendrecv_replace_x(const char *tm_fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                              int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                              MPI_Status *status)
{
    const char *fn = tm_fn;
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = NULL;
    size_t bytes = 0;
    const struct tm_type *dt = NULL;
    int err = check_args(me, &cr, fn, comm, buf, count, datatype, dest, sendtag, 0, &bytes, &dt);
    if (!err)
        err = check_args(me, &cr, fn, comm, buf, count, datatype, source, recvtag, 1, &bytes, NULL);
    if (TM_UNLIKELY(err)) return err;
    /* Receive into a temporary: the send may still read buf (rendezvous) while data for it
     * arrives. */
    void *tmp = bytes ? malloc(bytes) : NULL;
    if (bytes && !tmp) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    struct tm_request rreq, sreq;
    tm_req_init_stack(&rreq, me, TM_REQ_RECV, comm);
    tm_req_init_stack(&sreq, me, TM_REQ_SEND, comm);
    sreq.dt = dt;
    tm_recv(me, cr, tmp, bytes, source, recvtag, &rreq);
    int r = tm_send(me, cr, buf, bytes, dest, sendtag, TM_SEND_STANDARD, &sreq);
    int began = tm_mst_begin(me, fn, cr, comm, source, recvtag);
    if (r == 1) tm_wait_prog(me, tm_req_done_cond, &sreq);
    if (r < 0 && tm_cancel_recv(me, &rreq)) {
        tm_mst_end(me, began);
        free(tmp);
        return send_failed(me, comm, fn, r);
    }
    tm_wait_prog(me, tm_req_done_cond, &rreq);
    tm_mst_end(me, began);
    if (TM_UNLIKELY(dt))
        tm_type_unpack(buf, (size_t)count, dt, 0, tmp, rreq.st_bytes);
    else if (rreq.st_bytes)
        memcpy(buf, tmp, rreq.st_bytes);
    free(tmp);
    tm_req_status(&rreq, status);
    if (TM_UNLIKELY(rreq.st_error))
        return tm_err(me, comm, rreq.st_error, fn,
                      "message from rank %d tag %d does not fit in %zu bytes", rreq.st_source,
                      rreq.st_tag, bytes);
    if (TM_UNLIKELY(r < 0)) return send_failed(me, comm, fn, r);
    return MPI_SUCCESS;
}
TM_API int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                                 int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace_x("MPI_Sendrecv_replace", buf, count, datatype, dest, sendtag, source,
                              recvtag, comm, status);
}
TM_ALIAS(Sendrecv_replace)

TM_API int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                   int sendtag, int source, int recvtag, MPI_Comm comm,
                                   MPI_Status *status)
{
    return sendrecv_replace_x("MPI_Sendrecv_replace_c", buf, count, datatype, dest, sendtag, source,
                              recvtag, comm, status);
}
TM_ALIAS(Sendrecv_replace_c)

static int probe_common(const char *fn, int source, int tag, MPI_Comm comm, int block, int *flag,
                        MPI_Status *status)
{
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = NULL;
    size_t unused = 0;
    int dummy = 0;
    int err = check_args(me, &cr, fn, comm, &dummy, 0, MPI_BYTE, source, tag, 1, &unused, NULL);
    if (TM_UNLIKELY(err)) return err;
    if (!block && !flag) return tm_err(me, comm, MPI_ERR_ARG, fn, "flag is NULL");
    int began = block && tm_mst_begin(me, fn, cr, comm, source, tag);
    int found = tm_probe(me, cr, source, tag, block, status);
    tm_mst_end(me, began);
    if (TM_UNLIKELY(found < 0))
        return tm_err(me, comm, MPI_ERR_OTHER, fn,
                      "the other job of the communicator ended: no message can come");
    if (flag) *flag = found;
    if (!found) tm_poll_idle(me);
    return MPI_SUCCESS;
}

TM_API int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return probe_common("MPI_Probe", source, tag, comm, 1, NULL, status);
}
TM_ALIAS(Probe)

TM_API int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe_common("MPI_Iprobe", source, tag, comm, 0, flag, status);
}
TM_ALIAS(Iprobe)
