/* test_deadlock.c — the deadlock rule and report (agent/jobs/deadlock.c): the classic cycles
 * are found and named, and everything that may still move (a computing rank, a rank woken
 * since it slept, a frame in flight, counters that moved, a helper thread at work, a missing
 * part) is not a deadlock. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "deadlock.h"

#define NR 4

struct fixture {
    Tmpi__RankState st[NR];
    Tmpi__RankState *ptr[NR];
    uint64_t sent[2], handled[2];
    struct ranks_snap snap;
};

static void init(struct fixture *f, uint32_t nranks)
{
    memset(f, 0, sizeof *f);
    for (uint32_t r = 0; r < nranks; r++) {
        tmpi__rank_state__init(&f->st[r]);
        f->st[r].rank = r;
        f->st[r].activity = "computing";
        f->st[r].call = "";
        f->st[r].comm = "";
        f->st[r].peer = -2;
        f->st[r].peer_world = -1;
        f->st[r].tag = -2;
        f->ptr[r] = &f->st[r];
    }
    f->snap.nranks = nranks;
    f->snap.ranks = f->ptr;
    f->snap.nparts = 2;
    f->snap.sent = f->sent;
    f->snap.handled = f->handled;
    f->snap.complete = 1;
}

static void waiting(struct fixture *f, uint32_t r, const char *call, int peer, int tag)
{
    Tmpi__RankState *s = &f->st[r];
    s->activity = "waiting";
    s->call = (char *)call;
    s->peer = peer;
    s->peer_world = peer >= 0 ? peer : -1;
    s->tag = tag;
    s->comm = "MPI_COMM_WORLD";
    s->comm_world = 1;
    s->comm_size = f->snap.nranks;
    s->blocked = 1;
    s->sleeps = 3;
}

static int found(struct fixture *a, struct fixture *b, char *rep, size_t len)
{
    return deadlock_find(&a->snap, &b->snap, rep, len);
}

static void test_both_receive_first(void)
{
    struct fixture a, b;
    char rep[512];
    for (int k = 0; k < 2; k++) {
        struct fixture *f = k ? &b : &a;
        init(f, 2);
        waiting(f, 0, "MPI_Recv", 1, 7);
        waiting(f, 1, "MPI_Recv", 0, 7);
    }
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 1);
    CHECK(strcmp(rep, "deadlock: rank 0 in MPI_Recv(source 1, tag 7, MPI_COMM_WORLD) waits for "
                      "rank 1; rank 1 in MPI_Recv(source 0, tag 7, MPI_COMM_WORLD) waits for "
                      "rank 0") == 0,
          "report: %s", rep);
    /* woken since it slept: it may run */
    b.st[1].blocked = 0;
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 0);
    b.st[1].blocked = 1;
    /* slept again in between: something happened */
    b.st[0].sleeps = 4;
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 0);
    b.st[0].sleeps = 3;
    /* a rank computing */
    b.st[1].activity = "computing";
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 0);
    b.st[1].activity = "waiting";
    /* an MPI_THREAD_MULTIPLE rank is never known to be stuck */
    b.st[1].activity = "unknown";
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 0);
    b.st[1].activity = "waiting";
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 1);
}

static void test_in_flight(void)
{
    struct fixture a, b;
    char rep[512];
    for (int k = 0; k < 2; k++) {
        struct fixture *f = k ? &b : &a;
        init(f, 2);
        waiting(f, 0, "MPI_Recv", 1, 7);
        waiting(f, 1, "MPI_Recv", 0, 7);
        f->sent[0] = 10;
        f->handled[1] = 10;
        f->sent[1] = 4;
        f->handled[0] = 4;
    }
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 1);
    /* one frame on its way from node 0 to node 1 */
    a.sent[0] = b.sent[0] = 11;
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 0);
    /* counters that moved between the snapshots (then balanced) */
    a.sent[0] = 10;
    b.handled[1] = 11;
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 0);
    b.sent[0] = 10;
    b.handled[1] = 10;
    /* a helper thread running a round */
    b.snap.helpers_busy = 1;
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 0);
    b.snap.helpers_busy = 0;
    /* a node did not answer */
    a.snap.complete = 0;
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 0);
    CHECK_EQ(deadlock_find(NULL, &b.snap, rep, sizeof rep), 0);
}

static void test_skipped_barrier(void)
{
    struct fixture a, b;
    char rep[512];
    for (int k = 0; k < 2; k++) {
        struct fixture *f = k ? &b : &a;
        init(f, 3);
        waiting(f, 0, "MPI_Barrier", -3, -2);
        waiting(f, 1, "MPI_Recv", 0, 3);
        waiting(f, 2, "MPI_Barrier", -3, -2);
    }
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 1);
    CHECK(strcmp(rep, "deadlock: rank 0 in MPI_Barrier(MPI_COMM_WORLD) waits for rank 1; rank 1 "
                      "in MPI_Recv(source 0, tag 3, MPI_COMM_WORLD) waits for rank 0; rank 2 in "
                      "MPI_Barrier(MPI_COMM_WORLD) waits for rank 1") == 0,
          "report: %s", rep);
}

static void test_ended_peer_and_ssend(void)
{
    struct fixture a, b;
    char rep[512];
    for (int k = 0; k < 2; k++) {
        struct fixture *f = k ? &b : &a;
        init(f, 3);
        waiting(f, 0, "MPI_Ssend", 1, 1);
        waiting(f, 1, "MPI_Recv", 0, 2);
        f->st[2].activity = "ended";
    }
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 1);
    CHECK(strstr(rep, "rank 0 in MPI_Ssend(dest 1, tag 1, MPI_COMM_WORLD) waits for rank 1") &&
              strstr(rep, "rank 1 in MPI_Recv(source 0, tag 2, MPI_COMM_WORLD) waits for rank 0"),
          "report: %s", rep);
    /* a rank that waits for one that ended */
    for (int k = 0; k < 2; k++) {
        struct fixture *f = k ? &b : &a;
        init(f, 2);
        waiting(f, 0, "MPI_Recv", 1, -1);
        f->st[1].activity = "ended";
    }
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 1);
    CHECK(strcmp(rep, "deadlock: rank 0 in MPI_Recv(source 1, MPI_ANY_TAG, MPI_COMM_WORLD) waits "
                      "for rank 1, which has ended") == 0,
          "report: %s", rep);
    /* every rank ended: a finished job, not a deadlock */
    a.st[0].activity = b.st[0].activity = "ended";
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 0);
}

static void test_waits_without_a_named_peer(void)
{
    struct fixture a, b;
    char rep[512];
    for (int k = 0; k < 2; k++) {
        struct fixture *f = k ? &b : &a;
        init(f, 2);
        waiting(f, 0, "MPI_Wait", 1, 4);
        f->st[0].peer_is_dest = 1;
        waiting(f, 1, "MPI_Waitany", -2, -2);
        f->st[1].comm = "";
        f->st[1].comm_world = 0;
    }
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 1);
    /* no cycle: rank 1 names nobody; both are listed */
    CHECK(strcmp(rep, "deadlock: rank 0 in MPI_Wait(dest 1, tag 4, MPI_COMM_WORLD) waits for "
                      "rank 1; rank 1 in MPI_Waitany()") == 0,
          "report: %s", rep);
}

static void test_report_is_bounded(void)
{
    struct fixture a, b;
    char rep[64];
    for (int k = 0; k < 2; k++) {
        struct fixture *f = k ? &b : &a;
        init(f, 2);
        waiting(f, 0, "MPI_Recv", 1, 7);
        waiting(f, 1, "MPI_Recv", 0, 7);
    }
    CHECK_EQ(found(&a, &b, rep, sizeof rep), 1);
    CHECK(strlen(rep) < sizeof rep && strstr(rep, "..."), "report: %s", rep);
}

int main(void)
{
    test_both_receive_first();
    test_in_flight();
    test_skipped_barrier();
    test_ended_peer_and_ssend();
    test_waits_without_a_named_peer();
    test_report_is_bounded();
    return 0;
}
