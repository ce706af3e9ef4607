/* image_elf.h — what the loader reads from a program's ELF bytes before loading any copy.
 *
 * A program reaches the agent in one of two shapes: the shared object tmpicc links (exports
 * main, carries the TMPI marker), or an ordinary position-independent executable that a build
 * system linked against libtmpi.so with the system compiler (CMake's FindMPI, pkg-config,
 * Meson).  Both load as ranks; this file tells which shape a program has, where its main is,
 * and which of its words name libc's variables that each rank must have its own of
 * (rank_vars.h).  Pure: it reads the bytes and loads nothing.  Bounds-checked against
 * malformed images. */
#ifndef TMPI_AGENT_IMAGE_ELF_H
#define TMPI_AGENT_IMAGE_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "rank_vars.h"

/* One reference of the program to a rank variable. */
struct image_var_ref {
    uintptr_t off;  /* file address of the word (a GOT slot) or of the copy (copy relocation) */
    int64_t addend; /* of a word: what it holds is the variable's address plus this */
    uint8_t k;      /* enum rank_var */
    uint8_t copy;   /* 1: a copy relocation (the variable lives at off in the image) */
};

/* A copy relocation: size bytes at file address off that ld.so fills from a library's
 * variable (an executable's stdout, environ, optind ...). */
struct image_copy_rel {
    uintptr_t off;
    size_t size;
    const char *name; /* the symbol, in the bytes read (valid while they are) */
};

struct image_elf {
    int pie;             /* an executable (DF_1_PIE): ld.so's dlopen must be told otherwise */
    uintptr_t main_addr; /* file address of main; 0 when not found */
    int tmpi;            /* carries the TMPI marker or needs libtmpi.so */
    struct image_var_ref *vars;
    size_t nvars;
    struct image_copy_rel *copies;
    size_t ncopies;
    uintptr_t relro_lo, relro_hi; /* file addresses of PT_GNU_RELRO; equal when none */
};

/* Reads the bytes of a program.  0; or a negative errno with a one-line reason in err that
 * says what to do: not an x86-64 ELF object, a non-PIE executable (how to rebuild it), a
 * program linked against another MPI's library (naming it), no main. */
int image_elf_read(struct image_elf *ret, const uint8_t *b, size_t size, char *err, size_t errlen);

/* Clears DF_1_PIE in a writable copy of the bytes (ld.so refuses to dlopen an executable; as a
 * rank image it is loaded like a shared object, which a PIE is).  No-op when not set. */
void image_elf_unpie(uint8_t *b, size_t size);

/* Points the rank's variables into an image loaded with load bias bias: a GOT slot gets the
 * rank's variable's address, a copy relocation becomes where the variable lives
 * (rank_vars_move).  The slots must be writable. */
void image_elf_bind_vars(const struct image_elf *e, uintptr_t bias, struct rank_vars *v);

/* Fills a copy's copy relocations (load bias bias): copy i from src[i], the library's object
 * as it is now, or where src[i] is 0 from the same place of a copy that ld.so relocated (load
 * bias from). */
void image_elf_fill_copies(const struct image_elf *e, const uintptr_t *src, uintptr_t from,
                           uintptr_t bias);

/* Makes the RELRO of an image loaded with load bias bias writable (writable 1) or read-only
 * again (0), for words written after ld.so protected it.  0 or a negative errno. */
int image_elf_relro(const struct image_elf *e, uintptr_t bias, int writable);

void image_elf_free(struct image_elf *e);

#endif
