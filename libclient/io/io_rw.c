/* io_rw.c — independent data access (MPI 4.0 §14.4.2-3): explicit offsets and individual file
 * pointers, the access preparation every form shares, seek and get_position, and the blocking
 * entry points of every form (tm_io_do dispatches; collective forms are in io_coll.c,
 * shared-pointer ones in io_shared.c).
 *
 * Consistency (§14.6.1): there is no cache of ours, every access is a pread/pwrite on the
 * rank's own descriptor, so a write is in the file (the kernel's page cache, shared by every
 * process on the machine) when the call returns; MPI_File_sync adds fdatasync.  Atomic mode
 * makes each access one unit for every other rank's: a byte-range lock over the access's
 * extent (exclusive for writes) held while it moves, on any agent sharing the file system. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "errh.h"
#include "io.h"
#include "job.h"
#include "type.h"

void tm_io_status(MPI_Status *st, size_t nbytes)
{
    if (st == MPI_STATUS_IGNORE) return;
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->MPI_ERROR = MPI_SUCCESS;
    st->tm_cancelled = 0;
    st->tm_bytes = (long long)nbytes;
}

static int converts(const struct tm_datarep *rep)
{
    return rep->external32 || rep->rd || rep->wr || rep->rd_c || rep->wr_c;
}

int tm_io_acc_prepare(struct tm_file *f, struct tm_io_acc *a, MPI_Offset off, const void *buf,
                      MPI_Count count, MPI_Datatype dt, int write, const char **why)
{
    *a = (struct tm_io_acc){.buf = (void *)buf, .dt = dt};
    if (count < 0) return *why = "negative count", MPI_ERR_COUNT;
    const struct tm_type *t = tm_type_get(dt);
    if (!t) return *why = "invalid datatype (or not committed)", MPI_ERR_TYPE;
    if (off < 0) return *why = "negative offset", MPI_ERR_ARG;
    if (write && (f->amode & MPI_MODE_RDONLY))
        return *why = "the file was opened read-only", MPI_ERR_READ_ONLY;
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return *why = "the file was opened write-only", MPI_ERR_ACCESS;
    a->t = t;
    a->count = (size_t)count;
    a->nbytes = (size_t)count * t->psize;
    if (a->nbytes % tm_io_etype_bytes(f))
        return *why = "the data is not a whole number of etypes", MPI_ERR_TYPE;
    if (!a->nbytes) return MPI_SUCCESS;
    if (!f->ft->psize) return *why = "the view's filetype has no data", MPI_ERR_IO;
    if (!buf) return *why = "buf is NULL", MPI_ERR_BUFFER;
    char *mem = (char *)buf;
    const struct tm_type *mt = t;
    a->bytes = a->nbytes;
    if (converts(f->rep)) {
        int64_t n = tm_io_datarep_size(f->rep, t, dt, a->count);
        if (n < 0)
            return *why = "the data representation cannot size this type", MPI_ERR_CONVERSION;
        a->bytes = (size_t)n;
        if (!(a->conv = malloc(a->bytes ? a->bytes : 1)))
            return *why = "out of memory", MPI_ERR_NO_MEM;
        if (write && tm_io_datarep_to_file(f->rep, buf, a->count, dt, a->conv, a->bytes))
            return *why = "the write conversion failed", MPI_ERR_CONVERSION;
        mem = a->conv;
        mt = NULL;
    }
    int64_t vbyte = off * (int64_t)tm_io_etype_bytes(f);
    int err = tm_io_map(f, vbyte, a->bytes, mem, a->count, mt, &a->segs);
    if (err) *why = "out of memory";
    return err;
}

size_t tm_io_acc_native(const struct tm_io_acc *a, size_t done)
{
    if (done >= a->bytes) return a->nbytes;
    if (!a->conv) return done;
    /* whole elements of the converted stream */
    size_t per = a->count ? a->bytes / a->count : 0;
    return per ? done / per * (a->nbytes / a->count) : 0;
}

int tm_io_acc_finish_read(struct tm_file *f, struct tm_io_acc *a, size_t done)
{
    if (!a->conv || !done) return MPI_SUCCESS;
    size_t per = a->count ? a->bytes / a->count : 0;
    size_t n = per ? done / per : 0;
    if (!n) return MPI_SUCCESS;
    return tm_io_datarep_from_file(f->rep, a->buf, n, a->dt, a->conv, n * per) ? MPI_ERR_CONVERSION
                                                                               : MPI_SUCCESS;
}

void tm_io_acc_free(struct tm_io_acc *a)
{
    free(a->conv);
    tm_io_segs_free(&a->segs);
}

/* Moves a prepared access: locked in atomic mode.  *done: view bytes moved. */
int tm_io_acc_move(struct tm_file *f, struct tm_io_acc *a, int write, size_t *done)
{
    *done = 0;
    if (!a->segs.n) return MPI_SUCCESS;
    int err = MPI_SUCCESS;
    if (f->atomic && (err = tm_io_lock(f->fd, write, a->segs.lo, a->segs.hi))) return err;
    if (write)
        err = tm_io_pwrite_segs(f->fd, a->segs.v, a->segs.n, done);
    else
        err = tm_io_pread_segs(f->fd, a->segs.v, a->segs.n,
                               f->h.ds_read ? f->h.ind_rd_buffer_size : 0, done);
    if (f->atomic) tm_io_unlock(f->fd, a->segs.lo, a->segs.hi);
    return err;
}

int tm_io_indep(struct tm_file *f, MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype dt,
                int write, size_t *nbytes, const char **why)
{
    struct tm_io_acc a;
    *nbytes = 0;
    int err = tm_io_acc_prepare(f, &a, off, buf, count, dt, write, why);
    size_t done = 0;
    if (!err) {
        err = tm_io_acc_move(f, &a, write, &done);
        if (err) *why = write ? "write failed" : "read failed";
    }
    if (!err && !write && (err = tm_io_acc_finish_read(f, &a, done)))
        *why = "read conversion failed";
    *nbytes = tm_io_acc_native(&a, done);
    tm_io_acc_free(&a);
    return err;
}

int64_t tm_io_access_bytes(struct tm_file *f, MPI_Count count, MPI_Datatype dt)
{
    const struct tm_type *t = tm_type_get(dt);
    if (!t || count < 0) return 0;
    if (!converts(f->rep)) return (int64_t)t->psize * count;
    int64_t n = tm_io_datarep_size(f->rep, t, dt, (size_t)count);
    return n < 0 ? 0 : n;
}

int tm_io_do(struct tm_rank *me, struct tm_file *f, const char *fn, enum tm_io_how how, int write,
             MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype dt, size_t *nbytes)
{
    const char *why = "";
    int err;
    int seq = f->amode & MPI_MODE_SEQUENTIAL;
    *nbytes = 0;
    if (seq && how != TM_IO_SHARED && how != TM_IO_ORDERED)
        return tm_io_err(me, f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                         "the file was opened with MPI_MODE_SEQUENTIAL: shared pointer only");
    size_t eb = tm_io_etype_bytes(f);
    switch (how) {
    case TM_IO_AT:
        err = tm_io_indep(f, off, buf, count, dt, write, nbytes, &why);
        break;
    case TM_IO_AT_ALL:
        err = tm_io_coll(f, off, buf, count, dt, write, nbytes, &why);
        break;
    case TM_IO_IND:
    case TM_IO_ALL: {
        off = f->pos;
        err = how == TM_IO_IND ? tm_io_indep(f, off, buf, count, dt, write, nbytes, &why)
                               : tm_io_coll(f, off, buf, count, dt, write, nbytes, &why);
        /* the pointer moves past what was accessed (a short read: past what was read) */
        int64_t vb = tm_io_access_bytes(f, count, dt);
        const struct tm_type *t = tm_type_get(dt);
        if (t && t->psize && (size_t)*nbytes < (size_t)count * t->psize)
            vb = (int64_t)((double)vb * (double)*nbytes / (double)((size_t)count * t->psize));
        f->pos += vb / (int64_t)eb;
        break;
    }
    case TM_IO_SHARED: {
        int64_t vb = tm_io_access_bytes(f, count, dt);
        MPI_Offset at = 0;
        err = tm_io_sp_fetch_add(f, vb / (int64_t)eb, &at);
        if (err)
            why = "shared file pointer";
        else
            err = tm_io_indep(f, at, buf, count, dt, write, nbytes, &why);
        break;
    }
    case TM_IO_ORDERED:
        err = tm_io_ordered(f, buf, count, dt, write, nbytes, &why);
        break;
    default:
        err = MPI_ERR_INTERN;
    }
    if (err) return tm_io_err(me, f, err, fn, "%s", why);
    return MPI_SUCCESS;
}

/* The blocking entry points, each with its large-count twin (Sfx _c, an MPI_Count count):
 * both are tm_io_do under their own names. */
#define RW_ENTRY_T(Name, Sfx, Count, how, write, CONST)                                            \
    TM_API int PMPI_File_##Name##Sfx(MPI_File fh, CONST void *buf, Count count,                    \
                                     MPI_Datatype datatype, MPI_Status *status)                    \
    {                                                                                              \
        const char *fn = "MPI_File_" #Name #Sfx;                                                   \
        TM_IO_GET(fn, fh);                                                                         \
        size_t n;                                                                                  \
        int err = tm_io_do(me, f, fn, how, write, 0, (void *)buf, count, datatype, &n);            \
        tm_io_status(status, n);                                                                   \
        return err;                                                                                \
    }                                                                                              \
    TM_ALIAS(File_##Name##Sfx)

#define RW_AT_ENTRY_T(Name, Sfx, Count, how, write, CONST)                                         \
    TM_API int PMPI_File_##Name##Sfx(MPI_File fh, MPI_Offset offset, CONST void *buf, Count count, \
                                     MPI_Datatype datatype, MPI_Status *status)                    \
    {                                                                                              \
        const char *fn = "MPI_File_" #Name #Sfx;                                                   \
        TM_IO_GET(fn, fh);                                                                         \
        size_t n;                                                                                  \
        int err = tm_io_do(me, f, fn, how, write, offset, (void *)buf, count, datatype, &n);       \
        tm_io_status(status, n);                                                                   \
        return err;                                                                                \
    }                                                                                              \
    TM_ALIAS(File_##Name##Sfx)

#define RW_ENTRY(Name, how, write, CONST)                                                          \
    RW_ENTRY_T(Name, , int, how, write, CONST)                                                     \
    RW_ENTRY_T(Name, _c, MPI_Count, how, write, CONST)
#define RW_AT_ENTRY(Name, how, write, CONST)                                                       \
    RW_AT_ENTRY_T(Name, , int, how, write, CONST)                                                  \
    RW_AT_ENTRY_T(Name, _c, MPI_Count, how, write, CONST)

#define NOCONST
RW_AT_ENTRY(read_at, TM_IO_AT, 0, NOCONST)
RW_AT_ENTRY(write_at, TM_IO_AT, 1, const)
RW_AT_ENTRY(read_at_all, TM_IO_AT_ALL, 0, NOCONST)
RW_AT_ENTRY(write_at_all, TM_IO_AT_ALL, 1, const)
RW_ENTRY(read, TM_IO_IND, 0, NOCONST)
RW_ENTRY(write, TM_IO_IND, 1, const)
RW_ENTRY(read_all, TM_IO_ALL, 0, NOCONST)
RW_ENTRY(write_all, TM_IO_ALL, 1, const)
RW_ENTRY(read_shared, TM_IO_SHARED, 0, NOCONST)
RW_ENTRY(write_shared, TM_IO_SHARED, 1, const)
RW_ENTRY(read_ordered, TM_IO_ORDERED, 0, NOCONST)
RW_ENTRY(write_ordered, TM_IO_ORDERED, 1, const)

/* The etype offset of whence + offset; -1 (and *why) if it is before the view's start. */
int64_t tm_io_seek_target(struct tm_file *f, MPI_Offset cur, MPI_Offset offset, int whence,
                          const char **why)
{
    int64_t base;
    if (whence == MPI_SEEK_SET) {
        base = 0;
    } else if (whence == MPI_SEEK_CUR) {
        base = cur;
    } else if (whence == MPI_SEEK_END) {
        struct stat sb;
        if (fstat(f->fd, &sb) < 0) return *why = "cannot stat the file", -1;
        base = tm_io_view_bytes_before(f, (int64_t)sb.st_size) / (int64_t)tm_io_etype_bytes(f);
    } else {
        return *why = "invalid whence", -1;
    }
    if (base + offset < 0) return *why = "the position would be before the view's start", -1;
    return base + offset;
}

TM_API int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *fn = "MPI_File_seek";
    TM_IO_GET(fn, fh);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return tm_io_err(me, f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "MPI_MODE_SEQUENTIAL file");
    const char *why = NULL;
    int64_t at = tm_io_seek_target(f, f->pos, offset, whence, &why);
    if (at < 0) return tm_io_err(me, f, MPI_ERR_ARG, fn, "%s", why);
    f->pos = at;
    return MPI_SUCCESS;
}
TM_ALIAS(File_seek)

TM_API int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    const char *fn = "MPI_File_get_position";
    TM_IO_GET(fn, fh);
    if (!offset) return tm_io_err(me, f, MPI_ERR_ARG, fn, "offset is NULL");
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return tm_io_err(me, f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "MPI_MODE_SEQUENTIAL file");
    *offset = f->pos;
    return MPI_SUCCESS;
}
TM_ALIAS(File_get_position)
