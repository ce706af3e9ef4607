/* coll_scan.c — Scan and Exscan (blocking and non-blocking) on the engine of coll.h.
 *
 * The elements are split into slices as for Allreduce; the part for a slice walks the members
 * in rank order and writes every member's prefix for that slice.  O(n x count) work in all,
 * spread over the members, and every prefix is combined left to right in rank order, so
 * non-commutative ops get MPI's order.
 *
 * Scan:   out[0] = in[0]; out[k] = out[k-1] op in[k].  out[k] is filled with in[k] and
 *         combined with out[k-1] (already final), so MPI_IN_PLACE (in[k] == out[k]) works.
 * Exscan: out[k] = in[0] op ... op in[k-1]; out[0] is untouched (undefined in MPI).  With
 *         MPI_IN_PLACE in[k] is overwritten by out[k] before the next prefix needs it, so the
 *         part keeps the running prefix and a copy of in[k] in the running thread's scratch. */
#include <errno.h>
#include <string.h>

#include "coll.h"
#include "coll_net_move.h"
#include "errh.h"
#include "job.h"

static int scan_part(const struct tm_cwork *w, size_t s)
{
    const struct tm_cargs *mine = tm_cw_arg(w, w->wrank);
    const struct tm_type *t = mine->rtype;
    size_t per = tm_slice_len(mine->count, mine->rtype->extent, w->n);
    size_t lo = s * per, m = lo + per < mine->count ? per : mine->count - lo;
    const struct tm_cargs *prev = NULL;
    for (int k = 0; k < w->n; k++) {
        const struct tm_cargs *a = tm_cw_arg(w, k);
        void *out = tm_dt_at(a->rbuf, lo, t);
        const void *in = tm_dt_at(a->sbuf, lo, t);
        tm_dt_copy(out, m, t, in, m, t); /* a no-op in place */
        if (prev) tm_opref_apply(&mine->op, tm_dt_at(prev->rbuf, lo, t), out, m, t, mine->dth);
        prev = a;
    }
    return 0;
}

static int exscan_part(const struct tm_cwork *w, size_t s)
{
    const struct tm_cargs *mine = tm_cw_arg(w, w->wrank);
    const struct tm_type *t = mine->rtype;
    size_t ext = t->extent;
    size_t per = tm_slice_len(mine->count, mine->rtype->extent, w->n);
    size_t lo = s * per, hi = lo + per < mine->count ? lo + per : mine->count;
    size_t chunk = TM_CHUNK_BYTES / ext ? TM_CHUNK_BYTES / ext : 1;
    unsigned char *buf = tm_coll_scratch(w->me, 2 * chunk * ext);
    if (!buf) return -ENOMEM;
    for (size_t e = lo; e < hi; e += chunk) {
        size_t m = hi - e < chunk ? hi - e : chunk, len = m * ext;
        unsigned char *acc = buf, *sv = buf + chunk * ext;
        memcpy(acc, tm_dt_at(tm_cw_arg(w, 0)->sbuf, e, t), len);
        for (int k = 1; k < w->n; k++) {
            const struct tm_cargs *a = tm_cw_arg(w, k);
            int more = k + 1 < w->n;
            if (more) memcpy(sv, tm_dt_at(a->sbuf, e, t), len); /* before out[k] overwrites it */
            tm_dt_copy(tm_dt_at(a->rbuf, e, t), m, t, acc, m, t);
            if (more) {
                tm_opref_apply(&mine->op, acc, sv, m, t, mine->dth); /* sv = acc op in[k] */
                unsigned char *x = acc;
                acc = sv;
                sv = x;
            }
        }
    }
    return 0;
}

static const struct tm_calgo scan_algo = {MPIX_COLL_SCAN, tm_cw_slices, scan_part, tm_hier_scan,
                                          NULL};
static const struct tm_calgo exscan_algo = {MPIX_COLL_EXSCAN, tm_cw_slices, exscan_part,
                                            tm_hier_exscan, NULL};

/* count MPI_Count: the _c forms come here whole (tm_scan_c), with a user op too, whose int
 * function takes the elements in pieces of INT_MAX (userop.c call_user). */
int tm_scan_c(const char *fn, int ex, const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    if (TM_UNLIKELY(cr->c->inter))
        return tm_err(me, comm, MPI_ERR_COMM, fn, "not defined on an inter-communicator");
    if (TM_UNLIKELY(nb && !request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    const struct tm_type *t;
    TM_COLL_CHECK(tm_coll_check_buf(me, comm, fn, "receive ", recvbuf, count, datatype, &t));
    struct tm_opref o;
    TM_COLL_CHECK(tm_coll_check_op(me, comm, fn, op, t, &o));
    int in_place = sendbuf == MPI_IN_PLACE;
    if (TM_UNLIKELY(count > 0 && (tm_buf_missing(sendbuf, count, t) || recvbuf == MPI_IN_PLACE)))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn, "invalid buffer");
    if (TM_UNLIKELY(count > 0 && sendbuf == recvbuf))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn,
                      "send and receive buffers are the same (use MPI_IN_PLACE)");
    struct tm_cargs a = {
        .sbuf = in_place ? recvbuf : sendbuf,
        .rbuf = recvbuf,
        .rtype = t,
        .in_place = in_place,
        .root = -1,
        .count = (size_t)count,
        .op = o,
        .dth = datatype,
    };
    return tm_coll_start(me, cr, comm, fn, ex ? &exscan_algo : &scan_algo, &a, nb ? request : NULL);
}

TM_API int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm)
{
    return tm_scan_c("MPI_Scan", 0, sendbuf, recvbuf, count, datatype, op, comm, NULL, 0);
}
TM_ALIAS(Scan)

TM_API int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm)
{
    return tm_scan_c("MPI_Exscan", 1, sendbuf, recvbuf, count, datatype, op, comm, NULL, 0);
}
TM_ALIAS(Exscan)

TM_API int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return tm_scan_c("MPI_Iscan", 0, sendbuf, recvbuf, count, datatype, op, comm, request, 1);
}
TM_ALIAS(Iscan)

TM_API int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return tm_scan_c("MPI_Iexscan", 1, sendbuf, recvbuf, count, datatype, op, comm, request, 1);
}
TM_ALIAS(Iexscan)
