/* fd_write.h — whole writes to a blocking file descriptor.
 *
 * The control frames (frame.c), the launcher's copy of rank output to its own stdout and
 * stderr (launch_output.c) and the memfds the agent fills for its job hosts (memfd_bytes.c)
 * all need every byte written or an error; one loop serves them.  Any thread; no state. */
#ifndef TMPI_PROTO_FD_WRITE_H
#define TMPI_PROTO_FD_WRITE_H

#include <stddef.h>

/* Writes all size bytes, retrying short writes and EINTR.  0, or a negative errno (-EIO when
 * the file takes nothing). */
int fd_write_all(int fd, const void *bytes, size_t size);

#endif
