/* mm: dense matrix multiply C = A x B (N x N doubles, -N, default 512) with point-to-point
 * messages only: each rank owns N/P consecutive rows of A, B and C; the row blocks of B travel
 * round the ring of ranks (MPI_Sendrecv, P-1 shifts), and each rank multiplies its rows of A
 * with the block it holds (1-D systolic block algorithm; the communication is the row-block
 * exchange of seed 000's and seed 001's block matrix multiply). N must be a multiple of P.
 * Prints  RESULT name=mm ranks=P n=N iters=K sec=SECONDS_PER_MULTIPLY mflops=2N^3/sec/1e6
 * Checked after every multiply: each rank tests every row sum of its C against A x (B x 1),
 * computed independently from the generators, and 16 single entries against a direct dot
 * product. Entries are small integers, so all sums are exact. */
#include "bench.h"

static double ga(long i, long k)
{
    return (double)((i * 3 + k * 5) % 11) - 5;
}
static double gb(long k, long j)
{
    return (double)((k * 7 + j * 2) % 13) - 6;
}

struct mm {
    int rank, size;
    long n, b; /* matrix order, rows per rank */
    double *a, *bb, *bt, *c;
    double *rowsum_b; /* sum over j of gb(k, j), all k */
};

static void check(struct mm *m)
{
    long n = m->n, b = m->b;
    for (long i = 0; i < b; i++) {
        long gi = m->rank * b + i;
        double want = 0, got = 0;
        for (long k = 0; k < n; k++)
            want += ga(gi, k) * m->rowsum_b[k];
        for (long j = 0; j < n; j++)
            got += m->c[i * n + j];
        if (got != want) BENCH_FAIL("mm: row %ld sums to %g, want %g", gi, got, want);
    }
    for (int s = 0; s < 16; s++) {
        long i = (s * 7919L) % b, j = (s * 104729L + m->rank) % n, gi = m->rank * b + i;
        double want = 0;
        for (long k = 0; k < n; k++)
            want += ga(gi, k) * gb(k, j);
        if (m->c[i * n + j] != want)
            BENCH_FAIL("mm: C[%ld][%ld] = %g, want %g", gi, j, m->c[i * n + j], want);
    }
}

static void multiply(void *vctx, long iters)
{
    struct mm *m = vctx;
    long n = m->n, b = m->b;
    int P = m->size, up = (m->rank + P - 1) % P, down = (m->rank + 1) % P;
    for (long it = 0; it < iters; it++) {
        /* my own B rows to start */
        for (long kk = 0; kk < b; kk++)
            for (long j = 0; j < n; j++)
                m->bb[kk * n + j] = gb(m->rank * b + kk, j);
        memset(m->c, 0, sizeof(double) * (size_t)(b * n));
        for (int s = 0; s < P; s++) {
            long blk = (m->rank + s) % P; /* which rows of B I hold now */
            for (long i = 0; i < b; i++) {
                double *ci = m->c + i * n;
                const double *ai = m->a + i * n + blk * b;
                for (long kk = 0; kk < b; kk++) {
                    double aik = ai[kk];
                    const double *bk = m->bb + kk * n;
                    for (long j = 0; j < n; j++)
                        ci[j] += aik * bk[j];
                }
            }
            if (s + 1 < P) {
                /* pass my block up the ring, take the next one from below */
                MPI_Sendrecv(m->bb, (int)(b * n), MPI_DOUBLE, up, 21, m->bt, (int)(b * n),
                             MPI_DOUBLE, down, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double *t = m->bb;
                m->bb = m->bt;
                m->bt = t;
            }
        }
        check(m);
    }
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv);
    struct mm m;
    MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m.size);
    m.n = bench_opt_long(argc, argv, "-N", 512);
    if (m.n % m.size) BENCH_FAIL("mm: N=%ld is not a multiple of %d ranks", m.n, m.size);
    m.b = m.n / m.size;
    size_t blk = sizeof(double) * (size_t)(m.b * m.n);
    m.a = malloc(blk);
    m.bb = malloc(blk);
    m.bt = malloc(blk);
    m.c = malloc(blk);
    m.rowsum_b = malloc(sizeof(double) * (size_t)m.n);
    if (!m.a || !m.bb || !m.bt || !m.c || !m.rowsum_b) BENCH_FAIL("out of memory");
    for (long i = 0; i < m.b; i++)
        for (long k = 0; k < m.n; k++)
            m.a[i * m.n + k] = ga(m.rank * m.b + i, k);
    for (long k = 0; k < m.n; k++) {
        double s = 0;
        for (long j = 0; j < m.n; j++)
            s += gb(k, j);
        m.rowsum_b[k] = s;
    }
    bench_warmup(MPI_COMM_WORLD, 0.1);
    multiply(&m, 1);
    long iters;
    double t = bench_measure(MPI_COMM_WORLD, multiply, &m, 1000, &iters);
    if (m.rank == 0)
        bench_result("name=mm ranks=%d n=%ld iters=%ld sec=%.6f mflops=%.1f", m.size, m.n, iters, t,
                     2.0 * (double)m.n * m.n * m.n / t / 1e6);
    MPI_Finalize();
    return 0;
}
