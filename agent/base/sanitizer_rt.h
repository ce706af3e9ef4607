/* sanitizer_rt.h — the sanitizer runtime a program needs loaded first in its process.
 *
 * A program built with -fsanitize=address (or thread, hwaddress, leak) needs its runtime
 * (libasan.so.N, ...) to be the first library of the process: loaded later, as the job host
 * loads a program, it refuses to start ("ASan runtime does not come first") or cannot get its
 * thread-local block.  The agent reads which one a job's programs name and starts their job
 * host with it preloaded (jobhost.c), as the program's own process would have it when run
 * directly.  -fsanitize=undefined's runtime loads late like any library and is not listed. */
#ifndef TMPI_SANITIZER_RT_H
#define TMPI_SANITIZER_RT_H

#include <stddef.h>
#include <stdint.h>

/* needed, a DT_NEEDED name, if it is such a runtime; NULL otherwise. */
const char *sanitizer_rt_first(const char *needed);

/* The runtime the program in b (its file bytes) needs first: 1 and *ret the name (pointing into
 * b), 0 for none (or bytes that are no ELF object: the job host says what is wrong with them),
 * -EINVAL when it names two different ones (*ret the second). */
int sanitizer_rt_of_program(const uint8_t *b, size_t size, const char **ret);

#endif
