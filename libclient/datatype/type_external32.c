/* type_external32.c — MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size with the
 * "external32" representation (MPI 3.1 §13.5.2): big-endian, two's complement integers, IEEE
 * floating point (long double as binary128), the standard's sizes (MPI_LONG and
 * MPI_UNSIGNED_LONG 4 bytes, MPI_WCHAR 2, MPI_C_BOOL 1, MPI_AINT/OFFSET/COUNT 8), no padding
 * (a pair type is its value then a 4-byte int).
 *
 * The data is gathered into its native packed form (type_copy.h), then each basic element of
 * the signature is converted; unpacking is the reverse. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "job.h"
#include "lib.h"
#include "type.h"
#include "type_copy.h"
#include "type_flat.h"

enum kind { K_SINT, K_UINT, K_FLOAT, K_LDOUBLE, K_CFLOAT, K_CLDOUBLE };

struct conv {
    enum kind k;
    size_t ext; /* external32 bytes (complex: of each part) */
};

static int conv_of(enum tm_basic b, struct conv *c)
{
    switch (b) {
    case TM_T_CHAR:
    case TM_T_SIGNED_CHAR:
    case TM_T_INT8:
        *c = (struct conv){K_SINT, 1};
        return 0;
    case TM_T_UNSIGNED_CHAR:
    case TM_T_BYTE:
    case TM_T_UINT8:
    case TM_T_C_BOOL:
    case TM_T_PACKED:
        *c = (struct conv){K_UINT, 1};
        return 0;
    case TM_T_SHORT:
    case TM_T_INT16:
        *c = (struct conv){K_SINT, 2};
        return 0;
    case TM_T_UNSIGNED_SHORT:
    case TM_T_UINT16:
    case TM_T_WCHAR:
        *c = (struct conv){K_UINT, b == TM_T_WCHAR ? 2 : 2};
        return 0;
    case TM_T_INT:
    case TM_T_INT32:
    case TM_T_LONG:
        *c = (struct conv){K_SINT, 4};
        return 0;
    case TM_T_UNSIGNED:
    case TM_T_UINT32:
    case TM_T_UNSIGNED_LONG:
        *c = (struct conv){K_UINT, 4};
        return 0;
    case TM_T_LONG_LONG:
    case TM_T_INT64:
    case TM_T_AINT:
    case TM_T_OFFSET:
    case TM_T_COUNT:
        *c = (struct conv){K_SINT, 8};
        return 0;
    case TM_T_UNSIGNED_LONG_LONG:
    case TM_T_UINT64:
        *c = (struct conv){K_UINT, 8};
        return 0;
    case TM_T_FLOAT:
        *c = (struct conv){K_FLOAT, 4};
        return 0;
    case TM_T_DOUBLE:
        *c = (struct conv){K_FLOAT, 8};
        return 0;
    case TM_T_LONG_DOUBLE:
        *c = (struct conv){K_LDOUBLE, 16};
        return 0;
    case TM_T_C_FLOAT_COMPLEX:
        *c = (struct conv){K_CFLOAT, 4};
        return 0;
    case TM_T_C_DOUBLE_COMPLEX:
        *c = (struct conv){K_CFLOAT, 8};
        return 0;
    case TM_T_C_LONG_DOUBLE_COMPLEX:
        *c = (struct conv){K_CLDOUBLE, 16};
        return 0;
    default:
        return -EINVAL;
    }
}

/* external32 bytes of one basic element (pairs: value + 4). */
static size_t ext_size(enum tm_basic b)
{
    enum tm_basic v;
    size_t ioff;
    if (tm_basic_pair(b, &v, &ioff)) return ext_size(v) + ext_size(tm_basic_pair_index(b));
    struct conv c;
    if (conv_of(b, &c) < 0) return 0;
    return c.k == K_CFLOAT || c.k == K_CLDOUBLE ? 2 * c.ext : c.ext;
}

static void put_be(unsigned char *out, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static uint64_t get_be(const unsigned char *in, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | in[i];
    return v;
}

static void reverse(unsigned char *out, const unsigned char *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = in[n - 1 - i];
}

/* Native integer of n bytes at p, sign- or zero-extended. */
static uint64_t load_int(const unsigned char *p, size_t n, int sign)
{
    switch (n) {
    case 1: {
        uint8_t x;
        memcpy(&x, p, 1);
        return sign ? (uint64_t)(int64_t)(int8_t)x : x;
    }
    case 2: {
        uint16_t x;
        memcpy(&x, p, 2);
        return sign ? (uint64_t)(int64_t)(int16_t)x : x;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, p, 4);
        return sign ? (uint64_t)(int64_t)(int32_t)x : x;
    }
    default: {
        uint64_t x;
        memcpy(&x, p, 8);
        return x;
    }
    }
}

static void store_int(unsigned char *p, size_t n, uint64_t v)
{
    uint8_t a = (uint8_t)v;
    uint16_t b = (uint16_t)v;
    uint32_t c = (uint32_t)v;
    switch (n) {
    case 1:
        memcpy(p, &a, 1);
        break;
    case 2:
        memcpy(p, &b, 2);
        break;
    case 4:
        memcpy(p, &c, 4);
        break;
    default:
        memcpy(p, &v, 8);
    }
}

/* One basic element: native (n bytes at nat) <-> external (at ext); to_ext chooses. */
static void conv_one(enum tm_basic b, unsigned char *nat, unsigned char *ext, int to_ext)
{
    enum tm_basic v;
    size_t ioff;
    if (tm_basic_pair(b, &v, &ioff)) {
        size_t vs = ext_size(v);
        conv_one(v, nat, ext, to_ext);
        /* the native packed form has no padding either: the index follows the value */
        conv_one(tm_basic_pair_index(b), nat + tm_basic_size(v), ext + vs, to_ext);
        return;
    }
    struct conv c;
    (void)conv_of(b, &c);
    size_t ns = tm_basic_size(b);
    switch (c.k) {
    case K_SINT:
    case K_UINT:
        if (to_ext)
            put_be(ext, load_int(nat, ns, c.k == K_SINT), c.ext);
        else {
            uint64_t x = get_be(ext, c.ext);
            if (c.k == K_SINT && c.ext < 8 && (x >> (8 * c.ext - 1)) & 1)
                x |= ~(uint64_t)0 << (8 * c.ext); /* sign-extend */
            store_int(nat, ns, x);
        }
        break;
    case K_FLOAT:
        if (to_ext)
            reverse(ext, nat, c.ext);
        else
            reverse(nat, ext, c.ext);
        break;
    case K_CFLOAT:
        for (int k = 0; k < 2; k++)
            if (to_ext)
                reverse(ext + k * c.ext, nat + k * c.ext, c.ext);
            else
                reverse(nat + k * c.ext, ext + k * c.ext, c.ext);
        break;
    case K_LDOUBLE:
    case K_CLDOUBLE:
        for (int k = 0; k < (c.k == K_CLDOUBLE ? 2 : 1); k++) {
            unsigned char *np = nat + k * sizeof(long double), *ep = ext + k * 16;
            __float128 q;
            long double l;
            unsigned char tmp[16];
            if (to_ext) {
                memcpy(&l, np, sizeof l);
                q = (__float128)l;
                memcpy(tmp, &q, 16);
                reverse(ep, tmp, 16);
            } else {
                reverse(tmp, ep, 16);
                memcpy(&q, tmp, 16);
                l = (long double)q;
                memcpy(np, &l, sizeof l);
            }
        }
        break;
    }
}

/* External32 bytes of count elements of t; 0 with *ok = 0 if a basic type has no external32
 * form. */
static size_t ext_bytes(const struct tm_type *t, size_t count, int *ok)
{
    struct tm_sigrun one;
    size_t ns, per = 0;
    const struct tm_sigrun *s = tm_type_sig(t, &one, &ns);
    *ok = 1;
    for (size_t i = 0; i < ns; i++) {
        size_t e = ext_size(s[i].basic);
        if (!e) *ok = 0;
        per += e * s[i].n;
    }
    return per * count;
}

/* Converts count elements' native packed form (nat) to or from external32 (ext). */
static void convert(const struct tm_type *t, size_t count, unsigned char *nat, unsigned char *ext,
                    int to_ext)
{
    struct tm_sigrun one;
    size_t ns;
    const struct tm_sigrun *s = tm_type_sig(t, &one, &ns);
    for (size_t e = 0; e < count; e++)
        for (size_t i = 0; i < ns; i++) {
            size_t nsz = tm_basic_psize(s[i].basic), esz = ext_size(s[i].basic);
            for (size_t k = 0; k < s[i].n; k++, nat += nsz, ext += esz)
                conv_one(s[i].basic, nat, ext, to_ext);
        }
}

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

#define FAIL(code, ...) return tm_err(me, MPI_COMM_WORLD, code, fn, __VA_ARGS__)

static int check(struct tm_rank *me, const char *fn, const char *datarep, MPI_Count count,
                 MPI_Datatype dt, const struct tm_type **ret_t, size_t *ret_bytes)
{
    if (TM_UNLIKELY(!datarep || strcmp(datarep, "external32") != 0))
        FAIL(MPI_ERR_UNSUPPORTED_DATAREP, "data representation \"%s\" (only \"external32\")",
             datarep ? datarep : "(null)");
    if (TM_UNLIKELY(count < 0)) FAIL(MPI_ERR_COUNT, "invalid count %lld", count);
    const struct tm_type *t = tm_type_get(dt);
    if (TM_UNLIKELY(!t))
        FAIL(MPI_ERR_TYPE, "invalid datatype %d%s", dt,
             tm_type_query(dt) ? " (not committed)" : "");
    int ok;
    *ret_bytes = ext_bytes(t, (size_t)count, &ok);
    if (TM_UNLIKELY(!ok)) FAIL(MPI_ERR_TYPE, "datatype %d has no external32 form", dt);
    size_t chk;
    if (TM_UNLIKELY(__builtin_mul_overflow((size_t)count, t->psize, &chk) ||
                    *ret_bytes > (size_t)PTRDIFF_MAX || chk > (size_t)PTRDIFF_MAX))
        FAIL(MPI_ERR_COUNT, "%lld elements of datatype %d do not fit in memory", count, dt);
    *ret_t = t;
    return MPI_SUCCESS;
}

/* The int calls and their large-count (_c) twins share these bodies (positions and sizes
 * are MPI_Aint in one, MPI_Count in the other: the same width here). */
static int pack_ext(const char *fn, const char datarep[], const void *inbuf, MPI_Count incount,
                    MPI_Datatype datatype, void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    NEED_ME(fn);
    const struct tm_type *t;
    size_t n;
    int err = check(me, fn, datarep, incount, datatype, &t, &n);
    if (err) return err;
    if (TM_UNLIKELY(!position || *position < 0 || *position > outsize))
        FAIL(MPI_ERR_ARG, "invalid position");
    if (TM_UNLIKELY(n > (size_t)(outsize - *position)))
        FAIL(MPI_ERR_TRUNCATE, "%zu bytes do not fit in the %td left", n,
             (ptrdiff_t)(outsize - *position));
    if (!n) return MPI_SUCCESS;
    if (TM_UNLIKELY(tm_buf_missing(inbuf, incount, t) || !outbuf))
        FAIL(MPI_ERR_BUFFER, "buffer is NULL");
    size_t nb = (size_t)incount * t->psize;
    unsigned char *nat = malloc(nb ? nb : 1);
    if (!nat) FAIL(MPI_ERR_NO_MEM, "out of memory");
    tm_type_pack(nat, inbuf, (size_t)incount, t, 0, nb);
    convert(t, (size_t)incount, nat, (unsigned char *)outbuf + *position, 1);
    free(nat);
    *position += (MPI_Aint)n;
    return MPI_SUCCESS;
}

TM_API int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                              MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                              MPI_Aint *position)
{
    return pack_ext("MPI_Pack_external", datarep, inbuf, incount, datatype, outbuf, outsize,
                    position);
}
TM_ALIAS(Pack_external)

TM_API int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                                MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                                MPI_Count *position)
{
    MPI_Aint pos = position ? (MPI_Aint)*position : 0;
    int e = pack_ext("MPI_Pack_external_c", datarep, inbuf, incount, datatype, outbuf,
                     (MPI_Aint)outsize, position ? &pos : NULL);
    if (e == MPI_SUCCESS) *position = pos;
    return e;
}
TM_ALIAS(Pack_external_c)

static int unpack_ext(const char *fn, const char datarep[], const void *inbuf, MPI_Aint insize,
                      MPI_Aint *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
    NEED_ME(fn);
    const struct tm_type *t;
    size_t n;
    int err = check(me, fn, datarep, outcount, datatype, &t, &n);
    if (err) return err;
    if (TM_UNLIKELY(!position || *position < 0 || *position > insize))
        FAIL(MPI_ERR_ARG, "invalid position");
    if (TM_UNLIKELY(n > (size_t)(insize - *position)))
        FAIL(MPI_ERR_TRUNCATE, "%zu bytes wanted, %td left", n, (ptrdiff_t)(insize - *position));
    if (!n) return MPI_SUCCESS;
    if (TM_UNLIKELY(!inbuf || tm_buf_missing(outbuf, outcount, t)))
        FAIL(MPI_ERR_BUFFER, "buffer is NULL");
    size_t nb = (size_t)outcount * t->psize;
    unsigned char *nat = calloc(1, nb ? nb : 1);
    if (!nat) FAIL(MPI_ERR_NO_MEM, "out of memory");
    /* Gather first: padding bytes of pairs keep what the buffer held. */
    tm_type_pack(nat, outbuf, (size_t)outcount, t, 0, nb);
    convert(t, (size_t)outcount, nat, (unsigned char *)inbuf + *position, 0);
    tm_type_unpack(outbuf, (size_t)outcount, t, 0, nat, nb);
    free(nat);
    *position += (MPI_Aint)n;
    return MPI_SUCCESS;
}

TM_API int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                                MPI_Aint *position, void *outbuf, int outcount,
                                MPI_Datatype datatype)
{
    return unpack_ext("MPI_Unpack_external", datarep, inbuf, insize, position, outbuf, outcount,
                      datatype);
}
TM_ALIAS(Unpack_external)

TM_API int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                                  MPI_Count *position, void *outbuf, MPI_Count outcount,
                                  MPI_Datatype datatype)
{
    MPI_Aint pos = position ? (MPI_Aint)*position : 0;
    int e = unpack_ext("MPI_Unpack_external_c", datarep, inbuf, (MPI_Aint)insize,
                       position ? &pos : NULL, outbuf, outcount, datatype);
    if (e == MPI_SUCCESS) *position = pos;
    return e;
}
TM_ALIAS(Unpack_external_c)

static int ext_size_any(const char *fn, const char datarep[], MPI_Count incount,
                        MPI_Datatype datatype, MPI_Aint *size)
{
    NEED_ME(fn);
    const struct tm_type *t;
    size_t n;
    int err = check(me, fn, datarep, incount, datatype, &t, &n);
    if (err) return err;
    if (TM_UNLIKELY(!size)) FAIL(MPI_ERR_ARG, "size is NULL");
    *size = (MPI_Aint)n;
    return MPI_SUCCESS;
}

TM_API int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                                   MPI_Aint *size)
{
    return ext_size_any("MPI_Pack_external_size", datarep, incount, datatype, size);
}
TM_ALIAS(Pack_external_size)

TM_API int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                                     MPI_Count *size)
{
    MPI_Aint s = 0;
    int e = ext_size_any("MPI_Pack_external_size_c", datarep, incount, datatype, size ? &s : NULL);
    if (e == MPI_SUCCESS) *size = s;
    return e;
}
TM_ALIAS(Pack_external_size_c)
