#include "image_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dl_lock.h"

/* The libraries loaded now, by path: where a copy relocation's object is defined. */
struct lib_names {
    char **name;
    size_t n, cap;
};

/* dl_iterate_phdr holds ld.so's list lock: only the names are taken here, dlopen comes after.
 * Skipped: the job host itself (""), the vDSO and the programs' own masters and copies
 * (memfds, /proc/self/fd/N). */
static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct lib_names *l = arg;
    const char *n = info->dlpi_name;
    if (!n || n[0] != '/' || strncmp(n, "/proc/self/fd/", 14) == 0) return 0;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 16;
        char **nn = realloc(l->name, ncap * sizeof *nn);
        if (!nn) return 1;
        l->name = nn;
        l->cap = ncap;
    }
    if (!(l->name[l->n] = strdup(n))) return 1;
    l->n++;
    return 0;
}

static void lib_names_free(struct lib_names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->name[i]);
    free(l->name);
}

/* The library's own definition of name (not a program's copy of it), or NULL. */
static void *lib_definition(const struct lib_names *l, const char *name)
{
    void *a = NULL;
    for (size_t i = 0; !a && i < l->n; i++) {
        void *h = dl_open(l->name[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        struct link_map *lm = NULL;
        void *s = dlsym(h, name);
        /* dlsym on a handle searches its dependencies too: only a definition in the object
         * itself counts, found again when that object's turn comes */
        if (s && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm) {
            Dl_info di;
            if (dladdr(s, &di) && di.dli_fbase && strcmp(di.dli_fname, lm->l_name) == 0) a = s;
        }
        dl_close(h);
    }
    return a;
}

/* Gives the master's copy relocations the libraries' bytes, as ld.so gives an executable's
 * (for a loaded object it copies from the object itself: zeros).  Its RELRO is read-only by
 * now. */
static int fill_master(const struct image_elf *e, uintptr_t mbias, const struct lib_names *l)
{
    int rc = image_elf_relro(e, mbias, 1);
    if (rc < 0) return rc;
    for (size_t i = 0; i < e->ncopies; i++) {
        const void *def = lib_definition(l, e->copies[i].name);
        if (def) memcpy((void *)(mbias + e->copies[i].off), def, e->copies[i].size);
    }
    return image_elf_relro(e, mbias, 0);
}

/* libstdc++'s std::ios_base::Init::Init(), which constructs cout, cin, cerr and clog once per
 * process (a count keeps later calls from doing it again).  The object it initialises is
 * empty; one is kept for the process, never destroyed: the streams stay usable to the end. */
static struct {
    char init_obj[16];
    int done;
} cxx_streams;

static void construct_cxx_streams(void *master)
{
    if (cxx_streams.done) return;
    void (*init)(void *) = (void (*)(void *))(uintptr_t)dlsym(master, "_ZNSt8ios_base4InitC1Ev");
    if (!init) return;
    cxx_streams.done = 1;
    init(cxx_streams.init_obj);
}

int image_lib_copy_sources(const struct image_elf *e, void *master, uintptr_t mbias,
                           uintptr_t **ret)
{
    *ret = NULL;
    if (e->ncopies == 0) return 0;
    uintptr_t *src = calloc(e->ncopies, sizeof *src);
    struct lib_names l = {0};
    int rc = !src || dl_iterate_phdr(collect, &l) != 0 ? -ENOMEM : 0;
    /* As ld.so binds the libraries' references: to a definition in the global scope (the job
     * host and what it loaded at start, libc among them), else to the master's own copy,
     * which precedes the libraries it brought in (libstdc++) in their lookup scope. */
    for (size_t i = 0; rc == 0 && i < e->ncopies; i++)
        src[i] = (uintptr_t)dlsym(RTLD_DEFAULT, e->copies[i].name);
    if (rc == 0) rc = fill_master(e, mbias, &l);
    lib_names_free(&l);
    if (rc < 0) {
        free(src);
        return rc;
    }
    construct_cxx_streams(master);
    *ret = src;
    return 0;
}
