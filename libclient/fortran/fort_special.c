/* fort_special.c — the Fortran entry points fortran-gen does not generate (its SPECIAL table
 * gives their Fortran arguments), the sentinels' storage, the conversion helpers of
 * fort_util.h, and the predefined attribute callbacks as Fortran procedures. */
#include <stdlib.h>
#include <string.h>

#include "fort_util.h"

#define TF_DEF(ret, name, params, body)                                                            \
    TF_API ret p##name params;                                                                     \
    TF_API ret name params TF_WEAK_OF(p##name);                                                    \
    TF_API ret p##name params body

/* ---- the COMMON blocks (zeroed, never written: only their addresses mean anything),
 * aligned as gfortran aligns a COMMON, so the linker merges them without a warning ---- */
#define TF_COMMON TF_API __attribute__((aligned(16)))
TF_COMMON MPI_Fint tmpi_bottom_;
TF_COMMON MPI_Fint tmpi_in_place_;
TF_COMMON MPI_Fint tmpi_status_ignore_[MPI_F_STATUS_SIZE];
TF_COMMON MPI_Fint tmpi_statuses_ignore_[MPI_F_STATUS_SIZE];
TF_COMMON MPI_Fint tmpi_f08_status_ignore_[MPI_F_STATUS_SIZE];
TF_COMMON MPI_Fint tmpi_errcodes_ignore_[1];
TF_COMMON MPI_Fint tmpi_unweighted_[1];
TF_COMMON MPI_Fint tmpi_weights_empty_[1];
TF_COMMON char tmpi_argv_null_[1];
TF_COMMON char tmpi_argvs_null_[1];

/* ---- helpers ---- */
MPI_Status *tf_statuses(MPI_Fint *f, int n)
{
    if (tf_status_ignored(f)) return MPI_STATUSES_IGNORE;
    MPI_Status *c = calloc(n > 0 ? (size_t)n : 1, sizeof *c);
    return c ? c : TF_NOMEM;
}

void tf_statuses_done(MPI_Status *c, MPI_Fint *f, int n)
{
    if (c == MPI_STATUSES_IGNORE || c == TF_NOMEM) return;
    for (int i = 0; i < n; i++)
        PMPI_Status_c2f(&c[i], f + (size_t)i * MPI_F_STATUS_SIZE);
    free(c);
}

MPI_Request *tf_requests(const MPI_Fint *f, int n)
{
    MPI_Request *c = calloc(n > 0 ? (size_t)n : 1, sizeof *c);
    if (!c) return NULL;
    for (int i = 0; i < n; i++)
        c[i] = PMPI_Request_f2c(f[i]);
    return c;
}

void tf_requests_done(MPI_Request *c, MPI_Fint *f, int n)
{
    if (!c) return;
    for (int i = 0; i < n; i++)
        f[i] = PMPI_Request_c2f(c[i]);
    free(c);
}

char *tf_str_in(const char *f, size_t len)
{
    while (len > 0 && f[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (!c) return NULL;
    memcpy(c, f, len);
    c[len] = '\0';
    return c;
}

void tf_str_out(const char *c, char *f, size_t len)
{
    size_t n = strlen(c);
    if (n > len) n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

/* ---- initialisation: Fortran has no argc/argv to pass (MPI 4.1 19.1.3) ---- */
TF_DEF(void, mpi_init_, (MPI_Fint * ierror), { *ierror = PMPI_Init(NULL, NULL); })

TF_DEF(void, mpi_init_thread_, (const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror),
       { *ierror = PMPI_Init_thread(NULL, NULL, *required, provided); })

TF_DEF(void, mpi_info_create_env_, (MPI_Fint * info, MPI_Fint *ierror),
       { *ierror = PMPI_Info_create_env(0, NULL, info); })

/* ---- functions without ierror ---- */
TF_DEF(double, mpi_wtime_, (void), { return PMPI_Wtime(); })
TF_DEF(double, mpi_wtick_, (void), { return PMPI_Wtick(); })
TF_DEF(MPI_Aint, mpi_aint_add_, (const MPI_Aint *base, const MPI_Aint *disp),
       { return PMPI_Aint_add(*base, *disp); })
TF_DEF(MPI_Aint, mpi_aint_diff_, (const MPI_Aint *a, const MPI_Aint *b),
       { return PMPI_Aint_diff(*a, *b); })
TF_DEF(void, mpi_pcontrol_, (const MPI_Fint *level), { PMPI_Pcontrol(*level); })

/* MPI_F_sync_reg (MPI 4.1 19.1.17): does nothing, in a body the Fortran compiler cannot see,
 * so that it must assume buf read and written and keep no copy of it in a register. */
TF_DEF(void, mpi_f_sync_reg_, (void *buf), { (void)buf; })

/* The buffer's address has no Fortran use: the program still holds the buffer. */
TF_DEF(void, mpi_buffer_detach_, (void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror), {
    void *addr = NULL;
    (void)buffer_addr;
    *ierror = PMPI_Buffer_detach(&addr, size);
})

/* Fortran's buflen is the length of the value without a terminator (MPI 4.1 10.4.2). */
TF_DEF(void, mpi_info_get_string_,
       (const MPI_Fint *info, const char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
        MPI_Fint *ierror, size_t key_len, size_t value_len),
       {
           char *k = tf_str_in(key, key_len);
           int room = *buflen < 0 ? 0 : *buflen;
           if ((size_t)room > value_len) room = (int)value_len;
           char *v = calloc((size_t)room + 1, 1);
           if (!k || !v) {
               free(k);
               free(v);
               *ierror = MPI_ERR_NO_MEM;
               return;
           }
           int n = room + 1;
           *ierror = PMPI_Info_get_string(*info, k, &n, v, flag);
           if (*ierror == MPI_SUCCESS) {
               if (*flag) tf_str_out(v, value, value_len);
               *buflen = n > 0 ? n - 1 : 0;
           }
           free(k);
           free(v);
       })

/* ---- attributes: Fortran values are INTEGER(KIND=MPI_ADDRESS_KIND) (INTEGER for the
 * MPI-1 calls) stored as the C attribute's pointer value.  Predefined keys answer, in C, a
 * pointer to the value (mpi.h): Fortran gets the value itself. ---- */
static MPI_Aint predef_value(int keyval, void *p)
{
    switch (keyval) {
    case MPI_WIN_BASE:
        return (MPI_Aint)p;
    case MPI_WIN_SIZE:
        return *(MPI_Aint *)p;
    default:
        return *(int *)p;
    }
}

#define PREDEF_MAX MPI_WIN_MODEL /* keyvals up to this one are MPI's own */

#define SET_ATTR(lname, Cname)                                                                     \
    TF_DEF(void, lname,                                                                            \
           (const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *val, MPI_Fint *ierror),   \
           { *ierror = Cname(*obj, *keyval, (void *)*val); })
#define GET_ATTR(lname, Cname)                                                                     \
    TF_DEF(void, lname,                                                                            \
           (const MPI_Fint *obj, const MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,            \
            MPI_Fint *ierror),                                                                     \
           {                                                                                       \
               void *v = NULL;                                                                     \
               int fl = 0;                                                                         \
               *ierror = Cname(*obj, *keyval, &v, &fl);                                            \
               *flag = fl;                                                                         \
               if (*ierror == MPI_SUCCESS && fl)                                                   \
                   *val = *keyval > 0 && *keyval <= PREDEF_MAX ? predef_value(*keyval, v)          \
                                                               : (MPI_Aint)v;                      \
           })
SET_ATTR(mpi_comm_set_attr_, PMPI_Comm_set_attr)
SET_ATTR(mpi_type_set_attr_, PMPI_Type_set_attr)
SET_ATTR(mpi_win_set_attr_, PMPI_Win_set_attr)
GET_ATTR(mpi_comm_get_attr_, PMPI_Comm_get_attr)
GET_ATTR(mpi_type_get_attr_, PMPI_Type_get_attr)
GET_ATTR(mpi_win_get_attr_, PMPI_Win_get_attr)

TF_DEF(void, mpi_attr_put_,
       (const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *val, MPI_Fint *ierror),
       { *ierror = PMPI_Attr_put(*comm, *keyval, (void *)(MPI_Aint)*val); })

TF_DEF(void, mpi_attr_get_,
       (const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag,
        MPI_Fint *ierror),
       {
           void *v = NULL;
           int fl = 0;
           *ierror = PMPI_Attr_get(*comm, *keyval, &v, &fl);
           *flag = fl;
           if (*ierror == MPI_SUCCESS && fl)
               *val = (MPI_Fint)(*keyval > 0 && *keyval <= PREDEF_MAX ? predef_value(*keyval, v)
                                                                      : (MPI_Aint)v);
       })

/* ---- keyvals: the C library calls trampolines with a record of the Fortran procedures as
 * extra_state.  A record lives as long as the rank: attributes of a freed keyval may still
 * be copied or deleted (MPI 4.1 7.7.2), so nothing can tell when it is no longer used. ---- */
typedef void tf_copy_fn(const MPI_Fint *obj, const MPI_Fint *keyval, void *extra, void *in,
                        void *out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void tf_delete_fn(const MPI_Fint *obj, const MPI_Fint *keyval, void *val, void *extra,
                          MPI_Fint *ierror);

struct tf_keyval {
    tf_copy_fn *copy;
    tf_delete_fn *del;
    MPI_Aint extra; /* the program's extra_state */
    int mpi1;       /* MPI_Keyval_create: INTEGER values and extra_state */
};

static int tramp_copy(int obj, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct tf_keyval *k = extra;
    MPI_Fint ierr = MPI_SUCCESS, fl = 0;
    if (k->mpi1) {
        MPI_Fint e = (MPI_Fint)k->extra, vin = (MPI_Fint)(MPI_Aint)in, vout = 0;
        k->copy(&obj, &keyval, &e, &vin, &vout, &fl, &ierr);
        *(void **)out = (void *)(MPI_Aint)vout;
    } else {
        MPI_Aint vin = (MPI_Aint)in, vout = 0;
        k->copy(&obj, &keyval, &k->extra, &vin, &vout, &fl, &ierr);
        *(void **)out = (void *)vout;
    }
    *flag = fl != 0;
    return ierr;
}

static int tramp_delete(int obj, int keyval, void *val, void *extra)
{
    struct tf_keyval *k = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint e = (MPI_Fint)k->extra, v = (MPI_Fint)(MPI_Aint)val;
        k->del(&obj, &keyval, &v, &e, &ierr);
    } else {
        MPI_Aint v = (MPI_Aint)val;
        k->del(&obj, &keyval, &v, &k->extra, &ierr);
    }
    return ierr;
}

static struct tf_keyval *keyval_record(void *copy, void *del, MPI_Aint extra, int mpi1)
{
    struct tf_keyval *k = malloc(sizeof *k);
    if (!k) return NULL;
    k->copy = (tf_copy_fn *)copy;
    k->del = (tf_delete_fn *)del;
    k->extra = extra;
    k->mpi1 = mpi1;
    return k;
}

#define CREATE_KEYVAL(lname, Cname, Copy, Delete)                                                  \
    TF_DEF(void, lname,                                                                            \
           (void *copy, void *del, MPI_Fint *keyval, const MPI_Aint *extra, MPI_Fint *ierror), {   \
               struct tf_keyval *k = keyval_record(copy, del, *extra, 0);                          \
               *ierror = k ? Cname((Copy *)tramp_copy, (Delete *)tramp_delete, keyval, k)          \
                           : MPI_ERR_NO_MEM;                                                       \
               if (k && *ierror != MPI_SUCCESS) free(k);                                           \
           })
CREATE_KEYVAL(mpi_comm_create_keyval_, PMPI_Comm_create_keyval, MPI_Comm_copy_attr_function,
              MPI_Comm_delete_attr_function)
CREATE_KEYVAL(mpi_type_create_keyval_, PMPI_Type_create_keyval, MPI_Type_copy_attr_function,
              MPI_Type_delete_attr_function)
CREATE_KEYVAL(mpi_win_create_keyval_, PMPI_Win_create_keyval, MPI_Win_copy_attr_function,
              MPI_Win_delete_attr_function)

TF_DEF(void, mpi_keyval_create_,
       (void *copy, void *del, MPI_Fint *keyval, const MPI_Fint *extra, MPI_Fint *ierror), {
           struct tf_keyval *k = keyval_record(copy, del, *extra, 1);
           *ierror = k ? PMPI_Keyval_create((MPI_Copy_function *)tramp_copy,
                                            (MPI_Delete_function *)tramp_delete, keyval, k)
                       : MPI_ERR_NO_MEM;
           if (k && *ierror != MPI_SUCCESS) free(k);
       })

/* ---- the predefined callbacks, as Fortran procedures (MPI 4.1 7.7.2) ---- */
#define NULL_COPY(lname, T)                                                                        \
    TF_API void lname(const MPI_Fint *o, const MPI_Fint *k, const T *e, const T *in, T *out,       \
                      MPI_Fint *flag, MPI_Fint *ierror);                                           \
    TF_API void lname(const MPI_Fint *o, const MPI_Fint *k, const T *e, const T *in, T *out,       \
                      MPI_Fint *flag, MPI_Fint *ierror)                                            \
    {                                                                                              \
        (void)o, (void)k, (void)e, (void)in, (void)out;                                            \
        *flag = 0;                                                                                 \
        *ierror = MPI_SUCCESS;                                                                     \
    }
#define DUP(lname, T)                                                                              \
    TF_API void lname(const MPI_Fint *o, const MPI_Fint *k, const T *e, const T *in, T *out,       \
                      MPI_Fint *flag, MPI_Fint *ierror);                                           \
    TF_API void lname(const MPI_Fint *o, const MPI_Fint *k, const T *e, const T *in, T *out,       \
                      MPI_Fint *flag, MPI_Fint *ierror)                                            \
    {                                                                                              \
        (void)o, (void)k, (void)e;                                                                 \
        *out = *in;                                                                                \
        *flag = 1;                                                                                 \
        *ierror = MPI_SUCCESS;                                                                     \
    }
#define NULL_DELETE(lname, T)                                                                      \
    TF_API void lname(const MPI_Fint *o, const MPI_Fint *k, const T *v, const T *e,                \
                      MPI_Fint *ierror);                                                           \
    TF_API void lname(const MPI_Fint *o, const MPI_Fint *k, const T *v, const T *e,                \
                      MPI_Fint *ierror)                                                            \
    {                                                                                              \
        (void)o, (void)k, (void)v, (void)e;                                                        \
        *ierror = MPI_SUCCESS;                                                                     \
    }
NULL_COPY(mpi_comm_null_copy_fn_, MPI_Aint)
DUP(mpi_comm_dup_fn_, MPI_Aint)
NULL_DELETE(mpi_comm_null_delete_fn_, MPI_Aint)
NULL_COPY(mpi_type_null_copy_fn_, MPI_Aint)
DUP(mpi_type_dup_fn_, MPI_Aint)
NULL_DELETE(mpi_type_null_delete_fn_, MPI_Aint)
NULL_COPY(mpi_win_null_copy_fn_, MPI_Aint)
DUP(mpi_win_dup_fn_, MPI_Aint)
NULL_DELETE(mpi_win_null_delete_fn_, MPI_Aint)
NULL_COPY(mpi_null_copy_fn_, MPI_Fint)
DUP(mpi_dup_fn_, MPI_Fint)
NULL_DELETE(mpi_null_delete_fn_, MPI_Fint)
