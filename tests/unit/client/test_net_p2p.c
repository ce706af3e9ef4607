/* test_net_p2p.c — point-to-point between ranks on different (simulated) nodes: the eager push
 * with retained copies, three-phase, HOLD when the receiver's pool is full, cumulative ACKs,
 * and the MPI semantics on top (order, wildcards, Probe, Ssend, truncation, Cancel, the
 * Wait/Test family), with the harness playing one agent per node (harness.h).
 *
 * The ranks end with a barrier made of point-to-point messages instead of MPI_Finalize: the
 * collectives' inter-node phase is not what this file tests. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "msg_hdr.h"
#include "netd_hdr.h"
#include "svc.h"

/* A failed check aborts the job, so ranks blocked on the failed one do not hang the test. */
#define NP_CHECK(cond, ...) CHECK_ABORT(cond, __VA_ARGS__)
#define NP_MPI(call)                                                                               \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        NP_CHECK(e_ == MPI_SUCCESS, "expected MPI_SUCCESS from %s, got %d", #call, e_);            \
    } while (0)

#define KB 1024
#define LIMIT (100 * KB) /* the agent's default net_eager_limit */
#define TAG_BAR 30000

struct cfg {
    int nranks, nnodes, round_robin, done_mode;
    size_t pool_bytes;
    const size_t *pool_of;
};

static struct th_result last; /* of the latest run, for checks on the frames */

static int run(const struct cfg *c, th_rank_fn fn, void *arg)
{
    struct th_opts o = {.nranks = c->nranks,
                        .nnodes = c->nnodes,
                        .round_robin = c->round_robin,
                        .pool_bytes = c->pool_bytes,
                        .pool_of = c->pool_of,
                        .done_mode = c->done_mode,
                        .net_eager_limit = LIMIT};
    int r = th_run(&o, fn, arg, &last);
    if (r)
        fprintf(stderr, "  job (%d ranks, %d nodes%s) failed: rank %d code %d%s%s\n", c->nranks,
                c->nnodes, c->round_robin ? ", round robin" : "", last.failed_rank, last.code,
                last.aborted ? ", aborted: " : "", last.aborted ? last.abort_why : "");
    return r;
}

/* Everyone reports to rank 0, rank 0 releases everyone: nothing is in flight afterwards that
 * a rank still waits for. */
static int barrier(int rank, int size)
{
    if (rank == 0) {
        for (int i = 1; i < size; i++)
            NP_MPI(MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, TAG_BAR, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        for (int i = 1; i < size; i++)
            NP_MPI(MPI_Send(NULL, 0, MPI_BYTE, i, TAG_BAR, MPI_COMM_WORLD));
    } else {
        NP_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_BAR, MPI_COMM_WORLD));
        NP_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_BAR, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    return 0;
}

static unsigned char pattern(size_t i, int src, int dst, size_t n)
{
    return (unsigned char)(i * 131 + (size_t)src * 17 + (size_t)dst * 5 + n);
}

static void fill(unsigned char *b, size_t n, int src, int dst)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(i, src, dst, n);
}

/* Index of the first wrong byte, or -1. */
static long check(const unsigned char *b, size_t n, int src, int dst)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern(i, src, dst, n)) return (long)i;
    return -1;
}

/* ---- ring ---- */

static int rank_ring(int rank, int size, void *arg)
{
    (void)arg;
    NP_MPI(MPI_Init(NULL, NULL));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int k = 0; k < 300; k++) {
        int token = -1;
        if (rank == 0) {
            token = k;
            NP_MPI(MPI_Send(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD));
            NP_MPI(MPI_Recv(&token, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            NP_CHECK(token == k + size - 1, "round %d: expected %d, got %d", k, k + size - 1,
                     token);
        } else {
            NP_MPI(MPI_Recv(&token, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            token++;
            NP_MPI(MPI_Send(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD));
        }
    }
    /* A few laps of a three-phase message. */
    size_t n = 3 * LIMIT;
    unsigned char *b = malloc(n);
    NP_CHECK(b, "malloc");
    for (int k = 0; k < 3; k++) {
        if (rank == 0) {
            fill(b, n, k, 0);
            NP_MPI(MPI_Send(b, (int)n, MPI_BYTE, right, 8, MPI_COMM_WORLD));
            NP_MPI(MPI_Recv(b, (int)n, MPI_BYTE, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            NP_MPI(MPI_Recv(b, (int)n, MPI_BYTE, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            NP_MPI(MPI_Send(b, (int)n, MPI_BYTE, right, 8, MPI_COMM_WORLD));
        }
        long bad = check(b, n, k, 0);
        NP_CHECK(bad < 0, "lap %d: byte %ld wrong", k, bad);
    }
    free(b);
    return barrier(rank, size);
}

static int t_ring(void)
{
    for (int nn = 2; nn <= 4; nn++)
        for (int rr = 0; rr < 2; rr++) {
            struct cfg c = {.nranks = 8, .nnodes = nn, .round_robin = rr};
            if (run(&c, rank_ring, NULL)) return 1;
        }
    return 0;
}

/* ---- all pairs at sizes around the eager limit ---- */

static const size_t pair_sizes[] = {0, 1, 64 * KB, LIMIT - 1, LIMIT, LIMIT + 1, 1 << 20, 16 << 20};
#define NPAIR_SIZES (sizeof pair_sizes / sizeof pair_sizes[0])

static int rank_pairs(int rank, int size, void *arg)
{
    (void)arg;
    NP_MPI(MPI_Init(NULL, NULL));
    size_t max = pair_sizes[NPAIR_SIZES - 1];
    unsigned char **sb = calloc((size_t)size, sizeof *sb), **rb = calloc((size_t)size, sizeof *rb);
    MPI_Request *rq = calloc((size_t)size * 2, sizeof *rq);
    MPI_Status *st = calloc((size_t)size * 2, sizeof *st);
    NP_CHECK(sb && rb && rq && st, "calloc");
    for (int p = 0; p < size; p++) {
        sb[p] = malloc(max);
        rb[p] = malloc(max);
        NP_CHECK(sb[p] && rb[p], "malloc");
    }
    for (size_t k = 0; k < NPAIR_SIZES; k++) {
        size_t n = pair_sizes[k];
        int nr = 0;
        for (int p = 0; p < size; p++) {
            if (p == rank) continue;
            memset(rb[p], 0xee, n + 1 < max ? n + 1 : max);
            NP_MPI(MPI_Irecv(rb[p], (int)max, MPI_BYTE, p, (int)k, MPI_COMM_WORLD, &rq[nr++]));
        }
        for (int p = 0; p < size; p++) {
            if (p == rank) continue;
            fill(sb[p], n, rank, p);
            NP_MPI(MPI_Isend(sb[p], (int)n, MPI_BYTE, p, (int)k, MPI_COMM_WORLD, &rq[nr++]));
        }
        NP_MPI(MPI_Waitall(nr, rq, st));
        int i = 0;
        for (int p = 0; p < size; p++) {
            if (p == rank) continue;
            int cnt = -1;
            MPI_Get_count(&st[i], MPI_BYTE, &cnt);
            NP_CHECK(cnt == (int)n && st[i].MPI_SOURCE == p && st[i].MPI_TAG == (int)k,
                     "size %zu from %d: expected count %zu source %d tag %zu, got %d/%d/%d", n, p,
                     n, p, k, cnt, st[i].MPI_SOURCE, st[i].MPI_TAG);
            long bad = check(rb[p], n, p, rank);
            NP_CHECK(bad < 0, "size %zu from %d: byte %ld wrong", n, p, bad);
            i++;
        }
    }
    for (int p = 0; p < size; p++) {
        free(sb[p]);
        free(rb[p]);
    }
    free(sb);
    free(rb);
    free(rq);
    free(st);
    return barrier(rank, size);
}

static int t_pairs(void)
{
    struct cfg c1 = {.nranks = 4, .nnodes = 2, .round_robin = 1};
    struct cfg c2 = {.nranks = 3, .nnodes = 3, .done_mode = TH_DONE_LATER};
    if (run(&c1, rank_pairs, NULL) || run(&c2, rank_pairs, NULL)) return 1;
    if (!last.frames[TM_MSG_EAGER] || !last.frames[TM_MSG_RTS] || !last.frames[TM_MSG_DATA]) {
        fprintf(stderr, "  expected EAGER, RTS and DATA frames, got %llu/%llu/%llu\n",
                (unsigned long long)last.frames[TM_MSG_EAGER],
                (unsigned long long)last.frames[TM_MSG_RTS],
                (unsigned long long)last.frames[TM_MSG_DATA]);
        return 1;
    }
    return 0;
}

/* ---- unexpected messages with a small pool ---- */

#define NUNEXP 120
#define TAG_GO 5000

static size_t unexp_size(int i)
{
    return i % 10 == 9 ? 0 : (size_t)(i * 97 % 6000) + 1;
}

/* Rank 0 starts NUNEXP sends and a "go" to rank 1 before rank 1 posts anything; rank 1 probes
 * for the go (Probe sees the remote entries, stored, held or announced), then takes the
 * messages with MPI_ANY_TAG and must get them in send order, intact.  Isend: with a small pool
 * a standard send may wait for its receive (three-phase), and MPI allows that. */
static int rank_unexp(int rank, int size, void *arg)
{
    (void)arg;
    NP_MPI(MPI_Init(NULL, NULL));
    if (rank == 0) {
        unsigned char *b = malloc((size_t)NUNEXP * 6001);
        MPI_Request rq[NUNEXP + 1];
        NP_CHECK(b, "malloc");
        for (int i = 0; i < NUNEXP; i++) {
            size_t n = unexp_size(i);
            fill(b + (size_t)i * 6001, n, i, 1);
            NP_MPI(MPI_Isend(b + (size_t)i * 6001, (int)n, MPI_BYTE, 1, i, MPI_COMM_WORLD, &rq[i]));
        }
        NP_MPI(MPI_Isend(b, 3, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, &rq[NUNEXP]));
        NP_MPI(MPI_Waitall(NUNEXP + 1, rq, MPI_STATUSES_IGNORE));
        free(b);
    } else if (rank == 1) {
        unsigned char *b = malloc(8000);
        NP_CHECK(b, "malloc");
        MPI_Status st;
        NP_MPI(MPI_Probe(0, TAG_GO, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        NP_CHECK(cnt == 3, "probe of the go message: expected 3 bytes, got %d", cnt);
        for (int i = 0; i < NUNEXP; i++) {
            size_t n = unexp_size(i);
            memset(b, 0xee, 8000);
            NP_MPI(MPI_Recv(b, 8000, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            NP_CHECK(st.MPI_TAG == i && cnt == (int)n,
                     "message %d: expected tag %d and %zu bytes,"
                     " got tag %d and %d bytes",
                     i, i, n, st.MPI_TAG, cnt);
            long bad = check(b, n, i, 1);
            NP_CHECK(bad < 0, "message %d (%zu bytes): byte %ld wrong", i, n, bad);
        }
        NP_MPI(MPI_Recv(b, 8000, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD, &st));
        free(b);
    }
    return barrier(rank, size);
}

static int t_unexpected_tiny_pool(void)
{
    /* The receiver's pool takes a few messages, the rest are held (HOLD ACK, then CTS); the
     * sender's is large, so every send is an eager push. */
    size_t pools[2] = {64 << 20, 16 * KB};
    struct cfg held = {.nranks = 2, .nnodes = 2, .pool_of = pools};
    if (run(&held, rank_unexp, NULL)) return 1;
    if (!last.hold_acks || !last.frames[TM_MSG_CTS] || last.frames[TM_MSG_RTS]) {
        fprintf(stderr,
                "  expected HOLD ACKs and CTS without RTS, got %llu HOLD, %llu CTS, %llu "
                "RTS\n",
                (unsigned long long)last.hold_acks, (unsigned long long)last.frames[TM_MSG_CTS],
                (unsigned long long)last.frames[TM_MSG_RTS]);
        return 1;
    }
    /* Both pools tiny: eager, held and three-phase messages mix in one stream. */
    struct cfg tiny = {.nranks = 2, .nnodes = 2, .pool_bytes = 12 * KB};
    if (run(&tiny, rank_unexp, NULL)) return 1;
    if (!last.frames[TM_MSG_RTS] || !last.pool_refused) {
        fprintf(stderr, "  expected three-phase fallbacks, got %llu RTS, %llu refused\n",
                (unsigned long long)last.frames[TM_MSG_RTS], (unsigned long long)last.pool_refused);
        return 1;
    }
    struct cfg later = {
        .nranks = 2, .nnodes = 2, .pool_bytes = 12 * KB, .done_mode = TH_DONE_LATER};
    return run(&later, rank_unexp, NULL);
}

/* ---- cumulative ACKs keep the sender's retention bounded ---- */

#define NSTREAM 2000

/* Rank 0 streams small eager messages; rank 1 answers every 64th, so rank 0 is never more than
 * 64 messages ahead.  With ACKs every 32 messages the sender's 256 KiB pool never fills: no
 * send may fall back to three-phase. */
static int rank_stream(int rank, int size, void *arg)
{
    (void)arg;
    NP_MPI(MPI_Init(NULL, NULL));
    char b[1024];
    if (rank == 0) {
        for (int i = 0; i < NSTREAM; i++) {
            memset(b, i & 0xff, sizeof b);
            NP_MPI(MPI_Send(b, (int)sizeof b, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
            if (i % 64 == 63)
                NP_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    } else if (rank == 1) {
        for (int i = 0; i < NSTREAM; i++) {
            NP_MPI(MPI_Recv(b, (int)sizeof b, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            NP_CHECK((unsigned char)b[0] == (i & 0xff) && (unsigned char)b[1023] == (i & 0xff),
                     "message %d: expected bytes %d, got %d/%d", i, i & 0xff, (unsigned char)b[0],
                     (unsigned char)b[1023]);
            if (i % 64 == 63) NP_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD));
        }
    }
    return barrier(rank, size);
}

static int t_ack_bounds_retention(void)
{
    struct cfg c = {.nranks = 2, .nnodes = 2, .pool_bytes = 256 * KB};
    if (run(&c, rank_stream, NULL)) return 1;
    if (last.frames[TM_MSG_RTS] || last.frames[TM_MSG_ACK] < NSTREAM / 32) {
        fprintf(stderr, "  expected no RTS and at least %d ACKs, got %llu RTS, %llu ACKs\n",
                NSTREAM / 32, (unsigned long long)last.frames[TM_MSG_RTS],
                (unsigned long long)last.frames[TM_MSG_ACK]);
        return 1;
    }
    return 0;
}

/* Two-way traffic carries the ACKs: in a ping-pong of small eager messages every reply names
 * the sequence number of the message it answers (the header's ack field), so no ACK frame is
 * needed, neither at the thresholds nor when a rank is about to block (nothing is owed). */
#define NPING 200

static int rank_ping(int rank, int size, void *arg)
{
    (void)arg;
    NP_MPI(MPI_Init(NULL, NULL));
    int v = 0;
    for (int i = 0; i < NPING && rank < 2; i++) {
        if (rank == 0) {
            v = i;
            NP_MPI(MPI_Send(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
            NP_MPI(MPI_Recv(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            NP_CHECK(v == i + 1, "round %d: expected %d back, got %d", i, i + 1, v);
        } else {
            NP_MPI(MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            NP_CHECK(v == i, "round %d: expected %d, got %d", i, i, v);
            v++;
            NP_MPI(MPI_Send(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD));
        }
    }
    return barrier(rank, size);
}

static int t_ack_piggyback(void)
{
    struct cfg c = {.nranks = 2, .nnodes = 2, .pool_bytes = 256 * KB};
    if (run(&c, rank_ping, NULL)) return 1;
    /* The barrier's last message is one no reply carries an ACK for; a reply that arrives
     * while its receiver is about to block leaves an ACK owed that the blocking flushes as a
     * frame (rare; more under a sanitizer's timing).  Without the field: ~90 frames. */
    if (last.frames[TM_MSG_EAGER] < 2 * NPING || last.frames[TM_MSG_ACK] > NPING / 20) {
        fprintf(stderr, "  expected >= %d EAGER and <= %d ACK frames, got %llu and %llu\n",
                2 * NPING, NPING / 20, (unsigned long long)last.frames[TM_MSG_EAGER],
                (unsigned long long)last.frames[TM_MSG_ACK]);
        return 1;
    }
    return 0;
}

/* ---- wildcards and order ---- */

#define NWILD 60

static size_t wild_size(int src, int i)
{
    int k = (src * 7 + i) % 10;
    return k == 0 ? 0 : k == 1 ? 2 * LIMIT + (size_t)i : (size_t)(k * 100 + i);
}

/* Every other rank sends NWILD messages (eager, three-phase, empty) to rank 0 with tags in
 * send order; rank 0 takes them with ANY_SOURCE/ANY_TAG (then ANY_SOURCE with a fixed tag)
 * and must see each source's messages in order, with the right sizes and contents. */
static int rank_wild(int rank, int size, void *arg)
{
    (void)arg;
    NP_MPI(MPI_Init(NULL, NULL));
    size_t max = 2 * LIMIT + NWILD;
    unsigned char *b = malloc(max);
    NP_CHECK(b, "malloc");
    if (rank != 0) {
        for (int i = 0; i < NWILD; i++) {
            size_t n = wild_size(rank, i);
            fill(b, n, rank, i);
            NP_MPI(MPI_Send(b, (int)n, MPI_BYTE, 0, i, MPI_COMM_WORLD));
        }
        for (int i = 0; i < 5; i++)
            NP_MPI(MPI_Send(&i, 1, MPI_INT, 0, 777, MPI_COMM_WORLD));
        /* nothing else may reach rank 0's wildcard receives (the barrier's messages) */
        NP_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, 888, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        int *next = calloc((size_t)size, sizeof *next), *seen = calloc((size_t)size, sizeof *seen);
        NP_CHECK(next && seen, "calloc");
        for (int m = 0; m < NWILD * (size - 1); m++) {
            MPI_Status st;
            NP_MPI(
                MPI_Recv(b, (int)max, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int s = st.MPI_SOURCE, cnt = -1;
            NP_CHECK(s > 0 && s < size, "bad source %d", s);
            if (st.MPI_TAG == 777) { /* sent after the source's NWILD messages */
                int v;
                memcpy(&v, b, sizeof v);
                NP_CHECK(next[s] == NWILD, "source %d: tag 777 before tag %d", s, next[s]);
                NP_CHECK(v == seen[s], "source %d: expected %d, got %d", s, seen[s], v);
                seen[s]++;
                m--;
                continue;
            }
            NP_CHECK(st.MPI_TAG == next[s], "source %d: expected tag %d, got %d", s, next[s],
                     st.MPI_TAG);
            size_t n = wild_size(s, next[s]);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            NP_CHECK(cnt == (int)n, "source %d tag %d: expected %zu bytes, got %d", s, next[s], n,
                     cnt);
            long bad = check(b, n, s, next[s]);
            NP_CHECK(bad < 0, "source %d tag %d: byte %ld wrong", s, next[s], bad);
            next[s]++;
        }
        free(next);
        /* the 777s that were not taken above: in order per source */
        for (;;) {
            int flag = 0;
            MPI_Status st;
            NP_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 777, MPI_COMM_WORLD, &flag, &st));
            if (!flag) {
                int total = 0;
                for (int s = 1; s < size; s++)
                    total += seen[s];
                if (total == 5 * (size - 1)) break;
                continue; /* some are still on their way */
            }
            int v = -1;
            NP_MPI(MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 777, MPI_COMM_WORLD, &st));
            NP_CHECK(v == seen[st.MPI_SOURCE], "source %d: expected %d, got %d", st.MPI_SOURCE,
                     seen[st.MPI_SOURCE], v);
            seen[st.MPI_SOURCE]++;
        }
        free(seen);
        for (int s = 1; s < size; s++)
            NP_MPI(MPI_Send(NULL, 0, MPI_BYTE, s, 888, MPI_COMM_WORLD));
    }
    free(b);
    return barrier(rank, size);
}

static int t_wildcard_order(void)
{
    struct cfg a = {.nranks = 4, .nnodes = 2};
    struct cfg b = {.nranks = 5, .nnodes = 4, .round_robin = 1, .pool_bytes = 24 * KB};
    return run(&a, rank_wild, NULL) || run(&b, rank_wild, NULL);
}

/* ---- Ssend ---- */

/* A synchronous send of a small message must not complete before the receive matches it. */
static int rank_ssend(int rank, int size, void *arg)
{
    (void)arg;
    NP_MPI(MPI_Init(NULL, NULL));
    int v = 42, flag = 1;
    if (rank == 0) {
        MPI_Request rq;
        NP_MPI(MPI_Issend(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &rq));
        for (int i = 0; i < 100; i++) {
            NP_MPI(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
            NP_CHECK(!flag, "Issend completed before the receiver posted its receive");
        }
        NP_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD)); /* go */
        NP_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        NP_MPI(MPI_Ssend(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
        NP_MPI(MPI_Ssend(NULL, 0, MPI_INT, 1, 4, MPI_COMM_WORLD));
    } else if (rank == 1) {
        int got = 0;
        NP_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        NP_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        NP_CHECK(got == 42, "expected 42, got %d", got);
        got = 0;
        NP_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        NP_CHECK(got == 42, "expected 42, got %d", got);
        MPI_Status st;
        NP_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        NP_CHECK(cnt == 0, "empty Ssend: expected count 0, got %d", cnt);
    }
    return barrier(rank, size);
}

static int t_ssend(void)
{
    struct cfg c = {.nranks = 2, .nnodes = 2};
    return run(&c, rank_ssend, NULL);
}

/* ---- Isend / Irecv / Waitall / Testany ---- */

static int rank_nb(int rank, int size, void *arg)
{
    (void)arg;
    NP_MPI(MPI_Init(NULL, NULL));
    enum { PER = 6 };
    static const size_t sz[PER] = {0, 8, 5000, LIMIT - 1, LIMIT, 3 * LIMIT};
    size_t max = 3 * LIMIT;
    if (rank == 0) {
        int n = (size - 1) * PER;
        MPI_Request *rq = calloc((size_t)n, sizeof *rq);
        unsigned char **b = calloc((size_t)n, sizeof *b);
        NP_CHECK(rq && b, "calloc");
        for (int s = 1; s < size; s++)
            for (int k = 0; k < PER; k++) {
                int i = (s - 1) * PER + k;
                b[i] = malloc(max);
                NP_CHECK(b[i], "malloc");
                NP_MPI(MPI_Irecv(b[i], (int)max, MPI_BYTE, s, k, MPI_COMM_WORLD, &rq[i]));
            }
        NP_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD)); /* receives are posted */
        for (int done = 0; done < n;) {
            int idx = -1, flag = 0;
            MPI_Status st;
            NP_MPI(MPI_Testany(n, rq, &idx, &flag, &st));
            if (!flag) continue;
            NP_CHECK(idx >= 0 && idx < n && rq[idx] == MPI_REQUEST_NULL, "Testany index %d", idx);
            int s = idx / PER + 1, k = idx % PER, cnt = -1;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            NP_CHECK(st.MPI_SOURCE == s && st.MPI_TAG == k && cnt == (int)sz[k],
                     "request %d: expected %d/%d/%zu, got %d/%d/%d", idx, s, k, sz[k],
                     st.MPI_SOURCE, st.MPI_TAG, cnt);
            long bad = check(b[idx], sz[k], s, k);
            NP_CHECK(bad < 0, "request %d: byte %ld wrong", idx, bad);
            done++;
        }
        int idx = 0, flag = 0;
        NP_MPI(MPI_Testany(n, rq, &idx, &flag, MPI_STATUS_IGNORE));
        NP_CHECK(flag && idx == MPI_UNDEFINED, "Testany on all-null: flag %d index %d", flag, idx);
        for (int i = 0; i < n; i++)
            free(b[i]);
        free(b);
        free(rq);
    } else {
        if (rank == 1)
            NP_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_Request rq[PER];
        unsigned char *b[PER];
        for (int k = 0; k < PER; k++) {
            b[k] = malloc(sz[k] ? sz[k] : 1);
            NP_CHECK(b[k], "malloc");
            fill(b[k], sz[k], rank, k);
            NP_MPI(MPI_Isend(b[k], (int)sz[k], MPI_BYTE, 0, k, MPI_COMM_WORLD, &rq[k]));
        }
        NP_MPI(MPI_Waitall(PER, rq, MPI_STATUSES_IGNORE));
        for (int k = 0; k < PER; k++)
            free(b[k]);
    }
    return barrier(rank, size);
}

static int t_nonblocking(void)
{
    struct cfg c = {.nranks = 4, .nnodes = 2, .round_robin = 1};
    return run(&c, rank_nb, NULL);
}

/* ---- Probe, truncation, Cancel, Sendrecv, self, PROC_NULL, Bsend ---- */

static int rank_misc(int rank, int size, void *arg)
{
    (void)arg;
    NP_MPI(MPI_Init(NULL, NULL));
    NP_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    size_t big = 3 * LIMIT;
    unsigned char *b = malloc(big), *r = malloc(big);
    NP_CHECK(b && r, "malloc");
    MPI_Status st;
    int cnt = -1;
    const int peer = 1 - rank;
    if (rank < 2) {
        /* Probe sees the size of a remote eager and a remote three-phase message. */
        fill(b, big, rank, peer);
        if (rank == 0) {
            NP_MPI(MPI_Send(b, 1000, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
            NP_MPI(MPI_Send(b, (int)big, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
        } else {
            int flag = 0;
            while (!flag)
                NP_MPI(MPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, &st));
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            NP_CHECK(cnt == (int)big, "Iprobe of the large message: %d bytes", cnt);
            NP_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            NP_CHECK(cnt == 1000 && st.MPI_TAG == 1 && st.MPI_SOURCE == 0,
                     "Probe: expected the first message, got %d bytes tag %d", cnt, st.MPI_TAG);
            NP_MPI(MPI_Recv(r, (int)big, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            NP_MPI(MPI_Recv(r, (int)big, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            NP_CHECK(check(r, big, 0, 1) < 0, "probed message corrupted");
        }

        /* Truncation, eager and three-phase, posted before and after the message arrives. */
        for (int late = 0; late < 2; late++) {
            for (int three = 0; three < 2; three++) {
                size_t n = three ? big : 1000, cap = three ? LIMIT / 2 : 10;
                int tag = 10 + 2 * late + three;
                if (rank == 0) {
                    if (late)
                        NP_MPI(
                            MPI_Recv(NULL, 0, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    NP_MPI(MPI_Send(b, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD));
                } else {
                    memset(r, 0xee, big);
                    MPI_Request rq;
                    NP_MPI(MPI_Irecv(r, (int)cap, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rq));
                    if (late) NP_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD));
                    st.MPI_ERROR = -176; /* one status: left alone (MPI 3.1 §3.2.5) */
                    int e = MPI_Wait(&rq, &st);
                    NP_CHECK(e == MPI_ERR_TRUNCATE && st.MPI_ERROR == -176,
                             "%zu bytes into %zu: expected MPI_ERR_TRUNCATE, got %d/%d", n, cap, e,
                             st.MPI_ERROR);
                    MPI_Get_count(&st, MPI_BYTE, &cnt);
                    NP_CHECK(cnt == (int)cap, "truncated count: expected %zu, got %d", cap, cnt);
                    for (size_t i = 0; i < cap; i++)
                        NP_CHECK(r[i] == pattern(i, 0, 1, big), "truncated byte %zu wrong", i);
                    NP_CHECK(r[cap] == 0xee, "byte past the receive buffer was written");
                }
            }
        }
        /* Truncation of an unexpected message (stored in the pool, then consumed). */
        if (rank == 0) {
            NP_MPI(MPI_Send(b, 500, MPI_BYTE, 1, 20, MPI_COMM_WORLD));
            NP_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, 21, MPI_COMM_WORLD));
        } else {
            NP_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            int e = MPI_Recv(r, 7, MPI_BYTE, 0, 20, MPI_COMM_WORLD, &st);
            NP_CHECK(e == MPI_ERR_TRUNCATE, "unexpected 500 bytes into 7: got %d", e);
        }

        /* Cancel a posted receive for a remote peer; a later message is still delivered. */
        if (rank == 1) {
            MPI_Request rq;
            int flag = 0;
            NP_MPI(MPI_Irecv(r, 10, MPI_BYTE, 0, 30, MPI_COMM_WORLD, &rq));
            NP_MPI(MPI_Cancel(&rq));
            NP_MPI(MPI_Wait(&rq, &st));
            NP_MPI(MPI_Test_cancelled(&st, &flag));
            NP_CHECK(flag, "receive was not cancelled");
            NP_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 31, MPI_COMM_WORLD));
            NP_MPI(MPI_Recv(r, 10, MPI_BYTE, 0, 30, MPI_COMM_WORLD, &st));
            NP_CHECK(r[0] == 'x', "after cancel: expected 'x', got %d", r[0]);
        } else {
            NP_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            char x = 'x';
            NP_MPI(MPI_Send(&x, 1, MPI_BYTE, 1, 30, MPI_COMM_WORLD));
        }

        /* Sendrecv of three-phase messages both ways at once. */
        fill(b, big, rank, peer);
        NP_MPI(MPI_Sendrecv(b, (int)big, MPI_BYTE, peer, 40, r, (int)big, MPI_BYTE, peer, 40,
                            MPI_COMM_WORLD, &st));
        NP_CHECK(check(r, big, peer, rank) < 0, "Sendrecv data wrong");
        memcpy(r, b, big);
        NP_MPI(
            MPI_Sendrecv_replace(r, (int)big, MPI_BYTE, peer, 41, peer, 41, MPI_COMM_WORLD, &st));
        NP_CHECK(check(r, big, peer, rank) < 0, "Sendrecv_replace data wrong");

        /* Bsend of a large message completes at once and sends what the buffer held then. */
        if (rank == 0) {
            fill(b, big, 0, 1);
            int bsize = (int)big + MPI_BSEND_OVERHEAD;
            void *bb = malloc((size_t)bsize), *got;
            NP_MPI(MPI_Buffer_attach(bb, bsize));
            NP_MPI(MPI_Bsend(b, (int)big, MPI_BYTE, 1, 50, MPI_COMM_WORLD));
            memset(b, 0, big);
            NP_MPI(MPI_Buffer_detach(&got, &bsize));
            free(bb);
        } else {
            NP_MPI(MPI_Recv(r, (int)big, MPI_BYTE, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            NP_CHECK(check(r, big, 0, 1) < 0, "Bsend data wrong");
        }
    }
    /* Self and PROC_NULL still work in a job that spans nodes. */
    int v = rank, w = -1;
    NP_MPI(MPI_Sendrecv(&v, 1, MPI_INT, rank, 60, &w, 1, MPI_INT, rank, 60, MPI_COMM_WORLD, &st));
    NP_CHECK(w == rank, "send to self: expected %d, got %d", rank, w);
    NP_MPI(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 61, MPI_COMM_WORLD));
    NP_MPI(MPI_Recv(&w, 1, MPI_INT, MPI_PROC_NULL, 61, MPI_COMM_WORLD, &st));
    NP_CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL source %d", st.MPI_SOURCE);
    free(b);
    free(r);
    return barrier(rank, size);
}

static int t_misc(void)
{
    struct cfg c = {.nranks = 3, .nnodes = 2, .round_robin = 1};
    struct cfg tiny = {.nranks = 2, .nnodes = 2, .pool_bytes = 2 * KB};
    return run(&c, rank_misc, NULL) || run(&tiny, rank_misc, NULL);
}

/* ---- protocol errors ---- */

/* A CTS naming no pending send (a stale or forged cookie), or a frame whose carried ACK names
 * an eager message never sent, must end the job with a clear message, also while every rank
 * is blocked. */
static int rank_bad_frame(int rank, int size, void *arg)
{
    (void)size;
    NP_MPI(MPI_Init(NULL, NULL));
    if (rank == 1) {
        const struct tm_msg_hdr *m = arg;
        struct netd_hdr h;
        tm_msg_hdr_encode(m, &h);
        if (m->type == 0) h.proto[0] = 0x77; /* a type that does not exist */
        NP_CHECK(th_net_inject(1, 0, TMPI_CH_P2P, &h) == 0, "inject failed");
    }
    int v;
    /* nobody sends this: the abort must wake both ranks */
    MPI_Recv(&v, 1, MPI_INT, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    TH_REPORT("MPI_Recv never returns", "the receive that nobody sends to returned");
    return 1;
}

static int t_protocol_error_aborts(void)
{
    static const struct {
        struct tm_msg_hdr h;
        const char *why;
    } cases[] = {
        {{.type = TM_MSG_CTS, .src_rank = 1, .dst_rank = 0, .cookie = 0x1234, .rcookie = 1},
         "CTS names no pending send"},
        /* libtmpi's half of the header is checked by libtmpi (type 0: injected as 0x77) */
        {{.type = 0, .src_rank = 1, .dst_rank = 0}, "malformed protocol header"},
        {{.type = TM_MSG_EAGER, .src_rank = 1, .dst_rank = 0, .msg_len = 5},
         "malformed protocol header"},
        /* an RTS nobody receives (tag 999), carrying an ACK for message 1000 of 0 sent */
        {{.type = TM_MSG_RTS,
          .src_rank = 1,
          .dst_rank = 0,
          .tag = 999,
          .msg_len = 1 << 20,
          .cookie = 7,
          .comm_src = 1,
          .ack = 1000},
         "ACK for eager message 1000, which was never sent"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct th_opts o = {.nranks = 2, .nnodes = 2};
        struct th_result res;
        th_run(&o, rank_bad_frame, (void *)&cases[i].h, &res);
        if (!res.aborted || !strstr(res.abort_why, cases[i].why)) {
            fprintf(stderr, "  expected an abort saying '%s', got aborted=%d why '%s'\n",
                    cases[i].why, res.aborted, res.abort_why);
            return 1;
        }
    }
    return 0;
}

/* A send over a link that is gone fails with an MPI error instead of hanging. */
static int rank_link_down(int rank, int size, void *arg)
{
    (void)arg;
    (void)size;
    NP_MPI(MPI_Init(NULL, NULL));
    if (rank == 0) {
        NP_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        NP_CHECK(th_net_break(0, 1) == 0, "th_net_break");
        static char b[3 * LIMIT];
        int e1 = MPI_Send(b, 10, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        int e2 = MPI_Send(b, (int)sizeof b, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Request rq = MPI_REQUEST_NULL;
        int e3 = MPI_Issend(b, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &rq);
        NP_CHECK(e1 == MPI_ERR_OTHER && e2 == MPI_ERR_OTHER && e3 == MPI_ERR_OTHER &&
                     rq == MPI_REQUEST_NULL,
                 "expected MPI_ERR_OTHER (%d) three times, got %d/%d/%d", MPI_ERR_OTHER, e1, e2,
                 e3);
    }
    return 0;
}

static int t_link_down(void)
{
    struct cfg c = {.nranks = 2, .nnodes = 2};
    return run(&c, rank_link_down, NULL);
}

static const struct th_test tests[] = {
    {"ring", t_ring},
    {"all_pairs_sizes", t_pairs},
    {"unexpected_tiny_pool", t_unexpected_tiny_pool},
    {"ack_bounds_retention", t_ack_bounds_retention},
    {"ack_piggyback", t_ack_piggyback},
    {"wildcard_order", t_wildcard_order},
    {"ssend", t_ssend},
    {"nonblocking", t_nonblocking},
    {"probe_truncate_cancel_misc", t_misc},
    {"protocol_error_aborts", t_protocol_error_aborts},
    {"link_down_fails_send", t_link_down},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests);
}
