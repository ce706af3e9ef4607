/* type_count.c — the large-count queries of MPI 4.0 (§4.1.5, §4.1.8, §4.1.11): sizes, bounds
 * and element counts as MPI_Count, never MPI_UNDEFINED for lack of room.  They answer what
 * the _x forms (type_query.c) answer; status counts are the packed bytes received
 * (status->tm_bytes, a long long). */
#include "errh.h"
#include "job.h"
#include "lib.h"
#include "type.h"

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

#define FAIL(code, ...) return tm_err(me, MPI_COMM_WORLD, code, fn, __VA_ARGS__)

TM_API int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    const char *fn = "MPI_Type_size_c";
    NEED_ME(fn);
    const struct tm_type *t = tm_type_query(datatype);
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!size)) FAIL(MPI_ERR_ARG, "size is NULL");
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_size_c)

TM_API int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    const char *fn = "MPI_Type_get_extent_c";
    NEED_ME(fn);
    const struct tm_type *t = tm_type_query(datatype);
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!lb || !extent)) FAIL(MPI_ERR_ARG, "lb or extent is NULL");
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_extent_c)

TM_API int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb,
                                       MPI_Count *true_extent)
{
    const char *fn = "MPI_Type_get_true_extent_c";
    NEED_ME(fn);
    const struct tm_type *t = tm_type_query(datatype);
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!true_lb || !true_extent)) FAIL(MPI_ERR_ARG, "true_lb or true_extent is NULL");
    *true_lb = t->true_lb;
    *true_extent = t->true_ub - t->true_lb;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_true_extent_c)

TM_API int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    const char *fn = "MPI_Get_count_c";
    NEED_ME(fn);
    const struct tm_type *t = tm_type_get(datatype);
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!status || !count)) FAIL(MPI_ERR_ARG, "status or count is NULL");
    long long b = status->tm_bytes;
    if (!t->psize)
        *count = 0;
    else if (b % (long long)t->psize)
        *count = MPI_UNDEFINED;
    else
        *count = b / (long long)t->psize;
    return MPI_SUCCESS;
}
TM_ALIAS(Get_count_c)

TM_API int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    const char *fn = "MPI_Get_elements_c";
    NEED_ME(fn);
    const struct tm_type *t = tm_type_get(datatype);
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!status || !count)) FAIL(MPI_ERR_ARG, "status or count is NULL");
    long long n = tm_type_elements(t, status->tm_bytes);
    *count = n < 0 ? MPI_UNDEFINED : n;
    return MPI_SUCCESS;
}
TM_ALIAS(Get_elements_c)

TM_API int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    /* the same rule as MPI_Status_set_elements_x, which takes an MPI_Count already */
    return PMPI_Status_set_elements_x(status, datatype, count);
}
TM_ALIAS(Status_set_elements_c)
