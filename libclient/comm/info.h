/* info.h — MPI info objects: (key, value) strings in the order keys were first set.  A rank's
 * handles are in its objs table (objs.h); MPI_INFO_ENV is made on first use from what the
 * rank knows of its start.  Other layers keep hints as their own struct tm_info copies. */
#ifndef TMPI_LIBCLIENT_INFO_H
#define TMPI_LIBCLIENT_INFO_H

#include "mpi.h"

struct tm_rank;

#define TM_INFO_BASE 2 /* 0 MPI_INFO_NULL, 1 MPI_INFO_ENV */

struct tm_info {
    int n, cap;
    char **key, **val;
};

/* The object of handle h (MPI_INFO_ENV included), NULL if h is not one of me's. */
struct tm_info *tm_info_get(struct tm_rank *me, MPI_Info h);
/* A shared empty object: never modified, never freed (tm_info_free_obj ignores it). */
struct tm_info *tm_info_empty(void);
/* A copy (of an empty object when src is NULL), NULL when out of memory. */
struct tm_info *tm_info_dup_obj(const struct tm_info *src);
void tm_info_free_obj(void *info);
/* A new handle holding a copy of src (NULL: empty); MPI_INFO_NULL when out of memory. */
MPI_Info tm_info_new_handle(struct tm_rank *me, const struct tm_info *src);
/* The value of key in in, or NULL. */
const char *tm_info_lookup(const struct tm_info *in, const char *key);
/* MPI_Init's arguments, for MPI_INFO_ENV's command and argv (argv may be NULL). */
void tm_info_env_args(struct tm_rank *me, int argc, char **argv);

#endif
