/* rma: one-sided communication, for a window from Win_allocate (-w allocate) or from Win_create
 * on malloc'd memory (-w create).  Rank 0 is the origin, rank 1 the target, in one passive
 * epoch (MPI_Win_lock_all) opened once:
 *     RESULT name=rma op=put win=W size=8       usec=PUT_PLUS_FLUSH_US   (Put of 8 B + flush)
 *     RESULT name=rma op=put win=W size=1048576 usec=.. mbps=..          (Put of 1 MiB + flush)
 *     RESULT name=rma op=fop win=W size=8       usec=..                  (Fetch_and_op + flush)
 * then every rank, in a ring, a fence-synchronised halo exchange of 8 KiB to each neighbour:
 *     RESULT name=rma op=halo win=W size=8192   usec=PER_FENCE_EPOCH_US
 * Checked: after each point rank 1 verifies what arrived (the last Put's stamp, the counter of
 * the Fetch_and_ops, every halo cell). */
#include "bench.h"

#define BIG (1 << 20)
#define HALO 8192

struct rb {
    int rank, size;
    MPI_Win win;
    unsigned char *base, *src;
    size_t len;
    long k;
    int op; /* 0 put, 1 fop, 2 halo */
};

static void run(void *vctx, long iters)
{
    struct rb *c = vctx;
    if (c->op == 2) {
        int right = (c->rank + 1) % c->size, left = (c->rank + c->size - 1) % c->size;
        for (long i = 0; i < iters; i++) {
            c->k++;
            /* Two halo areas used by turns: a neighbour that left the fence first writes the
             * next epoch's ghosts into the other area while this rank still checks these
             * (its own stores into an area it reads in the same epoch would conflict). */
            const MPI_Aint area = (MPI_Aint)(c->k & 1) * 2 * HALO;
            unsigned char *ghost = c->base + area;
            memset(c->src, (int)(c->k & 0xff), HALO);
            /* my right edge goes into the right neighbour's left ghost, and back */
            MPI_Put(c->src, HALO, MPI_BYTE, right, area, HALO, MPI_BYTE, c->win);
            MPI_Put(c->src, HALO, MPI_BYTE, left, area + HALO, HALO, MPI_BYTE, c->win);
            MPI_Win_fence(0, c->win);
            if (ghost[0] != (unsigned char)(c->k & 0xff) ||
                ghost[2 * HALO - 1] != (unsigned char)(c->k & 0xff))
                BENCH_FAIL("halo: epoch %ld's ghost cells hold %d and %d", c->k, ghost[0],
                           ghost[2 * HALO - 1]);
        }
        return;
    }
    if (c->rank != 0) return;
    for (long i = 0; i < iters; i++) {
        c->k++;
        if (c->op == 0) {
            memcpy(c->src, &c->k, sizeof c->k);
            MPI_Put(c->src, (int)c->len, MPI_BYTE, 1, 0, (int)c->len, MPI_BYTE, c->win);
        } else {
            long one = 1, old;
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 0, MPI_SUM, c->win);
        }
        MPI_Win_flush(1, c->win);
    }
}

static void point(struct rb *c, int op, size_t len, const char *wname)
{
    c->op = op;
    c->len = len;
    long iters;
    if (op == 2) {
        MPI_Win_fence(0, c->win);
        run(c, 2);
    } else {
        MPI_Win_lock_all(0, c->win);
        run(c, 2);
    }
    double t = bench_measure(MPI_COMM_WORLD, run, c, 10000000, &iters);
    long k = c->k, got = 0;
    if (op == 2) {
        MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win);
    } else {
        MPI_Win_unlock_all(c->win);
        MPI_Bcast(&k, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        if (c->rank == 1) {
            memcpy(&got, c->base, sizeof got);
            if (op == 0 && got != k)
                BENCH_FAIL("put: target holds stamp %ld, expected %ld", got, k);
        }
        /* rank 0's next point writes the window at once: not before rank 1 has checked it */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (c->rank == 0) {
        const char *name = op == 0 ? "put" : op == 1 ? "fop" : "halo";
        if (len >= BIG)
            bench_result("name=rma op=%s win=%s size=%zu iters=%ld usec=%.4f mbps=%.1f", name,
                         wname, len, iters, t * 1e6, (double)len / t / 1e6);
        else
            bench_result("name=rma op=%s win=%s size=%zu iters=%ld usec=%.4f", name, wname, len,
                         iters, t * 1e6);
    }
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv);
    struct rb c = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    if (c.size < 2) BENCH_FAIL("rma needs 2 ranks");
    const char *wname = "allocate";
    for (int i = 1; i < argc - 1; i++)
        if (!strcmp(argv[i], "-w")) wname = argv[i + 1];
    const size_t bytes = BIG > 4 * HALO ? BIG : 4 * HALO;
    c.src = malloc(bytes);
    if (!c.src) BENCH_FAIL("out of memory");
    memset(c.src, 0, bytes);
    void *mem = NULL;
    if (!strcmp(wname, "create")) {
        mem = calloc(1, bytes);
        if (!mem) BENCH_FAIL("out of memory");
        MPI_Win_create(mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.win);
        c.base = mem;
    } else {
        MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.base, &c.win);
        memset(c.base, 0, bytes);
    }
    bench_warmup(MPI_COMM_WORLD, 0.2);
    point(&c, 0, 8, wname);
    point(&c, 0, BIG, wname);
    /* Fetch_and_op counts from 0 */
    memset(c.base, 0, sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);
    c.k = 0;
    point(&c, 1, 8, wname);
    if (c.rank == 1) {
        long got;
        memcpy(&got, c.base, sizeof got);
        long want = 0;
        MPI_Recv(&want, 1, MPI_LONG, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (got != want) BENCH_FAIL("fetch_and_op: counter %ld, expected %ld", got, want);
    } else if (c.rank == 0) {
        MPI_Send(&c.k, 1, MPI_LONG, 1, 9, MPI_COMM_WORLD);
    }
    c.k = 0; /* the halo's epoch stamps: every rank counts from 0 */
    point(&c, 2, HALO, wname);
    MPI_Win_free(&c.win);
    free(mem);
    free(c.src);
    MPI_Finalize();
    return 0;
}
