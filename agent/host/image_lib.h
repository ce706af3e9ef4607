/* image_lib.h — the libraries' objects behind an executable's copy relocations.
 *
 * An executable (PIE) that uses a library's variable (std::cout, stdout, a library's table)
 * holds a copy of it in its own .bss, and in a process the library binds its own references to
 * that copy.  A rank's image cannot take the library's references over (one library serves
 * every rank), so each copy starts as a copy of the object the libraries do use, as it is when
 * the rank's image is made: a stream object shares the library's buffer, its formatting state
 * is the rank's.  Loading thread only. */
#ifndef TMPI_AGENT_IMAGE_LIB_H
#define TMPI_AGENT_IMAGE_LIB_H

#include <stdint.h>

#include "image_elf.h"

/* For each copy relocation of e, the address of the object the libraries use, in a new array
 * *ret (free()): a definition in the global scope, else 0 for the master's own (loaded from
 * the same program as master, load bias mbias), which gets the library's bytes first.  For a C++
 * program, libstdc++'s standard streams are constructed first: GCC 12 constructs them from the
 * program's own static constructors, which the master never runs.  Not handled: a second C++
 * executable in the same job (MPMD), whose copies would take its own master's streams, never
 * constructed.  0 or a negative errno. */
int image_lib_copy_sources(const struct image_elf *e, void *master, uintptr_t mbias,
                           uintptr_t **ret);

#endif
