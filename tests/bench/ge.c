/* ge: Gaussian elimination without pivoting on a diagonally dominant N x N system (-N,
 * default 512), rows distributed cyclically (row i on rank i mod P). Step k: the owner of row
 * k broadcasts it (MPI_Bcast, rotating root), every rank eliminates column k from its rows
 * below k. Back substitution: the owner of row k broadcasts x[k] (one double) and every rank
 * updates its right-hand sides. Broadcast-heavy, as in seed 000 Fig. 15.
 * Prints  RESULT name=ge ranks=P n=N iters=K sec=SECONDS_PER_SOLVE mflops=(2/3 N^3)/sec/1e6
 * Checked after every solve, on every rank: x must equal the known solution (x[j] = 1 + j mod 3)
 * to 1e-9 relative. */
#include "bench.h"
#include <math.h>

struct ge {
    int rank, size;
    long n, nloc; /* order; rows I own */
    double *a;    /* nloc rows of n + 1 (the last column is the right-hand side) */
    double *piv, *x;
};

static double gen(long i, long j, long n)
{
    return i == j ? (double)(2 * n) : (double)((i * 13 + j * 7) % 17) / 17.0 - 0.5;
}
static double xtrue(long j)
{
    return (double)(1 + j % 3);
}

static void setup(struct ge *g)
{
    long n = g->n;
    for (long l = 0; l < g->nloc; l++) {
        long i = l * g->size + g->rank;
        double *row = g->a + l * (n + 1), rhs = 0;
        for (long j = 0; j < n; j++) {
            row[j] = gen(i, j, n);
            rhs += row[j] * xtrue(j);
        }
        row[n] = rhs;
    }
}

static void solve(void *vctx, long iters)
{
    struct ge *g = vctx;
    long n = g->n, w = n + 1;
    int P = g->size;
    for (long it = 0; it < iters; it++) {
        setup(g);
        for (long k = 0; k < n; k++) {
            int owner = (int)(k % P);
            long len = w - k; /* columns k..n */
            if (owner == g->rank)
                memcpy(g->piv, g->a + (k / P) * w + k, sizeof(double) * (size_t)len);
            MPI_Bcast(g->piv, (int)len, MPI_DOUBLE, owner, MPI_COMM_WORLD);
            /* my first row index strictly below k */
            long l0 = (k + 1 - g->rank + P - 1) / P;
            if (k + 1 <= g->rank) l0 = 0;
            for (long l = l0; l < g->nloc; l++) {
                double *row = g->a + l * w + k;
                double f = row[0] / g->piv[0];
                for (long j = 1; j < len; j++)
                    row[j] -= f * g->piv[j];
                row[0] = 0;
            }
        }
        for (long k = n - 1; k >= 0; k--) {
            int owner = (int)(k % P);
            double xk = 0;
            if (owner == g->rank) {
                double *row = g->a + (k / P) * w;
                xk = row[n] / row[k];
            }
            MPI_Bcast(&xk, 1, MPI_DOUBLE, owner, MPI_COMM_WORLD);
            g->x[k] = xk;
            for (long l = 0; l < g->nloc; l++) {
                long i = l * P + g->rank;
                if (i >= k) break;
                double *row = g->a + l * w;
                row[n] -= row[k] * xk;
            }
        }
        for (long j = 0; j < n; j++)
            if (fabs(g->x[j] - xtrue(j)) > 1e-9 * xtrue(j))
                BENCH_FAIL("ge: x[%ld] = %.17g, want %g", j, g->x[j], xtrue(j));
    }
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv);
    struct ge g;
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.size);
    g.n = bench_opt_long(argc, argv, "-N", 512);
    g.nloc = (g.n - g.rank + g.size - 1) / g.size;
    if (g.rank >= g.n) g.nloc = 0;
    g.a = malloc(sizeof(double) * (size_t)((g.nloc ? g.nloc : 1) * (g.n + 1)));
    g.piv = malloc(sizeof(double) * (size_t)(g.n + 1));
    g.x = malloc(sizeof(double) * (size_t)g.n);
    if (!g.a || !g.piv || !g.x) BENCH_FAIL("out of memory");
    bench_warmup(MPI_COMM_WORLD, 0.1);
    solve(&g, 1);
    long iters;
    double t = bench_measure(MPI_COMM_WORLD, solve, &g, 1000, &iters);
    if (g.rank == 0)
        bench_result("name=ge ranks=%d n=%ld iters=%ld sec=%.6f mflops=%.1f", g.size, g.n, iters, t,
                     2.0 / 3.0 * (double)g.n * g.n * g.n / t / 1e6);
    MPI_Finalize();
    return 0;
}
