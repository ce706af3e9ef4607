/* count_narrow.h — the large-count (_c) uniform collectives over the int-counted engine.
 *
 * The v and w collectives, Reduce_scatter(_block)_c and Scan_c / Exscan_c do not come here: the
 * engine (coll/coll.h tm_gatherv_c ...) and the inter-communicator forms (coll_inter/) take
 * their MPI_Count / MPI_Aint arguments whole, as do their persistent forms (persist_coll.c
 * starts the I _c call) and the neighbourhood ones (coll_nbr counts in MPI_Count).  What still
 * narrows: the uniform rooted and all-to-all forms' scalar counts, their I and persistent forms,
 * Ibcast_c / Bcast_init_c and the persistent reductions (coll_c.c).
 *
 * A scalar count c of type t past int becomes one element of a contiguous type of c elements of
 * t (tm_narrow_fold), by each member alone, so that every member still makes the same int call
 * (the same algorithm, in the same collective order): the same signature and block layout
 * (block j at j * c * extent).  Reductions fold only with predefined ops (a user function would
 * see the folded type): with a user op a count past int is refused with MPI_ERR_COUNT naming the
 * _c function, so the engine never sees a truncated value.  The folded types live until the call
 * returns, or with a request until it is freed.
 *
 * Usage: tm_narrow_begin, then tm_narrow_fold(_op) where a count may pass int, then
 * tm_narrow_count for every count (each returns the int value; a failure is remembered in
 * w->err), then either tm_narrow_fail (w->err set) or the int call and tm_narrow_end. */
#ifndef TMPI_LIBCLIENT_COUNT_NARROW_H
#define TMPI_LIBCLIENT_COUNT_NARROW_H

#include <limits.h>

#include "mpi.h"

/* The most elements per block the engine moves: what int holds. */
#define TM_COLL_COUNT_MAX INT_MAX

/* The folds of one call: at most its send and its receive side. */
#define TM_NARROW_MAX_TMP 2

/* Whether tm_narrow_begin looks up is_root. */
enum tm_narrow_kind {
    TM_NW_PLAIN,
    TM_NW_ROOTED, /* the root's side only counts at the root */
};

struct tm_narrow {
    const char *fn;
    MPI_Comm comm;
    int err;                             /* the first error class, MPI_SUCCESS until one */
    int is_root;                         /* TM_NW_ROOTED: the root (intra) or MPI_ROOT (inter) */
    char why[160];                       /* the failure's text */
    MPI_Datatype tmp[TM_NARROW_MAX_TMP]; /* the folded types, dropped by tm_narrow_end */
    int ntmp;
};

/* Sets w up.  An invalid communicator leaves is_root 0: the int call reports it. */
void tm_narrow_begin(struct tm_narrow *w, const char *fn, MPI_Comm comm, int root,
                     enum tm_narrow_kind kind);
/* Scalar folds: count c of *type; returns the count to narrow (1 when folded, *type then the
 * folded type).  _op: a reduction's (no fold with a user op). */
MPI_Count tm_narrow_fold(struct tm_narrow *w, MPI_Count c, MPI_Datatype *type);
MPI_Count tm_narrow_fold_op(struct tm_narrow *w, MPI_Count c, MPI_Datatype *type, MPI_Op op);
/* The int value of count c (a negative one is passed on: the int call reports it). */
int tm_narrow_count(struct tm_narrow *w, const char *what, MPI_Count c);
/* Reports w->err through the communicator's error handler, frees, returns the class. */
int tm_narrow_fail(struct tm_narrow *w);
/* After the int call returned e: with a request (non-blocking or persistent) that e made, the
 * folded types live until the request is freed (the operation names them until then);
 * otherwise they go now.  Returns e. */
int tm_narrow_end(struct tm_narrow *w, int e, MPI_Request *request);

#endif
