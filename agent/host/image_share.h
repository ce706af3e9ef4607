/* image_share.h — what the private copies of one program can share.
 *
 * Each rank's copy of a program lives in a memfd of its own (loader.h), so without more work
 * every copy holds the whole file in memory (text, read-only data, symbols, debug sections)
 * and the pages of its read-only segments are distinct from every other copy's, although
 * their bytes are the same: at 16,384 ranks a 24 KiB program costs 384 MiB, a 2 MiB one
 * 32 GiB.  Only the writable segment (data, bss, GOT) has to be private.
 *
 * After a copy is loaded, image_share maps its read-only segments from the program's one
 * template memfd (identical bytes at the same offsets, so nothing the loader resolved
 * changes), makes every page of its writable segment the copy's own (copy-on-write), and then
 * gives back all the pages of the copy's memfd. */
#ifndef TMPI_AGENT_IMAGE_SHARE_H
#define TMPI_AGENT_IMAGE_SHARE_H

#include <stddef.h>
#include <stdint.h>

/* A memfd named label holding the program's bytes, from which copies map their read-only
 * segments; the caller closes it (the mappings keep its pages).  Returns the fd or a negative
 * errno. */
int image_template_open(const uint8_t *bytes, size_t size, const char *label);

/* Shares the read-only segments of the loaded copy handle (dlopen'ed from own_fd, whose
 * contents are bytes) with tmpl_fd and empties own_fd.  Returns 0, or a negative errno with
 * the copy unchanged where a step could not be done (its memory is then private, as before);
 * it stays usable either way. */
int image_share(void *handle, const uint8_t *bytes, size_t size, int tmpl_fd, int own_fd);

#endif
