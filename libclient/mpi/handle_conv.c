/* handle_conv.c — conversions between C and Fortran handles and statuses (MPI-3.1 section
 * 17.2.4-5), and address arithmetic (MPI_Get_address, MPI_Aint_add, MPI_Aint_diff).
 *
 * Handles that are ints in C (communicators, datatypes, groups, ops, info, error handlers,
 * windows, files) are their own Fortran value, so c2f and f2c are the identity: an invalid
 * Fortran handle becomes an invalid C handle, which the call that uses it rejects with the
 * class of its kind.  Requests and messages are pointers, wider than an MPI_Fint: c2f enters
 * them in a table of the rank's (request.c, mprobe.c for messages), whose slot is their
 * Fortran value until the request or message is freed. */
#include <stdint.h>

#include "errh.h"
#include "job.h"
#include "lib.h"
#include "request.h"

#define TM_CONV(Kind, ctype)                                                                       \
    TM_API MPI_Fint PMPI_##Kind##_c2f(ctype h)                                                     \
    {                                                                                              \
        return (MPI_Fint)h;                                                                        \
    }                                                                                              \
    TM_ALIAS(Kind##_c2f)                                                                           \
    TM_API ctype PMPI_##Kind##_f2c(MPI_Fint h)                                                     \
    {                                                                                              \
        return (ctype)h;                                                                           \
    }                                                                                              \
    TM_ALIAS(Kind##_f2c)

_Static_assert(sizeof(MPI_Comm) == sizeof(MPI_Fint) && sizeof(MPI_Datatype) == sizeof(MPI_Fint),
               "int handles convert to Fortran integers unchanged");

TM_CONV(Comm, MPI_Comm)
TM_CONV(Type, MPI_Datatype)
TM_CONV(Group, MPI_Group)
TM_CONV(Op, MPI_Op)
TM_CONV(Info, MPI_Info)
TM_CONV(Errhandler, MPI_Errhandler)
TM_CONV(Win, MPI_Win)
TM_CONV(File, MPI_File)

TM_API MPI_Fint PMPI_Request_c2f(MPI_Request request)
{
    if (request == MPI_REQUEST_NULL) return 0;
    struct tm_rank *me = tm_self();
    return me ? tm_req_to_fint(me, request) : -1;
}
TM_ALIAS(Request_c2f)

/* A handle no live request has becomes MPI_REQUEST_NULL (a pointer has no invalid value of its
 * own that the calls taking requests could reject). */
TM_API MPI_Request PMPI_Request_f2c(MPI_Fint request)
{
    struct tm_rank *me = tm_self();
    return me ? tm_req_from_fint(me, request) : MPI_REQUEST_NULL;
}
TM_ALIAS(Request_f2c)

/* A Fortran status: the public fields at MPI_F_SOURCE/TAG/ERROR, then the cancelled flag and
 * the byte count in two halves (low, high), so the conversion loses nothing. */
_Static_assert(MPI_F_STATUS_SIZE == 6, "status layout below");

static void status_to_ints(const MPI_Status *c, MPI_Fint *f)
{
    uint64_t b = (uint64_t)c->tm_bytes;
    f[MPI_F_SOURCE] = c->MPI_SOURCE;
    f[MPI_F_TAG] = c->MPI_TAG;
    f[MPI_F_ERROR] = c->MPI_ERROR;
    f[3] = c->tm_cancelled;
    f[4] = (MPI_Fint)(uint32_t)(b & 0xffffffffu);
    f[5] = (MPI_Fint)(uint32_t)(b >> 32);
}

static void status_from_ints(const MPI_Fint *f, MPI_Status *c)
{
    c->MPI_SOURCE = f[MPI_F_SOURCE];
    c->MPI_TAG = f[MPI_F_TAG];
    c->MPI_ERROR = f[MPI_F_ERROR];
    c->tm_cancelled = f[3];
    c->tm_bytes = (long long)((uint64_t)(uint32_t)f[4] | (uint64_t)(uint32_t)f[5] << 32);
}

/* MPI_STATUS_IGNORE and MPI_F_STATUS_IGNORE are NULL: converting them is erroneous. */
TM_API int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (!c_status || !f_status)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Status_c2f", "c_status or f_status is NULL");
    status_to_ints(c_status, f_status);
    return MPI_SUCCESS;
}
TM_ALIAS(Status_c2f)

TM_API int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (!f_status || !c_status)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Status_f2c", "f_status or c_status is NULL");
    status_from_ints(f_status, c_status);
    return MPI_SUCCESS;
}
TM_ALIAS(Status_f2c)

TM_API int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    if (!c_status || !f08_status)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Status_c2f08", "c_status or f08_status is NULL");
    MPI_Fint f[MPI_F_STATUS_SIZE];
    status_to_ints(c_status, f);
    f08_status->MPI_SOURCE = f[MPI_F_SOURCE];
    f08_status->MPI_TAG = f[MPI_F_TAG];
    f08_status->MPI_ERROR = f[MPI_F_ERROR];
    for (int i = 3; i < MPI_F_STATUS_SIZE; i++)
        f08_status->tm_hidden[i - 3] = f[i];
    return MPI_SUCCESS;
}
TM_ALIAS(Status_c2f08)

TM_API int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    if (!f08_status || !c_status)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Status_f082c", "f08_status or c_status is NULL");
    MPI_Fint f[MPI_F_STATUS_SIZE];
    f[MPI_F_SOURCE] = f08_status->MPI_SOURCE;
    f[MPI_F_TAG] = f08_status->MPI_TAG;
    f[MPI_F_ERROR] = f08_status->MPI_ERROR;
    for (int i = 3; i < MPI_F_STATUS_SIZE; i++)
        f[i] = f08_status->tm_hidden[i - 3];
    status_from_ints(f, c_status);
    return MPI_SUCCESS;
}
TM_ALIAS(Status_f082c)

/* The mpi_f08 status holds the same integers as the mpif.h one, in the same order. */
TM_API int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    if (!f08_status || !f_status)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Status_f082f", "f08_status or f_status is NULL");
    f_status[MPI_F_SOURCE] = f08_status->MPI_SOURCE;
    f_status[MPI_F_TAG] = f08_status->MPI_TAG;
    f_status[MPI_F_ERROR] = f08_status->MPI_ERROR;
    for (int i = 3; i < MPI_F_STATUS_SIZE; i++)
        f_status[i] = f08_status->tm_hidden[i - 3];
    return MPI_SUCCESS;
}
TM_ALIAS(Status_f082f)

TM_API int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    if (!f_status || !f08_status)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Status_f2f08", "f_status or f08_status is NULL");
    f08_status->MPI_SOURCE = f_status[MPI_F_SOURCE];
    f08_status->MPI_TAG = f_status[MPI_F_TAG];
    f08_status->MPI_ERROR = f_status[MPI_F_ERROR];
    for (int i = 3; i < MPI_F_STATUS_SIZE; i++)
        f08_status->tm_hidden[i - 3] = f_status[i];
    return MPI_SUCCESS;
}
TM_ALIAS(Status_f2f08)

/* Addresses are plain byte addresses (flat memory): MPI_BOTTOM is 0. */
TM_API int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    if (!address) return tm_err_noco(MPI_ERR_ARG, "MPI_Get_address", "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
TM_ALIAS(Get_address)

/* Unsigned arithmetic: wraps like the addresses it models instead of overflowing. */
TM_API MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
TM_ALIAS(Aint_add)

TM_API MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
TM_ALIAS(Aint_diff)
