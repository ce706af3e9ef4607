/* Placement: slot and node mapping, --ppn, oversubscription and max_slots, the local default,
 * the limits, and the --display-map text.  Every result is also checked for consistency
 * (each rank on exactly one node, local ranks in global order). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "errcheck.h"
#include "placement.h"

/* "a=4,b=2" (name=slots, optional /max and @port: "a=1/2@7471") into a host list. */
static void hosts(struct hostlist *l, const char *spec)
{
    char *copy = strdup(spec), *save, *tok;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char name[64];
        unsigned slots, max = 0, port = HOSTLIST_DEFAULT_PORT;
        CHECK(sscanf(tok, "%63[^=]=%u", name, &slots) == 2);
        char *p = strchr(tok, '/');
        if (p) max = (unsigned)atoi(p + 1);
        p = strchr(tok, '@');
        if (p) port = (unsigned)atoi(p + 1);
        CHECK_EQ(hostlist_add(l, name, false, (uint16_t)port, slots, max), 0);
    }
    free(copy);
}

/* Every rank on one node, at its local rank; node lists ascending and complete. */
static void check_consistent(const struct placement *p)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->nnodes; i++) {
        const struct placement_node *n = &p->nodes[i];
        CHECK(n->nranks >= 1);
        for (uint32_t l = 0; l < n->nranks; l++) {
            uint32_t r = n->ranks[l];
            CHECK(r < p->nprocs);
            CHECK_EQ(p->rank_node[r], i);
            CHECK_EQ(p->rank_local[r], l);
            if (l) CHECK(n->ranks[l - 1] < r);
        }
        total += n->nranks;
    }
    CHECK_EQ(total, p->nprocs);
}

/* "host:r,r,r|host:r" -- the whole map in one string (ranges are not compressed). */
static char *render(const struct placement *p)
{
    char *s;
    size_t len;
    FILE *f = open_memstream(&s, &len);
    for (uint32_t i = 0; i < p->nnodes; i++) {
        const struct placement_node *n = &p->nodes[i];
        fprintf(f, "%s%s", i ? "|" : "", n->host ? n->host : "(local)");
        if (n->port != HOSTLIST_DEFAULT_PORT && n->host) fprintf(f, "@%u", n->port);
        for (uint32_t l = 0; l < n->nranks; l++)
            fprintf(f, "%c%u", l ? ',' : ':', n->ranks[l]);
    }
    fclose(f);
    return s;
}

static void places(int line, const char *spec, uint32_t N, uint32_t ppn, enum placement_map map,
                   bool over, const char *want)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    struct placement p;
    if (spec) hosts(&l, spec);
    struct placement_request req = {.nprocs = N, .ppn = ppn, .map_by = map, .oversubscribe = over};
    int r = placement_compute(&l, &req, &p, &e);
    if (r != 0) {
        fprintf(stderr, "%s:%d: expected a placement, got %d:\n", __FILE__, line, r);
        errlist_print(&e, stderr);
        exit(1);
    }
    check_consistent(&p);
    char *got = render(&p);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "%s:%d: expected %s\n got %s\n", __FILE__, line, want, got);
        exit(1);
    }
    free(got);
    placement_free(&p);
    hostlist_free(&l);
}
#define SLOT PLACEMENT_MAP_SLOT
#define NODE PLACEMENT_MAP_NODE
#define PLACES(spec, N, ppn, map, over, want) places(__LINE__, spec, N, ppn, map, over, want)

static void refused(int line, const char *spec, uint32_t N, uint32_t ppn, enum placement_map map,
                    bool over, const char *want)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    struct placement p;
    if (spec) hosts(&l, spec);
    struct placement_request req = {.nprocs = N, .ppn = ppn, .map_by = map, .oversubscribe = over};
    int r = placement_compute(spec ? &l : NULL, &req, &p, &e);
    if (r != -EINVAL || e.n != 1 || strcmp(e.msg[0], want) != 0) {
        fprintf(stderr, "%s:%d: expected -EINVAL and \"%s\", got %d \"%s\"\n", __FILE__, line, want,
                r, e.n ? e.msg[0] : "");
        exit(1);
    }
    CHECK(p.nodes == NULL && p.rank_node == NULL);
    errlist_free(&e);
    hostlist_free(&l);
}
#define REFUSED(spec, N, ppn, map, over, want) refused(__LINE__, spec, N, ppn, map, over, want)

static void test_slot(void)
{
    PLACES("a=4,b=2,c=2", 7, 0, SLOT, false, "a:0,1,2,3|b:4,5|c:6");
    PLACES("a=4,b=2,c=2", 8, 0, SLOT, false, "a:0,1,2,3|b:4,5|c:6,7");
    PLACES("a=4,b=2,c=2", 3, 0, SLOT, false, "a:0,1,2"); /* unused hosts are left out */
    PLACES("a=1,b=1", 2, 0, SLOT, false, "a:0|b:1");
    /* same name, two ports: two agents, two nodes */
    PLACES("a=1@7471,a=1@7472", 2, 0, SLOT, false, "a@7471:0|a@7472:1");
}

static void test_node(void)
{
    PLACES("a=2,b=1,c=3", 6, 0, NODE, false, "a:0,3|b:1|c:2,4,5");
    PLACES("a=4,b=4", 5, 0, NODE, false, "a:0,2,4|b:1,3");
    PLACES("a=4,b=4,c=4", 2, 0, NODE, false, "a:0|b:1");
    PLACES("a=1,b=1", 2, 0, NODE, false, "a:0|b:1");
}

static void test_oversubscribe(void)
{
    REFUSED("a=4,b=2", 7, 0, SLOT, false,
            "not enough slots: 7 ranks requested but the hosts have 6 slots (--oversubscribe "
            "allows more ranks than slots)");
    REFUSED("a=1", 2, 0, NODE, false,
            "not enough slots: 2 ranks requested but the hosts have 1 slot (--oversubscribe "
            "allows more ranks than slots)");
    /* slot mapping: further passes of each host's slots, ranks contiguous per node */
    PLACES("a=2,b=1", 7, 0, SLOT, true, "a:0,1,2,3,4|b:5,6");
    PLACES("a=2,b=2", 5, 0, SLOT, true, "a:0,1,2|b:3,4");
    /* node mapping: round robin goes on */
    PLACES("a=2,b=1", 5, 0, NODE, true, "a:0,2,3|b:1,4");
    /* max_slots bounds oversubscription */
    PLACES("a=1/2,b=1/1", 3, 0, NODE, true, "a:0,2|b:1");
    PLACES("a=1/2,b=1/1", 3, 0, SLOT, true, "a:0,1|b:2");
    PLACES("a=1/1,b=1", 5, 0, SLOT, true, "a:0|b:1,2,3,4");
    PLACES("a=1/1,b=1", 5, 0, NODE, true, "a:0|b:1,2,3,4");
    REFUSED("a=1/2,b=1/1", 4, 0, SLOT, true, "4 ranks requested but the hosts' max_slots allow 3");
    /* within the slots, max_slots changes nothing */
    PLACES("a=2/2,b=1/3", 3, 0, NODE, false, "a:0,2|b:1");
}

static void test_ppn(void)
{
    PLACES("a=4,b=4,c=4,d=4", 6, 2, SLOT, false, "a:0,1|b:2,3|c:4,5");
    PLACES("a=4,b=4,c=4,d=4", 6, 2, NODE, false, "a:0,3|b:1,4|c:2,5");
    PLACES("a=4,b=4,c=4,d=4", 5, 2, SLOT, false, "a:0,1|b:2,3|c:4");
    PLACES("a=4,b=4,c=4,d=4", 5, 2, NODE, false, "a:0,3|b:1,4|c:2");
    PLACES("a=4,b=4", 8, 4, SLOT, false, "a:0,1,2,3|b:4,5,6,7");
    PLACES("a=1,b=1", 2, 1, SLOT, false, "a:0|b:1");
    REFUSED("a=4,b=4", 9, 4, SLOT, false,
            "--ppn 4 with 9 ranks needs 3 nodes, but only 2 hosts are given");
    REFUSED("a=4", 2, 1, SLOT, false,
            "--ppn 1 with 2 ranks needs 2 nodes, but only 1 host is given");
    /* K above a host's slots oversubscribes it */
    REFUSED("a=2,b=4", 6, 3, SLOT, false,
            "not enough slots: --ppn 3 puts 3 ranks on a:7470, which has 2 slots "
            "(--oversubscribe allows more ranks than slots)");
    PLACES("a=2,b=4", 6, 3, SLOT, true, "a:0,1,2|b:3,4,5");
    REFUSED("a=2/2,b=4", 6, 3, NODE, true, "--ppn 3 puts 3 ranks on a:7470, above its max_slots=2");
    /* the last node's share may be within its slots even when K is not */
    PLACES("a=4,b=1", 5, 4, SLOT, false, "a:0,1,2,3|b:4");
}

/* --ppn K without N (-N K alone): K ranks on every host, or on the local agent */
static void test_ppn_every_host(void)
{
    PLACES("a=4,b=4,c=4", 0, 2, SLOT, false, "a:0,1|b:2,3|c:4,5");
    PLACES("a=4,b=4,c=4", 0, 2, NODE, false, "a:0,3|b:1,4|c:2,5");
    PLACES(NULL, 0, 3, SLOT, false, "(local):0,1,2");
    REFUSED("a=1,b=4", 0, 2, SLOT, false,
            "not enough slots: --ppn 2 puts 2 ranks on a:7470, which has 1 slot "
            "(--oversubscribe allows more ranks than slots)");
    REFUSED("a=1,b=1,c=1,d=1,e=1", 0, 1u << 20, SLOT, true,
            "--ppn 1048576 on 5 nodes is 5242880 ranks: at most 4194304 can be placed");
}

static void test_local(void)
{
    PLACES(NULL, 5, 0, SLOT, false, "(local):0,1,2,3,4");
    PLACES(NULL, 5, 0, NODE, false, "(local):0,1,2,3,4");
    PLACES(NULL, 5, 5, SLOT, false, "(local):0,1,2,3,4");
    PLACES(NULL, 5, 8, SLOT, false, "(local):0,1,2,3,4");
    REFUSED(NULL, 5, 4, SLOT, false,
            "--ppn 4 with 5 ranks needs 2 nodes, but no hosts are given (only the local agent); "
            "use --hostfile or -H");
}

static void test_limits(void)
{
    REFUSED("a=1", 0, 0, SLOT, false, "0 ranks: at most 4194304 ranks can be placed on hosts");
    REFUSED(NULL, PLACEMENT_MAX_RANKS + 1, 0, SLOT, false,
            "4194305 ranks: at most 4194304 ranks can be placed on hosts");

    /* the largest cases stay linear: 65536 hosts, and a 2^20-slot host among them */
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    struct placement p;
    char name[32];
    for (unsigned i = 0; i < HOSTLIST_MAX_HOSTS; i++) {
        snprintf(name, sizeof name, "h%u", i);
        CHECK_EQ(hostlist_add(&l, name, false, 7470, i == 0 ? HOSTLIST_MAX_SLOTS : 1, 0), 0);
    }
    struct placement_request req = {
        .nprocs = PLACEMENT_MAX_RANKS, .map_by = PLACEMENT_MAP_NODE, .oversubscribe = true};
    CHECK_EQ(placement_compute(&l, &req, &p, &e), 0);
    check_consistent(&p);
    CHECK_EQ(p.nnodes, HOSTLIST_MAX_HOSTS);
    CHECK_EQ(p.rank_node[HOSTLIST_MAX_HOSTS], 0); /* second pass starts at h0 again */
    placement_free(&p);
    req.map_by = PLACEMENT_MAP_SLOT;
    CHECK_EQ(placement_compute(&l, &req, &p, &e), 0);
    check_consistent(&p);
    /* h0 fills its slots in three passes, then the fourth pass ends on it */
    CHECK_EQ(p.nodes[0].nranks,
             3 * HOSTLIST_MAX_SLOTS + (PLACEMENT_MAX_RANKS - 3 * (HOSTLIST_MAX_SLOTS + 65535)));
    CHECK_EQ(p.nodes[1].nranks, 3);
    placement_free(&p);
    req = (struct placement_request){.nprocs = HOSTLIST_MAX_HOSTS, .ppn = 1};
    CHECK_EQ(placement_compute(&l, &req, &p, &e), 0);
    CHECK_EQ(p.nnodes, HOSTLIST_MAX_HOSTS);
    placement_free(&p);
    hostlist_free(&l);
    CHECK_ERRORS(&e);
}

/* What placement_print writes for p (the caller frees it). */
static char *printed(const struct placement *p)
{
    char *s;
    size_t len;
    FILE *f = open_memstream(&s, &len);
    placement_print(p, f);
    fclose(f);
    return s;
}

static void test_print(void)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    struct placement p;
    CHECK_EQ(hostlist_add(&l, "node01", false, 7470, 2, 0), 0);
    CHECK_EQ(hostlist_add(&l, "::1", true, 7471, 2, 0), 0);
    struct placement_request req = {
        .nprocs = 5, .map_by = PLACEMENT_MAP_NODE, .oversubscribe = true};
    CHECK_EQ(placement_compute(&l, &req, &p, &e), 0);
    char *s = printed(&p);
    const char *want = "node 0: node01:7470, 3 ranks: 0,2,4\n"
                       "node 1: [::1]:7471, 2 ranks: 1,3\n"
                       "rank 0: node 0 (node01:7470), local rank 0\n"
                       "rank 1: node 1 ([::1]:7471), local rank 0\n"
                       "rank 2: node 0 (node01:7470), local rank 1\n"
                       "rank 3: node 1 ([::1]:7471), local rank 1\n"
                       "rank 4: node 0 (node01:7470), local rank 2\n";
    if (strcmp(s, want) != 0) {
        fprintf(stderr, "expected:\n%sgot:\n%s", want, s);
        exit(1);
    }
    free(s);
    placement_free(&p);

    /* ranges, and a single rank */
    req = (struct placement_request){.nprocs = 5, .ppn = 4};
    CHECK_EQ(placement_compute(&l, &req, &p, &e), -EINVAL); /* 4 > 2 slots */
    errlist_free(&e);
    req.oversubscribe = true;
    CHECK_EQ(placement_compute(&l, &req, &p, &e), 0);
    s = printed(&p);
    CHECK(strncmp(s, "node 0: node01:7470, 4 ranks: 0-3\nnode 1: [::1]:7471, 1 rank: 4\n", 64) ==
          0);
    free(s);
    placement_free(&p);
    hostlist_free(&l);

    req = (struct placement_request){.nprocs = 2};
    CHECK_EQ(placement_compute(NULL, &req, &p, &e), 0);
    s = printed(&p);
    CHECK(strcmp(s, "node 0: local agent, 2 ranks: 0-1\n"
                    "rank 0: node 0 (local agent), local rank 0\n"
                    "rank 1: node 0 (local agent), local rank 1\n") == 0);
    free(s);
    placement_free(&p);
}

/* keep_spare: the hosts without ranks follow the job's nodes, in host order, all their
 * slots free (MPI_Comm_spawn's room); without it they are left out (test_slot). */
static void test_spare(void)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    struct placement p;
    hosts(&l, "a=2,b=3,c=2,d=4");
    struct placement_request req = {.nprocs = 3, .map_by = PLACEMENT_MAP_NODE, .keep_spare = true};
    CHECK_EQ(placement_compute(&l, &req, &p, &e), 0);
    check_consistent(&p);
    CHECK_EQ(p.nnodes, 3);
    CHECK_EQ(p.nspare, 1);
    CHECK(strcmp(p.nodes[3].host, "d") == 0);
    CHECK_EQ(p.nodes[3].nranks, 0);
    CHECK_EQ(p.nodes[3].free_slots, 4);
    CHECK_EQ(p.nodes[0].free_slots, 1);
    placement_free(&p);
    req.map_by = PLACEMENT_MAP_SLOT;
    CHECK_EQ(placement_compute(&l, &req, &p, &e), 0);
    CHECK_EQ(p.nnodes, 2);
    CHECK_EQ(p.nspare, 2);
    CHECK(strcmp(p.nodes[2].host, "c") == 0 && strcmp(p.nodes[3].host, "d") == 0);
    CHECK_EQ(p.nodes[2].free_slots, 2);
    placement_free(&p);
    hostlist_free(&l);
    errlist_free(&e);
}

int main(void)
{
    test_slot();
    test_spare();
    test_node();
    test_oversubscribe();
    test_ppn();
    test_ppn_every_host();
    test_local();
    test_limits();
    test_print();
    puts("placement: ok");
    return 0;
}
