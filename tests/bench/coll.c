/* coll: collective latencies on MPI_COMM_WORLD (seed 000 section 4.2, Fig. 13).
 *   Barrier;
 *   Bcast and Reduce (MPI_SUM) of -s BYTES (default 8: one double) with the root fixed at 0,
 *   rotating (root = i mod P) and combo (each root kept for 4 calls, then the next);
 *   Allreduce (MPI_SUM, doubles) of 8 B and of each size in -a (default 1K,64K,1M).
 * With -p OP:BYTES,... only those points run, roots fixed at 0 (the emulated-hosts figure:
 * allreduce:8,allreduce:65536,bcast:1048576,reduce:1048576,alltoall:1024); OP is barrier,
 * bcast, reduce, allreduce or alltoall (BYTES to every rank, from every rank).
 * Prints  RESULT name=coll op=OP root=fixed|rotate|combo|- ranks=P size=S iters=N usec=T
 * Checked every call: the Bcast payload carries the call number and the root; every rank
 * contributes rank + call number to the sums, which the receivers test. */
#include "bench.h"

#define COMBO_REPEAT 4

enum op { OP_BARRIER, OP_BCAST, OP_REDUCE, OP_ALLREDUCE, OP_ALLTOALL, OP_COUNT };
enum rootmode { R_FIXED, R_ROTATE, R_COMBO, R_NONE };
static const char *op_name[] = {"barrier", "bcast", "reduce", "allreduce", "alltoall"};
static const char *root_name[] = {"fixed", "rotate", "combo", "-"};

struct cl {
    int rank, size;
    enum op op;
    enum rootmode rm;
    int count; /* doubles (alltoall: per rank) */
    double *in, *out;
    double *a_in, *a_out; /* alltoall: count doubles for each rank */
    long k;               /* call number, same on every rank */
};

static int root_of(const struct cl *c, long k)
{
    switch (c->rm) {
    case R_ROTATE:
        return (int)(k % c->size);
    case R_COMBO:
        return (int)((k / COMBO_REPEAT) % c->size);
    default:
        return 0;
    }
}

/* indices checked on every call: first, last, and a few in between */
#define NCHK 8
static int chk_index(int count, int j)
{
    return count <= NCHK ? (j < count ? j : count - 1) : (int)((long)(count - 1) * j / (NCHK - 1));
}

static void run(void *vctx, long iters)
{
    struct cl *c = vctx;
    int P = c->size, n = c->count;
    for (long i = 0; i < iters; i++) {
        long k = ++c->k;
        int root = root_of(c, k);
        switch (c->op) {
        case OP_BARRIER:
            MPI_Barrier(MPI_COMM_WORLD);
            break;
        case OP_BCAST:
            if (c->rank == root) {
                c->out[n - 1] = (double)(k + root + 1);
                c->out[0] = (double)k;
            }
            MPI_Bcast(c->out, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
            if (c->out[0] != (double)k || (n > 1 && c->out[n - 1] != (double)(k + root + 1)))
                BENCH_FAIL("bcast call %ld root %d: got %g/%g", k, root, c->out[0], c->out[n - 1]);
            break;
        case OP_ALLTOALL:
            /* block j of rank r carries (r, j, k) at both ends */
            for (int j = 0; j < P; j++) {
                c->a_in[(size_t)j * n + n - 1] = (double)(j * 1000003L + c->rank + k);
                if (n > 1) c->a_in[(size_t)j * n] = (double)(c->rank * 1000003L + j * 7L + k);
            }
            MPI_Alltoall(c->a_in, n, MPI_DOUBLE, c->a_out, n, MPI_DOUBLE, MPI_COMM_WORLD);
            for (int j = 0; j < P; j++)
                if ((n > 1 &&
                     c->a_out[(size_t)j * n] != (double)(j * 1000003L + c->rank * 7L + k)) ||
                    c->a_out[(size_t)j * n + n - 1] != (double)(c->rank * 1000003L + j + k))
                    BENCH_FAIL("alltoall call %ld: block from %d is %g/%g", k, j,
                               c->a_out[(size_t)j * n], c->a_out[(size_t)j * n + n - 1]);
            break;
        case OP_REDUCE:
        case OP_ALLREDUCE: {
            for (int j = 0; j < NCHK; j++) {
                int x = chk_index(n, j);
                c->in[x] = (double)(c->rank + k + x % 7);
            }
            if (c->op == OP_REDUCE)
                MPI_Reduce(c->in, c->out, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
            else
                MPI_Allreduce(c->in, c->out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            if (c->op == OP_ALLREDUCE || c->rank == root)
                for (int j = 0; j < NCHK; j++) {
                    int x = chk_index(n, j);
                    double want = (double)P * (double)(k + x % 7) + (double)P * (P - 1) / 2;
                    if (c->out[x] != want)
                        BENCH_FAIL("%s call %ld root %d: element %d is %g, want %g", op_name[c->op],
                                   k, root, x, c->out[x], want);
                }
            break;
        }
        }
    }
}

static void point(struct cl *c, enum op op, enum rootmode rm, int bytes)
{
    c->op = op;
    c->rm = rm;
    c->count = bytes / 8 < 1 ? 1 : bytes / 8;
    /* every element the check does not touch holds rank + x % 7 as well, so sums are right */
    for (int x = 0; x < c->count; x++)
        c->in[x] = (double)(c->rank + x % 7);
    run(c, 2);
    long iters;
    double t = bench_measure(MPI_COMM_WORLD, run, c, 10000000, &iters);
    if (c->rank == 0)
        bench_result("name=coll op=%s root=%s ranks=%d size=%d iters=%ld usec=%.4f", op_name[op],
                     root_name[rm], c->size, op == OP_BARRIER ? 0 : c->count * 8, iters, t * 1e6);
}

/* -p OP:BYTES,...: the points to run; returns the number parsed (0: none given). */
#define MAX_POINTS 16
static int parse_points(int argc, char **argv, enum op *ops, int *bytes)
{
    const char *list = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-p") == 0) list = argv[i + 1];
    int n = 0;
    for (const char *p = list; p && *p && n < MAX_POINTS;) {
        size_t len = strcspn(p, ":");
        int found = -1;
        for (int o = 0; o < OP_COUNT; o++)
            if (strlen(op_name[o]) == len && strncmp(p, op_name[o], len) == 0) found = o;
        if (found < 0 || p[len] != ':') {
            fprintf(stderr,
                    "coll: -p wants OP:BYTES,... (OP: barrier bcast reduce allreduce "
                    "alltoall), got %s\n",
                    p);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        ops[n] = (enum op)found;
        bytes[n++] = atoi(p + len + 1);
        p = strchr(p, ',');
        if (!p) break;
        p++;
    }
    return n;
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv);
    struct cl c = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    int bytes = (int)bench_opt_long(argc, argv, "-s", 8);
    const char *alist = "1024,65536,1048576";
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-a") == 0) alist = argv[i + 1];
    int maxb = bytes;
    for (const char *p = alist; *p;) {
        int b = atoi(p);
        if (b > maxb) maxb = b;
        p = strchr(p, ',');
        if (!p) break;
        p++;
    }
    enum op pops[MAX_POINTS];
    int pbytes[MAX_POINTS], npoints = parse_points(argc, argv, pops, pbytes);
    int a2a = 8;
    for (int i = 0; i < npoints; i++) {
        if (pbytes[i] > maxb) maxb = pbytes[i];
        if (pops[i] == OP_ALLTOALL && pbytes[i] > a2a) a2a = pbytes[i];
    }
    c.in = calloc((size_t)maxb / 8 + 1, sizeof(double));
    c.out = calloc((size_t)maxb / 8 + 1, sizeof(double));
    c.a_in = calloc((size_t)(a2a / 8 + 1) * (size_t)c.size, sizeof(double));
    c.a_out = calloc((size_t)(a2a / 8 + 1) * (size_t)c.size, sizeof(double));
    bench_warmup(MPI_COMM_WORLD, 0.2);
    if (npoints > 0) {
        for (int i = 0; i < npoints; i++)
            point(&c, pops[i], pops[i] == OP_BCAST || pops[i] == OP_REDUCE ? R_FIXED : R_NONE,
                  pbytes[i]);
        free(c.in);
        free(c.out);
        free(c.a_in);
        free(c.a_out);
        MPI_Finalize();
        return 0;
    }
    point(&c, OP_BARRIER, R_NONE, 8);
    for (enum rootmode rm = R_FIXED; rm <= R_COMBO; rm++)
        point(&c, OP_BCAST, rm, bytes);
    for (enum rootmode rm = R_FIXED; rm <= R_COMBO; rm++)
        point(&c, OP_REDUCE, rm, bytes);
    point(&c, OP_ALLREDUCE, R_NONE, 8);
    for (const char *p = alist; *p;) {
        int b = atoi(p);
        if (b > 0 && b != 8) point(&c, OP_ALLREDUCE, R_NONE, b);
        p = strchr(p, ',');
        if (!p) break;
        p++;
    }
    free(c.in);
    free(c.out);
    free(c.a_in);
    free(c.a_out);
    MPI_Finalize();
    return 0;
}
