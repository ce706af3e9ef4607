/* send_cancel.c — MPI_Cancel of nonblocking sends (MPI 4.1 §3.8.4): a cancelled send is never
 * received and one that is received is not cancelled, for every send mode and for sizes on
 * both sides of the eager limits; a send that no receive has matched is cancelled when its
 * receiver is on another node (the receiver's node takes it out of its queue), whatever the
 * size; a receive posted while the cancel travels gets the message exactly when the cancel
 * fails.  Ranks pair up (0-1, 2-3, ...; an odd last rank sends to itself). */
#include <string.h>

#include "check.h"

enum { M_ISEND, M_IBSEND, M_ISSEND, M_SEND_INIT, M_BSEND_INIT, M_NMODES };
static const char *const mode_name[M_NMODES] = {"Isend", "Ibsend", "Issend", "Send_init",
                                                "Bsend_init"};
/* empty, small, around the default network eager limit (100 KiB), and large */
static const int sizes[] = {0, 1, 1000, 65536, 102399, 102400, 1 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof *sizes))
#define MAXN (1 << 20)
#define TAG_FLAG 30001
#define TAG_GO 30002

static unsigned char sbuf[MAXN], rbuf[MAXN];

typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
static const isend_fn starts[M_NMODES] = {MPI_Isend, MPI_Ibsend, MPI_Issend, MPI_Send_init,
                                          MPI_Bsend_init};

static void start_send(int m, int n, int peer, int tag, MPI_Request *rq, MPI_Request *pers)
{
    CHECK_MPI(starts[m](sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, rq));
    /* a persistent one is started; the caller frees it */
    *pers = m >= M_SEND_INIT ? *rq : MPI_REQUEST_NULL;
    if (*pers != MPI_REQUEST_NULL) CHECK_MPI(MPI_Start(pers));
}

static int cancelled_of(MPI_Status *st)
{
    int flag = -1;
    CHECK_MPI(MPI_Test_cancelled(st, &flag));
    return flag;
}

/* The sender starts, cancels and waits, then tells the receiver the outcome; the receiver
 * takes the message if it was not cancelled and checks that nothing is left if it was.  With
 * race set the receiver posts its receive before it learns the outcome, after a delay that
 * changes from round to round, while the cancel travels. */
static void one_round(int sender, int peer, int m, int n, int tag, int race, int remote,
                      int *outcomes)
{
    int outcome = -1;
    if (sender) {
        MPI_Request rq, pers;
        MPI_Status st;
        memset(sbuf, tag & 0xff, (size_t)n);
        if (race)
            CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        start_send(m, n, peer, tag, &rq, &pers);
        CHECK_MPI(MPI_Cancel(&rq));
        CHECK_MPI(MPI_Wait(&rq, &st));
        outcome = cancelled_of(&st);
        if (pers != MPI_REQUEST_NULL) CHECK_MPI(MPI_Request_free(&pers));
        /* unmatched and on another node: the receiver's node must take it back */
        CHECK(race || !remote || outcome,
              "%s of %d bytes to rank %d on another node: not cancelled", mode_name[m], n, peer);
    }
    if (sender) {
        CHECK_MPI(MPI_Send(&outcome, 1, MPI_INT, peer, TAG_FLAG, MPI_COMM_WORLD));
        outcomes[outcome != 0]++;
        return;
    }
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Status st;
    memset(rbuf, 0, (size_t)n);
    if (race) {
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD));
        for (volatile int spin = 0; spin < (tag % 9) * 5000; spin++) {
        }
        CHECK_MPI(MPI_Irecv(rbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq));
    }
    CHECK_MPI(MPI_Recv(&outcome, 1, MPI_INT, peer, TAG_FLAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (outcome) {
        /* The answer came before the outcome, and the message cannot come after it. */
        int flag = 1;
        if (race) {
            CHECK_MPI(MPI_Test(&rq, &flag, &st));
            CHECK(!flag, "%s of %d bytes (tag %d) cancelled, yet received", mode_name[m], n, tag);
            CHECK_MPI(MPI_Cancel(&rq));
            CHECK_MPI(MPI_Wait(&rq, &st));
            CHECK(cancelled_of(&st), "a pending receive (tag %d) was not cancelled", tag);
        }
        CHECK_MPI(MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "%s of %d bytes (tag %d) cancelled, yet still queued", mode_name[m], n, tag);
    } else {
        if (!race) CHECK_MPI(MPI_Irecv(rbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq));
        CHECK_MPI(MPI_Wait(&rq, &st));
        int cnt = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == n && !cancelled_of(&st) &&
                  (n == 0 || (rbuf[0] == (tag & 0xff) && rbuf[n - 1] == (tag & 0xff))),
              "%s of %d bytes (tag %d) not cancelled: expected it, got %d bytes", mode_name[m], n,
              tag, cnt);
    }
    outcomes[outcome != 0]++;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    if (peer >= size) peer = rank;
    const int sender = rank % 2 == 0 || peer == rank;
    /* whether the peer shares this node (a cancel there may fail: a fast box is not queued) */
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Group wg, ng;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_MPI(MPI_Comm_group(node, &ng));
    int in_node = MPI_UNDEFINED;
    CHECK_MPI(MPI_Group_translate_ranks(wg, 1, &peer, ng, &in_node));
    const int remote = in_node == MPI_UNDEFINED;
    int bsize = 4 * (MAXN + MPI_BSEND_OVERHEAD);
    void *bb = malloc((size_t)bsize);
    CHECK(bb, "malloc");
    CHECK_MPI(MPI_Buffer_attach(bb, bsize));

    int outcomes[2] = {0, 0}, tag = 1;
    for (int m = 0; m < M_NMODES; m++)
        for (int s = 0; s < NSIZES; s++, tag++) {
            if (peer == rank) {
                /* to itself: both halves here, unmatched, the cancel decides at once */
                MPI_Request rq, pers;
                MPI_Status st;
                start_send(m, sizes[s], rank, tag, &rq, &pers);
                CHECK_MPI(MPI_Cancel(&rq));
                CHECK_MPI(MPI_Wait(&rq, &st));
                int flag = 1, c = cancelled_of(&st);
                if (pers != MPI_REQUEST_NULL) CHECK_MPI(MPI_Request_free(&pers));
                if (!c)
                    CHECK_MPI(MPI_Recv(rbuf, sizes[s], MPI_BYTE, rank, tag, MPI_COMM_WORLD,
                                       MPI_STATUS_IGNORE));
                CHECK_MPI(MPI_Iprobe(rank, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "send to itself (tag %d): a message is left", tag);
                continue;
            }
            one_round(sender, peer, m, sizes[s], tag, 0, remote, outcomes);
        }
    /* the receive races the cancel: eager and three-phase, standard and synchronous */
    for (int k = 0; k < 40 && peer != rank; k++, tag++)
        one_round(sender, peer, k % 4 == 3 ? M_ISSEND : M_ISEND, sizes[1 + k % (NSIZES - 1)], tag,
                  1, remote, outcomes);

    /* Of two sends with one key the second is cancelled: the first is what comes. */
    if (peer != rank) {
        int a = 10, c = 20;
        if (sender) {
            MPI_Request rq[2];
            MPI_Status st;
            CHECK_MPI(MPI_Isend(&a, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &rq[0]));
            CHECK_MPI(MPI_Isend(&c, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &rq[1]));
            CHECK_MPI(MPI_Cancel(&rq[1]));
            CHECK_MPI(MPI_Wait(&rq[1], &st));
            int second = cancelled_of(&st);
            CHECK(second || !remote, "the second of two sends to another node was not cancelled");
            CHECK_MPI(MPI_Send(&second, 1, MPI_INT, peer, TAG_FLAG, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Wait(&rq[0], &st));
        } else {
            int second = -1, got = -1;
            CHECK_MPI(
                MPI_Recv(&second, 1, MPI_INT, peer, TAG_FLAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(got == 10, "first of two sends: expected 10, got %d", got);
            if (!second)
                CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    }
    void *p;
    int ps;
    CHECK_MPI(MPI_Buffer_detach(&p, &ps));
    free(bb);
    if (sender && peer != rank && getenv("SEND_CANCEL_VERBOSE"))
        printf("rank %d -> %d (%s): %d cancelled, %d received\n", rank, peer,
               remote ? "another node" : "this node", outcomes[1], outcomes[0]);
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
    return finish_ok();
}
