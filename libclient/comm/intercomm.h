/* intercomm.h — inter-communicators: creation over a peer communicator, merge, and dup and
 * split of inter-communicators (intercomm.c).
 *
 * Each side of an inter-communicator has its own node copies (struct tm_comm: size and
 * world_of are the local group, remote_of the other one); both sides use one context id, so
 * a message's source (the sender's local rank) names it in the receiver's remote group.  Each
 * member also holds two hidden handles (struct tm_commref coll_inter, coll_local): an
 * inter-communicator on a second id for the collectives' traffic between the groups, and an
 * intra-communicator of the local group on a third (coll_inter/ runs over them). */
#ifndef TMPI_LIBCLIENT_INTERCOMM_H
#define TMPI_LIBCLIENT_INTERCOMM_H

#include "comm.h"

/* Both return an MPI error class, reported through comm's handler. */
int tm_intercomm_dup(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, MPI_Comm *newcomm);
int tm_intercomm_split(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, int color, int key,
                       MPI_Comm *newcomm);

/* Attaches this member (rank, error handler eh) to the inter-communicator the two groups
 * agreed on (contexts ctx: its own, its hidden inter-communicator's, its hidden local one's;
 * groups lmap[n] and rmap[rn] as world ranks): *out.  MPI_SUCCESS or MPI_ERR_NO_MEM (nothing
 * attached). */
int tm_intercomm_attach(struct tm_rank *me, const int32_t ctx[3], const int32_t *lmap, int n,
                        const int32_t *rmap, int rn, int rank, MPI_Errhandler eh, MPI_Comm *out);

/* The tag the members of a group-based creation (MPI-4.0 stringtag) derive from the string they
 * share (FNV-1a, folded into the tag range): different strings keep concurrent creations
 * apart, like different tags. */
int tm_stringtag_tag(const char *s);

#endif
