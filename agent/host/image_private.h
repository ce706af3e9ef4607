/* image_private.h — the program's own libraries, one copy per rank like the program.
 *
 * A library the program links that is not part of the system runtime (a user's libfoo.so, a
 * locally built HDF5) has globals the program's code treats as its own, so each rank gets a
 * copy of it, made the way the program's copies are (image_copy.h): a never-initialised
 * master loaded from a memfd before the program's, which ld.so then takes for the program's
 * DT_NEEDED entry of the same SONAME, and per rank a copy whose words pointing into any
 * master of the set are moved to that rank's copy of it.
 *
 * Shared (loaded once, as before): libraries under the system's library directories (/lib,
 * /lib64, /usr/lib, /usr/lib64: the distribution's runtime, OpenBLAS included), those whose
 * names begin as one of TMPI_SHARED_LIBS_DEFAULT (module_marker.h) or of the caller's list
 * (tmpid.conf shared_libraries, TMPI_SHARED_LIBS), libraries the job host has loaded already, and
 * those a copy cannot be made of (thread-local variables, no SONAME ...; the reason is noted).  The
 * libraries come from ld.so itself (ld.so --list on the program's template), so they are the
 * ones its dlopen would load.  Loading thread only. */
#ifndef TMPI_AGENT_IMAGE_PRIVATE_H
#define TMPI_AGENT_IMAGE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "image_copy.h"
#include "module_marker.h"

/* Libraries of one program a copy is made of per rank. */
#define IMAGE_PRIVATE_MAX 64

struct image_private_lib {
    char *name; /* as the program (or a library) needs it, e.g. libfoo.so.1 */
    char *path; /* where ld.so finds it */
    uint8_t *bytes;
    size_t size;
    int tmpl_fd; /* its template (image_share.h) until the copies are made */
    struct image_copy_src src;
    /* bytes and src are an earlier program's master (image_private_lenders): not closed here */
    int borrowed;
};

struct image_private {
    struct image_private_lib lib[IMAGE_PRIVATE_MAX]; /* a library after those it needs */
    size_t n;
};

/* The private libraries of the job host's earlier programs (a job's other MPMD programs, the
 * programs MPI_Comm_spawn started before), kept open longer than the program opened with
 * them.  ld.so binds a later program's DT_NEEDED entry to the first object of that SONAME, the
 * earlier program's master: a second master of the same library would never be reached, and
 * the later program's copies would call into the earlier master, never initialised (its
 * libgfortran's units unset, its command line shared).  So the later program borrows that
 * master and makes its ranks' copies from it. */
struct image_private_lenders {
    const struct image_private *const *sets;
    size_t n;
};

/* Finds the program's private libraries (prog_fd: its template memfd, bytes: its loadable
 * bytes) and opens a master of each; call before the program's master is opened.  shared:
 * more name prefixes to keep shared (separated by spaces, commas or colons; may be NULL);
 * priv: more to copy per rank wherever installed, as TMPI_PRIVATE_LIBS_DEFAULT's are (tmpid.conf
 * private_libraries; may be NULL; shared wins over it).  Only the built-in list's libraries may
 * keep thread-local state shared by their copies (IMAGE_COPY_SHARED_TLS): one of priv with
 * thread-local variables stays shared, and the note says so.
 * lend (may be NULL): masters to borrow for a library of the same path (see above).
 * Libraries kept shared that would otherwise be private are named in note.  0 (pv->n may be
 * 0), or a negative errno with the reason in err and nothing left open. */
int image_private_open(struct image_private *pv, const uint8_t *bytes, size_t size, int prog_fd,
                       const char *shared, const char *priv,
                       const struct image_private_lenders *lend, const char *label, char *note,
                       size_t notelen, char *err, size_t errlen);

/* Whether the library name (found at path) stays shared: the rule above without the
 * already-loaded and copyability checks.  Exposed for the tests and --display-map. */
int image_private_is_shared(const char *name, const char *path, const char *shared,
                            const char *priv);

/* Closes the templates once every copy is made. */
void image_private_loaded(struct image_private *pv);

/* Closes the masters and frees everything; only after every copy is freed.  Accepts a set
 * never opened (zeroed). */
void image_private_close(struct image_private *pv);

#endif
