/* Copies of a program made without ld.so (image_copy.h), on real tmpicc-built programs: each
 * copy has its own globals, pointers into itself and the libraries it uses, constructors that
 * ran once on pristine data, destructors and atexit handlers in ld.so's order, unwind tables
 * the unwinder finds; the master never runs; images with TLS fall back to dlopen. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "slurp.h"
#include "image_copy.h"
#include "image_share.h"
#include "loader.h"

#define NCOPIES 64

static void *sym(const struct image_copy_src *s, const struct image_copy *c, const char *name)
{
    void *p = image_copy_sym(s, c->bias, name);
    CHECK(p != NULL, "no %s in the copy", name);
    return p;
}

/* A fresh copy: constructor ran once on pristine data, pointers relocated. */
static void check_fresh(const struct image_copy_src *s, const struct image_copy *c)
{
    int *counter = sym(s, c, "counter");
    CHECK_EQ(*(int *)sym(s, c, "ctor_runs"), 1);
    CHECK_EQ(*(int *)sym(s, c, "ctor_saw_counter"), 0);
    CHECK_EQ(*counter, 100);
    CHECK(*(int **)sym(s, c, "counter_ptr") == counter, "counter_ptr does not point into the copy");
    CHECK(*(void **)sym(s, c, "strlen_ptr") == dlsym(RTLD_DEFAULT, "strlen"),
          "strlen_ptr is not libc's strlen");
}

/* pthread_exit in a thread the copy started unwinds through the copy's frames (its cleanup
 * runs) and returns the copy's own value. */
static void check_unwind(const struct image_copy_src *s, const struct image_copy *c)
{
    long (*exit_in_thread)(void) = (long (*)(void))sym(s, c, "exit_in_thread");
    int *counter = sym(s, c, "counter"), *nevents = sym(s, c, "nevents");
    int before = *nevents;
    CHECK_EQ(exit_in_thread(), (long)*counter + 7);
    CHECK_EQ(*nevents, before + 1);
    CHECK_EQ(((int *)sym(s, c, "events"))[before], 4);
}

static void copies(const uint8_t *prog, size_t len)
{
    char err[256];
    struct image_copy_src src;
    int rc = image_copy_src_open(&src, prog, len, "tmpi-test-master", err, sizeof err);
    CHECK(rc == 0, "image_copy_src_open: %d %s", rc, err);
    /* the master's constructors never ran */
    CHECK_EQ(*(int *)dlsym(src.master, "ctor_runs"), 0);
    int tfd = image_template_open(prog, len, "tmpi-test-copy-template");
    CHECK(tfd >= 0);
    static struct image_copy c[NCOPIES];
    for (int i = 0; i < NCOPIES; i++) {
        rc = image_copy_make(&src, tfd, NULL, NULL, &c[i], err, sizeof err);
        CHECK(rc == 0, "image_copy_make %d: %d %s", i, rc, err);
    }
    for (int i = 0; i < NCOPIES; i++)
        check_fresh(&src, &c[i]);
    /* each copy counts on its own: main returns ++counter + argc */
    for (int round = 1; round <= 3; round++)
        for (int i = 0; i < NCOPIES; i++) {
            int (*m)(int, char **) = (int (*)(int, char **))sym(&src, &c[i], "main");
            CHECK_EQ(m(1, NULL), 100 + round + 1);
        }
    check_unwind(&src, &c[0]);
    check_unwind(&src, &c[NCOPIES - 1]);

    /* destructors once, in ld.so's order: static destructors, then atexit handlers */
    for (int pass = 0; pass < 2; pass++)
        image_copy_finish(&c[1]);
    int *ev = sym(&src, &c[1], "events");
    CHECK_EQ(*(int *)sym(&src, &c[1], "nevents"), 3);
    CHECK(ev[0] == 1 && ev[1] == 2 && ev[2] == 3, "events %d %d %d, want 1 2 3", ev[0], ev[1],
          ev[2]);

    /* freed copies' addresses and unwind tables are reused by new ones */
    for (int i = 0; i < NCOPIES; i += 2)
        image_copy_free(&c[i]);
    for (int i = 0; i < NCOPIES; i += 2) {
        CHECK_EQ(image_copy_make(&src, tfd, NULL, NULL, &c[i], err, sizeof err), 0);
        check_fresh(&src, &c[i]);
    }
    close(tfd);
    check_unwind(&src, &c[2]);
    check_unwind(&src, &c[3]);
    for (int i = 0; i < NCOPIES; i++)
        image_copy_free(&c[i]);
    image_copy_src_close(&src);
}

/* Through the loader: copies where the image allows, dlopen where it has TLS. */
static void programs(const uint8_t *prog, size_t len, const uint8_t *tls, size_t tlen)
{
    char err[256];
    struct image_program p;
    CHECK_EQ(image_program_open(&p, prog, len, "tmpi-test-program", NULL, NULL, err, sizeof err),
             0);
    CHECK(p.why_dlopen[0] == '\0', "copies refused: %s", p.why_dlopen);
    struct image img[4];
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(image_program_load(&p, "tmpi-test-rank", NULL, &img[i], err, sizeof err), 0);
        CHECK(img[i].copy.src != NULL && img[i].handle == NULL && img[i].shared);
        CHECK_EQ(img[i].main(2, NULL), 103);
    }
    image_program_loaded(&p);
    for (int i = 0; i < 4; i++)
        image_unload(&img[i]);
    image_program_close(&p);

    struct image_copy_src src;
    CHECK_EQ(image_copy_src_open(&src, tls, tlen, "tmpi-test-tls", err, sizeof err), -ENOTSUP);
    CHECK(strstr(err, "thread-local") != NULL, "reason: %s", err);
    /* its one variable is zero-initialised: with IMAGE_COPY_SHARED_TLS it is copied, the
     * copies reaching the master's TLS module (the rule libgfortran is copied by) */
    CHECK_EQ(image_copy_src_open_flags(&src, tls, tlen, "tmpi-test-tls-shared",
                                       IMAGE_COPY_SHARED_TLS, err, sizeof err),
             0);
    CHECK(src.shared_tls && src.nslots > 0);
    image_copy_src_close(&src);
    CHECK_EQ(image_program_open(&p, tls, tlen, "tmpi-test-tls", NULL, NULL, err, sizeof err), 0);
    CHECK(strstr(p.why_dlopen, "thread-local") != NULL, "reason: %s", p.why_dlopen);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(image_program_load(&p, "tmpi-test-tls-rank", NULL, &img[i], err, sizeof err), 0);
        CHECK(img[i].handle != NULL && img[i].copy.src == NULL && img[i].has_tls);
        CHECK_EQ(img[i].main(1, NULL), 3);
    }
    for (int i = 0; i < 4; i++)
        image_unload(&img[i]);
    image_program_close(&p);

    /* garbage: refused when opened, with the reason */
    err[0] = '\0';
    CHECK_EQ(
        image_program_open(&p, (const uint8_t *)"garbage", 7, "junk", NULL, NULL, err, sizeof err),
        -ENOEXEC);
    CHECK(strstr(err, "not an x86-64 ELF") != NULL, "reason: %s", err);
}

int main(int argc, char **argv)
{
    CHECK(argc == 4, "usage: test_image_copy PROGRAM TLS-PROGRAM PLAIN-LIBRARY");
    size_t len, tlen, plen;
    uint8_t *prog = slurp(argv[1], &len), *tls = slurp(argv[2], &tlen);
    uint8_t *plain = slurp(argv[3], &plen);
    copies(prog, len);
    programs(prog, len, tls, tlen);
    /* a shared object without the TMPI marker is refused with a reason */
    char err[256];
    struct image_program p;
    CHECK_EQ(image_program_open(&p, plain, plen, "tmpi-test-plain", NULL, NULL, err, sizeof err),
             -ENOEXEC);
    CHECK(strstr(err, "tmpicc") != NULL, "reason: %s", err);
    free(prog);
    free(tls);
    free(plain);
    puts("image copy: ok");
    return 0;
}
