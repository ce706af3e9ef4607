/* type_c.c — the large-count (_c) external32 packing (MPI 4.0 §5.2.3): each converts its
 * MPI_Count arguments (count_narrow.h) and calls its int twin, one body per pair; a count
 * beyond int fails with MPI_ERR_COUNT.  The _c constructors and decoders carry MPI_Count in
 * the datatype engine itself (datatype/type_ctor.c, type_envelope.c). */
#include <stdio.h>
#include <stdlib.h>

#include "count_narrow.h"
#include "errh.h"
#include "job.h"
#include "lib.h"

#define BEGIN(fn)                                                                                  \
    struct tm_narrow w;                                                                            \
    tm_narrow_begin(&w, fn, MPI_COMM_WORLD, 0, 0, TM_NW_NONE)

TM_API int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                                MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                                MPI_Count *position)
{
    BEGIN("MPI_Pack_external_c");
    int n = tm_narrow_count(&w, "incount", incount);
    if (w.err) return tm_narrow_fail(&w);
    MPI_Aint pos = position ? (MPI_Aint)*position : 0;
    int e = PMPI_Pack_external(datarep, inbuf, n, datatype, outbuf, (MPI_Aint)outsize,
                               position ? &pos : NULL);
    if (e == MPI_SUCCESS) *position = pos;
    return e;
}
TM_ALIAS(Pack_external_c)

TM_API int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                                  MPI_Count *position, void *outbuf, MPI_Count outcount,
                                  MPI_Datatype datatype)
{
    BEGIN("MPI_Unpack_external_c");
    int n = tm_narrow_count(&w, "outcount", outcount);
    if (w.err) return tm_narrow_fail(&w);
    MPI_Aint pos = position ? (MPI_Aint)*position : 0;
    int e = PMPI_Unpack_external(datarep, inbuf, (MPI_Aint)insize, position ? &pos : NULL, outbuf,
                                 n, datatype);
    if (e == MPI_SUCCESS) *position = pos;
    return e;
}
TM_ALIAS(Unpack_external_c)

TM_API int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                                     MPI_Count *size)
{
    BEGIN("MPI_Pack_external_size_c");
    int n = tm_narrow_count(&w, "incount", incount);
    if (w.err) return tm_narrow_fail(&w);
    MPI_Aint s = 0;
    int e = PMPI_Pack_external_size(datarep, n, datatype, size ? &s : NULL);
    if (e == MPI_SUCCESS) *size = s;
    return e;
}
TM_ALIAS(Pack_external_size_c)
