/* keyfile.h — the cluster key: any file of at least 32 random bytes (head -c 32 /dev/urandom)
 * that only its owner (and group) may read.  Users never hold it: the launcher talks to its
 * local agent, and the agents prove to each other that they share it (mesh_auth.h). */
#ifndef TMPI_AGENT_KEYFILE_H
#define TMPI_AGENT_KEYFILE_H

#include <stddef.h>

#include "mesh_auth.h"

#define KEYFILE_MIN 32
#define KEYFILE_MAX 4096

/* Loads and checks a key file.  On failure returns a negative errno and writes a one-line
 * reason into err: missing, not a regular file, readable or writable by others, shorter than
 * KEYFILE_MIN or longer than KEYFILE_MAX bytes. */
int keyfile_load(const char *path, struct mesh_key *ret, char *err, size_t errlen);

/* Reads a key handed over a pipe (tmpid --key-fd): one line of hexadecimal digits, at least
 * KEYFILE_MIN and at most KEYFILE_MAX bytes' worth, ended by a newline.  Reads no byte past
 * the newline, so the descriptor can go on serving as a lifeline (its writer closing it ends
 * the agent).  Never touches a file: the launcher of a Slurm allocation keeps its fresh key
 * off every disk.  On failure a negative errno and a one-line reason in err. */
int keyfile_read_fd(int fd, struct mesh_key *ret, char *err, size_t errlen);

#endif
