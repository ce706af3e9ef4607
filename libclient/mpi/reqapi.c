/* reqapi.c — completing requests: Wait/Test and their any/all/some forms, Request_free,
 * Request_get_status, Cancel, Test_cancelled.
 *
 * Null and inactive persistent requests (persist.h) complete at once with an empty status;
 * the any/some forms skip them like null ones (MPI 3.1 §3.7.5). */
#include "comm_idup.h"
#include "mstate.h"
#include "errh.h"
#include "inbox.h"
#include "greq.h"
#include "job.h"
#include "nbr.h"
#include "p2p.h"
#include "p2p_route.h"
#include "part.h"
#include "persist.h"
#include "wait.h"

static inline int is_done(struct tm_request *r)
{
    return tm_req_complete(r); /* wait.h: seq_cst */
}

/* A request done before its wait begins needs none (MPI_Wait, MPI_Waitall): no poll of the
 * fast boxes, no deadlock-check record.  The wait's poll read the line of the peer's next
 * cell once per request, and an osu_bw window's Waitall of done requests cost 12-13 ns each
 * (issue 37, ANALYSIS.md "Message rate: waits on done requests").  While the rank has
 * registered progress pending (wait.h tm_progress) the wait still runs it. */
static inline int done_before_wait(struct tm_rank *me, struct tm_request *r)
{
    return is_done(r) && !atomic_load_explicit(&me->prog.pending, memory_order_relaxed);
}

static int done_cond(void *arg)
{
    return tm_req_complete(arg);
}

/* A persistent request that is not started: treated as a null one by the any/some forms. */
static inline int inactive(const struct tm_request *r)
{
    if (TM_UNLIKELY(r->kind == TM_REQ_PART)) return tm_part_inactive(r);
    return TM_UNLIKELY(r->kind == TM_REQ_PERSIST) && tm_preq_inactive(r);
}

/* Hands a done request's result to the caller and releases it; returns its error.  The
 * status's MPI_ERROR stays the program's, as calls returning one status must leave it (MPI 3.1
 * §3.2.5), unless a generalized request's query function fills it. */
static int finish(struct tm_rank *me, MPI_Request *rp, MPI_Status *status)
{
    struct tm_request *r = *rp;
    if (TM_UNLIKELY(r->kind > TM_REQ_COLL)) {
        if (r->kind == TM_REQ_GREQ) return tm_greq_finish(me, rp, status);
        if (r->kind == TM_REQ_MULTI) {
            *rp = MPI_REQUEST_NULL;
            return tm_nbr_finish(me, r, status);
        }
        if (r->kind == TM_REQ_IDUP) return tm_idup_finish(me, rp, status);
        if (r->kind == TM_REQ_PART) return tm_part_finish(me, rp, status);
        return tm_preq_finish(me, rp, status);
    }
    tm_req_status(r, status);
    int err = r->st_error;
    tm_req_free(me, r);
    *rp = MPI_REQUEST_NULL;
    return err;
}

/* finish for the multiple-completion calls: each status says its request's error, which
 * MPI_ERR_IN_STATUS points the program to. */
static int finish_in_array(struct tm_rank *me, MPI_Request *rp, MPI_Status *status)
{
    int err = finish(me, rp, status);
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = err;
    return err;
}

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

/* A wait on r starts (mstate.h): a receive or a send says whom it waits for. */
static int req_begin(struct tm_rank *me, const char *fn, const struct tm_request *r)
{
    int p2p = r->kind == TM_REQ_RECV || r->kind == TM_REQ_SEND;
    int began = tm_mst_begin(me, fn, NULL, r->comm, p2p ? r->src : TMPI_PEER_NONE,
                             p2p ? r->tag : TMPI_TAG_NONE);
    if (r->kind == TM_REQ_SEND) tm_mst_dest(me, began);
    return began;
}

static int req_err(struct tm_rank *me, MPI_Comm comm, int err, const char *fn)
{
    return tm_err(me, comm, err, fn, "request failed");
}

TM_API int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    NEED_ME("MPI_Wait");
    if (TM_UNLIKELY(!request))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Wait", "request is NULL");
    struct tm_request *r = *request;
    if (!r) {
        tm_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!done_before_wait(me, r)) {
        int began = req_begin(me, "MPI_Wait", r);
        tm_wait_prog(me, done_cond, r);
        tm_mst_end(me, began);
    }
    MPI_Comm comm = r->comm;
    int err = finish(me, request, status);
    return TM_UNLIKELY(err) ? req_err(me, comm, err, "MPI_Wait") : MPI_SUCCESS;
}
TM_ALIAS(Wait)

TM_API int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    NEED_ME("MPI_Test");
    if (TM_UNLIKELY(!request || !flag))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test", "request or flag is NULL");
    struct tm_request *r = *request;
    if (!r) {
        *flag = 1;
        tm_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!is_done(r)) {
        tm_inbox_poll(me); /* its answer may wait in a fast box or hand-off (inbox.h) */
        tm_progress_poll(me);
    }
    if (!is_done(r)) {
        *flag = 0;
        tm_poll_idle(me);
        return MPI_SUCCESS;
    }
    *flag = 1;
    MPI_Comm comm = r->comm;
    int err = finish(me, request, status);
    return TM_UNLIKELY(err) ? req_err(me, comm, err, "MPI_Test") : MPI_SUCCESS;
}
TM_ALIAS(Test)

/* Completes every request in the array (all done); error reporting as MPI_Waitall. */
static int finish_all(struct tm_rank *me, int count, MPI_Request reqs[], MPI_Status statuses[],
                      const char *fn)
{
    int failed = 0;
    MPI_Comm comm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (!reqs[i]) {
            tm_status_empty(st);
            continue;
        }
        MPI_Comm c = reqs[i]->comm;
        if (finish_in_array(me, &reqs[i], st)) {
            failed = 1;
            comm = c;
        }
    }
    return failed ? tm_err(me, comm, MPI_ERR_IN_STATUS, fn, "a request failed") : MPI_SUCCESS;
}

TM_API int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    NEED_ME("MPI_Waitall");
    if (TM_UNLIKELY(count < 0 || (count > 0 && !requests)))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Waitall", "invalid request array");
    for (int i = 0; i < count; i++) {
        if (!requests[i] || done_before_wait(me, requests[i])) continue;
        int began = req_begin(me, "MPI_Waitall", requests[i]);
        tm_wait_prog(me, done_cond, requests[i]);
        tm_mst_end(me, began);
    }
    return finish_all(me, count, requests, statuses, "MPI_Waitall");
}
TM_ALIAS(Waitall)

TM_API int PMPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    NEED_ME("MPI_Testall");
    if (TM_UNLIKELY(count < 0 || (count > 0 && !requests) || !flag))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testall", "invalid arguments");
    tm_inbox_poll(me);
    tm_progress_poll(me);
    for (int i = 0; i < count; i++) {
        if (requests[i] && !is_done(requests[i])) {
            *flag = 0;
            tm_poll_idle(me);
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return finish_all(me, count, requests, statuses, "MPI_Testall");
}
TM_ALIAS(Testall)

struct any_wait {
    int count;
    MPI_Request *reqs;
};

static int any_done_cond(void *arg)
{
    struct any_wait *a = arg;
    for (int i = 0; i < a->count; i++)
        if (a->reqs[i] && !inactive(a->reqs[i]) && is_done(a->reqs[i])) return 1;
    return 0;
}

/* Index of the first done request, MPI_UNDEFINED if all are null or inactive, -1 if none is
 * done. */
static int first_done(int count, MPI_Request reqs[])
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (!reqs[i] || inactive(reqs[i])) continue;
        active = 1;
        if (is_done(reqs[i])) return i;
    }
    return active ? -1 : MPI_UNDEFINED;
}

static int any_common(const char *fn, int count, MPI_Request reqs[], int *index, int *flag,
                      MPI_Status *status, int block)
{
    NEED_ME(fn);
    if (TM_UNLIKELY(count < 0 || (count > 0 && !reqs) || !index || (!block && !flag)))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "invalid arguments");
    tm_inbox_poll(me);
    tm_progress_poll(me);
    int i = first_done(count, reqs);
    if (i == -1 && block) {
        struct any_wait a = {count, reqs};
        int began = tm_mst_begin(me, fn, NULL, MPI_COMM_NULL, TMPI_PEER_NONE, TMPI_TAG_NONE);
        tm_wait_prog(me, any_done_cond, &a);
        tm_mst_end(me, began);
        i = first_done(count, reqs);
    }
    if (flag) *flag = i != -1;
    if (i == -1) {
        *index = MPI_UNDEFINED;
        tm_poll_idle(me);
        return MPI_SUCCESS;
    }
    *index = i;
    if (i == MPI_UNDEFINED) {
        tm_status_empty(status);
        return MPI_SUCCESS;
    }
    MPI_Comm comm = reqs[i]->comm;
    int err = finish(me, &reqs[i], status);
    return TM_UNLIKELY(err) ? req_err(me, comm, err, fn) : MPI_SUCCESS;
}

TM_API int PMPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    return any_common("MPI_Waitany", count, requests, index, NULL, status, 1);
}
TM_ALIAS(Waitany)

TM_API int PMPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
                        MPI_Status *status)
{
    return any_common("MPI_Testany", count, requests, index, flag, status, 0);
}
TM_ALIAS(Testany)

static int some_common(const char *fn, int incount, MPI_Request reqs[], int *outcount,
                       int indices[], MPI_Status statuses[], int block)
{
    NEED_ME(fn);
    if (TM_UNLIKELY(incount < 0 || (incount > 0 && (!reqs || !indices)) || !outcount))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "invalid arguments");
    tm_inbox_poll(me);
    tm_progress_poll(me);
    int i = first_done(incount, reqs);
    if (i == MPI_UNDEFINED) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (i == -1 && block) {
        struct any_wait a = {incount, reqs};
        int began = tm_mst_begin(me, fn, NULL, MPI_COMM_NULL, TMPI_PEER_NONE, TMPI_TAG_NONE);
        tm_wait_prog(me, any_done_cond, &a);
        tm_mst_end(me, began);
    }
    int n = 0, failed = 0;
    MPI_Comm comm = MPI_COMM_WORLD;
    for (int k = 0; k < incount; k++) {
        if (!reqs[k] || inactive(reqs[k]) || !is_done(reqs[k])) continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        MPI_Comm c = reqs[k]->comm;
        if (finish_in_array(me, &reqs[k], st)) {
            failed = 1;
            comm = c;
        }
        indices[n++] = k;
    }
    *outcount = n;
    if (n == 0) tm_poll_idle(me);
    return failed ? tm_err(me, comm, MPI_ERR_IN_STATUS, fn, "a request failed") : MPI_SUCCESS;
}

TM_API int PMPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                         MPI_Status statuses[])
{
    return some_common("MPI_Waitsome", incount, requests, outcount, indices, statuses, 1);
}
TM_ALIAS(Waitsome)

TM_API int PMPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                         MPI_Status statuses[])
{
    return some_common("MPI_Testsome", incount, requests, outcount, indices, statuses, 0);
}
TM_ALIAS(Testsome)

TM_API int PMPI_Request_free(MPI_Request *request)
{
    NEED_ME("MPI_Request_free");
    if (TM_UNLIKELY(!request || !*request))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free", "invalid request");
    struct tm_request *r = *request;
    if (r->kind == TM_REQ_PART) {
        int err = tm_part_free(me, r);
        if (!err) *request = MPI_REQUEST_NULL;
        return err;
    }
    if (r->kind == TM_REQ_GREQ)
        tm_greq_free(me, r);
    else if (r->kind == TM_REQ_MULTI)
        tm_nbr_free(me, r);
    else if (r->kind == TM_REQ_IDUP)
        tm_idup_free(me, r);
    else if (r->kind > TM_REQ_COLL)
        tm_preq_free(me, r);
    else
        tm_req_free(me, r);
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Request_free)

void tm_req_cancel_op(struct tm_rank *me, struct tm_request *r)
{
    if (r->kind == TM_REQ_RECV && !is_done(r))
        tm_cancel_recv(me, r);
    else if (r->kind == TM_REQ_SEND)
        tm_send_cancel(me, r);
}

/* Receives that are still posted are cancelled.  A nonblocking send is cancelled while its
 * message waits unmatched in the receiver's queue: on this node the sender takes it back at
 * once; on another node that node's receive daemon is asked (net/cancel.c) and the send's
 * request completes with its answer.  A message in a fast box, or one a receive has matched,
 * is not taken back: MPI lets a cancel fail, the send then completes normally and
 * Test_cancelled says false (MPI 4.1 §3.8.4).  Collectives are not cancellable
 * (MPI_ERR_REQUEST). */
TM_API int PMPI_Cancel(MPI_Request *request)
{
    NEED_ME("MPI_Cancel");
    if (TM_UNLIKELY(!request || !*request))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel", "invalid request");
    struct tm_request *r = *request;
    if (r->kind == TM_REQ_COLL || r->kind == TM_REQ_MULTI || r->kind == TM_REQ_IDUP)
        return tm_err(me, r->comm, MPI_ERR_REQUEST, "MPI_Cancel",
                      "collective operations cannot be cancelled");
    if (r->kind == TM_REQ_PART)
        return tm_err(me, r->comm, MPI_ERR_REQUEST, "MPI_Cancel",
                      "partitioned operations cannot be cancelled");
    if (r->kind == TM_REQ_GREQ) return tm_greq_cancel(me, r);
    if (r->kind > TM_REQ_COLL) {
        tm_preq_cancel(me, r);
        return MPI_SUCCESS;
    }
    tm_req_cancel_op(me, r);
    return MPI_SUCCESS;
}
TM_ALIAS(Cancel)

TM_API int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || !flag)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Test_cancelled", "status or flag is NULL");
    *flag = status->tm_cancelled != 0;
    return MPI_SUCCESS;
}
TM_ALIAS(Test_cancelled)

TM_API int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    NEED_ME("MPI_Request_get_status");
    if (TM_UNLIKELY(!flag))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Request_get_status", "flag is NULL");
    if (!request || inactive(request)) {
        *flag = 1;
        tm_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!is_done(request)) {
        tm_inbox_poll(me);
        tm_progress_poll(me);
    }
    if (!is_done(request)) {
        *flag = 0;
        tm_poll_idle(me);
        return MPI_SUCCESS;
    }
    *flag = 1;
    if (request->kind == TM_REQ_GREQ) return tm_greq_status(me, request, status);
    if (request->kind == TM_REQ_MULTI)
        tm_nbr_status(request, status);
    else if (request->kind == TM_REQ_IDUP)
        tm_status_empty(status); /* the handle is made by the Wait or Test that completes it */
    else if (request->kind == TM_REQ_PART)
        tm_part_status(request, status);
    else if (request->kind > TM_REQ_COLL)
        tm_preq_status(request, status);
    else
        tm_req_status(request, status);
    return MPI_SUCCESS;
}
TM_ALIAS(Request_get_status)

TM_API int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (!status) return tm_err_noco(MPI_ERR_ARG, "MPI_Status_set_cancelled", "status is NULL");
    status->tm_cancelled = flag != 0;
    return MPI_SUCCESS;
}
TM_ALIAS(Status_set_cancelled)
