#include "image_private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf_dyn.h"
#include "image_elf.h"
#include "image_share.h"

/* ld.so of the only architecture image_elf reads; it lists a program's libraries without
 * running any of their code (ld.so --list, what ldd uses). */
#define IMAGE_PRIVATE_LDSO "/lib64/ld-linux-x86-64.so.2"
/* The most output of one --list read (a line per library). */
#define IMAGE_PRIVATE_LIST_MAX (256 * 1024)
/* The most of the job host's start environment read for its LD_LIBRARY_PATH. */
#define IMAGE_PRIVATE_ENV_MAX (1024 * 1024)

extern char **environ;

static int in_list(const char *name, const char *list)
{
    for (const char *p = list; p && *p;) {
        size_t skip = strspn(p, " ,:\t");
        p += skip;
        size_t len = strcspn(p, " ,:\t");
        if (len && strncmp(name, p, len) == 0) return 1;
        p += len;
    }
    return 0;
}

static int system_path(const char *path)
{
    return in_list(path, TMPI_SYSTEM_LIB_DIRS);
}

int image_private_is_shared(const char *name, const char *path, const char *shared,
                            const char *priv)
{
    if (in_list(name, shared) || !path || path[0] != '/') return 1;
    if (in_list(name, TMPI_PRIVATE_LIBS_DEFAULT) || in_list(name, priv)) return 0;
    return in_list(name, TMPI_SHARED_LIBS_DEFAULT) || system_path(path);
}

/* Whether any library the program needs directly could be private: without one, no library
 * of its closure can be (the system runtime needs only itself), and ld.so is not asked. */
static int may_need_private(const uint8_t *b, size_t size, const char *shared, const char *priv)
{
    const char *names[IMAGE_PRIVATE_MAX], *soname;
    int n = elf_needed(b, size, names, IMAGE_PRIVATE_MAX, &soname);
    for (int i = 0; i < n; i++)
        if ((!in_list(names[i], TMPI_SHARED_LIBS_DEFAULT) || in_list(names[i], priv)) &&
            !in_list(names[i], shared))
            return 1;
    return 0;
}

/* The LD_LIBRARY_PATH this process started with, from /proc/self/environ (the environment
 * block exec gave it, which clearenv and setenv leave alone): ld.so read it once, at start,
 * and its dlopen searches it whatever environ says now.  NULL if there was none (free()). */
static char *startup_library_path(void)
{
    static const char key[] = "LD_LIBRARY_PATH=";
    int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    /* a proc file has no size: read to its end */
    size_t n = 0, cap = 0;
    char *blk = NULL;
    for (;;) {
        if (n == cap) {
            char *b = cap < IMAGE_PRIVATE_ENV_MAX ? realloc(blk, cap ? cap * 2 : 4096) : NULL;
            if (!b) break;
            blk = b;
            cap = cap ? cap * 2 : 4096;
        }
        ssize_t r = read(fd, blk + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    char *found = NULL;
    for (size_t at = 0; at < n && !found;) {
        size_t len = strnlen(blk + at, n - at);
        if (len >= sizeof key - 1 && memcmp(blk + at, key, sizeof key - 1) == 0)
            found = strndup(blk + at + sizeof key - 1, len - (sizeof key - 1));
        at += len + 1;
    }
    free(blk);
    return found;
}

/* The environment ld.so --list runs in: the ranks' (environ, the job's), with LD_LIBRARY_PATH
 * the job's one (-x LD_LIBRARY_PATH) followed by the job host's own.  The list must name the
 * libraries the program's dlopen will load: a library found only through the host's path
 * (a private agent inherits the launcher's LD_LIBRARY_PATH) was "not found" for a list run in
 * the ranks' environment alone, so it stayed shared by every rank (a locally built HDF5 run
 * from its build tree: one library state for all ranks, and its parallel tests deadlocked).
 * NULL when out of memory; the array and its one new string are freed by env_free. */
static char **list_environment(void)
{
    static const char key[] = "LD_LIBRARY_PATH=";
    const char *job = getenv("LD_LIBRARY_PATH");
    char *host = startup_library_path();
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **v = calloc(n + 2, sizeof *v);
    size_t len = strlen(key) + (job ? strlen(job) : 0) + (host ? strlen(host) : 0) + 2;
    char *path = v && (job || host) ? malloc(len) : NULL;
    if (!v || ((job || host) && !path)) {
        free(v);
        free(host);
        return NULL;
    }
    size_t k = 0;
    if (path) {
        snprintf(path, len, "%s%s%s%s", key, job ? job : "", job && host ? ":" : "",
                 host ? host : "");
        v[k++] = path;
    }
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, key, sizeof key - 1) != 0) v[k++] = *e;
    free(host);
    return v;
}

static void env_free(char **v)
{
    if (v && v[0] && strncmp(v[0], "LD_LIBRARY_PATH=", 16) == 0) free(v[0]);
    free(v);
}

/* ld.so --list of the program on prog_fd, into a NUL-terminated buffer (free()). */
static int list_libraries(int prog_fd, char **ret, char *err, size_t errlen)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) return -errno;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, prog_fd, 3);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"ld.so", "--list", "/proc/self/fd/3", NULL};
    char **envp = list_environment();
    pid_t pid;
    int rc = envp ? posix_spawn(&pid, IMAGE_PRIVATE_LDSO, &fa, NULL, argv, envp) : ENOMEM;
    env_free(envp);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        snprintf(err, errlen, "cannot run %s --list: %s", IMAGE_PRIVATE_LDSO, strerror(rc));
        return -rc;
    }
    size_t len = 0;
    char *buf = malloc(IMAGE_PRIVATE_LIST_MAX + 1);
    while (buf && len < IMAGE_PRIVATE_LIST_MAX) {
        ssize_t r = read(pfd[0], buf + len, IMAGE_PRIVATE_LIST_MAX - len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        len += (size_t)r;
    }
    close(pfd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!buf) return -ENOMEM;
    buf[len] = '\0';
    *ret = buf;
    return 0;
}

/* Paths of the objects loaded now (resolved), for the already-loaded check. */
struct loaded {
    char path[IMAGE_PRIVATE_MAX * 4][PATH_MAX];
    size_t n;
};

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct loaded *l = arg;
    if (!info->dlpi_name || info->dlpi_name[0] != '/' || l->n == sizeof l->path / sizeof l->path[0])
        return 0;
    if (realpath(info->dlpi_name, l->path[l->n])) l->n++;
    return 0;
}

static int is_loaded(const struct loaded *l, const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) return 0;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->path[i], real) == 0) return 1;
    return 0;
}

static void note_add(char *note, size_t notelen, const char *name, const char *why)
{
    size_t used = strlen(note);
    if (used < notelen)
        snprintf(note + used, notelen - used, "%s%s kept shared: %s", used ? "; " : "", name, why);
}

static int slurp(const char *path, uint8_t **ret, size_t *ret_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st;
    int rc = fstat(fd, &st) < 0 ? -errno : 0;
    uint8_t *b = rc == 0 ? malloc((size_t)st.st_size ? (size_t)st.st_size : 1) : NULL;
    if (rc == 0 && !b) rc = -ENOMEM;
    size_t got = 0;
    while (rc == 0 && got < (size_t)st.st_size) {
        ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            rc = r < 0 ? -errno : -EIO;
        else
            got += (size_t)r;
    }
    close(fd);
    if (rc < 0) {
        free(b);
        return rc;
    }
    *ret = b;
    *ret_size = got;
    return 0;
}

static void lib_free(struct image_private_lib *l)
{
    if (!l->borrowed) {
        image_copy_src_close(&l->src);
        free(l->bytes);
    }
    if (l->tmpl_fd >= 0) close(l->tmpl_fd);
    free(l->name);
    free(l->path);
    *l = (struct image_private_lib){.tmpl_fd = -1, .src = {.master_fd = -1}};
}

/* An earlier program's master of the library at path, or NULL. */
static const struct image_private_lib *lender(const struct image_private_lenders *lend,
                                              const char *path)
{
    for (size_t i = 0; lend && i < lend->n; i++)
        for (size_t k = 0; lend->sets[i] && k < lend->sets[i]->n; k++)
            if (strcmp(lend->sets[i]->lib[k].path, path) == 0) return &lend->sets[i]->lib[k];
    return NULL;
}

/* The private libraries named in ld.so's list ("\tNAME => PATH (0x...)"), bytes read or
 * borrowed with an earlier program's master. */
static int parse_list(struct image_private *pv, char *list, const char *shared, const char *priv,
                      const struct image_private_lenders *lend, char *note, size_t notelen)
{
    struct loaded *ld = calloc(1, sizeof *ld);
    if (!ld) return -ENOMEM;
    dl_iterate_phdr(collect, ld);
    int rc = 0;
    for (char *line = strtok_r(list, "\n", &list); rc == 0 && line;
         line = strtok_r(NULL, "\n", &list)) {
        char *arrow = strstr(line, " => ");
        if (!arrow) continue;
        *arrow = '\0';
        char *name = line + strspn(line, " \t"), *path = arrow + 4;
        char *paren = strstr(path, " (0x");
        if (paren) *paren = '\0';
        if (image_private_is_shared(name, path, shared, priv) || is_loaded(ld, path)) continue;
        if (pv->n == IMAGE_PRIVATE_MAX) {
            note_add(note, notelen, name, "more private libraries than IMAGE_PRIVATE_MAX");
            continue;
        }
        struct image_private_lib *l = &pv->lib[pv->n];
        *l = (struct image_private_lib){.tmpl_fd = -1, .src = {.master_fd = -1}};
        l->name = strdup(name);
        l->path = strdup(path);
        const struct image_private_lib *from = lender(lend, path);
        if (!l->name || !l->path) {
            rc = -ENOMEM;
        } else if (from) {
            l->bytes = from->bytes;
            l->size = from->size;
            l->src = from->src;
            l->borrowed = 1;
        } else if (slurp(path, &l->bytes, &l->size) < 0) {
            note_add(note, notelen, name, "cannot be read");
            lib_free(l);
            continue;
        }
        pv->n++;
    }
    free(ld);
    return rc;
}

/* Whether library i needs a private library not yet placed before index done. */
static int waits(const struct image_private *pv, size_t i, const int *placed)
{
    const char *names[IMAGE_PRIVATE_MAX], *soname;
    int n = elf_needed(pv->lib[i].bytes, pv->lib[i].size, names, IMAGE_PRIVATE_MAX, &soname);
    for (int k = 0; k < n; k++)
        for (size_t j = 0; j < pv->n; j++)
            if (j != i && !placed[j] && strcmp(names[k], pv->lib[j].name) == 0) return 1;
    return 0;
}

/* Puts every library after those it needs (a cycle keeps its list order). */
static void order(struct image_private *pv)
{
    int placed[IMAGE_PRIVATE_MAX] = {0};
    struct image_private_lib out[IMAGE_PRIVATE_MAX];
    size_t n = 0;
    while (n < pv->n) {
        size_t before = n;
        for (size_t i = 0; i < pv->n; i++)
            if (!placed[i] && !waits(pv, i, placed)) {
                out[n++] = pv->lib[i];
                placed[i] = 1;
            }
        if (n == before)
            for (size_t i = 0; i < pv->n; i++)
                if (!placed[i]) {
                    out[n++] = pv->lib[i];
                    placed[i] = 1;
                    break;
                }
    }
    memcpy(pv->lib, out, n * sizeof out[0]);
}

/* Opens the masters in order; a library that cannot be copied is dropped from the set (then
 * loaded, shared, as a dependency of the next master or the program). */
static int open_masters(struct image_private *pv, const char *label, char *note, size_t notelen,
                        char *err, size_t errlen)
{
    size_t kept = 0;
    for (size_t i = 0; i < pv->n; i++) {
        struct image_private_lib *l = &pv->lib[i];
        const char *names[1], *soname = NULL;
        char why[160] = "", mlabel[192];
        if (elf_needed(l->bytes, l->size, names, 0, &soname) < 0 || !soname ||
            strcmp(soname, l->name) != 0) {
            note_add(note, notelen, l->name, "its SONAME is not the name it is needed by");
            lib_free(l);
            continue;
        }
        /* The SONAME in the memfd's name: tools that name a frame's module by its mapping
         * (TSan and ASan reports, perf, /proc/PID/maps) say which library it is, and
         * tests/tsan.supp can name libgfortran. */
        snprintf(mlabel, sizeof mlabel, "%s-lib%zu-%s", label, kept, l->name);
        l->tmpl_fd = image_template_open(l->bytes, l->size, mlabel);
        if (l->borrowed && l->tmpl_fd >= 0) {
            pv->lib[kept++] = *l; /* its master is open (the lender checked it) */
            continue;
        }
        if (l->borrowed) {
            /* copies need a template: without one the library stays the lender's */
            note_add(note, notelen, l->name, "no template");
            lib_free(l);
            continue;
        }
        /* the system runtime copied per rank has thread-local state of its own threads only
         * (module_marker.h): the copies may share it */
        unsigned flags = in_list(l->name, TMPI_PRIVATE_LIBS_DEFAULT) ? IMAGE_COPY_SHARED_TLS : 0;
        int rc = l->tmpl_fd < 0 ? l->tmpl_fd
                                : image_copy_src_open_flags(&l->src, l->bytes, l->size, mlabel,
                                                            flags, why, sizeof why);
        if (rc == -ENOTSUP || l->tmpl_fd < 0) {
            note_add(note, notelen, l->name, l->tmpl_fd < 0 ? "no template" : why);
            lib_free(l);
            continue;
        }
        if (rc < 0) {
            snprintf(err, errlen, "loading %s (%s): %s", l->name, l->path, why);
            lib_free(l);
            return rc;
        }
        pv->lib[kept++] = *l;
    }
    pv->n = kept;
    return 0;
}

int image_private_open(struct image_private *pv, const uint8_t *bytes, size_t size, int prog_fd,
                       const char *shared, const char *priv,
                       const struct image_private_lenders *lend, const char *label, char *note,
                       size_t notelen, char *err, size_t errlen)
{
    pv->n = 0;
    if (notelen) note[0] = '\0';
    if (!may_need_private(bytes, size, shared, priv)) return 0;
    char *list = NULL;
    int rc = list_libraries(prog_fd, &list, err, errlen);
    if (rc < 0) return rc;
    rc = parse_list(pv, list, shared, priv, lend, note, notelen);
    free(list);
    if (rc == 0) {
        order(pv);
        rc = open_masters(pv, label, note, notelen, err, errlen);
    }
    if (rc < 0) {
        if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
        image_private_close(pv);
    }
    return rc;
}

void image_private_loaded(struct image_private *pv)
{
    for (size_t i = 0; i < pv->n; i++) {
        if (pv->lib[i].tmpl_fd >= 0) close(pv->lib[i].tmpl_fd);
        pv->lib[i].tmpl_fd = -1;
    }
}

void image_private_close(struct image_private *pv)
{
    /* the masters in reverse: a library's dependents go first */
    for (size_t i = pv->n; i-- > 0;)
        lib_free(&pv->lib[i]);
    pv->n = 0;
}
