#include "loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "image_share.h"
#include "module_marker.h"

/* glibc serialises dlopen and dlclose with a lock inside ld.so that ThreadSanitizer cannot
 * see, so two jobs loading and unloading at once look like races in ld.so's own memory.  We
 * take one lock of ours around them: it costs nothing (they are serialised anyway) and makes
 * the order visible. */
static struct {
    pthread_mutex_t mu;
} dl_order = {PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP}; /* recursive like ld.so's own: a constructor
                                                          may dlopen */

static void *dl_open(const char *path, int flags)
{
    pthread_mutex_lock(&dl_order.mu);
    void *h = dlopen(path, flags);
    pthread_mutex_unlock(&dl_order.mu);
    return h;
}

static void dl_close(void *h)
{
    pthread_mutex_lock(&dl_order.mu);
    dlclose(h);
    pthread_mutex_unlock(&dl_order.mu);
}

/* Whether the ELF image imports a thread-creating function (its dynamic symbol table holds an
 * undefined pthread_create or thrd_create).  Bounds-checked: a malformed image just says 0 and
 * fails later in dlopen. */
static int imports_thread_create(const uint8_t *b, size_t size)
{
    const Elf64_Ehdr *eh = (const void *)b;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff > size || (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
        return 0;
    const Elf64_Shdr *sh = (const void *)(b + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr *st = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
            st->sh_offset > size || st->sh_size > size - st->sh_offset)
            return 0;
        const Elf64_Sym *sym = (const void *)(b + sh[i].sh_offset);
        const char *str = (const char *)(b + st->sh_offset);
        size_t n = sh[i].sh_size / sizeof *sym;
        for (size_t k = 0; k < n; k++) {
            if (sym[k].st_shndx != SHN_UNDEF || sym[k].st_name >= st->sh_size) continue;
            const char *name = str + sym[k].st_name;
            size_t left = st->sh_size - sym[k].st_name;
            if (strnlen(name, left) == left) continue;
            if (strcmp(name, "pthread_create") == 0 || strcmp(name, "thrd_create") == 0) return 1;
        }
    }
    return 0;
}

int image_load(const uint8_t *bytes, size_t size, const char *label, int tmpl_fd, struct image *ret,
               char *err, size_t errlen)
{
    *ret = (struct image){.fd = -1};
    int fd = image_template_open(bytes, size, label);
    if (fd < 0) {
        snprintf(err, errlen, "writing the program image into a memfd: %s", strerror(-fd));
        return fd;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    void *h = dl_open(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "%s", dlerror());
        close(fd);
        return -ENOEXEC;
    }
    if (!dlsym(h, TMPI_MODULE_SYMBOL)) {
        snprintf(err, errlen, "not a TMPI program (build it with tmpicc)");
        dl_close(h);
        close(fd);
        return -ENOEXEC;
    }
    void *m = dlsym(h, "main");
    if (!m) {
        snprintf(err, errlen, "the program exports no main()");
        dl_close(h);
        close(fd);
        return -ENOEXEC;
    }
    ret->handle = h;
    ret->fd = fd;
    /* Not sharing costs memory, not correctness: the copy is complete either way. */
    ret->shared = tmpl_fd >= 0 && image_share(h, bytes, size, tmpl_fd, fd) == 0;
    size_t modid = 0;
    ret->has_tls = dlinfo(h, RTLD_DI_TLS_MODID, &modid) == 0 && modid != 0;
    ret->creates_threads = imports_thread_create(bytes, size);
    *(void **)&ret->main = m;
    return 0;
}

void image_unload(struct image *img)
{
    if (img->handle) dl_close(img->handle);
    if (img->fd >= 0) close(img->fd);
    *img = (struct image){.fd = -1};
}
