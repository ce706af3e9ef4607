/* io_shared.c — shared file pointers (MPI 4.0 §14.4.4): _shared and _ordered access,
 * seek_shared, get_position_shared.
 *
 * The pointer is one MPI_Offset (in etypes) in an RMA window over the file's communicator,
 * at its rank 0, moved with MPI_Fetch_and_op: an origin on rank 0's node adds with an atomic
 * instruction, one on another node sends a TM_MSG_RMA frame that node's receive daemon
 * applies (rma/rma.h: true passive-target progress, rank 0 need not call MPI).  So no lock
 * daemon and no lock file: it works on every file system, across nodes, and costs one atomic
 * (or one round trip) per access.  The alternative, fcntl locks on a hidden file beside the
 * data, needs a file system with working byte-range locks (NFS without lockd has none), a
 * writable directory and a clean-up after a crash; the window needs none of these.
 * _ordered: an exclusive scan of the ranks' sizes places them in rank order from the pointer,
 * which rank 0 advances by the total once; the data then moves as one collective access. */
#include "errh.h"
#include "io.h"
#include "job.h"

int tm_io_sp_open(struct tm_file *f, MPI_Offset initial)
{
    MPI_Aint sz = f->rank == 0 ? (MPI_Aint)sizeof(MPI_Offset) : 0;
    int err = PMPI_Win_allocate(sz, (int)sizeof(MPI_Offset), MPI_INFO_NULL, f->comm, &f->spmem,
                                &f->spwin);
    int all;
    PMPI_Allreduce(&err, &all, 1, MPI_INT, MPI_MAX, f->comm);
    if (all) {
        if (!err) PMPI_Win_free(&f->spwin);
        f->spwin = MPI_WIN_NULL;
        return MPI_ERR_NO_MEM;
    }
    PMPI_Win_set_errhandler(f->spwin, MPI_ERRORS_RETURN);
    if (f->rank == 0) *f->spmem = initial;
    PMPI_Barrier(f->comm); /* the initial value is there before anybody moves it */
    return MPI_SUCCESS;
}

void tm_io_sp_close(struct tm_file *f)
{
    if (f->spwin != MPI_WIN_NULL) PMPI_Win_free(&f->spwin);
    f->spwin = MPI_WIN_NULL;
}

static int sp_op(struct tm_file *f, MPI_Offset v, MPI_Offset *old, MPI_Op op)
{
    long long in = (long long)v, out = 0;
    int err = PMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, f->spwin);
    if (!err) err = PMPI_Fetch_and_op(&in, &out, MPI_LONG_LONG, 0, 0, op, f->spwin);
    int uerr = err ? MPI_SUCCESS : PMPI_Win_unlock(0, f->spwin);
    if (old) *old = (MPI_Offset)out;
    return err ? err : uerr;
}

int tm_io_sp_fetch_add(struct tm_file *f, MPI_Offset n, MPI_Offset *old)
{
    return sp_op(f, n, old, n ? MPI_SUM : MPI_NO_OP);
}

int tm_io_sp_set(struct tm_file *f, MPI_Offset v)
{
    return sp_op(f, v, NULL, MPI_REPLACE);
}

int tm_io_ordered(struct tm_file *f, void *buf, MPI_Count count, MPI_Datatype dt, int write,
                  size_t *nbytes, const char **why)
{
    long long n = (long long)(tm_io_access_bytes(f, count, dt) / (int64_t)tm_io_etype_bytes(f));
    long long pre = 0, total = 0, base = 0;
    PMPI_Exscan(&n, &pre, 1, MPI_LONG_LONG, MPI_SUM, f->comm);
    if (f->rank == 0) pre = 0; /* Exscan leaves rank 0's undefined */
    PMPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, f->comm);
    int err = MPI_SUCCESS;
    if (f->rank == 0) {
        MPI_Offset old = 0;
        err = tm_io_sp_fetch_add(f, (MPI_Offset)total, &old);
        base = err ? -1 : (long long)old;
    }
    PMPI_Bcast(&base, 1, MPI_LONG_LONG, 0, f->comm);
    if (base < 0) {
        *why = "shared file pointer";
        return MPI_ERR_IO;
    }
    return tm_io_coll(f, (MPI_Offset)(base + pre), buf, count, dt, write, nbytes, why);
}

TM_API int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *fn = "MPI_File_seek_shared";
    TM_IO_GET(fn, fh);
    long long v[4] = {offset, -offset, whence, -whence}, r[4];
    PMPI_Allreduce(v, r, 4, MPI_LONG_LONG, MPI_MAX, f->comm);
    if (r[0] != -r[1] || r[2] != -r[3])
        return tm_io_err(me, f, MPI_ERR_NOT_SAME, fn, "ranks gave different offsets or whence");
    const char *why = NULL;
    long long at = 0;
    if (f->rank == 0) {
        MPI_Offset cur = 0;
        tm_io_sp_fetch_add(f, 0, &cur);
        at = tm_io_seek_target(f, cur, offset, whence, &why);
        if (at >= 0 && tm_io_sp_set(f, at)) at = -2;
    }
    PMPI_Bcast(&at, 1, MPI_LONG_LONG, 0, f->comm);
    if (at < 0)
        return tm_io_err(me, f, at == -1 ? MPI_ERR_ARG : MPI_ERR_IO, fn, "%s",
                         why ? why : "cannot move the shared file pointer");
    return MPI_SUCCESS;
}
TM_ALIAS(File_seek_shared)

TM_API int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    const char *fn = "MPI_File_get_position_shared";
    TM_IO_GET(fn, fh);
    if (!offset) return tm_io_err(me, f, MPI_ERR_ARG, fn, "offset is NULL");
    if (tm_io_sp_fetch_add(f, 0, offset))
        return tm_io_err(me, f, MPI_ERR_IO, fn, "cannot read the shared file pointer");
    return MPI_SUCCESS;
}
TM_ALIAS(File_get_position_shared)
