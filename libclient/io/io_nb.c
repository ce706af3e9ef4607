/* io_nb.c — non-blocking (MPI_File_i*, §14.4.2-4) and split-collective (_begin/_end,
 * §14.4.5) data access.
 *
 * Both run the access when they are started and hand back its outcome later: MPI lets an
 * implementation complete a non-blocking operation at its start, and a split collective's
 * begin may do all its work (§14.4.5).  Data reaches the file (or the buffer) by the time the
 * call returns, so the request is complete at once (kind TM_REQ_COLL, done; Wait/Test give its
 * status); an error is raised at the start, on the file's handler, where the program can see
 * which call failed.  The collective forms still synchronise the file's ranks when they start:
 * every rank must start them in the same order, as MPI requires of collectives. */
#include "errh.h"
#include "io.h"
#include "job.h"
#include "request.h"

static int start(const char *fn, MPI_File fh, enum tm_io_how how, int write, MPI_Offset off,
                 const void *buf, MPI_Count count, MPI_Datatype dt, MPI_Request *request)
{
    TM_IO_GET(fn, fh);
    if (!request) return tm_io_err(me, f, MPI_ERR_REQUEST, fn, "request is NULL");
    struct tm_request *r = tm_req_alloc(me, TM_REQ_COLL);
    if (!r) return tm_io_err(me, f, MPI_ERR_NO_MEM, fn, "out of memory");
    r->comm = MPI_COMM_WORLD;
    size_t n = 0;
    int err = tm_io_do(me, f, fn, how, write, off, (void *)buf, count, dt, &n);
    tm_req_set_done_own(r, MPI_UNDEFINED, MPI_UNDEFINED, n, MPI_SUCCESS);
    *request = r;
    return err;
}

/* Each with its large-count twin (Sfx _c): one start() under two names. */
#define NB_ENTRY_T(Name, Sfx, Count, how, write, CONST)                                            \
    TM_API int PMPI_File_##Name##Sfx(MPI_File fh, CONST void *buf, Count count,                    \
                                     MPI_Datatype datatype, MPI_Request *request)                  \
    {                                                                                              \
        return start("MPI_File_" #Name #Sfx, fh, how, write, 0, buf, count, datatype, request);    \
    }                                                                                              \
    TM_ALIAS(File_##Name##Sfx)

#define NB_AT_ENTRY_T(Name, Sfx, Count, how, write, CONST)                                         \
    TM_API int PMPI_File_##Name##Sfx(MPI_File fh, MPI_Offset offset, CONST void *buf, Count count, \
                                     MPI_Datatype datatype, MPI_Request *request)                  \
    {                                                                                              \
        return start("MPI_File_" #Name #Sfx, fh, how, write, offset, buf, count, datatype,         \
                     request);                                                                     \
    }                                                                                              \
    TM_ALIAS(File_##Name##Sfx)

#define NB_ENTRY(Name, how, write, CONST)                                                          \
    NB_ENTRY_T(Name, , int, how, write, CONST)                                                     \
    NB_ENTRY_T(Name, _c, MPI_Count, how, write, CONST)
#define NB_AT_ENTRY(Name, how, write, CONST)                                                       \
    NB_AT_ENTRY_T(Name, , int, how, write, CONST)                                                  \
    NB_AT_ENTRY_T(Name, _c, MPI_Count, how, write, CONST)

#define NOCONST
NB_AT_ENTRY(iread_at, TM_IO_AT, 0, NOCONST)
NB_AT_ENTRY(iwrite_at, TM_IO_AT, 1, const)
NB_AT_ENTRY(iread_at_all, TM_IO_AT_ALL, 0, NOCONST)
NB_AT_ENTRY(iwrite_at_all, TM_IO_AT_ALL, 1, const)
NB_ENTRY(iread, TM_IO_IND, 0, NOCONST)
NB_ENTRY(iwrite, TM_IO_IND, 1, const)
NB_ENTRY(iread_all, TM_IO_ALL, 0, NOCONST)
NB_ENTRY(iwrite_all, TM_IO_ALL, 1, const)
NB_ENTRY(iread_shared, TM_IO_SHARED, 0, NOCONST)
NB_ENTRY(iwrite_shared, TM_IO_SHARED, 1, const)

/* Split collectives: one active per file handle (§14.4.5). */
static int begin(const char *fn, MPI_File fh, enum tm_io_how how, int write, MPI_Offset off,
                 const void *buf, MPI_Count count, MPI_Datatype dt)
{
    TM_IO_GET(fn, fh);
    if (f->split_active)
        return tm_io_err(me, f, MPI_ERR_OTHER, fn,
                         "a split collective is already active on this file");
    size_t n = 0;
    f->split_err = tm_io_do(me, f, fn, how, write, off, (void *)buf, count, dt, &n);
    tm_io_status(&f->split_st, n);
    f->split_active = 1;
    f->split_buf = buf;
    return f->split_err;
}

static int end(const char *fn, MPI_File fh, const void *buf, MPI_Status *status)
{
    TM_IO_GET(fn, fh);
    if (!f->split_active)
        return tm_io_err(me, f, MPI_ERR_OTHER, fn, "no split collective is active on this file");
    if (buf != f->split_buf)
        return tm_io_err(me, f, MPI_ERR_BUFFER, fn, "not the buffer the _begin call was given");
    f->split_active = 0;
    if (status != MPI_STATUS_IGNORE) *status = f->split_st;
    return f->split_err; /* raised by the begin call already */
}

/* _begin and its large-count twin _begin_c; the _end has no count. */
#define SPLIT_BEGIN_T(Name, Sfx, Count, how, write, CONST)                                         \
    TM_API int PMPI_File_##Name##_begin##Sfx(MPI_File fh, CONST void *buf, Count count,            \
                                             MPI_Datatype datatype)                                \
    {                                                                                              \
        return begin("MPI_File_" #Name "_begin" #Sfx, fh, how, write, 0, buf, count, datatype);    \
    }                                                                                              \
    TM_ALIAS(File_##Name##_begin##Sfx)
#define SPLIT_AT_BEGIN_T(Name, Sfx, Count, how, write, CONST)                                      \
    TM_API int PMPI_File_##Name##_begin##Sfx(MPI_File fh, MPI_Offset offset, CONST void *buf,      \
                                             Count count, MPI_Datatype datatype)                   \
    {                                                                                              \
        return begin("MPI_File_" #Name "_begin" #Sfx, fh, how, write, offset, buf, count,          \
                     datatype);                                                                    \
    }                                                                                              \
    TM_ALIAS(File_##Name##_begin##Sfx)

#define SPLIT_ENTRY(Name, how, write, CONST)                                                       \
    SPLIT_BEGIN_T(Name, , int, how, write, CONST)                                                  \
    SPLIT_BEGIN_T(Name, _c, MPI_Count, how, write, CONST)                                          \
    TM_API int PMPI_File_##Name##_end(MPI_File fh, CONST void *buf, MPI_Status *status)            \
    {                                                                                              \
        return end("MPI_File_" #Name "_end", fh, buf, status);                                     \
    }                                                                                              \
    TM_ALIAS(File_##Name##_end)

#define SPLIT_AT_ENTRY(Name, how, write, CONST)                                                    \
    SPLIT_AT_BEGIN_T(Name, , int, how, write, CONST)                                               \
    SPLIT_AT_BEGIN_T(Name, _c, MPI_Count, how, write, CONST)                                       \
    TM_API int PMPI_File_##Name##_end(MPI_File fh, CONST void *buf, MPI_Status *status)            \
    {                                                                                              \
        return end("MPI_File_" #Name "_end", fh, buf, status);                                     \
    }                                                                                              \
    TM_ALIAS(File_##Name##_end)

SPLIT_AT_ENTRY(read_at_all, TM_IO_AT_ALL, 0, NOCONST)
SPLIT_AT_ENTRY(write_at_all, TM_IO_AT_ALL, 1, const)
SPLIT_ENTRY(read_all, TM_IO_ALL, 0, NOCONST)
SPLIT_ENTRY(write_all, TM_IO_ALL, 1, const)
SPLIT_ENTRY(read_ordered, TM_IO_ORDERED, 0, NOCONST)
SPLIT_ENTRY(write_ordered, TM_IO_ORDERED, 1, const)
