/* io_datarep.c — data representations (MPI 4.0 §14.5): "native" and "internal" store memory's
 * bytes ("internal" may be anything the implementation likes, and native is what we like),
 * "external32" converts through datatype/type_external32.c (MPI_Pack_external), and
 * MPI_Register_datarep adds the program's own, per rank (a rank is an MPI process), kept in
 * the rank's objs until the job ends (the standard has no way to unregister one). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "io.h"
#include "job.h"
#include "objs.h"
#include "type.h"
#include "type_copy.h"
#include "type_flat.h"

struct tm_datarep_node {
    struct tm_datarep_node *next;
    struct tm_datarep rep;
};

static const struct tm_datarep rep_native = {.name = "native"};
static const struct tm_datarep rep_internal = {.name = "internal"};
static const struct tm_datarep rep_ext32 = {.name = "external32", .external32 = 1};

const struct tm_datarep *tm_io_datarep_find(struct tm_rank *me, const char *name)
{
    if (!strcmp(name, "native")) return &rep_native;
    if (!strcmp(name, "internal")) return &rep_internal;
    if (!strcmp(name, "external32")) return &rep_ext32;
    if (!me || !me->objs) return NULL;
    const struct tm_datarep *r = NULL;
    pthread_mutex_lock(&me->objs->lock);
    for (struct tm_datarep_node *n = me->objs->datareps; n && !r; n = n->next)
        if (!strcmp(n->rep.name, name)) r = &n->rep;
    pthread_mutex_unlock(&me->objs->lock);
    return r;
}

void tm_io_datareps_free(struct tm_objs *o)
{
    while (o->datareps) {
        struct tm_datarep_node *n = o->datareps;
        o->datareps = n->next;
        free(n);
    }
}

/* The predefined handle of basic type b (the first one in the table that is b itself). */
static MPI_Datatype basic_handle(enum tm_basic b)
{
    for (MPI_Datatype h = 1; h < TM_DTYPE_FIRST; h++) {
        const struct tm_type *t = tm_type_predef(h);
        if (t && t->basic == b && !t->blocks && t->nelem <= 2) return h;
    }
    return MPI_DATATYPE_NULL;
}

int64_t tm_io_datarep_size(const struct tm_datarep *rep, const struct tm_type *t, MPI_Datatype dt,
                           size_t count)
{
    if (rep->external32) {
        MPI_Aint sz;
        if (PMPI_Pack_external_size("external32", (int)count, dt, &sz)) return -1;
        return (int64_t)sz;
    }
    if (!rep->rd && !rep->wr && !rep->rd_c && !rep->wr_c)
        return (int64_t)(t->psize * count); /* no conversion */
    struct tm_sigrun one;
    size_t ns;
    const struct tm_sigrun *s = tm_type_sig(t, &one, &ns);
    int64_t n = 0;
    for (size_t i = 0; i < ns; i++) {
        MPI_Aint e = 0;
        MPI_Datatype h = basic_handle(s[i].basic);
        if (h == MPI_DATATYPE_NULL || rep->ext(h, &e, rep->extra)) return -1;
        n += (int64_t)e * (int64_t)s[i].n;
    }
    return n * (int64_t)count;
}

int tm_io_datarep_to_file(const struct tm_datarep *rep, const void *buf, size_t count,
                          MPI_Datatype dt, void *out, size_t outsize)
{
    /* external32 packing and a program's int conversion function count in int: a larger
     * access (an _c call) in such a representation fails as a conversion error; the
     * functions of MPI_Register_datarep_c take MPI_Count */
    if ((rep->external32 || rep->wr) && count > INT_MAX) return MPI_ERR_CONVERSION;
    if (rep->external32) {
        MPI_Aint pos = 0;
        return PMPI_Pack_external("external32", buf, (int)count, dt, out, (MPI_Aint)outsize, &pos);
    }
    if (rep->wr) return rep->wr((void *)buf, dt, (int)count, out, 0, rep->extra);
    if (rep->wr_c) return rep->wr_c((void *)buf, dt, (MPI_Count)count, out, 0, rep->extra);
    const struct tm_type *t = tm_type_get(dt);
    tm_type_pack(out, buf, count, t, 0, outsize);
    return MPI_SUCCESS;
}

int tm_io_datarep_from_file(const struct tm_datarep *rep, void *buf, size_t count, MPI_Datatype dt,
                            const void *in, size_t insize)
{
    if ((rep->external32 || rep->rd) && count > INT_MAX) return MPI_ERR_CONVERSION;
    if (rep->external32) {
        MPI_Aint pos = 0;
        return PMPI_Unpack_external("external32", in, (MPI_Aint)insize, &pos, buf, (int)count, dt);
    }
    if (rep->rd) return rep->rd(buf, dt, (int)count, (void *)in, 0, rep->extra);
    if (rep->rd_c) return rep->rd_c(buf, dt, (MPI_Count)count, (void *)in, 0, rep->extra);
    const struct tm_type *t = tm_type_get(dt);
    tm_type_unpack(buf, count, t, 0, in, insize);
    return MPI_SUCCESS;
}

/* One body for MPI_Register_datarep (rd, wr) and MPI_Register_datarep_c (rd_c, wr_c). */
static int register_datarep(const char *fn, const char *datarep,
                            MPI_Datarep_conversion_function *rd,
                            MPI_Datarep_conversion_function *wr,
                            MPI_Datarep_conversion_function_c *rd_c,
                            MPI_Datarep_conversion_function_c *wr_c,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!datarep || !dtype_file_extent_fn)
        return tm_io_err(me, NULL, MPI_ERR_ARG, fn, "datarep or dtype_file_extent_fn is NULL");
    if (!*datarep || strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return tm_io_err(me, NULL, MPI_ERR_ARG, fn,
                         "the name is empty or longer than MPI_MAX_DATAREP_STRING - 1");
    if (tm_io_datarep_find(me, datarep))
        return tm_io_err(me, NULL, MPI_ERR_DUP_DATAREP, fn, "\"%s\" is already defined", datarep);
    struct tm_datarep_node *n = calloc(1, sizeof *n);
    if (!n) return tm_io_err(me, NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    strcpy(n->rep.name, datarep);
    n->rep.rd = rd;
    n->rep.wr = wr;
    n->rep.rd_c = rd_c;
    n->rep.wr_c = wr_c;
    n->rep.ext = dtype_file_extent_fn;
    n->rep.extra = extra_state;
    pthread_mutex_lock(&me->objs->lock);
    n->next = me->objs->datareps;
    me->objs->datareps = n;
    tm_io_state_hook(me);
    pthread_mutex_unlock(&me->objs->lock);
    return MPI_SUCCESS;
}

TM_API int PMPI_Register_datarep(const char *datarep,
                                 MPI_Datarep_conversion_function *read_conversion_fn,
                                 MPI_Datarep_conversion_function *write_conversion_fn,
                                 MPI_Datarep_extent_function *dtype_file_extent_fn,
                                 void *extra_state)
{
    return register_datarep("MPI_Register_datarep", datarep, read_conversion_fn,
                            write_conversion_fn, NULL, NULL, dtype_file_extent_fn, extra_state);
}
TM_ALIAS(Register_datarep)

TM_API int PMPI_Register_datarep_c(const char *datarep,
                                   MPI_Datarep_conversion_function_c *read_conversion_fn,
                                   MPI_Datarep_conversion_function_c *write_conversion_fn,
                                   MPI_Datarep_extent_function *dtype_file_extent_fn,
                                   void *extra_state)
{
    return register_datarep("MPI_Register_datarep_c", datarep, NULL, NULL, read_conversion_fn,
                            write_conversion_fn, dtype_file_extent_fn, extra_state);
}
TM_ALIAS(Register_datarep_c)
