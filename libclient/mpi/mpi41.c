/* mpi41.c — small calls MPI 4.1 added: the status field accessors (§3.2.5), the
 * Request_get_status forms over arrays (§3.7.5), MPI_Type_get_value_index (§6.9.4). */
#include "errh.h"
#include "job.h"
#include "lib.h"
#include "part.h"
#include "persist.h"
#include "request.h"

/* ---- status fields ---- */

#define STATUS_GET(Name, field)                                                                    \
    TM_API int PMPI_Status_get_##Name(const MPI_Status *status, int *value)                        \
    {                                                                                              \
        if (TM_UNLIKELY(!status || status == MPI_STATUS_IGNORE || !value))                         \
            return tm_err_noco(MPI_ERR_ARG, "MPI_Status_get_" #Name, "status or value is NULL");   \
        *value = status->field;                                                                    \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    TM_ALIAS(Status_get_##Name)

#define STATUS_SET(Name, field)                                                                    \
    TM_API int PMPI_Status_set_##Name(MPI_Status *status, int value)                               \
    {                                                                                              \
        if (TM_UNLIKELY(!status || status == MPI_STATUS_IGNORE))                                   \
            return tm_err_noco(MPI_ERR_ARG, "MPI_Status_set_" #Name, "status is NULL");            \
        status->field = value;                                                                     \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    TM_ALIAS(Status_set_##Name)

STATUS_GET(source, MPI_SOURCE)
STATUS_GET(tag, MPI_TAG)
STATUS_GET(error, MPI_ERROR)
STATUS_SET(source, MPI_SOURCE)
STATUS_SET(tag, MPI_TAG)
STATUS_SET(error, MPI_ERROR)

/* ---- MPI_Request_get_status_any / _all / _some: nothing is freed or deactivated ---- */

/* A request the array forms skip: null, or persistent and not started (§3.7.5). */
static int skipped(MPI_Request r)
{
    return !r || (r->kind == TM_REQ_PERSIST && tm_preq_inactive(r)) ||
           (r->kind == TM_REQ_PART && tm_part_inactive(r));
}

TM_API int PMPI_Request_get_status_any(int count, MPI_Request array_of_requests[], int *index,
                                       int *flag, MPI_Status *status)
{
    const char *fn = "MPI_Request_get_status_any";
    if (TM_UNLIKELY(count < 0 || (count > 0 && !array_of_requests) || !index || !flag))
        return tm_err_noco(MPI_ERR_ARG, fn, "invalid arguments");
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (skipped(array_of_requests[i])) continue;
        active = 1;
        int done = 0;
        int err = PMPI_Request_get_status(array_of_requests[i], &done, status);
        if (err) return err;
        if (done) {
            *index = i;
            *flag = 1;
            return MPI_SUCCESS;
        }
    }
    *index = MPI_UNDEFINED;
    *flag = !active; /* no active request: true, with the empty status */
    if (!active) tm_status_empty(status);
    return MPI_SUCCESS;
}
TM_ALIAS(Request_get_status_any)

TM_API int PMPI_Request_get_status_all(int count, MPI_Request array_of_requests[], int *flag,
                                       MPI_Status array_of_statuses[])
{
    const char *fn = "MPI_Request_get_status_all";
    if (TM_UNLIKELY(count < 0 || (count > 0 && !array_of_requests) || !flag))
        return tm_err_noco(MPI_ERR_ARG, fn, "invalid arguments");
    /* first whether all are complete, then their statuses: none is filled unless all are */
    for (int i = 0; i < count; i++) {
        if (skipped(array_of_requests[i])) continue;
        int done = 0;
        int err = PMPI_Request_get_status(array_of_requests[i], &done, MPI_STATUS_IGNORE);
        if (err) return err;
        if (!done) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    if (array_of_statuses == MPI_STATUSES_IGNORE) return MPI_SUCCESS;
    for (int i = 0; i < count; i++) {
        int done = 1;
        if (skipped(array_of_requests[i]))
            tm_status_empty(&array_of_statuses[i]);
        else
            (void)PMPI_Request_get_status(array_of_requests[i], &done, &array_of_statuses[i]);
    }
    return MPI_SUCCESS;
}
TM_ALIAS(Request_get_status_all)

TM_API int PMPI_Request_get_status_some(int incount, MPI_Request array_of_requests[], int *outcount,
                                        int array_of_indices[], MPI_Status array_of_statuses[])
{
    const char *fn = "MPI_Request_get_status_some";
    if (TM_UNLIKELY(incount < 0 || (incount > 0 && (!array_of_requests || !array_of_indices)) ||
                    !outcount))
        return tm_err_noco(MPI_ERR_ARG, fn, "invalid arguments");
    int n = 0, active = 0;
    for (int i = 0; i < incount; i++) {
        if (skipped(array_of_requests[i])) continue;
        active = 1;
        MPI_Status *st =
            array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &array_of_statuses[n];
        int done = 0;
        int err = PMPI_Request_get_status(array_of_requests[i], &done, st);
        if (err) return err;
        if (done) array_of_indices[n++] = i;
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
TM_ALIAS(Request_get_status_some)

/* ---- MPI_Type_get_value_index ---- */

TM_API int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                                     MPI_Datatype *pair_type)
{
    if (TM_UNLIKELY(!pair_type))
        return tm_err_noco(MPI_ERR_ARG, "MPI_Type_get_value_index", "pair_type is NULL");
    /* The predefined pair types of MINLOC/MAXLOC (§6.9.4); other combinations: none. */
    static const MPI_Datatype pairs[][3] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (pairs[i][0] == value_type && pairs[i][1] == index_type) *pair_type = pairs[i][2];
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_value_index)
