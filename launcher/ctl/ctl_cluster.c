/* ctl_cluster.c — the cluster view's tables (ctl_cluster.h). */
#include "ctl_cluster.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctl_esc.h"

/* Fields as shown: escaped (ctl_esc.h). */
static const char *str(const char *s, const char *dflt)
{
    return ctl_esc(s, dflt);
}

void ctl_print_nodes(const Tmpi__NodesReply *r)
{
    printf("%-16s %-24s %-8s %5s %6s %16s %5s  %s\n", "NAME", "ADDRESS", "STATE", "JOBS", "RANKS",
           "LOAD 1/5/15m", "CPUS", "NOTE");
    for (size_t i = 0; i < r->n_nodes; i++) {
        const Tmpi__NodeInfo *n = r->nodes[i];
        int up = n->state && strcmp(n->state, "up") == 0;
        char jobs[16] = "-", ranks[16] = "-", load[40] = "-", cpus[16] = "-";
        if (up) {
            snprintf(jobs, sizeof jobs, "%" PRIu32, n->jobs);
            snprintf(ranks, sizeof ranks, "%" PRIu32, n->ranks);
            snprintf(load, sizeof load, "%.2f %.2f %.2f", n->load1, n->load5, n->load15);
            snprintf(cpus, sizeof cpus, "%" PRIu32, n->ncpus);
        }
        printf("%-16s %-24s %-8s %5s %6s %16s %5s  %s\n", str(n->name, "-"), str(n->address, "-"),
               str(n->state, "?"), jobs, ranks, load, cpus,
               n->self ? "(this agent)" : str(n->error, ""));
    }
}

void ctl_print_jobs_all(const Tmpi__JobsReply *r)
{
    int w = 2;
    for (size_t i = 0; i < r->n_jobs; i++) {
        int d = snprintf(NULL, 0, "%" PRIu64, r->jobs[i]->id);
        if (d > w) w = d;
    }
    printf("%-*s %-12s %6s %-8s %10s  %-24s %s\n", w, "ID", "OWNER", "RANKS", "STATE", "RUNTIME",
           "NODES", "PROGRAM");
    for (size_t i = 0; i < r->n_jobs; i++) {
        const Tmpi__JobInfo *j = r->jobs[i];
        char nodes[256] = "", rt[32], owner[24];
        size_t off = 0;
        for (size_t k = 0; k < j->n_nodes && off < sizeof nodes; k++)
            off += (size_t)snprintf(nodes + off, sizeof nodes - off, "%s%s", k ? "," : "",
                                    str(j->nodes[k], ""));
        snprintf(rt, sizeof rt, "%.1fs", j->runtime_sec < 0 ? 0 : j->runtime_sec);
        snprintf(owner, sizeof owner, "%" PRIu32, j->owner_uid);
        printf("%-*" PRIu64 " %-12s %6" PRIu32 " %-8s %10s  %-24s %s\n", w, j->id,
               str(j->owner, owner), j->nprocs, str(j->state, ""), rt, nodes, str(j->program, ""));
    }
    for (size_t i = 0; i < r->n_nodes; i++) {
        const Tmpi__NodeInfo *n = r->nodes[i];
        if (n->state && strcmp(n->state, "up") != 0)
            fprintf(stderr, "tmpictl: %s (%s) is %s: %s; its jobs are not listed\n",
                    str(n->name, "an agent"), str(n->address, "?"), n->state, str(n->error, ""));
    }
}
