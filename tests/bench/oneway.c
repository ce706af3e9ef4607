/* oneway: rank 0 streams messages to rank 1 (MPI_Send in a loop, MPI_Recv in a loop); one
 * 4-byte acknowledgement per batch closes the timed region, so the time covers delivery.
 * For each size from -min to -max bytes (default 4 B .. 4 MiB) prints
 *     RESULT name=oneway size=S iters=N usec=TIME_PER_SEND_US mbps=S/TIME_PER_SEND
 * Checked: every message carries its sequence number in its first bytes (order and staleness),
 * and the receive buffer's pattern is verified after each size. */
#include "bench.h"

struct ow {
    int rank;
    size_t size;
    unsigned char *buf;
    long seq;
};

static void run(void *vctx, long iters)
{
    struct ow *c = vctx;
    int n = (int)c->size, ack = 0;
    size_t m = c->size < 4 ? c->size : 4;
    for (long i = 0; i < iters; i++) {
        uint32_t k = (uint32_t)++c->seq, got = 0;
        if (c->rank == 0) {
            memcpy(c->buf, &k, m);
            MPI_Send(c->buf, n, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        } else if (c->rank == 1) {
            MPI_Recv(c->buf, n, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            memcpy(&got, c->buf, m);
            if (m < 4) k &= (1u << (8 * m)) - 1;
            if (got != k) BENCH_FAIL("oneway size %zu: message %u arrived as %u", c->size, k, got);
        }
    }
    if (c->rank == 0)
        MPI_Recv(&ack, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (c->rank == 1)
        MPI_Send(&ack, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv);
    struct ow c = {0};
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) BENCH_FAIL("oneway needs 2 ranks");
    long lo = bench_opt_long(argc, argv, "-min", 4),
         hi = bench_opt_long(argc, argv, "-max", 4 << 20);
    c.buf = malloc((size_t)hi);
    if (!c.buf) BENCH_FAIL("out of memory");
    bench_warmup(MPI_COMM_WORLD, 0.2);
    for (long s = lo; s <= hi; s *= 2) {
        c.size = (size_t)s;
        if (c.rank == 0)
            bench_fill(c.buf, c.size, s);
        else
            memset(c.buf, 0, c.size);
        run(&c, 2);
        long iters;
        double t = bench_measure(MPI_COMM_WORLD, run, &c, 10000000, &iters);
        if (c.rank == 1)
            for (size_t i = 4; i < c.size; i += (c.size > 65536 ? 4093 : 1))
                if (c.buf[i] != bench_pat(i, s))
                    BENCH_FAIL("oneway size %zu: byte %zu corrupted", c.size, i);
        if (c.rank == 0)
            bench_result("name=oneway size=%ld iters=%ld usec=%.4f mbps=%.1f", s, iters, t * 1e6,
                         (double)s / t / 1e6);
    }
    free(c.buf);
    MPI_Finalize();
    return 0;
}
