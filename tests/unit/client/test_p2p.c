/* test_p2p.c — point-to-point semantics of libtmpi: delivery across the eager limit, MPI
 * ordering with and without wildcards, truncation, Ssend, the Wait/Test family, Probe,
 * Cancel, PROC_NULL, Sendrecv, Bsend, and communicator separation. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define EAGER 4096

static int run(int n, th_rank_fn fn)
{
    struct th_opts o = {.nranks = n, .eager_limit = EAGER};
    struct th_result res;
    int r = th_run(&o, fn, NULL, &res);
    if (r)
        fprintf(stderr, "  job failed: rank %d code %d%s%s\n", res.failed_rank, res.code,
                res.aborted ? ", aborted: " : "", res.aborted ? res.abort_why : "");
    return r;
}

static unsigned char pattern(size_t i, int salt)
{
    return (unsigned char)(i * 31 + salt);
}

/* Sizes around the eager limit, with the receive posted first and posted late. */
static int rank_sizes(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    static const size_t sizes[] = {0, 1, 100, EAGER - 1, EAGER, EAGER + 1, 3 * EAGER, 1 << 20};
    size_t max = 1 << 20;
    unsigned char *buf = malloc(max);
    TH_CHECK(buf, "malloc");
    for (int late = 0; late < 2; late++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            int salt = (int)(k + 10 * late);
            if (rank == 0) {
                for (size_t i = 0; i < n; i++)
                    buf[i] = pattern(i, salt);
                if (late) /* let rank 1 post first */
                    TH_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                TH_MPI(MPI_Send(buf, (int)n, MPI_BYTE, 1, (int)k, MPI_COMM_WORLD));
            } else if (rank == 1) {
                memset(buf, 0xee, max);
                MPI_Status st;
                if (late) {
                    MPI_Request rq;
                    TH_MPI(MPI_Irecv(buf, (int)max, MPI_BYTE, 0, (int)k, MPI_COMM_WORLD, &rq));
                    TH_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD));
                    TH_MPI(MPI_Wait(&rq, &st));
                } else {
                    TH_MPI(MPI_Recv(buf, (int)max, MPI_BYTE, 0, (int)k, MPI_COMM_WORLD, &st));
                }
                int cnt = -1;
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                TH_CHECK(cnt == (int)n, "expected count %zu, got %d", n, cnt);
                TH_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == (int)k,
                         "expected source 0 tag %zu, got %d/%d", k, st.MPI_SOURCE, st.MPI_TAG);
                for (size_t i = 0; i < n; i++)
                    TH_CHECK(buf[i] == pattern(i, salt), "size %zu byte %zu: expected %u got %u", n,
                             i, pattern(i, salt), buf[i]);
            }
        }
    }
    free(buf);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_sizes(void)
{
    return run(2, rank_sizes);
}

/* Non-overtaking: one sender, mixed tags and sizes (eager and rendezvous); the receiver takes
 * them with ANY_TAG and must see them in send order; then per-tag exact receives. */
#define NMSG 200
static int rank_order(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    static int big[NMSG][2 * EAGER / sizeof(int)];
    if (rank == 0) {
        MPI_Request rq[NMSG];
        for (int i = 0; i < NMSG; i++) {
            int n = i % 5 == 0 ? (int)(2 * EAGER / sizeof(int)) : 1 + i % 7;
            big[i][0] = i;
            TH_MPI(MPI_Isend(big[i], n, MPI_INT, 1, i % 3, MPI_COMM_WORLD, &rq[i]));
        }
        TH_MPI(MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NMSG; i++)
            TH_MPI(MPI_Send(&i, 1, MPI_INT, 1, 100 + i % 4, MPI_COMM_WORLD));
    } else if (rank == 1) {
        int *b = malloc(2 * EAGER);
        for (int i = 0; i < NMSG; i++) {
            MPI_Status st;
            TH_MPI(
                MPI_Recv(b, 2 * EAGER / sizeof(int), MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            TH_CHECK(b[0] == i && st.MPI_TAG == i % 3,
                     "ANY_TAG: expected message %d tag %d, got %d tag %d", i, i % 3, b[0],
                     st.MPI_TAG);
        }
        /* exact tags, taken in a different order than sent */
        int next[4] = {0, 1, 2, 3};
        for (int t = 3; t >= 0; t--) {
            for (; next[t] < NMSG; next[t] += 4) {
                int v = -1;
                TH_MPI(MPI_Recv(&v, 1, MPI_INT, 0, 100 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                TH_CHECK(v == next[t], "tag %d: expected %d, got %d", 100 + t, next[t], v);
            }
        }
        free(b);
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_order(void)
{
    return run(2, rank_order);
}

/* Rank 0's side of the ANY_SOURCE tests: per messages {source, seq} from every other rank,
 * received with ANY_SOURCE (and tag, which may be ANY_TAG); each sender's arrive in its order.
 * round: for the message only. */
static int recv_in_source_order(int size, int per, int tag, int round)
{
    int *next = calloc((size_t)size, sizeof *next);
    TH_CHECK(next, "calloc");
    for (int i = 0; i < per * (size - 1); i++) {
        int v[2];
        MPI_Status st;
        TH_MPI(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
        TH_CHECK(v[0] == st.MPI_SOURCE && v[1] == next[v[0]],
                 "round %d from %d: expected seq %d, got source %d seq %d", round, st.MPI_SOURCE,
                 next[st.MPI_SOURCE], v[0], v[1]);
        next[v[0]]++;
    }
    free(next);
    return 0;
}

/* ANY_SOURCE from many senders: each sender's messages arrive in its order. */
static int rank_anysource(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    const int per = 50;
    if (rank == 0) {
        if (recv_in_source_order(size, per, MPI_ANY_TAG, 0)) return 1;
    } else {
        for (int i = 0; i < per; i++) {
            int v[2] = {rank, i};
            TH_MPI(MPI_Send(v, 2, MPI_INT, 0, i % 2, MPI_COMM_WORLD));
        }
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_anysource(void)
{
    return run(7, rank_anysource) || run(16, rank_anysource);
}

/* Posted-receive order: a wildcard posted before an exact receive takes the first message,
 * and the other way round. */
static int rank_posted(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    for (int round = 0; round < 2; round++) {
        if (rank == 1) {
            int a = -1, b = -1;
            MPI_Request r[2];
            if (round == 0) {
                TH_MPI(MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r[0]));
                TH_MPI(MPI_Irecv(&b, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r[1]));
            } else {
                TH_MPI(MPI_Irecv(&a, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r[0]));
                TH_MPI(MPI_Irecv(&b, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]));
            }
            TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
            TH_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
            TH_CHECK(a == 1 && b == 2, "round %d: expected a=1 b=2, got a=%d b=%d", round, a, b);
        } else if (rank == 0) {
            TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
            int v = 1;
            TH_MPI(MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
            v = 2;
            TH_MPI(MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        } else {
            TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_posted(void)
{
    return run(3, rank_posted);
}

static int rank_truncate(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    TH_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int big[3 * EAGER / sizeof(int)];
    for (int k = 0; k < 2; k++) {
        int n = k ? (int)(sizeof big / sizeof big[0]) : 10;
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                big[i] = i;
            TH_MPI(MPI_Send(big, n, MPI_INT, 1, 1, MPI_COMM_WORLD));
        } else {
            int small[5] = {0};
            MPI_Status st;
            st.MPI_ERROR = -176; /* a call returning one status leaves it (MPI 3.1 §3.2.5) */
            int e = MPI_Recv(small, 5, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
            TH_CHECK(e == MPI_ERR_TRUNCATE, "expected MPI_ERR_TRUNCATE (%d), got %d",
                     MPI_ERR_TRUNCATE, e);
            TH_CHECK(st.MPI_ERROR == -176, "status error changed to %d", st.MPI_ERROR);
            int cnt = -1;
            MPI_Get_count(&st, MPI_INT, &cnt);
            TH_CHECK(cnt == 5, "expected count 5, got %d", cnt);
            TH_CHECK(small[4] == 4, "expected 4, got %d", small[4]);
        }
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_truncate(void)
{
    return run(2, rank_truncate);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Ssend completes only once matched; Issend's request stays pending until then. */
static int rank_ssend(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    int v = 42;
    if (rank == 0) {
        double t0 = MPI_Wtime();
        TH_MPI(MPI_Ssend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
        double dt = MPI_Wtime() - t0;
        TH_CHECK(dt >= 0.04, "Ssend returned after %.3f s, before the receive was posted", dt);
        MPI_Request rq;
        TH_MPI(MPI_Issend(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &rq));
        int flag = 1;
        TH_MPI(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        TH_CHECK(!flag, "Issend request done before the receive was posted");
        TH_MPI(MPI_Send(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD));
        TH_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        TH_CHECK(rq == MPI_REQUEST_NULL, "request not reset to MPI_REQUEST_NULL");
    } else if (rank == 1) {
        sleep_ms(50);
        int w = 0;
        TH_MPI(MPI_Recv(&w, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        TH_MPI(MPI_Recv(&w, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        TH_MPI(MPI_Recv(&w, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        TH_CHECK(w == 42, "expected 42, got %d", w);
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_ssend(void)
{
    return run(2, rank_ssend);
}

/* Waitany/Testany/Waitsome/Testall with some requests null and some late. */
static int rank_waitany(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    if (rank == 0) {
        int v[4] = {-1, -1, -1, -1};
        MPI_Request r[5];
        for (int i = 0; i < 4; i++)
            TH_MPI(MPI_Irecv(&v[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, &r[i]));
        r[4] = MPI_REQUEST_NULL;
        int idx = -1, flag = 1;
        TH_MPI(MPI_Testany(5, r, &idx, &flag, MPI_STATUS_IGNORE));
        TH_CHECK(!flag && idx == MPI_UNDEFINED,
                 "Testany: expected nothing done, got flag %d index %d", flag, idx);
        TH_MPI(MPI_Testall(5, r, &flag, MPI_STATUSES_IGNORE));
        TH_CHECK(!flag, "Testall: expected not all done");
        TH_MPI(MPI_Send(&flag, 1, MPI_INT, 1, 9, MPI_COMM_WORLD)); /* go */
        MPI_Status st;
        TH_MPI(MPI_Waitany(5, r, &idx, &st));
        TH_CHECK(idx == 2 && v[2] == 102 && st.MPI_TAG == 2,
                 "Waitany: expected index 2 value 102, got %d value %d", idx,
                 idx >= 0 && idx < 4 ? v[idx] : -1);
        TH_MPI(MPI_Send(&flag, 1, MPI_INT, 1, 9, MPI_COMM_WORLD)); /* the rest */
        int out = 0, ind[5];
        MPI_Status sts[5];
        int got = 0;
        while (got < 3) {
            TH_MPI(MPI_Waitsome(5, r, &out, ind, sts));
            TH_CHECK(out >= 1 && out != MPI_UNDEFINED, "Waitsome: outcount %d", out);
            for (int k = 0; k < out; k++)
                TH_CHECK(v[ind[k]] == 100 + ind[k], "Waitsome: index %d value %d", ind[k],
                         v[ind[k]]);
            got += out;
        }
        TH_MPI(MPI_Waitsome(5, r, &out, ind, sts));
        TH_CHECK(out == MPI_UNDEFINED, "Waitsome on all-null: expected MPI_UNDEFINED, got %d", out);
        TH_MPI(MPI_Waitany(5, r, &idx, &st));
        TH_CHECK(idx == MPI_UNDEFINED, "Waitany on all-null: expected MPI_UNDEFINED, got %d", idx);
    } else if (rank == 1) {
        int go;
        TH_MPI(MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int order[4] = {2, 0, 3, 1};
        for (int k = 0; k < 4; k++) {
            int v = 100 + order[k];
            /* only tag 2 is there when rank 0's Waitany runs (a slow rank 0, e.g. under
             * TSan, would otherwise find 0 done as well and rightly return the lower index) */
            if (k == 1) TH_MPI(MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (k > 1) sleep_ms(5);
            TH_MPI(MPI_Send(&v, 1, MPI_INT, 0, order[k], MPI_COMM_WORLD));
        }
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_waitany(void)
{
    return run(2, rank_waitany);
}

static int rank_probe(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    if (rank == 0) {
        int flag = 1;
        MPI_Status st;
        TH_MPI(MPI_Iprobe(1, 7, MPI_COMM_WORLD, &flag, &st));
        TH_CHECK(!flag, "Iprobe found a message that was not sent");
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
        TH_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_DOUBLE, &cnt);
        TH_CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 7 && cnt == 3,
                 "Probe: expected 1/7/3, got %d/%d/%d", st.MPI_SOURCE, st.MPI_TAG, cnt);
        TH_MPI(MPI_Iprobe(1, 7, MPI_COMM_WORLD, &flag, &st));
        TH_CHECK(flag, "Iprobe: message vanished");
        double d[3];
        TH_MPI(MPI_Recv(d, 3, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, &st));
        TH_CHECK(d[2] == 2.5, "expected 2.5, got %g", d[2]);
        TH_MPI(MPI_Iprobe(1, 7, MPI_COMM_WORLD, &flag, &st));
        TH_CHECK(!flag, "Iprobe: message still there after Recv");
    } else if (rank == 1) {
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
        sleep_ms(20); /* rank 0 is blocked in Probe by now */
        double d[3] = {0.5, 1.5, 2.5};
        TH_MPI(MPI_Send(d, 3, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD));
    } else {
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_probe(void)
{
    return run(3, rank_probe);
}

static int rank_cancel(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    if (rank == 0) {
        int v = 0;
        MPI_Request rq;
        MPI_Status st;
        TH_MPI(MPI_Irecv(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq));
        TH_MPI(MPI_Cancel(&rq));
        TH_MPI(MPI_Wait(&rq, &st));
        int flag = 0;
        TH_MPI(MPI_Test_cancelled(&st, &flag));
        TH_CHECK(flag, "expected the receive to be cancelled");
        /* a freed pending receive still takes its message; the next receive gets the next */
        TH_MPI(MPI_Irecv(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq));
        TH_MPI(MPI_Request_free(&rq));
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
        int w = 0;
        TH_MPI(MPI_Recv(&w, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &st));
        TH_CHECK(w == 2 && v == 1, "expected v=1 w=2, got v=%d w=%d", v, w);
        TH_MPI(MPI_Test_cancelled(&st, &flag));
        TH_CHECK(!flag, "a received message reported as cancelled");
    } else {
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
        int v = 1;
        TH_MPI(MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
        v = 2;
        TH_MPI(MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_cancel(void)
{
    return run(2, rank_cancel);
}

static int rank_procnull(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    int v = 5;
    MPI_Status st;
    TH_MPI(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    TH_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    int cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    TH_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0 && v == 5,
             "PROC_NULL receive: got source %d tag %d count %d value %d", st.MPI_SOURCE, st.MPI_TAG,
             cnt, v);
    /* self messages through MPI_COMM_SELF and WORLD */
    int w = 0;
    TH_MPI(MPI_Sendrecv(&v, 1, MPI_INT, 0, 4, &w, 1, MPI_INT, 0, 4, MPI_COMM_SELF, &st));
    TH_CHECK(w == 5, "self sendrecv: expected 5, got %d", w);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_procnull(void)
{
    return run(1, rank_procnull) || run(2, rank_procnull);
}

/* Sendrecv ring with large messages (both directions rendezvous), and Sendrecv_replace. */
static int rank_sendrecv(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    int n = 4 * EAGER;
    int *a = malloc((size_t)n * sizeof(int)), *b = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        a[i] = rank * 1000000 + i;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    TH_MPI(MPI_Sendrecv(a, n, MPI_INT, right, 0, b, n, MPI_INT, left, 0, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    TH_CHECK(b[n - 1] == left * 1000000 + n - 1, "Sendrecv: expected %d, got %d",
             left * 1000000 + n - 1, b[n - 1]);
    TH_MPI(
        MPI_Sendrecv_replace(a, n, MPI_INT, right, 1, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    TH_CHECK(a[7] == left * 1000000 + 7, "Sendrecv_replace: expected %d, got %d",
             left * 1000000 + 7, a[7]);
    free(a);
    free(b);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_sendrecv(void)
{
    return run(2, rank_sendrecv) || run(5, rank_sendrecv);
}

/* Bsend completes before the receive is posted, whatever the size. */
static int rank_bsend(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    int n = 8 * EAGER;
    int *a = malloc((size_t)n * sizeof(int));
    if (rank == 0) {
        for (int i = 0; i < n; i++)
            a[i] = i;
        int bsize = n * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
        void *bb = malloc((size_t)bsize), *got;
        TH_MPI(MPI_Buffer_attach(bb, bsize));
        TH_MPI(MPI_Bsend(a, n, MPI_INT, 1, 0, MPI_COMM_WORLD));
        memset(a, 0, (size_t)n * sizeof(int)); /* the message must not depend on a now */
        TH_MPI(MPI_Send(a, 1, MPI_INT, 1, 1, MPI_COMM_WORLD));
        TH_MPI(MPI_Buffer_detach(&got, &bsize)); /* returns once rank 1 received it */
        free(bb);
    } else if (rank == 1) {
        int z;
        TH_MPI(MPI_Recv(&z, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        TH_MPI(MPI_Recv(a, n, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        TH_CHECK(a[n - 1] == n - 1, "Bsend: expected %d, got %d", n - 1, a[n - 1]);
    }
    free(a);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_bsend(void)
{
    return run(2, rank_bsend);
}

/* Messages on a duplicate communicator never match receives on the original. */
static int rank_comms(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    MPI_Comm dup, half;
    TH_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    if (rank == 0) {
        int v = 1;
        TH_MPI(MPI_Send(&v, 1, MPI_INT, 1, 0, dup));
        v = 2;
        TH_MPI(MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
    } else if (rank == 1) {
        int v = 0;
        TH_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        TH_CHECK(v == 2, "world receive: expected 2, got %d (message leaked across comms)", v);
        TH_MPI(MPI_Recv(&v, 1, MPI_INT, 0, 0, dup, MPI_STATUS_IGNORE));
        TH_CHECK(v == 1, "dup receive: expected 1, got %d", v);
    }
    /* split into halves ordered by descending world rank */
    TH_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    int hr, hs;
    TH_MPI(MPI_Comm_rank(half, &hr));
    TH_MPI(MPI_Comm_size(half, &hs));
    int want_size = size / 2 + (rank % 2 == 0 ? size % 2 : 0);
    TH_CHECK(hs == want_size, "split size: expected %d, got %d", want_size, hs);
    int sum = 0, one = rank;
    TH_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half));
    int want = 0;
    for (int r = rank % 2; r < size; r += 2)
        want += r;
    TH_CHECK(sum == want, "split allreduce: expected %d, got %d", want, sum);
    int top = -1;
    if (hr == 0) top = rank;
    TH_MPI(MPI_Bcast(&top, 1, MPI_INT, 0, half));
    int expect_top = size - 1 - ((size - 1) % 2 != rank % 2);
    TH_CHECK(top == expect_top, "split key order: rank 0 of half should be world %d, is %d",
             expect_top, top);
    MPI_Comm none;
    TH_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
    TH_CHECK((rank == 0) == (none == MPI_COMM_NULL), "MPI_UNDEFINED color: got comm %d", none);
    if (none != MPI_COMM_NULL) TH_MPI(MPI_Comm_free(&none));
    TH_MPI(MPI_Comm_free(&half));
    TH_MPI(MPI_Comm_free(&dup));
    TH_CHECK(dup == MPI_COMM_NULL, "Comm_free did not reset the handle");
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_comms(void)
{
    return run(2, rank_comms) || run(7, rank_comms);
}

/* Fast boxes (libclient/intra/fbox.h) between ranks that talk often: small messages (up to 44 B)
 * go through a per-pair ring, others through the mailbox, and all keep MPI order — sizes
 * across the cell and eager limits, synchronous sends, receives posted early and late, exact
 * and wildcard, and bursts longer than a ring. */
static int rank_fbox_mixed(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    static const int sizes[] = {8, 0, 44, 45, 4, 200, 2 * EAGER, 16, 44, 3};
    const int nsz = sizeof sizes / sizeof sizes[0], rounds = 40;
    int *buf = calloc(2 * EAGER, 1);
    TH_CHECK(buf, "calloc");
    for (int r = 0; r < rounds; r++) {
        /* odd rounds: rank 1 posts a prefix of the receives before anything is sent; the
         * others are posted in order after (MPI order then gives message k to receive k) */
        int go = r % 2, split = go ? (r % 3 == 0 ? nsz : nsz / 2) : r % nsz;
        if (rank == 0) {
            if (go) TH_MPI(MPI_Recv(NULL, 0, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int k = 0; k < nsz; k++) {
                int n = sizes[k] / (int)sizeof(int), seq = r * nsz + k;
                for (int i = 0; i < n; i++)
                    buf[i] = seq * 1000 + i;
                if ((seq % 7) == 3)
                    TH_MPI(MPI_Ssend(buf, n, MPI_INT, 1, seq % 3, MPI_COMM_WORLD));
                else
                    TH_MPI(MPI_Send(buf, n, MPI_INT, 1, seq % 3, MPI_COMM_WORLD));
            }
        } else if (rank == 1) {
            MPI_Request rq[16];
            int *rb[16];
            for (int k = 0; k < nsz; k++) {
                int seq = r * nsz + k;
                /* ANY_TAG / ANY_SOURCE on some */
                int src = k % 3 == 1 ? MPI_ANY_SOURCE : 0, tag = k % 4 == 2 ? MPI_ANY_TAG : seq % 3;
                rb[k] = calloc(2 * EAGER, 1);
                TH_CHECK(rb[k], "calloc");
                rq[k] = MPI_REQUEST_NULL;
                if (k < split)
                    TH_MPI(MPI_Irecv(rb[k], 2 * EAGER / (int)sizeof(int), MPI_INT, src, tag,
                                     MPI_COMM_WORLD, &rq[k]));
            }
            if (go) TH_MPI(MPI_Send(NULL, 0, MPI_INT, 0, 99, MPI_COMM_WORLD));
            for (int k = 0; k < nsz; k++) {
                int seq = r * nsz + k, n = sizes[k] / (int)sizeof(int);
                int src = k % 3 == 1 ? MPI_ANY_SOURCE : 0, tag = k % 4 == 2 ? MPI_ANY_TAG : seq % 3;
                MPI_Status st;
                if (k >= split) /* a buffer of just the size: blocking receives of small
                                     buffers wait without posting (p2p.c) */
                    TH_MPI(MPI_Recv(rb[k], n + (n > 11) * 2 * EAGER / (int)sizeof(int), MPI_INT,
                                    src, tag, MPI_COMM_WORLD, &st));
                else
                    TH_MPI(MPI_Wait(&rq[k], &st));
                int cnt = -1;
                MPI_Get_count(&st, MPI_INT, &cnt);
                TH_CHECK(cnt == n && st.MPI_SOURCE == 0 && st.MPI_TAG == seq % 3,
                         "round %d message %d: count %d source %d tag %d, expected %d 0 %d", r, k,
                         cnt, st.MPI_SOURCE, st.MPI_TAG, n, seq % 3);
                for (int i = 0; i < n; i++)
                    TH_CHECK(rb[k][i] == seq * 1000 + i, "round %d message %d word %d: %d", r, k, i,
                             rb[k][i]);
                free(rb[k]);
            }
        }
    }
    /* a burst of small messages far longer than a ring, taken after the sender is done */
    const int burst = 300;
    if (rank == 0) {
        for (int i = 0; i < burst; i++)
            TH_MPI(MPI_Send(&i, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
        TH_MPI(MPI_Send(NULL, 0, MPI_INT, 1, 8, MPI_COMM_WORLD));
    } else if (rank == 1) {
        MPI_Status st;
        TH_MPI(MPI_Probe(0, 8, MPI_COMM_WORLD, &st)); /* the last one: all are in */
        for (int i = 0; i < burst; i++) {
            int v = -1;
            TH_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            TH_CHECK(v == i, "burst: expected %d, got %d", i, v);
        }
        TH_MPI(MPI_Recv(NULL, 0, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    free(buf);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_fbox_mixed(void)
{
    return run(2, rank_fbox_mixed);
}

/* A posted receive that a fast box answers completes under MPI_Test and its any/all/some
 * forms alone (no blocking call drains the box for it), and under Iprobe. */
static int rank_fbox_test(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    for (int round = 0; round < 5 * 20; round++) {
        int kind = round % 5, v = -1;
        if (rank == 0) {
            /* the answer goes out only after rank 1 has posted and started testing */
            TH_MPI(MPI_Recv(NULL, 0, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            TH_MPI(MPI_Send(&round, 1, MPI_INT, 1, 2, MPI_COMM_WORLD));
            /* and rank 0 then waits for something else, so it cannot drain for rank 1 */
            TH_MPI(MPI_Recv(NULL, 0, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else if (rank == 1) {
            MPI_Request rq = MPI_REQUEST_NULL;
            if (kind != 4) TH_MPI(MPI_Irecv(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &rq));
            TH_MPI(MPI_Send(NULL, 0, MPI_INT, 0, 1, MPI_COMM_WORLD));
            int flag = 0, idx, out;
            for (long spins = 0; !flag; spins++) {
                TH_CHECK(spins < 100000000L, "round %d kind %d: never completed", round, kind);
                switch (kind) {
                case 0:
                    TH_MPI(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
                    break;
                case 1:
                    TH_MPI(MPI_Testany(1, &rq, &idx, &flag, MPI_STATUS_IGNORE));
                    break;
                case 2:
                    TH_MPI(MPI_Testall(1, &rq, &flag, MPI_STATUSES_IGNORE));
                    break;
                case 3:
                    TH_MPI(MPI_Testsome(1, &rq, &out, &idx, MPI_STATUSES_IGNORE));
                    flag = out == 1;
                    break;
                default:
                    TH_MPI(MPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                }
            }
            if (kind == 4)
                TH_MPI(MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            TH_CHECK(v == round, "round %d: got %d", round, v);
            TH_MPI(MPI_Send(NULL, 0, MPI_INT, 0, 3, MPI_COMM_WORLD));
        }
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_fbox_test(void)
{
    return run(2, rank_fbox_test);
}

/* More senders than a receiver takes rings from (16): every sender's order holds, whether its
 * messages come through a ring or the mailbox; the receiver falls asleep between bursts (a
 * short spin budget) and a ring's first cell wakes it. */
static int rank_fbox_many(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    const int per = 60;
    for (int burst = 0; burst < 3; burst++) {
        if (rank == 0) {
            if (recv_in_source_order(size, per, 4, burst)) return 1;
        } else {
            if (burst) { /* let rank 0 fall asleep first */
                struct timespec ts = {0, 20 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            for (int i = 0; i < per; i++) {
                int v[2] = {rank, i};
                TH_MPI(MPI_Send(v, 2, MPI_INT, 0, 4, MPI_COMM_WORLD));
            }
        }
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_fbox_many(void)
{
    struct th_opts o = {.nranks = 20, .eager_limit = EAGER, .spin_ns = 2000};
    return th_run(&o, rank_fbox_many, NULL, NULL);
}

/* Ping-pong through fast boxes with a spin budget of 1 ns: nearly every wait sleeps, so each
 * message races the receiver's "count myself asleep, look again" against the sender's
 * fence-less publish (asym_fence.h).  A missed wake-up hangs a round (the test's timeout);
 * the ping-pong also runs in bursts of isends, the message-rate path. */
static int rank_fbox_sleepers(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    const int rounds = 20000, burst = 16;
    int peer = 1 - rank;
    for (int i = 0; i < rounds; i++) {
        int v = i, got = -1;
        if (rank == (i & 1)) {
            TH_MPI(MPI_Send(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
            TH_MPI(MPI_Recv(&got, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            TH_MPI(MPI_Recv(&got, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            TH_CHECK(got == i, "round %d: got %d", i, got);
            TH_MPI(MPI_Send(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD));
        }
        if (i % 64 == 0) { /* a window of isends against a receiver that sleeps */
            MPI_Request rq[16];
            int b[16];
            for (int k = 0; k < burst; k++) {
                b[k] = rank ? -1 : i + k;
                if (rank == 0)
                    TH_MPI(MPI_Isend(&b[k], 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq[k]));
                else
                    TH_MPI(MPI_Irecv(&b[k], 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &rq[k]));
            }
            TH_MPI(MPI_Waitall(burst, rq, MPI_STATUSES_IGNORE));
            for (int k = 0; k < burst; k++)
                TH_CHECK(b[k] == i + k, "round %d: burst %d got %d", i, k, b[k]);
        }
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_fbox_sleepers(void)
{
    struct th_opts o = {.nranks = 2, .eager_limit = EAGER, .spin_ns = 1};
    return th_run(&o, rank_fbox_sleepers, NULL, NULL);
}

int main(int argc, char **argv)
{
    static const struct th_test tests[] = {
        {"sizes", t_sizes},
        {"order", t_order},
        {"anysource", t_anysource},
        {"posted", t_posted},
        {"truncate", t_truncate},
        {"ssend", t_ssend},
        {"waitany", t_waitany},
        {"probe", t_probe},
        {"cancel", t_cancel},
        {"procnull", t_procnull},
        {"sendrecv", t_sendrecv},
        {"bsend", t_bsend},
        {"comms", t_comms},
        {"fbox_mixed", t_fbox_mixed},
        {"fbox_test", t_fbox_test},
        {"fbox_many", t_fbox_many},
        {"fbox_sleepers", t_fbox_sleepers},
        {NULL, NULL},
    };
    return th_main(argc, argv, tests);
}
