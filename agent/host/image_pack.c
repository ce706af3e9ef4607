/* image_pack.c — a copy's segments in as few memory maps as its layout allows (image_pack.h). */
#include "image_pack.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The page-aligned span [lo, hi) of the read-only segments and the one distance between
 * their file offsets and addresses; -ENOTSUP when they have several, when a writable segment
 * lies inside the span, or when a read-only one has zero-filled pages (they would read the
 * file's next bytes instead). */
static int ro_span(const struct image_copy_src *s, uintptr_t pg, uintptr_t *lo, uintptr_t *hi,
                   uintptr_t *delta)
{
    const uintptr_t mask = ~(pg - 1);
    int any = 0;
    for (unsigned i = 0; i < s->nseg; i++) {
        const struct image_copy_seg *g = &s->seg[i];
        if ((g->prot & PROT_WRITE) || g->filesz == 0) continue;
        if (g->memsz != g->filesz) return -ENOTSUP;
        uintptr_t d = g->vaddr - (uintptr_t)g->off;
        uintptr_t a = g->vaddr & mask, b = (g->vaddr + g->filesz + pg - 1) & mask;
        if (!any) {
            *lo = a, *hi = b, *delta = d, any = 1;
            continue;
        }
        if (d != *delta) return -ENOTSUP;
        if (a < *lo) *lo = a;
        if (b > *hi) *hi = b;
    }
    if (!any || *lo < *delta) return -ENOTSUP;
    for (unsigned i = 0; i < s->nseg; i++) {
        const struct image_copy_seg *g = &s->seg[i];
        if (!(g->prot & PROT_WRITE)) continue;
        uintptr_t a = g->vaddr & mask, b = (g->vaddr + g->memsz + pg - 1) & mask;
        if (a < *hi && b > *lo) return -ENOTSUP;
    }
    return 0;
}

/* Reads len bytes of the template at off to p (pread may return short).  The system call
 * itself, not libc's pread: AddressSanitizer's wrapper checks the destination against its
 * shadow, which may still hold a freed copy's poison at these addresses (image_copy.c,
 * relocate). */
static int read_at(int fd, void *p, size_t len, off_t off)
{
    while (len > 0) {
        ssize_t n = syscall(SYS_pread64, fd, p, len, off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) return -ENOEXEC; /* the template is shorter than its headers say */
        p = (char *)p + n, len -= (size_t)n, off += n;
    }
    return 0;
}

/* One writable segment: anonymous pages over its whole extent, the file's bytes from the
 * segment's first page (as a file mapping would show them) to the end of its file part. */
static int map_rw(const struct image_copy_seg *g, uintptr_t bias, int tmpl_fd, uintptr_t pg)
{
    const uintptr_t mask = ~(pg - 1);
    uintptr_t start = (bias + g->vaddr) & mask;
    uintptr_t end = (bias + g->vaddr + g->memsz + pg - 1) & mask;
    if (end > start && mmap((void *)start, end - start, g->prot,
                            MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
        return -errno;
    if (g->filesz == 0) return 0;
    size_t head = (size_t)(g->vaddr & (pg - 1));
    return read_at(tmpl_fd, (void *)start, head + g->filesz, (off_t)(g->off - head));
}

int image_pack_map(const struct image_copy_src *src, uintptr_t bias, int tmpl_fd)
{
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = 0, hi = 0, delta = 0;
    int rc = ro_span(src, pg, &lo, &hi, &delta);
    if (rc < 0) return rc;
    int prot = 0;
    for (unsigned i = 0; i < src->nseg; i++)
        if (!(src->seg[i].prot & PROT_WRITE)) prot |= src->seg[i].prot;
    if (mmap((void *)(bias + lo), hi - lo, prot, MAP_PRIVATE | MAP_FIXED, tmpl_fd,
             (off_t)(lo - delta)) == MAP_FAILED)
        return -errno;
    for (unsigned i = 0; i < src->nseg; i++) {
        const struct image_copy_seg *g = &src->seg[i];
        if (!(g->prot & PROT_WRITE)) continue;
        if ((rc = map_rw(g, bias, tmpl_fd, pg)) < 0) return rc;
    }
    return 0;
}
