/* sanitizer_rt.c — the sanitizer runtime a program needs first (sanitizer_rt.h). */
#include "sanitizer_rt.h"

#include <errno.h>
#include <string.h>

#include "elf_dyn.h"

/* The runtimes that must come first, by the start of their file name (any soname version). */
static const char *const first_rt[] = {"libasan.so.", "libtsan.so.", "libhwasan.so.", "liblsan.so.",
                                       NULL};

/* Enough for a program's direct dependencies: a runtime is named by the program itself. */
#define SANITIZER_RT_NEEDED_MAX 256

const char *sanitizer_rt_first(const char *needed)
{
    for (const char *const *p = first_rt; *p; p++)
        if (strncmp(needed, *p, strlen(*p)) == 0) return needed;
    return NULL;
}

int sanitizer_rt_of_program(const uint8_t *b, size_t size, const char **ret)
{
    const char *names[SANITIZER_RT_NEEDED_MAX], *soname;
    *ret = NULL;
    int n = elf_needed(b, size, names, SANITIZER_RT_NEEDED_MAX, &soname);
    for (int i = 0; i < n; i++) {
        const char *rt = sanitizer_rt_first(names[i]);
        if (!rt) continue;
        if (*ret && strcmp(*ret, rt) != 0) {
            *ret = rt;
            return -EINVAL;
        }
        *ret = rt;
    }
    return *ret != NULL;
}
