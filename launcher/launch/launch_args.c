/* launch_args.c — tmpi-launch's command line: the options, their checks, the usage text.
 *
 *   tmpi-launch -n N [--agent SOCKET] [--tag-output] [-x VAR[=VALUE]] [--timeout SEC]
 *               [-genv VAR VALUE] [-genvlist VAR,...] [-env VAR VALUE] [-wdir DIR]
 *               [--output-filename DIR] [--bind-to KIND] [--report-bindings]
 *               [--hostfile FILE | -H HOST[,HOST...]] [--ppn K]
 *               [--map-by slot|node|ppr:K:node] [--oversubscribe] [--display-map]
 *               PROGRAM [ARGS...] [: -n N [-x V] [-env V X] [-wdir DIR] PROGRAM [ARGS...]]...
 *
 * The spellings scripts written for Open MPI's mpirun and MPICH's mpiexec hard-code are
 * accepted with their meaning there (-np, -N, --npernode, -ppn, -genv, -genvlist, -wdir,
 * -bind-to, -f, -machinefile, -hostfile, -host, -hosts, -l, -prepend-rank,
 * --merge-stderr-to-stdout, --timestamp-output, -V, --app, MPIEXEC_TIMEOUT; --mca is ignored
 * with a warning and --allow-run-as-root silently); anything else that looks like an option is
 * an error that names it, never passed on.
 *
 * Everything here is checked before any agent is contacted or started, so a typo never costs
 * an agent start-up.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "launch.h"
#include "limits_fmt.h"
#include "slurm.h"
#include "tmpi_config.h"

/* Largest N we accept: ranks are C ints in MPI, and the agent applies its own limits. */
#define LAUNCH_MAX_NPROCS ((uint32_t)INT_MAX)
/* --universe-size: the agent's own limit (agent/jobs/job.h JOB_SPAWN_MAX_UNIVERSE) */
#define LAUNCH_MAX_UNIVERSE 4096

static void usage(FILE *f)
{
    fputs("usage: tmpi-launch -n N [options] PROGRAM [ARGS...] [: -n N [-x VAR] [-env VAR VALUE]\n"
          "                   [-wdir DIR] PROGRAM [ARGS...]]...\n"
          "       tmpi-launch [options] --app FILE\n"
          "Runs PROGRAM (built with tmpicc) as an MPI job of N ranks; programs separated by\n"
          "':' run in one MPI_COMM_WORLD (MPMD), the first N ranks the first program (MPI_APPNUM\n"
          "0), the next ones the second (1), and so on.\n"
          "  -n, -np N            number of ranks (at least 1; default: K per node with -N K,\n"
          "                       else inside a Slurm allocation $SLURM_NTASKS)\n"
          "  --app FILE           the programs from FILE, one per line as after ':'\n"
          "                       (\"-n N [-x VAR] [-env VAR VALUE] [-wdir DIR] PROGRAM ARGS\")\n"
          "  --agent SOCKET       the agent to use (default: $TMPI_AGENT, else " TMPI_SYSTEM_SOCKET
          ");\n"
          "                       without it, a private agent is started when none answers\n"
          "  --tag-output, -l, -prepend-rank, --prepend-rank\n"
          "                       prefix every output line with \"[RANK] \"\n"
          "  --timestamp-output   prefix every output line with the time it arrived\n"
          "  --merge-stderr-to-stdout\n"
          "                       write the ranks' stderr to stdout\n"
          "  -x VAR[=VALUE]       set VAR in the ranks' environment (repeatable); without\n"
          "                       VALUE, forward this shell's value\n"
          "  -genv VAR VALUE      set VAR to VALUE in the ranks' environment (Hydra)\n"
          "  -genvlist VAR[,VAR...]  forward these variables of this shell (Hydra)\n"
          "  -env VAR VALUE       set VAR for this program's ranks only (also after ':', like\n"
          "                       -n, -x and -wdir, which then apply to that program only)\n"
          "  --timeout SEC        cancel the job after SEC seconds (0: never; default:\n"
          "                       $MPIEXEC_TIMEOUT)\n"
          "  --universe-size N    MPI_UNIVERSE_SIZE: the ranks the job may hold with those\n"
          "                       MPI_Comm_spawn starts (one node; default: its CPUs)\n"
          "  --on-deadlock report|abort\n"
          "                       when the agent finds every rank blocked for good: print\n"
          "                       the cycle of waits and keep waiting (report, the default),\n"
          "                       or print it and end the job with status 124 (abort)\n"
          "  -wdir, --wdir DIR    the ranks' working directory (default: this one)\n"
          "  --mem-limit SIZE     the job's memory limit on each node (K, M, G suffixes);\n"
          "                       it is killed when it exceeds it (at most the agent's)\n"
          "  --cpu-limit CPUS     the CPU time the job may use, in CPUs (e.g. 1.5)\n"
          "  --stdin none         rank 0 reads end of file instead of this stdin\n"
          "  --output-filename DIR\n"
          "                       write each rank's output to DIR/1/rank.N/stdout and\n"
          "                       DIR/1/rank.N/stderr instead of this terminal\n"
          "  --bind-to, -bind-to core|hwthread|l3cache|numa|socket|package|none\n"
          "                       pin each rank thread (or carrier) to one object of that\n"
          "                       kind (default: core when a node's rank threads or carriers\n"
          "                       fit its cores, else none; see tmpi-launch(1))\n"
          "  --report-bindings    print each rank's binding on its stderr before it starts\n"
          "  --transport auto|tcp|ofi\n"
          "                       what carries the job's data between nodes: TCP, libfabric\n"
          "                       (OFI, provider: $FI_PROVIDER or the agents' ofi_provider),\n"
          "                       or auto (OFI on a real fabric, else TCP; default: the\n"
          "                       agents' [mesh] transport, or $TMPI_TRANSPORT)\n"
          "  --mca, -mca, --gmca NAME VALUE\n"
          "                       Open MPI's parameters: ignored, with a warning\n"
          "  --allow-run-as-root  accepted (Open MPI's); ranks run as the launching user\n"
          "Placement (see tmpi-launch(1)):\n"
          "  --hostfile, -hostfile, -f, -machinefile, --machinefile FILE\n"
          "                       hosts from FILE: lines \"HOST [slots=N] [max_slots=M]\n"
          "                       [port=P]\" or \"HOST:N\"; '#' starts a comment\n"
          "  -H, --host, -host, -hosts HOST[,HOST...]\n"
          "                       hosts on the command line; HOST:N gives N slots\n"
          "                       (default: SLURM_JOB_NODELIST in a Slurm job, else this node;\n"
          "                       with no agent answering there, one per node is started\n"
          "                       with srun)\n"
          "  --ppn, -ppn, -N, --npernode K\n"
          "                       exactly K ranks per node (the last may get fewer);\n"
          "                       without -n, K on every node\n"
          "  --map-by slot|node|ppr:K:node\n"
          "                       fill each host's slots in turn (slot, the default), deal\n"
          "                       ranks round robin over the hosts (node), or K per node\n"
          "  --oversubscribe      allow more ranks than slots\n"
          "  --display-map        print which node runs each rank and exit (PROGRAM optional)\n"
          "  -h, --help           this text\n"
          "  -V, --version        print the version\n"
          "Options end at PROGRAM; everything after it is passed to the program.\n",
          f);
}

/* The sum of a SLURM_TASKS_PER_NODE list ("2(x3),1" is 7).  0, -EINVAL (malformed, or more
 * than LAUNCH_MAX_NPROCS) or -ENOMEM. */
static int slurm_tasks_total(const char *tpn, uint32_t *ret)
{
    struct errlist err = ERRLIST_INIT;
    uint32_t *counts = NULL;
    size_t n = 0;
    int r = slurm_tasks_expand("SLURM_TASKS_PER_NODE", tpn, &counts, &n, &err);
    errlist_free(&err);
    if (r < 0) return r;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += counts[i];
    free(counts);
    if (total < 1 || total > LAUNCH_MAX_NPROCS) return -EINVAL;
    *ret = (uint32_t)total;
    return 0;
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

/* Appends NAME=value to an environment vector; the vector owns name (a copy). */
static int env_push(Tmpi__EnvVar **vec, size_t *n, const char *name, size_t nlen, const char *value)
{
    char *copy = strndup(name, nlen);
    Tmpi__EnvVar *nenv = realloc(*vec, (*n + 1) * sizeof *nenv);
    if (!copy || !nenv) {
        free(copy);
        if (nenv) *vec = nenv;
        fputs("tmpi-launch: out of memory\n", stderr);
        return LAUNCH_EXIT_FAILURE;
    }
    *vec = nenv;
    tmpi__env_var__init(&nenv[*n]);
    nenv[*n].name = copy;
    nenv[*n].value = (char *)value;
    (*n)++;
    return 0;
}

/* -x VAR=VALUE sets, -x VAR forwards our own value (argv stays intact for error messages). */
static int add_env_to(Tmpi__EnvVar **vec, size_t *n, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (!valid_env_name(arg, nlen)) return bad_usage("-x %s: not a valid variable name", arg);
    const char *value = eq ? eq + 1 : getenv(arg);
    if (!value) return bad_usage("-x %s: the variable is not set here (use -x VAR=VALUE)", arg);
    return env_push(vec, n, arg, nlen, value);
}

static int add_env(struct launch_opts *o, const char *arg)
{
    return add_env_to(&o->env, &o->n_env, arg);
}

/* -genv VAR VALUE (every program) and -env VAR VALUE (one program): like -x VAR=VALUE. */
static int add_env_pair_to(Tmpi__EnvVar **vec, size_t *n, const char *opt, const char *name,
                           const char *value)
{
    if (!valid_env_name(name, strlen(name))) {
        fprintf(stderr, "tmpi-launch: %s %s: not a valid variable name (try --help)\n", opt, name);
        return LAUNCH_EXIT_USAGE;
    }
    return env_push(vec, n, name, strlen(name), value);
}

static int add_env_pair(struct launch_opts *o, const char *name, const char *value)
{
    return add_env_pair_to(&o->env, &o->n_env, "-genv", name, value);
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

/* A new program of the job; NULL after printing why (out of memory). */
static struct launch_app *new_app(struct launch_opts *o)
{
    struct launch_app *na = realloc(o->apps, (o->n_apps + 1) * sizeof *na);
    if (!na) {
        fputs("tmpi-launch: out of memory\n", stderr);
        return NULL;
    }
    o->apps = na;
    memset(&na[o->n_apps], 0, sizeof na[o->n_apps]);
    return &na[o->n_apps++];
}

/* The options that belong to one program of an MPMD command line ("... : -n 3 -wdir D -x V
 * ./b ARGS"), which may come after a ':'.  Returns 1 when arg was one (consumed with its
 * value), 0 when not, or an exit status + 1 << 8 after an error. */
#define APP_OPT_ERR(st) ((st) + (1 << 8))
static int app_option(int argc, char **argv, int *i, struct launch_app *app, bool *have_n,
                      bool later)
{
    const char *a = argv[*i], *v;
    if (is_opt(a, "-n") || is_opt(a, "-np") || is_opt(a, "--np")) {
        v = opt_value(argc, argv, i, a, strcspn(a, "="));
        if (!v) return APP_OPT_ERR(bad_usage("%s needs the number of ranks", a));
        if (parse_u32(v, 1, LAUNCH_MAX_NPROCS, &app->nprocs) < 0)
            return APP_OPT_ERR(
                bad_usage("-n %s: the number of ranks must be a whole number >= 1", v));
        *have_n = true;
        return 1;
    }
    if (strcmp(a, "-env") == 0) {
        if (*i + 2 >= argc) return APP_OPT_ERR(bad_usage("%s needs VAR and VALUE", "-env"));
        int r = add_env_pair_to(&app->env, &app->n_env, "-env", argv[*i + 1], argv[*i + 2]);
        if (r) return APP_OPT_ERR(r);
        *i += 2;
        return 1;
    }
    if (!later) return 0; /* before the first program these mean the whole job */
    if (strcmp(a, "-x") == 0) {
        if (*i + 1 >= argc) return APP_OPT_ERR(bad_usage("%s needs VAR or VAR=VALUE", "-x"));
        int r = add_env_to(&app->env, &app->n_env, argv[++*i]);
        return r ? APP_OPT_ERR(r) : 1;
    }
    if (is_opt(a, "-wdir") || is_opt(a, "--wdir")) {
        const char *name = a[1] == '-' ? "--wdir" : "-wdir";
        v = opt_value(argc, argv, i, a, strlen(name));
        if (!v || !*v) return APP_OPT_ERR(bad_usage("%s needs a directory", name));
        app->wdir = v;
        return 1;
    }
    return 0;
}

/* After the first program: "ARGS... : [-n N] [-x V] [-env V X] [-wdir D] PROGRAM ARGS... : ..."
 * i is the index of PROGRAM of app; fills its arguments and every later program. */
static int parse_programs(int argc, char **argv, int i, struct launch_opts *o)
{
    for (;;) {
        struct launch_app *app = &o->apps[o->n_apps - 1];
        app->program = argv[i];
        int end = i + 1;
        while (end < argc && strcmp(argv[end], ":") != 0)
            end++;
        app->args = argv + i + 1;
        app->n_args = (size_t)(end - i - 1);
        if (end >= argc) return 0;
        /* another program */
        i = end + 1;
        app = new_app(o);
        if (!app) return LAUNCH_EXIT_FAILURE;
        size_t k = o->n_apps;
        bool have_n = false;
        for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
            int r = app_option(argc, argv, &i, app, &have_n, true);
            if (r > 1) return r - (1 << 8);
            if (r == 1) continue;
            fprintf(stderr,
                    "tmpi-launch: %s after ':' (program %zu): only -n, -x, -env and -wdir may be "
                    "given per program; give the other options before the first program (try "
                    "--help)\n",
                    argv[i], k);
            return LAUNCH_EXIT_USAGE;
        }
        if (i >= argc || strcmp(argv[i], ":") == 0) {
            fprintf(stderr, "tmpi-launch: no program after ':' (program %zu) (try --help)\n", k);
            return LAUNCH_EXIT_USAGE;
        }
        if (!have_n) {
            fprintf(stderr,
                    "tmpi-launch: program %zu (%s): the number of ranks is missing: -n N (try "
                    "--help)\n",
                    k, argv[i]);
            return LAUNCH_EXIT_USAGE;
        }
    }
}

/* --app FILE: each line of the file is one program, "[-n N] [-x V] [-env V X] [-wdir D]
 * PROGRAM ARGS...", as after a ':' on the command line (-n required). */
static int parse_appfile(struct launch_opts *o, const char *path)
{
    struct launch_appfile *f = &o->appfile;
    int st = launch_appfile_read(path, f);
    if (st) return st;
    for (size_t k = 0; k < f->n_lines; k++) {
        const struct launch_appfile_line *l = &f->lines[k];
        char **w = f->words + l->first;
        int n = (int)l->n; /* fewer words than bytes in the file: LAUNCH_APPFILE_MAX_BYTES */
        struct launch_app *app = k == 0 ? &o->apps[0] : new_app(o);
        if (!app) return LAUNCH_EXIT_FAILURE;
        bool have_n = false;
        int i = 0;
        for (; i < n && w[i][0] == '-' && w[i][1] != '\0'; i++) {
            int r = app_option(n, w, &i, app, &have_n, true);
            if (r > 1) {
                fprintf(stderr, "tmpi-launch: (on line %u of --app %s)\n", l->lineno, path);
                return r - (1 << 8);
            }
            if (r == 1) continue;
            fprintf(stderr,
                    "%s:%u: %s: only -n, -x, -env and -wdir may be given per program; give the "
                    "other options on the command line\n",
                    path, l->lineno, w[i]);
            return LAUNCH_EXIT_USAGE;
        }
        if (i >= n) {
            fprintf(stderr, "%s:%u: no program after the options\n", path, l->lineno);
            return LAUNCH_EXIT_USAGE;
        }
        if (!have_n) {
            fprintf(stderr, "%s:%u: %s: the number of ranks is missing: -n N\n", path, l->lineno,
                    w[i]);
            return LAUNCH_EXIT_USAGE;
        }
        app->program = w[i];
        app->args = w + i + 1;
        app->n_args = (size_t)(n - i - 1);
    }
    return 0;
}

/* --bind-to KIND[:QUALIFIER...]: Open MPI's and Hydra's words for the same levels (socket is
 * package).  Open MPI's qualifiers overload-allowed and if-supported are what we do anyway:
 * more ranks than objects share them round robin; a level the node lacks falls back to the
 * enclosing one. */
static int parse_bind_to(const char *v, int *ret)
{
    static const struct {
        const char *word;
        int kind;
    } words[] = {
        {"none", TMPI__BIND_TO__BIND_NONE},       {"hwthread", TMPI__BIND_TO__BIND_HWTHREAD},
        {"core", TMPI__BIND_TO__BIND_CORE},       {"l3cache", TMPI__BIND_TO__BIND_L3CACHE},
        {"numa", TMPI__BIND_TO__BIND_NUMA},       {"socket", TMPI__BIND_TO__BIND_PACKAGE},
        {"package", TMPI__BIND_TO__BIND_PACKAGE},
    };
    size_t len = strcspn(v, ":");
    int kind = -1;
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (strlen(words[k].word) == len && strncmp(v, words[k].word, len) == 0)
            kind = words[k].kind;
    if (kind < 0) return -EINVAL;
    for (const char *q = v + len; *q == ':';) {
        q++;
        size_t ql = strcspn(q, ":");
        if (!((ql == 16 && strncmp(q, "overload-allowed", ql) == 0) ||
              (ql == 12 && strncmp(q, "if-supported", ql) == 0)))
            return -EINVAL;
        q += ql;
    }
    *ret = kind;
    return 0;
}

int launch_args_parse(int argc, char **argv, struct launch_opts *o)
{
    bool have_n = false, have_timeout = false;
    const char *app_path = NULL;
    int i;
    struct launch_app *app0 = new_app(o);
    if (!app0) return LAUNCH_EXIT_FAILURE;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int app_opt;
        if (a[0] != '-' || a[1] == '\0') break; /* PROGRAM: the rest belongs to it */
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
            printf("tmpi-launch (TMPI) %s\n", TMPI_VERSION);
            return -1;
        } else if ((app_opt = app_option(argc, argv, &i, app0, &have_n, false)) != 0) {
            if (app_opt > 1) return app_opt - (1 << 8);
        } else if (is_opt(a, "--app") || strcmp(a, "-app") == 0) {
            v = opt_value(argc, argv, &i, a, strcspn(a, "="));
            if (!v || !*v) return bad_usage("%s needs a file name", a);
            if (app_path) return bad_usage("%s given twice", "--app");
            app_path = v;
        } else if (is_opt(a, "--agent")) {
            v = opt_value(argc, argv, &i, a, strlen("--agent"));
            if (!v || !*v) return bad_usage("%s needs a socket path", "--agent");
            o->agent = v;
        } else if (strcmp(a, "--tag-output") == 0 || strcmp(a, "-l") == 0 ||
                   strcmp(a, "-prepend-rank") == 0 || strcmp(a, "--prepend-rank") == 0) {
            o->tag_output = true; /* Hydra's -prepend-rank prefixes "[RANK] " too */
        } else if (strcmp(a, "--timestamp-output") == 0 || strcmp(a, "-timestamp-output") == 0) {
            o->timestamp_output = true;
        } else if (strcmp(a, "--merge-stderr-to-stdout") == 0 ||
                   strcmp(a, "-merge-stderr-to-stdout") == 0) {
            o->merge_stderr = true;
        } else if (strcmp(a, "--mca") == 0 || strcmp(a, "-mca") == 0 || strcmp(a, "--gmca") == 0 ||
                   strcmp(a, "-gmca") == 0) {
            /* Open MPI's component parameters (btl, pml, ...) tune Open MPI's own components;
             * none of them has a TMPI meaning, so a script's --mca must not stop the job, but
             * the user should know it had no effect. */
            if (i + 2 >= argc) return bad_usage("%s needs a parameter name and a value", a);
            fprintf(stderr,
                    "tmpi-launch: warning: %s %s %s: Open MPI's MCA parameters do not apply to "
                    "TMPI; ignored\n",
                    a, argv[i + 1], argv[i + 2]);
            i += 2;
        } else if (strcmp(a, "--allow-run-as-root") == 0 || strcmp(a, "-allow-run-as-root") == 0) {
            /* Open MPI refuses root without it; TMPI runs the ranks as the launching user,
             * whoever that is, so there is nothing to allow. */
        } else if (is_opt(a, "--timeout")) {
            v = opt_value(argc, argv, &i, a, strlen("--timeout"));
            if (!v) return bad_usage("%s needs a number of seconds", "--timeout");
            if (parse_u32(v, 0, UINT32_MAX, &o->timeout_sec) < 0)
                return bad_usage("--timeout %s: not a whole number of seconds", v);
            have_timeout = true;
        } else if (is_opt(a, "--universe-size")) {
            /* the agent reads it from the job's variables (agent/host/job_spawn.h), as a
             * -x TMPI_UNIVERSE_SIZE=N would give it */
            v = opt_value(argc, argv, &i, a, strlen("--universe-size"));
            uint32_t u;
            if (!v || parse_u32(v, 1, LAUNCH_MAX_UNIVERSE, &u) < 0)
                return bad_usage("--universe-size %s: not a number of ranks from 1 to 4096",
                                 v ? v : "");
            int r =
                env_push(&o->env, &o->n_env, "TMPI_UNIVERSE_SIZE", strlen("TMPI_UNIVERSE_SIZE"), v);
            if (r) return r;
        } else if (is_opt(a, "--on-deadlock")) {
            v = opt_value(argc, argv, &i, a, strlen("--on-deadlock"));
            if (v && strcmp(v, "report") == 0)
                o->on_deadlock = TMPI__DEADLOCK_ACTION__DEADLOCK_REPORT;
            else if (v && strcmp(v, "abort") == 0)
                o->on_deadlock = TMPI__DEADLOCK_ACTION__DEADLOCK_ABORT;
            else
                return bad_usage("--on-deadlock %s: expected report or abort", v ? v : "");
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
        } else if (is_opt(a, "--hostfile") || strcmp(a, "-hostfile") == 0 || strcmp(a, "-f") == 0 ||
                   strcmp(a, "-machinefile") == 0 || is_opt(a, "--machinefile")) {
            /* -hostfile is Open MPI's; -f and -machinefile are Hydra's, whose HOST:N lines a
             * host file reads as well */
            size_t namelen = strcspn(a, "=");
            v = opt_value(argc, argv, &i, a, namelen);
            if (!v || !*v) return bad_usage("%s needs a file name", a);
            if (o->hostfile) return bad_usage("%s given twice", "--hostfile");
            o->hostfile = v;
        } else if (is_opt(a, "-H") || is_opt(a, "--host") || strcmp(a, "-host") == 0 ||
                   strcmp(a, "-hosts") == 0) {
            /* -host is Open MPI's single-dash spelling, -hosts Hydra's */
            const char *name = a[1] == '-' ? "--host" : a;
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
        } else if (is_opt(a, "--mem-limit")) {
            v = opt_value(argc, argv, &i, a, strlen("--mem-limit"));
            if (!v) return bad_usage("%s needs a size", "--mem-limit");
            if (limits_parse_bytes(v, &o->mem_limit) < 0 || o->mem_limit < (1u << 20))
                return bad_usage("--mem-limit %s: a size of at least 1M (K, M, G suffixes)", v);
        } else if (is_opt(a, "--cpu-limit")) {
            v = opt_value(argc, argv, &i, a, strlen("--cpu-limit"));
            if (!v) return bad_usage("%s needs a number of CPUs", "--cpu-limit");
            if (limits_parse_cpus(v, &o->cpu_limit_milli) < 0)
                return bad_usage("--cpu-limit %s: a number of CPUs from 0.001 (e.g. 1.5)", v);
        } else if (is_opt(a, "--stdin")) {
            v = opt_value(argc, argv, &i, a, strlen("--stdin"));
            if (!v || strcmp(v, "none") != 0)
                return bad_usage("%s", "--stdin takes one value: none");
            o->no_stdin = true;
        } else if (is_opt(a, "--bind-to") || is_opt(a, "-bind-to")) {
            const char *name = a[1] == '-' ? "--bind-to" : "-bind-to";
            v = opt_value(argc, argv, &i, a, strlen(name));
            if (!v)
                return bad_usage("%s needs core, hwthread, l3cache, numa, socket, package or none",
                                 name);
            if (parse_bind_to(v, &o->bind_to) < 0) {
                fprintf(stderr,
                        "tmpi-launch: %s %s: must be core, hwthread, l3cache, numa, socket, "
                        "package or none (try --help)\n",
                        name, v);
                return LAUNCH_EXIT_USAGE;
            }
        } else if (is_opt(a, "--transport")) {
            v = opt_value(argc, argv, &i, a, strlen("--transport"));
            if (!v || (strcmp(v, "auto") && strcmp(v, "tcp") && strcmp(v, "ofi")))
                return bad_usage("--transport %s: must be auto, tcp or ofi", v ? v : "");
            int rt = add_env_pair_to(&o->env, &o->n_env, "--transport", "TMPI_TRANSPORT", v);
            if (rt) return rt;
        } else if (strcmp(a, "--report-bindings") == 0 || strcmp(a, "-report-bindings") == 0) {
            o->report_bindings = true;
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
    if (app_path && i < argc)
        return bad_usage("--app %s: the programs come from the file; give none on the command line",
                         app_path);
    if (app_path && (have_n || app0->n_env))
        return bad_usage("--app %s: -n and -env go on the program's line of the file", app_path);
    if (!have_n && i < argc) {
        for (int k = i + 1; k < argc; k++)
            if (strcmp(argv[k], ":") == 0)
                return bad_usage("%s", "the number of ranks of the first program is missing: -n N");
    }
    if (!have_n && o->ppn && !app_path) {
        /* -N K (or --npernode, --map-by ppr:K:node) alone: K ranks on every node, counted once
         * the hosts are known (launch_place); app0->nprocs stays 0 until then */
    } else if (!have_n && !app_path) {
        /* Inside a Slurm allocation (salloc, sbatch), the allocation says how many: as srun and
         * mpirun do, run one rank per task of the allocation. */
        const char *nt = getenv("SLURM_NTASKS");
        const char *tpn = getenv("SLURM_TASKS_PER_NODE");
        if ((!nt || !*nt) && tpn && *tpn) {
            /* salloc -N2 without -n sets no SLURM_NTASKS: as srun, one rank per task slot */
            int r = slurm_tasks_total(tpn, &app0->nprocs);
            if (r == -EINVAL)
                return bad_usage("SLURM_TASKS_PER_NODE=%s: not a list of task counts; give -n N",
                                 tpn);
            if (r < 0) return bad_usage("%s", "out of memory");
        } else if (!nt || !*nt) {
            return bad_usage("%s", "the number of ranks is missing: -n N (or run inside a Slurm "
                                   "allocation, which sets SLURM_NTASKS)");
        } else if (parse_u32(nt, 1, LAUNCH_MAX_NPROCS, &app0->nprocs) < 0)
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
    o->alloc_timeout_sec = LAUNCH_ALLOC_TIMEOUT_SEC;
    const char *at = getenv("TMPI_ALLOC_TIMEOUT");
    if (at && *at && parse_u32(at, 1, LAUNCH_ALLOC_TIMEOUT_MAX, &o->alloc_timeout_sec) < 0)
        return bad_usage("TMPI_ALLOC_TIMEOUT=%s: not a whole number of seconds from 1 to 3600", at);
    /* TMPI_SHARED_LIBS (libraries the ranks of a node share, image_private.h) is read by the
     * agent from the job's variables: an exported one is forwarded unless -x set it */
    const char *sl = getenv("TMPI_SHARED_LIBS");
    bool sl_given = false;
    for (size_t k = 0; k < o->n_env; k++)
        sl_given |= strcmp(o->env[k].name, "TMPI_SHARED_LIBS") == 0;
    if (sl && !sl_given) {
        int rs = add_env(o, "TMPI_SHARED_LIBS");
        if (rs != 0) return rs;
    }
    /* TMPI_TRANSPORT and FI_PROVIDER (what carries the data between nodes, docs/ADMIN.md
     * "Fabrics") are read by the job hosts from the job's variables: exported ones are
     * forwarded unless -x or --transport set them */
    static const char *const net_vars[] = {"TMPI_TRANSPORT", "FI_PROVIDER"};
    for (size_t v = 0; v < 2; v++) {
        bool given = false;
        for (size_t k = 0; k < o->n_env; k++)
            given |= strcmp(o->env[k].name, net_vars[v]) == 0;
        if (getenv(net_vars[v]) && !given) {
            int rs = add_env(o, net_vars[v]);
            if (rs != 0) return rs;
        }
    }
    for (size_t k = 0; k < o->n_env; k++) {
        const char *tv = o->env[k].value;
        if (strcmp(o->env[k].name, "TMPI_TRANSPORT") == 0 && tv && *tv && strcmp(tv, "auto") &&
            strcmp(tv, "tcp") && strcmp(tv, "ofi"))
            return bad_usage("TMPI_TRANSPORT=%s: must be auto, tcp or ofi", tv);
    }
    if (o->hostfile && o->hosts)
        return bad_usage("%s", "--hostfile and -H cannot be used together");
    int r;
    if (app_path) {
        r = parse_appfile(o, app_path);
    } else if (i >= argc && o->display_map) {
        o->nprocs = app0->nprocs;
        return 0;
    } else if (i >= argc) {
        return bad_usage("%s", "no program given");
    } else {
        r = parse_programs(argc, argv, i, o);
    }
    if (r) return r;
    /* one MPI_COMM_WORLD of every program's ranks: its size is a C int */
    uint64_t total = 0;
    for (size_t k = 0; k < o->n_apps; k++)
        total += o->apps[k].nprocs;
    if (total > LAUNCH_MAX_NPROCS)
        return bad_usage("%s", "the programs have more than 2147483647 ranks in all");
    o->nprocs = (uint32_t)total;
    o->program = o->apps[0].program;
    return 0;
}

static void free_env(Tmpi__EnvVar *env, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(env[i].name);
    free(env);
}

void launch_opts_free(struct launch_opts *o)
{
    free_env(o->env, o->n_env);
    for (size_t k = 0; k < o->n_apps; k++)
        free_env(o->apps[k].env, o->apps[k].n_env);
    free(o->apps);
    launch_appfile_free(&o->appfile);
}
