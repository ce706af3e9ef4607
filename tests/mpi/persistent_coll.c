/* persistent_coll.c — MPI-4.0 persistent collectives: every *_init, started several times with
 * new data (Start and Startall), completed with Wait/Test/Waitall, inactive between starts,
 * freed at the end. */
#include <string.h>

#include "check.h"

#define ROUNDS 4
#define NK 17

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm comm = MPI_COMM_WORLD;
    int root = n - 1;
    int v, bc, red, allred, scan, exscan, rsb, scat;
    int *gat = calloc((size_t)n, sizeof(int)), *gatv = calloc((size_t)n, sizeof(int));
    int *allg = calloc((size_t)n, sizeof(int)), *allgv = calloc((size_t)n, sizeof(int));
    int *a2a_s = calloc((size_t)n, sizeof(int)), *a2a_r = calloc((size_t)n, sizeof(int));
    int *a2av_r = calloc((size_t)n, sizeof(int)), *a2aw_r = calloc((size_t)n, sizeof(int));
    int *rs_s = calloc((size_t)n, sizeof(int)), rs_r, *scat_s = calloc((size_t)n, sizeof(int));
    int scatv;
    int *ones = malloc((size_t)n * sizeof(int)), *displs = malloc((size_t)n * sizeof(int));
    int *bdispls = malloc((size_t)n * sizeof(int));
    MPI_Datatype *types = malloc((size_t)n * sizeof(MPI_Datatype));
    for (int i = 0; i < n; i++)
        ones[i] = 1, displs[i] = i, bdispls[i] = i * (int)sizeof(int), types[i] = MPI_INT;

    MPI_Request r[NK];
    MPI_Info info = MPI_INFO_NULL;
    CHECK_MPI(MPI_Barrier_init(comm, info, &r[0]));
    CHECK_MPI(MPI_Bcast_init(&bc, 1, MPI_INT, root, comm, info, &r[1]));
    CHECK_MPI(MPI_Reduce_init(&v, &red, 1, MPI_INT, MPI_SUM, root, comm, info, &r[2]));
    CHECK_MPI(MPI_Allreduce_init(&v, &allred, 1, MPI_INT, MPI_SUM, comm, info, &r[3]));
    CHECK_MPI(MPI_Gather_init(&v, 1, MPI_INT, gat, 1, MPI_INT, root, comm, info, &r[4]));
    CHECK_MPI(
        MPI_Gatherv_init(&v, 1, MPI_INT, gatv, ones, displs, MPI_INT, root, comm, info, &r[5]));
    CHECK_MPI(MPI_Scatter_init(scat_s, 1, MPI_INT, &scat, 1, MPI_INT, root, comm, info, &r[6]));
    CHECK_MPI(MPI_Scatterv_init(scat_s, ones, displs, MPI_INT, &scatv, 1, MPI_INT, root, comm, info,
                                &r[7]));
    CHECK_MPI(MPI_Allgather_init(&v, 1, MPI_INT, allg, 1, MPI_INT, comm, info, &r[8]));
    CHECK_MPI(MPI_Allgatherv_init(&v, 1, MPI_INT, allgv, ones, displs, MPI_INT, comm, info, &r[9]));
    CHECK_MPI(MPI_Alltoall_init(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, comm, info, &r[10]));
    CHECK_MPI(MPI_Alltoallv_init(a2a_s, ones, displs, MPI_INT, a2av_r, ones, displs, MPI_INT, comm,
                                 info, &r[11]));
    CHECK_MPI(MPI_Alltoallw_init(a2a_s, ones, bdispls, types, a2aw_r, ones, bdispls, types, comm,
                                 info, &r[12]));
    CHECK_MPI(MPI_Reduce_scatter_init(rs_s, &rs_r, ones, MPI_INT, MPI_SUM, comm, info, &r[13]));
    CHECK_MPI(MPI_Reduce_scatter_block_init(rs_s, &rsb, 1, MPI_INT, MPI_SUM, comm, info, &r[14]));
    CHECK_MPI(MPI_Scan_init(&v, &scan, 1, MPI_INT, MPI_SUM, comm, info, &r[15]));
    CHECK_MPI(MPI_Exscan_init(&v, &exscan, 1, MPI_INT, MPI_SUM, comm, info, &r[16]));

    for (int round = 0; round < ROUNDS; round++) {
        v = rank + round;
        bc = rank == root ? 1000 + round : -1;
        for (int i = 0; i < n; i++) {
            a2a_s[i] = rank * 100 + i + round;
            rs_s[i] = i + round;
            scat_s[i] = rank == root ? i * 3 + round : -1;
        }
        exscan = -7;
        if (round % 2) {
            CHECK_MPI(MPI_Startall(NK, r));
        } else {
            for (int k = 0; k < NK; k++)
                CHECK_MPI(MPI_Start(&r[k]));
        }
        if (round == 2) {
            for (int k = 0; k < NK; k++) {
                int flag = 0;
                while (!flag)
                    CHECK_MPI(MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE));
            }
        } else {
            CHECK_MPI(MPI_Waitall(NK, r, MPI_STATUSES_IGNORE));
        }
        for (int k = 0; k < NK; k++)
            CHECK(r[k] != MPI_REQUEST_NULL, "round %d: request %d freed by completion", round, k);
        int sum = n * (n - 1) / 2 + n * round;
        CHECK(bc == 1000 + round, "Bcast_init round %d: %d", round, bc);
        CHECK(allred == sum, "Allreduce_init round %d: expected %d got %d", round, sum, allred);
        if (rank == root) {
            CHECK(red == sum, "Reduce_init: expected %d got %d", sum, red);
            for (int i = 0; i < n; i++)
                CHECK(gat[i] == i + round && gatv[i] == i + round, "Gather(v)_init [%d]: %d %d", i,
                      gat[i], gatv[i]);
        }
        CHECK(scat == rank * 3 + round && scatv == rank * 3 + round, "Scatter(v)_init: %d %d", scat,
              scatv);
        for (int i = 0; i < n; i++) {
            CHECK(allg[i] == i + round && allgv[i] == i + round, "Allgather(v)_init [%d]: %d %d", i,
                  allg[i], allgv[i]);
            int want = i * 100 + rank + round;
            CHECK(a2a_r[i] == want && a2av_r[i] == want && a2aw_r[i] == want,
                  "Alltoall(v,w)_init [%d]: want %d got %d %d %d", i, want, a2a_r[i], a2av_r[i],
                  a2aw_r[i]);
        }
        CHECK(rs_r == n * (rank + round) && rsb == n * (rank + round),
              "Reduce_scatter(_block)_init: want %d got %d %d", n * (rank + round), rs_r, rsb);
        int pre = rank * (rank + 1) / 2 + (rank + 1) * round;
        CHECK(scan == pre, "Scan_init: want %d got %d", pre, scan);
        if (rank > 0) CHECK(exscan == pre - v, "Exscan_init: want %d got %d", pre - v, exscan);
    }
    /* inactive between starts: Wait returns at once */
    MPI_Status st;
    CHECK_MPI(MPI_Wait(&r[3], &st));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "inactive persistent collective: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    /* a persistent collective interleaved with a non-blocking one on the same communicator */
    v = 1;
    int nb = 0;
    MPI_Request q;
    CHECK_MPI(MPI_Start(&r[3]));
    CHECK_MPI(MPI_Iallreduce(&v, &nb, 1, MPI_INT, MPI_SUM, comm, &q));
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&r[3], MPI_STATUS_IGNORE));
    CHECK(nb == n && allred == n, "interleaved: Iallreduce %d Allreduce_init %d", nb, allred);
    for (int k = 0; k < NK; k++)
        CHECK_MPI(MPI_Request_free(&r[k]));

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e = MPI_Barrier_init(MPI_COMM_NULL, info, &q);
    CHECK(e == MPI_ERR_COMM, "Barrier_init(MPI_COMM_NULL): expected MPI_ERR_COMM got %d", e);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(gat), free(gatv), free(allg), free(allgv), free(a2a_s), free(a2a_r), free(a2av_r);
    free(a2aw_r), free(rs_s), free(scat_s), free(ones), free(displs), free(bdispls), free(types);
    return finish_ok();
}
