/* count_narrow.h — the large-count (_c) collectives over the int-counted engine.
 *
 * On an intra-communicator the v and w collectives, Reduce_scatter(_block)_c and Scan_c /
 * Exscan_c do not come here: the engine takes their MPI_Count / MPI_Aint arguments whole
 * (coll/coll.h tm_coll_wide_here, tm_gatherv_c ...), nor do their persistent forms
 * (persist_coll.c starts the I _c call) or the neighbourhood ones (coll_nbr counts in MPI_Count).
 * What still narrows: the uniform rooted and all-to-all forms (and their persistent ones) and
 * the inter-communicator forms.
 *
 * The collective engine (coll/, coll_net/, coll_inter/, coll_nbr/) counts elements per block
 * in int and displacements of the v variants in int elements (w variants: int bytes).  A _c
 * entry point converts its MPI_Count counts and MPI_Aint displacements to those and calls the
 * int entry point, so each pair has one body.  A count or displacement outside int is refused
 * with MPI_ERR_COUNT naming the _c function: the engine never sees a truncated value.  Bytes
 * are not limited this way: a count of a type of large extent moves more than 2^31 bytes.
 *
 * Counts past int are folded into types first, by each member alone, so that every member still
 * makes the same int call (the same algorithm, in the same collective order):
 *  - a scalar count c of type t becomes one element of a contiguous type of c elements of t
 *    (tm_narrow_fold): the same signature and block layout (block j at j * c * extent);
 *  - a v side (counts and displacements in elements of one type) whose values share a factor g
 *    becomes counts / g and displacements / g of a contiguous type of g elements
 *    (tm_narrow_vfold); a v side with no such factor is still refused with MPI_ERR_COUNT;
 *  - a w side's block past int (count or byte displacement) becomes one element of a type
 *    that holds its count at its displacement (tm_narrow_wfold).
 * Reductions fold only with predefined ops (a user function would see the folded type).  The
 * folded types and arrays live until the call returns, or with a request until it is freed.
 *
 * Usage: tm_narrow_begin, then tm_narrow_fold/_vfold/_wfold where a count may pass int, then
 * tm_narrow_count/_counts/_displs for every argument (each returns the int value(s); a failure
 * is remembered in w->err), then either tm_narrow_fail (w->err set) or the int call and
 * tm_narrow_end. */
#ifndef TMPI_LIBCLIENT_COUNT_NARROW_H
#define TMPI_LIBCLIENT_COUNT_NARROW_H

#include <limits.h>

#include "mpi.h"

/* The most elements (or displacement) per block the engine moves: what int holds. */
#define TM_COLL_COUNT_MAX INT_MAX

/* Arrays the folds of one call may make (two sides of counts, displacements and types). */
#define TM_NARROW_MAX_MEM 8

/* Which array lengths tm_narrow_begin looks up. */
enum tm_narrow_kind {
    TM_NW_PLAIN,  /* every member's arrays: peers and size */
    TM_NW_ROOTED, /* also is_root: the root's side only counts at the root */
    TM_NW_NBR,    /* neighbourhood collectives: indeg and outdeg of the topology */
    TM_NW_NONE,   /* no communicator to look at (datatypes): tm_narrow_reserve sizes */
};

struct tm_narrow {
    const char *fn;
    MPI_Comm comm;
    int err;         /* the first error class, MPI_SUCCESS until one */
    int size, peers; /* local group size; the group blocks go to (remote group of an inter) */
    int is_root;     /* TM_NW_ROOTED: the root (intra) or MPI_ROOT (inter) */
    int indeg, outdeg;
    int *ints; /* room for the int copies of the arrays, one malloc */
    int used, cap;
    char why[160]; /* the failure's text */
    /* what the folds made: arrays (mem) and type handles (tmp), freed by tm_narrow_end */
    void *mem[TM_NARROW_MAX_MEM];
    int nmem;
    MPI_Datatype *tmp;
    int ntmp, captmp;
};

/* Scalar folds: count c of *type; returns the count to narrow (1 when folded, *type then the
 * folded type).  _op: a reduction's (no fold with a user op). */
MPI_Count tm_narrow_fold(struct tm_narrow *w, MPI_Count c, MPI_Datatype *type);
MPI_Count tm_narrow_fold_op(struct tm_narrow *w, MPI_Count c, MPI_Datatype *type, MPI_Op op);
/* A v side of n blocks (displs may be NULL: reduce-scatter); op MPI_OP_NULL if not a reduction.
 * Replaces *counts, *displs and *type when it folds. */
void tm_narrow_vfold(struct tm_narrow *w, int n, const MPI_Count **counts, const MPI_Aint **displs,
                     MPI_Datatype *type, MPI_Op op);
/* A w side of n blocks: replaces *counts, *displs and *types when a block folds. */
void tm_narrow_wfold(struct tm_narrow *w, int n, const MPI_Count **counts, const MPI_Aint **displs,
                     const MPI_Datatype **types);

/* Sets w up for nints arrays (each of at most max(peers, size, indeg, outdeg) elements).  An
 * invalid communicator leaves the sizes 0: the int call reports it. */
void tm_narrow_begin(struct tm_narrow *w, const char *fn, MPI_Comm comm, int nints, int root,
                     enum tm_narrow_kind kind);
/* TM_NW_NONE: room for n ints in all (after the count that says n was narrowed). */
void tm_narrow_reserve(struct tm_narrow *w, int n);
int tm_narrow_count(struct tm_narrow *w, const char *what, MPI_Count c);
/* A displacement or stride (may be negative). */
int tm_narrow_disp(struct tm_narrow *w, const char *what, MPI_Count d);
/* NULL stays NULL (the int call reports a missing array). */
const int *tm_narrow_counts(struct tm_narrow *w, const char *what, const MPI_Count *c, int n);
const int *tm_narrow_displs(struct tm_narrow *w, const char *what, const MPI_Aint *d, int n);
/* The same for MPI_Count displacements (the datatype constructors'). */
const int *tm_narrow_cdispls(struct tm_narrow *w, const char *what, const MPI_Count *d, int n);
/* Reports w->err through the communicator's error handler, frees, returns the class. */
int tm_narrow_fail(struct tm_narrow *w);
/* After the int call returned e: with a request (non-blocking or persistent) that e made,
 * the int copies live until the request is freed (the operation reads them until then);
 * otherwise they go now.  Returns e. */
int tm_narrow_end(struct tm_narrow *w, int e, MPI_Request *request);

#endif
