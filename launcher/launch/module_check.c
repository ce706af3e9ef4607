/* module_check.c — find the TMPI marker section in an ELF64 file, trusting nothing in it.
 *
 * We read the ELF header, the section header table and the section-name string table with
 * pread and check every offset and size against the file size before using it, so a crafted
 * file can make us neither read out of bounds nor allocate more than the file is long.
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

/* A module's section table is small; a larger one is not something tmpicc produced. */
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

/* Is the section described by sh the marker, i.e. do its contents start with the magic? */
static int section_has_magic(int fd, const Elf64_Shdr *sh, uint64_t fsize)
{
    const size_t mlen = sizeof TMPI_MODULE_MAGIC - 1;
    char buf[sizeof TMPI_MODULE_MAGIC];
    if (sh->sh_type == SHT_NOBITS || sh->sh_size < mlen || !in_file(sh->sh_offset, mlen, fsize))
        return -ENOEXEC;
    int r = read_at(fd, buf, mlen, sh->sh_offset);
    if (r < 0) return r;
    return memcmp(buf, TMPI_MODULE_MAGIC, mlen) == 0 ? 0 : -ENOEXEC;
}

int module_check_fd(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    if (!S_ISREG(st.st_mode)) return -ENOEXEC;
    uint64_t fsize = (uint64_t)st.st_size;

    Elf64_Ehdr eh;
    if (!in_file(0, sizeof eh, fsize)) return -ENOEXEC;
    int r = read_at(fd, &eh, sizeof eh, 0);
    if (r < 0) return r;
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != HOST_ELFDATA || eh.e_type != ET_DYN ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff == 0)
        return -ENOEXEC;

    uint64_t nsec, strndx;
    r = section_counts(fd, &eh, fsize, &nsec, &strndx);
    if (r < 0) return r;
    if (!in_file(eh.e_shoff, nsec * sizeof(Elf64_Shdr), fsize)) return -ENOEXEC;

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
    r = -ENOEXEC;
    for (uint64_t i = 0; i < nsec; i++) {
        uint64_t name = sh[i].sh_name;
        /* The name plus its NUL must lie inside the table; memcmp then cannot overrun. */
        if (name >= strsh->sh_size || strsh->sh_size - name < want) continue;
        if (memcmp(names + name, TMPI_MODULE_SECTION, want) != 0) continue;
        r = section_has_magic(fd, &sh[i], fsize);
        break;
    }
out:
    free(names);
    free(sh);
    return r;
}
