/* placement.c — which node runs which rank (the policy is described in placement.h).
 *
 * Work is O(N + hosts): round robin keeps a list of the hosts that still have room and drops
 * a host from it as soon as it is full, so a pass never scans hosts that cannot take a rank.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#define UNBOUNDED UINT32_MAX

/* Deal ranks *next.. N-1 round robin over the hosts with counts[i] < cap[i], in host order,
 * starting a new pass at host 0; a host leaves the round once it reaches its cap.  Records
 * each rank's host in rank_host.  Stops when every rank is dealt or no host has room. */
static void deal_round_robin(size_t nh, const uint32_t *cap, uint32_t *counts, uint32_t *rank_host,
                             uint32_t *next, uint32_t N, uint32_t *active)
{
    size_t na = 0;
    for (size_t i = 0; i < nh; i++)
        if (counts[i] < cap[i]) active[na++] = (uint32_t)i;
    while (na > 0 && *next < N) {
        size_t keep = 0;
        for (size_t k = 0; k < na && *next < N; k++) {
            uint32_t h = active[k];
            rank_host[(*next)++] = h;
            if (++counts[h] < cap[h]) active[keep++] = h;
        }
        na = keep; /* a partial last pass only happens when every rank is dealt */
    }
}

/* Slot mapping past the slots: passes in which each host with room takes up to its slots
 * again.  Only counts are decided here; ranks are laid out contiguously afterwards. */
static void fill_extra_passes(const struct hostlist *hl, const uint32_t *cap, uint32_t *counts,
                              uint64_t rem, uint32_t *active)
{
    size_t na = 0;
    for (size_t i = 0; i < hl->n; i++)
        if (counts[i] < cap[i]) active[na++] = (uint32_t)i;
    while (na > 0 && rem > 0) {
        size_t keep = 0;
        for (size_t k = 0; k < na && rem > 0; k++) {
            uint32_t h = active[k];
            uint64_t take = hl->hosts[h].slots;
            if (take > cap[h] - counts[h]) take = cap[h] - counts[h];
            if (take > rem) take = rem;
            counts[h] += (uint32_t)take;
            rem -= take;
            if (counts[h] < cap[h]) active[keep++] = h;
        }
        na = keep;
    }
}

/* --ppn K: ceil(N/K) hosts with at most K ranks each. */
static int place_ppn(const struct hostlist *hl, const struct placement_request *req,
                     uint32_t *counts, uint32_t *rank_host, uint32_t *scratch, uint32_t *cap,
                     struct errlist *err)
{
    uint32_t N = req->nprocs, K = req->ppn;
    uint64_t need = ((uint64_t)N + K - 1) / K;
    if (need > hl->n) {
        errlist_add(err, "--ppn %u with %u ranks needs %llu nodes, but only %zu host%s given", K, N,
                    (unsigned long long)need, hl->n, hl->n == 1 ? " is" : "s are");
        return -EINVAL;
    }
    for (size_t i = 0; i < hl->n; i++)
        cap[i] = i < need ? K : 0;
    uint32_t next = 0;
    if (req->map_by == PLACEMENT_MAP_NODE) {
        deal_round_robin(hl->n, cap, counts, rank_host, &next, N, scratch);
    } else {
        for (size_t i = 0; i < need; i++)
            for (uint32_t k = 0; k < K && next < N; k++, counts[i]++)
                rank_host[next++] = (uint32_t)i;
    }
    for (size_t i = 0; i < need; i++) {
        const struct host *h = &hl->hosts[i];
        char t[HOSTLIST_MAX_NAME + 16];
        hostlist_format(h, t, sizeof t);
        if (h->max_slots && counts[i] > h->max_slots) {
            errlist_add(err, "--ppn %u puts %u ranks on %s, above its max_slots=%u", K, counts[i],
                        t, h->max_slots);
            return -EINVAL;
        }
        if (counts[i] > h->slots && !req->oversubscribe) {
            errlist_add(err,
                        "not enough slots: --ppn %u puts %u ranks on %s, which has %u slot%s "
                        "(--oversubscribe allows more ranks than slots)",
                        K, counts[i], t, h->slots, h->slots == 1 ? "" : "s");
            return -EINVAL;
        }
    }
    return 0;
}

/* Without --ppn: slots first, then (oversubscribed) further passes up to max_slots. */
static int place_slots(const struct hostlist *hl, const struct placement_request *req,
                       uint32_t *counts, uint32_t *rank_host, uint32_t *scratch, uint32_t *cap,
                       struct errlist *err)
{
    uint32_t N = req->nprocs;
    uint64_t S = hostlist_total_slots(hl), M = 0;
    bool bounded = true;
    for (size_t i = 0; i < hl->n; i++) {
        if (!hl->hosts[i].max_slots) bounded = false;
        M += hl->hosts[i].max_slots;
    }
    if (N > S && !req->oversubscribe) {
        errlist_add(err,
                    "not enough slots: %u ranks requested but the hosts have %llu slot%s "
                    "(--oversubscribe allows more ranks than slots)",
                    N, (unsigned long long)S, S == 1 ? "" : "s");
        return -EINVAL;
    }
    if (N > S && bounded && N > M) {
        errlist_add(err, "%u ranks requested but the hosts' max_slots allow %llu", N,
                    (unsigned long long)M);
        return -EINVAL;
    }
    uint32_t next = 0;
    if (req->map_by == PLACEMENT_MAP_NODE) {
        for (size_t i = 0; i < hl->n; i++)
            cap[i] = hl->hosts[i].slots;
        deal_round_robin(hl->n, cap, counts, rank_host, &next, N, scratch);
        for (size_t i = 0; i < hl->n; i++)
            cap[i] = hl->hosts[i].max_slots ? hl->hosts[i].max_slots : UNBOUNDED;
        deal_round_robin(hl->n, cap, counts, rank_host, &next, N, scratch);
        return 0;
    }
    uint64_t rem = N;
    for (size_t i = 0; i < hl->n && rem > 0; i++) {
        counts[i] = hl->hosts[i].slots < rem ? hl->hosts[i].slots : (uint32_t)rem;
        rem -= counts[i];
    }
    if (rem > 0) {
        for (size_t i = 0; i < hl->n; i++)
            cap[i] = hl->hosts[i].max_slots ? hl->hosts[i].max_slots : UNBOUNDED;
        fill_extra_passes(hl, cap, counts, rem, scratch);
    }
    for (size_t i = 0; i < hl->n; i++)
        for (uint32_t k = 0; k < counts[i]; k++)
            rank_host[next++] = (uint32_t)i;
    return 0;
}

/* From each rank's host to nodes (used hosts only), local ranks and per-node rank lists. */
static int build(const struct hostlist *hl, uint32_t N, const uint32_t *counts, uint32_t *rank_host,
                 bool keep_spare, struct placement *p)
{
    size_t nh = hl ? hl->n : 0;
    uint32_t *host_node = malloc((nh ? nh : 1) * sizeof *host_node);
    uint32_t *fill = NULL;
    p->nprocs = N;
    p->nnodes = 0;
    p->rank_node = rank_host;
    if (!host_node) goto nomem;
    for (size_t i = 0; i < nh; i++)
        host_node[i] = counts[i] ? p->nnodes++ : UINT32_MAX;
    if (nh == 0) p->nnodes = 1;
    p->nspare = 0;
    for (size_t i = 0; keep_spare && i < nh; i++)
        p->nspare += !counts[i];
    p->nodes = calloc(p->nnodes + p->nspare, sizeof *p->nodes);
    p->rank_local = malloc((size_t)N * sizeof *p->rank_local);
    p->rank_store = malloc((size_t)N * sizeof *p->rank_store);
    fill = calloc(p->nnodes, sizeof *fill);
    if (!p->nodes || !p->rank_local || !p->rank_store || !fill) goto nomem;
    uint32_t off = 0;
    for (size_t i = 0, k = 0; i < (nh ? nh : 1); i++) {
        if (nh && !counts[i]) continue;
        struct placement_node *n = &p->nodes[k++];
        n->nranks = nh ? counts[i] : N;
        n->ranks = p->rank_store + off;
        off += n->nranks;
        if (nh) {
            n->host = strdup(hl->hosts[i].name);
            if (!n->host) goto nomem;
            n->ipv6 = hl->hosts[i].ipv6;
            n->port = hl->hosts[i].port;
            n->free_slots = hl->hosts[i].slots > counts[i] ? hl->hosts[i].slots - counts[i] : 0;
        }
    }
    for (size_t i = 0, k = p->nnodes; k < p->nnodes + p->nspare; i++) {
        if (counts[i]) continue;
        struct placement_node *n = &p->nodes[k++];
        n->host = strdup(hl->hosts[i].name);
        if (!n->host) goto nomem;
        n->ipv6 = hl->hosts[i].ipv6;
        n->port = hl->hosts[i].port;
        n->ranks = p->rank_store + off;
        n->free_slots = hl->hosts[i].slots;
    }
    /* rank_host becomes rank_node in place. */
    for (uint32_t r = 0; r < N; r++) {
        uint32_t node = nh ? host_node[rank_host[r]] : 0;
        uint32_t l = fill[node]++;
        p->nodes[node].ranks[l] = r;
        p->rank_node[r] = node;
        p->rank_local[r] = l;
    }
    free(host_node);
    free(fill);
    return 0;
nomem:
    free(host_node);
    free(fill);
    return -ENOMEM;
}

int placement_compute(const struct hostlist *hosts, const struct placement_request *req,
                      struct placement *ret, struct errlist *err)
{
    uint32_t N = req->nprocs;
    size_t nh = hosts ? hosts->n : 0;
    *ret = (struct placement){0};
    if (N == 0 && req->ppn) {
        /* -N K without -n: K on every host (Open MPI's meaning) */
        uint64_t all = (uint64_t)req->ppn * (nh ? nh : 1);
        if (all > PLACEMENT_MAX_RANKS) {
            errlist_add(err, "--ppn %u on %zu node%s is %llu ranks: at most %u can be placed",
                        req->ppn, nh ? nh : 1, nh > 1 ? "s" : "", (unsigned long long)all,
                        PLACEMENT_MAX_RANKS);
            return -EINVAL;
        }
        N = (uint32_t)all;
    }
    if (N == 0 || N > PLACEMENT_MAX_RANKS) {
        errlist_add(err, "%u ranks: at most %u ranks can be placed on hosts", N,
                    PLACEMENT_MAX_RANKS);
        return -EINVAL;
    }
    if (nh == 0 && req->ppn && req->ppn < N) {
        errlist_add(err,
                    "--ppn %u with %u ranks needs %u nodes, but no hosts are given (only the "
                    "local agent); use --hostfile or -H",
                    req->ppn, N, (N + req->ppn - 1) / req->ppn);
        return -EINVAL;
    }
    uint32_t *rank_host = malloc((size_t)N * sizeof *rank_host);
    uint32_t *counts = calloc(nh ? nh : 1, sizeof *counts);
    uint32_t *scratch = calloc(nh ? nh : 1, sizeof *scratch);
    uint32_t *cap = calloc(nh ? nh : 1, sizeof *cap);
    int r = -ENOMEM;
    if (!rank_host || !counts || !scratch || !cap) goto out;
    if (nh == 0) {
        memset(rank_host, 0, (size_t)N * sizeof *rank_host);
        r = 0;
    } else if (req->ppn) {
        struct placement_request all = *req;
        all.nprocs = N;
        r = place_ppn(hosts, &all, counts, rank_host, scratch, cap, err);
    } else {
        r = place_slots(hosts, req, counts, rank_host, scratch, cap, err);
    }
    if (r == 0) {
        r = build(hosts, N, counts, rank_host, req->keep_spare, ret);
        rank_host = NULL; /* owned by ret now */
        if (r < 0) placement_free(ret);
    }
out:
    free(rank_host);
    free(counts);
    free(scratch);
    free(cap);
    return r;
}

static void node_text(const struct placement_node *n, char *buf, size_t size)
{
    if (!n->host)
        snprintf(buf, size, "local agent");
    else
        snprintf(buf, size, n->ipv6 ? "[%s]:%u" : "%s:%u", n->host, (unsigned)n->port);
}

void placement_print(const struct placement *p, FILE *f)
{
    char t[HOSTLIST_MAX_NAME + 16];
    for (uint32_t i = 0; i < p->nnodes; i++) {
        const struct placement_node *n = &p->nodes[i];
        node_text(n, t, sizeof t);
        fprintf(f, "node %u: %s, %u rank%s:", i, t, n->nranks, n->nranks == 1 ? "" : "s");
        /* ranges of consecutive ranks: "0-3,8,10-11" */
        for (uint32_t k = 0; k < n->nranks;) {
            uint32_t j = k;
            while (j + 1 < n->nranks && n->ranks[j + 1] == n->ranks[j] + 1)
                j++;
            fprintf(f, "%s%u", k ? "," : " ", n->ranks[k]);
            if (j > k) fprintf(f, "-%u", n->ranks[j]);
            k = j + 1;
        }
        fputc('\n', f);
    }
    for (uint32_t r = 0; r < p->nprocs; r++) {
        node_text(&p->nodes[p->rank_node[r]], t, sizeof t);
        fprintf(f, "rank %u: node %u (%s), local rank %u\n", r, p->rank_node[r], t,
                p->rank_local[r]);
    }
}

void placement_free(struct placement *p)
{
    for (uint32_t i = 0; p->nodes && i < p->nnodes + p->nspare; i++)
        free(p->nodes[i].host);
    free(p->nodes);
    free(p->rank_node);
    free(p->rank_local);
    free(p->rank_store);
    *p = (struct placement){0};
}
