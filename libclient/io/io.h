/* io.h — MPI-IO (MPI 4.0 chapter 14): what a file handle is inside libtmpi and what the files
 * of libclient/io/ give each other.
 *
 *   io_file.c     the file object, its handle table, open/close/delete, size, group, amode,
 *                 info, sync, atomicity
 *   io_hints.c    hints: the ones honoured and the ones only reported by MPI_File_get_info
 *   io_view.c     views, and the flattening of (view, memory type) into file segments over the
 *                 datatype engine (typecore/type.h); get_byte_offset, get_type_extent
 *   io_posix.c    moving segment lists with preadv/pwritev: short transfers, end of file, read
 *                 sieving, atomic-mode byte-range locks, errno to error class
 *   io_rw.c       independent access: explicit offsets and individual file pointers, seek
 *   io_shared.c   shared file pointers (an RMA window), _shared and _ordered access
 *   io_coll.c     collective access: two-phase collective buffering, one aggregator per node
 *   io_nb.c       non-blocking (MPI_File_i*) and split-collective (_begin/_end) forms
 *   io_pool.c     the job's file system threads: a carried rank's long calls leave its carrier
 *   io_datarep.c  "native", "internal", "external32" and MPI_Register_datarep
 *   io_errh.c     error handlers on files and MPI_FILE_NULL
 *
 * Ownership: a file handle belongs to the rank that opened it (MPI handles are per process,
 * here per rank); its fields are touched only by that rank's threads (MPI does not allow
 * concurrent calls on one file handle to overlap in ways that matter here, and the handle
 * table itself is lock-free for lookups, objtab.h).  What several ranks share is the file on
 * disk, the shared pointer window and, during one collective call, the pieces the node's
 * ranks publish to their aggregator (io_coll.c). */
#ifndef TMPI_LIBCLIENT_IO_H
#define TMPI_LIBCLIENT_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mpi.h"

struct tm_rank;
struct tm_type;

#define TM_FILE_BASE 1 /* 0 is MPI_FILE_NULL */

/* Hints (io_hints.c; docs/USER.md "MPI-IO"): tested by tests/mpi/io_file.c (reported values)
 * and io_coll.c (cb_buffer_size rounds, romio_cb_* on and off). */
#define TM_IO_CB_BUFFER_DEFAULT ((size_t)16 << 20) /* cb_buffer_size: bytes per round */
#define TM_IO_CB_BUFFER_MIN ((size_t)4096)
#define TM_IO_IND_RD_DEFAULT ((size_t)4 << 20) /* ind_rd_buffer_size: read sieving span */
#define TM_IO_SIEVE_GAP ((size_t)64 << 10)     /* a gap a read sieve reads through */
#define TM_IO_ALIGN_DEFAULT ((size_t)1 << 20)  /* file-domain alignment without striping_unit */

enum tm_io_cb { TM_IO_CB_AUTO = 0, TM_IO_CB_ENABLE = 1, TM_IO_CB_DISABLE = 2 };

struct tm_io_hints {
    size_t cb_buffer_size;
    int cb_nodes; /* aggregators; 0: one per node */
    enum tm_io_cb cb_read, cb_write;
    size_t ind_rd_buffer_size;
    size_t striping_unit; /* 0: not given */
    int striping_factor;  /* 0: not given */
    int ds_read;          /* romio_ds_read: 0 disable, 1 enable/automatic */
};

/* A data representation (io_datarep.c): "native" and "internal" convert nothing. */
struct tm_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    int external32;
    MPI_Datarep_conversion_function *rd, *wr;
    MPI_Datarep_conversion_function_c *rd_c, *wr_c; /* MPI_Register_datarep_c's */
    MPI_Datarep_extent_function *ext;
    void *extra;
};

/* One contiguous piece of an access: len bytes at file offset off, from or to memory mem. */
struct tm_io_seg {
    int64_t off;
    size_t len;
    char *mem;
};

struct tm_io_segs {
    struct tm_io_seg *v;
    size_t n, cap;
    size_t bytes;   /* sum of len */
    int64_t lo, hi; /* file range covered (lo == hi: empty) */
};

struct tm_file {
    MPI_Comm comm;    /* private duplicate of the open's communicator */
    MPI_Comm node;    /* its members on this node (MPI_COMM_TYPE_SHARED) */
    MPI_Comm leaders; /* the lowest rank of each node; MPI_COMM_NULL elsewhere */
    int rank, size;   /* in comm */
    int fd;
    char *path;
    int amode;
    int atomic;
    MPI_Errhandler eh;
    MPI_Info info; /* hints as given and as used (MPI_File_get_info answers a copy) */
    struct tm_io_hints h;
    /* view */
    MPI_Offset disp;
    MPI_Datatype etype, ftype; /* handles held (tm_type_handle_hold) */
    const struct tm_type *et, *ft;
    const struct tm_datarep *rep;
    MPI_Offset pos; /* individual file pointer, in etypes */
    /* shared file pointer: an MPI_Offset (etypes) at rank 0 of comm's window */
    MPI_Win spwin;
    MPI_Offset *spmem;
    /* split collective in progress: its status (MPI allows one per file handle) */
    int split_active;
    MPI_Status split_st;
    int split_err;
    const void *split_buf;
};

/* The file behind handle fh, NULL if it is not one of me's open files. */
struct tm_file *tm_file_get(struct tm_rank *me, MPI_File fh);

/* Raises code (an error class) on file f (MPI_FILE_NULL's handler when f is NULL), fn and a
 * message; returns code unless the handler is fatal. */
int tm_io_err(struct tm_rank *me, struct tm_file *f, int code, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The error class of errno value e for a file operation. */
int tm_io_errno_class(int e);

/* The rank's MPI-IO state lives in its objs (objs.h: files, datareps); this makes the objs'
 * teardown free it (objs lock held). */
struct tm_objs;
void tm_io_state_hook(struct tm_rank *me);
void tm_io_datareps_free(struct tm_objs *o);

/* Hints (io_hints.c): parses info into h (defaults for what it does not name) and records the
 * keys used in *used (MPI_File_get_info: every hint with the value in effect). */
void tm_io_hints_default(struct tm_io_hints *h);
int tm_io_hints_apply(struct tm_file *f, MPI_Info info);

/* Views (io_view.c).  Sets the default view (disp 0, MPI_BYTE, MPI_BYTE, "native"). */
void tm_io_view_default(struct tm_file *f);
void tm_io_view_free(struct tm_rank *me, struct tm_file *f);
/* Bytes of file data per etype in f's view (its data representation's size). */
size_t tm_io_etype_bytes(const struct tm_file *f);
/* Appends the segments of an access of `bytes` bytes of view data starting at view data byte
 * vbyte (etype offset * etype bytes) whose memory side is mem laid out as count elements of
 * mt (mt NULL: contiguous bytes).  0 or an MPI error class (MPI_ERR_NO_MEM). */
int tm_io_map(const struct tm_file *f, int64_t vbyte, size_t bytes, char *mem, size_t count,
              const struct tm_type *mt, struct tm_io_segs *s);
void tm_io_segs_free(struct tm_io_segs *s);
/* Absolute byte offset of view data byte vbyte. */
int64_t tm_io_view_byte(const struct tm_file *f, int64_t vbyte);
/* View data bytes that lie before absolute byte offset `abs` (the inverse, for MPI_SEEK_END). */
int64_t tm_io_view_bytes_before(const struct tm_file *f, int64_t abs);

/* The POSIX mover (io_posix.c). */
/* Writes every segment (file-contiguous ones together); *done: bytes written, in segment
 * order, before an error.  0 or an error class. */
int tm_io_pwrite_segs(int fd, const struct tm_io_seg *v, size_t n, size_t *done);
/* Reads every segment; stops at end of file.  *done: bytes read in segment order. sieve: bytes
 * a read sieve may span (0: none). */
int tm_io_pread_segs(int fd, const struct tm_io_seg *v, size_t n, size_t sieve, size_t *done);
/* Atomic mode: byte-range lock of [lo, hi) (write: exclusive), an open file description lock
 * (F_OFD_SETLK, retried with a short sleep so a carried rank parks instead of blocking its
 * carrier).  0 or an error class. */
int tm_io_lock(int fd, int write, int64_t lo, int64_t hi);
void tm_io_unlock(int fd, int64_t lo, int64_t hi);

/* An access as a caller describes it (io_rw.c): buffer, count, memory type; prepared into
 * file segments, through a conversion buffer when the data representation converts. */
struct tm_io_acc {
    void *buf;
    size_t count;
    MPI_Datatype dt;
    const struct tm_type *t;
    size_t bytes;  /* bytes of view data (file representation) */
    size_t nbytes; /* bytes of native data (status counts) */
    char *conv;    /* conversion buffer (file representation) or NULL */
    struct tm_io_segs segs;
};
/* Checks count/datatype against f's view and maps the access at view etype offset off.
 * write: converts the data into the conversion buffer first.  0 or an error class (*why says
 * what was wrong). */
int tm_io_acc_prepare(struct tm_file *f, struct tm_io_acc *a, MPI_Offset off, const void *buf,
                      MPI_Count count, MPI_Datatype dt, int write, const char **why);
/* After a read of `done` view bytes: converts into the user's buffer (non-native). */
int tm_io_acc_finish_read(struct tm_file *f, struct tm_io_acc *a, size_t done);
void tm_io_acc_free(struct tm_io_acc *a);
/* Moves a prepared access with the rank's own descriptor (locked in atomic mode); *done: view
 * bytes moved. */
int tm_io_acc_move(struct tm_file *f, struct tm_io_acc *a, int write, size_t *done);
/* View bytes (file representation) of count elements of dt: what a pointer advances by. */
int64_t tm_io_access_bytes(struct tm_file *f, MPI_Count count, MPI_Datatype dt);
/* The etype offset whence + offset names (cur: the pointer's value); -1 and *why if none. */
int64_t tm_io_seek_target(struct tm_file *f, MPI_Offset cur, MPI_Offset offset, int whence,
                          const char **why);
/* Native bytes that `done` view bytes stand for. */
size_t tm_io_acc_native(const struct tm_io_acc *a, size_t done);
/* Fills status after an access of `nbytes` native bytes. */
void tm_io_status(MPI_Status *st, size_t nbytes);

/* How an access finds its place (io_rw.c tm_io_do): explicit offset, individual pointer, shared
 * pointer, each independent or collective (the collective shared form is _ordered). */
enum tm_io_how { TM_IO_AT, TM_IO_AT_ALL, TM_IO_IND, TM_IO_ALL, TM_IO_SHARED, TM_IO_ORDERED };
/* One access of any form: checks, moves the data, updates the pointer it used.  *nbytes:
 * native bytes moved.  0 or an error class, raised on f's handler as fn.  count is an
 * MPI_Count: the int entry points and their large-count _c twins share it. */
int tm_io_do(struct tm_rank *me, struct tm_file *f, const char *fn, enum tm_io_how how, int write,
             MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype dt, size_t *nbytes);
/* _ordered (io_shared.c): every rank of f's comm, in rank order from the shared pointer. */
int tm_io_ordered(struct tm_file *f, void *buf, MPI_Count count, MPI_Datatype dt, int write,
                  size_t *nbytes, const char **why);

/* Independent access at view etype offset off (io_rw.c), no pointer update.  *nbytes: native
 * bytes moved.  0 or an error class. */
int tm_io_indep(struct tm_file *f, MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype dt,
                int write, size_t *nbytes, const char **why);
/* Collective access (io_coll.c): every rank of f's comm calls it; explicit etype offset off. */
int tm_io_coll(struct tm_file *f, MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype dt,
               int write, size_t *nbytes, const char **why);
/* Shared pointer (io_shared.c): window made at open, freed at close. */
int tm_io_sp_open(struct tm_file *f, MPI_Offset initial);
void tm_io_sp_close(struct tm_file *f);
/* Adds n etypes to the shared pointer; *old: its value before. */
int tm_io_sp_fetch_add(struct tm_file *f, MPI_Offset n, MPI_Offset *old);
int tm_io_sp_set(struct tm_file *f, MPI_Offset v);

/* Data representations (io_datarep.c). */
const struct tm_datarep *tm_io_datarep_find(struct tm_rank *me, const char *name);
/* File bytes of count elements of t in representation rep; -1 if rep cannot say. */
int64_t tm_io_datarep_size(const struct tm_datarep *rep, const struct tm_type *t, MPI_Datatype dt,
                           size_t count);
/* Converts count elements of dt between memory and file representation (rep converts). */
int tm_io_datarep_to_file(const struct tm_datarep *rep, const void *buf, size_t count,
                          MPI_Datatype dt, void *out, size_t outsize);
int tm_io_datarep_from_file(const struct tm_datarep *rep, void *buf, size_t count, MPI_Datatype dt,
                            const void *in, size_t insize);

/* Entry-point prologue: me and f from fh, or an error on MPI_FILE_NULL's handler. */
#define TM_IO_GET(fn, fh)                                                                          \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);                    \
    struct tm_file *f = tm_file_get(me, fh);                                                       \
    if (TM_UNLIKELY(!f)) return tm_io_err(me, NULL, MPI_ERR_FILE, fn, "invalid file %d", (int)(fh));

#endif
