/* loader.h — private per-rank images of a program.
 *
 * Each rank gets its own copy of the module, so the program's globals and statics are private
 * to the rank (seed 000 2.1 does this with a source transformation; we get it from the
 * dynamic loader).  glibc treats two dlopen() calls with the same path as one object, so each
 * copy lives in its own memfd and is opened as /proc/self/fd/N, and the memfd stays open as
 * long as the image is loaded: closing it would let a later copy reuse the number, the path,
 * and so this image. */
#ifndef TMPI_AGENT_LOADER_H
#define TMPI_AGENT_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "image_copy.h"
#include "image_elf.h"
#include "image_private.h"
#include "rank_vars.h"

struct image {
    void *handle; /* dlopen'ed copies; NULL for one made by image_copy */
    int fd;
    struct image_copy copy;  /* copies made by image_copy (image_copy.h); else copy.src NULL */
    struct image_copy *libs; /* its private libraries' copies (image_private.h), nlibs of them */
    size_t nlibs;
    int (*main)(int, char **);
    int has_tls; /* the copy has thread-local variables (ranks sharing a thread would share them) */
    /* the program starts threads of its own (it imports pthread_create): they may block the
     * rank's thread in pthread_join or a condition variable, which would stop a carrier */
    int creates_threads;
    /* its read-only segments map the program's template and its memfd holds no pages
     * (image_share.h) */
    int shared;
};

/* Loads one private copy of a module (a shared object: executables need image_program_open);
 * with tmpl_fd >= 0 (image_template_open of the same
 * bytes) the copy shares its read-only pages with it.  On failure returns a negative errno and
 * writes a one-line reason (e.g. the loader's error) into err. */
int image_load(const uint8_t *bytes, size_t size, const char *label, int tmpl_fd, struct image *ret,
               char *err, size_t errlen);

/* Unloads (runs the copy's destructors) and closes its memfd; a copy made by image_copy is
 * unmapped too.  Accepts a never-loaded image. */
void image_unload(struct image *img);

/* Runs the copy's destructors (atexit handlers, static destructors) once; a copy made by
 * image_copy stays mapped (a job host ends after its job: unmapping thousands of copies and
 * withdrawing their unwind tables one by one would only cost time), a dlopen'ed one is
 * unloaded (else ld.so would run its destructors again at exit).  Accepts a never-loaded
 * image. */
void image_finish(struct image *img);

/* One program of a job, from which its ranks' copies are loaded: by image_copy when the
 * image allows (image_copy.h), else each by dlopen. */
struct image_program {
    const uint8_t *bytes; /* the caller's, or own_bytes */
    size_t size;
    uint8_t *own_bytes; /* an executable's bytes made loadable (image_elf_unpie); else NULL */
    struct image_elf elf;
    uintptr_t *copy_src;       /* per copy relocation of elf, the library's object (image_lib.h) */
    struct image_private priv; /* its libraries copied per rank, opened before its master */
    /* per copy relocation of elf whose object a private library defines: that library's
     * index (-1: none) and the object's address in its master */
    int *copy_lib;
    uintptr_t *copy_def;
    char priv_note[256]; /* libraries kept shared that would be private, and why */
    int tmpl_fd;         /* image_template_open, or -1: copies keep their own read-only pages */
    struct image_copy_src src; /* src.master NULL: each copy is dlopen'ed */
    uintptr_t main_off;        /* main's address in a copy less the copy's load bias */
    int creates_threads;
    char why_dlopen[160]; /* why copies are dlopen'ed (image_copy's reason); "" otherwise */
};

/* Prepares loading copies of the program bytes (kept by the caller until the program is
 * closed): its template memfd and, where the image allows, its master and those of its
 * private libraries (image_private.h; shared: more libraries to keep shared, priv: more to copy
 * per rank, either NULL).  0, or a negative errno with a one-line reason in err (an image
 * ld.so refuses, not a TMPI program, no main). */
int image_program_open(struct image_program *p, const uint8_t *bytes, size_t size,
                       const char *label, const char *shared, const char *priv, char *err,
                       size_t errlen);
/* image_program_open for a program opened after others of the job host (MPMD programs,
 * spawned ones): their private libraries' masters are borrowed (image_private_lenders); the
 * lenders stay open until this program is closed. */
int image_program_open_after(struct image_program *p, const uint8_t *bytes, size_t size,
                             const char *label, const char *shared, const char *priv,
                             const struct image_private_lenders *lend, char *err, size_t errlen);

/* Loads one private copy of the program into ret (its memfd, if dlopen'ed, named label), its
 * references to libc's per-rank variables bound to vars (rank_vars.h; NULL: left to libc's).
 * 0, or a negative errno with the reason in err. */
int image_program_load(struct image_program *p, const char *label, struct rank_vars *vars,
                       struct image *ret, char *err, size_t errlen);

/* Closes the template once every copy is loaded (their mappings keep its pages) and has the
 * copies' unwind tables sorted (image_copy_sort_unwind). */
void image_program_loaded(struct image_program *p);

/* Closes the program.  Only after image_unload of every copy: copies use the libraries its
 * master holds.  Accepts a program never opened (zeroed, tmpl_fd -1). */
void image_program_close(struct image_program *p);

#endif
