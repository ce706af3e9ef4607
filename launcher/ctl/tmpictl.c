/* tmpictl — ask the local agent about itself and its jobs, or cancel a job.
 *
 *   tmpictl [--agent SOCKET] [--json] status | jobs [--all] | nodes | cancel JOBID | ranks JOBID
 *           | ping HOST:PORT
 *   tmpictl [--json] tree --nodes N --ppn K ...   (ctl_tree.c: pure computation, no agent)
 *
 * One request, one reply, on the agent's Unix socket (which tells the agent who we are via
 * SO_PEERCRED; the agent decides what we may see and cancel).  Unlike tmpi-launch this never
 * starts an agent: asking a fresh private agent about its jobs would tell nobody anything.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_cluster.h"
#include "ctl_conn.h"
#include "ctl_esc.h"
#include "ctl_json.h"
#include "limits_fmt.h"
#include "ctl_tree.h"
#include "frame.h"
#include "rank_fmt.h"
#include "tmpi_config.h"

#define CTL_EXIT_FAILURE 1
#define CTL_EXIT_USAGE 2

enum ctl_cmd { CMD_NONE, CMD_STATUS, CMD_JOBS, CMD_CANCEL, CMD_PING, CMD_NODES, CMD_RANKS };

struct ctl_opts {
    const char *agent;
    bool json;
    bool all; /* jobs --all: every agent of the mesh */
    enum ctl_cmd cmd;
    uint64_t job_id;
    const char *address; /* ping */
};

static void usage(FILE *f)
{
    fputs("usage: tmpictl [--agent SOCKET] [--json] COMMAND\n"
          "Commands:\n"
          "  status         the agent: version, uptime, buffer pool, counters and jobs\n"
          "  jobs           the jobs the agent runs\n"
          "  jobs --all     the jobs of every agent of the mesh, each once\n"
          "  nodes          every agent of the mesh: state, jobs, ranks, load\n"
          "  cancel JOBID   end a job\n"
          "  ranks JOBID    what every rank of a job does now: computing, or in which MPI\n"
          "                 call, waiting for which source, tag and communicator, how long\n"
          "  ping HOST:PORT have the agent connect to another agent, prove the cluster key\n"
          "                 both ways and time one round trip\n"
          "  tree --nodes N --ppn K [...]\n"
          "                 the algorithm and tree a collective of that layout would use\n"
          "                 between nodes (no agent needed; tmpictl tree --help)\n"
          "Options:\n"
          "  --agent SOCKET the agent's socket (default: $TMPI_AGENT, else " TMPI_SYSTEM_SOCKET
          ")\n"
          "  --json         print the reply as one JSON object\n"
          "  -h, --help     this text\n"
          "  --version      print the version\n",
          f);
}

static int bad_usage(const char *fmt, const char *arg)
{
    fputs("tmpictl: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (try --help)\n", stderr);
    return CTL_EXIT_USAGE;
}

/* Options may come before or after the command, as with most admin tools. */
static int parse_args(int argc, char **argv, struct ctl_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(a, "--version") == 0) {
            printf("tmpictl (TMPI) %s\n", TMPI_VERSION);
            return -1;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--all") == 0) {
            o->all = true;
        } else if (strcmp(a, "--agent") == 0 || strncmp(a, "--agent=", 8) == 0) {
            o->agent = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
            if (!o->agent || !*o->agent) return bad_usage("%s needs a socket path", "--agent");
        } else if (a[0] == '-') {
            return bad_usage("unknown option %s", a);
        } else if (o->cmd != CMD_NONE) {
            return bad_usage("unexpected argument %s", a);
        } else if (strcmp(a, "status") == 0) {
            o->cmd = CMD_STATUS;
        } else if (strcmp(a, "jobs") == 0) {
            o->cmd = CMD_JOBS;
        } else if (strcmp(a, "nodes") == 0) {
            o->cmd = CMD_NODES;
        } else if (strcmp(a, "cancel") == 0 || strcmp(a, "ranks") == 0) {
            if (i + 1 >= argc) return bad_usage("%s needs a job id", a);
            const char *id = argv[++i];
            char *end;
            errno = 0;
            o->job_id = strtoull(id, &end, 10);
            if (errno || *id < '0' || *id > '9' || *end) {
                fprintf(stderr, "tmpictl: %s %s: a job id is a number (try --help)\n", a, id);
                return CTL_EXIT_USAGE;
            }
            o->cmd = strcmp(a, "cancel") == 0 ? CMD_CANCEL : CMD_RANKS;
        } else if (strcmp(a, "ping") == 0) {
            if (i + 1 >= argc || !*argv[i + 1])
                return bad_usage("%s needs an agent address HOST:PORT", "ping");
            o->address = argv[++i];
            o->cmd = CMD_PING;
        } else {
            return bad_usage("unknown command %s", a);
        }
    }
    if (o->cmd == CMD_NONE)
        return bad_usage("%s", "no command given: status, jobs, nodes, cancel JOBID, ranks JOBID "
                               "or ping HOST:PORT");
    if (o->all && o->cmd != CMD_JOBS) return bad_usage("%s", "--all goes with jobs only");
    return 0;
}

static void print_duration(char *buf, size_t size, double sec)
{
    if (sec < 0) sec = 0;
    uint64_t s = (uint64_t)sec;
    if (s < 60)
        snprintf(buf, size, "%.1fs", sec);
    else if (s < 3600)
        snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 "m%02" PRIu64 "s", s / 3600, s / 60 % 60,
                 s % 60);
    else
        snprintf(buf, size, "%" PRIu64 "d%02" PRIu64 "h%02" PRIu64 "m", s / 86400, s / 3600 % 24,
                 s / 60 % 60);
}

static void print_bytes(char *buf, size_t size, uint64_t b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    unsigned u = 0;
    while (v >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

/* MEMORY: in use / limit ("-" where unknown or none); CPUS: the CPU limit or "-". */
static void print_jobs(Tmpi__JobInfo **jobs, size_t n)
{
    int w = 8; /* ids of agents with a mesh are long (job_id.h) */
    for (size_t i = 0; i < n; i++) {
        int d = snprintf(NULL, 0, "%" PRIu64, jobs[i]->id);
        if (d > w) w = d;
    }
    printf("%-*s %-12s %6s %-8s %10s %21s %7s  %s\n", w, "ID", "OWNER", "RANKS", "STATE", "RUNTIME",
           "MEMORY", "CPUS", "PROGRAM");
    for (size_t i = 0; i < n; i++) {
        const Tmpi__JobInfo *j = jobs[i];
        char rt[32], owner[24], used[16] = "-", lim[16] = "-", mem[40], cpus[16] = "-";
        print_duration(rt, sizeof rt, j->runtime_sec);
        if (!j->owner || !*j->owner) snprintf(owner, sizeof owner, "%" PRIu32, j->owner_uid);
        if (j->mem_used) print_bytes(used, sizeof used, j->mem_used);
        if (j->mem_limit) print_bytes(lim, sizeof lim, j->mem_limit);
        snprintf(mem, sizeof mem, "%s/%s", used, lim);
        if (j->cpu_limit_milli) limits_format_cpus(j->cpu_limit_milli, cpus, sizeof cpus);
        printf("%-*" PRIu64 " %-12s %6" PRIu32 " %-8s %10s %21s %7s  %s\n", w, j->id,
               ctl_esc(j->owner, owner), j->nprocs, ctl_esc(j->state, ""), rt, mem, cpus,
               ctl_esc(j->program, ""));
    }
}

/* What carries each data link of the jobs across nodes (from this node), when any has links. */
static void print_links(Tmpi__JobInfo **jobs, size_t n)
{
    size_t any = 0;
    for (size_t i = 0; i < n; i++)
        any += jobs[i]->n_links;
    if (!any) return;
    printf("\n%-20s %-5s %-24s %-8s %s\n", "JOB", "NODE", "PEER", "CHANNEL", "TRANSPORT");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < jobs[i]->n_links; k++) {
            const Tmpi__LinkCarrier *l = jobs[i]->links[k];
            printf("%-20" PRIu64 " %-5" PRIu32 " %-24s %-8s %s\n", jobs[i]->id, l->node,
                   ctl_esc(l->peer, "-"), l->channel == 2 ? "coll" : "p2p",
                   ctl_esc(l->carrier, "-"));
        }
}

static void print_status(const Tmpi__StatusReply *s)
{
    char up[32], used[32], cap[32];
    print_duration(up, sizeof up, s->uptime_sec);
    uint64_t u = s->pool ? s->pool->used_bytes : 0, c = s->pool ? s->pool->capacity_bytes : 0;
    print_bytes(used, sizeof used, u);
    print_bytes(cap, sizeof cap, c);
    printf("Agent:           %s (pid %" PRIu32 ")\n", ctl_esc(s->name, "tmpid"), s->pid);
    printf("Version:         %s\n", s->version ? s->version : "");
    printf("Uptime:          %s\n", up);
    printf("Buffer pool:     %s used of %s", used, cap);
    if (c) printf(" (%.0f%%)", 100.0 * (double)u / (double)c);
    size_t running = 0;
    for (size_t i = 0; i < s->n_jobs; i++)
        running += !s->jobs[i]->state || strcmp(s->jobs[i]->state, "ended") != 0;
    if (s->counters_hidden)
        printf("\nJobs:            %zu running (the agent's counters are shown to root and the "
               "agent's user only)\n",
               running);
    else
        printf("\nJobs:            %" PRIu64 " started, %" PRIu64 " failed, %zu running\n",
               s->jobs_started, s->jobs_failed, running);
    if (!s->counters_hidden) printf("Bad frames:      %" PRIu64 "\n", s->bad_frames);
    printf("Cached programs: %" PRIu32 "\n", s->cached_programs);
    if (s->mesh_listen && *s->mesh_listen && s->counters_hidden)
        printf("Mesh:            listening on %s\n", s->mesh_listen);
    else if (s->mesh_listen && *s->mesh_listen)
        printf("Mesh:            listening on %s, %" PRIu64 " peers accepted, %" PRIu64
               " refused\n",
               s->mesh_listen, s->mesh_accepted, s->mesh_auth_failures);
    else
        printf("Mesh:            not listening\n");
    if (s->transport && *s->transport) printf("Transport:       %s\n", ctl_esc(s->transport, ""));
    if (s->n_peers) {
        printf("\n%-24s %-16s %-10s %10s  %s\n", "PEER", "NAME", "STATE", "RTT", "LAST ERROR");
        for (size_t i = 0; i < s->n_peers; i++) {
            const Tmpi__PeerInfo *p = s->peers[i];
            char rtt[32] = "-";
            if (p->rtt_usec > 0) snprintf(rtt, sizeof rtt, "%.0f us", p->rtt_usec);
            printf("%-24s %-16s %-10s %10s  %s\n", ctl_esc(p->address, ""), ctl_esc(p->name, "-"),
                   ctl_esc(p->state, ""), rtt, ctl_esc(p->last_error, ""));
        }
    }
    if (s->n_limits) {
        printf("\n%-26s %12s %12s %10s\n", "LIMIT", "VALUE", "IN USE", "REFUSED");
        for (size_t i = 0; i < s->n_limits; i++) {
            const Tmpi__LimitInfo *l = s->limits[i];
            printf("%-26s %12" PRIu64 " %12" PRIu64 " %10" PRIu64 "\n", l->name ? l->name : "",
                   l->value, l->in_use, l->refused);
        }
    }
    putchar('\n');
    print_jobs(s->jobs, s->n_jobs);
    print_links(s->jobs, s->n_jobs);
}

/* One line per rank: where it runs, what it does, for how long it has waited. */
static void print_ranks(const Tmpi__RanksReply *r)
{
    printf("%-6s %-16s %-10s %-9s %s\n", "RANK", "NODE", "STATE", "WAITING", "CALL");
    for (size_t i = 0; i < r->n_ranks; i++) {
        const Tmpi__RankState *s = r->ranks[i];
        int waiting = s->activity && strcmp(s->activity, "waiting") == 0;
        char call[400] = "-", since[32] = "-";
        if (waiting) {
            rank_fmt_call(s, call, sizeof call);
            print_duration(since, sizeof since, s->waiting_sec);
        }
        printf("%-6" PRIu32 " %-16s %-10s %-9s %s\n", s->rank, ctl_esc(s->node, "-"),
               ctl_esc(s->activity, ""), since, ctl_esc(call, ""));
    }
    if (r->note && *r->note) printf("(%s)\n", ctl_esc(r->note, ""));
}

static int print_json(const ProtobufCMessage *m)
{
    json_object *o = ctl_json_from_message(m);
    if (!o) {
        fputs("tmpictl: out of memory\n", stderr);
        return CTL_EXIT_FAILURE;
    }
    puts(json_object_to_json_string_ext(o,
                                        JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return 0;
}

/* Print the reply; the exit status. */
static int show(const struct ctl_opts *o, const Tmpi__Envelope *e)
{
    if (e->msg_case == TMPI__ENVELOPE__MSG_ERROR) {
        fprintf(stderr, "tmpictl: %s\n",
                e->error->message && *e->error->message ? e->error->message
                                                        : strerror(-e->error->code));
        return CTL_EXIT_FAILURE;
    }
    const ProtobufCMessage *m = NULL;
    if (o->cmd == CMD_STATUS && e->msg_case == TMPI__ENVELOPE__MSG_STATUS_REPLY)
        m = &e->status_reply->base;
    else if (o->cmd == CMD_JOBS && e->msg_case == TMPI__ENVELOPE__MSG_JOBS_REPLY)
        m = &e->jobs_reply->base;
    else if (o->cmd == CMD_NODES && e->msg_case == TMPI__ENVELOPE__MSG_NODES_REPLY)
        m = &e->nodes_reply->base;
    else if (o->cmd == CMD_CANCEL && e->msg_case == TMPI__ENVELOPE__MSG_CANCEL_REPLY)
        m = &e->cancel_reply->base;
    else if (o->cmd == CMD_PING && e->msg_case == TMPI__ENVELOPE__MSG_PING_REPLY)
        m = &e->ping_reply->base;
    else if (o->cmd == CMD_RANKS && e->msg_case == TMPI__ENVELOPE__MSG_RANKS_REPLY)
        m = &e->ranks_reply->base;
    if (!m) {
        fprintf(stderr, "tmpictl: unexpected %s reply from the agent\n", frame_msg_name(e));
        return CTL_EXIT_FAILURE;
    }
    if (o->cmd == CMD_PING) {
        const Tmpi__PingReply *p = e->ping_reply;
        int st = o->json ? print_json(m) : 0;
        if (st) return st;
        if (!p->ok) {
            if (!o->json) fprintf(stderr, "tmpictl: ping %s: %s\n", o->address, p->error);
            return CTL_EXIT_FAILURE;
        }
        if (!o->json)
            printf("%s (%s): authenticated, round trip %.1f us\n", o->address, p->peer,
                   p->rtt_usec);
        return 0;
    }
    if (o->json) return print_json(m);
    if (o->cmd == CMD_STATUS)
        print_status(e->status_reply);
    else if (o->cmd == CMD_JOBS && o->all)
        ctl_print_jobs_all(e->jobs_reply);
    else if (o->cmd == CMD_JOBS)
        print_jobs(e->jobs_reply->jobs, e->jobs_reply->n_jobs);
    else if (o->cmd == CMD_NODES)
        ctl_print_nodes(e->nodes_reply);
    else if (o->cmd == CMD_RANKS)
        print_ranks(e->ranks_reply);
    else
        printf("Cancelled job %" PRIu64 "\n", e->cancel_reply->job_id);
    return 0;
}

static int request(const struct ctl_opts *o, int fd, Tmpi__Envelope **ret)
{
    Tmpi__StatusRequest sr = TMPI__STATUS_REQUEST__INIT;
    Tmpi__JobsRequest jr = TMPI__JOBS_REQUEST__INIT;
    Tmpi__CancelJob cj = TMPI__CANCEL_JOB__INIT;
    Tmpi__PingPeer pp = TMPI__PING_PEER__INIT;
    Tmpi__NodesRequest nr = TMPI__NODES_REQUEST__INIT;
    Tmpi__RanksRequest rr = TMPI__RANKS_REQUEST__INIT;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    if (o->cmd == CMD_STATUS) {
        e.msg_case = TMPI__ENVELOPE__MSG_STATUS_REQUEST;
        e.status_request = &sr;
    } else if (o->cmd == CMD_JOBS) {
        jr.all = o->all;
        e.msg_case = TMPI__ENVELOPE__MSG_JOBS_REQUEST;
        e.jobs_request = &jr;
    } else if (o->cmd == CMD_NODES) {
        e.msg_case = TMPI__ENVELOPE__MSG_NODES_REQUEST;
        e.nodes_request = &nr;
    } else if (o->cmd == CMD_RANKS) {
        rr.job_id = o->job_id;
        e.msg_case = TMPI__ENVELOPE__MSG_RANKS_REQUEST;
        e.ranks_request = &rr;
    } else if (o->cmd == CMD_PING) {
        pp.address = (char *)o->address;
        e.msg_case = TMPI__ENVELOPE__MSG_PING_PEER;
        e.ping_peer = &pp;
    } else {
        cj.job_id = o->job_id;
        e.msg_case = TMPI__ENVELOPE__MSG_CANCEL;
        e.cancel = &cj;
    }
    int r = frame_write_fd(fd, &e, FRAME_DEFAULT_MAX);
    if (r < 0) return r;
    return frame_read_fd(fd, FRAME_DEFAULT_MAX, ret);
}

/* Index of "tree" if it is the command (after the global options), else 0. */
static int tree_command(int argc, char **argv, bool *json)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            *json = true;
        else if (strcmp(argv[i], "--agent") == 0)
            i++;
        else if (strncmp(argv[i], "--agent=", 8) != 0)
            return strcmp(argv[i], "tree") == 0 ? i : 0;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct ctl_opts o = {0};
    int t = tree_command(argc, argv, &o.json);
    if (t) return ctl_tree_main(argc - t, argv + t, o.json);
    int r = parse_args(argc, argv, &o);
    if (r) return r < 0 ? 0 : r;
    /* A vanished agent shows up as EPIPE from write, not as a silent death. */
    signal(SIGPIPE, SIG_IGN);

    const char *path = ctl_socket_path(o.agent);
    int fd = ctl_connect(path);
    if (fd < 0) {
        char why[512];
        fprintf(stderr, "tmpictl: %s\n", ctl_connect_explain(path, fd, why, sizeof why));
        return CTL_EXIT_FAILURE;
    }
    Tmpi__Envelope *reply = NULL;
    r = request(&o, fd, &reply);
    close(fd);
    if (r < 0) {
        fprintf(stderr, "tmpictl: no reply from the agent at %s: %s\n", path,
                r == -ECONNRESET ? "it closed the connection" : strerror(-r));
        return CTL_EXIT_FAILURE;
    }
    int status = show(&o, reply);
    frame_free(reply);
    return status;
}
