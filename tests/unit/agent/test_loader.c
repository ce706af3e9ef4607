/* Per-rank images: every copy of a module has its own globals, copies stay distinct while
 * loaded even when memfd numbers would be reused, and non-modules are refused. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "slurp.h"
#include "image_share.h"
#include "loader.h"

#define NCOPIES 64

/* The name of the mapping holding address a, from /proc/self/maps ("" when none). */
static void mapping_of(const void *a, char *name, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    name[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        int off = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &off) < 2) continue;
        if ((unsigned long)a < lo || (unsigned long)a >= hi) continue;
        snprintf(name, len, "%s", line + off);
        name[strcspn(name, "\n")] = '\0';
        break;
    }
    fclose(f);
}

/* Copies loaded with a template: their code runs from the template's pages, their memfds
 * hold no pages, and each still has its own globals. */
static void shared_copies(const uint8_t *mod, size_t len)
{
    char err[256], name[512];
    int tfd = image_template_open(mod, len, "tmpi-test-template");
    CHECK(tfd >= 0);
    static struct image img[NCOPIES];
    for (int i = 0; i < NCOPIES; i++) {
        int r = image_load(mod, len, "test-shared", tfd, &img[i], err, sizeof err);
        if (r != 0) fprintf(stderr, "image_load: %s\n", err);
        CHECK_EQ(r, 0);
        CHECK_EQ(img[i].shared, 1);
        struct stat st;
        CHECK(fstat(img[i].fd, &st) == 0);
        CHECK_EQ((long)st.st_blocks, 0L);
        mapping_of((const void *)img[i].main, name, sizeof name);
        CHECK(strstr(name, "tmpi-test-template") != NULL, "main of copy %d is in '%s'", i, name);
    }
    /* the template's fd is not needed once the copies are mapped */
    close(tfd);
    for (int round = 1; round <= 3; round++)
        for (int i = 0; i < NCOPIES; i++)
            CHECK_EQ(img[i].main(1, NULL), round + 1);
    for (int i = 0; i < NCOPIES; i++)
        image_unload(&img[i]);
}

int main(int argc, char **argv)
{
    CHECK(argc == 3);
    size_t len, plen;
    uint8_t *mod = slurp(argv[1], &len);
    uint8_t *plain = slurp(argv[2], &plen);
    char err[256];

    static struct image img[NCOPIES];
    for (int i = 0; i < NCOPIES; i++) {
        int r = image_load(mod, len, "test", -1, &img[i], err, sizeof err);
        if (r != 0) fprintf(stderr, "image_load: %s\n", err);
        CHECK_EQ(r, 0);
        CHECK(img[i].main != NULL);
    }
    /* each copy counts on its own: main returns ++counter + argc */
    for (int round = 1; round <= 3; round++)
        for (int i = 0; i < NCOPIES; i++)
            CHECK_EQ(img[i].main(1, NULL), round + 1);
    /* unload half, load new ones: fd numbers get reused, images must not be shared */
    for (int i = 0; i < NCOPIES; i += 2)
        image_unload(&img[i]);
    for (int i = 0; i < NCOPIES; i += 2) {
        CHECK_EQ(image_load(mod, len, "test", -1, &img[i], err, sizeof err), 0);
        CHECK_EQ(img[i].main(0, NULL), 1);
    }
    for (int i = 1; i < NCOPIES; i += 2)
        CHECK_EQ(img[i].main(0, NULL), 4);
    for (int i = 0; i < NCOPIES; i++)
        image_unload(&img[i]);

    /* a shared object without the TMPI marker is refused with a reason */
    struct image bad;
    CHECK_EQ(image_load(plain, plen, "plain", -1, &bad, err, sizeof err), -ENOEXEC);
    CHECK(strstr(err, "tmpicc") != NULL);
    /* garbage is refused with the loader's message */
    CHECK_EQ(image_load((const uint8_t *)"garbage", 7, "junk", -1, &bad, err, sizeof err),
             -ENOEXEC);
    CHECK(err[0] != '\0');
    image_unload(&bad);
    shared_copies(mod, len);
    free(mod);
    free(plain);
    puts("loader: ok");
    return 0;
}
