/* split_carrier.c — MPI_Comm_split_type HW_GUIDED / HW_UNGUIDED for ranks on carriers
 * (user-level switching).  Argument: the carriers the job runs on (K), "null" when the ranks
 * are threads of their own that no binding restricts (they must get MPI_COMM_NULL).
 *
 * On K carriers every rank gets a Core and a PU communicator; those partition the world into
 * at most K groups (the ranks one carrier runs), and a rank's Core and PU groups are the
 * same.  HW_UNGUIDED gives a strict subset.  Prints "split_carrier ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("rank %d: ", rank);                                                             \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

static MPI_Comm guided(const char *level)
{
    MPI_Info in;
    MPI_Comm c;
    MPI_Info_create(&in);
    MPI_Info_set(in, "mpi_hw_resource_type", level);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, in, &c);
    MPI_Info_free(&in);
    return c;
}

/* The lowest world rank of c's members: names the group. */
static int leader(MPI_Comm c)
{
    int rank, low;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&rank, &low, 1, MPI_INT, MPI_MIN, c);
    return low;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int null = argc > 1 && !strcmp(argv[1], "null");
    int k = argc > 1 && !null ? atoi(argv[1]) : 0;
    MPI_Comm core = guided("Core"), pu = guided("PU");
    if (null) {
        CHECK(core == MPI_COMM_NULL && pu == MPI_COMM_NULL,
              "an unbound rank thread got a Core or PU communicator");
    } else {
        CHECK(core != MPI_COMM_NULL && pu != MPI_COMM_NULL, "a carried rank got MPI_COMM_NULL");
    }
    if (core != MPI_COMM_NULL && pu != MPI_COMM_NULL) {
        int lc = leader(core), lp = leader(pu), n, groups = 0, sum = 0;
        CHECK(lc == lp, "Core group of rank %d, PU group of rank %d", lc, lp);
        MPI_Comm_size(core, &n);
        int first = lc == rank;
        MPI_Allreduce(&first, &groups, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        int mine = first ? n : 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(groups >= 1 && groups <= k, "%d Core groups on %d carriers", groups, k);
        CHECK(sum == size, "the Core groups hold %d of %d ranks", sum, size);
        if (rank == 0) printf("%d Core groups on %d carriers\n", groups, k);
        MPI_Comm u;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &u);
        if (groups > 1) {
            CHECK(u != MPI_COMM_NULL, "HW_UNGUIDED gave MPI_COMM_NULL");
            if (u != MPI_COMM_NULL) {
                MPI_Comm_size(u, &n);
                CHECK(n < size, "HW_UNGUIDED: %d of %d ranks", n, size);
                MPI_Comm_free(&u);
            }
        }
    }
    if (core != MPI_COMM_NULL) MPI_Comm_free(&core);
    if (pu != MPI_COMM_NULL) MPI_Comm_free(&pu);
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("split_carrier ok\n");
    MPI_Finalize();
    return all != 0;
}
