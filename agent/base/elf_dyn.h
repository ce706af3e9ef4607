/* elf_dyn.h — the dynamic section of an x86-64 ELF object read from its file bytes: what the
 * agent needs to know of a program before a job host loads it (the sanitizer runtime it must
 * start with, sanitizer_rt.h), and the job host's loader (image_elf.h) reads the rest with.
 * Pure and bounds-checked: it reads the bytes and loads nothing. */
#ifndef TMPI_ELF_DYN_H
#define TMPI_ELF_DYN_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes being read: their headers, checked once by elf_view_open. */
struct elf_view {
    const uint8_t *b;
    size_t size;
    const Elf64_Ehdr *eh;
    const Elf64_Phdr *ph;
};

/* What the dynamic section says. */
struct elf_dyn {
    uintptr_t strtab, strsz, symtab, rela, relasz, jmprel, pltrelsz;
    uint64_t flags_1;
    const Elf64_Dyn *d; /* the section, n entries */
    size_t n;
};

/* Checks that b holds a 64-bit ELF header whose program headers lie within size bytes.
 * 0, or -ENOEXEC. */
int elf_view_open(struct elf_view *v, const uint8_t *b, size_t size);

/* The file bytes of [vaddr, vaddr + len), or NULL when no loadable segment's file part holds
 * them. */
const void *elf_at_vaddr(const struct elf_view *v, uintptr_t vaddr, size_t len);

/* A NUL-terminated string at offset off of a string table of strsz bytes at address str, or
 * NULL. */
const char *elf_str_at(const struct elf_view *v, uintptr_t str, size_t strsz, size_t off);

/* The PT_DYNAMIC segment's entries. 0, or -ENOEXEC when there is none or it lies outside. */
int elf_read_dyn(const struct elf_view *v, struct elf_dyn *ret);

/* The libraries a shared object or executable (ET_DYN) needs (DT_NEEDED), up to max names into
 * names (pointers into b), and its own DT_SONAME in *ret_soname (NULL when it has none).  The
 * count of names stored, or -ENOEXEC. */
int elf_needed(const uint8_t *b, size_t size, const char **names, size_t max,
               const char **ret_soname);

#endif
