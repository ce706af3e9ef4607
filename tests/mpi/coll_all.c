/* coll_all.c — every collective once or twice under the real agent: Gather(v), Scatter(v),
 * Allgather(v), Alltoall(v,w), Reduce_scatter(_block), Scan, Exscan, Reduce_local, a
 * non-commutative user op, MPI_IN_PLACE, the non-blocking forms overlapped with
 * point-to-point, and collectives on dup, split and split_type communicators. */
#include <stdint.h>
#include <string.h>

#include "check.h"

static int val(int src, int dst, int i)
{
    return src * 100003 + dst * 101 + i;
}

/* 2x2 matrix product, inout = in x inout: not commutative. */
static void matmul(void *in_, void *io_, int *len, MPI_Datatype *dt)
{
    const uint32_t *a = in_;
    uint32_t *b = io_;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        uint32_t r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        uint32_t r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
    }
}

static void run(MPI_Comm c)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    const int cnt = 1001;
    int *s = malloc(sizeof(int) * cnt * n), *r = malloc(sizeof(int) * cnt * n);
    int *cs = malloc(sizeof(int) * n), *ds = malloc(sizeof(int) * n);
    for (int root = 0; root<n; root += n> 2 ? n - 1 : 1) {
        for (int i = 0; i < cnt; i++)
            s[i] = val(me, root, i);
        CHECK_MPI(MPI_Gather(s, cnt, MPI_INT, r, cnt, MPI_INT, root, c));
        if (me == root)
            for (int j = 0; j < n; j++)
                CHECK(r[j * cnt + cnt - 1] == val(j, root, cnt - 1), "Gather from %d", j);
        if (me == root)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < cnt; i++)
                    s[j * cnt + i] = val(root, j, i);
        CHECK_MPI(
            MPI_Scatter(s, cnt, MPI_INT, me == root ? MPI_IN_PLACE : r, cnt, MPI_INT, root, c));
        if (me != root)
            CHECK(r[0] == val(root, me, 0) && r[cnt - 1] == val(root, me, cnt - 1), "Scatter");
        for (int j = 0; j < n; j++)
            cs[j] = j + 1, ds[j] = j * (n + 1);
        for (int i = 0; i < me + 1; i++)
            s[i] = val(me, 7, i);
        CHECK_MPI(MPI_Gatherv(s, me + 1, MPI_INT, r, cs, ds, MPI_INT, root, c));
        if (me == root)
            for (int j = 0; j < n; j++)
                CHECK(r[ds[j] + j] == val(j, 7, j), "Gatherv from %d", j);
        if (me == root)
            for (int j = 0; j < n; j++)
                for (int i = 0; i <= j; i++)
                    s[ds[j] + i] = val(root, j, i);
        CHECK_MPI(MPI_Scatterv(s, cs, ds, MPI_INT, r, me + 1, MPI_INT, root, c));
        CHECK(r[me] == val(root, me, me), "Scatterv");
    }
    for (int i = 0; i < cnt; i++)
        r[me * cnt + i] = val(me, 0, i);
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, cnt, MPI_INT, c));
    for (int j = 0; j < n; j++)
        CHECK(r[j * cnt + 5] == val(j, 0, 5), "Allgather in place from %d", j);
    for (int j = 0; j < n; j++)
        cs[j] = 2, ds[j] = 2 * (n - 1 - j);
    s[0] = val(me, 1, 0), s[1] = val(me, 1, 1);
    CHECK_MPI(MPI_Allgatherv(s, 2, MPI_INT, r, cs, ds, MPI_INT, c));
    for (int j = 0; j < n; j++)
        CHECK(r[ds[j] + 1] == val(j, 1, 1), "Allgatherv from %d", j);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < cnt; i++)
            s[j * cnt + i] = val(me, j, i);
    CHECK_MPI(MPI_Alltoall(s, cnt, MPI_INT, r, cnt, MPI_INT, c));
    for (int j = 0; j < n; j++)
        CHECK(r[j * cnt + cnt / 2] == val(j, me, cnt / 2), "Alltoall from %d", j);
    for (int j = 0; j < n; j++)
        cs[j] = cnt, ds[j] = (n - 1 - j) * cnt;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < cnt; i++)
            r[ds[j] + i] = val(me, j, i + 1);
    CHECK_MPI(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, r, cs, ds, MPI_INT, c));
    for (int j = 0; j < n; j++)
        CHECK(r[ds[j] + 3] == val(j, me, 4), "Alltoallv in place from %d", j);
    MPI_Datatype *ts = malloc(sizeof(MPI_Datatype) * n);
    for (int j = 0; j < n; j++)
        ts[j] = MPI_INT, cs[j] = 1, ds[j] = j * (int)sizeof(int);
    for (int j = 0; j < n; j++)
        s[j] = val(me, j, 9);
    CHECK_MPI(MPI_Alltoallw(s, cs, ds, ts, r, cs, ds, ts, c));
    for (int j = 0; j < n; j++)
        CHECK(r[j] == val(j, me, 9), "Alltoallw from %d", j);
    free(ts);

    /* reductions */
    for (int i = 0; i < n * 3; i++)
        s[i] = me + i;
    CHECK_MPI(MPI_Reduce_scatter_block(s, r, 3, MPI_INT, MPI_SUM, c));
    CHECK(r[2] == n * (n - 1) / 2 + n * (me * 3 + 2), "Reduce_scatter_block");
    for (int j = 0; j < n; j++)
        cs[j] = j % 2 + 1;
    CHECK_MPI(MPI_Reduce_scatter(MPI_IN_PLACE, s, cs, MPI_INT, MPI_MAX, c));
    int off = 0;
    for (int j = 0; j < me; j++)
        off += cs[j];
    CHECK(s[0] == n - 1 + off, "Reduce_scatter in place: %d", s[0]);
    int v = me + 1, p = 0, e = -1;
    CHECK_MPI(MPI_Scan(&v, &p, 1, MPI_INT, MPI_SUM, c));
    CHECK(p == (me + 1) * (me + 2) / 2, "Scan %d", p);
    CHECK_MPI(MPI_Exscan(&v, &e, 1, MPI_INT, MPI_SUM, c));
    if (me > 0) CHECK(e == me * (me + 1) / 2, "Exscan %d", e);
    int a = 3, b = 4;
    CHECK_MPI(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_PROD));
    CHECK(b == 12, "Reduce_local %d", b);

    /* non-commutative user op on a contiguous type, in rank order */
    MPI_Op mul;
    MPI_Datatype mat;
    CHECK_MPI(MPI_Op_create(matmul, 0, &mul));
    CHECK_MPI(MPI_Type_contiguous(4, MPI_UINT32_T, &mat));
    CHECK_MPI(MPI_Type_commit(&mat));
    uint32_t m[4] = {(uint32_t)me + 1, 1, (uint32_t)me % 3, 2}, res[4], ref[4] = {1, 0, 0, 1};
    for (int k = 0; k < n; k++) {
        uint32_t mk[4] = {(uint32_t)k + 1, 1, (uint32_t)k % 3, 2};
        int one = 1;
        matmul(ref, mk, &one, NULL);
        memcpy(ref, mk, sizeof ref);
    }
    CHECK_MPI(MPI_Allreduce(m, res, 1, mat, mul, c));
    CHECK(!memcmp(res, ref, sizeof ref), "matmul Allreduce not in rank order");
    CHECK_MPI(MPI_Op_free(&mul));
    CHECK_MPI(MPI_Type_free(&mat));

    /* non-blocking, overlapped with a ring exchange */
    MPI_Request q[4];
    int tok = -1, my = val(me, 3, 3), sum = 0;
    CHECK_MPI(MPI_Irecv(&tok, 1, MPI_INT, (me + n - 1) % n, 5, c, &q[0]));
    CHECK_MPI(MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c, &q[1]));
    CHECK_MPI(MPI_Ialltoall(s, 1, MPI_INT, r, 1, MPI_INT, c, &q[2]));
    CHECK_MPI(MPI_Isend(&my, 1, MPI_INT, (me + 1) % n, 5, c, &q[3]));
    CHECK_MPI(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
    CHECK(tok == val((me + n - 1) % n, 3, 3) && sum == n * (n + 1) / 2, "non-blocking: %d %d", tok,
          sum);
    CHECK_MPI(MPI_Ibarrier(c, &q[0]));
    CHECK_MPI(MPI_Iscan(&v, &p, 1, MPI_INT, MPI_SUM, c, &q[1]));
    CHECK_MPI(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
    CHECK(p == (me + 1) * (me + 2) / 2, "Iscan %d", p);
    free(s), free(r), free(cs), free(ds);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, half, shm;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    /* split_type holds the ranks of this node: those with this rank's processor name */
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len, ssz, here = 0;
    MPI_Get_processor_name(name, &len);
    char *names = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    CHECK(names != NULL, "out of memory");
    CHECK_MPI(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                            MPI_CHAR, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        here += strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0;
    free(names);
    MPI_Comm_size(shm, &ssz);
    CHECK(ssz == here, "split_type size %d, expected %d (ranks on this node)", ssz, here);
    run(MPI_COMM_WORLD);
    run(dup);
    run(half);
    run(shm);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    MPI_Comm_free(&shm);
    return finish_ok();
}
