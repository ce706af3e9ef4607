/* launch_agent.c — find the agent for a job, or start a private one for this job only.
 *
 * The private agent is our child: it runs in its own process group (so the terminal's Ctrl-C
 * reaches only us, and we can cancel the job cleanly before stopping it) and with
 * PR_SET_PDEATHSIG (so it cannot outlive us even if we are killed outright).  It tells us it
 * is ready over a pipe ("READY=1\n", then EOF), so there is no waiting on a timer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_conn.h"
#include "launch.h"
#include "tmpi_config.h"

/* A healthy agent is ready in milliseconds; this only bounds a hung start-up. */
#define AGENT_START_TIMEOUT_MS 60000
/* How long a private agent gets to exit after SIGTERM before SIGKILL. */
#define AGENT_STOP_TIMEOUT_MS 10000
#define AGENT_READY_FD 3
#define AGENT_KEY_FD 4

/* tmpid next to us: installed (bin/../sbin) or in the build tree (launcher/../agent). */
char *launch_find_tmpid(void)
{
    const char *env = getenv("TMPI_TMPID");
    if (env && *env) return strdup(env);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        const char *dir = dirname(self);
        static const char *const rel[] = {"../sbin/tmpid", "../agent/tmpid"};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char *cand;
            if (asprintf(&cand, "%s/%s", dir, rel[i]) < 0) return NULL;
            if (access(cand, X_OK) == 0) return cand;
            free(cand);
        }
    }
    return strdup(TMPI_SBINDIR "/tmpid");
}

/* mkdtemp under $TMPDIR, or /tmp when $TMPDIR is unset or too long for a socket path. */
static int make_dir(struct launch_agent *a)
{
    const char *base = getenv("TMPDIR");
    const char *bases[] = {base && *base ? base : "/tmp", "/tmp"};
    for (size_t i = 0; i < 2; i++) {
        char *dir;
        if (asprintf(&dir, "%s/tmpi-launch.XXXXXX", bases[i]) < 0) return -ENOMEM;
        /* mkdtemp keeps the length; the socket name adds "/tmpid.sock". */
        if (strlen(dir) + sizeof "/tmpid.sock" > sizeof(((struct sockaddr_un *)0)->sun_path)) {
            free(dir);
            continue;
        }
        if (!mkdtemp(dir)) {
            int e = errno;
            free(dir);
            return -e;
        }
        a->dir = dir;
        if (asprintf(&a->sock, "%s/tmpid.sock", dir) < 0) {
            a->sock = NULL;
            return -ENOMEM;
        }
        return 0;
    }
    return -ENAMETOOLONG;
}

/* Runs in the child between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
exec_agent(const char *tmpid, char *const argv[], int wfd, int key_rfd, pid_t parent)
{
    /* Die with the launcher; if it already died before prctl took effect, give up now. */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent) _exit(127);
    setpgid(0, 0);
    /* Out of the way first, so that neither dup2 below overwrites the other's source. */
    wfd = fcntl(wfd, F_DUPFD_CLOEXEC, 10);
    if (key_rfd >= 0) key_rfd = fcntl(key_rfd, F_DUPFD_CLOEXEC, 10);
    if (wfd < 0 || dup2(wfd, AGENT_READY_FD) < 0) _exit(127);
    if (key_rfd >= 0 && dup2(key_rfd, AGENT_KEY_FD) < 0) _exit(127);
    /* The agent logs to stderr (ours); its stdout carries the job's output and must not get
     * anything of the agent's, and it has no business reading our terminal. */
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        _exit(127);
    if (devnull > STDERR_FILENO) close(devnull);
    /* Blocked signals and ignored dispositions survive exec: give the agent a clean slate. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    execv(tmpid, argv);
    static const char msg[] = "tmpi-launch: cannot run the agent program ";
    if (write(STDERR_FILENO, msg, sizeof msg - 1) >= 0 &&
        write(STDERR_FILENO, tmpid, strlen(tmpid)) >= 0)
        (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
}

/* Read the ready pipe to EOF: 0 when the agent said READY=1, -EPROTO when it did not,
 * -EINTR on a signal, -ETIMEDOUT when it hung. */
static int wait_ready(int rfd, int sigfd)
{
    char buf[256];
    size_t len = 0;
    for (;;) {
        struct pollfd p[2] = {{.fd = rfd, .events = POLLIN}, {.fd = sigfd, .events = POLLIN}};
        int n = poll(p, 2, AGENT_START_TIMEOUT_MS);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) return -ETIMEDOUT;
        if (p[1].revents & POLLIN) return -EINTR;
        ssize_t r = read(rfd, buf + len, sizeof buf - 1 - len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        len += (size_t)r;
        if (len == sizeof buf - 1) break; /* more than any readiness message: judge what we have */
    }
    buf[len] = '\0';
    return strncmp(buf, "READY=1\n", 8) == 0 || strstr(buf, "\nREADY=1\n") ? 0 : -EPROTO;
}

/* keyhex: NULL for an agent of one node; else the coordinator of an allocation's agents,
 * which gets the key on AGENT_KEY_FD (a pipe whose write end a->key_wfd keeps). */
static int start_private(struct launch_agent *a, int sigfd, const char *keyhex)
{
    int r = make_dir(a);
    if (r < 0) {
        fprintf(stderr, "tmpi-launch: cannot create a directory for a private agent: %s\n",
                strerror(-r));
        return r;
    }
    char *tmpid = launch_find_tmpid();
    if (!tmpid) return -ENOMEM;
    char *argv[] = {tmpid,         "--private", "--socket", a->sock, "--ready-fd", "3",
                    "--log-level", "warning",   NULL,       NULL,    NULL};
    if (keyhex) {
        argv[8] = "--key-fd";
        argv[9] = "4";
    }
    int pfd[2], kfd[2] = {-1, -1};
    if (pipe2(pfd, O_CLOEXEC) < 0 || (keyhex && pipe2(kfd, O_CLOEXEC) < 0)) {
        r = -errno;
        free(tmpid);
        return r;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) exec_agent(tmpid, argv, pfd[1], kfd[0], parent);
    r = pid < 0 ? -errno : 0;
    close(pfd[1]);
    if (keyhex) {
        close(kfd[0]);
        a->key_wfd = kfd[1];
        char line[LAUNCH_ALLOC_KEY_HEX + 2];
        snprintf(line, sizeof line, "%s\n", keyhex);
        /* a pipe takes 65 bytes without blocking */
        if (r == 0 && write(a->key_wfd, line, strlen(line)) != (ssize_t)strlen(line)) r = -EPIPE;
        explicit_bzero(line, sizeof line);
    }
    if (r == 0) {
        a->pid = pid;
        r = wait_ready(pfd[0], sigfd);
    }
    close(pfd[0]);
    if (r == -ETIMEDOUT)
        fprintf(stderr, "tmpi-launch: could not start a private agent (%s did not become ready)\n",
                tmpid);
    else if (r < 0 && r != -EINTR)
        fprintf(stderr, "tmpi-launch: could not start a private agent (%s)\n",
                r == -EPROTO ? tmpid : strerror(-r));
    free(tmpid);
    return r;
}

int launch_agent_connect(const struct launch_opts *opts, int sigfd, struct launch_agent *a)
{
    const char *path = ctl_socket_path(opts->agent);
    int fd = ctl_connect(path);
    if (fd >= 0) return fd;
    /* Only "nobody is there" means "start one"; a socket we may not use, or an agent the user
     * named explicitly, is an error the user must see. */
    if (opts->agent || (fd != -ENOENT && fd != -ECONNREFUSED)) {
        char why[512];
        fprintf(stderr, "tmpi-launch: %s\n", ctl_connect_explain(path, fd, why, sizeof why));
        return fd;
    }
    int r = start_private(a, sigfd, NULL);
    if (r < 0) return r;
    fd = ctl_connect(a->sock);
    if (fd < 0)
        fprintf(stderr, "tmpi-launch: cannot connect to the private agent at %s: %s\n", a->sock,
                strerror(-fd));
    return fd;
}

int launch_agent_start_coordinator(const char *keyhex, int sigfd, struct launch_agent *a)
{
    int r = start_private(a, sigfd, keyhex);
    if (r < 0) return r;
    int fd = ctl_connect(a->sock);
    if (fd < 0)
        fprintf(stderr, "tmpi-launch: cannot connect to the coordinating agent at %s: %s\n",
                a->sock, strerror(-fd));
    return fd;
}

bool launch_agent_answers(const struct launch_opts *opts)
{
    int fd = ctl_connect(ctl_socket_path(opts->agent));
    if (fd < 0) return false;
    close(fd);
    return true;
}

int launch_agent_connect_mesh(const struct launch_opts *opts, const struct placement *place)
{
    const char *path = ctl_socket_path(opts->agent);
    int fd = ctl_connect(path);
    if (fd >= 0) return fd;
    if (place->nnodes == 1) {
        const struct placement_node *n = &place->nodes[0];
        fprintf(stderr,
                "tmpi-launch: a job on %s%s%s:%u (not this machine's default agent) needs a "
                "running tmpid with a mesh here (see tmpid --listen/--key-file); none answers at "
                "%s: %s\n",
                n->ipv6 ? "[" : "", n->host, n->ipv6 ? "]" : "", (unsigned)n->port, path,
                strerror(-fd));
    } else {
        fprintf(stderr,
                "tmpi-launch: a job across several nodes needs a running tmpid with a mesh (see "
                "tmpid --listen/--key-file); none answers at %s: %s\n",
                path, strerror(-fd));
    }
    return fd;
}

/* Wait for pid to exit for at most ms; true when it has. */
static bool wait_exit(pid_t pid, int ms)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd >= 0) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int n;
        do
            n = poll(&p, 1, ms);
        while (n < 0 && errno == EINTR);
        close(pidfd);
        if (n == 0) return false;
    }
    /* Either it exited or pidfds are unavailable (old kernel): a plain wait then. */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return true;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                if (unlinkat(dirfd(d), e->d_name, 0) < 0 && errno == EISDIR)
                    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        closedir(d);
    }
    if (rmdir(dir) < 0 && errno != ENOENT)
        fprintf(stderr, "tmpi-launch: cannot remove %s: %s\n", dir, strerror(errno));
}

void launch_agent_stop(struct launch_agent *a)
{
    if (a->pid > 0) {
        kill(a->pid, SIGTERM);
        if (!wait_exit(a->pid, AGENT_STOP_TIMEOUT_MS)) {
            fprintf(stderr, "tmpi-launch: the private agent did not stop; killing it\n");
            kill(a->pid, SIGKILL);
            wait_exit(a->pid, -1);
        }
        a->pid = 0;
    }
    if (a->key_wfd > 0) close(a->key_wfd);
    a->key_wfd = 0;
    if (a->dir) remove_dir(a->dir);
    free(a->dir);
    free(a->sock);
    a->dir = a->sock = NULL;
}
