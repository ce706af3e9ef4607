/* launch_program.c — the program file: find it, check it is a TMPI program, hash it, and send
 * its bytes when the agent asks for them.
 *
 * The file stays open from the check to the upload and is read through the same descriptor,
 * and the upload re-checks the size, so replacing the file mid-launch cannot make us send
 * bytes that differ from the hash without noticing (the agent verifies the hash as well).
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frame.h"
#include "launch.h"
#include "module_check.h"

/* Like a shell, look a bare name up in PATH, but only if it is not in the current directory:
 * "tmpi-launch -n 2 app" then works for both an installed program and a local one. */
static int open_program(const char *name, char **ret_path)
{
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 || strchr(name, '/') || errno != ENOENT) {
        *ret_path = NULL;
        return fd < 0 ? -errno : fd;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t dlen = strcspn(path, ":");
        char *cand;
        if (asprintf(&cand, "%.*s/%s", (int)dlen, dlen ? path : ".", name) < 0) return -ENOMEM;
        fd = open(cand, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            *ret_path = cand;
            return fd;
        }
        free(cand);
        path += dlen + (path[dlen] == ':');
    }
    return -ENOENT;
}

static int hash_file(struct launch_program *p)
{
    struct stat st;
    if (fstat(p->fd, &st) < 0) return -errno;
    crypto_hash_sha256_state h;
    crypto_hash_sha256_init(&h);
    uint8_t buf[65536];
    uint64_t total = 0;
    for (;;) {
        ssize_t r = read(p->fd, buf, sizeof buf);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (r == 0) break;
        crypto_hash_sha256_update(&h, buf, (unsigned long long)r);
        total += (uint64_t)r;
    }
    if (total != (uint64_t)st.st_size) return -ESTALE;
    crypto_hash_sha256_final(&h, p->hash);
    p->size = total;
    return 0;
}

int launch_program_open(const char *name, struct launch_program *ret)
{
    char *found = NULL;
    ret->fd = -1;
    ret->path = NULL;
    ret->path_alloc = NULL;
    int fd = open_program(name, &found);
    if (fd < 0) {
        fprintf(stderr, "tmpi-launch: %s: %s\n", name, strerror(-fd));
        return LAUNCH_EXIT_USAGE;
    }
    ret->fd = fd;
    ret->path_alloc = found;
    ret->path = found ? found : name;

    struct module_verdict v;
    int r = module_check_fd(fd, &v);
    if (r < 0) {
        fprintf(stderr, "tmpi-launch: cannot read %s: %s\n", name, strerror(-r));
        return LAUNCH_EXIT_USAGE;
    }
    switch (v.kind) {
    case MODULE_TMPI:
        break;
    case MODULE_NOT_TMPI:
        fprintf(stderr,
                "tmpi-launch: %s is not a TMPI program (build it with tmpicc, or link it with "
                "libtmpi: pkg-config tmpi)\n",
                name);
        return LAUNCH_EXIT_USAGE;
    case MODULE_NOT_PIE:
        /* Each rank runs its own copy of the program at an address of its own: a program
         * linked to run at one fixed address cannot be copied. */
        fprintf(stderr,
                "tmpi-launch: %s is not position-independent (a fixed-address executable, "
                "ET_EXEC), so it cannot be loaded once per rank: rebuild it with -fPIE and link "
                "it with -pie (CMake: -DCMAKE_POSITION_INDEPENDENT_CODE=ON "
                "-DCMAKE_EXE_LINKER_FLAGS=-pie), or link it with tmpicc\n",
                name);
        return LAUNCH_EXIT_USAGE;
    case MODULE_OTHER_MPI:
        fprintf(stderr,
                "tmpi-launch: %s needs %s, a library of another MPI: its MPI calls would not go "
                "to TMPI; rebuild it with tmpicc (or against pkg-config tmpi) and without that "
                "MPI\n",
                name, v.lib);
        return LAUNCH_EXIT_USAGE;
    }
    if (sodium_init() < 0) {
        fputs("tmpi-launch: cannot initialise libsodium\n", stderr);
        return LAUNCH_EXIT_FAILURE;
    }
    r = hash_file(ret);
    if (r < 0) {
        fprintf(stderr, "tmpi-launch: cannot read %s: %s\n", name,
                r == -ESTALE ? "the file changed while it was read" : strerror(-r));
        return LAUNCH_EXIT_FAILURE;
    }
    return 0;
}

void launch_program_close(struct launch_program *p)
{
    if (p->fd >= 0) close(p->fd);
    p->fd = -1;
    free(p->path_alloc);
    p->path_alloc = NULL;
    p->path = NULL;
}

int launch_program_send(const struct launch_program *p, int fd)
{
    uint8_t *buf = malloc(FRAME_PROGRAM_CHUNK);
    if (!buf) return -ENOMEM;
    int r = 0;
    uint64_t off = 0;
    do {
        size_t want =
            p->size - off < FRAME_PROGRAM_CHUNK ? (size_t)(p->size - off) : FRAME_PROGRAM_CHUNK;
        ssize_t got = pread(p->fd, buf, want, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            r = -errno;
            break;
        }
        if ((size_t)got != want) {
            r = -ESTALE;
            break;
        }
        Tmpi__ProgramChunk chunk = TMPI__PROGRAM_CHUNK__INIT;
        chunk.program_hash.data = (uint8_t *)p->hash;
        chunk.program_hash.len = sizeof p->hash;
        chunk.offset = off;
        chunk.data.data = buf;
        chunk.data.len = want;
        chunk.last = off + want == p->size;
        Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
        env.msg_case = TMPI__ENVELOPE__MSG_PROGRAM_CHUNK;
        env.program_chunk = &chunk;
        r = frame_write_fd(fd, &env, FRAME_DEFAULT_MAX);
        off += want;
    } while (r == 0 && off < p->size);
    free(buf);
    return r;
}
