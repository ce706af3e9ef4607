/* module_check.h — is a file a TMPI module?
 *
 * A TMPI module is an ELF64 shared object (ET_DYN) with a section named TMPI_MODULE_SECTION
 * whose contents begin with TMPI_MODULE_MAGIC (libclient/module_marker.h).  tmpi-launch checks
 * this before contacting an agent so that "tmpi-launch -n 4 ./a.out" on an ordinary binary
 * fails at once with a useful message instead of inside the agent.
 */
#ifndef TMPI_LAUNCHER_MODULE_CHECK_H
#define TMPI_LAUNCHER_MODULE_CHECK_H

/* 0 when the file open at fd is a TMPI module; -ENOEXEC when it is not (including any
 * truncated or corrupt ELF: the file is untrusted and every offset is bounds-checked);
 * another negative errno when reading it failed. */
int module_check_fd(int fd);

#endif
