#include "image_elf.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf_dyn.h"
#include "module_marker.h"

static const Elf64_Sym *dynsym(const struct elf_view *v, const struct elf_dyn *d, size_t idx)
{
    if (!d->symtab || idx > (SIZE_MAX / sizeof(Elf64_Sym)) - 1) return NULL;
    return elf_at_vaddr(v, d->symtab + idx * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
}

/* The libraries it needs: marks a TMPI program, refuses another MPI's. */
static int read_needed(const struct elf_view *v, const struct elf_dyn *d, struct image_elf *e,
                       char *err, size_t errlen)
{
    for (size_t i = 0; i < d->n && d->d[i].d_tag != DT_NULL; i++) {
        if (d->d[i].d_tag != DT_NEEDED) continue;
        const char *name = elf_str_at(v, d->strtab, d->strsz, d->d[i].d_un.d_val);
        if (!name) continue;
        if (tmpi_lib_is_tmpi(name)) e->tmpi = 1;
        if (tmpi_lib_is_other_mpi(name)) {
            snprintf(err, errlen,
                     "the program is linked against another MPI's library, %s: rebuild it "
                     "with tmpicc, or link it against libtmpi (pkg-config tmpi)",
                     name);
            return -ENOEXEC;
        }
    }
    return 0;
}

/* Looks a defined symbol up in the dynamic symbol table by walking the relocation-free way:
 * the table's length is not in the dynamic section, so it is bounded by the string table,
 * which linkers place right after it. */
static const Elf64_Sym *find_dynsym(const struct elf_view *v, const struct elf_dyn *d,
                                    const char *name)
{
    if (!d->symtab || d->strtab <= d->symtab) return NULL;
    size_t n = (d->strtab - d->symtab) / sizeof(Elf64_Sym);
    for (size_t i = 1; i < n; i++) {
        const Elf64_Sym *s = dynsym(v, d, i);
        if (!s) return NULL;
        if (s->st_shndx == SHN_UNDEF) continue;
        const char *sn = elf_str_at(v, d->strtab, d->strsz, s->st_name);
        if (sn && strcmp(sn, name) == 0) return s;
    }
    return NULL;
}

/* main from the full symbol table (an executable does not export main unless linked with
 * -rdynamic; one that is not stripped still names it there). */
static uintptr_t main_from_symtab(const struct elf_view *v)
{
    const Elf64_Ehdr *eh = v->eh;
    if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > v->size ||
        (v->size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
        return 0;
    const Elf64_Shdr *sh = (const void *)(v->b + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr *st = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > v->size || sh[i].sh_size > v->size - sh[i].sh_offset ||
            st->sh_offset > v->size || st->sh_size > v->size - st->sh_offset)
            return 0;
        const Elf64_Sym *sym = (const void *)(v->b + sh[i].sh_offset);
        const char *str = (const char *)(v->b + st->sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            if (sym[k].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
                ELF64_ST_BIND(sym[k].st_info) != STB_GLOBAL || sym[k].st_name >= st->sh_size)
                continue;
            if (strncmp(str + sym[k].st_name, "main", st->sh_size - sym[k].st_name) == 0)
                return sym[k].st_value;
        }
    }
    return 0;
}

/* The addend of the RELATIVE relocation of the word at file address off, or 0. */
static uintptr_t relative_at(const struct elf_view *v, const struct elf_dyn *d, uintptr_t off)
{
    const Elf64_Rela *r = elf_at_vaddr(v, d->rela, d->relasz);
    if (!r) return 0;
    for (size_t i = 0; i < d->relasz / sizeof *r; i++)
        if (r[i].r_offset == off && ELF64_R_TYPE(r[i].r_info) == R_X86_64_RELATIVE)
            return (uintptr_t)r[i].r_addend;
    return 0;
}

/* main as the entry point hands it to __libc_start_main, for a stripped executable: glibc's
 * x86-64 _start loads its first argument (rdi) with "lea main(%rip), %rdi" (48 8d 3d rel32),
 * or from main's GOT slot with "mov main@GOTPCREL(%rip), %rdi" (48 8b 3d rel32), within its
 * first few dozen bytes. */
static uintptr_t main_from_entry(const struct elf_view *v, const struct elf_dyn *d)
{
    const size_t span = 64;
    const uint8_t *c = elf_at_vaddr(v, v->eh->e_entry, span);
    if (!c) return 0;
    for (size_t i = 0; i + 7 <= span; i++) {
        if (c[i] != 0x48 || c[i + 2] != 0x3d || (c[i + 1] != 0x8d && c[i + 1] != 0x8b)) continue;
        int32_t rel;
        memcpy(&rel, c + i + 3, sizeof rel);
        uintptr_t target = v->eh->e_entry + i + 7 + (uintptr_t)(intptr_t)rel;
        return c[i + 1] == 0x8d ? target : relative_at(v, d, target);
    }
    return 0;
}

static int add_copy(struct image_elf *e, size_t *cap, uintptr_t off, size_t size, const char *name)
{
    if (e->ncopies == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        struct image_copy_rel *n = realloc(e->copies, ncap * sizeof *n);
        if (!n) return -ENOMEM;
        e->copies = n;
        *cap = ncap;
    }
    e->copies[e->ncopies++] = (struct image_copy_rel){.off = off, .size = size, .name = name};
    return 0;
}

static int add_var(struct image_elf *e, size_t *cap, struct image_var_ref ref)
{
    if (e->nvars == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        struct image_var_ref *n = realloc(e->vars, ncap * sizeof *n);
        if (!n) return -ENOMEM;
        e->vars = n;
        *cap = ncap;
    }
    e->vars[e->nvars++] = ref;
    return 0;
}

/* The relocations of one RELA table that name a rank variable. */
static int read_var_refs(const struct elf_view *v, const struct elf_dyn *d, uintptr_t rela,
                         size_t len, struct image_elf *e, size_t *cap, size_t *ccap)
{
    if (len == 0) return 0;
    const Elf64_Rela *r = elf_at_vaddr(v, rela, len);
    if (!r) return 0;
    for (size_t i = 0; i < len / sizeof *r; i++) {
        unsigned type = ELF64_R_TYPE(r[i].r_info);
        size_t idx = ELF64_R_SYM(r[i].r_info);
        if ((type != R_X86_64_GLOB_DAT && type != R_X86_64_64 && type != R_X86_64_COPY) || !idx)
            continue;
        const Elf64_Sym *s = dynsym(v, d, idx);
        const char *name = s ? elf_str_at(v, d->strtab, d->strsz, s->st_name) : NULL;
        if (!name) continue;
        if (type == R_X86_64_COPY && add_copy(e, ccap, r[i].r_offset, s->st_size, name) < 0)
            return -ENOMEM;
        int k = rank_var_of_symbol(name);
        if (k < 0) continue;
        /* Where the variable lives when the program holds it: a copy relocation's target, or
         * its own definition (which ld.so would not bind its GOT to: the module is loaded
         * RTLD_LOCAL, after the global scope). */
        uintptr_t home = type == R_X86_64_COPY      ? r[i].r_offset
                         : s->st_shndx != SHN_UNDEF ? s->st_value
                                                    : 0;
        int rc = 0;
        if (home && s->st_size >= rank_var_size((enum rank_var)k))
            rc = add_var(e, cap, (struct image_var_ref){.off = home, .k = (uint8_t)k, .copy = 1});
        if (rc == 0 && type != R_X86_64_COPY)
            rc = add_var(e, cap,
                         (struct image_var_ref){.off = r[i].r_offset,
                                                .addend = type == R_X86_64_64 ? r[i].r_addend : 0,
                                                .k = (uint8_t)k});
        if (rc < 0) return rc;
    }
    return 0;
}

int image_elf_read(struct image_elf *ret, const uint8_t *b, size_t size, char *err, size_t errlen)
{
    *ret = (struct image_elf){0};
    struct elf_view v;
    if (elf_view_open(&v, b, size) < 0 || v.eh->e_machine != EM_X86_64) {
        snprintf(err, errlen, "not an x86-64 ELF program");
        return -ENOEXEC;
    }
    const Elf64_Ehdr *eh = v.eh;
    if (eh->e_type == ET_EXEC) {
        snprintf(err, errlen,
                 "the program is not position-independent, so no private copy per rank can be "
                 "loaded: rebuild it with tmpicc, or with -fPIE -pie (CMake: "
                 "CMAKE_POSITION_INDEPENDENT_CODE ON)");
        return -ENOEXEC;
    }
    if (eh->e_type != ET_DYN) {
        snprintf(err, errlen, "not an ELF shared object or position-independent executable");
        return -ENOEXEC;
    }
    struct elf_dyn d;
    if (elf_read_dyn(&v, &d) < 0) {
        snprintf(err, errlen, "the program has no dynamic section (a static executable?)");
        return -ENOEXEC;
    }
    int rc = read_needed(&v, &d, ret, err, errlen);
    if (rc < 0) return rc;
    ret->pie = (d.flags_1 & DF_1_PIE) != 0;
    /* An executable reaches its thread-local variables at offsets from the thread pointer fixed
     * at link time (local-exec), where the job host keeps its own: no copy can move them. */
    for (unsigned i = 0; ret->pie && i < eh->e_phnum; i++)
        if (v.ph[i].p_type == PT_TLS) {
            snprintf(err, errlen,
                     "the program is an executable with thread-local variables, which ranks "
                     "cannot have: link it with tmpicc (a shared object), or build it with "
                     "-fPIC and link with -shared");
            return -ENOEXEC;
        }
    if (find_dynsym(&v, &d, TMPI_MODULE_SYMBOL)) ret->tmpi = 1;
    if (!ret->tmpi) {
        snprintf(err, errlen, "not a TMPI program (build it with tmpicc, or link it with libtmpi)");
        return -ENOEXEC;
    }
    const Elf64_Sym *m = find_dynsym(&v, &d, "main");
    ret->main_addr = m ? m->st_value : 0;
    if (!ret->main_addr) ret->main_addr = main_from_symtab(&v);
    if (!ret->main_addr && ret->pie) ret->main_addr = main_from_entry(&v, &d);
    if (!ret->main_addr) {
        snprintf(err, errlen, "the program exports no main()");
        return -ENOEXEC;
    }
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (v.ph[i].p_type == PT_GNU_RELRO) {
            ret->relro_lo = v.ph[i].p_vaddr;
            ret->relro_hi = v.ph[i].p_vaddr + v.ph[i].p_memsz;
        }
    size_t cap = 0, ccap = 0;
    rc = read_var_refs(&v, &d, d.rela, d.relasz, ret, &cap, &ccap);
    if (rc == 0) rc = read_var_refs(&v, &d, d.jmprel, d.pltrelsz, ret, &cap, &ccap);
    if (rc < 0) {
        snprintf(err, errlen, "out of memory");
        image_elf_free(ret);
    }
    return rc;
}

void image_elf_unpie(uint8_t *b, size_t size)
{
    const Elf64_Ehdr *eh = (const void *)b;
    struct elf_view v = {.b = b, .size = size, .eh = eh, .ph = (const void *)(b + eh->e_phoff)};
    struct elf_dyn d;
    if (elf_read_dyn(&v, &d) < 0) return;
    Elf64_Dyn *w = (Elf64_Dyn *)(uintptr_t)d.d;
    for (size_t i = 0; i < d.n && w[i].d_tag != DT_NULL; i++)
        if (w[i].d_tag == DT_FLAGS_1) w[i].d_un.d_val &= ~(uint64_t)DF_1_PIE;
}

void image_elf_bind_vars(const struct image_elf *e, uintptr_t bias, struct rank_vars *v)
{
    /* the variables' homes first: the slots then point at where each finally lives */
    for (size_t i = 0; i < e->nvars; i++)
        if (e->vars[i].copy)
            rank_vars_move(v, (enum rank_var)e->vars[i].k, (void *)(bias + e->vars[i].off));
    for (size_t i = 0; i < e->nvars; i++) {
        const struct image_var_ref *r = &e->vars[i];
        if (r->copy) continue;
        uintptr_t val = (uintptr_t)v->at[r->k] + (uintptr_t)r->addend;
        memcpy((void *)(bias + r->off), &val, sizeof val);
    }
}

void image_elf_fill_copies(const struct image_elf *e, const uintptr_t *src, uintptr_t from,
                           uintptr_t bias)
{
    for (size_t i = 0; i < e->ncopies; i++) {
        uintptr_t at = src && src[i] ? src[i] : from + e->copies[i].off;
        memcpy((void *)(bias + e->copies[i].off), (const void *)at, e->copies[i].size);
    }
}

int image_elf_relro(const struct image_elf *e, uintptr_t bias, int writable)
{
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), mask = ~(pg - 1);
    uintptr_t lo = (bias + e->relro_lo) & mask, hi = (bias + e->relro_hi) & mask;
    int prot = PROT_READ | (writable ? PROT_WRITE : 0);
    return hi > lo && mprotect((void *)lo, hi - lo, prot) < 0 ? -errno : 0;
}

void image_elf_free(struct image_elf *e)
{
    free(e->vars);
    free(e->copies);
    *e = (struct image_elf){0};
}
