/* module_check.h — is a file a TMPI program, and if not, why not?
 *
 * A TMPI program is an ELF64 file of this host's byte order that either carries tmpicc's marker
 * (a section named TMPI_MODULE_SECTION whose contents begin with TMPI_MODULE_MAGIC, see
 * proto/svc/module_marker.h) or names libtmpi among its needed libraries (DT_NEEDED): what
 * CMake's FindMPI, Meson, pkg-config tmpi or a plain -ltmpi link produce.  tmpi-launch checks
 * this before contacting an agent so that "tmpi-launch -n 4 ./a.out" on a file the agent cannot
 * run fails at once with a message that says what to do, instead of inside the agent.
 */
#ifndef TMPI_LAUNCHER_MODULE_CHECK_H
#define TMPI_LAUNCHER_MODULE_CHECK_H

/* The longest needed-library name read; a longer one matches no table and is skipped. */
#define MODULE_NEEDED_NAME_MAX 255

enum module_kind {
    MODULE_TMPI,      /* runs: a shared object or position-independent executable (ET_DYN) */
    MODULE_NOT_TMPI,  /* not ELF64 of this host, truncated or corrupt, or not linked with TMPI */
    MODULE_NOT_PIE,   /* linked with TMPI but at a fixed address (ET_EXEC): cannot be copied */
    MODULE_OTHER_MPI, /* needs another MPI's library, named in module_verdict.lib */
};

struct module_verdict {
    enum module_kind kind;
    char lib[MODULE_NEEDED_NAME_MAX + 1]; /* MODULE_OTHER_MPI: that library's name */
};

/* Reads the file open at fd and fills *ret.  The file is untrusted: every offset is
 * bounds-checked and nothing is allocated beyond what the file's size allows.  0 when the file
 * was read (a corrupt ELF is MODULE_NOT_TMPI, not an error); a negative errno when reading it
 * failed. */
int module_check_fd(int fd, struct module_verdict *ret);

#endif
