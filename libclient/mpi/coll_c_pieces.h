/* coll_c_pieces.h — MPI_Gather_c, MPI_Scatter_c, MPI_Allgather_c and MPI_Alltoall_c of blocks
 * the int-counted engine cannot take in one call (count_narrow.h): more than 2^31 - 1 bytes.
 *
 * Such a block of a contiguous type is moved as pieces of TM_COLL_PIECE bytes, one int call
 * per piece in order: MPI_BYTE on the side of single blocks, and on the side of the per-rank
 * blocks a type of that many bytes resized to the whole block's extent, so that the engine's
 * block i of a piece lies inside block i of the buffer.  Every rank cuts at the same bytes
 * whatever count and type of that signature it passed (the decision is the block's bytes,
 * which the signatures make equal).  MPI_Alltoall_c in place swaps the blocks pairwise
 * instead (MPI_Sendrecv_replace on a duplicate of the communicator).  A rank whose type is not
 * contiguous takes the same pieces of a packed stand-in (tm_cflat_begin), so ranks with a
 * contiguous and a non-contiguous type of one signature meet: the decision is the bytes. */
#ifndef TMPI_LIBCLIENT_COLL_C_PIECES_H
#define TMPI_LIBCLIENT_COLL_C_PIECES_H

#include "mpi.h"

/* The bytes one piece moves: few calls next to the copies, and across nodes the engine stages
 * a piece (1 GiB pieces had a 2-agent MPI_Allgather_c of 2 GiB blocks killed by the OOM
 * killer on a 24 GiB machine). */
#define TM_COLL_PIECE ((MPI_Count)256 << 20)
/* MPI_Alltoall_c in place swaps blocks pairwise in pieces of this many bytes (each one a
 * buffer of the engine's MPI_Sendrecv_replace). */
#define TM_COLL_PIECE_SWAP ((MPI_Count)64 << 20)

/* The calling rank's rank in comm (and *ret_size its size, ret_inter whether it is an
 * inter-communicator; either may be NULL), hidden communicators too: the inter-communicator
 * collectives broadcast on their hidden local one, which the MPI_Comm_* queries do not know.
 * -1 for an invalid handle (the collective then reports it). */
int tm_cp_rank(MPI_Comm comm, int *ret_size, int *ret_inter);

/* count elements of type make a block for the pieces: a contiguous type, more than INT_MAX
 * bytes in all.  comm must be an intra-communicator (an inter-communicator's roots are MPI_ROOT
 * and MPI_PROC_NULL: the narrowing decides there). */
int tm_coll_c_big(MPI_Comm comm, MPI_Count count, MPI_Datatype type);

int tm_gather_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int tm_scatter_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm);
int tm_allgather_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/* The bytes of count elements of a non-contiguous type as one contiguous buffer (*ret; buf
 * itself for a contiguous type, MPI_IN_PLACE or nothing), so that the pieces cut every rank's
 * data at the same bytes whatever its type: in packs buf into it first, out unpacks it into
 * buf at tm_cflat_end when the call succeeded.  Costs the block's bytes of memory and a copy.
 * 0 or MPI_ERR_NO_MEM (raised on comm). */
struct tm_type;
struct tm_cflat {
    const struct tm_type *t; /* NULL: no stand-in */
    void *user, *tmp;
    MPI_Count count;
    int out;
};
int tm_cflat_begin(struct tm_cflat *f, MPI_Comm comm, void *buf, MPI_Count count, MPI_Datatype type,
                   int in, int out, void **ret);
/* Unpacks (out, e == MPI_SUCCESS) and frees; returns e. */
int tm_cflat_end(struct tm_cflat *f, int e);
int tm_alltoall_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);

#endif
