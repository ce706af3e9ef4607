/* fort_callbacks.c — Fortran entry points whose arguments are Fortran procedures the C
 * library calls back with another convention (generalized requests, user data
 * representations, both forms), and the session call whose CHARACTER length differs from C's
 * (fortran-gen's SPECIAL table names them).
 *
 * Each Fortran procedure set is kept in a record that the C library gets as extra_state and
 * hands to a C trampoline, which calls the Fortran procedure with every argument by
 * reference, the status as an INTEGER array and the program's own extra_state. */
#include <stdlib.h>
#include <string.h>

#include "fort_util.h"

#define TF_DEF(ret, name, params, body)                                                            \
    TF_API ret p##name params;                                                                     \
    TF_API ret name params TF_WEAK_OF(p##name);                                                    \
    TF_API ret p##name params body

/* ---- generalized requests (MPI 4.1 13.2): the record lives until free_fn has run, which
 * the C library calls exactly once per request ---- */
typedef void tf_greq_query(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void tf_greq_free(MPI_Aint *extra, MPI_Fint *ierror);
typedef void tf_greq_cancel(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror);

struct tf_greq {
    tf_greq_query *query;
    tf_greq_free *free;
    tf_greq_cancel *cancel;
    MPI_Aint extra;
};

static int greq_query(void *extra, MPI_Status *status)
{
    struct tf_greq *g = extra;
    MPI_Fint fs[MPI_F_STATUS_SIZE];
    MPI_Fint ierr = MPI_SUCCESS;
    PMPI_Status_c2f(status, fs);
    g->query(&g->extra, fs, &ierr);
    PMPI_Status_f2c(fs, status);
    return ierr;
}

static int greq_free(void *extra)
{
    struct tf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(&g->extra, &ierr);
    free(g);
    return ierr;
}

static int greq_cancel(void *extra, int complete)
{
    struct tf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, done = complete != 0; /* a LOGICAL: gfortran's .TRUE. is 1 */
    g->cancel(&g->extra, &done, &ierr);
    return ierr;
}

TF_DEF(void, mpi_grequest_start_,
       (void *query_fn, void *free_fn, void *cancel_fn, const MPI_Aint *extra_state,
        MPI_Fint *request, MPI_Fint *ierror),
       {
           struct tf_greq *g = malloc(sizeof *g);
           if (!g) {
               *ierror = MPI_ERR_NO_MEM;
               return;
           }
           g->query = (tf_greq_query *)query_fn;
           g->free = (tf_greq_free *)free_fn;
           g->cancel = (tf_greq_cancel *)cancel_fn;
           g->extra = *extra_state;
           MPI_Request r = MPI_REQUEST_NULL;
           *ierror = query_fn && free_fn && cancel_fn
                         ? PMPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &r)
                         : PMPI_Grequest_start(NULL, NULL, NULL, NULL, &r); /* its own error */
           if (*ierror != MPI_SUCCESS) {
               free(g);
               return;
           }
           *request = PMPI_Request_c2f(r);
       })

/* ---- user data representations (MPI 4.1 14.5.3): a representation is never unregistered,
 * so its record lives as long as the rank ---- */
typedef void tf_conv_fn(void *userbuf, const MPI_Fint *datatype, const MPI_Fint *count,
                        void *filebuf, const MPI_Offset *position, MPI_Aint *extra,
                        MPI_Fint *ierror);
/* MPI_Register_datarep_c's procedures: the count is INTEGER(KIND=MPI_COUNT_KIND). */
typedef void tf_conv_fn_c(void *userbuf, const MPI_Fint *datatype, const MPI_Count *count,
                          void *filebuf, const MPI_Offset *position, MPI_Aint *extra,
                          MPI_Fint *ierror);
typedef void tf_extent_fn(const MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra,
                          MPI_Fint *ierror);

/* MPI_CONVERSION_FN_NULL as a Fortran procedure: its address means "no conversion" (C's
 * NULL); it is never called through a record. */
TF_API void mpi_conversion_fn_null_(void *userbuf, const MPI_Fint *datatype, const MPI_Fint *count,
                                    void *filebuf, const MPI_Offset *position, MPI_Aint *extra,
                                    MPI_Fint *ierror);
TF_API void mpi_conversion_fn_null_(void *userbuf, const MPI_Fint *datatype, const MPI_Fint *count,
                                    void *filebuf, const MPI_Offset *position, MPI_Aint *extra,
                                    MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra;
    *ierror = MPI_SUCCESS;
}

/* MPI_CONVERSION_FN_NULL_C likewise, for MPI_Register_datarep_c. */
TF_API void mpi_conversion_fn_null_c_(void *userbuf, const MPI_Fint *datatype,
                                      const MPI_Count *count, void *filebuf,
                                      const MPI_Offset *position, MPI_Aint *extra,
                                      MPI_Fint *ierror);
TF_API void mpi_conversion_fn_null_c_(void *userbuf, const MPI_Fint *datatype,
                                      const MPI_Count *count, void *filebuf,
                                      const MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra;
    *ierror = MPI_SUCCESS;
}

/* One record per registration: rd/wr for MPI_Register_datarep, rd_c/wr_c for its large-count
 * form (the other pair NULL). */
struct tf_datarep {
    tf_conv_fn *rd, *wr;
    tf_conv_fn_c *rd_c, *wr_c;
    tf_extent_fn *ext;
    MPI_Aint extra;
};

static int datarep_conv(tf_conv_fn *f, void *userbuf, MPI_Datatype datatype, int count,
                        void *filebuf, MPI_Offset position, struct tf_datarep *d)
{
    MPI_Fint dt = (MPI_Fint)datatype, n = count, ierr = MPI_SUCCESS;
    f(userbuf, &dt, &n, filebuf, &position, &d->extra, &ierr);
    return ierr;
}

static int datarep_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                        MPI_Offset position, void *extra)
{
    struct tf_datarep *d = extra;
    return datarep_conv(d->rd, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                         MPI_Offset position, void *extra)
{
    struct tf_datarep *d = extra;
    return datarep_conv(d->wr, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_conv_c(tf_conv_fn_c *f, void *userbuf, MPI_Datatype datatype, MPI_Count count,
                          void *filebuf, MPI_Offset position, struct tf_datarep *d)
{
    MPI_Fint dt = (MPI_Fint)datatype, ierr = MPI_SUCCESS;
    f(userbuf, &dt, &count, filebuf, &position, &d->extra, &ierr);
    return ierr;
}

static int datarep_read_c(void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf,
                          MPI_Offset position, void *extra)
{
    struct tf_datarep *d = extra;
    return datarep_conv_c(d->rd_c, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_write_c(void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf,
                           MPI_Offset position, void *extra)
{
    struct tf_datarep *d = extra;
    return datarep_conv_c(d->wr_c, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_extent(MPI_Datatype datatype, MPI_Aint *file_extent, void *extra)
{
    struct tf_datarep *d = extra;
    MPI_Fint dt = (MPI_Fint)datatype, ierr = MPI_SUCCESS;
    d->ext(&dt, file_extent, &d->extra, &ierr);
    return ierr;
}

/* Either NULL procedure means "no conversion" in either form: a program may pass
 * MPI_CONVERSION_FN_NULL to MPI_Register_datarep_c too. */
static void *conv_or_null(void *f)
{
    return f == (void *)mpi_conversion_fn_null_ || f == (void *)mpi_conversion_fn_null_c_ ? NULL
                                                                                          : f;
}

/* The record of one registration, its name as a C string in *ret_name; NULL when out of
 * memory (then nothing is left allocated). */
static struct tf_datarep *datarep_new(const char *datarep, size_t datarep_len, void *extent_fn,
                                      const MPI_Aint *extra_state, char **ret_name)
{
    char *name = tf_str_in(datarep, datarep_len);
    struct tf_datarep *d = calloc(1, sizeof *d);
    if (!name || !d) {
        free(name);
        free(d);
        return NULL;
    }
    d->ext = (tf_extent_fn *)extent_fn;
    d->extra = *extra_state;
    *ret_name = name;
    return d;
}

TF_DEF(void, mpi_register_datarep_,
       (const char *datarep, void *read_fn, void *write_fn, void *extent_fn,
        const MPI_Aint *extra_state, MPI_Fint *ierror, size_t datarep_len),
       {
           char *name = NULL;
           struct tf_datarep *d = datarep_new(datarep, datarep_len, extent_fn, extra_state, &name);
           if (!d) {
               *ierror = MPI_ERR_NO_MEM;
               return;
           }
           d->rd = (tf_conv_fn *)conv_or_null(read_fn);
           d->wr = (tf_conv_fn *)conv_or_null(write_fn);
           *ierror = PMPI_Register_datarep(name, d->rd ? datarep_read : NULL,
                                           d->wr ? datarep_write : NULL,
                                           d->ext ? datarep_extent : NULL, d);
           if (*ierror != MPI_SUCCESS) free(d);
           free(name);
       })

TF_DEF(void, mpi_register_datarep_c_,
       (const char *datarep, void *read_fn, void *write_fn, void *extent_fn,
        const MPI_Aint *extra_state, MPI_Fint *ierror, size_t datarep_len),
       {
           char *name = NULL;
           struct tf_datarep *d = datarep_new(datarep, datarep_len, extent_fn, extra_state, &name);
           if (!d) {
               *ierror = MPI_ERR_NO_MEM;
               return;
           }
           d->rd_c = (tf_conv_fn_c *)conv_or_null(read_fn);
           d->wr_c = (tf_conv_fn_c *)conv_or_null(write_fn);
           *ierror = PMPI_Register_datarep_c(name, d->rd_c ? datarep_read_c : NULL,
                                             d->wr_c ? datarep_write_c : NULL,
                                             d->ext ? datarep_extent : NULL, d);
           if (*ierror != MPI_SUCCESS) free(d);
           free(name);
       })

/* ---- sessions: Fortran's pset_len counts no terminator (MPI 4.1 11.3.2); 0 asks for the
 * name's length, anything else gets the name cut to the CHARACTER's length ---- */
TF_DEF(void, mpi_session_get_nth_pset_,
       (const MPI_Fint *session, const MPI_Fint *info, const MPI_Fint *n, MPI_Fint *pset_len,
        char *pset_name, MPI_Fint *ierror, size_t pset_name_len),
       {
           int len = 0;
           *ierror = PMPI_Session_get_nth_pset(*session, *info, *n, &len, NULL);
           if (*ierror != MPI_SUCCESS) return;
           if (*pset_len == 0) {
               *pset_len = len > 0 ? len - 1 : 0;
               return;
           }
           char *c = calloc((size_t)len + 1, 1);
           if (!c) {
               *ierror = MPI_ERR_NO_MEM;
               return;
           }
           *ierror = PMPI_Session_get_nth_pset(*session, *info, *n, &len, c);
           if (*ierror == MPI_SUCCESS) tf_str_out(c, pset_name, pset_name_len);
           free(c);
       })
