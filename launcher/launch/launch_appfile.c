/* launch_appfile.c — reading an application file (tmpi-launch --app FILE, Open MPI's appfile).
 *
 * One program of the job per line, written as it would be after a ':' on the command line:
 *
 *     # master and workers
 *     -n 1 ./master in.dat
 *     -np 6 -x OMP_NUM_THREADS=2 ./worker 'a b'
 *
 * Words are separated by blanks.  Single or double quotes keep blanks inside a word (no
 * escapes: a quote ends at the next same quote); a line whose quote is not closed is an error.
 * A word starting with '#' starts a comment that runs to the end of the line; blank lines and
 * comment lines are skipped.  A ':' word is refused: on the command line it separates
 * programs, here each line is one.
 *
 * The whole file is read into one buffer (at most LAUNCH_APPFILE_MAX_BYTES) and cut into words
 * in place, so the words the programs keep need no copies of their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch.h"

/* Read path whole into a NUL-terminated buffer; refuses files over the limit.  Negative errno
 * (-EFBIG: too large). */
static int read_whole(const char *path, char **ret, size_t *ret_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    int r = buf ? 0 : -ENOMEM;
    while (r == 0) {
        if (len == cap) {
            if (cap >= LAUNCH_APPFILE_MAX_BYTES) {
                /* one byte past the limit tells "too large" from "exactly the limit" */
                char c;
                ssize_t k = read(fd, &c, 1);
                r = k > 0 ? -EFBIG : k < 0 ? -errno : 0;
                break;
            }
            cap = cap * 2 > LAUNCH_APPFILE_MAX_BYTES ? LAUNCH_APPFILE_MAX_BYTES : cap * 2;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                r = -ENOMEM;
                break;
            }
            buf = nb;
        }
        ssize_t k = read(fd, buf + len, cap - len);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) r = -errno;
        if (k <= 0) break;
        len += (size_t)k;
    }
    close(fd);
    if (r < 0) {
        free(buf);
        return r;
    }
    buf[len] = '\0';
    *ret = buf;
    *ret_len = len;
    return 0;
}

static int push_word(struct launch_appfile *f, char *w)
{
    if (f->n_words == f->cap_words) {
        size_t cap = f->cap_words ? 2 * f->cap_words : 64;
        char **nw = realloc(f->words, cap * sizeof *nw);
        if (!nw) return -ENOMEM;
        f->words = nw;
        f->cap_words = cap;
    }
    f->words[f->n_words++] = w;
    return 0;
}

static int push_line(struct launch_appfile *f, unsigned lineno, size_t first)
{
    struct launch_appfile_line *nl = realloc(f->lines, (f->n_lines + 1) * sizeof *nl);
    if (!nl) return -ENOMEM;
    f->lines = nl;
    nl[f->n_lines++] =
        (struct launch_appfile_line){.lineno = lineno, .first = first, .n = f->n_words - first};
    return 0;
}

/* Cut one line (NUL-terminated, in place) into words.  -EINVAL with *ret_why on a bad line. */
static int split_line(struct launch_appfile *f, char *p, const char **ret_why)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p == '\0' || *p == '#') return 0;
        char *w = p, *out = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r') {
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                while (*p && *p != q)
                    *out++ = *p++;
                if (*p != q) {
                    *ret_why = "a quote is not closed";
                    return -EINVAL;
                }
                p++;
            } else {
                *out++ = *p++;
            }
        }
        bool more = *p != '\0';
        *out = '\0';
        if (strcmp(w, ":") == 0) {
            *ret_why = "':' separates programs on the command line; here each line is one program";
            return -EINVAL;
        }
        int r = push_word(f, w);
        if (r < 0) return r;
        if (!more) return 0;
        p++;
    }
}

int launch_appfile_read(const char *path, struct launch_appfile *f)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    size_t len = 0;
    int r = read_whole(path, &f->text, &len);
    if (r == -EFBIG) {
        fprintf(stderr, "tmpi-launch: --app %s: larger than %u bytes\n", path,
                LAUNCH_APPFILE_MAX_BYTES);
        return LAUNCH_EXIT_USAGE;
    }
    if (r < 0) {
        fprintf(stderr, "tmpi-launch: --app %s: %s\n", path, strerror(-r));
        return LAUNCH_EXIT_USAGE;
    }
    if (memchr(f->text, '\0', len)) {
        fprintf(stderr, "tmpi-launch: --app %s: not a text file (it holds a NUL byte)\n", path);
        return LAUNCH_EXIT_USAGE;
    }
    unsigned lineno = 0;
    int status = 0;
    for (char *line = f->text; line && *line && r == 0;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        lineno++;
        size_t first = f->n_words;
        const char *why = NULL;
        r = split_line(f, line, &why);
        if (r == -EINVAL) {
            fprintf(stderr, "%s:%u: %s\n", path, lineno, why);
            status = LAUNCH_EXIT_USAGE;
            r = 0; /* report every bad line, as a host file does */
        } else if (r == 0 && f->n_words > first) {
            r = push_line(f, lineno, first);
        }
        line = nl ? nl + 1 : NULL;
    }
    if (r == -ENOMEM) {
        fputs("tmpi-launch: out of memory\n", stderr);
        return LAUNCH_EXIT_FAILURE;
    }
    if (status) return status;
    if (f->n_lines == 0) {
        fprintf(stderr, "tmpi-launch: --app %s: no program in the file\n", path);
        return LAUNCH_EXIT_USAGE;
    }
    return 0;
}

void launch_appfile_free(struct launch_appfile *f)
{
    free(f->text);
    free(f->words);
    free(f->lines);
    memset(f, 0, sizeof *f);
}
