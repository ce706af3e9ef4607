/* thread_multiple.c — MPI_THREAD_MULTIPLE: threads a rank creates call MPI at once and act
 * for their rank (and see its private globals): concurrent Sendrecv with distinct tags, a
 * thread receiving with MPI_ANY_SOURCE while the others send, matched probes racing, concurrent
 * Iallreduce and Allreduce on duplicated communicators, Waitany/Testsome racing, and Comm_dup /
 * Comm_free from several threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

#define NT 4 /* threads per rank */
#define ITERS 100
#define K 20 /* messages per sender thread and destination in the ANY_SOURCE phase */
#define M 16 /* requests per thread in the Waitany/Testsome phase */

/* Private to the rank (every rank has its own copy of the program's globals); the threads a
 * rank creates see its copy. */
static int rank, size, right, left;
static MPI_Comm tcomm[NT];
static pthread_barrier_t phase;
static int private_mark;

/* Comm_dup/Comm_free turn order (see phase 5) */
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static int turn;

static void sendrecv_phase(int t)
{
    for (int i = 0; i < ITERS; i++) {
        int out = rank * 1000000 + t * 10000 + i, in = -1;
        MPI_Status st;
        CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, right, t, &in, 1, MPI_INT, left, t, MPI_COMM_WORLD,
                               &st));
        int want = left * 1000000 + t * 10000 + i;
        CHECK(in == want && st.MPI_SOURCE == left && st.MPI_TAG == t,
              "thread %d Sendrecv %d: expected %d got %d (source %d tag %d)", t, i, want, in,
              st.MPI_SOURCE, st.MPI_TAG);
    }
}

/* Thread 0 receives with MPI_ANY_SOURCE what threads 1..NT-1 of every rank send it; threads 1
 * and 2 also take tag 102 messages with matched probes on MPI_ANY_SOURCE, racing each other. */
static void any_source_phase(int t)
{
    if (t == 0) {
        int total = size * (NT - 1) * K;
        int next[64][NT]; /* per (source, sender thread): the next sequence number */
        memset(next, 0, sizeof next);
        for (int n = 0; n < total; n++) {
            int v[3];
            MPI_Status st;
            CHECK_MPI(MPI_Recv(v, 3, MPI_INT, MPI_ANY_SOURCE, 100, MPI_COMM_WORLD, &st));
            CHECK(v[0] == st.MPI_SOURCE && v[1] >= 1 && v[1] < NT,
                  "ANY_SOURCE: message from %d says %d/%d", st.MPI_SOURCE, v[0], v[1]);
            CHECK(v[2] == next[v[0] % 64][v[1]],
                  "ANY_SOURCE: from %d thread %d: seq %d, expected %d", v[0], v[1], v[2],
                  next[v[0] % 64][v[1]]);
            next[v[0] % 64][v[1]]++;
        }
        return;
    }
    for (int i = 0; i < K; i++)
        for (int d = 0; d < size; d++) {
            int v[3] = {rank, t, i};
            CHECK_MPI(MPI_Send(v, 3, MPI_INT, d, 100, MPI_COMM_WORLD));
        }
    if (t == 3) { /* K tag-102 messages to the right rank for its threads 1 and 2 */
        for (int i = 0; i < 2 * K; i++) {
            int v = rank * 1000 + i;
            CHECK_MPI(MPI_Send(&v, 1, MPI_INT, right, 102, MPI_COMM_WORLD));
        }
    } else {                      /* threads 1, 2: K each by Mprobe/Improbe + Mrecv, in any split */
        static _Atomic int taken; /* per rank: how many tag-102 messages its threads took */
        for (;;) {
            if (atomic_load(&taken) >= 2 * K) break;
            MPI_Message msg;
            MPI_Status st;
            int flag = 0;
            CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, 102, MPI_COMM_WORLD, &flag, &msg, &st));
            if (!flag) continue;
            int v = -1;
            CHECK_MPI(MPI_Mrecv(&v, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
            CHECK(st.MPI_SOURCE == left && v / 1000 == left, "Mprobe race: source %d value %d",
                  st.MPI_SOURCE, v);
            atomic_fetch_add(&taken, 1);
        }
        CHECK(atomic_load(&taken) == 2 * K, "Mprobe race: %d taken, expected %d",
              atomic_load(&taken), 2 * K);
    }
}

static void allreduce_phase(int t)
{
    for (int i = 0; i < ITERS; i++) {
        int v = rank + t + i, s = -1;
        MPI_Request r;
        CHECK_MPI(MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, tcomm[t], &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int want = size * (size - 1) / 2 + size * (t + i);
        CHECK(s == want, "thread %d Iallreduce %d: expected %d got %d", t, i, want, s);
        if (i % 10 == 0) {
            CHECK_MPI(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, tcomm[t]));
            CHECK(s == want, "thread %d Allreduce %d: expected %d got %d", t, i, want, s);
            CHECK_MPI(MPI_Barrier(tcomm[t]));
        }
    }
}

static void waitany_phase(int t)
{
    int in[M], out[M];
    MPI_Request rr[M], sr[M];
    for (int k = 0; k < M; k++) {
        in[k] = -1;
        CHECK_MPI(MPI_Irecv(&in[k], 1, MPI_INT, left, 200 + t * M + k, MPI_COMM_WORLD, &rr[k]));
    }
    for (int k = M - 1; k >= 0; k--) {
        out[k] = rank * 100 + k;
        CHECK_MPI(MPI_Isend(&out[k], 1, MPI_INT, right, 200 + t * M + k, MPI_COMM_WORLD, &sr[k]));
    }
    int done = 0;
    while (done < M) {
        if (t % 2 == 0) {
            int idx;
            CHECK_MPI(MPI_Waitany(M, rr, &idx, MPI_STATUS_IGNORE));
            CHECK(idx >= 0 && idx < M && in[idx] == left * 100 + idx, "thread %d Waitany %d: %d", t,
                  idx, idx >= 0 && idx < M ? in[idx] : -1);
            done++;
        } else {
            int n, idx[M];
            CHECK_MPI(MPI_Testsome(M, rr, &n, idx, MPI_STATUSES_IGNORE));
            CHECK(n != MPI_UNDEFINED, "thread %d Testsome: all null after %d", t, done);
            for (int j = 0; j < n; j++)
                CHECK(in[idx[j]] == left * 100 + idx[j], "thread %d Testsome %d: %d", t, idx[j],
                      in[idx[j]]);
            done += n;
        }
    }
    CHECK_MPI(MPI_Waitall(M, sr, MPI_STATUSES_IGNORE));
}

/* Comm_dup and Comm_free are collective over the parent: the threads of every rank take
 * their turns in the same order (a dup's members must meet in one order).  Each thread dups
 * its own communicator, uses the copy and frees it.  The whole turn is serialised by the test
 * while the communicator table is not safe for one thread to grow it while another looks a
 * handle up (libclient/comm: its thread-safe handle table is on its way); the dups and frees of
 * the threads still interleave with each other's turns and with the other ranks' threads. */
static void dup_phase(int t)
{
    for (int round = 0; round < 3; round++) {
        pthread_mutex_lock(&turn_lock);
        while (turn != round * NT + t)
            pthread_cond_wait(&turn_cv, &turn_lock);
        pthread_mutex_unlock(&turn_lock);
        MPI_Comm d;
        CHECK_MPI(MPI_Comm_dup(tcomm[t], &d));
        int v = 1, s = 0;
        CHECK_MPI(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, d));
        CHECK(s == size, "thread %d: Allreduce on its dup: %d", t, s);
        CHECK_MPI(MPI_Comm_free(&d));
        CHECK(d == MPI_COMM_NULL, "Comm_free did not null the handle");
        pthread_mutex_lock(&turn_lock);
        turn++;
        pthread_cond_broadcast(&turn_cv);
        pthread_mutex_unlock(&turn_lock);
    }
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    int main_ = 1;
    CHECK_MPI(MPI_Is_thread_main(&main_));
    CHECK(!main_, "thread %d: MPI_Is_thread_main says 1", t);
    int r = -1;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &r));
    CHECK(r == rank && private_mark == rank + 1,
          "thread %d acts for rank %d (expected %d), sees mark %d", t, r, rank, private_mark);
    sendrecv_phase(t);
    pthread_barrier_wait(&phase);
    any_source_phase(t);
    pthread_barrier_wait(&phase);
    allreduce_phase(t);
    pthread_barrier_wait(&phase);
    waitany_phase(t);
    pthread_barrier_wait(&phase);
    dup_phase(t);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d, expected MPI_THREAD_MULTIPLE", provided);
    int q = -1, is_main = 0;
    CHECK_MPI(MPI_Query_thread(&q));
    CHECK_MPI(MPI_Is_thread_main(&is_main));
    CHECK(q == MPI_THREAD_MULTIPLE && is_main, "Query_thread %d, Is_thread_main %d", q, is_main);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "at most 64 ranks (got %d)", size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    private_mark = rank + 1;
    for (int t = 0; t < NT; t++)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
    pthread_barrier_init(&phase, NULL, NT);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(long)t) == 0, "pthread_create %d", t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&phase);
    for (int t = 0; t < NT; t++)
        CHECK_MPI(MPI_Comm_free(&tcomm[t]));
    return finish_ok();
}
