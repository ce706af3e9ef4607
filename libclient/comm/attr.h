/* attr.h — keyvals and attributes, one machinery for every object kind (communicators,
 * datatypes, windows).  An object keeps a list of its attributes (struct tm_attr *, NULL when
 * empty) next to its handle; the kind's code calls these with the object's handle (all MPI
 * handles of these kinds are ints), which the callbacks receive.
 *
 * Return values are MPI error classes: MPI_SUCCESS, MPI_ERR_KEYVAL (keyval unknown, freed,
 * or of another kind), MPI_ERR_NO_MEM, or whatever a user callback returned (the caller
 * reports it through its error handler).  Any thread of the rank: keyvals are under the
 * rank's objs lock; callbacks run without it. */
#ifndef TMPI_LIBCLIENT_ATTR_H
#define TMPI_LIBCLIENT_ATTR_H

#include "mpi.h"

struct tm_rank;

enum tm_attr_kind { TM_ATTR_COMM = 1, TM_ATTR_TYPE = 2, TM_ATTR_WIN = 3 };

#define TM_KEYVAL_BASE 16 /* user keyvals; below are the predefined keys (mpi.h) */

struct tm_attr {
    struct tm_attr *next; /* in the order set */
    int keyval;
    void *val;
};

/* Keyval create and free for kind (copy and del: the kind's callback types, or NULL). */
int tm_keyval_create(struct tm_rank *me, int kind, void (*copy)(void), void (*del)(void),
                     void *extra, int *keyval);
int tm_keyval_free(struct tm_rank *me, int kind, int *keyval);

/* Sets keyval on the object (an old value is deleted first, through the delete callback). */
int tm_attr_set(struct tm_rank *me, int kind, int handle, struct tm_attr **list, int keyval,
                void *val);
/* *flag = 0 when the object has no value for keyval. */
int tm_attr_get(struct tm_rank *me, int kind, struct tm_attr *list, int keyval, void **val,
                int *flag);
int tm_attr_delete(struct tm_rank *me, int kind, int handle, struct tm_attr **list, int keyval);
/* On dup: every attribute of src whose copy callback says so goes into *dst (new handle
 * newh; the copy callbacks get the old handle). On a callback's error, *dst is emptied
 * again (through the delete callbacks) and the error returned. */
int tm_attr_copy_all(struct tm_rank *me, int kind, int oldh, struct tm_attr *src,
                     struct tm_attr **dst);
/* On free: deletes every attribute (delete callbacks in reverse order of setting, MPI 4.0
 * §7.7.1 leaves the order open).  Stops at the first callback that fails (that attribute
 * and the ones not yet deleted stay) and returns its code. */
int tm_attr_delete_all(struct tm_rank *me, int kind, int handle, struct tm_attr **list);
/* MPI_Finalize: deletes MPI_COMM_SELF's attributes, then MPI_COMM_WORLD's. */
int tm_comm_finalize_attrs(struct tm_rank *me);
/* Frees the list without callbacks (job teardown). */
void tm_attr_drop_all(struct tm_attr **list);

#endif
