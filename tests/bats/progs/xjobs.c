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
