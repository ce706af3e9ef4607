/* datatype.c — the predefined datatype table and type queries (datatype.h). */
#include "datatype.h"

#include <stdbool.h>
#include <stdint.h>
#include <wchar.h>

#include "dtype.h"
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

#define T(h, ctype, b) [h] = {sizeof(ctype), sizeof(ctype), 1, b, #h}
#define P(h, st, vtype, b) [h] = {sizeof(vtype) + sizeof(int), sizeof(st), 2, b, #h}

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
    P(MPI_FLOAT_INT, struct tm_float_int, float, TM_T_FLOAT_INT),
    P(MPI_DOUBLE_INT, struct tm_double_int, double, TM_T_DOUBLE_INT),
    P(MPI_LONG_INT, struct tm_long_int, long, TM_T_LONG_INT),
    P(MPI_2INT, struct tm_2int, int, TM_T_2INT),
    P(MPI_SHORT_INT, struct tm_short_int, short, TM_T_SHORT_INT),
    P(MPI_LONG_DOUBLE_INT, struct tm_long_double_int, long double, TM_T_LONG_DOUBLE_INT),
    T(MPI_PACKED, unsigned char, TM_T_PACKED),
    /* Types of other languages that are exactly a C type above (the complex ones and the
     * Fortran types with no C twin wait for the datatype engine: no entry, MPI_ERR_TYPE). */
    T(MPI_CXX_BOOL, _Bool, TM_T_C_BOOL),
    T(MPI_CHARACTER, char, TM_T_CHAR),
    T(MPI_INTEGER, MPI_Fint, TM_T_INT),
    T(MPI_REAL, float, TM_T_FLOAT),
    T(MPI_DOUBLE_PRECISION, double, TM_T_DOUBLE),
    P(MPI_2INTEGER, struct tm_2int, int, TM_T_2INT),
    T(MPI_INTEGER1, int8_t, TM_T_INT8),
    T(MPI_INTEGER2, int16_t, TM_T_INT16),
    T(MPI_INTEGER4, int32_t, TM_T_INT32),
    T(MPI_INTEGER8, int64_t, TM_T_INT64),
    T(MPI_REAL4, float, TM_T_FLOAT),
    T(MPI_REAL8, double, TM_T_DOUBLE),
};

_Static_assert(sizeof tm_types / sizeof tm_types[0] <= TM_DTYPE_FIRST,
               "predefined datatype handles must stay below the derived ones");

const struct tm_type *tm_type_get(MPI_Datatype dt)
{
    if (dt >= TM_DTYPE_FIRST) return tm_dtype_get(tm_self(), dt, 1);
    if (dt <= 0 || (size_t)dt >= sizeof tm_types / sizeof tm_types[0]) return NULL;
    return tm_types[dt].name ? &tm_types[dt] : NULL; /* handles without an entry yet */
}

const struct tm_type *tm_type_query(MPI_Datatype dt)
{
    if (dt >= TM_DTYPE_FIRST) return tm_dtype_get(tm_self(), dt, 0);
    return tm_type_get(dt);
}

int tm_op_kind(MPI_Op op)
{
    /* Handles are the op kinds shifted by one (0 is MPI_OP_NULL). */
    if (op < MPI_SUM || op > MPI_NO_OP) return -1;
    return op - 1;
}

TM_API int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    const struct tm_type *t = tm_type_query(datatype);
    if (!t) return tm_err_noco(MPI_ERR_TYPE, "MPI_Type_size", "invalid datatype %d", datatype);
    if (!size) return tm_err_noco(MPI_ERR_ARG, "MPI_Type_size", "size is NULL");
    *size = (int)t->size;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_size)

TM_API int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    const struct tm_type *t = tm_type_query(datatype);
    if (!t) return tm_err_noco(MPI_ERR_TYPE, "MPI_Type_size_x", "invalid datatype %d", datatype);
    if (!size) return tm_err_noco(MPI_ERR_ARG, "MPI_Type_size_x", "size is NULL");
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_size_x)

TM_API int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    const struct tm_type *t = tm_type_query(datatype);
    if (!t)
        return tm_err_noco(MPI_ERR_TYPE, "MPI_Type_get_extent", "invalid datatype %d", datatype);
    if (!lb || !extent)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Type_get_extent", "lb or extent is NULL");
    *lb = 0;
    *extent = (MPI_Aint)t->extent;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_extent)

/* Messages carry whole extents (types are contiguous), so counts divide by the extent. */
TM_API int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    const struct tm_type *t = tm_type_get(datatype);
    if (!t) return tm_err_noco(MPI_ERR_TYPE, "MPI_Get_count", "invalid datatype %d", datatype);
    if (!status || !count)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Get_count", "status or count is NULL");
    long long b = status->tm_bytes;
    *count = b % (long long)t->extent ? MPI_UNDEFINED : (int)(b / (long long)t->extent);
    return MPI_SUCCESS;
}
TM_ALIAS(Get_count)

TM_API int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    const struct tm_type *t = tm_type_get(datatype);
    if (!t) return tm_err_noco(MPI_ERR_TYPE, "MPI_Get_elements", "invalid datatype %d", datatype);
    if (!status || !count)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Get_elements", "status or count is NULL");
    long long b = status->tm_bytes;
    if (b % (long long)t->extent == 0) {
        *count = (int)(b / (long long)t->extent) * t->nbasic;
    } else if (t->nbasic == 2) {
        /* A partial pair holds its value but not its index. */
        *count = (int)(b / (long long)t->extent) * 2 +
                 ((size_t)(b % (long long)t->extent) >= t->size - sizeof(int) ? 1 : 0);
    } else {
        *count = MPI_UNDEFINED;
    }
    return MPI_SUCCESS;
}
TM_ALIAS(Get_elements)
