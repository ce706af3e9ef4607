/* mprobe.c — matched probe and receive: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv
 * (MPI 3.1 §3.8.2).
 *
 * A matched probe takes the message out of the rank's queues under the mailbox lock (p2p.c
 * tm_mprobe), so no other receive or probe, from any thread, can see it again; the MPI_Message
 * handle owns the envelope until MPI_(I)mrecv receives it.  That works the same for every kind
 * of envelope: an intra-node eager copy or rendezvous (the sender's request completes when the
 * receive copies), a fast-box message (drained into an envelope first), and messages from
 * other nodes (an eager one stored in a pool buffer; a three-phase or held one: the receive
 * answers with CTS, as a posted receive does). */
#include <stdlib.h>

#include "errh.h"
#include "job.h"
#include "objtab.h"
#include "mstate.h"
#include "p2p.h"
#include "p2p_route.h"
#include "p2p_api.h"
#include "type.h"
#include "wait.h"

struct tm_message {
    struct tm_envl *e;
    MPI_Comm comm; /* for the error handler */
    int fidx;      /* its Fortran handle (MPI_Message_c2f), 0 until asked for */
};

/* Fortran handles of messages: 0 is MPI_MESSAGE_NULL, 1 MPI_MESSAGE_NO_PROC, then slots. */
#define FMSG_NO_PROC 1
#define FMSG_BASE 2

TM_API MPI_Fint PMPI_Message_c2f(MPI_Message message)
{
    if (message == MPI_MESSAGE_NULL) return 0;
    if (message == MPI_MESSAGE_NO_PROC) return FMSG_NO_PROC;
    struct tm_rank *me = tm_self();
    if (!me) return -1;
    if (message->fidx <= 0) message->fidx = tm_objtab_add(&me->fmsgs, FMSG_BASE, message);
    return message->fidx;
}
TM_ALIAS(Message_c2f)

/* A handle no live message has becomes MPI_MESSAGE_NULL, which every call taking a message
 * rejects or treats as "no message": a pointer cannot be an invalid handle of its own. */
TM_API MPI_Message PMPI_Message_f2c(MPI_Fint message)
{
    if (message == FMSG_NO_PROC) return MPI_MESSAGE_NO_PROC;
    struct tm_rank *me = tm_self();
    if (!me) return MPI_MESSAGE_NULL;
    return tm_objtab_get(me->fmsgs, FMSG_BASE, message);
}
TM_ALIAS(Message_f2c)

static void msg_free(struct tm_rank *me, struct tm_message *m)
{
    if (m->fidx > 0) tm_objtab_del(me->fmsgs, FMSG_BASE, m->fidx);
    free(m);
}

static void keep(void *p)
{
    (void)p; /* a message left unreceived at the end belongs to its mailbox's teardown */
}

void tm_msg_tab_free(struct tm_rank *me)
{
    tm_objtab_free(me->fmsgs, keep);
    me->fmsgs = NULL;
}

static int mprobe_common(const char *fn, int source, int tag, MPI_Comm comm, int block, int *flag,
                         MPI_Message *message, MPI_Status *status)
{
    struct tm_rank *me = tm_self();
    int dummy = 0;
    int err = tm_p2p_check(me, fn, comm, &dummy, 0, MPI_BYTE, source, tag, 1);
    if (TM_UNLIKELY(err)) return err;
    if (!message || (!block && !flag))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "%s is NULL", message ? "flag" : "message");
    if (source == MPI_PROC_NULL) {
        if (flag) *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        tm_status_blank(status); /* one status: its MPI_ERROR stays the program's */
        if (status != MPI_STATUS_IGNORE) status->MPI_SOURCE = MPI_PROC_NULL;
        return MPI_SUCCESS;
    }
    struct tm_message *m = malloc(sizeof *m);
    if (!m) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    m->fidx = 0;
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    int began = block && tm_mst_begin(me, fn, cr, comm, source, tag);
    int found = tm_mprobe(me, cr, source, tag, block, status, &m->e);
    tm_mst_end(me, began);
    if (TM_UNLIKELY(found < 0)) {
        free(m);
        *message = MPI_MESSAGE_NULL;
        return tm_err(me, comm, MPI_ERR_OTHER, fn,
                      "the other job of the communicator ended: no message can come");
    }
    if (flag) *flag = found;
    if (!found) {
        free(m);
        *message = MPI_MESSAGE_NULL;
        tm_poll_idle(me);
        return MPI_SUCCESS;
    }
    m->comm = comm;
    *message = m;
    return MPI_SUCCESS;
}

TM_API int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    return mprobe_common("MPI_Mprobe", source, tag, comm, 1, NULL, message, status);
}
TM_ALIAS(Mprobe)

TM_API int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                        MPI_Status *status)
{
    return mprobe_common("MPI_Improbe", source, tag, comm, 0, flag, message, status);
}
TM_ALIAS(Improbe)

/* Checks the receive's arguments and the handle; on success *ret is the message (or
 * MPI_MESSAGE_NO_PROC) and *ret_cap the buffer's size. */
static int mrecv_check(struct tm_rank *me, const char *fn, void *buf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Message *message, size_t *ret_cap)
{
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!message || *message == MPI_MESSAGE_NULL)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "message is MPI_MESSAGE_NULL");
    MPI_Comm comm = *message == MPI_MESSAGE_NO_PROC ? MPI_COMM_WORLD : (*message)->comm;
    /* The receive's own checks, on a source and tag that always pass. */
    int err = tm_p2p_check(me, fn, comm, buf, count, datatype, MPI_ANY_SOURCE, MPI_ANY_TAG, 1);
    if (TM_UNLIKELY(err)) return err;
    *ret_cap = tm_p2p_bytes(count, datatype);
    return MPI_SUCCESS;
}

/* Starts receiving message m into r (m is used up). */
static void mrecv_start(struct tm_rank *me, struct tm_request *r, void *buf, size_t cap,
                        struct tm_message *m)
{
    r->buf = buf;
    r->cap = cap;
    tm_recv_envl(me, r, m->e);
    msg_free(me, m);
}

static void no_proc(struct tm_request *r)
{
    tm_req_set_done(r, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
}

static int mrecv_x(const char *tm_fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Message *message, MPI_Status *status)
{
    const char *fn = tm_fn;
    struct tm_rank *me = tm_self();
    size_t cap = 0;
    int err = mrecv_check(me, fn, buf, count, datatype, message, &cap);
    if (TM_UNLIKELY(err)) return err;
    struct tm_message *m = *message;
    *message = MPI_MESSAGE_NULL;
    struct tm_request rreq;
    tm_req_init_stack(&rreq, me, TM_REQ_RECV, m == MPI_MESSAGE_NO_PROC ? MPI_COMM_WORLD : m->comm);
    if (m == MPI_MESSAGE_NO_PROC) {
        no_proc(&rreq);
    } else {
        rreq.dt = tm_p2p_layout(datatype);
        mrecv_start(me, &rreq, buf, cap, m);
        tm_wait(me, tm_req_done_cond, &rreq);
    }
    tm_req_status(&rreq, status);
    if (TM_UNLIKELY(rreq.st_error))
        return tm_err(me, rreq.comm, rreq.st_error, fn,
                      "message from rank %d tag %d does not fit in %zu bytes", rreq.st_source,
                      rreq.st_tag, cap);
    return MPI_SUCCESS;
}
TM_API int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                      MPI_Status *status)
{
    return mrecv_x("MPI_Mrecv", buf, count, datatype, message, status);
}
TM_ALIAS(Mrecv)

TM_API int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                        MPI_Status *status)
{
    return mrecv_x("MPI_Mrecv_c", buf, count, datatype, message, status);
}
TM_ALIAS(Mrecv_c)

static int imrecv_x(const char *tm_fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Message *message, MPI_Request *request)
{
    const char *fn = tm_fn;
    struct tm_rank *me = tm_self();
    size_t cap = 0;
    int err = mrecv_check(me, fn, buf, count, datatype, message, &cap);
    if (TM_UNLIKELY(err)) return err;
    struct tm_message *m = *message;
    MPI_Comm comm = m == MPI_MESSAGE_NO_PROC ? MPI_COMM_WORLD : m->comm;
    if (!request) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    struct tm_request *r = tm_req_alloc(me, TM_REQ_RECV);
    if (!r) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    r->comm = comm;
    *message = MPI_MESSAGE_NULL;
    if (m == MPI_MESSAGE_NO_PROC) {
        no_proc(r);
    } else {
        r->dt = tm_p2p_layout(datatype);
        tm_type_hold(r->dt); /* released by tm_req_free */
        mrecv_start(me, r, buf, cap, m);
    }
    *request = r;
    return MPI_SUCCESS;
}
TM_API int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                       MPI_Request *request)
{
    return imrecv_x("MPI_Imrecv", buf, count, datatype, message, request);
}
TM_ALIAS(Imrecv)

TM_API int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                         MPI_Request *request)
{
    return imrecv_x("MPI_Imrecv_c", buf, count, datatype, message, request);
}
TM_ALIAS(Imrecv_c)
