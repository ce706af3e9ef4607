/* coll_c_pieces.h — MPI_Bcast, MPI_Gather, MPI_Scatter, MPI_Allgather and MPI_Alltoall (int and
 * _c forms alike) of blocks the int-counted engine cannot take in one call: more than 2^31 - 1
 * bytes.  Both forms decide by the block's bytes, before their entry (so the pieces' own calls
 * are the only collectives every rank counts): an MPI_Bcast of one element of a 3 GiB type
 * meets an MPI_Bcast_c of 3 GiB of MPI_BYTE.
 *
 * MPI_Bcast moves such a block as pieces of TM_BCAST_PIECE bytes of MPI_BYTE, one MPI_Bcast
 * each, in order.  The others take pieces of TM_COLL_PIECE bytes, one int call per piece in
 * order: MPI_BYTE on the side of single blocks, and on the side of the per-rank blocks a type
 * of that many bytes resized to the whole block's extent, so that the engine's block i of a
 * piece lies inside block i of the buffer.  Every rank cuts at the same bytes whatever count
 * and type of that signature it passed (the decision is the block's bytes, which the
 * signatures make equal).  MPI_Alltoall_c in place swaps the blocks pairwise instead
 * (MPI_Sendrecv_replace on a duplicate of the communicator).  A rank whose type is not
 * contiguous takes the same pieces of a packed stand-in (tm_cflat_begin), so ranks with a
 * contiguous and a non-contiguous type of one signature meet.  Inter-communicators move their
 * blocks whole (coll_inter/ over the _c point-to-point calls) and never come here. */
#ifndef TMPI_LIBCLIENT_COLL_C_PIECES_H
#define TMPI_LIBCLIENT_COLL_C_PIECES_H

#include "mpi.h"

/* The bytes one piece of a broadcast moves: large enough that the pieces cost nothing next to
 * their copies, small enough for the engine's int. */
#define TM_BCAST_PIECE ((MPI_Count)1 << 30)
/* The bytes one piece of the others moves: few calls next to the copies, and across nodes the
 * engine stages a piece (1 GiB pieces had a 2-agent MPI_Allgather_c of 2 GiB blocks killed by the
 * OOM killer on a 24 GiB machine). */
#define TM_COLL_PIECE ((MPI_Count)256 << 20)
/* MPI_Alltoall_c in place swaps blocks pairwise in pieces of this many bytes (each one a
 * buffer of the engine's MPI_Sendrecv_replace). */
#define TM_COLL_PIECE_SWAP ((MPI_Count)64 << 20)

/* The calling rank's rank in comm (and *ret_size its size, ret_inter whether it is an
 * inter-communicator; either may be NULL), hidden communicators too: the inter-communicator
 * collectives broadcast on their hidden local one, which the MPI_Comm_* queries do not know.
 * -1 for an invalid handle (the collective then reports it). */
int tm_cp_rank(MPI_Comm comm, int *ret_size, int *ret_inter);

/* count elements of type make a block for the pieces (more than INT_MAX bytes) on comm, a
 * valid intra-communicator.  _rooted: the root's block (rcount of rtype) at the root, the
 * others' (count of type) elsewhere.  An invalid argument says 0: the call then reports it. */
int tm_coll_c_big(MPI_Comm comm, MPI_Count count, MPI_Datatype type);
int tm_coll_c_big_rooted(MPI_Comm comm, int root, MPI_Count rcount, MPI_Datatype rtype,
                         MPI_Count count, MPI_Datatype type);

/* The calls of blocks tm_coll_c_big(_rooted) chose; the error class of the first piece that
 * failed (reported by it). */
int tm_bcast_pieces(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm);

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
