/* io_file.c — the file object (io.h): its handle table, MPI_File_open/close/delete, size,
 * preallocation, group, access mode, hints, sync and atomicity.
 *
 * Open: rank 0 of the communicator opens first (it alone creates the file, so MPI_MODE_EXCL
 * means what it says with many ranks), then the others open the same path without O_CREAT;
 * every rank holds its own descriptor (an open file description of its own: the atomic-mode
 * byte-range locks are per description, io_posix.c).  Outcomes are agreed on by an allreduce,
 * so every rank returns the same error class and a failed open leaves nothing open. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm.h"
#include "errh.h"
#include "info.h"
#include "io.h"
#include "io_pool.h"
#include "job.h"
#include "objs.h"

/* The long file system calls of this file, as tasks of the job's file system threads
 * (io_pool.h): a carried rank parks while an open, a resize or a sync runs.  Each returns 0
 * (open: the descriptor) or a negative errno. */
enum fs_op { FS_OPEN, FS_TRUNCATE, FS_ALLOCATE, FS_DATASYNC };

struct fs_task {
    struct tm_iop_task t; /* first */
    enum fs_op op;
    int fd, flags;
    const char *path;
    off_t size;
};

static int fs_run(struct tm_iop_task *t)
{
    struct fs_task *x = (struct fs_task *)t;
    int r;
    switch (x->op) {
    case FS_OPEN:
        r = open(x->path, x->flags, 0666);
        return r < 0 ? -errno : r;
    case FS_TRUNCATE:
        return ftruncate(x->fd, x->size) < 0 ? -errno : 0;
    case FS_ALLOCATE:
        return -posix_fallocate(x->fd, 0, x->size);
    case FS_DATASYNC:
        return fdatasync(x->fd) < 0 ? -errno : 0;
    }
    return -EINVAL;
}

static int fs_call(struct fs_task *x)
{
    x->t.run = fs_run;
    struct tm_rank *me = tm_self();
    return me ? tm_iop_call(me, &x->t, TM_IOP_ANY) : fs_run(&x->t);
}

/* open(2) of path for a rank.  A pool thread has the directory and umask of whichever rank
 * started it (agent/interpose/interpose_fs.c), so what goes there is an open that creates
 * nothing, of the path made absolute here, in the rank's own directory.  Sets errno. */
static int fs_open(const char *path, int flags)
{
    char abs[PATH_MAX];
    if (path[0] != '/') {
        size_t n = getcwd(abs, sizeof abs) ? strlen(abs) : sizeof abs;
        if (n + 1 + strlen(path) >= sizeof abs) return open(path, flags, 0666);
        abs[n] = '/';
        strcpy(abs + n + 1, path);
        path = abs;
    }
    if (flags & O_CREAT) return open(path, flags, 0666);
    struct fs_task x = {.op = FS_OPEN, .path = path, .flags = flags};
    int r = fs_call(&x);
    if (r < 0) errno = -r;
    return r < 0 ? -1 : r;
}

int tm_io_errno_class(int e)
{
    switch (e) {
    case 0:
        return MPI_SUCCESS;
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case ENOSPC:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ETXTBSY:
    case EBUSY:
        return MPI_ERR_FILE_IN_USE;
    case EISDIR:
    case ENAMETOOLONG:
    case ENOTDIR:
    case ELOOP:
    case EINVAL:
        return MPI_ERR_BAD_FILE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

int tm_io_err(struct tm_rank *me, struct tm_file *f, int code, const char *fn, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    MPI_Errhandler eh = f ? f->eh : me->objs->file_eh;
    int h = MPI_FILE_NULL;
    if (f) {
        /* the handle, for a user handler (it receives a pointer to it) */
        struct tm_objtab *t = me->objs->files;
        for (int i = 0; t && i < t->cap; i++)
            if (tm_objtab_get(t, TM_FILE_BASE, TM_FILE_BASE + i) == f) {
                h = TM_FILE_BASE + i;
                break;
            }
    }
    return tm_err_obj(me, TM_EH_FILE, h, eh, code, fn, "%s", msg);
}

static void file_free(struct tm_rank *me, struct tm_file *f)
{
    if (f->fd >= 0) close(f->fd);
    tm_io_sp_close(f);
    tm_io_view_free(me, f);
    if (f->info != MPI_INFO_NULL) PMPI_Info_free(&f->info);
    if (f->leaders != MPI_COMM_NULL) PMPI_Comm_free(&f->leaders);
    if (f->node != MPI_COMM_NULL) PMPI_Comm_free(&f->node);
    if (f->comm != MPI_COMM_NULL) PMPI_Comm_free(&f->comm);
    tm_errh_unref(me, f->eh);
    free(f->path);
    free(f);
}

/* Job teardown (objs.h io_free): files the program left open lose their descriptors; their
 * communicators and windows go with the rank's tables. */
static void leftover_free(void *p)
{
    struct tm_file *f = p;
    if (f->fd >= 0) close(f->fd);
    free(f->path);
    free(f);
}

static void io_free_hook(struct tm_objs *o)
{
    tm_objtab_free(o->files, leftover_free);
    o->files = NULL;
    tm_io_datareps_free(o);
}

void tm_io_state_hook(struct tm_rank *me)
{
    me->objs->io_free = io_free_hook;
}

struct tm_file *tm_file_get(struct tm_rank *me, MPI_File fh)
{
    return me->objs ? tm_objtab_get(me->objs->files, TM_FILE_BASE, fh) : NULL;
}

/* ROMIO-style file system prefixes ("ufs:", "nfs:", "lustre:" ...) name the file system;
 * every one here is POSIX, so the prefix goes. */
static const char *strip_prefix(const char *name)
{
    static const char *const pfx[] = {"ufs:", "nfs:",   "lustre:", "gpfs:", "pvfs2:",
                                      "xfs:", "panfs:", "beegfs:", "daos:", "testfs:"};
    for (size_t i = 0; i < sizeof pfx / sizeof pfx[0]; i++)
        if (!strncmp(name, pfx[i], strlen(pfx[i]))) return name + strlen(pfx[i]);
    return name;
}

static int amode_check(int amode, const char **why)
{
    int acc = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_RDWR ? 1 : 0) +
              (amode & MPI_MODE_WRONLY ? 1 : 0);
    const int all = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE |
                    MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                    MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
    if (amode & ~all)
        *why = "unknown bits in amode";
    else if (acc != 1)
        *why = "amode needs exactly one of MPI_MODE_RDONLY, _RDWR, _WRONLY";
    else if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        *why = "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
    else if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        *why = "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
    else
        return MPI_SUCCESS;
    return MPI_ERR_AMODE;
}

TM_API int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                          MPI_File *fh)
{
    const char *fn = "MPI_File_open";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr) return tm_io_err(me, NULL, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (cr->c->inter)
        return tm_io_err(me, NULL, MPI_ERR_COMM, fn, "an inter-communicator cannot open files");
    if (!filename || !fh) return tm_io_err(me, NULL, MPI_ERR_ARG, fn, "filename or fh is NULL");
    /* a failed open leaves no handle behind (ROMIO and OMPIO do the same): a program that
     * closes what it may have opened closes nothing */
    *fh = MPI_FILE_NULL;
    if (info != MPI_INFO_NULL && !tm_info_get(me, info))
        return tm_io_err(me, NULL, MPI_ERR_INFO, fn, "invalid info %d", info);
    const char *why = NULL;
    int err = amode_check(amode, &why);
    /* the job's file system threads, whose settings may be wrong (io_pool.h) */
    char poolmsg[160];
    if (!err && (err = tm_iop_setup(me, poolmsg, sizeof poolmsg))) why = poolmsg;
    /* same amode everywhere: max of (err, amode, -amode) */
    int v[3] = {err, amode, -amode}, r[3];
    PMPI_Allreduce(v, r, 3, MPI_INT, MPI_MAX, comm);
    if (r[0])
        return tm_io_err(me, NULL, r[0], fn, "%s",
                         why ? why : "bad amode or setting on another rank");
    if (r[1] != -r[2])
        return tm_io_err(me, NULL, MPI_ERR_NOT_SAME, fn, "ranks gave different amodes");

    struct tm_file *f = calloc(1, sizeof *f);
    char *path = strdup(strip_prefix(filename));
    if (!f || !path) {
        free(f);
        free(path);
        return tm_io_err(me, NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    f->fd = -1;
    f->path = path;
    f->amode = amode;
    f->comm = f->node = f->leaders = MPI_COMM_NULL;
    f->info = MPI_INFO_NULL;
    f->spwin = MPI_WIN_NULL;
    f->eh = me->objs->file_eh; /* a new file inherits MPI_FILE_NULL's handler */
    tm_errh_ref(me, f->eh);
    tm_io_view_default(f);
    int rank;
    PMPI_Comm_rank(comm, &rank);
    err = tm_comm_split(me, fn, comm, 0, rank, &f->comm);
    if (err) {
        file_free(me, f);
        return tm_io_err(me, NULL, err, fn, "cannot duplicate the communicator");
    }
    PMPI_Comm_rank(f->comm, &f->rank);
    PMPI_Comm_size(f->comm, &f->size);
    PMPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &f->node);
    int nrank;
    PMPI_Comm_rank(f->node, &nrank);
    PMPI_Comm_split(f->comm, nrank == 0 ? 0 : MPI_UNDEFINED, f->rank, &f->leaders);
    err = tm_io_hints_apply(f, info);

    int flags = O_CLOEXEC;
    flags |= amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
    if (amode & MPI_MODE_CREATE) flags |= O_CREAT;
    if (amode & MPI_MODE_EXCL) flags |= O_EXCL;
    int e = 0;
    if (!err && f->rank == 0) {
        f->fd = fs_open(path, flags);
        e = f->fd < 0 ? errno : 0;
    }
    int e0 = err ? -err : e; /* negative: an MPI class before the open */
    PMPI_Bcast(&e0, 1, MPI_INT, 0, f->comm);
    if (!e0 && f->rank != 0) {
        f->fd = fs_open(path, flags & ~(O_CREAT | O_EXCL));
        e = f->fd < 0 ? errno : 0;
    }
    int cls = e0 < 0 ? -e0 : tm_io_errno_class(e0 ? e0 : e);
    int all;
    PMPI_Allreduce(&cls, &all, 1, MPI_INT, MPI_MAX, f->comm);
    struct stat sb;
    if (!all && fstat(f->fd, &sb) == 0 && S_ISDIR(sb.st_mode)) all = MPI_ERR_BAD_FILE;
    MPI_Offset initial = 0;
    if (!all && (amode & MPI_MODE_APPEND)) initial = (MPI_Offset)sb.st_size;
    if (!all) all = tm_io_sp_open(f, initial);
    if (all) {
        int sys = e0 > 0 ? e0 : e;
        file_free(me, f);
        return tm_io_err(me, NULL, all, fn, "%s: %s", filename,
                         sys ? strerror(sys) : tm_err_name(all));
    }
    f->pos = initial;
    pthread_mutex_lock(&me->objs->lock);
    tm_io_state_hook(me);
    int h = tm_objtab_add(&me->objs->files, TM_FILE_BASE, f);
    pthread_mutex_unlock(&me->objs->lock);
    if (h < 0) {
        file_free(me, f);
        return tm_io_err(me, NULL, MPI_ERR_NO_MEM, fn, "out of file handles");
    }
    *fh = h;
    return MPI_SUCCESS;
}
TM_ALIAS(File_open)

/* Drops handle h from me's table. */
static void handle_drop(struct tm_rank *me, MPI_File h)
{
    pthread_mutex_lock(&me->objs->lock);
    tm_objtab_del(me->objs->files, TM_FILE_BASE, h);
    pthread_mutex_unlock(&me->objs->lock);
}

TM_API int PMPI_File_close(MPI_File *fh)
{
    const char *fn = "MPI_File_close";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!fh) return tm_io_err(me, NULL, MPI_ERR_ARG, fn, "fh is NULL");
    struct tm_file *f = tm_file_get(me, *fh);
    if (!f) return tm_io_err(me, NULL, MPI_ERR_FILE, fn, "invalid file %d", *fh);
    /* every rank's accesses are done before the file can go (MPI_MODE_DELETE_ON_CLOSE) */
    PMPI_Barrier(f->comm);
    int e = close(f->fd) < 0 ? errno : 0;
    f->fd = -1;
    if (f->amode & MPI_MODE_DELETE_ON_CLOSE) {
        PMPI_Barrier(f->comm);
        if (f->rank == 0 && unlink(f->path) < 0 && errno != ENOENT) e = errno;
    }
    handle_drop(me, *fh);
    *fh = MPI_FILE_NULL;
    file_free(me, f);
    if (e) return tm_io_err(me, NULL, tm_io_errno_class(e), fn, "%s", strerror(e));
    return MPI_SUCCESS;
}
TM_ALIAS(File_close)

TM_API int PMPI_File_delete(const char *filename, MPI_Info info)
{
    const char *fn = "MPI_File_delete";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!filename) return tm_io_err(me, NULL, MPI_ERR_ARG, fn, "filename is NULL");
    if (info != MPI_INFO_NULL && !tm_info_get(me, info))
        return tm_io_err(me, NULL, MPI_ERR_INFO, fn, "invalid info %d", info);
    if (unlink(strip_prefix(filename)) < 0) {
        int e = errno;
        return tm_io_err(me, NULL, tm_io_errno_class(e), fn, "%s: %s", filename, strerror(e));
    }
    return MPI_SUCCESS;
}
TM_ALIAS(File_delete)

/* Rank 0 changes the size (ftruncate, or posix_fallocate when grow_only), the others learn
 * the outcome: one call on the file, every rank the same answer. */
static int resize(struct tm_file *f, MPI_Offset size, int grow_only, int *sys)
{
    int e = 0;
    if (f->rank == 0) {
        struct fs_task x = {
            .op = grow_only ? FS_ALLOCATE : FS_TRUNCATE, .fd = f->fd, .size = (off_t)size};
        if (!grow_only || size > 0) e = -fs_call(&x);
    }
    PMPI_Bcast(&e, 1, MPI_INT, 0, f->comm);
    *sys = e;
    return tm_io_errno_class(e);
}

static int size_call(const char *fn, MPI_File fh, MPI_Offset size, int grow_only)
{
    TM_IO_GET(fn, fh);
    MPI_Offset v[2] = {size, -size}, r[2];
    PMPI_Allreduce(v, r, 2, MPI_OFFSET, MPI_MAX, f->comm);
    if (r[0] != -r[1]) return tm_io_err(me, f, MPI_ERR_NOT_SAME, fn, "ranks gave different sizes");
    if (size < 0) return tm_io_err(me, f, MPI_ERR_ARG, fn, "negative size %lld", (long long)size);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return tm_io_err(me, f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                         "the file was opened with MPI_MODE_SEQUENTIAL");
    if (f->amode & MPI_MODE_RDONLY)
        return tm_io_err(me, f, MPI_ERR_READ_ONLY, fn, "the file was opened read-only");
    int sys;
    int err = resize(f, size, grow_only, &sys);
    PMPI_Barrier(f->comm); /* the new size is what every rank sees next */
    if (err) return tm_io_err(me, f, err, fn, "%s", strerror(sys));
    return MPI_SUCCESS;
}

TM_API int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return size_call("MPI_File_set_size", fh, size, 0);
}
TM_ALIAS(File_set_size)

TM_API int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return size_call("MPI_File_preallocate", fh, size, 1);
}
TM_ALIAS(File_preallocate)

TM_API int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    const char *fn = "MPI_File_get_size";
    TM_IO_GET(fn, fh);
    if (!size) return tm_io_err(me, f, MPI_ERR_ARG, fn, "size is NULL");
    struct stat sb;
    if (fstat(f->fd, &sb) < 0) {
        int e = errno;
        return tm_io_err(me, f, tm_io_errno_class(e), fn, "%s", strerror(e));
    }
    *size = (MPI_Offset)sb.st_size;
    return MPI_SUCCESS;
}
TM_ALIAS(File_get_size)

TM_API int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    const char *fn = "MPI_File_get_group";
    TM_IO_GET(fn, fh);
    if (!group) return tm_io_err(me, f, MPI_ERR_ARG, fn, "group is NULL");
    return PMPI_Comm_group(f->comm, group);
}
TM_ALIAS(File_get_group)

TM_API int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    const char *fn = "MPI_File_get_amode";
    TM_IO_GET(fn, fh);
    if (!amode) return tm_io_err(me, f, MPI_ERR_ARG, fn, "amode is NULL");
    *amode = f->amode;
    return MPI_SUCCESS;
}
TM_ALIAS(File_get_amode)

TM_API int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    const char *fn = "MPI_File_set_info";
    TM_IO_GET(fn, fh);
    if (info != MPI_INFO_NULL && !tm_info_get(me, info))
        return tm_io_err(me, f, MPI_ERR_INFO, fn, "invalid info %d", info);
    int err = tm_io_hints_apply(f, info);
    if (err) return tm_io_err(me, f, err, fn, "out of memory");
    return MPI_SUCCESS;
}
TM_ALIAS(File_set_info)

TM_API int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    const char *fn = "MPI_File_get_info";
    TM_IO_GET(fn, fh);
    if (!info_used) return tm_io_err(me, f, MPI_ERR_ARG, fn, "info_used is NULL");
    int err = PMPI_Info_dup(f->info, info_used);
    if (err) return tm_io_err(me, f, err, fn, "cannot copy the hints");
    return MPI_SUCCESS;
}
TM_ALIAS(File_get_info)

TM_API int PMPI_File_sync(MPI_File fh)
{
    const char *fn = "MPI_File_sync";
    TM_IO_GET(fn, fh);
    /* Writes go straight to the file (no cache of ours), so what sync adds is the device:
     * fdatasync, then the barrier that orders it before every rank's next access. */
    int e = 0;
    if (!(f->amode & MPI_MODE_RDONLY)) {
        struct fs_task x = {.op = FS_DATASYNC, .fd = f->fd};
        e = -fs_call(&x);
        if (e == EINVAL) e = 0; /* a file that cannot be synced (a pipe, a device) */
    }
    int cls = tm_io_errno_class(e), all;
    PMPI_Allreduce(&cls, &all, 1, MPI_INT, MPI_MAX, f->comm);
    if (all) return tm_io_err(me, f, all, fn, "%s", e ? strerror(e) : "failed on another rank");
    return MPI_SUCCESS;
}
TM_ALIAS(File_sync)

TM_API int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    const char *fn = "MPI_File_set_atomicity";
    TM_IO_GET(fn, fh);
    int v[2] = {!!flag, -!!flag}, r[2];
    PMPI_Allreduce(v, r, 2, MPI_INT, MPI_MAX, f->comm);
    if (r[0] != -r[1]) return tm_io_err(me, f, MPI_ERR_NOT_SAME, fn, "ranks gave different flags");
    f->atomic = !!flag;
    return MPI_SUCCESS;
}
TM_ALIAS(File_set_atomicity)

TM_API int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    const char *fn = "MPI_File_get_atomicity";
    TM_IO_GET(fn, fh);
    if (!flag) return tm_io_err(me, f, MPI_ERR_ARG, fn, "flag is NULL");
    *flag = f->atomic;
    return MPI_SUCCESS;
}
TM_ALIAS(File_get_atomicity)
