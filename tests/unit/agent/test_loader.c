/* Per-rank images: every copy of a module has its own globals, copies stay distinct while
 * loaded even when memfd numbers would be reused, and non-modules are refused. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "loader.h"

static uint8_t *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    uint8_t *b = malloc((size_t)st.st_size);
    CHECK(read(fd, b, (size_t)st.st_size) == st.st_size);
    close(fd);
    *len = (size_t)st.st_size;
    return b;
}

#define NCOPIES 64

int main(int argc, char **argv)
{
    CHECK(argc == 3);
    size_t len, plen;
    uint8_t *mod = slurp(argv[1], &len);
    uint8_t *plain = slurp(argv[2], &plen);
    char err[256];

    static struct image img[NCOPIES];
    for (int i = 0; i < NCOPIES; i++) {
        int r = image_load(mod, len, "test", &img[i], err, sizeof err);
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
        CHECK_EQ(image_load(mod, len, "test", &img[i], err, sizeof err), 0);
        CHECK_EQ(img[i].main(0, NULL), 1);
    }
    for (int i = 1; i < NCOPIES; i += 2)
        CHECK_EQ(img[i].main(0, NULL), 4);
    for (int i = 0; i < NCOPIES; i++)
        image_unload(&img[i]);

    /* a shared object without the TMPI marker is refused with a reason */
    struct image bad;
    CHECK_EQ(image_load(plain, plen, "plain", &bad, err, sizeof err), -ENOEXEC);
    CHECK(strstr(err, "tmpicc") != NULL);
    /* garbage is refused with the loader's message */
    CHECK_EQ(image_load((const uint8_t *)"garbage", 7, "junk", &bad, err, sizeof err), -ENOEXEC);
    CHECK(err[0] != '\0');
    image_unload(&bad);
    free(mod);
    free(plain);
    puts("loader: ok");
    return 0;
}
