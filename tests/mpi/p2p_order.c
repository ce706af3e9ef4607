/* p2p_order.c — non-overtaking order with exact tags, ANY_TAG and ANY_SOURCE. */
#include "check.h"

/* Windows of small isends from every rank to rank 0 (the osu_bw pattern, through the fast
 * boxes), received by a mix of exact receives, ANY_SOURCE and ANY_TAG ones and probes before
 * some of them, completed by Waitall and by Wait on requests that are often done already: each
 * sender's messages arrive in order, each exactly once.  A sender's tag is its rank, so every
 * receive (src, ANY_TAG), (ANY_SOURCE, src) or (src, src) can take src's messages only and no
 * wildcard starves an exact receive. */
static void windows_of_isends(int rank, int size)
{
    enum { W = 64, ROUNDS = 20 };
    const int bytes[] = {8, 16, 32, 64};
    if (size < 2) return;
    if (rank != 0) {
        for (int r = 0; r < ROUNDS; r++) {
            int buf[W][16];
            MPI_Request q[W];
            for (int j = 0; j < W; j++) {
                buf[j][0] = rank;
                buf[j][1] = r * W + j;
                int n = bytes[(r + j) % 4] / (int)sizeof(int);
                CHECK_MPI(MPI_Isend(buf[j], n, MPI_INT, 0, rank, MPI_COMM_WORLD, &q[j]));
            }
            if (r % 2)
                for (int j = 0; j < W; j++)
                    CHECK_MPI(MPI_Wait(&q[j], MPI_STATUS_IGNORE));
            else
                CHECK_MPI(MPI_Waitall(W, q, MPI_STATUSES_IGNORE));
            CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        return;
    }
    int total = W * (size - 1);
    int(*buf)[16] = malloc(sizeof(int[16]) * (size_t)total);
    MPI_Request *q = malloc(sizeof *q * (size_t)total);
    MPI_Status *st = malloc(sizeof *st * (size_t)total);
    int *seen = malloc(sizeof *seen * (size_t)size);
    CHECK(buf && q && st && seen, "out of memory");
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < total; i++) {
            int src = 1 + i % (size - 1);
            if (i % 5 == 4) { /* fewer than W receives for src are posted: one is unmatched */
                int flag = 0;
                MPI_Status ps;
                while (!flag)
                    CHECK_MPI(MPI_Iprobe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ps));
                CHECK(ps.MPI_SOURCE == src && ps.MPI_TAG == src, "probe: source %d tag %d, src %d",
                      ps.MPI_SOURCE, ps.MPI_TAG, src);
            }
            int s = i % 3 == 1 ? MPI_ANY_SOURCE : src, t = i % 3 == 0 ? MPI_ANY_TAG : src;
            CHECK_MPI(MPI_Irecv(buf[i], 16, MPI_INT, s, t, MPI_COMM_WORLD, &q[i]));
        }
        if (r % 2) {
            CHECK_MPI(MPI_Waitall(total, q, st));
        } else {
            for (int i = 0; i < total; i++)
                CHECK_MPI(MPI_Wait(&q[i], &st[i]));
        }
        for (int p = 0; p < size; p++)
            seen[p] = 0;
        for (int i = 0; i < total; i++) { /* in post order, per source */
            int src = 1 + i % (size - 1);
            CHECK(buf[i][0] == src && st[i].MPI_SOURCE == src && st[i].MPI_TAG == src,
                  "receive %d: payload from %d, status source %d tag %d, expected %d", i, buf[i][0],
                  st[i].MPI_SOURCE, st[i].MPI_TAG, src);
            CHECK(buf[i][1] == r * W + seen[src], "from %d: expected message %d, got %d", src,
                  r * W + seen[src], buf[i][1]);
            seen[src]++;
        }
        for (int p = 1; p < size; p++)
            CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, p, 7, MPI_COMM_WORLD));
    }
    free(buf);
    free(q);
    free(st);
    free(seen);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int per = 100;
    if (size == 1) {
        /* messages to oneself keep their order too */
        for (int i = 0; i < per; i++)
            CHECK_MPI(MPI_Send(&i, 1, MPI_INT, 0, i % 4, MPI_COMM_WORLD));
        for (int i = 0; i < per; i++) {
            int v = -1;
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
            CHECK(v == i, "expected %d, got %d", i, v);
        }
        return finish_ok();
    }
    if (rank == 0) {
        int *next = calloc((size_t)size, sizeof *next);
        for (int i = 0; i < per * (size - 1); i++) {
            int v[2];
            MPI_Status st;
            CHECK_MPI(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(v[0] == st.MPI_SOURCE, "payload says source %d, status %d", v[0], st.MPI_SOURCE);
            CHECK(v[1] == next[v[0]], "from rank %d: expected message %d, got %d", v[0], next[v[0]],
                  v[1]);
            CHECK(st.MPI_TAG == v[1] % 3, "tag: expected %d got %d", v[1] % 3, st.MPI_TAG);
            next[v[0]]++;
        }
        free(next);
    } else {
        for (int i = 0; i < per; i++) {
            int v[2] = {rank, i};
            CHECK_MPI(MPI_Send(v, 2, MPI_INT, 0, i % 3, MPI_COMM_WORLD));
        }
    }
    /* exact tags received in reverse tag order (after a barrier: the ANY_TAG receives above
     * must not see these) */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        for (int i = 0; i < per; i++)
            CHECK_MPI(MPI_Send(&i, 1, MPI_INT, 0, 10 + i % 2, MPI_COMM_WORLD));
    } else if (rank == 0) {
        for (int t = 11; t >= 10; t--)
            for (int i = t - 10; i < per; i += 2) {
                int v = -1;
                CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 1, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(v == i, "tag %d: expected %d got %d", t, i, v);
            }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    windows_of_isends(rank, size);
    return finish_ok();
}
