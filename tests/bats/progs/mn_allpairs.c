/* mn_allpairs.c — every rank sends to every other rank at each size (0, 1, 64 KiB, around the
 * 100 KB eager limit, 1 MiB, 16 MiB, or the sizes given as arguments), one shift at a time
 * (rank r sends to r + k and receives from r - k), and checks every byte it gets.  The sums of
 * what was sent and what arrived, over all ranks, must also agree.  Prints
 * "allpairs SIZE ok" per size on rank 0, then OK. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pat(int src, int dst, size_t i)
{
    return (unsigned char)(i * 31 + (size_t)src * 7 + (size_t)dst * 13 + (i >> 12));
}

static uint64_t sum(const unsigned char *b, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 1099511628211u + b[i];
    return s;
}

static void fail(int rank, const char *what, size_t size, int peer, size_t at)
{
    fprintf(stderr, "rank %d: %s at size %zu from %d, byte %zu\n", rank, what, size, peer, at);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    static const size_t dflt[] = {0, 1, 65536, 99999, 100000, 100001, 1 << 20, 16 << 20};
    size_t sizes[16];
    int nsizes = 0;
    for (int i = 1; i < argc && nsizes < 16; i++)
        sizes[nsizes++] = strtoull(argv[i], NULL, 0);
    if (!nsizes)
        for (; nsizes < (int)(sizeof dflt / sizeof dflt[0]); nsizes++)
            sizes[nsizes] = dflt[nsizes];
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        unsigned char *out = malloc(n ? n : 1), *in = malloc(n ? n : 1);
        if (!out || !in) fail(rank, "out of memory", n, -1, 0);
        uint64_t sums[2] = {0, 0}; /* sent, received */
        for (int k = 1; k < size; k++) {
            int to = (rank + k) % size, from = (rank + size - k) % size;
            for (size_t i = 0; i < n; i++)
                out[i] = pat(rank, to, i);
            MPI_Request q;
            MPI_Status st;
            MPI_Irecv(in, (int)n, MPI_BYTE, from, si, MPI_COMM_WORLD, &q);
            MPI_Send(out, (int)n, MPI_BYTE, to, si, MPI_COMM_WORLD);
            MPI_Wait(&q, &st);
            int got = -1;
            MPI_Get_count(&st, MPI_BYTE, &got);
            if ((size_t)got != n || st.MPI_SOURCE != from) fail(rank, "wrong count", n, from, 0);
            for (size_t i = 0; i < n; i++)
                if (in[i] != pat(from, rank, i)) fail(rank, "wrong byte", n, from, i);
            sums[0] += sum(out, n);
            sums[1] += sum(in, n);
        }
        uint64_t tot[2];
        MPI_Reduce(sums, tot, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            if (tot[0] != tot[1]) fail(rank, "checksums differ", n, -1, 0);
            printf("allpairs %zu ok\n", n);
        }
        free(out);
        free(in);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("OK\n");
    MPI_Finalize();
    return 0;
}
