/* image_pack.h — a copy's segments in as few memory maps as its layout allows.
 *
 * vm.max_map_count (65,530 by default) bounds the maps of the job host, and every rank's copy
 * of the program takes some: mapped segment by segment as ld.so does, a linker's usual layout
 * (headers, text, read-only data, RELRO, data) is five, and 16,384 ranks do not fit.  Packed:
 * the read-only segments are one mapping of the template, readable and executable (the
 * headers and read-only data become executable too; still shared and never writable), and
 * each writable segment one anonymous mapping holding the file's bytes (its own pages from the
 * start instead of at the first write), zero-filled beyond them.  With RELRO made read-only
 * afterwards the copy takes three maps. */
#ifndef TMPI_AGENT_IMAGE_PACK_H
#define TMPI_AGENT_IMAGE_PACK_H

#include <stdint.h>

#include "image_copy.h"

/* Maps every segment of src at bias (inside the copy's reserved span) from the template
 * tmpl_fd, packed.  0; -ENOTSUP when the layout does not allow it (read-only segments whose
 * file offsets and addresses differ by different amounts, or a writable one among them: the
 * caller maps segment by segment then, nothing having been mapped); another negative errno
 * from mmap or reading the template. */
int image_pack_map(const struct image_copy_src *src, uintptr_t bias, int tmpl_fd);

#endif
