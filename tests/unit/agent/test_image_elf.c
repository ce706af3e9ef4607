/* Executables and shared objects as rank images (image_elf.h, loader.h): each copy's optind
 * and environ are the rank's own whether the program reaches them through copy relocations
 * (a PIE) or GOT slots (a shared object); main is found in an executable that does not export
 * it, stripped or not; what cannot run as ranks is refused saying why. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "slurp.h"
#include "image_elf.h"
#include "loader.h"

#define NCOPIES 3

/* Each copy counts its own optind and global; environ is the rank's. */
static void private_vars(const uint8_t *prog, size_t len, const char *label, int pie)
{
    char err[256];
    struct image_program p;
    CHECK_EQ(image_program_open(&p, prog, len, label, NULL, NULL, err, sizeof err), 0);
    CHECK_EQ(p.elf.pie, pie);
    struct rank_vars v[NCOPIES];
    struct image img[NCOPIES];
    char *env[NCOPIES][2];
    for (int i = 0; i < NCOPIES; i++) {
        rank_vars_init(&v[i]);
        CHECK_EQ(image_program_load(&p, label, &v[i], &img[i], err, sizeof err), 0);
        uintptr_t at = (uintptr_t)v[i].at[RANK_VAR_OPTIND];
        if (pie) /* the variable lives in the copy, a copy relocation's target */
            CHECK(at > img[i].copy.bias && at < img[i].copy.bias + p.src.hi,
                  "optind of copy %d at %#lx, outside the copy", i, (unsigned long)at);
        else
            CHECK(at == (uintptr_t)&v[i].own.optind);
        CHECK_EQ(RANK_VAR(&v[i], RANK_VAR_OPTIND, int), 1);
        env[i][0] = (char *)label;
        env[i][1] = NULL;
        RANK_VAR(&v[i], RANK_VAR_ENVIRON, char **) = env[i];
    }
    CHECK_EQ(img[0].main(1, NULL), 21);
    CHECK_EQ(img[0].main(1, NULL), 32);
    CHECK_EQ(img[1].main(1, NULL), 21);
    CHECK_EQ(RANK_VAR(&v[0], RANK_VAR_OPTIND, int), 3);
    CHECK_EQ(RANK_VAR(&v[1], RANK_VAR_OPTIND, int), 2);
    CHECK_EQ(RANK_VAR(&v[2], RANK_VAR_OPTIND, int), 1);
    for (int i = 0; i < NCOPIES; i++) {
        CHECK_EQ(img[i].main(2, env[i]), 1);
        CHECK_EQ(img[i].main(2, env[(i + 1) % NCOPIES]), 0);
    }
    image_program_loaded(&p);
    for (int i = 0; i < NCOPIES; i++)
        image_unload(&img[i]);
    image_program_close(&p);
}

/* The program header of the given type, to rewrite. */
static Elf64_Phdr *phdr(uint8_t *b, uint32_t type)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
    Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == type) return &ph[i];
    return NULL;
}

static void refused(const uint8_t *b, size_t len, const char *want)
{
    char err[256] = "";
    struct image_elf e;
    CHECK_EQ(image_elf_read(&e, b, len, err, sizeof err), -ENOEXEC);
    CHECK(strstr(err, want) != NULL, "expected a reason with \"%s\", got \"%s\"", want, err);
}

static void refusals(const uint8_t *pie, size_t len)
{
    uint8_t *b = malloc(len);
    CHECK(b);
    /* a non-PIE executable: says how to rebuild it */
    memcpy(b, pie, len);
    ((Elf64_Ehdr *)b)->e_type = ET_EXEC;
    refused(b, len, "-fPIE -pie");
    /* linked against another MPI: names the library (libc.so.6 renamed, same length) */
    memcpy(b, pie, len);
    uint8_t *lib = memmem(b, len, "libc.so.6", 10);
    CHECK(lib != NULL);
    memcpy(lib, "libmpi.so", 10);
    refused(b, len, "another MPI's library, libmpi.so");
    /* an executable with thread-local variables */
    memcpy(b, pie, len);
    Elf64_Phdr *note = phdr(b, PT_NOTE);
    CHECK(note != NULL);
    note->p_type = PT_TLS;
    refused(b, len, "thread-local");
    /* not a TMPI program: no marker, no libtmpi */
    memcpy(b, pie, len);
    uint8_t *mark = memmem(b, len, "tmpi_module_abi", 16);
    CHECK(mark != NULL);
    mark[0] = 'x';
    refused(b, len, "not a TMPI program");
    refused((const uint8_t *)"garbage", 7, "not an x86-64 ELF");
    free(b);
}

/* Stripped (no section headers left to name main): found from the entry point. */
static void stripped_main(const uint8_t *pie, size_t len)
{
    uint8_t *b = malloc(len);
    CHECK(b);
    memcpy(b, pie, len);
    struct image_elf e;
    char err[256];
    CHECK_EQ(image_elf_read(&e, b, len, err, sizeof err), 0);
    uintptr_t want = e.main_addr;
    image_elf_free(&e);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
    eh->e_shoff = 0;
    eh->e_shnum = 0;
    CHECK_EQ(image_elf_read(&e, b, len, err, sizeof err), 0);
    CHECK_EQ(e.main_addr, want);
    image_elf_free(&e);
    free(b);
}

int main(int argc, char **argv)
{
    CHECK(argc == 3, "usage: test_image_elf PIE SHARED-OBJECT");
    size_t plen, slen;
    uint8_t *pie = slurp(argv[1], &plen), *so = slurp(argv[2], &slen);
    private_vars(pie, plen, "tmpi-test-pie", 1);
    private_vars(so, slen, "tmpi-test-so", 0);
    refusals(pie, plen);
    stripped_main(pie, plen);
    free(pie);
    free(so);
    return 0;
}
