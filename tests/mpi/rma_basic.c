/* rma_basic.c — one-sided communication on every kind of window: Put, Get, Accumulate,
 * Get_accumulate, Fetch_and_op, Compare_and_swap and the request forms, under fence, lock,
 * lock_all and flush (after small operations, in every order), lock/operation/unlock; window
 * attributes, names, Win_shared_query (on every flavor), dynamic windows.  Every rank talks to its
 * neighbours, so with ranks on several nodes each call crosses the network. */
#include <stdint.h>
#include <string.h>

#include "check.h"

static int rank, size;

#define N 64

/* Fence epoch: each rank puts its row into its right neighbour, gets from its left one. */
static void fence_put_get(MPI_Win win, int *base)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int row[N], got[N];
    for (int i = 0; i < N; i++) {
        row[i] = rank * 1000 + i;
        base[i] = -1;
        base[N + i] = rank * 7 + i;
    }
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(row, N, MPI_INT, right, 0, N, MPI_INT, win));
    CHECK_MPI(MPI_Get(got, N, MPI_INT, left, N, N, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        CHECK(base[i] == left * 1000 + i, "put: element %d expected %d got %d", i, left * 1000 + i,
              base[i]);
        CHECK(got[i] == left * 7 + i, "get: element %d expected %d got %d", i, left * 7 + i,
              got[i]);
    }
    /* Accumulate from every rank into every rank's first element. */
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    base[0] = 0;
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++) {
        int one = rank + 1;
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, win));
    }
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(base[0] == size * (size + 1) / 2, "accumulate: expected %d got %d", size * (size + 1) / 2,
          base[0]);
}

/* Flushes after small Puts and Accumulates, in every order: a flush of the target, of another
 * target, flush_all, flush_local, a Get or Fetch_and_op in between.  Across nodes the last
 * small operation waits for the rank's next frame and a flush of its target travels as a bit
 * of it (rma_net.c "Holding back"): each read here must see exactly what came before it. */
static void flush_orders(MPI_Win win, long long *base)
{
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    base[2] = base[3] = base[4] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    long long acc = 0;
    for (long long k = 1; k <= 200; k++) {
        long long back = -1, one = 1;
        CHECK_MPI(MPI_Put(&k, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, win));
        switch (k % 5) {
        case 0:
            CHECK_MPI(MPI_Win_flush(right, win));
            break;
        case 1: /* another target first: the Put leaves in front of that FLUSH */
            CHECK_MPI(MPI_Win_flush(left, win));
            CHECK_MPI(MPI_Win_flush(right, win));
            break;
        case 2:
            CHECK_MPI(MPI_Win_flush_all(win));
            break;
        case 3:
            CHECK_MPI(MPI_Win_flush_local(right, win));
            CHECK_MPI(MPI_Win_flush(right, win));
            break;
        default: /* an Accumulate behind the Put, both completed by one flush */
            CHECK_MPI(
                MPI_Accumulate(&one, 1, MPI_LONG_LONG, right, 3, 1, MPI_LONG_LONG, MPI_SUM, win));
            acc++;
            CHECK_MPI(MPI_Win_flush(right, win));
        }
        if (k % 2) {
            CHECK_MPI(MPI_Get(&back, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_flush(right, win));
        } else {
            CHECK_MPI(MPI_Fetch_and_op(NULL, &back, MPI_LONG_LONG, right, 2, MPI_NO_OP, win));
            CHECK_MPI(MPI_Win_flush(right, win));
        }
        CHECK(back == k, "flush order %lld: read %lld back", k % 5, back);
        long long got = -1;
        CHECK_MPI(MPI_Fetch_and_op(NULL, &got, MPI_LONG_LONG, right, 3, MPI_NO_OP, win));
        CHECK_MPI(MPI_Win_flush(right, win));
        CHECK(got == acc, "accumulated %lld, read %lld", acc, got);
    }
    /* A last Put completed by the unlock alone. */
    long long last = 1000 + rank;
    CHECK_MPI(MPI_Put(&last, 1, MPI_LONG_LONG, right, 4, 1, MPI_LONG_LONG, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(base[2] == 200 && base[3] == acc && base[4] == 1000 + left,
          "after the epoch: %lld %lld %lld", base[2], base[3], base[4]);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Lock, one small operation, unlock (across nodes the UNLOCK travels as bits of the
     * operation): each unlock completes it and lets the next lock in. */
    for (long long k = 1; k <= 50; k++) {
        long long one = 1, back = -1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        CHECK_MPI(MPI_Put(&k, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, win));
        CHECK_MPI(MPI_Win_unlock(right, win));
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG_LONG, right, 3, 1, MPI_LONG_LONG, MPI_SUM, win));
        CHECK_MPI(MPI_Win_unlock(right, win));
        acc++;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        CHECK_MPI(MPI_Get(&back, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, win));
        long long got = -1;
        CHECK_MPI(MPI_Fetch_and_op(NULL, &got, MPI_LONG_LONG, right, 3, MPI_NO_OP, win));
        CHECK_MPI(MPI_Win_unlock(right, win));
        CHECK(back == k && got == acc, "lock/op/unlock %lld: read %lld and %lld (expected %lld)", k,
              back, got, acc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Every lock was released: an exclusive one of the whole window by each rank in turn. */
    for (int t = 0; t < size; t++) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        CHECK_MPI(MPI_Win_unlock(t, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Passive epochs: lock/unlock, lock_all with flush, the fetching calls, request forms. */
static void passive(MPI_Win win, long long *base)
{
    const int right = (rank + 1) % size;
    for (int i = 0; i < N; i++)
        base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Exclusive lock: a Put of rank's id into slot 1 of everyone (last one wins, all valid). */
    long long v = rank + 100;
    for (int t = 0; t < size; t++) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG_LONG, t, 1, 1, MPI_LONG_LONG, win));
        long long back = -1;
        CHECK_MPI(MPI_Get(&back, 1, MPI_LONG_LONG, t, 1, 1, MPI_LONG_LONG, win));
        CHECK_MPI(MPI_Win_unlock(t, win));
        CHECK(back == v, "get after put under an exclusive lock: expected %lld got %lld", v, back);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(base[1] >= 100 && base[1] < 100 + size, "slot 1 holds %lld", base[1]);

    /* lock_all: Fetch_and_op counter in slot 2 of rank 0; every old value distinct. */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    long long one = 1, old = -1, total = 0;
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 2, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK(old >= 0 && old < size, "fetch_and_op old value %lld", old);
    /* Compare_and_swap: exactly one rank swaps slot 3 of the right neighbour from 0 to its
     * id + 1 (only this rank targets it). */
    long long cmp = 0, nv = rank + 1, res = -1;
    CHECK_MPI(MPI_Compare_and_swap(&nv, &cmp, &res, MPI_LONG_LONG, right, 3, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK(res == 0, "compare_and_swap: old value expected 0 got %lld", res);
    CHECK_MPI(MPI_Compare_and_swap(&nv, &cmp, &res, MPI_LONG_LONG, right, 3, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK(res == rank + 1, "second compare_and_swap: old value expected %d got %lld", rank + 1,
          res);
    /* Get_accumulate with MPI_NO_OP reads atomically; with MPI_REPLACE swaps. */
    long long four[4] = {1, 2, 3, 4}, prev[4];
    CHECK_MPI(MPI_Get_accumulate(four, 4, MPI_LONG_LONG, prev, 4, MPI_LONG_LONG, right, 8, 4,
                                 MPI_LONG_LONG, MPI_REPLACE, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    for (int i = 0; i < 4; i++)
        CHECK(prev[i] == 0, "get_accumulate replace: old[%d] = %lld", i, prev[i]);
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, prev, 4, MPI_LONG_LONG, right, 8, 4,
                                 MPI_LONG_LONG, MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_flush_local(right, win));
    for (int i = 0; i < 4; i++)
        CHECK(prev[i] == i + 1, "get_accumulate no_op: [%d] = %lld", i, prev[i]);
    /* Request forms. */
    MPI_Request rq[4];
    long long ten[10], tenback[10], acc = 5, gacc = -1;
    for (int i = 0; i < 10; i++)
        ten[i] = rank * 10 + i;
    CHECK_MPI(MPI_Rput(ten, 10, MPI_LONG_LONG, right, 16, 10, MPI_LONG_LONG, win, &rq[0]));
    CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Rget(tenback, 10, MPI_LONG_LONG, right, 16, 10, MPI_LONG_LONG, win, &rq[1]));
    CHECK_MPI(
        MPI_Raccumulate(&acc, 1, MPI_LONG_LONG, right, 30, 1, MPI_LONG_LONG, MPI_SUM, win, &rq[2]));
    CHECK_MPI(MPI_Waitall(2, &rq[1], MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Rget_accumulate(&acc, 1, MPI_LONG_LONG, &gacc, 1, MPI_LONG_LONG, right, 30, 1,
                                  MPI_LONG_LONG, MPI_SUM, win, &rq[3]));
    CHECK_MPI(MPI_Wait(&rq[3], MPI_STATUS_IGNORE));
    for (int i = 0; i < 10; i++)
        CHECK(tenback[i] == ten[i], "rget [%d]: expected %lld got %lld", i, ten[i], tenback[i]);
    CHECK(gacc == 5, "rget_accumulate: expected 5 got %lld", gacc);
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(base[30] == 10, "raccumulate + rget_accumulate: expected 10 got %lld", base[30]);
    (void)total;
    MPI_Allreduce(&base[2], &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == size, "fetch_and_op counter: expected %d got %lld", size, total);
}

/* Post/start/complete/wait with the two neighbours, a few epochs in a row (Win_test for the
 * odd ones); Win_get_group is the window's communicator's group. */
static void pscw(MPI_Win win, int *base)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group world, nb, wg;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    CHECK_MPI(MPI_Win_get_group(win, &wg));
    int cmp = -1;
    MPI_Group_compare(world, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "Win_get_group: compare gives %d", cmp);
    MPI_Group_free(&wg);
    int pair[2] = {left, right};
    MPI_Group_incl(world, left == right ? 1 : 2, pair, &nb);
    for (int e = 0; e < 4; e++) {
        CHECK_MPI(MPI_Win_post(nb, 0, win));
        CHECK_MPI(MPI_Win_start(nb, 0, win));
        int v = rank * 100 + e;
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT, left, 1, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_complete(win));
        if (e & 1) {
            int flag = 0;
            while (!flag)
                CHECK_MPI(MPI_Win_test(win, &flag));
        } else {
            CHECK_MPI(MPI_Win_wait(win));
        }
        CHECK(base[0] == left * 100 + e, "pscw epoch %d: from the left expected %d got %d", e,
              left * 100 + e, base[0]);
        CHECK(base[1] == right * 100 + e, "pscw epoch %d: from the right expected %d got %d", e,
              right * 100 + e, base[1]);
    }
    MPI_Group_free(&nb);
    MPI_Group_free(&world);
}

/* Win_shared_query on a window of any flavor but dynamic (MPI 4.1 §12.2.3): the ranks of this
 * node (threads of one process) give their own base, size and unit; those on other nodes size 0
 * and a NULL base. */
static void query_any_flavor(MPI_Win win, void *base, MPI_Aint bytes)
{
    MPI_Comm node;
    MPI_Group wg, ng;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    MPI_Aint mine = (MPI_Aint)(uintptr_t)base, *addrs = malloc(sizeof *addrs * (size_t)size);
    CHECK(addrs != NULL, "out of memory");
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        int nr;
        MPI_Group_translate_ranks(wg, 1, &r, ng, &nr);
        MPI_Aint sz = -1;
        int du = -1;
        void *p = &sz;
        CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &p));
        if (nr != MPI_UNDEFINED)
            CHECK(sz == bytes && du == (int)sizeof(int) && p == (void *)(uintptr_t)addrs[r],
                  "shared_query(%d) on this node: size %td unit %d base %p, expected %td %zu %p", r,
                  sz, du, p, bytes, sizeof(int), (void *)(uintptr_t)addrs[r]);
        else
            CHECK(sz == 0 && p == NULL, "shared_query(%d) on another node: size %td base %p", r, sz,
                  p);
    }
    free(addrs);
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
}

static void attrs(MPI_Win win, void *base, MPI_Aint bytes, int flavor)
{
    void *b;
    MPI_Aint *sz;
    int *du, *fl, *model, flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag && b == base, "MPI_WIN_BASE %p, expected %p", b, base);
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && *sz == bytes, "MPI_WIN_SIZE %td, expected %td", *sz, bytes);
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    CHECK(flag && (*du == 4 || *du == 8), "MPI_WIN_DISP_UNIT %d", *du);
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK(flag && *fl == flavor, "flavor %d, expected %d", *fl, flavor);
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "model %d", *model);
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0, "a new window's name has length %d", len);
    CHECK_MPI(MPI_Win_set_name(win, "halo"));
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK(len == 4 && !strcmp(name, "halo"), "name '%s' (%d)", name, len);
    /* user attributes */
    int kv, val = 42, *pv = NULL;
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kv, NULL));
    CHECK_MPI(MPI_Win_get_attr(win, kv, &pv, &flag));
    CHECK(!flag, "an unset attribute is found");
    CHECK_MPI(MPI_Win_set_attr(win, kv, &val));
    CHECK_MPI(MPI_Win_get_attr(win, kv, &pv, &flag));
    CHECK(flag && pv == &val, "attribute: flag %d value %p, expected %p", flag, (void *)pv,
          (void *)&val);
    CHECK_MPI(MPI_Win_delete_attr(win, kv));
    CHECK_MPI(MPI_Win_get_attr(win, kv, &pv, &flag));
    CHECK(!flag, "a deleted attribute is found");
    CHECK_MPI(MPI_Win_free_keyval(&kv));
    /* hints come back as they were set */
    MPI_Info in, used;
    MPI_Info_create(&in);
    MPI_Info_set(in, "accumulate_ordering", "none");
    CHECK_MPI(MPI_Win_set_info(win, in));
    MPI_Info_free(&in);
    CHECK_MPI(MPI_Win_get_info(win, &used));
    char v[64];
    int has = 0;
    MPI_Info_get(used, "accumulate_ordering", sizeof v - 1, v, &has);
    CHECK(has && !strcmp(v, "none"), "Win_get_info: accumulate_ordering %s", has ? v : "unset");
    MPI_Info_free(&used);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Win_create on user memory. */
    int *mem = calloc(2 * N, sizeof *mem);
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_create(mem, 2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    attrs(win, mem, 2 * N * sizeof(int), MPI_WIN_FLAVOR_CREATE);
    query_any_flavor(win, mem, 2 * N * sizeof(int));
    fence_put_get(win, mem);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "Win_free left handle %d", win);
    free(mem);

    /* Win_allocate. */
    int *abase;
    CHECK_MPI(MPI_Win_allocate(2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &abase, &win));
    attrs(win, abase, 2 * N * sizeof(int), MPI_WIN_FLAVOR_ALLOCATE);
    query_any_flavor(win, abase, 2 * N * sizeof(int));
    fence_put_get(win, abase);
    pscw(win, abase);
    CHECK_MPI(MPI_Win_free(&win));

    long long *lbase;
    CHECK_MPI(MPI_Alloc_mem(N * sizeof(long long), MPI_INFO_NULL, &lbase));
    CHECK_MPI(MPI_Win_create(lbase, N * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    passive(win, lbase);
    flush_orders(win, lbase);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Free_mem(lbase));
    CHECK_MPI(MPI_Win_allocate(N * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &lbase, &win));
    passive(win, lbase);
    flush_orders(win, lbase);
    CHECK_MPI(MPI_Win_free(&win));

    /* Win_allocate_shared on the ranks of this node: contiguous segments, each rank's base
     * usable directly by the others. */
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    int *sbase;
    CHECK_MPI(MPI_Win_allocate_shared((nrank + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, node,
                                      &sbase, &win));
    attrs(win, sbase, (nrank + 1) * sizeof(int), MPI_WIN_FLAVOR_SHARED);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i <= nrank; i++)
        sbase[i] = nrank * 100 + i;
    CHECK_MPI(MPI_Win_sync(win));
    MPI_Barrier(node);
    CHECK_MPI(MPI_Win_sync(win));
    int *b0 = NULL;
    for (int r = 0; r < nsize; r++) {
        MPI_Aint sz;
        int du, *p;
        CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &p));
        CHECK(sz == (MPI_Aint)((r + 1) * sizeof(int)) && du == (int)sizeof(int),
              "shared_query(%d): size %td unit %d", r, sz, du);
        if (r == 0) b0 = p;
        /* contiguous: rank r's segment starts after ranks 0..r-1's */
        CHECK(p == b0 + r * (r + 1) / 2, "rank %d's segment at %p, expected %p", r, (void *)p,
              (void *)(b0 + r * (r + 1) / 2));
        for (int i = 0; i <= r; i++)
            CHECK(p[i] == r * 100 + i, "shared segment of %d [%d] = %d", r, i, p[i]);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(node);
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Comm_free(&node);

    /* Dynamic window: attach, publish the address, access, detach. */
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int dyn[8] = {0};
    CHECK_MPI(MPI_Win_attach(win, dyn, sizeof dyn));
    MPI_Aint mine, *addrs = malloc(size * sizeof *addrs);
    mine = (MPI_Aint)(uintptr_t)dyn; /* what MPI_Get_address gives in C */
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    int right = (rank + 1) % size, val = rank + 1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    CHECK_MPI(MPI_Put(&val, 1, MPI_INT, right, addrs[right] + 2 * sizeof(int), 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    int left = (rank + size - 1) % size;
    CHECK(dyn[2] == left + 1, "dynamic window: expected %d got %d", left + 1, dyn[2]);
    CHECK_MPI(MPI_Win_detach(win, dyn));
    CHECK_MPI(MPI_Win_free(&win));

    /* Two halves of one array attached apart (the second first): an access across the
     * boundary is to attached memory. */
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int two[12] = {0}, src[8], back[8];
    CHECK_MPI(MPI_Win_attach(win, two + 6, 6 * sizeof(int)));
    CHECK_MPI(MPI_Win_attach(win, two, 6 * sizeof(int)));
    MPI_Get_address(two, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        src[i] = rank * 100 + i;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    CHECK_MPI(MPI_Put(src, 8, MPI_INT, right, addrs[right] + 2 * sizeof(int), 8, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Get(back, 8, MPI_INT, right, addrs[right] + 2 * sizeof(int), 8, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(right, win));
    for (int i = 0; i < 8; i++)
        CHECK(back[i] == rank * 100 + i, "two regions: Get back %d: expected %d got %d", i,
              rank * 100 + i, back[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        CHECK(two[2 + i] == left * 100 + i, "two regions: element %d: expected %d got %d", 2 + i,
              left * 100 + i, two[2 + i]);
    CHECK_MPI(MPI_Win_detach(win, two));
    CHECK_MPI(MPI_Win_detach(win, two + 6));
    CHECK_MPI(MPI_Win_free(&win));
    free(addrs);

    return finish_ok();
}
