#include "image_copy.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dl_lock.h"
#include "image_pack.h"

/* libgcc's registry of unwind tables for code the dynamic loader does not know (the JIT
 * interface); declared here because no public header has it. */
void __register_frame(void *begin);
void __deregister_frame(void *begin);
struct dwarf_eh_bases {
    void *tbase, *dbase, *func;
};
const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

/* ld.so passes constructors the process's arguments and environment; so do we.  Set once by
 * our own constructor, before any thread, and only read afterwards. */
static struct {
    int argc;
    char **argv;
    char **envp;
} proc_args;

__attribute__((constructor)) static void proc_args_keep(int argc, char **argv, char **envp)
{
    proc_args.argc = argc;
    proc_args.argv = argv;
    proc_args.envp = envp;
}

/* The eh_frame_hdr's encoding of its pointer to .eh_frame as linkers write it (DWARF's
 * DW_EH_PE_pcrel | DW_EH_PE_sdata4). */
#define EH_PE_PCREL_SDATA4 0x1b

/* A dynamic tag ld.so ignores: the master's constructor and destructor entries become it. */
#define TAG_IGNORED DT_LOOS

/* The file bytes of [vaddr, vaddr + len) of the image, or NULL when no loadable segment's
 * file part holds them all. */
static const void *file_at(const struct image_copy_src *s, const uint8_t *b, size_t size,
                           uintptr_t vaddr, size_t len)
{
    for (unsigned i = 0; i < s->nseg; i++) {
        const struct image_copy_seg *g = &s->seg[i];
        if (vaddr < g->vaddr || vaddr - g->vaddr > g->filesz ||
            len > g->filesz - (vaddr - g->vaddr))
            continue;
        uint64_t off = g->off + (vaddr - g->vaddr);
        return off <= size && len <= size - off ? b + off : NULL;
    }
    return NULL;
}

/* Whether [vaddr, vaddr + 8) lies in a writable segment. */
static int writable_word(const struct image_copy_src *s, uintptr_t vaddr)
{
    for (unsigned i = 0; i < s->nseg; i++) {
        const struct image_copy_seg *g = &s->seg[i];
        if ((g->prot & PROT_WRITE) && vaddr >= g->vaddr && g->memsz >= 8 &&
            vaddr - g->vaddr <= g->memsz - 8)
            return 1;
    }
    return 0;
}

static int refuse(char *err, size_t errlen, int rc, const char *why)
{
    snprintf(err, errlen, "%s", why);
    return rc;
}

/* The program and RELRO headers: segments, span, TLS. */
static int read_phdrs(struct image_copy_src *s, const uint8_t *b, size_t size, unsigned flags,
                      const Elf64_Phdr **ret_dyn, const Elf64_Phdr **ret_ehf, char *err,
                      size_t errlen)
{
    const Elf64_Ehdr *eh = (const void *)b;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_DYN || eh->e_machine != EM_X86_64 ||
        eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > size ||
        (size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
        return refuse(err, errlen, -ENOTSUP, "not an x86-64 ELF shared object");
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), mask = ~(pg - 1);
    const Elf64_Phdr *ph = (const void *)(b + eh->e_phoff);
    s->lo = UINTPTR_MAX;
    s->hi = 0;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *p = &ph[i];
        if (p->p_type == PT_TLS && !(flags & IMAGE_COPY_SHARED_TLS))
            return refuse(err, errlen, -ENOTSUP, "it has thread-local variables");
        /* an initial image would be the master's, words pointing into it included */
        if (p->p_type == PT_TLS && p->p_filesz != 0)
            return refuse(err, errlen, -ENOTSUP, "it has initialised thread-local variables");
        if (p->p_type == PT_TLS) s->shared_tls = 1;
        if (p->p_type == PT_DYNAMIC) *ret_dyn = p;
        if (p->p_type == PT_GNU_EH_FRAME) *ret_ehf = p;
        if (p->p_type == PT_GNU_RELRO) {
            s->relro_lo = p->p_vaddr & mask;
            s->relro_hi = (p->p_vaddr + p->p_memsz) & mask;
        }
        if (p->p_type != PT_LOAD) continue;
        if (s->nseg == IMAGE_COPY_MAX_SEGS)
            return refuse(err, errlen, -ENOTSUP, "too many loadable segments");
        if (p->p_offset > size || p->p_filesz > size - p->p_offset || p->p_filesz > p->p_memsz ||
            p->p_memsz > (uintptr_t)1 << 40 || p->p_vaddr > (uintptr_t)1 << 40 ||
            (p->p_vaddr & (pg - 1)) != (p->p_offset & (pg - 1)))
            return refuse(err, errlen, -ENOTSUP, "a malformed loadable segment");
        s->seg[s->nseg++] = (struct image_copy_seg){
            .vaddr = p->p_vaddr,
            .filesz = p->p_filesz,
            .memsz = p->p_memsz,
            .off = p->p_offset,
            .prot = ((p->p_flags & PF_R) ? PROT_READ : 0) | ((p->p_flags & PF_W) ? PROT_WRITE : 0) |
                    ((p->p_flags & PF_X) ? PROT_EXEC : 0),
        };
        if ((p->p_vaddr & mask) < s->lo) s->lo = p->p_vaddr & mask;
        if (((p->p_vaddr + p->p_memsz + pg - 1) & mask) > s->hi)
            s->hi = (p->p_vaddr + p->p_memsz + pg - 1) & mask;
    }
    if (s->nseg == 0 || !*ret_dyn) return refuse(err, errlen, -ENOTSUP, "no dynamic section");
    const Elf64_Phdr *d = *ret_dyn;
    if (d->p_offset > size || d->p_filesz > size - d->p_offset)
        return refuse(err, errlen, -ENOTSUP, "a malformed dynamic section");
    return 0;
}

/* Records the relocated words of one RELA table; refuses kinds a copy cannot take over. */
static int read_rela(struct image_copy_src *s, const uint8_t *b, size_t size, uintptr_t vaddr,
                     size_t len, size_t *cap, char *err, size_t errlen)
{
    if (len == 0) return 0;
    const Elf64_Rela *r = file_at(s, b, size, vaddr, len);
    if (!r || len % sizeof *r) return refuse(err, errlen, -ENOTSUP, "a malformed relocation table");
    for (size_t i = 0; i < len / sizeof *r; i++) {
        unsigned type = ELF64_R_TYPE(r[i].r_info);
        /* copy relocations (an executable's) are the caller's: image_copy_make's fixup */
        if (type == R_X86_64_NONE || type == R_X86_64_COPY) continue;
        /* a module id and an offset in it: copied as the master holds them, they never point
         * into the master, so every copy reaches the master's TLS module */
        int tls = s->shared_tls && (type == R_X86_64_DTPMOD64 || type == R_X86_64_DTPOFF64);
        if (!tls && type != R_X86_64_RELATIVE && type != R_X86_64_GLOB_DAT &&
            type != R_X86_64_JUMP_SLOT && type != R_X86_64_64 && type != R_X86_64_IRELATIVE) {
            snprintf(err, errlen, "relocation type %u", type);
            return -ENOTSUP;
        }
        if (!writable_word(s, r[i].r_offset))
            return refuse(err, errlen, -ENOTSUP, "a relocation outside its writable segment");
        if (s->nslots == *cap) {
            size_t ncap = *cap ? *cap * 2 : 64;
            uintptr_t *n = realloc(s->slots, ncap * sizeof *n);
            if (!n) return refuse(err, errlen, -ENOMEM, "out of memory");
            s->slots = n;
            *cap = ncap;
        }
        s->slots[s->nslots++] = r[i].r_offset;
    }
    return 0;
}

/* Reads the dynamic section (relocations, constructors, destructors) and turns the master's
 * constructor and destructor entries in mbytes into TAG_IGNORED. */
static int read_dynamic(struct image_copy_src *s, const uint8_t *b, size_t size, uint8_t *mbytes,
                        const Elf64_Phdr *dp, char *err, size_t errlen)
{
    Elf64_Dyn *md = (Elf64_Dyn *)(mbytes + dp->p_offset);
    const Elf64_Dyn *d = (const void *)(b + dp->p_offset);
    size_t n = dp->p_filesz / sizeof *d;
    uintptr_t rela = 0, relasz = 0, jmprel = 0, pltrelsz = 0;
    for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
        uintptr_t v = d[i].d_un.d_val;
        switch (d[i].d_tag) {
        case DT_RELA:
            rela = v;
            break;
        case DT_RELASZ:
            relasz = v;
            break;
        case DT_JMPREL:
            jmprel = v;
            break;
        case DT_PLTRELSZ:
            pltrelsz = v;
            break;
        case DT_PLTREL:
            if (v != DT_RELA) return refuse(err, errlen, -ENOTSUP, "REL relocations");
            break;
        case DT_REL:
        case DT_RELR:
            return refuse(err, errlen, -ENOTSUP, "REL or RELR relocations");
        case DT_TEXTREL:
            return refuse(err, errlen, -ENOTSUP, "text relocations");
        case DT_FLAGS:
            if (v & (DF_TEXTREL | DF_STATIC_TLS))
                return refuse(err, errlen, -ENOTSUP, "text relocations or static TLS");
            break;
        case DT_INIT:
            s->init = v;
            break;
        case DT_FINI:
            s->fini = v;
            break;
        case DT_INIT_ARRAY:
            s->init_array = v;
            break;
        case DT_FINI_ARRAY:
            s->fini_array = v;
            break;
        case DT_INIT_ARRAYSZ:
            s->ninit = v / sizeof(uintptr_t);
            break;
        case DT_FINI_ARRAYSZ:
            s->nfini = v / sizeof(uintptr_t);
            break;
        default:
            break;
        }
        switch (d[i].d_tag) {
        case DT_INIT:
        case DT_FINI:
        case DT_INIT_ARRAY:
        case DT_FINI_ARRAY:
        case DT_PREINIT_ARRAY:
            md[i].d_tag = TAG_IGNORED;
            break;
        default:
            break;
        }
    }
    if ((s->ninit && !writable_word(s, s->init_array + (s->ninit - 1) * sizeof(uintptr_t))) ||
        (s->nfini && !writable_word(s, s->fini_array + (s->nfini - 1) * sizeof(uintptr_t))))
        return refuse(err, errlen, -ENOTSUP, "a malformed constructor table");
    size_t cap = 0;
    int rc = read_rela(s, b, size, rela, relasz, &cap, err, errlen);
    if (rc == 0) rc = read_rela(s, b, size, jmprel, pltrelsz, &cap, err, errlen);
    return rc;
}

/* .eh_frame's address, from the eh_frame_hdr's pointer to it (as linkers write it:
 * pc-relative, signed 4 bytes). */
static int read_eh_frame(struct image_copy_src *s, const uint8_t *b, size_t size,
                         const Elf64_Phdr *ehf, char *err, size_t errlen)
{
    if (!ehf) return 0;
    const uint8_t *h = file_at(s, b, size, ehf->p_vaddr, 8);
    if (!h || h[0] != 1 || h[1] != EH_PE_PCREL_SDATA4)
        return refuse(err, errlen, -ENOTSUP, "an unusual .eh_frame_hdr");
    int32_t rel;
    memcpy(&rel, h + 4, sizeof rel);
    s->eh_frame = ehf->p_vaddr + 4 + (uintptr_t)(intptr_t)rel;
    return 0;
}

static int open_master(struct image_copy_src *s, const uint8_t *mbytes, size_t size,
                       const char *label, char *err, size_t errlen)
{
    void *h = NULL;
    int fd = dl_open_bytes(mbytes, size, label, &h, err, errlen);
    if (fd < 0) return fd;
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
        snprintf(err, errlen, "no link map for the loaded program");
        dl_close(h);
        close(fd);
        return -ENOEXEC;
    }
    s->master = h;
    s->master_fd = fd;
    s->mbias = (uintptr_t)lm->l_addr;
    return 0;
}

int image_copy_src_open(struct image_copy_src *src, const uint8_t *bytes, size_t size,
                        const char *label, char *err, size_t errlen)
{
    return image_copy_src_open_flags(src, bytes, size, label, 0, err, errlen);
}

int image_copy_src_open_flags(struct image_copy_src *src, const uint8_t *bytes, size_t size,
                              const char *label, unsigned flags, char *err, size_t errlen)
{
    *src = (struct image_copy_src){.master_fd = -1};
    const Elf64_Phdr *dyn = NULL, *ehf = NULL;
    int rc = read_phdrs(src, bytes, size, flags, &dyn, &ehf, err, errlen);
    if (rc < 0) return rc;
    uint8_t *mbytes = malloc(size);
    if (!mbytes) return refuse(err, errlen, -ENOMEM, "out of memory");
    memcpy(mbytes, bytes, size);
    rc = read_dynamic(src, bytes, size, mbytes, dyn, err, errlen);
    if (rc == 0) rc = read_eh_frame(src, bytes, size, ehf, err, errlen);
    if (rc == 0) rc = open_master(src, mbytes, size, label, err, errlen);
    free(mbytes);
    if (rc < 0) {
        free(src->slots);
        *src = (struct image_copy_src){.master_fd = -1};
    }
    return rc;
}

void *image_copy_sym(const struct image_copy_src *src, uintptr_t bias, const char *name)
{
    uintptr_t p = (uintptr_t)dlsym(src->master, name);
    if (!p || p < src->mbias + src->lo || p >= src->mbias + src->hi) return NULL;
    return (void *)(p - src->mbias + bias);
}

/* Maps one segment of the copy: its file part from the template (private: the writable one's
 * pages become the copy's own when written), the rest zero-filled, as ld.so does. */
static int map_seg(const struct image_copy_seg *g, uintptr_t bias, int tmpl_fd, uintptr_t pg)
{
    const uintptr_t mask = ~(pg - 1);
    uintptr_t start = (bias + g->vaddr) & mask;
    uintptr_t fend = bias + g->vaddr + g->filesz, mend = bias + g->vaddr + g->memsz;
    uintptr_t fpend = (fend + pg - 1) & mask, mpend = (mend + pg - 1) & mask;
    if (g->filesz > 0 && mmap((void *)start, fpend - start, g->prot, MAP_PRIVATE | MAP_FIXED,
                              tmpl_fd, (off_t)(g->off & mask)) == MAP_FAILED)
        return -errno;
    if (g->memsz > g->filesz && (g->prot & PROT_WRITE) && fpend > fend && g->filesz > 0)
        memset((void *)fend, 0, (mend < fpend ? mend : fpend) - fend);
    uintptr_t astart = g->filesz > 0 ? fpend : start;
    if (mpend > astart && mmap((void *)astart, mpend - astart, g->prot,
                               MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
        return -errno;
    return 0;
}

/* Writes the master's relocated words into the copy, moved to the copy's base where they
 * point into the master (its span's end included: an end pointer), or to a peer copy's base
 * where they point into that peer's master.  Not instrumented: no global of the copy is
 * registered with AddressSanitizer yet, but its shadow may hold a freed copy's poison at the
 * same address. */
__attribute__((no_sanitize_address)) static void relocate(const struct image_copy_src *s,
                                                          uintptr_t bias,
                                                          const struct image_copy_peer *peers,
                                                          size_t npeers)
{
    const uintptr_t mlo = s->mbias + s->lo, mhi = s->mbias + s->hi;
    for (size_t i = 0; i < s->nslots; i++) {
        uint64_t v;
        memcpy(&v, (const void *)(s->mbias + s->slots[i]), sizeof v);
        if (v >= mlo && v <= mhi)
            v = v - s->mbias + bias;
        else
            for (size_t k = 0; k < npeers; k++) {
                const struct image_copy_src *ps = peers[k].src;
                if (v >= ps->mbias + ps->lo && v <= ps->mbias + ps->hi) {
                    v = v - ps->mbias + peers[k].bias;
                    break;
                }
            }
        memcpy((void *)(bias + s->slots[i]), &v, sizeof v);
    }
}

typedef void (*init_fn)(int, char **, char **);
typedef void (*fini_fn)(void);

/* Entries ld.so skips in constructor tables. */
static int callable(uintptr_t f)
{
    return f != 0 && f != (uintptr_t)-1;
}

static void run_init(const struct image_copy_src *s, uintptr_t bias)
{
    if (s->init) ((init_fn)(bias + s->init))(proc_args.argc, proc_args.argv, proc_args.envp);
    const uintptr_t *a = (const uintptr_t *)(bias + s->init_array);
    for (size_t i = 0; i < s->ninit; i++)
        if (callable(a[i])) ((init_fn)a[i])(proc_args.argc, proc_args.argv, proc_args.envp);
}

int image_copy_reserve(const struct image_copy_src *src, struct image_copy *ret, char *err,
                       size_t errlen)
{
    *ret = (struct image_copy){0};
    size_t len = src->hi - src->lo;
    /* The whole span first, so that the gaps between segments are ours and stay inaccessible,
     * as ld.so leaves them. */
    void *map = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        int rc = -errno;
        snprintf(err, errlen, "reserving %zu bytes for the copy: %s", len, strerror(-rc));
        return rc;
    }
    *ret =
        (struct image_copy){.src = src, .bias = (uintptr_t)map - src->lo, .map = map, .len = len};
    return 0;
}

int image_copy_fill(struct image_copy *c, int tmpl_fd, const struct image_copy_peer *peers,
                    size_t npeers, image_copy_fixup_fn fixup, void *arg, char *err, size_t errlen)
{
    const struct image_copy_src *src = c->src;
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    /* packed where the layout allows: a rank's maps count against vm.max_map_count */
    int packed = image_pack_map(src, c->bias, tmpl_fd);
    if (packed < 0 && packed != -ENOTSUP) {
        snprintf(err, errlen, "mapping the copy's segments: %s", strerror(-packed));
        return packed;
    }
    for (unsigned i = 0; packed < 0 && i < src->nseg; i++) {
        int rc = map_seg(&src->seg[i], c->bias, tmpl_fd, pg);
        if (rc < 0) {
            snprintf(err, errlen, "mapping a segment of the copy: %s", strerror(-rc));
            return rc;
        }
    }
    relocate(src, c->bias, peers, npeers);
    if (fixup) fixup(arg, src->mbias, c->bias);
    if (src->relro_hi > src->relro_lo &&
        mprotect((void *)(c->bias + src->relro_lo), src->relro_hi - src->relro_lo, PROT_READ) < 0) {
        int rc = -errno;
        snprintf(err, errlen, "protecting the copy's relocated data: %s", strerror(-rc));
        return rc;
    }
    if (src->eh_frame) {
        __register_frame((void *)(c->bias + src->eh_frame));
        c->registered = 1;
    }
    return 0;
}

void image_copy_init(struct image_copy *c)
{
    run_init(c->src, c->bias);
}

int image_copy_make(const struct image_copy_src *src, int tmpl_fd, image_copy_fixup_fn fixup,
                    void *arg, struct image_copy *ret, char *err, size_t errlen)
{
    int rc = image_copy_reserve(src, ret, err, errlen);
    if (rc == 0) rc = image_copy_fill(ret, tmpl_fd, NULL, 0, fixup, arg, err, errlen);
    if (rc < 0) {
        ret->finished = 1; /* never initialised: no destructor may run */
        image_copy_free(ret);
        return rc;
    }
    image_copy_init(ret);
    return 0;
}

void image_copy_sort_unwind(void)
{
    /* a pc in the agent, in no copy: the lookup goes through every registered table */
    struct dwarf_eh_bases bases;
    (void)_Unwind_Find_FDE((void *)(uintptr_t)image_copy_sort_unwind, &bases);
}

void image_copy_finish(struct image_copy *c)
{
    if (!c->src || c->finished) return;
    c->finished = 1;
    const struct image_copy_src *s = c->src;
    const uintptr_t *a = (const uintptr_t *)(c->bias + s->fini_array);
    for (size_t i = s->nfini; i-- > 0;)
        if (callable(a[i])) ((fini_fn)a[i])();
    if (s->fini) ((fini_fn)(c->bias + s->fini))();
}

void image_copy_free(struct image_copy *c)
{
    if (!c->src) return;
    image_copy_finish(c);
    if (c->registered) __deregister_frame((void *)(c->bias + c->src->eh_frame));
    munmap(c->map, c->len);
    *c = (struct image_copy){0};
}

void image_copy_src_close(struct image_copy_src *src)
{
    if (src->master) dl_close(src->master);
    if (src->master_fd >= 0) close(src->master_fd);
    free(src->slots);
    *src = (struct image_copy_src){.master_fd = -1};
}
