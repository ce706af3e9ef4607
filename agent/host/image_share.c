#include "image_share.h"

#include "memfd_bytes.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

int image_template_open(const uint8_t *bytes, size_t size, const char *label)
{
    return memfd_from_bytes(label, bytes, size);
}

/* The program headers of the image, bounds-checked against its size (dlopen accepted the
 * image, but it may have read them differently from a malformed file). */
static const Elf64_Phdr *phdrs(const uint8_t *b, size_t size, unsigned *ret_n)
{
    const Elf64_Ehdr *eh = (const void *)b;
    if (size < sizeof *eh || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > size ||
        (size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
        return NULL;
    *ret_n = eh->e_phnum;
    return (const void *)(b + eh->e_phoff);
}

/* Maps [start, start + len) of the copy from the template at off, in one step: the template
 * is mapped elsewhere first and moved over the copy's pages by mremap, which leaves the old
 * mapping in place when it fails (mmap with MAP_FIXED would have removed it first). */
static int map_from_template(uintptr_t start, size_t len, int prot, int tmpl_fd, off_t off)
{
    void *tmp = mmap(NULL, len, prot, MAP_PRIVATE, tmpl_fd, off);
    if (tmp == MAP_FAILED) return -errno;
    if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) == MAP_FAILED) {
        int r = -errno;
        munmap(tmp, len);
        return r;
    }
    return 0;
}

/* Writes every page of [start, end) back with its own first byte, so that each is the copy's
 * private page and no longer reads through to the memfd (copy-on-write).  Nothing else runs
 * the copy's code or touches its data while it is being loaded.  Not instrumented: a page's
 * first byte may lie in the red zone AddressSanitizer keeps between an instrumented
 * program's globals, and rewriting it with its own value is no access of a global. */
__attribute__((no_sanitize_address)) static void own_pages(uintptr_t start, uintptr_t end,
                                                           size_t pg)
{
    for (uintptr_t p = start; p < end; p += pg) {
        volatile uint8_t *q = (volatile uint8_t *)p;
        *q = *q;
    }
}

int image_share(void *handle, const uint8_t *bytes, size_t size, int tmpl_fd, int own_fd)
{
    struct link_map *lm = NULL;
    unsigned n = 0;
    const Elf64_Phdr *ph = phdrs(bytes, size, &n);
    if (!ph || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm) return -ENOEXEC;
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), mask = ~(pg - 1);
    const uintptr_t bias = (uintptr_t)lm->l_addr;
    for (unsigned i = 0; i < n; i++) {
        const Elf64_Phdr *p = &ph[i];
        if (p->p_type != PT_LOAD) continue;
        if (p->p_offset > size || p->p_filesz > size - p->p_offset ||
            (p->p_vaddr & (pg - 1)) != (p->p_offset & (pg - 1)))
            return -ENOEXEC;
        /* A read-only segment with zero-filled tail pages would need pages of its own, and
         * would keep reading the copy's memfd. */
        if (!(p->p_flags & PF_W) && p->p_memsz != p->p_filesz) return -ENOTSUP;
    }

    int r = 0;
    for (unsigned i = 0; i < n && r == 0; i++) {
        const Elf64_Phdr *p = &ph[i];
        if (p->p_type != PT_LOAD || (p->p_flags & PF_W) || p->p_filesz == 0) continue;
        uintptr_t start = (bias + p->p_vaddr) & mask;
        uintptr_t end = (bias + p->p_vaddr + p->p_filesz + pg - 1) & mask;
        int prot = ((p->p_flags & PF_R) ? PROT_READ : 0) | ((p->p_flags & PF_X) ? PROT_EXEC : 0);
        r = map_from_template(start, end - start, prot, tmpl_fd, (off_t)(p->p_offset & mask));
    }
    /* Those moved so far read the template: still one copy of the program, just fewer shared
     * pages; the memfd keeps its pages for the segments that were not moved. */
    if (r < 0) return r;

    /* The RELRO part of the writable segment is read-only by now; it is opened for the
     * moment its pages are taken over. */
    uintptr_t relro_start = 0, relro_end = 0;
    for (unsigned i = 0; i < n; i++)
        if (ph[i].p_type == PT_GNU_RELRO) {
            relro_start = (bias + ph[i].p_vaddr) & mask;
            relro_end = (bias + ph[i].p_vaddr + ph[i].p_memsz) & mask;
        }
    if (relro_end > relro_start &&
        mprotect((void *)relro_start, relro_end - relro_start, PROT_READ | PROT_WRITE) < 0)
        return -errno;
    for (unsigned i = 0; i < n; i++) {
        const Elf64_Phdr *p = &ph[i];
        if (p->p_type != PT_LOAD || !(p->p_flags & PF_W) || p->p_filesz == 0) continue;
        own_pages((bias + p->p_vaddr) & mask, bias + p->p_vaddr + p->p_filesz, pg);
    }
    if (relro_end > relro_start &&
        mprotect((void *)relro_start, relro_end - relro_start, PROT_READ) < 0)
        return -errno;

    /* Nothing reads the copy's memfd any more: it keeps its name (loader.h), not its pages.
     * A hole, not a truncation: truncating would also drop the private copies just made.  It
     * covers the last page whole, or that page would only be zeroed, not freed. */
    off_t hole = (off_t)((size + pg - 1) & mask);
    if (fallocate(own_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, hole) < 0) return -errno;
    return 0;
}
