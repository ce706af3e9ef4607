/* size_text.h — a byte count as people write it in settings ("64k", "256M", "4096"), one
 * parser for every binary: tmpid.conf (agent/base/config.c), tmpi-launch's sizes
 * (proto/control/limits_fmt.c) and libtmpi's TMPI_* sizes (libclient/io/io_pool.c).  Each
 * caller names the suffixes its setting accepts, so what the setting documents is what it
 * takes. */
#ifndef TMPI_PROTO_WIRE_SIZE_TEXT_H
#define TMPI_PROTO_WIRE_SIZE_TEXT_H

#include <stdint.h>

/* s: decimal digits (no sign, no space), then at most one suffix letter among `suffixes`
 * (some of "kmgt", either case, powers of 1024: k 2^10 ... t 2^40) and nothing after it.
 * Into *ret, unless the result exceeds max.  0; -EINVAL when s is no such size (empty, a
 * sign, another letter, trailing text); -ERANGE when it is one but above max. */
int size_text_parse(const char *s, const char *suffixes, uint64_t max, uint64_t *ret);

#endif
