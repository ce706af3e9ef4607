/* test_coll.c — Barrier, Bcast, Reduce, Allreduce on 1..64 ranks: results, MPI_IN_PLACE,
 * pair types, determinism, and back-to-back collectives with changing roots; MPI_Finalize's
 * rendezvous (coll_fin.c) with a wake-up that comes late and with a peer's MPI_Abort. */
#include <dlfcn.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "svc.h"

static const int sizes[] = {1, 2, 3, 4, 7, 16, 64};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static int run_sizes(th_rank_fn fn)
{
    for (int i = 0; i < NSIZES; i++) {
        struct th_opts o = {.nranks = sizes[i]};
        struct th_result res;
        if (th_run(&o, fn, NULL, &res)) {
            fprintf(stderr, "  with %d ranks: rank %d failed (code %d)%s%s\n", sizes[i],
                    res.failed_rank, res.code, res.aborted ? ": " : "",
                    res.aborted ? res.abort_why : "");
            return 1;
        }
    }
    return 0;
}

/* Barrier: nobody leaves round k before everyone entered it. */
static int rank_barrier(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    static _Atomic int entered[100];
    if (rank == 0) {
        for (int i = 0; i < 100; i++)
            atomic_store(&entered[i], 0);
    }
    TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < 100; k++) {
        atomic_fetch_add(&entered[k], 1);
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
        int e = atomic_load(&entered[k]);
        TH_CHECK(e == size, "barrier %d: left with %d of %d ranks entered", k, e, size);
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_barrier(void)
{
    return run_sizes(rank_barrier);
}

static int rank_bcast(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    static const int counts[] = {0, 1, 3, 1000, 300000};
    int *buf = malloc(300000 * sizeof(int));
    for (int round = 0; round < 10; round++) {
        int root = (round * 7) % size;
        int n = counts[round % 5];
        for (int i = 0; i < n; i++)
            buf[i] = rank == root ? i * 3 + round : -1;
        TH_MPI(MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            TH_CHECK(buf[i] == i * 3 + round, "round %d root %d: element %d expected %d got %d",
                     round, root, i, i * 3 + round, buf[i]);
    }
    free(buf);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_bcast(void)
{
    return run_sizes(rank_bcast);
}

/* Bcasts back to back with a rotating root while one member lags (it yields its core now and
 * then): faster members run rounds ahead, and every root scribbles over its buffer the moment
 * its Bcast returns, so a root that left before every copy was made shows up as a wrong value.
 * A small Allreduce after each Bcast, checked and scribbled over the same way. */
static int rank_bcast_lag(int rank, int size, void *arg)
{
    (void)arg;
    TH_MPI(MPI_Init(NULL, NULL));
    int buf[64];
    for (int round = 0; round < 400; round++) {
        int root = round % size, n = 1 + round % 64;
        for (int i = 0; i < n; i++)
            buf[i] = rank == root ? round * 100 + i : -1;
        if (rank == size - 1 && round % 3 == 0) sched_yield();
        TH_MPI(MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            TH_CHECK(buf[i] == round * 100 + i, "round %d root %d: element %d is %d", round, root,
                     i, buf[i]);
            buf[i] = -7;
        }
        /* small Allreduces (one synchronisation, one shared result buffer),
         * the same lagging member, every input and output scribbled over on return */
        int in[3], out[3], m = 1 + round % 3;
        for (int i = 0; i < m; i++)
            in[i] = rank + round + i;
        TH_MPI(MPI_Allreduce(in, out, m, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < m; i++) {
            int want = size * (size - 1) / 2 + size * (round + i);
            TH_CHECK(out[i] == want, "round %d allreduce element %d: %d, expected %d", round, i,
                     out[i], want);
            in[i] = out[i] = -9;
        }
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_bcast_lag(void)
{
    return run_sizes(rank_bcast_lag);
}

static int rank_reduce(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    static const int counts[] = {0, 1, 5, 1000, 100000};
    int maxn = 100000;
    int *in = malloc((size_t)maxn * sizeof(int)), *out = malloc((size_t)maxn * sizeof(int));
    double *din = malloc((size_t)maxn * sizeof(double));
    double *dout = malloc((size_t)maxn * sizeof(double));
    for (int round = 0; round < 10; round++) {
        int n = counts[round % 5], root = (round * 3) % size;
        for (int i = 0; i < n; i++) {
            in[i] = rank + i;
            out[i] = -7;
        }
        /* Reduce SUM */
        TH_MPI(MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int i = 0; i < n; i++)
                TH_CHECK(out[i] == size * (size - 1) / 2 + size * i,
                         "reduce round %d elem %d: expected %d got %d", round, i,
                         size * (size - 1) / 2 + size * i, out[i]);
        /* Reduce IN_PLACE at root, MAX */
        for (int i = 0; i < n; i++)
            out[i] = rank * 2 - i;
        TH_MPI(MPI_Reduce(rank == root ? MPI_IN_PLACE : out, rank == root ? out : NULL, n, MPI_INT,
                          MPI_MAX, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int i = 0; i < n; i++)
                TH_CHECK(out[i] == (size - 1) * 2 - i,
                         "reduce in place elem %d: expected %d got %d", i, (size - 1) * 2 - i,
                         out[i]);
        /* Allreduce SUM */
        for (int i = 0; i < n; i++)
            out[i] = -1;
        TH_MPI(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            TH_CHECK(out[i] == size * (size - 1) / 2 + size * i,
                     "allreduce elem %d: expected %d got %d", i, size * (size - 1) / 2 + size * i,
                     out[i]);
        /* Allreduce IN_PLACE, MIN */
        for (int i = 0; i < n; i++)
            out[i] = 100 - rank + i;
        TH_MPI(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            TH_CHECK(out[i] == 100 - (size - 1) + i,
                     "allreduce in place elem %d: expected %d got %d", i, 100 - (size - 1) + i,
                     out[i]);
        /* doubles: the same bits on every rank (deterministic order) */
        for (int i = 0; i < n; i++)
            din[i] = 1.0 / (rank + 1 + i);
        TH_MPI(MPI_Allreduce(din, dout, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        double ref = 0;
        if (n) {
            for (int r = size - 1; r >= 0; r--)
                ref = 1.0 / (r + 1) + ref;
            TH_CHECK(memcmp(&ref, &dout[0], sizeof ref) == 0,
                     "double sum: expected %.17g got %.17g", ref, dout[0]);
        }
        double first = n ? dout[n - 1] : 0, root_first = first;
        TH_MPI(MPI_Bcast(&root_first, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        TH_CHECK(memcmp(&first, &root_first, sizeof first) == 0,
                 "ranks disagree on the sum: %.17g vs %.17g", first, root_first);
    }
    /* MAXLOC on DOUBLE_INT */
    struct {
        double v;
        int i;
    } p = {(double)((rank * 7) % size), rank}, q = {-1, -1};
    TH_MPI(MPI_Allreduce(&p, &q, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    double best = -1;
    int bi = -1;
    for (int r = 0; r < size; r++)
        if ((double)((r * 7) % size) > best) {
            best = (double)((r * 7) % size);
            bi = r;
        }
    TH_CHECK(q.v == best && q.i == bi, "MAXLOC: expected (%g,%d) got (%g,%d)", best, bi, q.v, q.i);
    free(in);
    free(out);
    free(din);
    free(dout);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_reduce(void)
{
    return run_sizes(rank_reduce);
}

/* Collectives on two communicators interleaved, p2p traffic in between. */
static int rank_mixed(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    MPI_Comm dup;
    TH_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int k = 0; k < 50; k++) {
        int a = rank, b = 1, sa = 0, sb = 0;
        TH_MPI(MPI_Allreduce(&a, &sa, 1, MPI_INT, MPI_SUM, k % 2 ? dup : MPI_COMM_WORLD));
        TH_MPI(MPI_Allreduce(&b, &sb, 1, MPI_INT, MPI_SUM, k % 2 ? MPI_COMM_WORLD : dup));
        TH_CHECK(sa == size * (size - 1) / 2 && sb == size, "round %d: got %d and %d", k, sa, sb);
        int v = k, w = -1;
        TH_MPI(MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, k, &w, 1, MPI_INT,
                            (rank + size - 1) % size, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        TH_CHECK(w == k, "ring round %d: got %d", k, w);
    }
    TH_MPI(MPI_Comm_free(&dup));
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_mixed(void)
{
    return run_sizes(rank_mixed);
}

/* Thousands of ranks on a few cores: collectives must neither crawl nor use O(n^2) memory. */
static int rank_many(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    for (int k = 0; k < 3; k++) {
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
        long v = rank, sum = 0;
        TH_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        TH_CHECK(sum == (long)size * (size - 1) / 2, "allreduce: expected %ld got %ld",
                 (long)size * (size - 1) / 2, sum);
        int b = rank == k ? 1234 + k : 0;
        TH_MPI(MPI_Bcast(&b, 1, MPI_INT, k, MPI_COMM_WORLD));
        TH_CHECK(b == 1234 + k, "bcast: expected %d got %d", 1234 + k, b);
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_many(void)
{
    struct th_opts o = {.nranks = 4096};
    struct th_result res;
    if (th_run(&o, rank_many, NULL, &res)) {
        fprintf(stderr, "  rank %d failed (code %d)\n", res.failed_rank, res.code);
        return 1;
    }
    printf("  4096 ranks: %.3f s\n", res.seconds);
    return 0;
}

static long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* A test whose failure on the old code was a hang ends itself: SIGALRM after
 * seconds x TMPI_TIMEOUT_MULTIPLIER says which test hung and ends the program. */
static const char *watched;
static void watchdog_fired(int sig)
{
    (void)sig;
    static const char a[] = "FAIL ", b[] = ": the ranks did not end (a hang)\n";
    if (write(2, a, sizeof a - 1) < 0 || write(2, watched, strlen(watched)) < 0 ||
        write(2, b, sizeof b - 1) < 0) {
    }
    _exit(1);
}
static void watchdog(const char *what, unsigned seconds)
{
    const char *m = getenv("TMPI_TIMEOUT_MULTIPLIER");
    unsigned mult = m && atoi(m) > 0 ? (unsigned)atoi(m) : 1;
    watched = what;
    signal(SIGALRM, watchdog_fired);
    alarm(seconds * mult);
}

/* finalize_late_wake: libtmpi's futex calls go through syscall(3), which this program
 * exports (as the harness does pthread_create), so a rank can have its next FUTEX_WAKE wait
 * first: the wake-up of its first sleeping peer, and with it those of the peers after that
 * one, come late, as when the waker loses its core between its store and its wake-ups. */
static __thread long delay_next_wake_ms;
static _Atomic long wake_delayed_from, wake_delayed_to; /* mono_ns */

typedef long (*syscall_fn)(long, ...);
__attribute__((visibility("default"))) long syscall(long nr, ...)
{
    static _Atomic(syscall_fn) real;
    syscall_fn rf = atomic_load(&real);
    if (!rf) {
        rf = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
        atomic_store(&real, rf);
    }
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (nr == SYS_futex && (a[1] & FUTEX_CMD_MASK) == FUTEX_WAKE && delay_next_wake_ms) {
        atomic_store(&wake_delayed_from, mono_ns());
        sleep_ms(delay_next_wake_ms);
        delay_next_wake_ms = 0;
        atomic_store(&wake_delayed_to, mono_ns());
    }
    return rf(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Four ranks in an Allreduce: 0 and 2 arrive first and fall asleep (a spin of 1 s), 1 comes
 * 1.3 s later and spins, 3 last: it stores the result and wakes the members in rank order,
 * and its wake-up of rank 0 (asleep) takes 1.5 s.  Rank 1 sees the result meanwhile, leaves
 * and is first in MPI_Finalize, where rank 2 looks asleep in MPI_Allreduce with nobody having
 * woken it, in look after look.  A correct program all the same: the first version ended it,
 * saying rank 2 waited in a collective rank 1 never joins (test_client_coll's hang under load:
 * the ranks that were not woken yet left with the job, the others stayed in MPI_Finalize). */
static _Atomic long l_left; /* mono_ns: rank 1 returned from its Allreduce (or Allgather) */
static int rank_late_wake(int rank, int size, void *arg)
{
    int gather = *(const int *)arg;
    TH_MPI(MPI_Init(NULL, NULL));
    int v = rank + 1, sum = 0, all[4] = {0};
    if (rank == 1) sleep_ms(1300);
    if (rank == 3) {
        sleep_ms(1400);
        delay_next_wake_ms = 1500;
    }
    if (gather)
        TH_MPI(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    else
        TH_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 1) atomic_store(&l_left, mono_ns());
    delay_next_wake_ms = 0;
    for (int i = 0; gather && i < size; i++)
        TH_CHECK(all[i] == i + 1, "allgather: block %d holds %d", i, all[i]);
    TH_CHECK(gather || sum == size * (size + 1) / 2, "allreduce: %d", sum);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int late_wake(const char *what, int gather)
{
    watchdog(what, 60);
    /* the scenario needs rank 1 to see the result while rank 0's wake-up waits: under heavy
     * load rank 1 may have fallen asleep first, and then try again */
    for (int attempt = 1; attempt <= 3; attempt++) {
        atomic_store(&l_left, 0);
        atomic_store(&wake_delayed_from, 0);
        atomic_store(&wake_delayed_to, 0);
        struct th_opts o = {.nranks = 4, .spin_ns = 1000000000u};
        struct th_result res;
        if (th_run(&o, rank_late_wake, &gather, &res)) {
            fprintf(stderr, "  rank %d failed (code %d)%s%s\n", res.failed_rank, res.code,
                    res.aborted ? ": " : "", res.aborted ? res.abort_why : "");
            alarm(0);
            return 1;
        }
        long left = atomic_load(&l_left), from = atomic_load(&wake_delayed_from),
             to = atomic_load(&wake_delayed_to);
        if (from && left > from && left < to) {
            alarm(0);
            return 0;
        }
        fprintf(stderr,
                "  attempt %d: rank 1 left at %+ld ms from the late wake-up (%ld ms "
                "long): not inside it\n",
                attempt, (left - from) / 1000000, (to - from) / 1000000);
    }
    alarm(0);
    fprintf(stderr, "  rank 1 never left while a wake-up was late\n");
    return 1;
}
static int t_finalize_late_wake(void)
{
    return late_wake("finalize_late_wake", 0);
}

/* The same with a small Allgather: it synchronises once (coll_gather.c allgather_direct), so
 * rank 1 leaves with every block while rank 0's wake-up is late.  On the engine's two barriers
 * it could not: the second waits for rank 0's share, which rank 0 runs only once awake. */
static int t_allgather_late_wake(void)
{
    return late_wake("allgather_late_wake", 1);
}

/* Ranks 1.. wait in MPI_Finalize (shown as such, as tmpictl ranks would) when rank 0 calls
 * MPI_Abort: they leave with the job, as every wait does (they stayed for ever). */
static _Atomic int fin_seen;
static int rank_fin_abort(int rank, int size, void *arg)
{
    (void)arg;
    TH_MPI(MPI_Init(NULL, NULL));
    if (rank != 0) {
        MPI_Finalize();
        return 0;
    }
    long until = mono_ns() + 10000000000L;
    int q = 1;
    while (q < size && mono_ns() < until) {
        struct tmpi_rank_mpi st;
        if (th_rank_mpi(q, &st) == 0 && st.call && strcmp(st.call, "MPI_Finalize") == 0)
            q++;
        else
            sleep_ms(1);
    }
    atomic_store(&fin_seen, q);
    MPI_Abort(MPI_COMM_WORLD, 7);
    return 1;
}
static int t_finalize_abort(void)
{
    watchdog("finalize_abort", 60);
    static const int n[] = {2, 5, 64};
    for (int i = 0; i < 3; i++) {
        atomic_store(&fin_seen, 0);
        struct th_opts o = {.nranks = n[i]};
        struct th_result res;
        th_run(&o, rank_fin_abort, NULL, &res);
        int seen = atomic_load(&fin_seen);
        if (!res.aborted || res.abort_code != 7 || seen != n[i]) {
            fprintf(stderr, "  %d ranks: aborted %d, code %d, %d of %d shown in MPI_Finalize\n",
                    n[i], res.aborted, res.abort_code, seen - 1, n[i] - 1);
            alarm(0);
            return 1;
        }
    }
    alarm(0);
    return 0;
}

/* barrier_cede: libtmpi's sched_yield calls go through this program's, which counts those of
 * the calling thread.  With more ranks than cores (ncpus 1), the member that ends an
 * MPI_Barrier gives its core to the members it released (one yield) when the Bcast just before
 * found an eager round's root late: that member otherwise runs into the next Bcast before the
 * root had its turn and waits for it there (coll.c PMPI_Barrier).  Not in a loop of barriers,
 * not when another collective came between the Bcast and the barrier, not after a round whose
 * root waited for the copies, and not when every rank has a core. */
static __thread unsigned yields;
typedef int (*yield_fn)(void);
__attribute__((visibility("default"))) int sched_yield(void)
{
    static _Atomic(yield_fn) real;
    yield_fn rf = atomic_load(&real);
    if (!rf) {
        rf = (yield_fn)dlsym(RTLD_NEXT, "sched_yield");
        atomic_store(&real, rf);
    }
    yields++;
    return rf();
}

/* Rank 1 ends the barrier (the others are in it when it comes); its yields inside it. */
static int ended_barrier_yields(int rank, unsigned *ret)
{
    if (rank == 1) sleep_ms(100);
    yields = 0;
    TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
    *ret = yields;
    return 0;
}

/* One Bcast of n ints from root 0, which comes 100 ms after the members. */
static int late_root_bcast(int rank, int *buf, int n)
{
    if (rank == 0) {
        sleep_ms(100);
        for (int i = 0; i < n; i++)
            buf[i] = i * 3 + 1;
    }
    TH_MPI(MPI_Bcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        TH_CHECK(buf[i] == i * 3 + 1, "bcast: element %d is %d", i, buf[i]);
    return 0;
}

static int rank_cede(int rank, int size, void *arg)
{
    (void)size;
    int over = *(const int *)arg;
    static int buf[4][4096];
    unsigned y[4];
    TH_MPI(MPI_Init(NULL, NULL));
    if (ended_barrier_yields(rank, &y[0])) return 1; /* barriers only */
    if (late_root_bcast(rank, buf[rank], 1) || ended_barrier_yields(rank, &y[1])) return 1;
    /* 16 KiB: the root waits for its members' copies */
    if (late_root_bcast(rank, buf[rank], 4096) || ended_barrier_yields(rank, &y[2])) return 1;
    if (late_root_bcast(rank, buf[rank], 1)) return 1;
    int one = 1, sum = 0;
    TH_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (ended_barrier_yields(rank, &y[3])) return 1;
    if (rank == 1) {
        TH_CHECK(y[0] == 0, "a barrier after a barrier: %u yields at its end", y[0]);
        if (over)
            TH_CHECK(y[1] == 1,
                     "a barrier after a Bcast whose eager root came late: %u yields "
                     "at its end, expected 1",
                     y[1]);
        else
            TH_CHECK(y[1] == 0, "a barrier with a core per rank: %u yields at its end", y[1]);
        TH_CHECK(y[2] == 0, "a barrier after a Bcast whose root waited: %u yields at its end",
                 y[2]);
        TH_CHECK(y[3] == 0, "a barrier after an Allreduce: %u yields at its end", y[3]);
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_barrier_cede(void)
{
    for (int over = 1; over >= 0; over--) {
        /* the waiters spin (1 s): they stay runnable while rank 1 comes */
        struct th_opts o = {.nranks = 4, .ncpus = over ? 1 : 8, .spin_ns = 1000000000u};
        struct th_result res;
        if (th_run(&o, rank_cede, &over, &res)) {
            fprintf(stderr, "  ncpus %d: rank %d failed (code %d)\n", o.ncpus, res.failed_rank,
                    res.code);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct th_test tests[] = {
        {"barrier", t_barrier},
        {"bcast", t_bcast},
        {"bcast_laggard", t_bcast_lag},
        {"reduce", t_reduce},
        {"mixed", t_mixed},
        {"many", t_many},
        {"finalize_late_wake", t_finalize_late_wake},
        {"finalize_abort", t_finalize_abort},
        {"allgather_late_wake", t_allgather_late_wake},
        {"barrier_cede", t_barrier_cede},
        {NULL, NULL},
    };
    return th_main(argc, argv, tests);
}
