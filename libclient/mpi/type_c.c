/* type_c.c — the large-count (_c) datatype constructors, decoders and external32 packing
 * (MPI 4.0 §5.1, §5.2.3): each converts its MPI_Count arguments (count_narrow.h) and calls its
 * int twin, one body per pair.  The type engine counts blocks and block lengths in int; a
 * count beyond that fails with MPI_ERR_COUNT; byte displacements and strides are MPI_Aint
 * already, so they pass whole.  A type built here decodes as the int constructor's
 * (MPI_Type_get_envelope_c reports no large counts). */
#include <stdio.h>
#include <stdlib.h>

#include "count_narrow.h"
#include "errh.h"
#include "job.h"
#include "lib.h"

#define BEGIN(fn)                                                                                  \
    struct tm_narrow w;                                                                            \
    tm_narrow_begin(&w, fn, MPI_COMM_WORLD, 0, 0, TM_NW_NONE)

/* MPI_Count byte displacements as MPI_Aint (the same width here; a copy keeps types apart). */
static MPI_Aint *aints(struct tm_narrow *w, const MPI_Count *d, int n)
{
    if (w->err || !d || n <= 0) return NULL;
    MPI_Aint *a = malloc((size_t)n * sizeof *a);
    if (!a) {
        w->err = MPI_ERR_NO_MEM;
        snprintf(w->why, sizeof w->why, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++)
        a[i] = (MPI_Aint)d[i];
    return a;
}

static int finish(struct tm_narrow *w, int e, void *tmp)
{
    free(tmp);
    return tm_narrow_end(w, e, NULL);
}

TM_API int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_contiguous_c");
    int n = tm_narrow_count(&w, "count", count);
    if (w.err) return tm_narrow_fail(&w);
    return tm_narrow_end(&w, PMPI_Type_contiguous(n, oldtype, newtype), NULL);
}
TM_ALIAS(Type_contiguous_c)

TM_API int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_vector_c");
    int n = tm_narrow_count(&w, "count", count);
    int b = tm_narrow_count(&w, "blocklength", blocklength);
    int s = tm_narrow_disp(&w, "stride", stride); /* in extents of oldtype: int in the engine */
    if (w.err) return tm_narrow_fail(&w);
    return tm_narrow_end(&w, PMPI_Type_vector(n, b, s, oldtype, newtype), NULL);
}
TM_ALIAS(Type_vector_c)

TM_API int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_create_hvector_c");
    int n = tm_narrow_count(&w, "count", count);
    int b = tm_narrow_count(&w, "blocklength", blocklength);
    if (w.err) return tm_narrow_fail(&w);
    return tm_narrow_end(&w, PMPI_Type_create_hvector(n, b, (MPI_Aint)stride, oldtype, newtype),
                         NULL);
}
TM_ALIAS(Type_create_hvector_c)

TM_API int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_indexed_c");
    int n = tm_narrow_count(&w, "count", count);
    tm_narrow_reserve(&w, 2 * n);
    const int *b = tm_narrow_counts(&w, "array_of_blocklengths", array_of_blocklengths, n);
    const int *d = tm_narrow_cdispls(&w, "array_of_displacements", array_of_displacements, n);
    if (w.err) return tm_narrow_fail(&w);
    return tm_narrow_end(&w, PMPI_Type_indexed(n, b, d, oldtype, newtype), NULL);
}
TM_ALIAS(Type_indexed_c)

TM_API int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                       const MPI_Count array_of_displacements[],
                                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_create_hindexed_c");
    int n = tm_narrow_count(&w, "count", count);
    tm_narrow_reserve(&w, n);
    const int *b = tm_narrow_counts(&w, "array_of_blocklengths", array_of_blocklengths, n);
    MPI_Aint *d = aints(&w, array_of_displacements, n);
    if (w.err) {
        free(d);
        return tm_narrow_fail(&w);
    }
    return finish(&w, PMPI_Type_create_hindexed(n, b, d, oldtype, newtype), d);
}
TM_ALIAS(Type_create_hindexed_c)

TM_API int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                            const MPI_Count array_of_displacements[],
                                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_create_indexed_block_c");
    int n = tm_narrow_count(&w, "count", count);
    int b = tm_narrow_count(&w, "blocklength", blocklength);
    tm_narrow_reserve(&w, n);
    const int *d = tm_narrow_cdispls(&w, "array_of_displacements", array_of_displacements, n);
    if (w.err) return tm_narrow_fail(&w);
    return tm_narrow_end(&w, PMPI_Type_create_indexed_block(n, b, d, oldtype, newtype), NULL);
}
TM_ALIAS(Type_create_indexed_block_c)

TM_API int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                             const MPI_Count array_of_displacements[],
                                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_create_hindexed_block_c");
    int n = tm_narrow_count(&w, "count", count);
    int b = tm_narrow_count(&w, "blocklength", blocklength);
    MPI_Aint *d = aints(&w, array_of_displacements, n);
    if (w.err) {
        free(d);
        return tm_narrow_fail(&w);
    }
    return finish(&w, PMPI_Type_create_hindexed_block(n, b, d, oldtype, newtype), d);
}
TM_ALIAS(Type_create_hindexed_block_c)

TM_API int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                     const MPI_Count array_of_displacements[],
                                     const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_create_struct_c");
    int n = tm_narrow_count(&w, "count", count);
    tm_narrow_reserve(&w, n);
    const int *b = tm_narrow_counts(&w, "array_of_blocklengths", array_of_blocklengths, n);
    MPI_Aint *d = aints(&w, array_of_displacements, n);
    if (w.err) {
        free(d);
        return tm_narrow_fail(&w);
    }
    return finish(&w, PMPI_Type_create_struct(n, b, d, array_of_types, newtype), d);
}
TM_ALIAS(Type_create_struct_c)

TM_API int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                       const MPI_Count array_of_subsizes[],
                                       const MPI_Count array_of_starts[], int order,
                                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_create_subarray_c");
    tm_narrow_reserve(&w, 3 * ndims);
    const int *sz = tm_narrow_counts(&w, "array_of_sizes", array_of_sizes, ndims);
    const int *sub = tm_narrow_counts(&w, "array_of_subsizes", array_of_subsizes, ndims);
    const int *st = tm_narrow_counts(&w, "array_of_starts", array_of_starts, ndims);
    if (w.err) return tm_narrow_fail(&w);
    return tm_narrow_end(&w, PMPI_Type_create_subarray(ndims, sz, sub, st, order, oldtype, newtype),
                         NULL);
}
TM_ALIAS(Type_create_subarray_c)

TM_API int PMPI_Type_create_darray_c(int size, int rank, int ndims,
                                     const MPI_Count array_of_gsizes[],
                                     const int array_of_distribs[], const int array_of_dargs[],
                                     const int array_of_psizes[], int order, MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    BEGIN("MPI_Type_create_darray_c");
    tm_narrow_reserve(&w, ndims);
    const int *g = tm_narrow_counts(&w, "array_of_gsizes", array_of_gsizes, ndims);
    if (w.err) return tm_narrow_fail(&w);
    return tm_narrow_end(&w,
                         PMPI_Type_create_darray(size, rank, ndims, g, array_of_distribs,
                                                 array_of_dargs, array_of_psizes, order, oldtype,
                                                 newtype),
                         NULL);
}
TM_ALIAS(Type_create_darray_c)

TM_API int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                                      MPI_Datatype *newtype)
{
    return PMPI_Type_create_resized(oldtype, (MPI_Aint)lb, (MPI_Aint)extent, newtype);
}
TM_ALIAS(Type_create_resized_c)

TM_API int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                                    MPI_Count *num_addresses, MPI_Count *num_large_counts,
                                    MPI_Count *num_datatypes, int *combiner)
{
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
        return PMPI_Type_get_envelope(datatype, NULL, NULL, NULL, NULL);
    int ni = 0, na = 0, nd = 0;
    int e = PMPI_Type_get_envelope(datatype, &ni, &na, &nd, combiner);
    if (e != MPI_SUCCESS) return e;
    *num_integers = ni;
    *num_addresses = na;
    *num_large_counts = 0; /* every type is built with int counts (see the top of the file) */
    *num_datatypes = nd;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_envelope_c)

static int cap(MPI_Count m)
{
    return m > INT_MAX ? INT_MAX : m < INT_MIN ? INT_MIN : (int)m;
}

TM_API int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                                    MPI_Count max_addresses, MPI_Count max_large_counts,
                                    MPI_Count max_datatypes, int array_of_integers[],
                                    MPI_Aint array_of_addresses[],
                                    MPI_Count array_of_large_counts[],
                                    MPI_Datatype array_of_datatypes[])
{
    (void)max_large_counts; /* no type has large counts to return */
    (void)array_of_large_counts;
    /* the maxima are room the caller has: more than int says is as good as INT_MAX */
    return PMPI_Type_get_contents(datatype, cap(max_integers), cap(max_addresses),
                                  cap(max_datatypes), array_of_integers, array_of_addresses,
                                  array_of_datatypes);
}
TM_ALIAS(Type_get_contents_c)

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
