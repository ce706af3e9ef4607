/* module_check.c — tell a TMPI program from other files by its ELF header, its marker section
 * and its needed libraries, trusting nothing in it.
 *
 * We read the ELF header, the section header table and the section-name string table with
 * pread and check every offset and size against the file size before using it, so a crafted
 * file can make us neither read out of bounds nor allocate more than the file is long.  The
 * dynamic section and the names it points at are read piecewise into fixed buffers.
 */
#include "module_check.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "module_marker.h"

/* A program's section table is small; a larger one is not something tmpicc produced. */
#define MODULE_MAX_SECTIONS 65536u
/* Likewise for the section-name table. */
#define MODULE_MAX_SHSTRTAB (1u << 20)

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define HOST_ELFDATA ELFDATA2LSB
#else
#define HOST_ELFDATA ELFDATA2MSB
#endif

/* Read exactly len bytes at off: 0, -ENOEXEC when the file is shorter, or -errno. */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t r = pread(fd, p, len, (off_t)off);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (r == 0) return -ENOEXEC;
        p += r;
        len -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* Does [off, off+len) lie inside a file of size fsize?  Written to avoid overflow. */
static bool in_file(uint64_t off, uint64_t len, uint64_t fsize)
{
    return off <= fsize && len <= fsize - off;
}

/* Number of sections and index of the name table, honouring the ELF extended numbering
 * (e_shnum == 0 / e_shstrndx == SHN_XINDEX put the real values into section 0). */
static int section_counts(int fd, const Elf64_Ehdr *eh, uint64_t fsize, uint64_t *ret_n,
                          uint64_t *ret_strndx)
{
    uint64_t n = eh->e_shnum, strndx = eh->e_shstrndx;
    if (n == 0 || strndx == SHN_XINDEX) {
        Elf64_Shdr sh0;
        if (!in_file(eh->e_shoff, sizeof sh0, fsize)) return -ENOEXEC;
        int r = read_at(fd, &sh0, sizeof sh0, eh->e_shoff);
        if (r < 0) return r;
        if (n == 0) n = sh0.sh_size;
        if (strndx == SHN_XINDEX) strndx = sh0.sh_link;
    }
    if (n == 0 || n > MODULE_MAX_SECTIONS || strndx >= n) return -ENOEXEC;
    *ret_n = n;
    *ret_strndx = strndx;
    return 0;
}

/* Is the section described by sh the marker, i.e. do its contents start with the magic?
 * 1 yes, 0 no, or -errno. */
static int section_has_magic(int fd, const Elf64_Shdr *sh, uint64_t fsize)
{
    const size_t mlen = sizeof TMPI_MODULE_MAGIC - 1;
    char buf[sizeof TMPI_MODULE_MAGIC];
    if (sh->sh_type == SHT_NOBITS || sh->sh_size < mlen || !in_file(sh->sh_offset, mlen, fsize))
        return 0;
    int r = read_at(fd, buf, mlen, sh->sh_offset);
    if (r == -ENOEXEC) return 0;
    if (r < 0) return r;
    return memcmp(buf, TMPI_MODULE_MAGIC, mlen) == 0;
}

/* What the needed libraries say: whether one is libtmpi, and the first of another MPI. */
struct needed_seen {
    bool tmpi;
    bool other;
    char other_name[MODULE_NEEDED_NAME_MAX + 1];
};

/* Reads the name at off in the string table strsh into buf: 1 when it fits (NUL-terminated
 * within MODULE_NEEDED_NAME_MAX bytes and the table), 0 when it does not, or -errno. */
static int read_needed_name(int fd, const Elf64_Shdr *strsh, uint64_t off, char *buf)
{
    if (off >= strsh->sh_size) return 0;
    uint64_t left = strsh->sh_size - off;
    size_t len = left < MODULE_NEEDED_NAME_MAX + 1 ? (size_t)left : MODULE_NEEDED_NAME_MAX + 1;
    int r = read_at(fd, buf, len, strsh->sh_offset + off);
    if (r == -ENOEXEC) return 0;
    if (r < 0) return r;
    return memchr(buf, '\0', len) != NULL;
}

/* Walks the DT_NEEDED entries of the dynamic section dyn (its string table strsh, already
 * checked to lie in the file) until DT_NULL or the section's end. */
static int scan_needed(int fd, const Elf64_Shdr *dyn, const Elf64_Shdr *strsh, uint64_t fsize,
                       struct needed_seen *seen)
{
    /* Entries are read this many at a time: a dynamic section has a few dozen. */
    enum { CHUNK = 64 };
    Elf64_Dyn ent[CHUNK];
    char name[MODULE_NEEDED_NAME_MAX + 1];
    uint64_t n = dyn->sh_size / sizeof(Elf64_Dyn);
    if (!in_file(dyn->sh_offset, n * sizeof(Elf64_Dyn), fsize)) return 0;
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t k = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        int r = read_at(fd, ent, k * sizeof ent[0], dyn->sh_offset + i * sizeof(Elf64_Dyn));
        if (r < 0) return r == -ENOEXEC ? 0 : r;
        for (size_t j = 0; j < k; j++) {
            if (ent[j].d_tag == DT_NULL) return 0;
            if (ent[j].d_tag != DT_NEEDED) continue;
            r = read_needed_name(fd, strsh, ent[j].d_un.d_val, name);
            if (r < 0) return r;
            if (r == 0) continue;
            if (tmpi_lib_is_tmpi(name)) seen->tmpi = true;
            if (!seen->other && tmpi_lib_is_other_mpi(name)) {
                seen->other = true;
                memcpy(seen->other_name, name, sizeof name);
            }
        }
    }
    return 0;
}

/* The dynamic section's string table, if the link is sound: NULL otherwise. */
static const Elf64_Shdr *dynamic_strtab(const Elf64_Shdr *sh, uint64_t nsec, uint64_t i,
                                        uint64_t fsize)
{
    uint64_t link = sh[i].sh_link;
    if (link >= nsec) return NULL;
    const Elf64_Shdr *s = &sh[link];
    if (s->sh_type != SHT_STRTAB || s->sh_size == 0 || !in_file(s->sh_offset, s->sh_size, fsize))
        return NULL;
    return s;
}

int module_check_fd(int fd, struct module_verdict *ret)
{
    ret->kind = MODULE_NOT_TMPI;
    ret->lib[0] = '\0';
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    if (!S_ISREG(st.st_mode)) return 0;
    uint64_t fsize = (uint64_t)st.st_size;

    Elf64_Ehdr eh;
    if (!in_file(0, sizeof eh, fsize)) return 0;
    int r = read_at(fd, &eh, sizeof eh, 0);
    if (r < 0) return r == -ENOEXEC ? 0 : r;
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != HOST_ELFDATA || (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff == 0)
        return 0;

    uint64_t nsec, strndx;
    r = section_counts(fd, &eh, fsize, &nsec, &strndx);
    if (r < 0) return r == -ENOEXEC ? 0 : r;
    if (!in_file(eh.e_shoff, nsec * sizeof(Elf64_Shdr), fsize)) return 0;

    Elf64_Shdr *sh = malloc(nsec * sizeof *sh);
    char *names = NULL;
    if (!sh) return -ENOMEM;
    r = read_at(fd, sh, nsec * sizeof *sh, eh.e_shoff);
    if (r < 0) goto out;

    const Elf64_Shdr *strsh = &sh[strndx];
    r = -ENOEXEC;
    if (strsh->sh_type != SHT_STRTAB || strsh->sh_size == 0 ||
        strsh->sh_size > MODULE_MAX_SHSTRTAB || !in_file(strsh->sh_offset, strsh->sh_size, fsize))
        goto out;
    names = malloc(strsh->sh_size);
    if (!names) {
        r = -ENOMEM;
        goto out;
    }
    r = read_at(fd, names, strsh->sh_size, strsh->sh_offset);
    if (r < 0) goto out;

    const size_t want = sizeof TMPI_MODULE_SECTION; /* including the terminating NUL */
    bool marker = false, dynamic_seen = false;
    struct needed_seen seen = {0};
    for (uint64_t i = 0; i < nsec && r >= 0; i++) {
        uint64_t name = sh[i].sh_name;
        if (sh[i].sh_type == SHT_DYNAMIC && !dynamic_seen) {
            dynamic_seen = true;
            const Elf64_Shdr *dstr = dynamic_strtab(sh, nsec, i, fsize);
            r = dstr ? scan_needed(fd, &sh[i], dstr, fsize, &seen) : 0;
            continue;
        }
        /* The name plus its NUL must lie inside the table; memcmp then cannot overrun. */
        if (marker || name >= strsh->sh_size || strsh->sh_size - name < want) continue;
        if (memcmp(names + name, TMPI_MODULE_SECTION, want) != 0) continue;
        r = section_has_magic(fd, &sh[i], fsize);
        marker = r > 0;
    }
    if (r < 0) goto out;
    r = 0;
    if (seen.other) {
        ret->kind = MODULE_OTHER_MPI;
        memcpy(ret->lib, seen.other_name, sizeof ret->lib);
    } else if (!marker && !seen.tmpi) {
        ret->kind = MODULE_NOT_TMPI;
    } else {
        ret->kind = eh.e_type == ET_EXEC ? MODULE_NOT_PIE : MODULE_TMPI;
    }
out:
    free(names);
    free(sh);
    /* A file that ends early or whose tables do not hold together is simply not a program. */
    return r == -ENOEXEC ? 0 : r;
}
