/* halo: a 2-D halo exchange with column vectors.  Each rank owns an N x N block of doubles
 * with a one-cell ghost frame ((N+2) x (N+2), row-major) on a periodic Px x Py process grid;
 * one exchange sends its first/last row (contiguous) to the north/south neighbours and its
 * first/last column (MPI_Type_vector(N, 1, N+2, MPI_DOUBLE)) to the west/east ones, with
 * Irecv/Isend/Waitall, straight into the neighbours' ghost cells.
 * Prints  RESULT name=halo ranks=P size=N iters=K usec=TIME_PER_EXCHANGE_US
 * Checked: after the first and the last exchange every ghost cell holds the value its owner
 * gave that cell. */
#include "bench.h"

struct halo {
    int rank, size, px, py, cx, cy, n;
    int north, south, west, east;
    double *a;
    MPI_Datatype col;
};

#define AT(h, i, j) ((h)->a[(size_t)(i) * (size_t)((h)->n + 2) + (size_t)(j)])

/* Value of interior cell (i, j), 1-based, of rank r. */
static double cell(int r, int i, int j)
{
    return r * 1e6 + i * 1000.0 + j;
}

static void exchange(struct halo *h)
{
    int n = h->n;
    MPI_Request rq[8];
    MPI_Irecv(&AT(h, 0, 1), n, MPI_DOUBLE, h->north, 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&AT(h, n + 1, 1), n, MPI_DOUBLE, h->south, 2, MPI_COMM_WORLD, &rq[1]);
    MPI_Irecv(&AT(h, 1, 0), 1, h->col, h->west, 3, MPI_COMM_WORLD, &rq[2]);
    MPI_Irecv(&AT(h, 1, n + 1), 1, h->col, h->east, 4, MPI_COMM_WORLD, &rq[3]);
    MPI_Isend(&AT(h, n, 1), n, MPI_DOUBLE, h->south, 1, MPI_COMM_WORLD, &rq[4]);
    MPI_Isend(&AT(h, 1, 1), n, MPI_DOUBLE, h->north, 2, MPI_COMM_WORLD, &rq[5]);
    MPI_Isend(&AT(h, 1, n), 1, h->col, h->east, 3, MPI_COMM_WORLD, &rq[6]);
    MPI_Isend(&AT(h, 1, 1), 1, h->col, h->west, 4, MPI_COMM_WORLD, &rq[7]);
    MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);
}

static void run(void *vctx, long iters)
{
    for (long k = 0; k < iters; k++)
        exchange(vctx);
}

static void check(struct halo *h)
{
    int n = h->n;
    for (int k = 1; k <= n; k++) {
        BENCH_CHECK(AT(h, 0, k) == cell(h->north, n, k), "halo: north ghost %d", k);
        BENCH_CHECK(AT(h, n + 1, k) == cell(h->south, 1, k), "halo: south ghost %d", k);
        BENCH_CHECK(AT(h, k, 0) == cell(h->west, k, n), "halo: west ghost %d", k);
        BENCH_CHECK(AT(h, k, n + 1) == cell(h->east, k, 1), "halo: east ghost %d", k);
    }
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv);
    struct halo h;
    MPI_Comm_rank(MPI_COMM_WORLD, &h.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &h.size);
    h.n = (int)bench_opt_long(argc, argv, "-N", 256);
    /* The most square grid px x py = size (px columns of ranks). */
    int d = 1;
    while ((d + 1) * (d + 1) <= h.size)
        d++;
    while (h.size % d)
        d--;
    h.py = d;
    h.px = h.size / d;
    h.cx = h.rank % h.px;
    h.cy = h.rank / h.px;
    h.west = h.cy * h.px + (h.cx + h.px - 1) % h.px;
    h.east = h.cy * h.px + (h.cx + 1) % h.px;
    h.north = ((h.cy + h.py - 1) % h.py) * h.px + h.cx;
    h.south = ((h.cy + 1) % h.py) * h.px + h.cx;
    h.a = calloc((size_t)(h.n + 2) * (size_t)(h.n + 2), sizeof(double));
    if (!h.a) BENCH_FAIL("halo: out of memory");
    for (int i = 1; i <= h.n; i++)
        for (int j = 1; j <= h.n; j++)
            AT(&h, i, j) = cell(h.rank, i, j);
    MPI_Type_vector(h.n, 1, h.n + 2, MPI_DOUBLE, &h.col);
    MPI_Type_commit(&h.col);
    exchange(&h);
    check(&h);
    bench_warmup(MPI_COMM_WORLD, 0.2);
    long iters;
    double t = bench_measure(MPI_COMM_WORLD, run, &h, 10000000, &iters);
    check(&h);
    if (h.rank == 0)
        bench_result("name=halo ranks=%d size=%d iters=%ld usec=%.4f", h.size, h.n, iters, t * 1e6);
    MPI_Type_free(&h.col);
    free(h.a);
    MPI_Finalize();
    return 0;
}
