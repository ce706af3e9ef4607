/* launch_main.c — tmpi-launch: command line, validation and the overall flow.
 *
 *   tmpi-launch -n N [--agent SOCKET] [--tag-output] [-x VAR[=VALUE]] [--timeout SEC]
 *               [-genv VAR VALUE] [-genvlist VAR,...] [-wdir DIR] [--output-filename DIR]
 *               [--hostfile FILE | -H HOST[,HOST...]] [--ppn K] [--map-by slot|node|ppr:K:node]
 *               [--oversubscribe] [--display-map] PROGRAM [ARGS...]
 *
 * The common Open MPI and Hydra spellings are accepted (-np, -N, --npernode, -ppn, -genv,
 * -genvlist, -wdir, MPIEXEC_TIMEOUT); anything else that looks like an option is an error that
 * names it, never passed on.
 *
 * Everything that can be checked locally (options, the program file) is checked before any
 * agent is contacted or started, so a typo never costs an agent start-up.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "hostlist.h"
#include "launch.h"
#include "tmpi_config.h"

/* Largest N we accept: ranks are C ints in MPI, and the agent applies its own limits. */
#define LAUNCH_MAX_NPROCS ((uint32_t)INT_MAX)

static void usage(FILE *f)
{
    fputs("usage: tmpi-launch -n N [options] PROGRAM [ARGS...]\n"
          "Runs PROGRAM (built with tmpicc) as an MPI job of N ranks.\n"
          "  -n, -np N            number of ranks (at least 1; default inside a Slurm\n"
          "                       allocation: $SLURM_NTASKS)\n"
          "  --agent SOCKET       the agent to use (default: $TMPI_AGENT, else " TMPI_SYSTEM_SOCKET
          ");\n"
          "                       without it, a private agent is started when none answers\n"
          "  --tag-output         prefix every output line with \"[RANK] \"\n"
          "  -x VAR[=VALUE]       set VAR in the ranks' environment (repeatable); without\n"
          "                       VALUE, forward this shell's value\n"
          "  -genv VAR VALUE      set VAR to VALUE in the ranks' environment (Hydra)\n"
          "  -genvlist VAR[,VAR...]  forward these variables of this shell (Hydra)\n"
          "  --timeout SEC        cancel the job after SEC seconds (0: never; default:\n"
          "                       $MPIEXEC_TIMEOUT)\n"
          "  -wdir, --wdir DIR    the ranks' working directory (default: this one)\n"
          "  --output-filename DIR\n"
          "                       write each rank's output to DIR/1/rank.N/stdout and\n"
          "                       DIR/1/rank.N/stderr instead of this terminal\n"
          "Placement (see tmpi-launch(1)):\n"
          "  --hostfile FILE      hosts from FILE: lines \"HOST [slots=N] [max_slots=M]\n"
          "                       [port=P]\" or \"HOST:N\"; '#' starts a comment\n"
          "  -H, --host HOST[,HOST...]\n"
          "                       hosts on the command line; HOST:N gives N slots\n"
          "                       (default: SLURM_JOB_NODELIST in a Slurm job, else this node)\n"
          "  --ppn, -ppn, -N, --npernode K\n"
          "                       exactly K ranks per node (the last may get fewer)\n"
          "  --map-by slot|node|ppr:K:node\n"
          "                       fill each host's slots in turn (slot, the default), deal\n"
          "                       ranks round robin over the hosts (node), or K per node\n"
          "  --oversubscribe      allow more ranks than slots\n"
          "  --display-map        print which node runs each rank and exit (PROGRAM optional)\n"
          "  -h, --help           this text\n"
          "  --version            print the version\n"
          "Options end at PROGRAM; everything after it is passed to the program.\n",
          f);
}

/* A usage error: one line on stderr, status 2. */
static int bad_usage(const char *fmt, const char *arg)
{
    fputs("tmpi-launch: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (try --help)\n", stderr);
    return LAUNCH_EXIT_USAGE;
}

/* Parse a whole decimal number in [min, max]; no sign, no trailing junk. */
static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *ret)
{
    if (!s || *s < '0' || *s > '9') return -EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max) return -EINVAL;
    *ret = (uint32_t)v;
    return 0;
}

static bool valid_env_name(const char *s, size_t len)
{
    if (len == 0 || (s[0] >= '0' && s[0] <= '9')) return false;
    for (size_t i = 0; i < len; i++)
        if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return false;
    return true;
}

/* -x VAR=VALUE sets, -x VAR forwards our own value.  Names point into argv: for VAR=VALUE the
 * name is copied, since argv must stay intact for the error messages. */
static int add_env(struct launch_opts *o, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (!valid_env_name(arg, nlen)) return bad_usage("-x %s: not a valid variable name", arg);
    const char *value = eq ? eq + 1 : getenv(arg);
    if (!value) return bad_usage("-x %s: the variable is not set here (use -x VAR=VALUE)", arg);
    char *name = strndup(arg, nlen);
    Tmpi__EnvVar *nenv = realloc(o->env, (o->n_env + 1) * sizeof *nenv);
    if (!name || !nenv) {
        free(name);
        if (nenv) o->env = nenv;
        fputs("tmpi-launch: out of memory\n", stderr);
        return LAUNCH_EXIT_FAILURE;
    }
    o->env = nenv;
    tmpi__env_var__init(&o->env[o->n_env]);
    o->env[o->n_env].name = name;
    o->env[o->n_env].value = (char *)value;
    o->n_env++;
    return 0;
}

/* -genv VAR VALUE: like -x VAR=VALUE, from two arguments. */
static int add_env_pair(struct launch_opts *o, const char *name, const char *value)
{
    if (!valid_env_name(name, strlen(name)))
        return bad_usage("-genv %s: not a valid variable name", name);
    char *copy = strdup(name);
    Tmpi__EnvVar *nenv = realloc(o->env, (o->n_env + 1) * sizeof *nenv);
    if (!copy || !nenv) {
        free(copy);
        if (nenv) o->env = nenv;
        fputs("tmpi-launch: out of memory\n", stderr);
        return LAUNCH_EXIT_FAILURE;
    }
    o->env = nenv;
    tmpi__env_var__init(&o->env[o->n_env]);
    o->env[o->n_env].name = copy;
    o->env[o->n_env].value = (char *)value;
    o->n_env++;
    return 0;
}

/* -genvlist A,B,C: forward each, as -x A -x B -x C. */
static int add_env_list(struct launch_opts *o, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy) {
        fputs("tmpi-launch: out of memory\n", stderr);
        return LAUNCH_EXIT_FAILURE;
    }
    int r = 0;
    for (char *name = strtok_r(copy, ",", &save); name && r == 0;
         name = strtok_r(NULL, ",", &save)) {
        const char *value = getenv(name);
        if (!valid_env_name(name, strlen(name)))
            r = bad_usage("-genvlist: %s is not a valid variable name", name);
        else if (!value)
            r = bad_usage("-genvlist: %s is not set here", name);
        else
            r = add_env_pair(o, name, value);
    }
    free(copy);
    return r;
}

/* --map-by ppr:K:node (Open MPI's "K processes per resource", node the only resource here). */
static int parse_ppr(const char *v, uint32_t *ret)
{
    if (strncmp(v, "ppr:", 4) != 0) return -EINVAL;
    const char *k = v + 4, *colon = strchr(k, ':');
    if (!colon || strcmp(colon, ":node") != 0) return -EINVAL;
    char num[16];
    size_t len = (size_t)(colon - k);
    if (len == 0 || len >= sizeof num) return -EINVAL;
    memcpy(num, k, len);
    num[len] = '\0';
    return parse_u32(num, 1, HOSTLIST_MAX_SLOTS, ret);
}

/* Returns the value of an option that takes one: "--opt VALUE" or "--opt=VALUE" (long
 * options only).  NULL when missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *arg, size_t namelen)
{
    if (arg[namelen] == '=') return arg + namelen + 1;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

static bool is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || (arg[1] == '-' && arg[n] == '='));
}

/* Fills o; returns 0, -1 after --help/--version (exit 0), or an exit status. */
static int parse_args(int argc, char **argv, struct launch_opts *o)
{
    bool have_n = false, have_timeout = false;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (a[0] != '-' || a[1] == '\0') break; /* PROGRAM: the rest belongs to it */
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(a, "--version") == 0) {
            printf("tmpi-launch (TMPI) %s\n", TMPI_VERSION);
            return -1;
        } else if (is_opt(a, "-n") || is_opt(a, "-np") || is_opt(a, "--np")) {
            v = opt_value(argc, argv, &i, a, strcspn(a, "="));
            if (!v) return bad_usage("%s needs the number of ranks", a);
            if (parse_u32(v, 1, LAUNCH_MAX_NPROCS, &o->nprocs) < 0)
                return bad_usage("-n %s: the number of ranks must be a whole number >= 1", v);
            have_n = true;
        } else if (is_opt(a, "--agent")) {
            v = opt_value(argc, argv, &i, a, strlen("--agent"));
            if (!v || !*v) return bad_usage("%s needs a socket path", "--agent");
            o->agent = v;
        } else if (strcmp(a, "--tag-output") == 0) {
            o->tag_output = true;
        } else if (is_opt(a, "--timeout")) {
            v = opt_value(argc, argv, &i, a, strlen("--timeout"));
            if (!v) return bad_usage("%s needs a number of seconds", "--timeout");
            if (parse_u32(v, 0, UINT32_MAX, &o->timeout_sec) < 0)
                return bad_usage("--timeout %s: not a whole number of seconds", v);
            have_timeout = true;
        } else if (is_opt(a, "-wdir") || is_opt(a, "--wdir")) {
            const char *name = a[1] == '-' ? "--wdir" : "-wdir";
            v = opt_value(argc, argv, &i, a, strlen(name));
            if (!v || !*v) return bad_usage("%s needs a directory", name);
            o->wdir = v;
        } else if (is_opt(a, "--output-filename")) {
            v = opt_value(argc, argv, &i, a, strlen("--output-filename"));
            if (!v || !*v) return bad_usage("%s needs a directory", "--output-filename");
            o->output_dir = v;
        } else if (strcmp(a, "-genv") == 0) {
            if (i + 2 >= argc) return bad_usage("%s needs VAR and VALUE", "-genv");
            int r = add_env_pair(o, argv[i + 1], argv[i + 2]);
            if (r) return r;
            i += 2;
        } else if (strcmp(a, "-genvlist") == 0) {
            if (i + 1 >= argc) return bad_usage("%s needs VAR[,VAR...]", "-genvlist");
            int r = add_env_list(o, argv[++i]);
            if (r) return r;
        } else if (is_opt(a, "--hostfile")) {
            v = opt_value(argc, argv, &i, a, strlen("--hostfile"));
            if (!v || !*v) return bad_usage("%s needs a file name", "--hostfile");
            if (o->hostfile) return bad_usage("%s given twice", "--hostfile");
            o->hostfile = v;
        } else if (is_opt(a, "-H") || is_opt(a, "--host")) {
            const char *name = a[1] == '-' ? "--host" : "-H";
            v = opt_value(argc, argv, &i, a, strlen(name));
            if (!v || !*v) return bad_usage("%s needs HOST[,HOST...]", name);
            if (o->hosts) return bad_usage("%s given twice (list every host in one)", name);
            o->hosts = v;
        } else if (is_opt(a, "--ppn") || is_opt(a, "-ppn") || is_opt(a, "-N") ||
                   is_opt(a, "--npernode")) {
            size_t namelen = strcspn(a, "=");
            v = opt_value(argc, argv, &i, a, namelen);
            if (!v) return bad_usage("%s needs the number of ranks per node", a);
            if (parse_u32(v, 1, HOSTLIST_MAX_SLOTS, &o->ppn) < 0)
                return bad_usage("--ppn %s: the ranks per node must be a whole number from 1 "
                                 "to 1048576",
                                 v);
        } else if (is_opt(a, "--map-by")) {
            v = opt_value(argc, argv, &i, a, strlen("--map-by"));
            if (!v) return bad_usage("%s needs slot, node or ppr:K:node", "--map-by");
            if (strcmp(v, "slot") == 0)
                o->map_by = PLACEMENT_MAP_SLOT;
            else if (strcmp(v, "node") == 0)
                o->map_by = PLACEMENT_MAP_NODE;
            else if (strncmp(v, "ppr:", 4) == 0) {
                if (parse_ppr(v, &o->ppn) < 0)
                    return bad_usage("--map-by %s: must be ppr:K:node with K from 1 to 1048576", v);
            } else
                return bad_usage("--map-by %s: must be slot, node or ppr:K:node", v);
        } else if (strcmp(a, "--oversubscribe") == 0) {
            o->oversubscribe = true;
        } else if (strcmp(a, "--display-map") == 0) {
            o->display_map = true;
        } else if (strcmp(a, "-x") == 0) {
            if (i + 1 >= argc) return bad_usage("%s needs VAR or VAR=VALUE", "-x");
            int r = add_env(o, argv[++i]);
            if (r) return r;
        } else {
            return bad_usage("unknown option %s", a);
        }
    }
    if (!have_n) {
        /* Inside a Slurm allocation (salloc, sbatch), the allocation says how many: as srun and
         * mpirun do, run one rank per task of the allocation. */
        const char *nt = getenv("SLURM_NTASKS");
        if (!nt || !*nt)
            return bad_usage("%s", "the number of ranks is missing: -n N (or run inside a Slurm "
                                   "allocation, which sets SLURM_NTASKS)");
        if (parse_u32(nt, 1, LAUNCH_MAX_NPROCS, &o->nprocs) < 0)
            return bad_usage("SLURM_NTASKS=%s: not a number of ranks (a whole number >= 1); "
                             "give -n N",
                             nt);
    }
    /* MPIEXEC_TIMEOUT (MPI-standard mpiexec environment): the default for --timeout. */
    const char *et = getenv("MPIEXEC_TIMEOUT");
    if (!have_timeout && et && *et && parse_u32(et, 0, UINT32_MAX, &o->timeout_sec) < 0)
        return bad_usage("MPIEXEC_TIMEOUT=%s: not a whole number of seconds", et);
    o->cancel_grace_sec = LAUNCH_CANCEL_GRACE_SEC;
    const char *cg = getenv("TMPI_CANCEL_GRACE");
    if (cg && *cg && parse_u32(cg, 1, LAUNCH_CANCEL_GRACE_MAX, &o->cancel_grace_sec) < 0)
        return bad_usage("TMPI_CANCEL_GRACE=%s: not a whole number of seconds from 1 to 3600", cg);
    if (o->hostfile && o->hosts)
        return bad_usage("%s", "--hostfile and -H cannot be used together");
    if (i >= argc && o->display_map) return 0;
    if (i >= argc) return bad_usage("%s", "no program given");
    o->program = argv[i];
    o->args = argv + i + 1;
    o->n_args = (size_t)(argc - i - 1);
    /* "-n 2 ./a : -n 3 ./b" (several programs in one job) is not supported yet: refuse it
     * rather than run ./a with the rest as its arguments. */
    for (size_t k = 0; k < o->n_args; k++)
        if (strcmp(o->args[k], ":") == 0)
            return bad_usage("%s", "several programs separated by ':' (MPMD) are not supported "
                                   "yet; run one program per job");
    return 0;
}

/* SIGINT/SIGTERM (cancel) and SIGUSR1/SIGUSR2 (forwarded to the job) are only ever taken from
 * a signalfd, so no handler can interrupt a half-written frame; SIGPIPE is ignored so a dead
 * agent or a closed stdout shows up as EPIPE where it happens. */
static int setup_signals(sigset_t *ret_old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    if (sigprocmask(SIG_BLOCK, &set, ret_old) < 0) return -errno;
    signal(SIGPIPE, SIG_IGN);
    int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

/* A relative -wdir is taken from our own directory: the agent needs an absolute one. */
static int absolute_wdir(struct launch_opts *o, char **ret_alloc)
{
    *ret_alloc = NULL;
    if (!o->wdir || o->wdir[0] == '/') return 0;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd) || asprintf(ret_alloc, "%s/%s", cwd, o->wdir) < 0) {
        *ret_alloc = NULL;
        fprintf(stderr, "tmpi-launch: -wdir %s: %s\n", o->wdir, strerror(errno));
        return LAUNCH_EXIT_FAILURE;
    }
    o->wdir = *ret_alloc;
    return 0;
}

static void free_opts(struct launch_opts *o)
{
    for (size_t i = 0; i < o->n_env; i++)
        free(o->env[i].name);
    free(o->env);
}

int main(int argc, char **argv)
{
    struct launch_opts opts = {0};
    struct launch_program prog = {.fd = -1};
    struct launch_agent agent = {0};
    struct placement place = {0};
    char *wdir_alloc = NULL;
    int status = parse_args(argc, argv, &opts);
    if (status == 0) status = absolute_wdir(&opts, &wdir_alloc);
    if (status) {
        free_opts(&opts);
        return status < 0 ? 0 : status;
    }
    status = launch_place(&opts, &place);
    if (status) goto out;
    if (opts.display_map) {
        placement_print(&place, stdout);
        status = fflush(stdout) == 0 ? 0 : LAUNCH_EXIT_FAILURE;
        goto out;
    }
    status = launch_program_open(opts.program, &prog);
    if (status) goto out;

    sigset_t old;
    int sigfd = setup_signals(&old);
    if (sigfd < 0) {
        fprintf(stderr, "tmpi-launch: cannot set up signal handling: %s\n", strerror(-sigfd));
        status = LAUNCH_EXIT_FAILURE;
        goto out;
    }
    /* Several nodes: the local agent coordinates them over its mesh; a private agent has
     * none, so none is started. */
    bool multi = place.nnodes > 1;
    int fd = multi ? launch_agent_connect_mesh(&opts) : launch_agent_connect(&opts, sigfd, &agent);
    if (fd >= 0) {
        status = launch_job_run(&opts, &prog, multi ? &place : NULL, fd, sigfd);
        close(fd);
    } else {
        status = fd == -EINTR ? LAUNCH_EXIT_INTERRUPTED : LAUNCH_EXIT_FAILURE;
    }
    launch_agent_stop(&agent);
    close(sigfd);
out:
    launch_program_close(&prog);
    placement_free(&place);
    free_opts(&opts);
    free(wdir_alloc);
    return status;
}
