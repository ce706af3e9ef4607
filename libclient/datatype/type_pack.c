/* type_pack.c — MPI_Pack, MPI_Unpack, MPI_Pack_size (MPI 3.1 §4.2).  The packed format is the
 * packed form of type.h, the bytes messages carry, so a buffer packed here may be sent as
 * MPI_PACKED and received as the original type (and the reverse). */
#include <limits.h>

#include "comm.h"
#include "errh.h"
#include "job.h"
#include "lib.h"
#include "type.h"
#include "type_copy.h"

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

#define FAIL(code, ...) return tm_err(me, comm, code, fn, __VA_ARGS__)

/* Checks shared by the three: communicator, count, committed type. */
static int check(struct tm_rank *me, const char *fn, MPI_Comm comm, int count, MPI_Datatype dt,
                 const struct tm_type **ret_t)
{
    if (TM_UNLIKELY(!tm_comm_get(&me->comms, comm)))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (TM_UNLIKELY(count < 0)) FAIL(MPI_ERR_COUNT, "invalid count %d", count);
    const struct tm_type *t = tm_type_get(dt);
    if (TM_UNLIKELY(!t))
        FAIL(MPI_ERR_TYPE, "invalid datatype %d%s", dt,
             tm_type_query(dt) ? " (not committed)" : "");
    *ret_t = t;
    return MPI_SUCCESS;
}

TM_API int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                     int outsize, int *position, MPI_Comm comm)
{
    const char *fn = "MPI_Pack";
    NEED_ME(fn);
    const struct tm_type *t;
    int err = check(me, fn, comm, incount, datatype, &t);
    if (err) return err;
    if (TM_UNLIKELY(!position)) FAIL(MPI_ERR_ARG, "position is NULL");
    if (TM_UNLIKELY(outsize < 0 || *position < 0 || *position > outsize))
        FAIL(MPI_ERR_ARG, "position %d outside the buffer of %d bytes", *position, outsize);
    size_t n = (size_t)incount * t->psize;
    if (TM_UNLIKELY(n > (size_t)(outsize - *position)))
        FAIL(MPI_ERR_TRUNCATE, "%zu bytes do not fit in the %d left", n, outsize - *position);
    if (TM_UNLIKELY(n && (tm_buf_missing(inbuf, incount, t) || !outbuf)))
        FAIL(MPI_ERR_BUFFER, "buffer is NULL");
    if (n) tm_type_pack((char *)outbuf + *position, inbuf, (size_t)incount, t, 0, n);
    *position += (int)n;
    return MPI_SUCCESS;
}
TM_ALIAS(Pack)

TM_API int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                       MPI_Datatype datatype, MPI_Comm comm)
{
    const char *fn = "MPI_Unpack";
    NEED_ME(fn);
    const struct tm_type *t;
    int err = check(me, fn, comm, outcount, datatype, &t);
    if (err) return err;
    if (TM_UNLIKELY(!position)) FAIL(MPI_ERR_ARG, "position is NULL");
    if (TM_UNLIKELY(insize < 0 || *position < 0 || *position > insize))
        FAIL(MPI_ERR_ARG, "position %d outside the buffer of %d bytes", *position, insize);
    size_t n = (size_t)outcount * t->psize;
    if (TM_UNLIKELY(n > (size_t)(insize - *position)))
        FAIL(MPI_ERR_TRUNCATE, "%zu bytes wanted, %d left in the packed buffer", n,
             insize - *position);
    if (TM_UNLIKELY(n && (!inbuf || tm_buf_missing(outbuf, outcount, t))))
        FAIL(MPI_ERR_BUFFER, "buffer is NULL");
    if (n) tm_type_unpack(outbuf, (size_t)outcount, t, 0, (const char *)inbuf + *position, n);
    *position += (int)n;
    return MPI_SUCCESS;
}
TM_ALIAS(Unpack)

TM_API int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    const char *fn = "MPI_Pack_size";
    NEED_ME(fn);
    const struct tm_type *t;
    int err = check(me, fn, comm, incount, datatype, &t);
    if (err) return err;
    if (TM_UNLIKELY(!size)) FAIL(MPI_ERR_ARG, "size is NULL");
    size_t n = (size_t)incount * t->psize;
    if (TM_UNLIKELY(n > INT_MAX)) FAIL(MPI_ERR_COUNT, "%zu bytes do not fit in an int", n);
    *size = (int)n;
    return MPI_SUCCESS;
}
TM_ALIAS(Pack_size)
