/* fort_util.h — what the Fortran entry points (fortran_wrap.c, generated, and fort_special.c)
 * share: the sentinels' storage, and the conversions of arguments whose Fortran form differs
 * from C's (strings with hidden lengths, statuses, requests).
 *
 * libtmpi_fortran is a static archive linked into the program, not a shared library: the
 * agent gives every rank its own copy of the program (docs/ARCHITECTURE.md, "Private images
 * per rank"), and the sentinels are COMMON blocks in that copy.  Code in the program compares
 * against the rank's own copy; code in a library shared by the ranks could only see one. */
#ifndef TMPI_FORTRAN_FORT_UTIL_H
#define TMPI_FORTRAN_FORT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "mpi.h"

#define TF_API __attribute__((visibility("default")))
/* mpi_x_ is a weak alias of pmpi_x_: a tool's own mpi_x_ wins, and calls pmpi_x_. */
#define TF_WEAK_OF(target) __attribute__((weak, alias(#target)))

/* The COMMON blocks of mpif.h (/TMPI_BOTTOM/ is the symbol tmpi_bottom_), defined in
 * fort_special.c with the size the Fortran side declares. */
extern MPI_Fint tmpi_bottom_, tmpi_in_place_;
extern MPI_Fint tmpi_status_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint tmpi_statuses_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint tmpi_f08_status_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint tmpi_errcodes_ignore_[1], tmpi_unweighted_[1], tmpi_weights_empty_[1];
extern char tmpi_argv_null_[1], tmpi_argvs_null_[1];

/* A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become C's. */
static inline const void *tf_buf(const void *p)
{
    if (p == &tmpi_bottom_) return MPI_BOTTOM;
    if (p == &tmpi_in_place_) return MPI_IN_PLACE;
    return p;
}

static inline const int *tf_weights(const MPI_Fint *w)
{
    if (w == tmpi_unweighted_) return MPI_UNWEIGHTED;
    if (w == tmpi_weights_empty_) return MPI_WEIGHTS_EMPTY;
    return w;
}

static inline int tf_status_ignored(const MPI_Fint *s)
{
    return s == tmpi_status_ignore_ || s == tmpi_f08_status_ignore_ || s == tmpi_statuses_ignore_;
}

/* Status arrays (MPI_STATUSES_IGNORE gives NULL, a failed allocation TF_NOMEM). */
#define TF_NOMEM ((MPI_Status *)-1)
MPI_Status *tf_statuses(MPI_Fint *f, int n);
void tf_statuses_done(MPI_Status *c, MPI_Fint *f, int n);
/* Request arrays: the C requests of n Fortran handles (NULL: no memory), and back. */
MPI_Request *tf_requests(const MPI_Fint *f, int n);
void tf_requests_done(MPI_Request *c, MPI_Fint *f, int n);

/* A CHARACTER argument as a C string: trailing blanks dropped (malloc'ed; NULL: no memory). */
char *tf_str_in(const char *f, size_t len);
/* A C string into a CHARACTER of length len: cut to len, blank-padded. */
void tf_str_out(const char *c, char *f, size_t len);

#endif
