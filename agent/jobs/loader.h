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

struct image {
    void *handle;
    int fd;
    int (*main)(int, char **);
    int has_tls; /* the copy has thread-local variables (ranks sharing a thread would share them) */
    /* the program starts threads of its own (it imports pthread_create): they may block the
     * rank's thread in pthread_join or a condition variable, which would stop a carrier */
    int creates_threads;
    /* its read-only segments map the program's template and its memfd holds no pages
     * (image_share.h) */
    int shared;
};

/* Loads one private copy of a module; with tmpl_fd >= 0 (image_template_open of the same
 * bytes) the copy shares its read-only pages with it.  On failure returns a negative errno and
 * writes a one-line reason (e.g. the loader's error) into err. */
int image_load(const uint8_t *bytes, size_t size, const char *label, int tmpl_fd, struct image *ret,
               char *err, size_t errlen);

/* Unloads (runs the copy's destructors) and closes its memfd.  Accepts a never-loaded image. */
void image_unload(struct image *img);

#endif
