/* type_predef.c — the predefined datatypes (MPI 3.1 §3.2.2, §4.1.7 pair types, §13.5.2
 * external32 sizes in type_external32.c) and handle lookup (type.h). */
#include "type.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "errh.h"
#include "lib.h"

/* Pair types as C declares them for MINLOC/MAXLOC. */
struct tm_float_int {
    float v;
    int i;
};
struct tm_double_int {
    double v;
    int i;
};
struct tm_long_int {
    long v;
    int i;
};
struct tm_2int {
    int v;
    int i;
};
struct tm_short_int {
    short v;
    int i;
};
struct tm_long_double_int {
    long double v;
    int i;
};
/* Fortran's pairs: the index has the value's type. */
struct tm_2float {
    float v, i;
};
struct tm_2double {
    double v, i;
};

/* sizeof and alignment of one value of a pair type, its padded struct, and the pairs' true
 * upper bound (the index's last byte: the padding after it is not data). */
#define PAIR_SIZE(st) (offsetof(st, i) + sizeof(int))

#define T(h, ctype, b)                                                                             \
    [h] = {.size = sizeof(ctype),                                                                  \
           .extent = sizeof(ctype),                                                                \
           .nbasic = 1,                                                                            \
           .basic = b,                                                                             \
           .name = #h,                                                                             \
           .contig = 1,                                                                            \
           .psize = sizeof(ctype),                                                                 \
           .true_ub = sizeof(ctype),                                                               \
           .align = _Alignof(ctype),                                                               \
           .nelem = 1}
/* A pair's packed form is its signature (value, int) without the C padding (MPI 3.1 §4.1.7: the
 * type map is {(T, 0), (int, offsetof)}, so MPI_Type_size and the wire carry only the parts): a
 * padded pair is one block of data, two when the padding lies between value and index. */
#define PAIR_ONE(st) ((const struct tm_block[]){{0, PAIR_SIZE(st), 0}})
#define PAIR_BLOCKS(st)                                                                            \
    ((const struct tm_block[]){{0, sizeof(((st *)0)->v), 0},                                       \
                               {offsetof(st, i), sizeof(int), sizeof(((st *)0)->v)}})
#define PAIR_GAP(st) (offsetof(st, i) != sizeof(((st *)0)->v))
#define PAIR_PADDED(st) (PAIR_SIZE(st) != sizeof(st) || PAIR_GAP(st))
#define P(h, st, b)                                                                                \
    [h] = {.size = sizeof(((st *)0)->v) + sizeof(int),                                             \
           .extent = sizeof(st),                                                                   \
           .nbasic = 2,                                                                            \
           .basic = b,                                                                             \
           .name = #h,                                                                             \
           .contig = !PAIR_PADDED(st),                                                             \
           .psize = sizeof(((st *)0)->v) + sizeof(int),                                            \
           .nblocks = PAIR_GAP(st) ? 2 : 1,                                                        \
           .blocks = PAIR_PADDED(st) ? (PAIR_GAP(st) ? PAIR_BLOCKS(st) : PAIR_ONE(st)) : NULL,     \
           .true_ub = PAIR_SIZE(st),                                                               \
           .align = _Alignof(st),                                                                  \
           .nelem = 2}

/* Indexed by handle value (mpi.h). */
static const struct tm_type tm_types[] = {
    T(MPI_CHAR, char, TM_T_CHAR),
    T(MPI_SIGNED_CHAR, signed char, TM_T_SIGNED_CHAR),
    T(MPI_UNSIGNED_CHAR, unsigned char, TM_T_UNSIGNED_CHAR),
    T(MPI_BYTE, unsigned char, TM_T_BYTE),
    T(MPI_SHORT, short, TM_T_SHORT),
    T(MPI_UNSIGNED_SHORT, unsigned short, TM_T_UNSIGNED_SHORT),
    T(MPI_INT, int, TM_T_INT),
    T(MPI_UNSIGNED, unsigned, TM_T_UNSIGNED),
    T(MPI_LONG, long, TM_T_LONG),
    T(MPI_UNSIGNED_LONG, unsigned long, TM_T_UNSIGNED_LONG),
    T(MPI_LONG_LONG, long long, TM_T_LONG_LONG),
    T(MPI_UNSIGNED_LONG_LONG, unsigned long long, TM_T_UNSIGNED_LONG_LONG),
    T(MPI_FLOAT, float, TM_T_FLOAT),
    T(MPI_DOUBLE, double, TM_T_DOUBLE),
    T(MPI_LONG_DOUBLE, long double, TM_T_LONG_DOUBLE),
    T(MPI_WCHAR, wchar_t, TM_T_WCHAR),
    T(MPI_C_BOOL, _Bool, TM_T_C_BOOL),
    T(MPI_INT8_T, int8_t, TM_T_INT8),
    T(MPI_INT16_T, int16_t, TM_T_INT16),
    T(MPI_INT32_T, int32_t, TM_T_INT32),
    T(MPI_INT64_T, int64_t, TM_T_INT64),
    T(MPI_UINT8_T, uint8_t, TM_T_UINT8),
    T(MPI_UINT16_T, uint16_t, TM_T_UINT16),
    T(MPI_UINT32_T, uint32_t, TM_T_UINT32),
    T(MPI_UINT64_T, uint64_t, TM_T_UINT64),
    T(MPI_AINT, MPI_Aint, TM_T_AINT),
    T(MPI_OFFSET, MPI_Offset, TM_T_OFFSET),
    T(MPI_COUNT, MPI_Count, TM_T_COUNT),
    P(MPI_FLOAT_INT, struct tm_float_int, TM_T_FLOAT_INT),
    P(MPI_DOUBLE_INT, struct tm_double_int, TM_T_DOUBLE_INT),
    P(MPI_LONG_INT, struct tm_long_int, TM_T_LONG_INT),
    P(MPI_2INT, struct tm_2int, TM_T_2INT),
    P(MPI_SHORT_INT, struct tm_short_int, TM_T_SHORT_INT),
    P(MPI_LONG_DOUBLE_INT, struct tm_long_double_int, TM_T_LONG_DOUBLE_INT),
    T(MPI_PACKED, unsigned char, TM_T_PACKED),
    T(MPI_C_FLOAT_COMPLEX, float _Complex, TM_T_C_FLOAT_COMPLEX),
    T(MPI_C_DOUBLE_COMPLEX, double _Complex, TM_T_C_DOUBLE_COMPLEX),
    T(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, TM_T_C_LONG_DOUBLE_COMPLEX),
    T(MPI_CXX_BOOL, _Bool, TM_T_C_BOOL),
    T(MPI_CXX_FLOAT_COMPLEX, float _Complex, TM_T_C_FLOAT_COMPLEX),
    T(MPI_CXX_DOUBLE_COMPLEX, double _Complex, TM_T_C_DOUBLE_COMPLEX),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex, TM_T_C_LONG_DOUBLE_COMPLEX),
    /* Fortran types with the C type of the same size and kind (gfortran's defaults). */
    T(MPI_CHARACTER, char, TM_T_CHAR),
    T(MPI_LOGICAL, int32_t, TM_T_INT32),
    T(MPI_INTEGER, int32_t, TM_T_INT32),
    T(MPI_REAL, float, TM_T_FLOAT),
    T(MPI_DOUBLE_PRECISION, double, TM_T_DOUBLE),
    T(MPI_COMPLEX, float _Complex, TM_T_C_FLOAT_COMPLEX),
    T(MPI_DOUBLE_COMPLEX, double _Complex, TM_T_C_DOUBLE_COMPLEX),
    P(MPI_2INTEGER, struct tm_2int, TM_T_2INT),
    [MPI_2REAL] = {.size = sizeof(struct tm_2float),
                   .extent = sizeof(struct tm_2float),
                   .nbasic = 2,
                   .basic = TM_T_2FLOAT,
                   .name = "MPI_2REAL",
                   .contig = 1,
                   .psize = sizeof(struct tm_2float),
                   .true_ub = sizeof(struct tm_2float),
                   .align = _Alignof(struct tm_2float),
                   .nelem = 2},
    [MPI_2DOUBLE_PRECISION] = {.size = sizeof(struct tm_2double),
                               .extent = sizeof(struct tm_2double),
                               .nbasic = 2,
                               .basic = TM_T_2DOUBLE,
                               .name = "MPI_2DOUBLE_PRECISION",
                               .contig = 1,
                               .psize = sizeof(struct tm_2double),
                               .true_ub = sizeof(struct tm_2double),
                               .align = _Alignof(struct tm_2double),
                               .nelem = 2},
    T(MPI_INTEGER1, int8_t, TM_T_INT8),
    T(MPI_INTEGER2, int16_t, TM_T_INT16),
    T(MPI_INTEGER4, int32_t, TM_T_INT32),
    T(MPI_INTEGER8, int64_t, TM_T_INT64),
    T(MPI_REAL4, float, TM_T_FLOAT),
    T(MPI_REAL8, double, TM_T_DOUBLE),
    T(MPI_REAL16, long double, TM_T_LONG_DOUBLE),
    T(MPI_COMPLEX8, float _Complex, TM_T_C_FLOAT_COMPLEX),
    T(MPI_COMPLEX16, double _Complex, TM_T_C_DOUBLE_COMPLEX),
    T(MPI_COMPLEX32, long double _Complex, TM_T_C_LONG_DOUBLE_COMPLEX),
};

#define NPREDEF (sizeof tm_types / sizeof tm_types[0])
_Static_assert(NPREDEF <= TM_DTYPE_FIRST, "predefined handles run into derived ones");

const struct tm_type *tm_type_predef(MPI_Datatype dt)
{
    if (dt <= 0 || (size_t)dt >= NPREDEF || !tm_types[dt].name) return NULL;
    return &tm_types[dt];
}

MPI_Datatype tm_type_predef_handle(const struct tm_type *t)
{
    if (t < tm_types || t >= tm_types + NPREDEF) return MPI_DATATYPE_NULL;
    return (MPI_Datatype)(t - tm_types);
}

int tm_basic_pair(enum tm_basic b, enum tm_basic *ret_value, size_t *ret_ioff)
{
    switch (b) {
#define PAIR_CASE(e, st, ve)                                                                       \
    case e:                                                                                        \
        *ret_value = ve;                                                                           \
        *ret_ioff = offsetof(st, i);                                                               \
        return 1;
        PAIR_CASE(TM_T_FLOAT_INT, struct tm_float_int, TM_T_FLOAT)
        PAIR_CASE(TM_T_DOUBLE_INT, struct tm_double_int, TM_T_DOUBLE)
        PAIR_CASE(TM_T_LONG_INT, struct tm_long_int, TM_T_LONG)
        PAIR_CASE(TM_T_2INT, struct tm_2int, TM_T_INT)
        PAIR_CASE(TM_T_SHORT_INT, struct tm_short_int, TM_T_SHORT)
        PAIR_CASE(TM_T_LONG_DOUBLE_INT, struct tm_long_double_int, TM_T_LONG_DOUBLE)
        PAIR_CASE(TM_T_2FLOAT, struct tm_2float, TM_T_FLOAT)
        PAIR_CASE(TM_T_2DOUBLE, struct tm_2double, TM_T_DOUBLE)
#undef PAIR_CASE
    default:
        return 0;
    }
}

const struct tm_type *tm_type_get(MPI_Datatype dt)
{
    if (dt >= TM_DTYPE_FIRST) return tm_dtype_get(tm_self(), dt, 1);
    return tm_type_predef(dt);
}

const struct tm_type *tm_type_query(MPI_Datatype dt)
{
    if (dt >= TM_DTYPE_FIRST) return tm_dtype_get(tm_self(), dt, 0);
    return tm_type_get(dt);
}

enum tm_basic tm_basic_pair_index(enum tm_basic b)
{
    return b == TM_T_2FLOAT ? TM_T_FLOAT : b == TM_T_2DOUBLE ? TM_T_DOUBLE : TM_T_INT;
}

int tm_op_kind(MPI_Op op)
{
    /* Handles are the op kinds shifted by one (0 is MPI_OP_NULL). */
    if (op < MPI_SUM || op > MPI_NO_OP) return -1;
    return op - 1;
}
