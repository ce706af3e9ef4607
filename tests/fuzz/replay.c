/* replay.c — runs a fuzz target's LLVMFuzzerTestOneInput over files and directories given on
 * the command line (no fuzzing: every saved input once). Exits 0 when every input returned
 * without a crash; a sanitizer build reports the crash itself. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path, unsigned *count)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: cannot open\n", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (!buf) return -1;
    /* A copy of exactly len bytes, so ASan sees a read past the input. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        exact[i] = buf[i];
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    (*count)++;
    return 0;
}

static int run_path(const char *path, unsigned *count)
{
    struct stat st;
    if (stat(path, &st) < 0) return 0; /* a target without saved inputs yet */
    if (!S_ISDIR(st.st_mode)) return run_file(path, count);
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);
    if (n < 0) return -1;
    int r = 0;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.' && r == 0) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", path, names[i]->d_name);
            r = run_file(p, count);
        }
        free(names[i]);
    }
    free(names);
    return r;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    for (int i = 1; i < argc; i++)
        if (run_path(argv[i], &count) < 0) return 1;
    printf("replay: %u inputs, no crash\n", count);
    /* An empty input too: every decoder must take it. */
    LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
    return 0;
}
