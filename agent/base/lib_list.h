/* lib_list.h — the library lists of tmpid.conf: [agent] private_libraries names libraries
 * copied per rank beyond the built-in list (TMPI_PRIVATE_LIBS_DEFAULT, module_marker.h), e.g.
 * a site's Fortran runtime.  A list is name prefixes separated by spaces, commas or colons
 * ("libifcore.so, libflang.so"), matched as image_private.h matches them. */
#ifndef TMPI_AGENT_LIB_LIST_H
#define TMPI_AGENT_LIB_LIST_H

#include <stddef.h>

/* The most entries of private_libraries, and the longest entry (a file name). */
#define TMPI_PRIVATE_LIBS_MAX 32
#define TMPI_LIB_PREFIX_MAX 255

/* 0 if list is a valid private_libraries value, else -EINVAL (or -E2BIG past
 * TMPI_PRIVATE_LIBS_MAX entries) with the reason in why: an entry with a character no library
 * file name has ('/', quotes, control characters ...), longer than TMPI_LIB_PREFIX_MAX, or
 * naming part of the system runtime that every rank must share (libc, ld.so, libtmpi,
 * libstdc++ ...: a prefix of one of TMPI_SHARED_LIBS_DEFAULT's names, or one of them a prefix
 * of it).  An empty list is valid (nothing beyond the built-in list). */
int lib_list_check_private(const char *list, char *why, size_t whylen);

#endif
