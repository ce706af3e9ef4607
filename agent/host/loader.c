#include "loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dl_lock.h"
#include "image_elf.h"
#include "image_lib.h"
#include "image_share.h"
#include "module_marker.h"

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

/* Points a dlopen'ed copy's rank variables at the rank's (image_elf.h): its GOT slots may be
 * in RELRO, which ld.so has made read-only. */
static int bind_loaded_vars(const struct image_elf *e, uintptr_t bias, struct rank_vars *v)
{
    if (!v || e->nvars == 0) return 0;
    int rc = image_elf_relro(e, bias, 1);
    if (rc < 0) return rc;
    image_elf_bind_vars(e, bias, v);
    return image_elf_relro(e, bias, 0);
}

/* One copy dlopen'ed from the (load-ready) bytes of a program read by image_elf_read. */
static int load_dlopen(const uint8_t *bytes, size_t size, const struct image_elf *e,
                       const char *label, int tmpl_fd, struct rank_vars *vars, struct image *ret,
                       char *err, size_t errlen)
{
    *ret = (struct image){.fd = -1};
    void *h = NULL;
    int fd = dl_open_bytes(bytes, size, label, &h, err, errlen);
    if (fd < 0) return fd;
    struct link_map *lm = NULL;
    int rc = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm ? 0 : -ENOEXEC;
    if (rc == 0) rc = bind_loaded_vars(e, (uintptr_t)lm->l_addr, vars);
    if (rc < 0) {
        snprintf(err, errlen, "binding the copy's libc variables: %s", strerror(-rc));
        dl_close(h);
        close(fd);
        return rc;
    }
    ret->handle = h;
    ret->fd = fd;
    /* Not sharing costs memory, not correctness: the copy is complete either way. */
    ret->shared = tmpl_fd >= 0 && image_share(h, bytes, size, tmpl_fd, fd) == 0;
    size_t modid = 0;
    ret->has_tls = dlinfo(h, RTLD_DI_TLS_MODID, &modid) == 0 && modid != 0;
    ret->creates_threads = imports_thread_create(bytes, size);
    *(void **)&ret->main = (void *)((uintptr_t)lm->l_addr + e->main_addr);
    return 0;
}

int image_load(const uint8_t *bytes, size_t size, const char *label, int tmpl_fd, struct image *ret,
               char *err, size_t errlen)
{
    *ret = (struct image){.fd = -1};
    struct image_elf e;
    int rc = image_elf_read(&e, bytes, size, err, errlen);
    if (rc < 0) return rc;
    if (e.pie) {
        snprintf(err, errlen, "an executable: load it with image_program_open");
        image_elf_free(&e);
        return -ENOEXEC;
    }
    rc = load_dlopen(bytes, size, &e, label, tmpl_fd, NULL, ret, err, errlen);
    image_elf_free(&e);
    return rc;
}

void image_finish(struct image *img)
{
    if (img->copy.src) {
        /* the program's destructors, then its libraries', dependents first */
        image_copy_finish(&img->copy);
        for (size_t i = img->nlibs; i-- > 0;)
            image_copy_finish(&img->libs[i]);
        return;
    }
    image_unload(img);
}

void image_unload(struct image *img)
{
    image_copy_free(&img->copy);
    for (size_t i = img->nlibs; i-- > 0;)
        image_copy_free(&img->libs[i]);
    free(img->libs);
    if (img->handle) dl_close(img->handle);
    if (img->fd >= 0) close(img->fd);
    *img = (struct image){.fd = -1};
}

/* The program's copy relocations of objects its private libraries define: in a process the
 * library binds to the program's copy, so in each rank the library's copy is pointed at the
 * rank's program copy (lib_fixup), which starts from the library's bytes (copy_fixup). */
static int find_private_copies(struct image_program *p)
{
    if (p->elf.ncopies == 0 || p->priv.n == 0) return 0;
    p->copy_lib = malloc(p->elf.ncopies * sizeof *p->copy_lib);
    p->copy_def = calloc(p->elf.ncopies, sizeof *p->copy_def);
    if (!p->copy_lib || !p->copy_def) return -ENOMEM;
    for (size_t i = 0; i < p->elf.ncopies; i++) {
        p->copy_lib[i] = -1;
        for (size_t k = 0; k < p->priv.n; k++) {
            const struct image_copy_src *ls = &p->priv.lib[k].src;
            uintptr_t d = (uintptr_t)dlsym(ls->master, p->elf.copies[i].name);
            if (d >= ls->mbias + ls->lo && d < ls->mbias + ls->hi) {
                p->copy_lib[i] = (int)k;
                p->copy_def[i] = d;
                break;
            }
        }
    }
    return 0;
}

int image_program_open(struct image_program *p, const uint8_t *bytes, size_t size,
                       const char *label, const char *shared, const char *priv, char *err,
                       size_t errlen)
{
    return image_program_open_after(p, bytes, size, label, shared, priv, NULL, err, errlen);
}

int image_program_open_after(struct image_program *p, const uint8_t *bytes, size_t size,
                             const char *label, const char *shared, const char *priv,
                             const struct image_private_lenders *lend, char *err, size_t errlen)
{
    *p = (struct image_program){.bytes = bytes, .size = size, .tmpl_fd = -1};
    p->src.master_fd = -1;
    int rc = image_elf_read(&p->elf, bytes, size, err, errlen);
    if (rc < 0) return rc;
    if (p->elf.pie) {
        /* ld.so refuses to dlopen an executable; loaded as a library, a PIE is one */
        p->own_bytes = malloc(size);
        if (!p->own_bytes) {
            snprintf(err, errlen, "out of memory");
            image_program_close(p);
            return -ENOMEM;
        }
        memcpy(p->own_bytes, bytes, size);
        image_elf_unpie(p->own_bytes, size);
        p->bytes = bytes = p->own_bytes;
    }
    /* Without a template each copy keeps its own read-only pages: more memory, same job. */
    p->tmpl_fd = image_template_open(bytes, size, label);
    p->creates_threads = imports_thread_create(bytes, size);
    if (p->tmpl_fd < 0) {
        snprintf(p->why_dlopen, sizeof p->why_dlopen, "no template: %s", strerror(-p->tmpl_fd));
        return 0;
    }
    /* its private libraries' masters first: the program's master then binds to them */
    rc = image_private_open(&p->priv, bytes, size, p->tmpl_fd, shared, priv, lend, label,
                            p->priv_note, sizeof p->priv_note, err, errlen);
    if (rc < 0) {
        image_program_close(p);
        return rc;
    }
    char mlabel[96];
    snprintf(mlabel, sizeof mlabel, "%s-master", label);
    rc = image_copy_src_open(&p->src, bytes, size, mlabel, p->why_dlopen, sizeof p->why_dlopen);
    if (rc == -ENOTSUP) {
        /* each copy is dlopen'ed and would bind to never-initialised masters: the libraries
         * stay shared, loaded with the first copy */
        if (p->priv.n) {
            snprintf(p->priv_note, sizeof p->priv_note,
                     "its libraries stay shared: the program is dlopen'ed per rank");
            image_private_close(&p->priv);
        }
        return 0;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", p->why_dlopen);
        image_program_close(p);
        return rc;
    }
    p->why_dlopen[0] = '\0';
    p->main_off = p->elf.main_addr;
    rc = image_lib_copy_sources(&p->elf, p->src.master, p->src.mbias, &p->copy_src);
    if (rc == 0) rc = find_private_copies(p);
    if (rc < 0) {
        snprintf(err, errlen, "filling the program's copies of library variables: %s",
                 strerror(-rc));
        image_program_close(p);
        return rc;
    }
    return 0;
}

struct copy_fixup {
    const struct image_program *p;
    struct rank_vars *vars;
    const struct image *img; /* the rank's copies (their biases are known before any fill) */
    size_t lib;              /* lib_fixup: which library */
};

/* A private library's words that point at an object the program holds a copy of now point
 * at the rank's program copy (as ld.so binds a library to an executable's copy). */
static void lib_fixup(void *arg, uintptr_t mbias, uintptr_t bias)
{
    const struct copy_fixup *f = arg;
    const struct image_program *p = f->p;
    const struct image_copy_src *ls = &p->priv.lib[f->lib].src;
    for (size_t i = 0; p->copy_lib && i < p->elf.ncopies; i++) {
        if (p->copy_lib[i] != (int)f->lib) continue;
        uintptr_t home = f->img->copy.bias + p->elf.copies[i].off;
        for (size_t k = 0; k < ls->nslots; k++) {
            uintptr_t v;
            memcpy(&v, (const void *)(mbias + ls->slots[k]), sizeof v);
            if (v == p->copy_def[i]) memcpy((void *)(bias + ls->slots[k]), &home, sizeof home);
        }
    }
}

/* The copy's copy relocations from the libraries' objects as they are now (the master's were
 * filled when it was loaded, before anything ran), then its rank variables. */
static void copy_fixup(void *arg, uintptr_t mbias, uintptr_t bias)
{
    const struct copy_fixup *f = arg;
    const struct image_program *p = f->p;
    image_elf_fill_copies(&p->elf, p->copy_src, mbias, bias);
    for (size_t i = 0; p->copy_lib && i < p->elf.ncopies; i++) {
        int k = p->copy_lib[i];
        if (k < 0) continue;
        const struct image_copy_src *ls = &p->priv.lib[k].src;
        memcpy((void *)(bias + p->elf.copies[i].off),
               (const void *)(f->img->libs[k].bias + (p->copy_def[i] - ls->mbias)),
               p->elf.copies[i].size);
    }
    if (f->vars) image_elf_bind_vars(&p->elf, bias, f->vars);
}

/* A copy of the program and of each of its private libraries (none for most programs): every
 * span reserved first (the copies point into each other), then each filled, the libraries'
 * constructors run before the program's, a library's after those it needs. */
static int make_set(struct image_program *p, struct rank_vars *vars, struct image *ret, char *err,
                    size_t errlen)
{
    size_t n = p->priv.n;
    struct image_copy_peer peers[IMAGE_PRIVATE_MAX + 1];
    if (n && !(ret->libs = calloc(n, sizeof *ret->libs))) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    ret->nlibs = n;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = image_copy_reserve(&p->priv.lib[i].src, &ret->libs[i], err, errlen);
        ret->libs[i].finished = 1; /* until its constructors ran */
        peers[i] = (struct image_copy_peer){&p->priv.lib[i].src, ret->libs[i].bias};
    }
    if (rc == 0) rc = image_copy_reserve(&p->src, &ret->copy, err, errlen);
    ret->copy.finished = 1;
    peers[n] = (struct image_copy_peer){&p->src, ret->copy.bias};
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct copy_fixup lf = {.p = p, .img = ret, .lib = i};
        rc = image_copy_fill(&ret->libs[i], p->priv.lib[i].tmpl_fd, peers, n + 1, lib_fixup, &lf,
                             err, errlen);
    }
    struct copy_fixup f = {.p = p, .vars = vars, .img = ret};
    if (rc == 0)
        rc = image_copy_fill(&ret->copy, p->tmpl_fd, peers, n + 1, copy_fixup, &f, err, errlen);
    if (rc < 0) {
        image_unload(ret);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        ret->libs[i].finished = 0;
        image_copy_init(&ret->libs[i]);
    }
    ret->copy.finished = 0;
    image_copy_init(&ret->copy);
    return 0;
}

int image_program_load(struct image_program *p, const char *label, struct rank_vars *vars,
                       struct image *ret, char *err, size_t errlen)
{
    if (!p->src.master)
        return load_dlopen(p->bytes, p->size, &p->elf, label, p->tmpl_fd, vars, ret, err, errlen);
    *ret = (struct image){.fd = -1};
    int rc = make_set(p, vars, ret, err, errlen);
    if (rc < 0) return rc;
    *(void **)&ret->main = (void *)(ret->copy.bias + p->main_off);
    ret->shared = 1;
    ret->creates_threads = p->creates_threads;
    return 0;
}

void image_program_loaded(struct image_program *p)
{
    image_private_loaded(&p->priv);
    if (p->src.master) image_copy_sort_unwind();
    if (p->tmpl_fd >= 0) close(p->tmpl_fd);
    p->tmpl_fd = -1;
}

void image_program_close(struct image_program *p)
{
    image_program_loaded(p);
    image_copy_src_close(&p->src);
    image_private_close(&p->priv);
    free(p->copy_lib);
    free(p->copy_def);
    p->copy_lib = NULL;
    p->copy_def = NULL;
    image_elf_free(&p->elf);
    free(p->copy_src);
    p->copy_src = NULL;
    free(p->own_bytes);
    p->own_bytes = NULL;
}
