/* name.c — object names (name.h) and MPI_Comm_set_name / MPI_Comm_get_name. */
#include "name.h"

#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "errh.h"
#include "job.h"

int tm_name_set(char **slot, const char *name)
{
    if (!name) return MPI_ERR_ARG;
    size_t n = strnlen(name, MPI_MAX_OBJECT_NAME - 1);
    char *s = malloc(n + 1);
    if (!s) return MPI_ERR_NO_MEM;
    memcpy(s, name, n);
    s[n] = 0;
    free(*slot);
    *slot = s;
    return MPI_SUCCESS;
}

void tm_name_get(const char *slot, const char *dflt, char *out, int *len)
{
    const char *s = slot ? slot : dflt ? dflt : "";
    size_t n = strnlen(s, MPI_MAX_OBJECT_NAME - 1);
    memcpy(out, s, n);
    out[n] = 0;
    *len = (int)n;
}

TM_API int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Comm_set_name", TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_set_name",
                      "invalid communicator %d", comm);
    int err = tm_name_set(&cr->name, comm_name);
    if (err)
        return tm_err(me, comm, err, "MPI_Comm_set_name",
                      err == MPI_ERR_ARG ? "comm_name is NULL" : "out of memory");
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_set_name)

TM_API int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Comm_get_name", TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_get_name",
                      "invalid communicator %d", comm);
    if (!comm_name || !resultlen)
        return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_get_name", "comm_name or resultlen is NULL");
    const char *dflt = comm == MPI_COMM_WORLD  ? "MPI_COMM_WORLD"
                       : comm == MPI_COMM_SELF ? "MPI_COMM_SELF"
                                               : "";
    tm_name_get(cr->name, dflt, comm_name, resultlen);
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_get_name)
