/* xjobs.c — two separately launched jobs of one user joined by MPI_Comm_accept/connect or
 * MPI_Comm_join (dynproc.bats, multinode_users.bats).
 *   accept FILE         rank 0 opens a port and writes it into FILE; the whole world accepts
 *                       on it, then runs the exchange below; prints "accept ok"
 *   connect FILE        the whole world connects to the port in FILE, the exchange; prints
 *                       "connect ok"
 * The exchange over the inter-communicator, both ways: every rank sends its rank to remote
 * rank (rank % remote size) and receives from each remote rank that sends to it; then every
 * rank to every remote rank (Isend, Recv by source); 3 MiB from
 * rank 0 to remote rank 0 and back (more than one frame), an MPI_Ssend; MPI_Barrier;
 * MPI_Bcast from each side's rank 0; MPI_Allreduce (each side gets the sum of the other's
 * ranks + 1); MPI_Intercomm_merge (accepting side first) with a ring of Sendrecv on it (and
 * MPI_Barrier on it refused with MPI_ERR_COMM: no collectives there yet);
 * MPI_Comm_disconnect.  Then the accepting side waits 1 s (the connecting job ends
 * meanwhile) and still runs a barrier of its own.
 *   survive FILE        the whole world accepts, then probes and receives from remote rank 0
 *                       with MPI_ERRORS_RETURN: the other job dies, the probe, an Iprobe and
 *                       the receive fail; prints
 *                       "survive ok: class C"
 *   die FILE            connects, then exits with 3 without a word
 *   linger FILE         connects, prints "linger connected", then sleeps 30 s (its agent is
 *                       killed meanwhile)
 *   wait-accept FILE    accepts; rank 0 receives from remote rank 0, which sends after 4 s
 *                       (wait-connect FILE): a wait on another job is no deadlock; prints
 *                       "wait ok"
 *   flood-accept FILE / flood-connect FILE
 *                       one rank each: the connecting side Isends 64 messages of 16 KiB while
 *                       the accepting side receives nothing, counts the sends done at once
 *                       (flow control, TMPI_XJOB_UNEXPECTED_MAX), then sends "go"; the other
 *                       receives go first, then the 64 in order; prints "flood: N of 64 done
 *                       before any receive"
 *   nbc-accept FILE / nbc-connect FILE
 *                       connect, merge; the accepting side starts MPI_Ibarrier on the
 *                       inter-communicator, then on the merged one, then MPI_Ibcast and
 *                       MPI_Iallreduce (also in place) on it, and each time MPI_Test finds
 *                       it unfinished (the connecting side enters 1.5 s later), then
 *                       MPI_Wait; prints "nbc ok: ..."
 *   nbp-accept FILE / nbp-connect FILE
 *                       connect, merge; for every other non-blocking collective on the merged
 *                       communicator (Ireduce, Igather(v) also with a strided send type and in
 *                       place, Iscatter(v), Iallgather(v) also in place, Ialltoall(v,w) also in
 *                       place, Ireduce_scatter(_block), Iscan, Iexscan), the persistent
 *                       MPI_Alltoall_init and MPI_Reduce_init (started twice), and Ireduce,
 *                       Iallgather, Ialltoall on the inter-communicator: the
 *                       accepting side posts it and MPI_Test finds it unfinished where it needs
 *                       the other side, a barrier of its own job, then its rank 0 sends "go"
 *                       to every remote rank, which receives it before it posts
 *                       (an operation completing inside its call deadlocks here); then
 *                       MPI_Wait and a check of every member's result; prints "nbp ok: N
 *                       operations"
 *   porder-accept FILE / porder-connect FILE
 *                       connect, merge; MPI_Bcast_init, MPI_Barrier_init, MPI_Allreduce_init
 *                       on the merged communicator, started three times, by each side in
 *                       the other's reverse order (MPI 4.0 §6.13: they match in the order of
 *                       the *_init calls), then MPI_Waitall and a check; prints "porder ok"
 *   join FILE ROLE [R]  rank R (0) joins the other job's joining rank over a socket (ROLE
 *                       listen: binds a Unix socket at FILE; connect: connects to it), then
 *                       exchanges an int both ways and disconnects; prints "join ok"
 *   bench-accept FILE / bench-connect FILE / bench-self -
 *                       rank 0 of each side: 8 B ping-pong (half round trip) and a 1 MiB
 *                       stream (64 sends, one ack) over the inter-communicator (bench-self:
 *                       ranks 0 and 1 of one job over MPI_COMM_WORLD); the first side prints
 *                       "lat_8B_us X bw_1MiB_MBps Y" (docs/bench/ANALYSIS.md) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "abort_check.h"

#define BIG (3 << 20)

static void read_port(const char *file, char *port)
{
    for (int i = 0; i < 6000 && access(file, F_OK) != 0; i++)
        usleep(10000);
    FILE *f = fopen(file, "r");
    CHECK(f && fgets(port, MPI_MAX_PORT_NAME, f), "cannot read %s", file);
    fclose(f);
    port[strcspn(port, "\n")] = 0;
}

static void write_port(const char *file, const char *port)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    CHECK(f && fprintf(f, "%s\n", port) > 0 && fclose(f) == 0, "cannot write %s", tmp);
    CHECK(rename(tmp, file) == 0, "rename %s", tmp);
}

/* The collectives on an intra-communicator of both jobs' ranks (ms members, this one mr): each
 * checks what every member gets. */
static void colls_on(MPI_Comm c, const char *what)
{
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    CHECK(MPI_Barrier(c) == MPI_SUCCESS, "%s: barrier", what);
    int v = r == n - 1 ? 4242 : -1;
    MPI_Bcast(&v, 1, MPI_INT, n - 1, c);
    CHECK(v == 4242, "%s: bcast from the last rank: %d", what, v);
    long long mine = r + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, c);
    CHECK(sum == (long long)n * (n + 1) / 2, "%s: allreduce %lld", what, sum);
    int mx = -1;
    MPI_Reduce(&r, &mx, 1, MPI_INT, MPI_MAX, 0, c);
    CHECK(r != 0 || mx == n - 1, "%s: reduce max %d", what, mx);
    int *all = malloc(sizeof *all * (size_t)n * 2), *two = malloc(sizeof *two * (size_t)n * 2);
    CHECK(all && two, "out of memory");
    int pair[2] = {r, 10 * r};
    MPI_Allgather(pair, 2, MPI_INT, all, 2, MPI_INT, c);
    for (int k = 0; k < n; k++)
        CHECK(all[2 * k] == k && all[2 * k + 1] == 10 * k, "%s: allgather block %d", what, k);
    MPI_Gather(&r, 1, MPI_INT, all, 1, MPI_INT, n - 1, c);
    for (int k = 0; r == n - 1 && k < n; k++)
        CHECK(all[k] == k, "%s: gather block %d: %d", what, k, all[k]);
    for (int k = 0; k < n; k++)
        two[k] = 100 * r + k;
    MPI_Alltoall(two, 1, MPI_INT, all, 1, MPI_INT, c);
    for (int k = 0; k < n; k++)
        CHECK(all[k] == 100 * k + r, "%s: alltoall from %d: %d", what, k, all[k]);
    for (int k = 0; k < n; k++)
        two[k] = k + r;
    int got = -1;
    MPI_Reduce_scatter_block(two, &got, 1, MPI_INT, MPI_SUM, c);
    CHECK(got == n * r + n * (n - 1) / 2, "%s: reduce_scatter_block %d", what, got);
    int pre = -1, ex = -1;
    MPI_Scan(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, c);
    CHECK(sum == (long long)(r + 1) * (r + 2) / 2, "%s: scan %lld", what, sum);
    int one = 1;
    MPI_Exscan(&one, &ex, 1, MPI_INT, MPI_SUM, c);
    CHECK(r == 0 || ex == r, "%s: exscan %d", what, ex);
    (void)pre;
    MPI_Request rq;
    CHECK(MPI_Iallreduce(&one, &got, 1, MPI_INT, MPI_SUM, c, &rq) == MPI_SUCCESS, "%s: iallreduce",
          what);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(got == n, "%s: iallreduce %d", what, got);
    free(all);
    free(two);
}

static void merged_colls(MPI_Comm merged)
{
    int mr, ms;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    colls_on(merged, "merged");
    MPI_Comm dup, half;
    CHECK(MPI_Comm_dup(merged, &dup) == MPI_SUCCESS, "dup of the merged communicator");
    colls_on(dup, "dup");
    MPI_Comm_free(&dup);
    /* even and odd merged ranks: each half has ranks of both jobs once both have two */
    CHECK(MPI_Comm_split(merged, mr % 2, -mr, &half) == MPI_SUCCESS, "split");
    int hr, hn;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hn);
    CHECK(hn == (ms + 1 - mr % 2) / 2 && hr == hn - 1 - mr / 2, "split: rank %d of %d", hr, hn);
    colls_on(half, "split");
    MPI_Comm_free(&half);
    /* the first and the last merged rank (one of each job): Comm_create, Comm_create_group */
    MPI_Group all, ends;
    MPI_Comm_group(merged, &all);
    int two[2] = {0, ms - 1};
    MPI_Group_incl(all, 2, two, &ends);
    MPI_Comm c2 = MPI_COMM_NULL, g2 = MPI_COMM_NULL, id;
    CHECK(MPI_Comm_create(merged, ends, &c2) == MPI_SUCCESS, "Comm_create");
    CHECK((c2 != MPI_COMM_NULL) == (mr == 0 || mr == ms - 1), "Comm_create: membership");
    if (mr == 0 || mr == ms - 1) {
        colls_on(c2, "create");
        MPI_Comm_free(&c2);
        CHECK(MPI_Comm_create_group(merged, ends, 5, &g2) == MPI_SUCCESS, "Comm_create_group");
        colls_on(g2, "create_group");
        MPI_Comm_free(&g2);
    }
    MPI_Group_free(&ends);
    MPI_Group_free(&all);
    MPI_Request rq;
    CHECK(MPI_Comm_idup(merged, &id, &rq) == MPI_SUCCESS, "Comm_idup");
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    colls_on(id, "idup");
    MPI_Comm_free(&id);
    if (mr == 0) printf("merged collectives ok on %d ranks\n", ms);
}

static void exchange(MPI_Comm inter, int accepting)
{
    int rank, size, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    /* p2p both ways: to remote rank % rsize; from every remote r with r % size == rank */
    MPI_Request rq;
    MPI_Isend(&rank, 1, MPI_INT, rank % rsize, 1, inter, &rq);
    for (int r = rank; r < rsize; r += size) {
        int v = -1;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 1, inter, &st);
        CHECK(v == st.MPI_SOURCE && v % size == rank, "p2p: got %d from %d", v, st.MPI_SOURCE);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    /* every rank to every remote rank and back, a value naming both (a job across nodes:
     * each of its hosts reaches each of the other's) */
    MPI_Request *rs = malloc(sizeof *rs * (size_t)rsize);
    CHECK(rs != NULL, "out of memory");
    int *out = malloc(sizeof *out * (size_t)rsize);
    CHECK(out != NULL, "out of memory");
    for (int r = 0; r < rsize; r++) {
        out[r] = 1000 * rank + r;
        MPI_Isend(&out[r], 1, MPI_INT, r, 11, inter, &rs[r]);
    }
    for (int r = 0; r < rsize; r++) {
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, r, 11, inter, MPI_STATUS_IGNORE);
        CHECK(v == 1000 * r + rank, "all pairs: got %d from remote %d", v, r);
    }
    MPI_Waitall(rsize, rs, MPI_STATUSES_IGNORE);
    free(out);
    free(rs);
    if (rank == 0) {
        char *b = malloc(BIG);
        CHECK(b != NULL, "out of memory");
        for (int i = 0; i < BIG; i++)
            b[i] = (char)(accepting ? i : i * 7);
        if (accepting) {
            MPI_Send(b, BIG, MPI_CHAR, 0, 2, inter);
            MPI_Recv(b, BIG, MPI_CHAR, 0, 3, inter, MPI_STATUS_IGNORE);
            for (int i = 0; i < BIG; i++)
                CHECK(b[i] == (char)(i * 7), "3 MiB back: byte %d is %d", i, b[i]);
        } else {
            char *c = malloc(BIG);
            CHECK(c != NULL, "out of memory");
            MPI_Recv(c, BIG, MPI_CHAR, 0, 2, inter, MPI_STATUS_IGNORE);
            for (int i = 0; i < BIG; i++)
                CHECK(c[i] == (char)i, "3 MiB: byte %d is %d", i, c[i]);
            free(c);
            MPI_Send(b, BIG, MPI_CHAR, 0, 3, inter);
        }
        free(b);
        int s = 5;
        if (accepting)
            MPI_Ssend(&s, 1, MPI_INT, 0, 4, inter);
        else
            MPI_Recv(&s, 1, MPI_INT, 0, 4, inter, MPI_STATUS_IGNORE);
        CHECK(s == 5, "ssend: %d", s);
    }
    MPI_Barrier(inter);
    /* Bcast: the accepting side's rank 0 first, then the connecting side's */
    for (int from_accept = 1; from_accept >= 0; from_accept--) {
        int v = accepting ? 1000 : 2000;
        int root = accepting == from_accept ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        MPI_Bcast(&v, 1, MPI_INT, root, inter);
        if (root == 0) CHECK(v == (accepting ? 2000 : 1000), "bcast: %d", v);
    }
    int mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(sum == rsize * (rsize + 1) / 2, "allreduce: %d, not %d", sum, rsize * (rsize + 1) / 2);
    MPI_Comm merged;
    CHECK(MPI_Intercomm_merge(inter, !accepting, &merged) == MPI_SUCCESS, "merge");
    int mr, ms;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    CHECK(ms == size + rsize && mr == (accepting ? rank : rsize + rank), "merged: rank %d of %d",
          mr, ms);
    int got = -1;
    MPI_Sendrecv(&mr, 1, MPI_INT, (mr + 1) % ms, 6, &got, 1, MPI_INT, (mr + ms - 1) % ms, 6, merged,
                 MPI_STATUS_IGNORE);
    CHECK(got == (mr + ms - 1) % ms, "merged ring: got %d", got);
    merged_colls(merged);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    CHECK(inter == MPI_COMM_NULL, "disconnect left the handle");
}

static void bench(MPI_Comm c, int peer, int first)
{
    char small[8] = {0};
    const int iters = 2000, reps = 64, big = 1 << 20;
    for (int warm = 0; warm < 2; warm++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < (warm ? iters : 100); i++) {
            if (first) {
                MPI_Send(small, 8, MPI_CHAR, peer, 1, c);
                MPI_Recv(small, 8, MPI_CHAR, peer, 1, c, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(small, 8, MPI_CHAR, peer, 1, c, MPI_STATUS_IGNORE);
                MPI_Send(small, 8, MPI_CHAR, peer, 1, c);
            }
        }
        double lat = (MPI_Wtime() - t0) / (2.0 * iters) * 1e6;
        char *b = malloc(big);
        CHECK(b != NULL, "out of memory");
        memset(b, 1, big);
        t0 = MPI_Wtime();
        for (int i = 0; i < (warm ? reps : 4); i++)
            if (first)
                MPI_Send(b, big, MPI_CHAR, peer, 2, c);
            else
                MPI_Recv(b, big, MPI_CHAR, peer, 2, c, MPI_STATUS_IGNORE);
        if (first)
            MPI_Recv(small, 1, MPI_CHAR, peer, 3, c, MPI_STATUS_IGNORE);
        else
            MPI_Send(small, 1, MPI_CHAR, peer, 3, c);
        double bw = (double)big * reps / (MPI_Wtime() - t0) / 1e6;
        free(b);
        if (warm && first) printf("lat_8B_us %.2f bw_1MiB_MBps %.1f\n", lat, bw);
    }
}

static int join_fd(const char *path, int listening)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(s >= 0, "socket");
    if (listening) {
        unlink(path);
        CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0 && listen(s, 1) == 0, "bind %s", path);
        int c = accept(s, NULL, NULL);
        CHECK(c >= 0, "accept");
        close(s);
        return c;
    }
    for (int i = 0; i < 6000; i++) {
        if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) return s;
        usleep(10000);
    }
    CHECK(0, "cannot connect to %s", path);
    return -1;
}

/* One non-blocking collective of nbp (op numbers below) posted on merged (ms members, this one
 * mr) or inter (remote size rs; acc: the accepting side, low in merged).  *pers: a persistent
 * request to start again and free.  Returns the request; nbp_check then checks the result. */
#define NBP_OPS 24
#define NBP_N 64 /* ints per buffer: enough for 8 members of 3 ints each way */
struct nbp {
    int sb[NBP_N], rb[NBP_N], sc[8], sd[8], rc[8], rd[8];
    MPI_Datatype st[8], rt[8], vec;
    long long ls, lr;
};
static const char *const nbp_name[NBP_OPS] = {"Ireduce",
                                              "Igather",
                                              "Igather strided",
                                              "Igather in place",
                                              "Igatherv",
                                              "Iscatter",
                                              "Iscatterv",
                                              "Iscatter in place",
                                              "Iallgather",
                                              "Iallgather in place",
                                              "Iallgatherv",
                                              "Ialltoall",
                                              "Ialltoall in place",
                                              "Ialltoallv",
                                              "Ialltoallw",
                                              "Ireduce_scatter",
                                              "Ireduce_scatter_block",
                                              "Iscan",
                                              "Iexscan",
                                              "Alltoall_init",
                                              "Reduce_init",
                                              "Ireduce inter",
                                              "Iallgather inter",
                                              "Ialltoall inter"};

static MPI_Request nbp_post(int op, struct nbp *b, MPI_Comm m, MPI_Comm inter, int acc,
                            MPI_Request *pers)
{
    int ms, mr, rs, lr;
    MPI_Comm_size(m, &ms);
    MPI_Comm_rank(m, &mr);
    MPI_Comm_remote_size(inter, &rs);
    MPI_Comm_rank(inter, &lr);
    MPI_Request q = MPI_REQUEST_NULL;
    for (int k = 0; k < NBP_N; k++) {
        b->sb[k] = 1000 * mr + k;
        b->rb[k] = -1;
    }
    for (int k = 0; k < ms; k++) { /* member k gets (or sends) k % 3 + 1 ints */
        b->sc[k] = b->rc[k] = k % 3 + 1;
        b->sd[k] = b->rd[k] = 3 * k;
        b->st[k] = b->rt[k] = MPI_INT;
    }
    int root = ms - 1, mine = mr % 3 + 1;
    b->ls = mr + 1;
    b->lr = -1;
    switch (op) {
    case 0:
        MPI_Ireduce(&b->ls, &b->lr, 1, MPI_LONG_LONG, MPI_SUM, root, m, &q);
        break;
    case 1:
        MPI_Igather(b->sb, 2, MPI_INT, b->rb, 2, MPI_INT, root, m, &q);
        break;
    case 2: /* elements 0 and 2 of the send buffer */
        MPI_Type_vector(2, 1, 2, MPI_INT, &b->vec);
        MPI_Type_commit(&b->vec);
        MPI_Igather(b->sb, 1, b->vec, b->rb, 2, MPI_INT, 0, m, &q);
        MPI_Type_free(&b->vec); /* the operation holds it */
        break;
    case 3:
        if (mr == root) memcpy(b->rb + 2 * mr, b->sb, 2 * sizeof(int));
        MPI_Igather(mr == root ? MPI_IN_PLACE : b->sb, 2, MPI_INT, b->rb, 2, MPI_INT, root, m, &q);
        break;
    case 4:
        MPI_Igatherv(b->sb, mine, MPI_INT, b->rb, b->rc, b->rd, MPI_INT, 0, m, &q);
        break;
    case 5:
        MPI_Iscatter(b->sb, 2, MPI_INT, b->rb, 2, MPI_INT, root, m, &q);
        break;
    case 6:
        MPI_Iscatterv(b->sb, b->sc, b->sd, MPI_INT, b->rb, mine, MPI_INT, 0, m, &q);
        break;
    case 7:
        MPI_Iscatter(b->sb, 2, MPI_INT, mr == 0 ? MPI_IN_PLACE : b->rb, 2, MPI_INT, 0, m, &q);
        break;
    case 8:
        MPI_Iallgather(b->sb, 2, MPI_INT, b->rb, 2, MPI_INT, m, &q);
        break;
    case 9:
        b->rb[2 * mr] = 1000 * mr;
        b->rb[2 * mr + 1] = 1000 * mr + 1;
        MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b->rb, 2, MPI_INT, m, &q);
        break;
    case 10:
        MPI_Iallgatherv(b->sb, mine, MPI_INT, b->rb, b->rc, b->rd, MPI_INT, m, &q);
        break;
    case 11:
        MPI_Ialltoall(b->sb, 2, MPI_INT, b->rb, 2, MPI_INT, m, &q);
        break;
    case 12:
        memcpy(b->rb, b->sb, sizeof b->rb);
        MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b->rb, 2, MPI_INT, m, &q);
        break;
    case 13: /* member k gets k % 3 + 1 ints from everyone; sends peer j j % 3 + 1 */
        for (int k = 0; k < ms; k++) {
            b->rc[k] = mine;
            b->rd[k] = 3 * k;
        }
        MPI_Ialltoallv(b->sb, b->sc, b->sd, MPI_INT, b->rb, b->rc, b->rd, MPI_INT, m, &q);
        break;
    case 14: /* in bytes: from k, ints at 3k; to k, ints at 3k */
        for (int k = 0; k < ms; k++) {
            b->rc[k] = mine;
            b->sd[k] *= (int)sizeof(int);
            b->rd[k] = 3 * k * (int)sizeof(int);
        }
        MPI_Ialltoallw(b->sb, b->sc, b->sd, b->st, b->rb, b->rc, b->rd, b->rt, m, &q);
        break;
    case 15:
        MPI_Ireduce_scatter(b->sb, b->rb, b->rc, MPI_INT, MPI_SUM, m, &q);
        break;
    case 16:
        MPI_Ireduce_scatter_block(b->sb, b->rb, 2, MPI_INT, MPI_SUM, m, &q);
        break;
    case 17:
        MPI_Iscan(&b->ls, &b->lr, 1, MPI_LONG_LONG, MPI_SUM, m, &q);
        break;
    case 18:
        MPI_Iexscan(&b->ls, &b->lr, 1, MPI_LONG_LONG, MPI_SUM, m, &q);
        break;
    case 19:
        if (*pers == MPI_REQUEST_NULL)
            MPI_Alltoall_init(b->sb, 2, MPI_INT, b->rb, 2, MPI_INT, m, MPI_INFO_NULL, pers);
        MPI_Start(pers);
        q = *pers;
        break;
    case 20:
        if (*pers == MPI_REQUEST_NULL)
            MPI_Reduce_init(&b->ls, &b->lr, 1, MPI_LONG_LONG, MPI_SUM, root, m, MPI_INFO_NULL,
                            pers);
        MPI_Start(pers);
        q = *pers;
        break;
    case 21: /* the accepting side's rank 0 gets the sum of the other side's ranks + 1 */
        b->ls = lr + 1;
        MPI_Ireduce(&b->ls, &b->lr, 1, MPI_LONG_LONG, MPI_SUM,
                    acc ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter, &q);
        break;
    case 22:
        b->sb[0] = 1000 * lr + (acc ? 1 : 2);
        MPI_Iallgather(b->sb, 1, MPI_INT, b->rb, 1, MPI_INT, inter, &q);
        break;
    default: /* 23 */
        for (int k = 0; k < rs; k++)
            b->sb[k] = 100 * lr + k + (acc ? 0 : 50);
        MPI_Ialltoall(b->sb, 1, MPI_INT, b->rb, 1, MPI_INT, inter, &q);
        break;
    }
    (void)rs;
    return q;
}

static void nbp_check(int op, const struct nbp *b, MPI_Comm m, MPI_Comm inter, int acc)
{
    int ms, mr, rs, lr, mine;
    MPI_Comm_size(m, &ms);
    MPI_Comm_rank(m, &mr);
    MPI_Comm_remote_size(inter, &rs);
    MPI_Comm_rank(inter, &lr);
    mine = mr % 3 + 1;
    int root = ms - 1;
    const char *w = nbp_name[op];
    const int *r = b->rb;
    switch (op) {
    case 0:
    case 20:
        CHECK(mr != root || b->lr == (long long)ms * (ms + 1) / 2, "%s: %lld", w, b->lr);
        break;
    case 1:
    case 3:
        for (int k = 0; mr == root && k < ms; k++)
            CHECK(r[2 * k] == 1000 * k && r[2 * k + 1] == 1000 * k + 1, "%s: block %d: %d %d", w, k,
                  r[2 * k], r[2 * k + 1]);
        break;
    case 2:
        for (int k = 0; mr == 0 && k < ms; k++)
            CHECK(r[2 * k] == 1000 * k && r[2 * k + 1] == 1000 * k + 2, "%s: block %d: %d %d", w, k,
                  r[2 * k], r[2 * k + 1]);
        break;
    case 4:
        for (int k = 0; mr == 0 && k < ms; k++)
            for (int j = 0; j < k % 3 + 1; j++)
                CHECK(r[3 * k + j] == 1000 * k + j, "%s: block %d[%d]: %d", w, k, j, r[3 * k + j]);
        break;
    case 5:
        CHECK(r[0] == 1000 * root + 2 * mr && r[1] == 1000 * root + 2 * mr + 1, "%s: %d %d", w,
              r[0], r[1]);
        break;
    case 6:
        for (int j = 0; j < mine; j++)
            CHECK(r[j] == 3 * mr + j, "%s: [%d]: %d", w, j, r[j]);
        break;
    case 7:
        CHECK(mr == 0 || (r[0] == 2 * mr && r[1] == 2 * mr + 1), "%s: %d %d", w, r[0], r[1]);
        break;
    case 8:
    case 9:
        for (int k = 0; k < ms; k++)
            CHECK(r[2 * k] == 1000 * k && r[2 * k + 1] == 1000 * k + 1, "%s: block %d: %d %d", w, k,
                  r[2 * k], r[2 * k + 1]);
        break;
    case 10:
        for (int k = 0; k < ms; k++)
            for (int j = 0; j < k % 3 + 1; j++)
                CHECK(r[3 * k + j] == 1000 * k + j, "%s: block %d[%d]: %d", w, k, j, r[3 * k + j]);
        break;
    case 11:
    case 12:
    case 19:
        for (int k = 0; k < ms; k++)
            CHECK(r[2 * k] == 1000 * k + 2 * mr && r[2 * k + 1] == 1000 * k + 2 * mr + 1,
                  "%s: from %d: %d %d", w, k, r[2 * k], r[2 * k + 1]);
        break;
    case 13:
    case 14:
        for (int k = 0; k < ms; k++)
            for (int j = 0; j < mine; j++)
                CHECK(r[3 * k + j] == 1000 * k + 3 * mr + j, "%s: from %d[%d]: %d", w, k, j,
                      r[3 * k + j]);
        break;
    case 15: /* segment mr: offsets sum of (k % 3 + 1) for k < mr */
    case 16: {
        int off = 0, cnt = op == 15 ? mine : 2;
        for (int k = 0; k < mr; k++)
            off += op == 15 ? k % 3 + 1 : 2;
        for (int j = 0; j < cnt; j++) {
            int want = 1000 * ms * (ms - 1) / 2 + ms * (off + j);
            CHECK(r[j] == want, "%s: [%d]: %d, not %d", w, j, r[j], want);
        }
        break;
    }
    case 17:
        CHECK(b->lr == (long long)(mr + 1) * (mr + 2) / 2, "%s: %lld", w, b->lr);
        break;
    case 18:
        CHECK(mr == 0 || b->lr == (long long)mr * (mr + 1) / 2, "%s: %lld", w, b->lr);
        break;
    case 21:
        CHECK(!acc || lr != 0 || b->lr == (long long)rs * (rs + 1) / 2, "%s: %lld", w, b->lr);
        break;
    case 22:
        for (int k = 0; k < rs; k++)
            CHECK(r[k] == 1000 * k + (acc ? 2 : 1), "%s: from %d: %d", w, k, r[k]);
        break;
    default:
        for (int k = 0; k < rs; k++)
            CHECK(r[k] == 100 * k + lr + (acc ? 50 : 0), "%s: from %d: %d", w, k, r[k]);
        break;
    }
}

/* Whether accepting member mr (merged; lr on the inter-communicator) gets anything from the
 * connecting side in op, so that MPI_Test must find it unfinished before that side entered (a
 * member that only sends, or only hears from its own job, may finish at once). */
static int nbp_waits(int op, int mr, int ms, int lr)
{
    switch (op) {
    case 0: /* rooted at the connecting side's last rank, or at rank 0 sending only */
    case 1:
    case 3:
    case 6:
    case 7:
    case 17: /* the scans: the accepting side's ranks come first */
    case 18:
    case 20:
        return 0;
    case 2:
    case 4:
        return mr == 0;
    case 21:
        return lr == 0;
    default:
        (void)ms;
        return 1;
    }
}

/* nbp: see the top of the file. */
static void nbp_run(MPI_Comm inter, int acc)
{
    MPI_Comm m;
    CHECK(MPI_Intercomm_merge(inter, !acc, &m) == MPI_SUCCESS, "merge");
    /* a failed operation is named by the check of its MPI_Wait */
    MPI_Comm_set_errhandler(m, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int rs, lr;
    MPI_Comm_remote_size(inter, &rs);
    MPI_Comm_rank(inter, &lr);
    static struct nbp b;
    MPI_Request pers[NBP_OPS];
    for (int op = 0; op < NBP_OPS; op++)
        pers[op] = MPI_REQUEST_NULL;
    int ran = 0;
    for (int round = 0; round < 2; round++) {
        for (int op = 0; op < NBP_OPS; op++) {
            /* the persistent ones twice, the others once */
            if (round == 1 && op != 19 && op != 20) continue;
            int go = 0;
            if (!acc) { /* enters only once the accepting side has posted */
                MPI_Recv(&go, 1, MPI_INT, 0, 900 + op, inter, MPI_STATUS_IGNORE);
                CHECK(go == op + 1, "go for %s: %d", nbp_name[op], go);
            }
            MPI_Request q = nbp_post(op, &b, m, inter, acc, &pers[op]);
            if (acc) {
                int flag = 1, mr, ms;
                MPI_Comm_rank(m, &mr);
                MPI_Comm_size(m, &ms);
                if (nbp_waits(op, mr, ms, lr)) {
                    MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
                    CHECK(!flag, "%s finished before the other job entered it", nbp_name[op]);
                }
                /* every accepting member has tested before the other side may enter */
                MPI_Barrier(MPI_COMM_WORLD);
                go = op + 1;
                for (int k = 0; lr == 0 && k < rs; k++)
                    MPI_Send(&go, 1, MPI_INT, k, 900 + op, inter);
            }
            CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s: MPI_Wait", nbp_name[op]);
            nbp_check(op, &b, m, inter, acc);
            ran++;
        }
    }
    MPI_Request_free(&pers[19]);
    MPI_Request_free(&pers[20]);
    MPI_Comm_free(&m);
    if (lr == 0 && acc) printf("nbp ok: %d operations\n", ran);
}

/* porder: see the top of the file. */
static void porder_run(MPI_Comm inter, int acc)
{
    MPI_Comm m;
    CHECK(MPI_Intercomm_merge(inter, !acc, &m) == MPI_SUCCESS, "merge");
    int mr, ms;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    int bc, v, sum;
    MPI_Request r[3];
    CHECK(MPI_Bcast_init(&bc, 1, MPI_INT, ms - 1, m, MPI_INFO_NULL, &r[0]) == MPI_SUCCESS, "init");
    CHECK(MPI_Barrier_init(m, MPI_INFO_NULL, &r[1]) == MPI_SUCCESS, "init");
    CHECK(MPI_Allreduce_init(&v, &sum, 1, MPI_INT, MPI_SUM, m, MPI_INFO_NULL, &r[2]) == MPI_SUCCESS,
          "init");
    for (int round = 0; round < 3; round++) {
        bc = mr == ms - 1 ? 40 + round : -1;
        v = mr + round;
        sum = -1;
        for (int i = 0; i < 3; i++)
            CHECK(MPI_Start(&r[acc ? i : 2 - i]) == MPI_SUCCESS, "start");
        CHECK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
        CHECK(bc == 40 + round, "round %d: Bcast_init gave %d", round, bc);
        int want = ms * (ms - 1) / 2 + ms * round;
        CHECK(sum == want, "round %d: Allreduce_init gave %d, want %d", round, sum, want);
    }
    for (int i = 0; i < 3; i++)
        MPI_Request_free(&r[i]);
    MPI_Comm_free(&m);
    if (mr == 0 && acc) printf("porder ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(argc >= 3, "usage: accept|connect|survive|die|join FILE [ROLE]");
    const char *mode = argv[1], *file = argv[2];
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter = MPI_COMM_NULL;
    if (!strcmp(mode, "wait-accept") || !strcmp(mode, "wait-connect")) {
        int acc = !strcmp(mode, "wait-accept");
        if (acc && rank == 0) {
            CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
            write_port(file, port);
        } else if (!acc) {
            read_port(file, port);
        }
        int rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter)
                     : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        CHECK(rc == MPI_SUCCESS, "accept/connect");
        int v = 0;
        if (rank == 0 && acc) {
            MPI_Recv(&v, 1, MPI_INT, 0, 8, inter, MPI_STATUS_IGNORE);
            CHECK(v == 8, "wait: got %d", v);
        } else if (rank == 0) {
            sleep(4);
            v = 8;
            MPI_Send(&v, 1, MPI_INT, 0, 8, inter);
        }
        MPI_Comm_disconnect(&inter);
        if (rank == 0 && acc) printf("wait ok\n");
    } else if (!strcmp(mode, "accept") || !strcmp(mode, "survive")) {
        if (rank == 0) {
            CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
            write_port(file, port);
        }
        CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter) == MPI_SUCCESS,
              "accept");
        if (rank == 0) MPI_Close_port(port);
        if (!strcmp(mode, "accept")) {
            exchange(inter, 1);
            sleep(1);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) printf("accept ok\n");
        } else {
            MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
            int v, flag = 1;
            /* a probe waiting for the other job wakes with an error when it dies */
            int rc = MPI_Probe(0, 9, inter, MPI_STATUS_IGNORE);
            CHECK(rc != MPI_SUCCESS, "a probe of the dead job succeeded");
            rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &flag, MPI_STATUS_IGNORE);
            CHECK(rc != MPI_SUCCESS, "an Iprobe of the dead job succeeded");
            rc = MPI_Recv(&v, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE);
            CHECK(rc != MPI_SUCCESS, "a receive from the dead job succeeded");
            rc = MPI_Send(&v, 1, MPI_INT, 0, 9, inter);
            CHECK(rc != MPI_SUCCESS, "a send to the dead job succeeded");
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) printf("survive ok: class %d\n", err_class(rc));
        }
    } else if (!strcmp(mode, "connect") || !strcmp(mode, "die") || !strcmp(mode, "linger")) {
        read_port(file, port);
        CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter) == MPI_SUCCESS,
              "connect");
        if (!strcmp(mode, "linger")) {
            printf("linger connected\n");
            fflush(stdout);
            sleep(30);
            return 0;
        }
        if (!strcmp(mode, "die")) {
            MPI_Barrier(MPI_COMM_WORLD);
            exit(3);
        }
        exchange(inter, 0);
        if (rank == 0) printf("connect ok\n");
    } else if (!strcmp(mode, "flood-accept") || !strcmp(mode, "flood-connect")) {
        enum { NMSG = 64, MSZ = 16 << 10 };
        int acc = !strcmp(mode, "flood-accept"), go = 7;
        if (acc) {
            CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
            write_port(file, port);
        } else {
            read_port(file, port);
        }
        int rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter)
                     : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        CHECK(rc == MPI_SUCCESS, "connect/accept");
        char *b = malloc((size_t)NMSG * MSZ);
        CHECK(b != NULL, "out of memory");
        if (acc) {
            MPI_Recv(&go, 1, MPI_INT, 0, 1, inter, MPI_STATUS_IGNORE);
            CHECK(go == 8, "go: %d", go);
            for (int i = 0; i < NMSG; i++) {
                MPI_Recv(b, MSZ, MPI_CHAR, 0, 2, inter, MPI_STATUS_IGNORE);
                for (int k = 0; k < MSZ; k++)
                    CHECK(b[k] == (char)(i + k), "message %d byte %d: %d", i, k, b[k]);
            }
            MPI_Send(&go, 1, MPI_INT, 0, 3, inter);
        } else {
            MPI_Request rq[NMSG];
            for (int i = 0; i < NMSG; i++) {
                for (int k = 0; k < MSZ; k++)
                    b[(size_t)i * MSZ + k] = (char)(i + k);
                MPI_Isend(b + (size_t)i * MSZ, MSZ, MPI_CHAR, 0, 2, inter, &rq[i]);
            }
            int done = 0;
            for (int i = 0; i < NMSG; i++) {
                int flag = 0;
                MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE);
                done += flag;
            }
            go = 8;
            MPI_Send(&go, 1, MPI_INT, 0, 1, inter);
            MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE);
            MPI_Recv(&go, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
            printf("flood: %d of %d done before any receive\n", done, NMSG);
        }
        free(b);
        MPI_Comm_disconnect(&inter);
    } else if (!strncmp(mode, "bench-", 6)) {
        int acc = !strcmp(mode, "bench-accept"), self = !strcmp(mode, "bench-self");
        if (self) {
            if (rank < 2) bench(MPI_COMM_WORLD, !rank, rank == 0);
        } else {
            if (acc && rank == 0) {
                CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
                write_port(file, port);
            } else if (!acc) {
                read_port(file, port);
            }
            int rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter)
                         : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            CHECK(rc == MPI_SUCCESS, "accept/connect");
            bench(inter, 0, acc);
            MPI_Comm_disconnect(&inter);
        }
    } else if (!strcmp(mode, "nbc-accept") || !strcmp(mode, "nbc-connect")) {
        int acc = !strcmp(mode, "nbc-accept");
        if (acc && rank == 0) {
            CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
            write_port(file, port);
        } else if (!acc) {
            read_port(file, port);
        }
        int rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter)
                     : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        CHECK(rc == MPI_SUCCESS, "accept/connect");
        MPI_Comm merged;
        CHECK(MPI_Intercomm_merge(inter, !acc, &merged) == MPI_SUCCESS, "merge");
        int ms, mr;
        MPI_Comm_size(merged, &ms);
        MPI_Comm_rank(merged, &mr);
        /* the accepting side starts each operation and finds it unfinished while the other
         * side waits 1.5 s before it enters (a barrier of its own job first) */
        const char *what[5] = {"Ibarrier on the inter-communicator", "Ibarrier on the merged one",
                               "Ibcast on the merged one", "Iallreduce on the merged one",
                               "Iallreduce in place on the merged one"};
        for (int op = 0; op < 5; op++) {
            MPI_Request rq;
            int v = mr == ms - 1 ? 77 + op : -1, flag = 1;
            if (!acc) {
                sleep(1);
                usleep(500000);
            }
            if (op == 0) MPI_Ibarrier(inter, &rq);
            if (op == 1) MPI_Ibarrier(merged, &rq);
            if (op == 2) MPI_Ibcast(&v, 1, MPI_INT, ms - 1, merged, &rq);
            long long mine[2] = {mr + 1, 10 * (mr + 1)}, sum[2] = {-1, -1};
            if (op == 3) MPI_Iallreduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, merged, &rq);
            if (op == 4) {
                sum[0] = mine[0];
                sum[1] = mine[1];
                MPI_Iallreduce(MPI_IN_PLACE, sum, 2, MPI_LONG_LONG, MPI_SUM, merged, &rq);
            }
            if (acc) {
                MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
                CHECK(!flag, "%s finished before the other job entered it", what[op]);
            }
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            CHECK(op != 2 || v == 79, "%s: %d", what[op], v);
            long long want = (long long)ms * (ms + 1) / 2;
            CHECK(op < 3 || (sum[0] == want && sum[1] == 10 * want), "%s: %lld %lld", what[op],
                  sum[0], sum[1]);
        }
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&inter);
        if (rank == 0 && acc) printf("nbc ok: pending until the other job entered\n");
    } else if (!strcmp(mode, "nbp-accept") || !strcmp(mode, "nbp-connect") ||
               !strcmp(mode, "porder-accept") || !strcmp(mode, "porder-connect")) {
        int acc = !strcmp(mode, "nbp-accept") || !strcmp(mode, "porder-accept");
        if (acc && rank == 0) {
            CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
            write_port(file, port);
        } else if (!acc) {
            read_port(file, port);
        }
        int rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter)
                     : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        CHECK(rc == MPI_SUCCESS, "accept/connect");
        if (mode[1] == 'b')
            nbp_run(inter, acc);
        else
            porder_run(inter, acc);
        MPI_Comm_disconnect(&inter);
    } else if (!strcmp(mode, "join")) {
        CHECK(argc >= 4, "join FILE listen|connect [RANK]");
        if (rank == (argc > 4 ? atoi(argv[4]) : 0)) {
            int listening = !strcmp(argv[3], "listen");
            int fd = join_fd(file, listening);
            CHECK(MPI_Comm_join(fd, &inter) == MPI_SUCCESS, "MPI_Comm_join");
            int rs;
            MPI_Comm_remote_size(inter, &rs);
            CHECK(rs == 1, "join: remote size %d", rs);
            int v = listening ? 11 : 22, w = -1;
            MPI_Sendrecv(&v, 1, MPI_INT, 0, 7, &w, 1, MPI_INT, 0, 7, inter, MPI_STATUS_IGNORE);
            CHECK(w == (listening ? 22 : 11), "join: got %d", w);
            MPI_Comm_disconnect(&inter);
            close(fd);
            printf("join ok\n");
        }
    }
    MPI_Finalize();
    return 0;
}
