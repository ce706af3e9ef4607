/* elf_dyn.c — the dynamic section of an ELF object from its file bytes (elf_dyn.h). */
#include "elf_dyn.h"

#include <errno.h>
#include <string.h>

int elf_view_open(struct elf_view *v, const uint8_t *b, size_t size)
{
    const Elf64_Ehdr *eh = (const void *)b;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        eh->e_phoff > size || (size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
        return -ENOEXEC;
    *v = (struct elf_view){.b = b, .size = size, .eh = eh, .ph = (const void *)(b + eh->e_phoff)};
    return 0;
}

const void *elf_at_vaddr(const struct elf_view *v, uintptr_t vaddr, size_t len)
{
    for (unsigned i = 0; i < v->eh->e_phnum; i++) {
        const Elf64_Phdr *p = &v->ph[i];
        if (p->p_type != PT_LOAD || vaddr < p->p_vaddr || vaddr - p->p_vaddr > p->p_filesz ||
            len > p->p_filesz - (vaddr - p->p_vaddr))
            continue;
        uint64_t off = p->p_offset + (vaddr - p->p_vaddr);
        return off <= v->size && len <= v->size - off ? v->b + off : NULL;
    }
    return NULL;
}

const char *elf_str_at(const struct elf_view *v, uintptr_t str, size_t strsz, size_t off)
{
    if (off >= strsz) return NULL;
    const char *s = elf_at_vaddr(v, str + off, 1);
    size_t left = strsz - off;
    if (!s || !elf_at_vaddr(v, str + off, left)) return NULL;
    return strnlen(s, left) < left ? s : NULL;
}

int elf_read_dyn(const struct elf_view *v, struct elf_dyn *ret)
{
    *ret = (struct elf_dyn){0};
    for (unsigned i = 0; i < v->eh->e_phnum; i++) {
        const Elf64_Phdr *p = &v->ph[i];
        if (p->p_type != PT_DYNAMIC) continue;
        if (p->p_offset > v->size || p->p_filesz > v->size - p->p_offset) return -ENOEXEC;
        ret->d = (const void *)(v->b + p->p_offset);
        ret->n = p->p_filesz / sizeof(Elf64_Dyn);
    }
    if (!ret->d) return -ENOEXEC;
    for (size_t i = 0; i < ret->n && ret->d[i].d_tag != DT_NULL; i++) {
        uintptr_t x = ret->d[i].d_un.d_val;
        switch (ret->d[i].d_tag) {
        case DT_STRTAB:
            ret->strtab = x;
            break;
        case DT_STRSZ:
            ret->strsz = x;
            break;
        case DT_SYMTAB:
            ret->symtab = x;
            break;
        case DT_RELA:
            ret->rela = x;
            break;
        case DT_RELASZ:
            ret->relasz = x;
            break;
        case DT_JMPREL:
            ret->jmprel = x;
            break;
        case DT_PLTRELSZ:
            ret->pltrelsz = x;
            break;
        case DT_FLAGS_1:
            ret->flags_1 = x;
            break;
        default:
            break;
        }
    }
    return 0;
}

int elf_needed(const uint8_t *b, size_t size, const char **names, size_t max,
               const char **ret_soname)
{
    *ret_soname = NULL;
    struct elf_view v;
    struct elf_dyn d;
    if (elf_view_open(&v, b, size) < 0 || v.eh->e_type != ET_DYN || elf_read_dyn(&v, &d) < 0)
        return -ENOEXEC;
    size_t n = 0;
    for (size_t i = 0; i < d.n && d.d[i].d_tag != DT_NULL; i++) {
        const char *name = elf_str_at(&v, d.strtab, d.strsz, d.d[i].d_un.d_val);
        if (!name) continue;
        if (d.d[i].d_tag == DT_SONAME) *ret_soname = name;
        if (d.d[i].d_tag == DT_NEEDED && n < max) names[n++] = name;
    }
    return (int)n;
}
