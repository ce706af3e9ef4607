/* launch_alloc.c — the agents of a Slurm allocation, started by us through srun.
 *
 * Inside an allocation with no system agents, one `srun` step runs one tmpid per node of the
 * job (tmpi-launch(1), "Slurm"):
 *
 *   srun --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=H1,...  --whole --overlap
 *        --cpu-bind=none --input=all --label --kill-on-bad-exit=1 --mpi=none --quiet
 *        --job-name=tmpid
 *        /bin/sh -c 'exec "$@" --socket "$TMPI_ALLOC_SOCK.$SLURM_PROCID.sock"' sh
 *        TMPID --private --key-fd 0 --listen :0 --ready-fd 1 --log-level warning
 *
 * The key: 32 fresh random bytes, written in hex as one line to srun's stdin, which srun hands
 * to every task (--input=all).  It never touches a disk and no other user can read a pipe of
 * ours.  The same pipe is the agents' lifeline: they stop when it closes, which it does when we
 * close it, when we die (even by SIGKILL), or when srun does; and Slurm ends the step with the
 * allocation.
 *
 * --whole gives the step every CPU of the allocation on its nodes (the ranks are threads of the
 * agents' job hosts, so they can use no other); --overlap lets it share them with the user's
 * other steps instead of waiting for them; --cpu-bind=none keeps srun from pinning an agent,
 * and with it every rank thread of its node, to one CPU.
 *
 * The ports: each agent listens on a port of its own choosing (:0) and writes "READY=1" and
 * "PORT=P" to its stdout, which srun labels with the task number ("3: PORT=P"); with one task
 * per node in block order, task i runs on the i-th node of the node list, the placement's
 * node i.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"

/* How long srun gets to end after we closed its stdin (the agents' lifeline), and again after
 * SIGTERM. */
#define ALLOC_STOP_TIMEOUT_MS 10000
#define ALLOC_LINE_MAX 256

/* Runs in the child between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) exec_srun(char *const argv[], int in_rfd, int out_wfd)
{
    /* No PR_SET_PDEATHSIG: a signal would make srun cancel the step, and slurmstepd kills the
     * agents outright (their sockets stay behind).  When we die, srun's stdin ends instead,
     * srun hands the end to every agent, and they stop cleanly, then so does the step.
     * Ctrl-C on the terminal reaches us alone; we cancel the job, then close the pipe. */
    setpgid(0, 0);
    if (dup2(in_rfd, STDIN_FILENO) < 0 || dup2(out_wfd, STDOUT_FILENO) < 0) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], argv);
    static const char msg[] = "tmpi-launch: cannot run srun (";
    if (write(STDERR_FILENO, msg, sizeof msg - 1) >= 0 &&
        write(STDERR_FILENO, argv[0], strlen(argv[0])) >= 0)
        (void)!write(STDERR_FILENO, "); is Slurm installed here?\n", 28);
    _exit(127);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int launch_alloc_key(char ret_hex[LAUNCH_ALLOC_KEY_HEX + 1])
{
    uint8_t key[LAUNCH_ALLOC_KEY_BYTES];
    size_t got = 0;
    while (got < sizeof key) {
        ssize_t n = getrandom(key + got, sizeof key - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        got += (size_t)n;
    }
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof key; i++) {
        ret_hex[2 * i] = digits[key[i] >> 4];
        ret_hex[2 * i + 1] = digits[key[i] & 15];
    }
    ret_hex[LAUNCH_ALLOC_KEY_HEX] = '\0';
    explicit_bzero(key, sizeof key);
    return 0;
}

/* "--nodelist=H1,H2,..." of the placement's nodes, in order. */
static char *nodelist_arg(const struct placement *p)
{
    size_t len = sizeof "--nodelist=";
    for (uint32_t i = 0; i < p->nnodes; i++)
        len += strlen(p->nodes[i].host) + 1;
    char *s = malloc(len), *w = s;
    if (!s) return NULL;
    w += sprintf(w, "--nodelist=");
    for (uint32_t i = 0; i < p->nnodes; i++)
        w += sprintf(w, "%s%s", i ? "," : "", p->nodes[i].host);
    return s;
}

/* One labelled line of srun's output: "  3: PORT=41234".  Records the port; other lines
 * ("3: READY=1", which comes first) are fine and ignored.  -EPROTO for a task or port out of
 * range. */
static int take_line(const char *line, uint16_t *ports, uint32_t n, uint32_t *nports)
{
    const char *p = line;
    while (*p == ' ')
        p++;
    char *end;
    errno = 0;
    unsigned long task = strtoul(p, &end, 10);
    if (end == p || errno || strncmp(end, ": ", 2) != 0) return 0; /* not an agent's line */
    if (strncmp(end + 2, "PORT=", 5) != 0) return 0;
    unsigned long port = strtoul(end + 7, &end, 10);
    if (task >= n || port == 0 || port > 65535 || *end) return -EPROTO;
    if (ports[task] == 0) (*nports)++;
    ports[task] = (uint16_t)port;
    return 0;
}

/* Reads srun's output until every agent told its port.  0, -EPIPE (srun's output ended first:
 * the step failed), -ETIMEDOUT, -EINTR (a signal), -EPROTO, or another negative errno. */
static int read_ports(int fd, int sigfd, uint32_t timeout_sec, uint16_t *ports, uint32_t n)
{
    char buf[ALLOC_LINE_MAX];
    size_t len = 0;
    uint32_t nports = 0;
    double deadline = now_ms() + timeout_sec * 1e3;
    while (nports < n) {
        double left = deadline - now_ms();
        if (left <= 0) return -ETIMEDOUT;
        struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = sigfd, .events = POLLIN}};
        int k = poll(pf, 2, (int)left + 1);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -errno;
        if (pf[1].revents & POLLIN) return -EINTR;
        if (k == 0) continue;
        ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -errno;
        if (r == 0) return -EPIPE;
        len += (size_t)r;
        char *nl;
        while ((nl = memchr(buf, '\n', len))) {
            *nl = '\0';
            int e = take_line(buf, ports, n, &nports);
            if (e < 0) return e;
            len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len);
        }
        if (len == sizeof buf - 1) len = 0; /* no agent writes such a line: drop it */
    }
    return 0;
}

/* Waits up to ms (-1: for ever) for the child to end; true once reaped. */
static bool reap(pid_t pid, int ms, int *ret_status)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd >= 0 && ms >= 0) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int k;
        do
            k = poll(&p, 1, ms);
        while (k < 0 && errno == EINTR);
        if (k == 0) {
            close(pidfd);
            return false;
        }
    }
    if (pidfd >= 0) close(pidfd);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (ret_status) *ret_status = st;
    return true;
}

/* The socket base each agent adds ".TASK.sock" to: under $TMPDIR (or /tmp), named for the
 * job and made unique by 32 random bits of its own (nothing of the key). */
static char *socket_base(void)
{
    uint32_t token;
    if (getrandom(&token, sizeof token, 0) != sizeof token) return NULL;
    const char *tmp = getenv("TMPDIR");
    const char *job = getenv("SLURM_JOB_ID");
    char *s;
    /* 108 bytes of sun_path: fall back to /tmp when $TMPDIR is long */
    if (!tmp || !*tmp || strlen(tmp) > 60) tmp = "/tmp";
    if (asprintf(&s, "%s/tmpi-alloc.%.20s.%08x", tmp, job && *job ? job : "0", (unsigned)token) < 0)
        return NULL;
    return s;
}

int launch_alloc_start(struct placement *place, const char *keyhex, uint32_t timeout, int sigfd,
                       struct launch_alloc *al)
{
    *al = (struct launch_alloc){.in_wfd = -1, .out_rfd = -1};
    char *tmpid = launch_find_tmpid();
    char *nodes = nodelist_arg(place);
    char *sockbase = socket_base();
    uint16_t *ports = calloc(place->nnodes, sizeof *ports);
    char nn[48], nt[48];
    int in[2] = {-1, -1}, out[2] = {-1, -1}, r = 0;
    if (!tmpid || !nodes || !sockbase || !ports) {
        r = -ENOMEM;
        goto out;
    }
    snprintf(nn, sizeof nn, "--nodes=%u", place->nnodes);
    snprintf(nt, sizeof nt, "--ntasks=%u", place->nnodes);
    const char *srun = getenv("TMPI_SRUN");
    char *argv[] = {(char *)(srun && *srun ? srun : "srun"),
                    nn,
                    nt,
                    "--ntasks-per-node=1",
                    nodes,
                    "--whole",
                    "--overlap",
                    "--cpu-bind=none",
                    "--input=all",
                    "--label",
                    "--kill-on-bad-exit=1",
                    "--mpi=none",
                    "--quiet",
                    "--job-name=tmpid",
                    "/bin/sh",
                    "-c",
                    "exec \"$@\" --socket \"$TMPI_ALLOC_SOCK.${SLURM_PROCID:-0}.sock\"",
                    "sh",
                    tmpid,
                    "--private",
                    "--key-fd",
                    "0",
                    "--listen",
                    ":0",
                    "--ready-fd",
                    "1",
                    "--log-level",
                    "warning",
                    NULL};
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
        setenv("TMPI_ALLOC_SOCK", sockbase, 1) < 0) {
        r = -errno;
        goto out;
    }
    pid_t pid = fork();
    int ferr = errno;
    if (pid == 0) exec_srun(argv, in[0], out[1]);
    unsetenv("TMPI_ALLOC_SOCK"); /* srun's alone */
    /* srun's ends: with ours closed, srun's exit is an end of file on its output */
    close(in[0]);
    close(out[1]);
    in[0] = out[1] = -1;
    if (pid < 0) {
        r = -ferr;
        goto out;
    }
    al->srun = pid;
    al->in_wfd = in[1];
    al->out_rfd = out[0];
    in[1] = out[0] = -1;
    /* The key, then the pipe stays open: it is the agents' lifeline. */
    char line[LAUNCH_ALLOC_KEY_HEX + 2];
    snprintf(line, sizeof line, "%s\n", keyhex);
    ssize_t w = write(al->in_wfd, line, strlen(line));
    int werr = errno;
    explicit_bzero(line, sizeof line);
    if (w < 0 && werr != EPIPE) {
        r = -werr;
        fprintf(stderr, "tmpi-launch: srun did not take the allocation's key: %s\n",
                strerror(werr));
        goto out;
    }
    /* A pipe takes the 65 bytes whole, or fails with EPIPE: srun has ended already (a bad
     * option, no allocation), which its output's end below reports. */
    r = w < 0 ? -EPIPE : read_ports(al->out_rfd, sigfd, timeout, ports, place->nnodes);
    if (r == -ETIMEDOUT)
        fprintf(stderr,
                "tmpi-launch: the agents of the allocation did not report their ports within "
                "%u s (TMPI_ALLOC_TIMEOUT)\n",
                timeout);
    else if (r == -EPIPE)
        fprintf(stderr, "tmpi-launch: the agents of the allocation did not start (srun ended; "
                        "its messages are above)\n");
    else if (r == -EPROTO)
        fprintf(stderr, "tmpi-launch: srun's output names a task or port that does not exist\n");
    else if (r < 0 && r != -EINTR)
        fprintf(stderr, "tmpi-launch: reading srun's output: %s\n", strerror(-r));
    for (uint32_t i = 0; r == 0 && i < place->nnodes; i++)
        place->nodes[i].port = ports[i];
out:
    if (r < 0 && r != -EINTR && r != -ETIMEDOUT && r != -EPIPE && r != -EPROTO && !al->srun)
        fprintf(stderr, "tmpi-launch: cannot start the allocation's agents: %s\n", strerror(-r));
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0) close(in[i]);
        if (out[i] >= 0) close(out[i]);
    }
    free(tmpid);
    free(nodes);
    free(sockbase);
    free(ports);
    return r;
}

void launch_alloc_stop(struct launch_alloc *al)
{
    if (al->in_wfd >= 0) close(al->in_wfd); /* the agents' lifeline */
    al->in_wfd = -1;
    if (al->srun > 0) {
        int st = 0;
        if (!reap(al->srun, ALLOC_STOP_TIMEOUT_MS, &st)) {
            fprintf(stderr, "tmpi-launch: the allocation's agents did not stop; ending srun\n");
            kill(al->srun, SIGTERM);
            if (!reap(al->srun, ALLOC_STOP_TIMEOUT_MS, &st)) {
                kill(al->srun, SIGKILL);
                reap(al->srun, -1, &st);
            }
        }
        al->srun = 0;
    }
    if (al->out_rfd >= 0) close(al->out_rfd);
    al->out_rfd = -1;
}
