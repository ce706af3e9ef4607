/* mn_unexpected.c — messages that arrive before their receive is posted, and wildcard
 * receives, across nodes.
 *  1. every rank starts M sends of mixed sizes (below and above the eager limit) to every
 *     other rank, waits at a barrier, and only then receives them, from each source in order
 *     with MPI_ANY_TAG: order and every byte checked (with a tiny pool on the agents, the data
 *     must still arrive intact through the fallbacks);
 *  2. rank 0 takes M messages from every other rank with MPI_ANY_SOURCE / MPI_ANY_TAG, half of
 *     them through MPI_Probe first: per source in order, every byte checked.
 * Prints OK on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define M 12

static const int lens[] = {0, 100, 3000, 20000, 150000, 7};

static unsigned char pat(int src, int dst, int seq, size_t i)
{
    return (unsigned char)(src * 17 + dst * 5 + seq * 3 + i);
}

static size_t len_of(int seq)
{
    return (size_t)lens[seq % (int)(sizeof lens / sizeof lens[0])];
}

static void fail(int rank, const char *what, int src, int seq, size_t at)
{
    fprintf(stderr, "rank %d: %s: from %d message %d, byte %zu\n", rank, what, src, seq, at);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check(int rank, const unsigned char *b, size_t n, const MPI_Status *st, int src,
                  int seq)
{
    int got = -1;
    MPI_Get_count(st, MPI_BYTE, &got);
    if (st->MPI_SOURCE != src || st->MPI_TAG != seq || (size_t)got != n)
        fail(rank, "wrong envelope", st->MPI_SOURCE, st->MPI_TAG, (size_t)got);
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(src, rank, seq, i)) fail(rank, "wrong byte", src, seq, i);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t big = 150000;
    unsigned char *in = malloc(big);
    unsigned char **out = calloc((size_t)size * M, sizeof *out);
    MPI_Request *q = malloc(sizeof *q * (size_t)size * M);
    if (!in || !out || !q) fail(rank, "out of memory", -1, -1, 0);
    /* 1: unexpected */
    int nq = 0;
    for (int d = 0; d < size; d++)
        for (int s = 0; d != rank && s < M; s++) {
            size_t n = len_of(s);
            unsigned char *b = out[d * M + s] = malloc(n ? n : 1);
            for (size_t i = 0; i < n; i++)
                b[i] = pat(rank, d, s, i);
            MPI_Isend(b, (int)n, MPI_BYTE, d, s, MPI_COMM_WORLD, &q[nq++]);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int src = 0; src < size; src++)
        for (int s = 0; src != rank && s < M; s++) {
            MPI_Status st;
            MPI_Recv(in, (int)big, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            check(rank, in, len_of(s), &st, src, s);
        }
    MPI_Waitall(nq, q, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    /* 2: wildcards at rank 0 */
    if (rank == 0) {
        int *next = calloc((size_t)size, sizeof *next);
        for (int k = 0; k < (size - 1) * M; k++) {
            MPI_Status st;
            if (k % 2) {
                int cnt = -1;
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                if ((size_t)cnt != len_of(st.MPI_TAG))
                    fail(rank, "probe: wrong count", st.MPI_SOURCE, st.MPI_TAG, (size_t)cnt);
                MPI_Recv(in, cnt, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(in, (int)big, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            }
            int src = st.MPI_SOURCE;
            if (src <= 0 || src >= size || st.MPI_TAG != next[src])
                fail(rank, "out of order", src, st.MPI_TAG, 0);
            check(rank, in, len_of(next[src]), &st, src, next[src]);
            next[src]++;
        }
        free(next);
    } else {
        for (int s = 0; s < M; s++)
            MPI_Send(out[s], (int)len_of(s), MPI_BYTE, 0, s, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < size * M; i++)
        free(out[i]);
    free(out);
    free(q);
    free(in);
    if (rank == 0) printf("OK\n");
    MPI_Finalize();
    return 0;
}
