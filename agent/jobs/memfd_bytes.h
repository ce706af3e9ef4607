/* memfd_bytes.h — memfds that hold given bytes.
 *
 * The agent hands a job host its program and configuration, and a job host hands its ranks
 * the shared read-only template of an image and a large argument block, each as a memfd
 * (jobhost.c, image_share.c, rank_argv.c).  Any thread; no state. */
#ifndef TMPI_MEMFD_BYTES_H
#define TMPI_MEMFD_BYTES_H

#include <stddef.h>

#include "fd_write.h" /* fd_write_all, for the callers that fill memfds */

/* A new close-on-exec memfd named name holding a copy of bytes, its offset at the end.
 * The fd, or a negative errno. */
int memfd_from_bytes(const char *name, const void *bytes, size_t size);

#endif
