/* io_view.c — file views (MPI 4.0 §14.3) and the flattening of an access into file segments.
 *
 * A view is (disp, etype, filetype, data representation): the file seen through it is the
 * filetype tiled from disp, every tile one extent further, and only the filetype's blocks are
 * data.  The datatype engine (typecore/type.h) already compiled the filetype into its flat
 * map, the (off, len, pos) byte blocks of one element in typemap order, so an access is a walk
 * of two such maps side by side: the filetype's (tiled) on the file side, the memory type's
 * (count elements) on the memory side, cutting a segment wherever either side's block ends and
 * merging segments that continue each other on both sides.  MPI requires the filetype's
 * displacements to be non-negative and non-decreasing, so segments come out in file order.
 *
 * Data representations other than "native" and "internal" go through a conversion buffer
 * (io_rw.c), so their memory side is contiguous; the file side keeps the filetype's native
 * layout (docs/USER.md "MPI-IO": exact where a type's file size equals its native size). */
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "info.h"
#include "io.h"
#include "job.h"
#include "type.h"
#include "type_flat.h"

void tm_io_view_default(struct tm_file *f)
{
    f->disp = 0;
    f->etype = f->ftype = MPI_BYTE;
    f->et = f->ft = tm_type_predef(MPI_BYTE);
    f->rep = tm_io_datarep_find(NULL, "native");
}

void tm_io_view_free(struct tm_rank *me, struct tm_file *f)
{
    tm_type_handle_drop(me, f->etype);
    tm_type_handle_drop(me, f->ftype);
    f->etype = f->ftype = MPI_BYTE;
}

size_t tm_io_etype_bytes(const struct tm_file *f)
{
    return f->et->psize;
}

void tm_io_segs_free(struct tm_io_segs *s)
{
    free(s->v);
    *s = (struct tm_io_segs){0};
}

static int push(struct tm_io_segs *s, int64_t off, char *mem, size_t len)
{
    if (s->n) {
        struct tm_io_seg *p = &s->v[s->n - 1];
        if (p->off + (int64_t)p->len == off && p->mem + p->len == mem) {
            p->len += len;
            goto done;
        }
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct tm_io_seg *v = realloc(s->v, cap * sizeof *v);
        if (!v) return MPI_ERR_NO_MEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (struct tm_io_seg){off, len, mem};
    if (s->n == 1 || off < s->lo) s->lo = off;
done:
    s->bytes += len;
    if (off + (int64_t)len > s->hi) s->hi = off + (int64_t)len;
    return MPI_SUCCESS;
}

/* A cursor over the tiled flat map of a type: byte q of tile `tile` is in block bi. */
struct cur {
    const struct tm_type *t;
    const struct tm_block *b; /* NULL: a map-less regular type (type_flat.h) */
    struct tm_block blk;      /* block bi */
    size_t nb, psz;
    int64_t ext;
    int64_t tile;
    size_t bi, in; /* block, bytes of it already passed */
};

static void cur_init(struct cur *c, const struct tm_type *t, struct tm_block *one, int64_t vbyte)
{
    c->t = t;
    c->b = tm_type_blocks(t, one, &c->nb);
    c->psz = t->psize;
    c->ext = (int64_t)t->extent;
    c->tile = vbyte / (int64_t)c->psz;
    size_t q = (size_t)(vbyte % (int64_t)c->psz);
    size_t lo = tm_type_block_at(t, c->b, c->nb, q);
    c->bi = lo;
    c->blk = tm_type_block(t, c->b, lo);
    c->in = q - c->blk.pos;
}

static inline int64_t cur_at(const struct cur *c)
{
    return c->tile * c->ext + c->blk.off + (int64_t)c->in;
}

static inline size_t cur_avail(const struct cur *c)
{
    return c->blk.len - c->in;
}

static inline void cur_step(struct cur *c, size_t k)
{
    c->in += k;
    if (c->in == c->blk.len) {
        c->in = 0;
        if (++c->bi == c->nb) {
            c->bi = 0;
            c->tile++;
        }
        c->blk = tm_type_block(c->t, c->b, c->bi);
    }
}

int tm_io_map(const struct tm_file *f, int64_t vbyte, size_t bytes, char *mem, size_t count,
              const struct tm_type *mt, struct tm_io_segs *s)
{
    (void)count;
    if (!bytes) return MPI_SUCCESS;
    struct tm_block one_f, one_m;
    struct cur fc, mc;
    cur_init(&fc, f->ft, &one_f, vbyte);
    int mcontig = !mt || (mt->contig && (ptrdiff_t)mt->psize == mt->extent);
    int fcontig = f->ft->contig && (ptrdiff_t)f->ft->psize == f->ft->extent;
    if (mcontig && fcontig) return push(s, f->disp + cur_at(&fc), mem, bytes);
    if (!mcontig) cur_init(&mc, mt, &one_m, 0);
    size_t left = bytes, mdone = 0;
    while (left) {
        size_t k = cur_avail(&fc);
        char *p;
        if (mcontig) {
            p = mem + mdone;
        } else {
            p = mem + cur_at(&mc);
            if (cur_avail(&mc) < k) k = cur_avail(&mc);
        }
        if (k > left) k = left;
        int err = push(s, f->disp + cur_at(&fc), p, k);
        if (err) return err;
        cur_step(&fc, k);
        if (!mcontig) cur_step(&mc, k);
        mdone += k;
        left -= k;
    }
    return MPI_SUCCESS;
}

int64_t tm_io_view_byte(const struct tm_file *f, int64_t vbyte)
{
    if (!f->ft->psize) return f->disp; /* a view of nothing */
    struct tm_block one;
    struct cur c;
    cur_init(&c, f->ft, &one, vbyte);
    return f->disp + cur_at(&c);
}

int64_t tm_io_view_bytes_before(const struct tm_file *f, int64_t abs)
{
    if (abs <= f->disp) return 0;
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(f->ft, &one, &nb);
    int64_t ext = (int64_t)f->ft->extent, rel = abs - f->disp;
    int64_t tile = ext > 0 ? rel / ext : 0, r = ext > 0 ? rel % ext : rel;
    int64_t n = tile * (int64_t)f->ft->psize;
    for (size_t i = 0; i < nb; i++) {
        const struct tm_block k = tm_type_block(f->ft, b, i);
        int64_t in = r - k.off;
        if (in <= 0) continue;
        n += in < (int64_t)k.len ? in : (int64_t)k.len;
    }
    return n;
}

/* Why t cannot be a view's type (negative or decreasing displacements; overlaps when the
 * file is writable: MPI 4.0 §14.3), or NULL. */
static const char *bad_layout(const struct tm_type *t, int writable)
{
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(t, &one, &nb);
    if (!b && t->vn) { /* map-less regular: its first block and its stride say it all */
        if (t->voff < 0) return "a negative displacement";
        if (t->vstride < 0) return "decreasing displacements";
        if (writable && t->vstride < (ptrdiff_t)t->vlen)
            return "overlapping blocks in a file opened for writing";
        return NULL;
    }
    struct tm_block prev = {0};
    for (size_t i = 0; i < nb; i++) {
        const struct tm_block k = tm_type_block(t, b, i);
        if (k.off < 0) return "a negative displacement";
        if (i && k.off < prev.off) return "decreasing displacements";
        if (i && writable && k.off < prev.off + (int64_t)prev.len)
            return "overlapping blocks in a file opened for writing";
        prev = k;
    }
    return NULL;
}

/* Why a filetype cannot be a view's for etype et, or NULL; *code its class. */
static const char *bad_filetype(const struct tm_type *et, const struct tm_type *ft, int writable,
                                int *code)
{
    const char *why;
    *code = MPI_ERR_IO; /* the class MPICH's tests expect for a bad type map */
    if ((why = bad_layout(et, writable))) return why;
    if ((why = bad_layout(ft, writable))) return why;
    *code = MPI_ERR_TYPE;
    /* a filetype without data is a view of nothing: a rank that takes no part in a
     * collective access sets one (HDF5 does); only an access of data through it fails */
    if (ft->psize % et->psize) return "the filetype's size is not a multiple of the etype's";
    return NULL;
}

TM_API int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                              MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
    const char *fn = "MPI_File_set_view";
    TM_IO_GET(fn, fh);
    const char *why = NULL;
    int err = MPI_SUCCESS, code;
    const struct tm_type *et = tm_type_get(etype), *ft = tm_type_get(filetype);
    const struct tm_datarep *rep = datarep ? tm_io_datarep_find(me, datarep) : NULL;
    if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        err = MPI_ERR_ARG, why = "MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL";
    else if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        err = MPI_ERR_ARG, why = "negative displacement";
    else if (!et)
        err = MPI_ERR_TYPE, why = "invalid etype (or not committed)";
    else if (!et->psize)
        err = MPI_ERR_TYPE, why = "the etype has no data";
    else if (!ft)
        err = MPI_ERR_TYPE, why = "invalid filetype (or not committed)";
    else if ((why = bad_filetype(et, ft, !(f->amode & MPI_MODE_RDONLY), &code)))
        err = code;
    else if (!datarep)
        err = MPI_ERR_ARG, why = "datarep is NULL";
    else if (!rep)
        err = MPI_ERR_UNSUPPORTED_DATAREP, why = "unknown data representation";
    else if (info != MPI_INFO_NULL && !tm_info_get(me, info))
        err = MPI_ERR_INFO, why = "invalid info";
    int all;
    PMPI_Allreduce(&err, &all, 1, MPI_INT, MPI_MAX, f->comm);
    if (all) return tm_io_err(me, f, all, fn, "%s", why ? why : "a bad view on another rank");
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        MPI_Offset cur = 0;
        tm_io_sp_fetch_add(f, 0, &cur);
        disp = tm_io_view_byte(f, cur * (int64_t)tm_io_etype_bytes(f)); /* absolute */
    }
    MPI_Datatype eh, fhd;
    if (tm_type_handle_hold(me, etype, &eh))
        return tm_io_err(me, f, MPI_ERR_NO_MEM, fn, "no memory");
    if (tm_type_handle_hold(me, filetype, &fhd)) {
        tm_type_handle_drop(me, eh);
        return tm_io_err(me, f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    tm_io_view_free(me, f);
    f->disp = disp;
    f->etype = eh;
    f->ftype = fhd;
    f->et = et;
    f->ft = ft;
    f->rep = rep;
    f->pos = 0;
    if (info != MPI_INFO_NULL) tm_io_hints_apply(f, info);
    /* the shared pointer is reset too: after everybody stopped using the old one */
    PMPI_Barrier(f->comm);
    if (f->rank == 0) tm_io_sp_set(f, 0);
    PMPI_Barrier(f->comm);
    return MPI_SUCCESS;
}
TM_ALIAS(File_set_view)

/* A handle the caller owns for the view's type: predefined ones as they are, derived ones a
 * new handle (the program frees it, MPI 4.0 §14.3). */
static int give_type(MPI_Datatype held, MPI_Datatype *out)
{
    if (tm_type_predef(held)) {
        *out = held;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(held, out);
}

TM_API int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                              MPI_Datatype *filetype, char *datarep)
{
    const char *fn = "MPI_File_get_view";
    TM_IO_GET(fn, fh);
    if (!disp || !etype || !filetype || !datarep)
        return tm_io_err(me, f, MPI_ERR_ARG, fn, "an argument is NULL");
    *disp = f->disp;
    if (give_type(f->etype, etype) || give_type(f->ftype, filetype))
        return tm_io_err(me, f, MPI_ERR_NO_MEM, fn, "out of memory");
    strcpy(datarep, f->rep->name);
    return MPI_SUCCESS;
}
TM_ALIAS(File_get_view)

TM_API int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    const char *fn = "MPI_File_get_byte_offset";
    TM_IO_GET(fn, fh);
    if (!disp) return tm_io_err(me, f, MPI_ERR_ARG, fn, "disp is NULL");
    if (offset < 0) return tm_io_err(me, f, MPI_ERR_ARG, fn, "negative offset");
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return tm_io_err(me, f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "MPI_MODE_SEQUENTIAL file");
    *disp = tm_io_view_byte(f, offset * (int64_t)tm_io_etype_bytes(f));
    return MPI_SUCCESS;
}
TM_ALIAS(File_get_byte_offset)

/* MPI_File_get_type_extent and its large-count twin (an MPI_Count extent). */
static int type_extent(const char *fn, MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    TM_IO_GET(fn, fh);
    const struct tm_type *t = tm_type_query(datatype);
    if (!t) return tm_io_err(me, f, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
    if (!extent) return tm_io_err(me, f, MPI_ERR_ARG, fn, "extent is NULL");
    if (!f->rep->external32 && !f->rep->ext) {
        *extent = (MPI_Count)t->extent;
        return MPI_SUCCESS;
    }
    /* converting representations: the file holds the data only, no gaps */
    int64_t n = tm_io_datarep_size(f->rep, t, datatype, 1);
    if (n < 0) return tm_io_err(me, f, MPI_ERR_CONVERSION, fn, "the representation has no size");
    *extent = (MPI_Count)n;
    return MPI_SUCCESS;
}

TM_API int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Count e = 0;
    int err = type_extent("MPI_File_get_type_extent", fh, datatype, extent ? &e : NULL);
    if (!err) *extent = (MPI_Aint)e;
    return err;
}
TM_ALIAS(File_get_type_extent)

TM_API int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    return type_extent("MPI_File_get_type_extent_c", fh, datatype, extent);
}
TM_ALIAS(File_get_type_extent_c)
