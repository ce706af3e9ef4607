/* main.c — tmpid's command line.  See tmpid(8). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "agent_run.h"
#include "interpose.h"
#include "jobhost.h"
#include "log.h"

#define DEFAULT_CONFIG TMPI_SYSCONFDIR "/tmpi/tmpid.conf"

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
               "  --ready-fd N       write READY=1 to fd N and close it once ready\n"
               "  --version          print the version\n"
               "  --help             this text\n");
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
    OPT_VERSION,
    OPT_HELP,
    OPT_JOB_HOST, /* internal: the agent starts job hosts with these (jobhost.h) */
    OPT_JOB_USER
};

int main(int argc, char **argv)
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
        {"version", no_argument, NULL, OPT_VERSION},
        {"help", no_argument, NULL, OPT_HELP},
        {"job-host", required_argument, NULL, OPT_JOB_HOST},
        {"job-user", required_argument, NULL, OPT_JOB_USER},
        {0},
    };
    const char *config = NULL, *socket_path = NULL, *name = NULL, *level = NULL;
    const char *listen = NULL, *key_file = NULL;
    const char *peers[64];
    size_t npeers = 0;
    int private_agent = 0, ready_fd = -1;
    const char *job_host = NULL, *job_user = NULL;

    /* Before anything can start a thread: the overrides need the real libc functions. */
    if (interpose_init() < 0) {
        fprintf(stderr, "tmpid: cannot resolve the libc functions it overrides\n");
        return 1;
    }

    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_CONFIG:
            config = optarg;
            break;
        case OPT_SOCKET:
            socket_path = optarg;
            break;
        case OPT_NAME:
            name = optarg;
            break;
        case OPT_LISTEN:
            listen = optarg;
            break;
        case OPT_KEY_FILE:
            key_file = optarg;
            break;
        case OPT_PEER:
            if (npeers == sizeof peers / sizeof peers[0] || !*optarg) {
                fprintf(stderr, "tmpid: --peer: at most 64, each HOST:PORT\n");
                return 2;
            }
            peers[npeers++] = optarg;
            break;
        case OPT_LOG_LEVEL:
            level = optarg;
            break;
        case OPT_PRIVATE:
            private_agent = 1;
            break;
        case OPT_READY_FD: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            struct stat st;
            if (errno || *end || v < 0 || v > 1 << 20 || fstat((int)v, &st) < 0) {
                fprintf(stderr, "tmpid: --ready-fd: not an open file descriptor: %s\n", optarg);
                return 2;
            }
            ready_fd = (int)v;
            break;
        }
        case OPT_JOB_HOST:
            job_host = optarg;
            break;
        case OPT_JOB_USER:
            job_user = optarg;
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
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tmpid: unexpected argument: %s\n", argv[optind]);
        return 2;
    }

    struct agent a = {0};
    int rc = 0;
    if (config_defaults(&a.cfg) < 0) {
        fprintf(stderr, "tmpid: out of memory\n");
        return 1;
    }
    a.cfg.private_agent = private_agent;
    if (config && private_agent) {
        fprintf(stderr, "tmpid: --private runs without a config file; drop --config\n");
        {
            rc = 2;
            goto out;
        }
    }
    if (!private_agent) {
        const char *path = config ? config : DEFAULT_CONFIG;
        int r = config_load(&a.cfg, path);
        if (r == -ENOENT && !config) {
            /* no system config: defaults */
        } else if (r < 0) {
            if (r != -EINVAL) fprintf(stderr, "tmpid: cannot read %s: %s\n", path, strerror(-r));
            {
                rc = 1;
                goto out;
            }
        }
    }
    if (level) {
        int l = log_level_parse(level);
        if (l < 0) {
            fprintf(stderr, "tmpid: unknown log level: %s\n", level);
            {
                rc = 2;
                goto out;
            }
        }
        a.cfg.log_level = l;
    }
    if ((socket_path && !*socket_path) || (name && !*name)) {
        fprintf(stderr, "tmpid: --socket and --name need a non-empty value\n");
        {
            rc = 2;
            goto out;
        }
    }
    if (socket_path) {
        free(a.cfg.socket_path);
        a.cfg.socket_path = strdup(socket_path);
    }
    if (name) {
        free(a.cfg.name);
        a.cfg.name = strdup(name);
    }
    if ((listen && !*listen) || (key_file && !*key_file)) {
        fprintf(stderr, "tmpid: --listen and --key-file need a non-empty value\n");
        {
            rc = 2;
            goto out;
        }
    }
    if (private_agent && (listen || key_file)) {
        fprintf(stderr, "tmpid: a --private agent does not join a mesh\n");
        {
            rc = 2;
            goto out;
        }
    }
    if (listen) {
        free(a.cfg.listen);
        a.cfg.listen = strdup(listen);
    }
    if (key_file) {
        free(a.cfg.key_file);
        a.cfg.key_file = strdup(key_file);
    }
    for (size_t i = 0; i < npeers; i++)
        if (config_add_peer(&a.cfg, peers[i]) < 0) {
            fprintf(stderr, "tmpid: out of memory\n");
            rc = 1;
            goto out;
        }
    if (a.cfg.npeers && !a.cfg.key_file) {
        fprintf(stderr, "tmpid: --peer needs --key-file\n");
        rc = 2;
        goto out;
    }
    if (private_agent && npeers) {
        fprintf(stderr, "tmpid: a --private agent does not join a mesh\n");
        rc = 2;
        goto out;
    }
    /* An agent with a cluster key joins the mesh: on all addresses, the default port. */
    if (a.cfg.key_file && !a.cfg.listen && !private_agent) a.cfg.listen = strdup(":7470");
    if (a.cfg.listen && !a.cfg.key_file) {
        fprintf(stderr, "tmpid: --listen needs --key-file: agents accept only peers that hold "
                        "the cluster key\n");
        {
            rc = 2;
            goto out;
        }
    }
    if (!a.cfg.socket_path || !a.cfg.name) {
        fprintf(stderr, "tmpid: out of memory\n");
        {
            rc = 1;
            goto out;
        }
    }
    log_set_level(a.cfg.log_level);

    if (job_host) {
        rc = jobhost_main(&a, job_host, job_user);
        goto out;
    }
    jobhost_setup("/proc/self/exe", config);
    rc = agent_run(&a, ready_fd) < 0 ? 1 : 0;
out:
    config_free(&a.cfg);
    return rc;
}
