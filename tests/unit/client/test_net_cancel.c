/* test_net_cancel.c — MPI_Cancel of a send to a rank on another (simulated) node
 * (libclient/net/cancel.c, MPI 4.1 §3.8.4): an unmatched message is taken out of the
 * receiver's queue and the send's status says cancelled; a matched one is received and the
 * status says not cancelled; a receive racing the cancel gets the message exactly when the
 * cancel fails.  Eager, three-phase, buffered and synchronous sends, a receiver whose pool is
 * full (held messages), both orders of the harness's done callbacks (harness.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "msg_hdr.h"
#include "netd_hdr.h"
#include "svc.h"

#define NC_CHECK(cond, ...) CHECK_ABORT(cond, __VA_ARGS__)
#define NC_MPI(call)                                                                               \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        NC_CHECK(e_ == MPI_SUCCESS, "expected MPI_SUCCESS from %s, got %d", #call, e_);            \
    } while (0)

#define KB 1024
#define LIMIT (100 * KB) /* net_eager_limit of these runs */
#define TAG_DONE 30000
#define TAG_FLAG 30001

enum mode { M_ISEND, M_IBSEND, M_ISSEND, M_SEND_INIT, M_NMODES };
static const char *const mode_name[M_NMODES] = {"Isend", "Ibsend", "Issend", "Send_init"};
/* eager (empty, small, just below the limit) and three-phase */
static const size_t sizes[] = {0, 1, 1000, LIMIT - 1, LIMIT, 3 * LIMIT};
#define NSIZES (sizeof sizes / sizeof *sizes)

static struct th_result last;

static int run(int nranks, const size_t *pool_of, int done_mode, th_rank_fn fn)
{
    struct th_opts o = {.nranks = nranks,
                        .nnodes = 2,
                        .pool_of = pool_of,
                        .done_mode = done_mode,
                        .net_eager_limit = LIMIT};
    int r = th_run(&o, fn, NULL, &last);
    if (r)
        fprintf(stderr, "  job failed: rank %d code %d%s%s\n", last.failed_rank, last.code,
                last.aborted ? ", aborted: " : "", last.aborted ? last.abort_why : "");
    return r;
}

/* Starts a send of n bytes in mode m; a persistent request is started (*pers keeps it). */
static void start_send(enum mode m, const void *b, size_t n, int dst, int tag, MPI_Request *rq,
                       MPI_Request *pers)
{
    *pers = MPI_REQUEST_NULL;
    switch (m) {
    case M_ISEND:
        NC_MPI(MPI_Isend(b, (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD, rq));
        break;
    case M_IBSEND:
        NC_MPI(MPI_Ibsend(b, (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD, rq));
        break;
    case M_ISSEND:
        NC_MPI(MPI_Issend(b, (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD, rq));
        break;
    default:
        NC_MPI(MPI_Send_init(b, (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD, pers));
        NC_MPI(MPI_Start(pers));
        *rq = *pers;
        break;
    }
}

static int cancelled_of(MPI_Status *st)
{
    int flag = -1;
    NC_MPI(MPI_Test_cancelled(st, &flag));
    return flag;
}

static void *attach_buffer(void)
{
    int bsize = 4 * LIMIT + 4 * MPI_BSEND_OVERHEAD;
    void *bb = malloc((size_t)bsize);
    NC_CHECK(bb, "malloc");
    NC_MPI(MPI_Buffer_attach(bb, bsize));
    return bb;
}

static void detach_buffer(void *bb)
{
    void *p;
    int s;
    NC_MPI(MPI_Buffer_detach(&p, &s));
    free(bb);
}

/* Every kind of send that no receive matches is cancelled, and the receiver never sees it:
 * its DONE message, sent after the cancel on the same link, comes and nothing else. */
static int rank_unmatched(int rank, int size, void *arg)
{
    (void)arg;
    (void)size;
    NC_MPI(MPI_Init(NULL, NULL));
    unsigned char *b = calloc(1, 3 * LIMIT);
    NC_CHECK(b, "malloc");
    void *bb = rank == 0 ? attach_buffer() : NULL;
    int tag = 1;
    for (int m = 0; m < M_NMODES; m++)
        for (size_t s = 0; s < NSIZES; s++, tag++) {
            if (rank == 0) {
                MPI_Request rq, pers;
                MPI_Status st;
                start_send((enum mode)m, b, sizes[s], 1, tag, &rq, &pers);
                NC_MPI(MPI_Cancel(&rq));
                NC_MPI(MPI_Wait(&rq, &st));
                NC_CHECK(cancelled_of(&st), "%s of %zu bytes to another node: not cancelled",
                         mode_name[m], sizes[s]);
                if (pers != MPI_REQUEST_NULL) NC_MPI(MPI_Request_free(&pers));
                NC_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_DONE, MPI_COMM_WORLD));
            } else {
                NC_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                int flag = 1;
                MPI_Status st;
                NC_MPI(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, &st));
                NC_CHECK(!flag, "cancelled %s of %zu bytes: its message is still queued",
                         mode_name[m], sizes[s]);
            }
        }
    /* Of two eager sends with one key, the second cancelled: the first is what comes
     * (MPICH's scancel_unmatch). */
    if (rank == 0) {
        int a = 10, c = 20;
        MPI_Request rq[2];
        MPI_Status st;
        NC_MPI(MPI_Isend(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &rq[0]));
        NC_MPI(MPI_Isend(&c, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &rq[1]));
        NC_MPI(MPI_Cancel(&rq[1]));
        NC_MPI(MPI_Wait(&rq[1], &st));
        NC_CHECK(cancelled_of(&st), "second of two eager sends not cancelled");
        NC_MPI(MPI_Wait(&rq[0], &st));
        NC_CHECK(!cancelled_of(&st), "a send nobody cancelled says cancelled");
        NC_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_DONE, MPI_COMM_WORLD));
    } else {
        int a = -1, flag = 1;
        NC_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        NC_MPI(MPI_Recv(&a, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        NC_CHECK(a == 10, "after cancelling the second send: expected 10, got %d", a);
        NC_MPI(MPI_Iprobe(0, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        NC_CHECK(!flag, "the cancelled second send is still queued");
    }
    if (bb) detach_buffer(bb);
    free(b);
    return 0;
}

/* A send whose receive was posted first is received: the cancel fails, the data is there. */
static int rank_matched(int rank, int size, void *arg)
{
    (void)arg;
    (void)size;
    NC_MPI(MPI_Init(NULL, NULL));
    unsigned char *b = malloc(3 * LIMIT);
    NC_CHECK(b, "malloc");
    void *bb = rank == 0 ? attach_buffer() : NULL;
    int tag = 1;
    for (int m = 0; m < M_NMODES; m++)
        for (size_t s = 1; s < NSIZES; s++, tag++) {
            size_t n = sizes[s];
            if (rank == 1) {
                MPI_Request rq;
                MPI_Status st;
                memset(b, 0, n);
                NC_MPI(MPI_Irecv(b, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rq));
                NC_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD));
                NC_MPI(MPI_Wait(&rq, &st));
                NC_CHECK(!cancelled_of(&st) && b[0] == (unsigned char)tag &&
                             b[n - 1] == (unsigned char)tag,
                         "%s of %zu bytes: expected the data, got %d..%d", mode_name[m], n, b[0],
                         b[n - 1]);
            } else {
                MPI_Request rq, pers;
                MPI_Status st;
                memset(b, tag, n);
                NC_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                start_send((enum mode)m, b, n, 1, tag, &rq, &pers);
                NC_MPI(MPI_Cancel(&rq));
                NC_MPI(MPI_Wait(&rq, &st));
                NC_CHECK(!cancelled_of(&st), "%s of %zu bytes to a posted receive: cancelled",
                         mode_name[m], n);
                if (pers != MPI_REQUEST_NULL) NC_MPI(MPI_Request_free(&pers));
            }
        }
    if (bb) detach_buffer(bb);
    free(b);
    return 0;
}

/* A receive posted while the cancel travels: whatever the outcome, the message is received
 * exactly when the send is not cancelled.  Rank 1 learns the outcome after the cancel's
 * answer, so a cancelled message can no longer arrive: its receive must still be pending. */
#define RACE_ROUNDS 60
static int rank_race(int rank, int size, void *arg)
{
    (void)arg;
    (void)size;
    NC_MPI(MPI_Init(NULL, NULL));
    unsigned char *b = malloc(3 * LIMIT);
    NC_CHECK(b, "malloc");
    int got[2] = {0, 0};
    for (int k = 0; k < RACE_ROUNDS; k++) {
        size_t n = sizes[1 + (size_t)k % (NSIZES - 1)];
        int tag = 100 + k, outcome = -1;
        if (rank == 0) {
            MPI_Request rq, pers;
            MPI_Status st;
            memset(b, tag, n);
            NC_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_DONE, MPI_COMM_WORLD));
            start_send(k % 3 == 2 ? M_ISSEND : M_ISEND, b, n, 1, tag, &rq, &pers);
            for (volatile int spin = 0; spin < (k % 5) * 20000; spin++) {
            }
            NC_MPI(MPI_Cancel(&rq));
            NC_MPI(MPI_Wait(&rq, &st));
            outcome = cancelled_of(&st);
            NC_MPI(MPI_Send(&outcome, 1, MPI_INT, 1, TAG_FLAG, MPI_COMM_WORLD));
        } else {
            MPI_Request rq;
            MPI_Status st;
            memset(b, 0, n);
            NC_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (volatile int spin = 0; spin < (k % 7) * 2000; spin++) {
            }
            NC_MPI(MPI_Irecv(b, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rq));
            NC_MPI(MPI_Recv(&outcome, 1, MPI_INT, 0, TAG_FLAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (outcome) {
                int flag = 1;
                NC_MPI(MPI_Test(&rq, &flag, &st));
                NC_CHECK(!flag, "round %d: the send was cancelled, yet its receive completed", k);
                NC_MPI(MPI_Cancel(&rq));
                NC_MPI(MPI_Wait(&rq, &st));
                NC_CHECK(cancelled_of(&st), "round %d: the pending receive was not cancelled", k);
            } else {
                NC_MPI(MPI_Wait(&rq, &st));
                NC_CHECK(b[0] == (unsigned char)tag && b[n - 1] == (unsigned char)tag,
                         "round %d: not cancelled, expected the data, got %d", k, b[0]);
            }
        }
        got[outcome != 0]++;
    }
    if (rank == 1) printf("  race: %d cancelled, %d received of %d\n", got[1], got[0], RACE_ROUNDS);
    free(b);
    return 0;
}

/* Unmatched sends to a node whose pool is full: the receiver held them (HOLD ACK, no payload),
 * so cancelling drops a header and the sender's held copy; three-phase is not concerned. */
static int rank_held(int rank, int size, void *arg)
{
    (void)arg;
    (void)size;
    NC_MPI(MPI_Init(NULL, NULL));
    static unsigned char b[8 * KB];
    for (int k = 0; k < 8; k++) {
        if (rank == 0) {
            MPI_Request rq;
            MPI_Status st;
            memset(b, k, sizeof b);
            NC_MPI(MPI_Isend(b, (int)sizeof b, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &rq));
            if (k % 2) {
                NC_MPI(MPI_Cancel(&rq));
                NC_MPI(MPI_Wait(&rq, &st));
                NC_CHECK(cancelled_of(&st), "held message %d not cancelled", k);
            } else {
                NC_MPI(MPI_Wait(&rq, &st));
            }
        }
    }
    if (rank == 0) {
        NC_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_DONE, MPI_COMM_WORLD));
    } else {
        NC_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < 8; k += 2) {
            NC_MPI(MPI_Recv(b, (int)sizeof b, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            NC_CHECK(b[0] == k && b[sizeof b - 1] == k, "expected message %d, got %d", k, b[0]);
        }
        int flag = 1;
        NC_MPI(MPI_Iprobe(0, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        NC_CHECK(!flag, "a cancelled held message is still queued");
    }
    return 0;
}

/* What a send to another node notes for MPI_Cancel leaves what its wait reports alone: the
 * rank waits for its destination (tmpictl ranks, the deadlock check). */
static int rank_wait_names_dest(int rank, int size, void *arg)
{
    (void)size;
    (void)arg;
    NC_MPI(MPI_Init(NULL, NULL));
    static unsigned char b[3 * LIMIT];
    if (rank == 0) {
        MPI_Request rq;
        NC_MPI(MPI_Isend(b, (int)sizeof b, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &rq));
        NC_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        return 0;
    }
    struct tmpi_rank_mpi m;
    int seen = 0;
    for (int i = 0; i < 20000 && !seen; i++) {
        seen = th_rank_mpi(0, &m) == 0 && m.activity == TMPI_ACT_WAITING && m.call &&
               strcmp(m.call, "MPI_Wait") == 0;
        if (!seen) nanosleep(&(struct timespec){0, 100000}, NULL);
    }
    NC_CHECK(seen, "rank 0 never showed as waiting in MPI_Wait");
    NC_CHECK(m.peer == 1 && m.peer_is_dest && m.tag == 7,
             "rank 0's MPI_Wait: expected destination 1 tag 7, got peer %d (dest %d) tag %d",
             m.peer, m.peer_is_dest, m.tag);
    NC_MPI(MPI_Recv(b, (int)sizeof b, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    return 0;
}

static int t_wait_names_dest(void)
{
    return run(2, NULL, TH_DONE_MIXED, rank_wait_names_dest);
}

/* An answer naming no pending cancel (stale or forged) ends the job with a clear message,
 * also while every rank is blocked. */
static int rank_bad_answer(int rank, int size, void *arg)
{
    (void)size;
    (void)arg;
    NC_MPI(MPI_Init(NULL, NULL));
    if (rank == 1) {
        const struct tm_msg_hdr m = {.type = TM_MSG_CANCEL_ANS,
                                     .flags = TM_MSG_F_CANCELLED,
                                     .src_rank = 1,
                                     .dst_rank = 0,
                                     .cookie = 3,
                                     .rcookie = 0x4242};
        struct netd_hdr h;
        tm_msg_hdr_encode(&m, &h);
        NC_CHECK(th_net_inject(1, 0, TMPI_CH_P2P, &h) == 0, "inject failed");
    }
    int v;
    MPI_Recv(&v, 1, MPI_INT, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    TH_REPORT("MPI_Recv never returns", "the receive that nobody sends to returned");
    return 1;
}

static int t_bad_answer(void)
{
    struct th_opts o = {.nranks = 2, .nnodes = 2};
    struct th_result res;
    th_run(&o, rank_bad_answer, NULL, &res);
    const char *want = "CANCEL_ANS names no pending cancel";
    if (!res.aborted || !strstr(res.abort_why, want)) {
        fprintf(stderr, "  expected an abort saying '%s', got aborted=%d why '%s'\n", want,
                res.aborted, res.abort_why);
        return 1;
    }
    return 0;
}

static int t_unmatched(void)
{
    for (int d = TH_DONE_INLINE; d <= TH_DONE_LATER; d++) {
        if (run(2, NULL, d, rank_unmatched)) return 1;
        if (!last.frames[TM_MSG_CANCEL] ||
            last.frames[TM_MSG_CANCEL] != last.frames[TM_MSG_CANCEL_ANS]) {
            fprintf(stderr, "  expected as many CANCEL as CANCEL_ANS frames, got %llu / %llu\n",
                    (unsigned long long)last.frames[TM_MSG_CANCEL],
                    (unsigned long long)last.frames[TM_MSG_CANCEL_ANS]);
            return 1;
        }
    }
    return 0;
}

static int t_matched(void)
{
    return run(2, NULL, TH_DONE_MIXED, rank_matched);
}

static int t_race(void)
{
    return run(2, NULL, TH_DONE_MIXED, rank_race);
}

static int t_held(void)
{
    const size_t pools[2] = {0, 4 * KB}; /* the receiver's node holds every 8 KiB message */
    if (run(2, pools, TH_DONE_MIXED, rank_held)) return 1;
    if (!last.hold_acks) {
        fprintf(stderr, "  expected HOLD ACKs from the full pool, got none\n");
        return 1;
    }
    return 0;
}

static const struct th_test tests[] = {
    {"unmatched_sends_cancelled", t_unmatched},
    {"matched_sends_received", t_matched},
    {"racing_receiver", t_race},
    {"held_messages_cancelled", t_held},
    {"stray_answer_aborts", t_bad_answer},
    {"send_wait_names_destination", t_wait_names_dest},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests);
}
