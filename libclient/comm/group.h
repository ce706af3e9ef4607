/* group.h — MPI groups: an ordered list of world ranks, one object per handle (a rank's
 * handles, objs.h).  MPI_GROUP_EMPTY is a predefined empty group. */
#ifndef TMPI_LIBCLIENT_GROUP_H
#define TMPI_LIBCLIENT_GROUP_H

#include <stdint.h>

#include "mpi.h"

struct tm_rank;

#define TM_GROUP_BASE 2 /* 0 MPI_GROUP_NULL, 1 MPI_GROUP_EMPTY */

struct tm_bsbuf;
struct tm_group {
    int size;
    int32_t *world; /* group rank -> world rank */
    /* a session's process set (MPI_Group_from_session_pset): that session's buffer for
     * buffered sends (core/bsbuf.h), which communicators made from the group use; else NULL */
    struct tm_bsbuf *session_bsb;
};

/* The group of handle h (MPI_GROUP_EMPTY included), NULL if h is not one of me's groups. */
const struct tm_group *tm_group_get(struct tm_rank *me, MPI_Group h);
/* A new handle for a group of n world ranks (copied); MPI_GROUP_NULL when out of memory. */
MPI_Group tm_group_new(struct tm_rank *me, const int32_t *world, int n);
/* Frees a group object (objtab free callback). */
void tm_group_free_obj(void *g);
/* Rank of world rank w in g, or MPI_UNDEFINED. */
int tm_group_rank_of(const struct tm_group *g, int w);

#endif
