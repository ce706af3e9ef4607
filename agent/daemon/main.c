/* main.c — tmpid's command line.  See tmpid(8).
 *
 * Three steps, each its own function: parse_args (the command line into struct args, nothing
 * else), configure (config file, then the command line over it, then the checks that need
 * both), and agent_run (agent.c: set-up and the run loop).  main only sequences them and has
 * one cleanup path.  Exit codes: 0 done, 1 a failure at run time (memory, unreadable config,
 * the agent failed), 2 a usage error. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sodium.h>
#include <unistd.h>

#include "agent.h"
#include "agent_run.h"
#include "fabric.h"
#include "host_proc.h"
#include "jobhost.h"
#include "interpose.h"
#include "keyfile.h"
#include "log.h"
#include "mesh.h"

#define DEFAULT_CONFIG TMPI_SYSCONFDIR "/tmpi/tmpid.conf"
#define MAX_PEERS 64 /* --peer options; a config file may list more */
#define DEFAULT_LISTEN ":7470"

enum { EXIT_RUN = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
    fprintf(f, "usage: tmpid [OPTIONS]\n"
               "The TMPI node agent: runs MPI jobs as threads. Stays in the foreground.\n"
               "  --config FILE      settings file (default " DEFAULT_CONFIG ", if present)\n"
               "  --socket PATH      local control socket (default " TMPI_SYSTEM_SOCKET ")\n"
               "  --name NAME        node name shown to users (default: host name)\n"
               "  --listen HOST:PORT accept other agents here (port default 7470)\n"
               "  --key-file FILE    cluster key shared by the agents (>= 32 bytes, mode 600)\n"
               "  --peer HOST:PORT   keep a connection to this agent (repeatable)\n"
               "  --log-level LEVEL  err, warning, notice, info or debug\n"
               "  --private          an agent for one tmpi-launch: no config file\n"
               "  --key-fd N         read the cluster key from fd N (one line of hex digits);\n"
               "                     the agent stops when fd N's writer closes it\n"
               "  --ready-fd N       write READY=1 (and PORT=P when listening) to fd N once\n"
               "                     ready, then close it\n"
               "  --check-config [FILE]  check a settings file (default: the one --config or\n"
               "                     the default names) and the key it names; do not start\n"
               "  --version          print the version\n"
               "  --help             this text\n");
}

/* The command line as given; NULL / 0 / -1: not given.  Strings point into argv. */
struct args {
    const char *config, *socket_path, *name, *level, *listen, *key_file;
    const char *peers[MAX_PEERS];
    size_t npeers;
    int private_agent;
    int ready_fd;
    int key_fd;
    int check_config;                /* --check-config: check, report and exit */
    const char *check_file;          /* --check-config FILE */
    const char *job_host, *job_user; /* internal: how the agent starts a job host (jobhost.h) */
    const char *fabric; /* internal: the agent's transport auto decision (fabric.h), "-": none */
};

/* Prints "tmpid: ..." and returns code, so an error is one line: return fail(2, "..."). */
static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("tmpid: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

enum {
    OPT_CONFIG = 256,
    OPT_SOCKET,
    OPT_NAME,
    OPT_LISTEN,
    OPT_KEY_FILE,
    OPT_PEER,
    OPT_LOG_LEVEL,
    OPT_PRIVATE,
    OPT_READY_FD,
    OPT_KEY_FD,
    OPT_VERSION,
    OPT_HELP,
    OPT_JOB_HOST,
    OPT_JOB_USER,
    OPT_FABRIC,
    OPT_PROBE_FABRIC,
    OPT_CHECK_CONFIG
};

static int parse_fd(const char *s, int *ret)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    struct stat st;
    if (errno || end == s || *end || v < 0 || v > 1 << 20 || fstat((int)v, &st) < 0) return -1;
    *ret = (int)v;
    return 0;
}

/* -1: go on; else main returns this code (--help, --version, a usage error). */
static int parse_args(int argc, char **argv, struct args *o)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, OPT_CONFIG},
        {"socket", required_argument, NULL, OPT_SOCKET},
        {"name", required_argument, NULL, OPT_NAME},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"key-file", required_argument, NULL, OPT_KEY_FILE},
        {"peer", required_argument, NULL, OPT_PEER},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"private", no_argument, NULL, OPT_PRIVATE},
        {"ready-fd", required_argument, NULL, OPT_READY_FD},
        {"key-fd", required_argument, NULL, OPT_KEY_FD},
        {"version", no_argument, NULL, OPT_VERSION},
        {"help", no_argument, NULL, OPT_HELP},
        {"job-host", required_argument, NULL, OPT_JOB_HOST},
        {"job-user", required_argument, NULL, OPT_JOB_USER},
        {"check-config", optional_argument, NULL, OPT_CHECK_CONFIG},
        {"fabric", required_argument, NULL, OPT_FABRIC},
        {"probe-fabric", no_argument, NULL, OPT_PROBE_FABRIC},
        {0},
    };
    *o = (struct args){.ready_fd = -1, .key_fd = -1};
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_CONFIG:
            o->config = optarg;
            break;
        case OPT_SOCKET:
            o->socket_path = optarg;
            break;
        case OPT_NAME:
            o->name = optarg;
            break;
        case OPT_LISTEN:
            o->listen = optarg;
            break;
        case OPT_KEY_FILE:
            o->key_file = optarg;
            break;
        case OPT_PEER:
            if (o->npeers == MAX_PEERS || !*optarg)
                return fail(EXIT_USAGE, "--peer: at most %d, each HOST:PORT", MAX_PEERS);
            o->peers[o->npeers++] = optarg;
            break;
        case OPT_LOG_LEVEL:
            o->level = optarg;
            break;
        case OPT_PRIVATE:
            o->private_agent = 1;
            break;
        case OPT_READY_FD:
            if (parse_fd(optarg, &o->ready_fd) < 0)
                return fail(EXIT_USAGE, "--ready-fd: not an open file descriptor: %s", optarg);
            break;
        case OPT_KEY_FD:
            if (parse_fd(optarg, &o->key_fd) < 0)
                return fail(EXIT_USAGE, "--key-fd: not an open file descriptor: %s", optarg);
            break;
        case OPT_JOB_HOST:
            o->job_host = optarg;
            break;
        case OPT_JOB_USER:
            o->job_user = optarg;
            break;
        case OPT_FABRIC:
            o->fabric = optarg;
            break;
        case OPT_PROBE_FABRIC: /* internal: the agent's look for a fabric (fabric.c) */
            return agent_fabric_probe_main();
        case OPT_CHECK_CONFIG:
            o->check_config = 1;
            if (optarg) o->check_file = optarg;
            break;
        case OPT_VERSION:
            printf("tmpid %s\n", TMPI_VERSION);
            return 0;
        case 'h':
        case OPT_HELP:
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    /* --check-config FILE: getopt gives an optional argument only as --check-config=FILE */
    if (o->check_config && !o->check_file && optind < argc) o->check_file = argv[optind++];
    if (optind < argc) return fail(EXIT_USAGE, "unexpected argument: %s", argv[optind]);
    if (o->check_file) {
        if (o->config && strcmp(o->config, o->check_file) != 0)
            return fail(EXIT_USAGE, "--check-config FILE and --config FILE name two files");
        o->config = o->check_file;
    }
    return -1;
}

/* *field = a copy of value (when value is given); -ENOMEM. */
static int override(char **field, const char *value)
{
    if (!value) return 0;
    char *s = strdup(value);
    if (!s) return -ENOMEM;
    free(*field);
    *field = s;
    return 0;
}

/* Checks on the command line alone, before the config file is read. */
static int check_args(const struct args *o)
{
    if (o->config && o->private_agent)
        return fail(EXIT_USAGE, "--private runs without a config file; drop --config");
    if ((o->socket_path && !*o->socket_path) || (o->name && !*o->name))
        return fail(EXIT_USAGE, "--socket and --name need a non-empty value");
    if ((o->listen && !*o->listen) || (o->key_file && !*o->key_file))
        return fail(EXIT_USAGE, "--listen and --key-file need a non-empty value");
    /* A private agent joins a mesh only with a key handed over --key-fd: the agents
     * tmpi-launch starts for a Slurm allocation (tmpi-launch(1), "Slurm"). */
    if (o->private_agent && (o->key_file || o->npeers))
        return fail(EXIT_USAGE, "a --private agent takes its key from --key-fd only, and no "
                                "--peer");
    if (o->private_agent && o->listen && o->key_fd < 0)
        return fail(EXIT_USAGE, "a --private agent listens only with --key-fd");
    if (o->key_fd >= 0 && o->key_file)
        return fail(EXIT_USAGE, "--key-fd and --key-file name two keys");
    if (o->key_fd >= 0 && o->key_fd == o->ready_fd)
        return fail(EXIT_USAGE, "--key-fd and --ready-fd must be two descriptors");
    return 0;
}

/* cfg = defaults, then the config file, then the command line.  0 or an exit code; cfg is
 * freed by the caller either way. */
static int configure(const struct args *o, struct agent_config *cfg)
{
    int rc = check_args(o);
    if (rc) return rc;
    cfg->private_agent = o->private_agent;
    cfg->key_fd = o->key_fd;
    if (!o->private_agent) {
        const char *path = o->config ? o->config : DEFAULT_CONFIG;
        int r = config_load(cfg, path);
        /* no system config (and none asked for): the defaults */
        if (r < 0 && !(r == -ENOENT && !o->config)) {
            /* -EINVAL: config_load has said what is wrong, with the line */
            if (r != -EINVAL) fail(EXIT_RUN, "cannot read %s: %s", path, strerror(-r));
            return EXIT_RUN;
        }
    }
    if (o->level) {
        int l = log_level_parse(o->level);
        if (l < 0) return fail(EXIT_USAGE, "unknown log level: %s", o->level);
        cfg->log_level = l;
    }
    if (override(&cfg->socket_path, o->socket_path) < 0 || override(&cfg->name, o->name) < 0 ||
        override(&cfg->listen, o->listen) < 0 || override(&cfg->key_file, o->key_file) < 0)
        return fail(EXIT_RUN, "out of memory");
    for (size_t i = 0; i < o->npeers; i++)
        if (config_add_peer(cfg, o->peers[i]) < 0) return fail(EXIT_RUN, "out of memory");
    if (cfg->key_fd >= 0) {
        /* the command line wins over the file, as for every other setting */
        free(cfg->key_file);
        cfg->key_file = NULL;
    }
    if (cfg->npeers && !config_has_key(cfg)) return fail(EXIT_USAGE, "--peer needs --key-file");
    /* An agent with a cluster key joins the mesh: on all addresses, the default port. */
    if (config_has_key(cfg) && !cfg->listen && !o->private_agent &&
        override(&cfg->listen, DEFAULT_LISTEN) < 0)
        return fail(EXIT_RUN, "out of memory");
    if (cfg->listen && !config_has_key(cfg))
        return fail(EXIT_USAGE, "--listen needs --key-file: agents accept only peers that hold "
                                "the cluster key");
    if (!cfg->socket_path || !cfg->name) return fail(EXIT_RUN, "out of memory");
    return 0;
}

/* agent_configure_fn for reloads: the same steps as at start, over fresh defaults. */
static int reconfigure(void *arg, struct agent_config *cfg)
{
    return configure(arg, cfg);
}

/* tmpid --check-config: everything the agent would refuse at start that can be known without
 * starting: the file (each bad line named), the combination of settings, the key file (mode,
 * size) and the addresses.  0 when it would start, else EXIT_RUN. */
static int check_config(const struct args *o, struct agent_config *cfg)
{
    const char *path = o->config ? o->config : DEFAULT_CONFIG;
    if (!o->config && access(path, F_OK) < 0) {
        printf("%s: no such file; tmpid runs with the built-in settings\n", path);
        return 0;
    }
    int rc = configure(o, cfg);
    if (rc) return EXIT_RUN;
    int bad = 0;
    if (cfg->key_file) {
        struct mesh_key key;
        char err[256];
        if (keyfile_load(cfg->key_file, &key, err, sizeof err) < 0) {
            fail(EXIT_RUN, "%s: [mesh] key_file: %s", path, err);
            bad = 1;
        }
        sodium_memzero(&key, sizeof key);
    }
    char host[256], port[32];
    if (cfg->listen && mesh_parse_address(cfg->listen, host, sizeof host, port, sizeof port) < 0) {
        fail(EXIT_RUN, "%s: [mesh] listen: not HOST:PORT or :PORT: %s", path, cfg->listen);
        bad = 1;
    }
    for (size_t i = 0; i < cfg->npeers; i++)
        if (mesh_parse_address(cfg->peers[i], host, sizeof host, port, sizeof port) < 0 || !*host) {
            fail(EXIT_RUN, "%s: [mesh] peers: not HOST:PORT: %s", path, cfg->peers[i]);
            bad = 1;
        }
    if (bad) return EXIT_RUN;
    printf("%s: OK\n", path);
    return 0;
}

int main(int argc, char **argv)
{
    /* Before anything can start a thread: the overrides need the real libc functions. */
    if (interpose_init() < 0)
        return fail(EXIT_RUN, "cannot resolve the libc functions it overrides");

    struct args o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;

    struct agent a = {0};
    if (config_defaults(&a.cfg) < 0) {
        rc = fail(EXIT_RUN, "out of memory");
        goto out;
    }
    if (o.check_config) {
        rc = check_config(&o, &a.cfg);
        goto out;
    }
    rc = configure(&o, &a.cfg);
    if (rc) goto out;
    log_set_level(a.cfg.log_level);
    log_init(a.cfg.name);
    if (o.job_host) {
        /* the configuration is read: the ranks must not inherit the agent's copy */
        if (o.config && strcmp(o.config, JOBHOST_CONFIG_PATH) == 0) close(JOBHOST_CONFIG_FD);
        if (o.fabric) {
            a.fabric_probed = 1;
            snprintf(a.fabric, sizeof a.fabric, "%s", strcmp(o.fabric, "-") ? o.fabric : "");
        }
        rc = jobhost_main(&a, o.job_host, o.job_user);
        config_free(&a.cfg);
        /* Not exit(): the ranks' copies of the program stay mapped after the job
         * (image_copy.h), and a handler registered for process exit in a rank's name that
         * did not become the rank's own (rank_exit.h; atexit under ThreadSanitizer, whose
         * runtime may register a module's handlers for process exit) must not run after the
         * job's state (its argv, libtmpi) is gone. */
        fflush(NULL);
        _exit(rc);
    }
    jobhost_setup("/proc/self/exe");
    /* an agent without a mesh (a private one) runs single-node jobs only: no data links */
    if (a.cfg.listen || a.cfg.npeers) agent_fabric_probe(&a, a.cfg.transport);
    if (!o.private_agent) {
        a.configure = reconfigure;
        a.configure_arg = &o;
    }
    rc = agent_run(&a, o.ready_fd) < 0 ? EXIT_RUN : 0;
    agent_fabric_wait(&a);
out:
    config_free(&a.cfg);
    return rc;
}
