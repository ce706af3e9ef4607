/* launch_main.c — tmpi-launch: the overall flow and the exit status.
 *
 * Parse and check the command line (launch_args.c), place the ranks (launch_place.c), open the
 * programs, then reach the agent that runs the job: the local one, a private one started for
 * this job, or the agents of a Slurm allocation (launch_agent.c, launch_alloc.c), and run the
 * session with it (launch_job.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "launch.h"
#include "module_marker.h"

/* Are we running on that Slurm node, in a batch script or a step (slurmd says so)? */
static bool slurm_step_on(const char *node)
{
    const char *me = getenv("SLURMD_NODENAME");
    return me && strcmp(me, node) == 0;
}

/* Is the Slurm node name this machine?  Slurm's own word (SLURMD_NODENAME, set on the
 * allocation's nodes), else the short host name, or localhost. */
static bool slurm_node_is_here(const char *node)
{
    const char *me = getenv("SLURMD_NODENAME");
    if (me && *me) return strcmp(node, me) == 0;
    char host[256];
    if (strcmp(node, "localhost") == 0) return true;
    if (gethostname(host, sizeof host) < 0) return false;
    host[sizeof host - 1] = '\0';
    size_t n = strcspn(host, ".");
    return strcmp(node, host) == 0 || (strlen(node) == n && strncmp(node, host, n) == 0);
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
static int absolute_dir(const char **dir, char **ret_alloc)
{
    *ret_alloc = NULL;
    if (!*dir || (*dir)[0] == '/') return 0;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd) || asprintf(ret_alloc, "%s/%s", cwd, *dir) < 0) {
        *ret_alloc = NULL;
        fprintf(stderr, "tmpi-launch: -wdir %s: %s\n", *dir, strerror(errno));
        return LAUNCH_EXIT_FAILURE;
    }
    *dir = *ret_alloc;
    return 0;
}

/* The job's -wdir and every program's.  allocs: 1 + n_apps entries, freed by the caller. */
static int absolute_wdir(struct launch_opts *o, char ***ret_allocs)
{
    char **allocs = calloc(o->n_apps + 1, sizeof *allocs);
    *ret_allocs = allocs;
    if (!allocs) {
        fputs("tmpi-launch: out of memory\n", stderr);
        return LAUNCH_EXIT_FAILURE;
    }
    int r = absolute_dir(&o->wdir, &allocs[0]);
    for (size_t k = 0; k < o->n_apps && r == 0; k++)
        r = absolute_dir(&o->apps[k].wdir, &allocs[k + 1]);
    return r;
}

/* --display-map across nodes: what will carry the links between them (issue 36), as far as
 * the job decides it (--transport, TMPI_TRANSPORT, FI_PROVIDER); the rest is the agents'
 * [mesh] transport and ofi_provider, which tmpictl status shows with each running job's links. */
static void print_transport(const struct launch_opts *o)
{
    const char *tr = NULL, *prov = NULL;
    for (size_t k = 0; k < o->n_env; k++) {
        if (strcmp(o->env[k].name, "TMPI_TRANSPORT") == 0) tr = o->env[k].value;
        if (strcmp(o->env[k].name, "FI_PROVIDER") == 0) prov = o->env[k].value;
    }
    if (!tr || !*tr)
        printf("links between nodes: 2 per pair (p2p, coll), transport: the agents' [mesh] "
               "transport (auto: ofi only where they found a fabric provider, else tcp)");
    else if (strcmp(tr, "auto") == 0)
        printf("links between nodes: 2 per pair (p2p, coll), transport auto: ofi where the "
               "agents found a fabric provider, else tcp");
    else
        printf("links between nodes: 2 per pair (p2p, coll), transport %s", tr);
    if (tr && strcmp(tr, "tcp") == 0)
        putchar('\n');
    else if (prov && *prov)
        printf("; on ofi, provider %s\n", prov);
    else
        printf("; on ofi, provider: the agents' [mesh] ofi_provider, else libfabric's choice\n");
    printf("(tmpictl status shows what carries each link of a running job)\n");
}

/* A libtool wrapper script as the program (launch_libtool.c): the command line again with the
 * program it wraps in its place and -x LD_LIBRARY_PATH=(what the script sets) before it, parsed
 * into *o afresh.  What it allocates lives until main returns. */
static int libtool_program(int *argc, char ***argv, struct launch_opts *o, const char *found,
                           char ***ret_argv, char **ret_prog, char **ret_env)
{
    const char *script = o->apps[0].program;
    int k = 1;
    while (k < *argc && (*argv)[k] != script)
        k++;
    if (k == *argc || o->n_apps > 1) {
        fprintf(stderr,
                "tmpi-launch: %s is a libtool wrapper script: with several programs or --app, "
                "give the program it wraps (.libs/) and -x LD_LIBRARY_PATH\n",
                script);
        return LAUNCH_EXIT_USAGE;
    }
    char *libpath;
    int r = launch_libtool_resolve(found ? found : script, ret_prog, &libpath);
    if (r < 0) {
        fprintf(stderr,
                "tmpi-launch: %s is a libtool wrapper script, and sourcing it as libtool "
                "--mode=execute failed: %s\n",
                script,
                r == -ECHILD    ? "the script failed"
                : r == -EBADMSG ? "it named no program"
                                : strerror(-r));
        return LAUNCH_EXIT_USAGE;
    }
    int n = *argc + 2;
    char **na = calloc((size_t)n + 1, sizeof *na);
    if (!na || asprintf(ret_env, "LD_LIBRARY_PATH=%s", libpath) < 0) {
        free(na);
        free(libpath);
        fputs("tmpi-launch: out of memory\n", stderr);
        return LAUNCH_EXIT_FAILURE;
    }
    free(libpath);
    int j = 0;
    for (int i = 0; i < k; i++)
        na[j++] = (*argv)[i];
    na[j++] = "-x";
    na[j++] = *ret_env;
    na[j++] = *ret_prog;
    for (int i = k + 1; i < *argc; i++)
        na[j++] = (*argv)[i];
    launch_opts_free(o);
    memset(o, 0, sizeof *o);
    *ret_argv = na;
    *argc = j;
    *argv = na;
    return launch_args_parse(j, na, o);
}

int main(int argc, char **argv)
{
    struct launch_opts opts = {0};
    struct launch_program *progs = NULL;
    struct launch_agent agent = {0};
    struct placement place = {0};
    char **wdir_allocs = NULL;
    int status = launch_args_parse(argc, argv, &opts);
    char **lt_argv = NULL, *lt_prog = NULL, *lt_env = NULL, *lt_found = NULL;
    if (status == 0 && opts.n_apps && opts.apps[0].program &&
        launch_libtool_wrapper(opts.apps[0].program, &lt_found)) {
        status = libtool_program(&argc, &argv, &opts, lt_found, &lt_argv, &lt_prog, &lt_env);
    }
    if (status == 0) status = absolute_wdir(&opts, &wdir_allocs);
    if (status) goto out;
    bool slurm = false;
    struct launch_alloc alloc = {.srun = 0, .in_wfd = -1, .out_rfd = -1};
    status = launch_place(&opts, &place, &slurm);
    if (status) goto out;
    if (opts.nprocs == 0) {
        /* -N K without -n: the placement counted K on every node */
        opts.nprocs = place.nprocs;
        opts.apps[0].nprocs = place.nprocs;
    }
    if (opts.display_map) {
        placement_print(&place, stdout);
        /* which of a program's libraries each rank gets a copy of (the agent's rule) */
        const char *mine = getenv("TMPI_SHARED_LIBS");
        printf("libraries shared by the ranks of a node: those in %s but %s; %s%s%s; and the "
               "agents' [agent] shared_libraries. Each rank gets its own copy of the program's "
               "other libraries (and of the agents' [agent] private_libraries).\n",
               TMPI_SYSTEM_LIB_DIRS, TMPI_PRIVATE_LIBS_DEFAULT, TMPI_SHARED_LIBS_DEFAULT,
               mine ? "; TMPI_SHARED_LIBS: " : "", mine ? mine : "");
        if (place.nnodes > 1) print_transport(&opts);
        status = fflush(stdout) == 0 ? 0 : LAUNCH_EXIT_FAILURE;
        goto out;
    }
    progs = calloc(opts.n_apps, sizeof *progs);
    if (!progs) {
        fputs("tmpi-launch: out of memory\n", stderr);
        status = LAUNCH_EXIT_FAILURE;
        goto out;
    }
    for (size_t k = 0; k < opts.n_apps; k++)
        progs[k].fd = -1;
    for (size_t k = 0; k < opts.n_apps && status == 0; k++)
        status = launch_program_open(opts.apps[k].program, &progs[k]);
    if (status) goto out;
    /* A Slurm allocation's nodes are Slurm's to reach (srun, or their agents); those the user
     * named must resolve, and a lone one runs here only when it is this machine. */
    bool lone_here = true;
    if (!slurm && (opts.hostfile || opts.hosts)) {
        status = launch_hosts_check(&place, opts.hostfile ? "--hostfile" : "-H", opts.hostfile,
                                    &lone_here);
        if (status) goto out;
    }

    sigset_t old;
    int sigfd = setup_signals(&old);
    if (sigfd < 0) {
        fprintf(stderr, "tmpi-launch: cannot set up signal handling: %s\n", strerror(-sigfd));
        status = LAUNCH_EXIT_FAILURE;
        goto out;
    }
    /* Several nodes: the local agent coordinates them over its mesh; a private agent has
     * none, so none is started.  A Slurm allocation without system agents gets agents of its
     * own (launch_alloc.c), coordinated by a private agent of ours that holds their key. */
    bool multi = place.nnodes + place.nspare > 1 || !lone_here;
    int fd;
    if (slurm && place.nnodes == 1 && !opts.agent && slurm_step_on(place.nodes[0].host) &&
        !launch_agent_answers(&opts)) {
        /* A batch script (or a step) on the allocation's only node: a private agent of ours
         * is an agent on that node, inside this step, and keeps standard input working. */
        fd = launch_agent_connect(&opts, sigfd, &agent);
    } else if (slurm && place.nnodes > 0 && !opts.agent && !launch_agent_answers(&opts)) {
        char key[LAUNCH_ALLOC_KEY_HEX + 1];
        fd = launch_alloc_key(key);
        if (fd < 0) fprintf(stderr, "tmpi-launch: no random key: %s\n", strerror(-fd));
        if (fd == 0) fd = launch_alloc_start(&place, key, opts.alloc_timeout_sec, sigfd, &alloc);
        if (fd == 0) fd = launch_agent_start_coordinator(key, sigfd, &agent);
        explicit_bzero(key, sizeof key);
        multi = true;
    } else {
        /* salloc's shell may run on a login node: a one-node allocation elsewhere goes to
         * that node's agent, coordinated by ours, not to ours. */
        if (slurm && place.nnodes == 1 && !slurm_node_is_here(place.nodes[0].host)) multi = true;
        fd = multi ? launch_agent_connect_mesh(&opts, &place)
                   : launch_agent_connect(&opts, sigfd, &agent);
    }
    if (fd >= 0) {
        status = launch_job_run(&opts, progs, multi ? &place : NULL, fd, sigfd);
        close(fd);
    } else {
        status = fd == -EINTR ? LAUNCH_EXIT_INTERRUPTED : LAUNCH_EXIT_FAILURE;
    }
    launch_agent_stop(&agent);
    launch_alloc_stop(&alloc);
    close(sigfd);
out:
    for (size_t k = 0; progs && k < opts.n_apps; k++)
        launch_program_close(&progs[k]);
    free(progs);
    placement_free(&place);
    for (size_t k = 0; wdir_allocs && k <= opts.n_apps; k++)
        free(wdir_allocs[k]);
    free(wdir_allocs);
    launch_opts_free(&opts);
    free(lt_argv);
    free(lt_prog);
    free(lt_env);
    free(lt_found);
    return status < 0 ? 0 : status;
}
