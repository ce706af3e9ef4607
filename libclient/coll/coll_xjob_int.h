/* coll_xjob_int.h — what the blocking (coll_xjob.c) and non-blocking (coll_xjob_nb.c)
 * collectives on a communicator with ranks of two jobs share; internal to coll/. */
#ifndef TMPI_LIBCLIENT_COLL_XJOB_INT_H
#define TMPI_LIBCLIENT_COLL_XJOB_INT_H

#include <stddef.h>

#include "coll_base.h"

/* The communicator's collective context (coll_net's derivation; ctx_base in net/xjob.c maps it
 * back, so a receive on it fails when the other job ends). */
#define TM_XCOLL_CTX(c) (-2 * (c)->ctx - 3)

/* acc = in[0] op in[1] op ... op in[n-1]: n blocks of count elements of a->rtype each, packed
 * (l[k] bytes: each must be count packed elements), reduced in rank order with a's op into
 * acc (laid out as the type).  0, -EMSGSIZE (a block of another size), -ENOMEM. */
int tm_xcoll_reduce_blocks(const struct tm_cargs *a, unsigned char **in, const size_t *l, int n,
                           size_t count, void *acc);

#endif
