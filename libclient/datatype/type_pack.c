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

/* Checks shared by all: communicator, count, committed type. */
static int check(struct tm_rank *me, const char *fn, MPI_Comm comm, MPI_Count count,
                 MPI_Datatype dt, const struct tm_type **ret_t)
{
    if (TM_UNLIKELY(!tm_comm_get(&me->comms, comm)))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (TM_UNLIKELY(count < 0)) FAIL(MPI_ERR_COUNT, "invalid count %lld", count);
    const struct tm_type *t = tm_type_get(dt);
    if (TM_UNLIKELY(!t))
        FAIL(MPI_ERR_TYPE, "invalid datatype %d%s", dt,
             tm_type_query(dt) ? " (not committed)" : "");
    *ret_t = t;
    return MPI_SUCCESS;
}

/* Packed bytes of count elements of t, or -1 if they do not fit in an MPI_Count. */
static MPI_Count packed_bytes(MPI_Count count, const struct tm_type *t)
{
    MPI_Count n;
    return __builtin_mul_overflow(count, (MPI_Count)t->psize, &n) ? -1 : n;
}

/* MPI_Pack and MPI_Pack_c: counts and positions as MPI_Count. */
static int pack_any(const char *fn, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                    void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    NEED_ME(fn);
    const struct tm_type *t;
    int err = check(me, fn, comm, incount, datatype, &t);
    if (err) return err;
    if (TM_UNLIKELY(outsize < 0 || *position < 0 || *position > outsize))
        FAIL(MPI_ERR_ARG, "position %lld outside the buffer of %lld bytes", *position, outsize);
    MPI_Count n = packed_bytes(incount, t);
    if (TM_UNLIKELY(n < 0 || n > outsize - *position))
        FAIL(MPI_ERR_TRUNCATE, "%lld elements do not fit in the %lld bytes left", incount,
             outsize - *position);
    if (TM_UNLIKELY(n && (tm_buf_missing(inbuf, incount, t) || !outbuf)))
        FAIL(MPI_ERR_BUFFER, "buffer is NULL");
    if (n) tm_type_pack((char *)outbuf + *position, inbuf, (size_t)incount, t, 0, (size_t)n);
    *position += n;
    return MPI_SUCCESS;
}

static int unpack_any(const char *fn, const void *inbuf, MPI_Count insize, MPI_Count *position,
                      void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    NEED_ME(fn);
    const struct tm_type *t;
    int err = check(me, fn, comm, outcount, datatype, &t);
    if (err) return err;
    if (TM_UNLIKELY(insize < 0 || *position < 0 || *position > insize))
        FAIL(MPI_ERR_ARG, "position %lld outside the buffer of %lld bytes", *position, insize);
    MPI_Count n = packed_bytes(outcount, t);
    if (TM_UNLIKELY(n < 0 || n > insize - *position))
        FAIL(MPI_ERR_TRUNCATE, "%lld elements wanted, %lld bytes left in the packed buffer",
             outcount, insize - *position);
    if (TM_UNLIKELY(n && (!inbuf || tm_buf_missing(outbuf, outcount, t))))
        FAIL(MPI_ERR_BUFFER, "buffer is NULL");
    if (n)
        tm_type_unpack(outbuf, (size_t)outcount, t, 0, (const char *)inbuf + *position, (size_t)n);
    *position += n;
    return MPI_SUCCESS;
}

static int pack_size_any(const char *fn, MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                         MPI_Count *size, MPI_Count max)
{
    NEED_ME(fn);
    const struct tm_type *t;
    int err = check(me, fn, comm, incount, datatype, &t);
    if (err) return err;
    if (TM_UNLIKELY(!size)) FAIL(MPI_ERR_ARG, "size is NULL");
    MPI_Count n = packed_bytes(incount, t);
    if (TM_UNLIKELY(n < 0 || n > max))
        FAIL(MPI_ERR_COUNT, "%lld elements of %s take more than %lld bytes", incount, t->name, max);
    *size = n;
    return MPI_SUCCESS;
}

TM_API int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                     int outsize, int *position, MPI_Comm comm)
{
    const char *fn = "MPI_Pack";
    if (TM_UNLIKELY(!position)) return tm_err_noco(MPI_ERR_ARG, fn, "position is NULL");
    MPI_Count pos = *position;
    int err = pack_any(fn, inbuf, incount, datatype, outbuf, outsize, &pos, comm);
    if (!err) *position = (int)pos; /* at most outsize */
    return err;
}
TM_ALIAS(Pack)

TM_API int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    const char *fn = "MPI_Pack_c";
    if (TM_UNLIKELY(!position)) return tm_err_noco(MPI_ERR_ARG, fn, "position is NULL");
    return pack_any(fn, inbuf, incount, datatype, outbuf, outsize, position, comm);
}
TM_ALIAS(Pack_c)

TM_API int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                       MPI_Datatype datatype, MPI_Comm comm)
{
    const char *fn = "MPI_Unpack";
    if (TM_UNLIKELY(!position)) return tm_err_noco(MPI_ERR_ARG, fn, "position is NULL");
    MPI_Count pos = *position;
    int err = unpack_any(fn, inbuf, insize, &pos, outbuf, outcount, datatype, comm);
    if (!err) *position = (int)pos; /* at most insize */
    return err;
}
TM_ALIAS(Unpack)

TM_API int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                         MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    const char *fn = "MPI_Unpack_c";
    if (TM_UNLIKELY(!position)) return tm_err_noco(MPI_ERR_ARG, fn, "position is NULL");
    return unpack_any(fn, inbuf, insize, position, outbuf, outcount, datatype, comm);
}
TM_ALIAS(Unpack_c)

TM_API int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    const char *fn = "MPI_Pack_size";
    if (TM_UNLIKELY(!size)) return tm_err_noco(MPI_ERR_ARG, fn, "size is NULL");
    MPI_Count n = 0;
    int err = pack_size_any(fn, incount, datatype, comm, &n, INT_MAX);
    if (!err) *size = (int)n;
    return err;
}
TM_ALIAS(Pack_size)

TM_API int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                            MPI_Count *size)
{
    return pack_size_any("MPI_Pack_size_c", incount, datatype, comm, size, LLONG_MAX);
}
TM_ALIAS(Pack_size_c)
