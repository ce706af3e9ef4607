/* module_entry.c — linked into every program tmpicc builds (libtmpi_module.a).
 *
 * A TMPI program is a shared object that exports main and is loaded into the agent once per
 * rank.  Giving it a program interpreter and an entry point makes "./app args" work too: the
 * kernel runs it through ld.so, which lands here, and we re-run it as a one-rank job under
 * tmpi-launch instead of crashing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmpi_config.h"
#include "module_marker.h"

#if defined(__x86_64__)
#define TMPI_INTERP "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define TMPI_INTERP "/lib/ld-linux-aarch64.so.1"
#elif defined(__i386__)
#define TMPI_INTERP "/lib/ld-linux.so.2"
#else
#error "unknown program interpreter for this architecture"
#endif

const char tmpi_module_interp[] __attribute__((section(".interp"), used)) = TMPI_INTERP;

/* The launcher looks for this section; the agent checks the symbol after loading. */
const char tmpi_module_abi[] __attribute__((section(TMPI_MODULE_SECTION), used)) =
    TMPI_MODULE_MAGIC;

/* Reads /proc/self/cmdline into a NULL-terminated argv; NULL on failure. */
static char **own_argv(int *ret_argc)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        ssize_t r = read(fd, buf + len, cap - len);
        if (r <= 0) break;
        len += (size_t)r;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    close(fd);
    if (!buf || len == 0) return NULL;
    int argc = 0;
    for (size_t i = 0; i < len; i++)
        argc += buf[i] == '\0';
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    if (!argv) return NULL;
    char *p = buf;
    for (int i = 0; i < argc; i++) {
        argv[i] = p;
        p += strlen(p) + 1;
    }
    *ret_argc = argc;
    return argv;
}

void tmpi_module_entry(void);

/* Where tmpicc's tmpi-launch is; tmpicc links it in (weak: a module linked by hand has none). */
extern const char tmpi_launch_path[] __attribute__((weak, visibility("hidden")));

/* The kernel enters with the stack laid out for _start, not for a C call: realign it. */
__attribute__((force_align_arg_pointer, noreturn, visibility("default"))) void
tmpi_module_entry(void)
{
    int argc = 0;
    char **argv = own_argv(&argc);
    if (!argv) {
        fputs("This program is a TMPI module: run it with tmpi-launch -n N PROGRAM\n", stderr);
        _exit(2);
    }
    char **nargv = calloc((size_t)argc + 4, sizeof *nargv);
    if (!nargv) _exit(2);
    nargv[0] = "tmpi-launch";
    nargv[1] = "-n";
    nargv[2] = "1";
    for (int i = 0; i < argc; i++)
        nargv[3 + i] = argv[i];

    /* An ordinary run of a one-rank job: the launcher finds or starts an agent. */
    const char *env = getenv("TMPI_LAUNCH");
    if (env && *env) execv(env, nargv);
    if (tmpi_launch_path && tmpi_launch_path[0]) execv(tmpi_launch_path, nargv);
    execvp("tmpi-launch", nargv);
    execv(TMPI_BINDIR "/tmpi-launch", nargv);
    fprintf(stderr,
            "%s: this program is a TMPI module and tmpi-launch was not found (%s).\n"
            "Run it with: tmpi-launch -n N %s\n",
            argv[0], strerror(errno), argv[0]);
    _exit(127);
}
