/* mem_align.h — the "mpi_minimum_memory_alignment" info key (MPI 4.1 §9.2, §12.2.2) that
 * MPI_Alloc_mem and MPI_Win_allocate honour. */
#ifndef TMPI_LIBCLIENT_MEM_ALIGN_H
#define TMPI_LIBCLIENT_MEM_ALIGN_H

#include <stddef.h>

#include "mpi.h"

/* The largest alignment the key may ask for; larger values are ignored, like any hint the
 * implementation cannot honour (1 GiB: a huge page). */
#define TM_MEM_ALIGN_MAX ((size_t)1 << 30)

/* The alignment for a block allocated with info: the key's value when it is a power of two
 * from dflt up to TM_MEM_ALIGN_MAX, else dflt (no key, MPI_INFO_NULL, or a value that is not
 * such a number: a hint may be ignored). */
size_t tm_mem_align(MPI_Info info, size_t dflt);

#endif
