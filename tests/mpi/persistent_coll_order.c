/* persistent_coll_order.c — persistent collectives are matched in the order of their *_init
 * calls, not of MPI_Start (MPI 4.0 §6.13): members start the same requests in different orders
 * (each rank its own permutation, new every round, by MPI_Start one at a time and by
 * MPI_Startall of a permuted array), with a non-blocking collective issued among the starts at
 * a different place on each member (those keep the order of their calls), then wait for all
 * of them and check every result.  Run on MPI_COMM_WORLD and on a duplicate of it, then on an
 * inter-communicator between the even and the odd ranks (Bcast, Barrier, Allreduce), and with
 * persistent neighbourhood collectives on a periodic ring. */
#include <string.h>

#include "check.h"

#define ROUNDS 6
#define NP 6

struct pset {
    MPI_Request r[NP];
    int v, bc, allred, red, scan;
    int *allg;
};

static void init_set(struct pset *s, MPI_Comm comm, int n)
{
    s->allg = calloc((size_t)n, sizeof(int));
    CHECK(s->allg != NULL);
    MPI_Info info = MPI_INFO_NULL;
    CHECK_MPI(MPI_Bcast_init(&s->bc, 1, MPI_INT, 0, comm, info, &s->r[0]));
    CHECK_MPI(MPI_Barrier_init(comm, info, &s->r[1]));
    CHECK_MPI(MPI_Allreduce_init(&s->v, &s->allred, 1, MPI_INT, MPI_SUM, comm, info, &s->r[2]));
    CHECK_MPI(MPI_Allgather_init(&s->v, 1, MPI_INT, s->allg, 1, MPI_INT, comm, info, &s->r[3]));
    CHECK_MPI(MPI_Reduce_init(&s->v, &s->red, 1, MPI_INT, MPI_MAX, n - 1, comm, info, &s->r[4]));
    CHECK_MPI(MPI_Scan_init(&s->v, &s->scan, 1, MPI_INT, MPI_SUM, comm, info, &s->r[5]));
}

/* The order member rank starts the requests in at round: a rotation, reversed on odd ranks. */
static void order_of(int rank, int round, int *ord)
{
    for (int i = 0; i < NP; i++)
        ord[i] = (i + rank + round) % NP;
    if (rank % 2)
        for (int i = 0; i < NP / 2; i++) {
            int t = ord[i];
            ord[i] = ord[NP - 1 - i];
            ord[NP - 1 - i] = t;
        }
}

static void run_rounds(MPI_Comm comm, const char *what)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    struct pset s;
    init_set(&s, comm, n);
    for (int round = 0; round < ROUNDS; round++) {
        s.v = rank * 10 + round;
        s.bc = rank == 0 ? 500 + round : -1;
        s.allred = s.red = s.scan = -1;
        for (int i = 0; i < n; i++)
            s.allg[i] = -1;
        int ord[NP], nbv = rank + round, nbsum = -1;
        MPI_Request nb;
        order_of(rank, round, ord);
        int nb_at = (rank + round) % (NP + 1); /* where the non-blocking call goes */
        if (round % 2 == 0) {
            for (int i = 0; i <= NP; i++) {
                if (i == nb_at)
                    CHECK_MPI(MPI_Iallreduce(&nbv, &nbsum, 1, MPI_INT, MPI_SUM, comm, &nb));
                if (i < NP) CHECK_MPI(MPI_Start(&s.r[ord[i]]));
            }
        } else {
            MPI_Request perm[NP];
            for (int i = 0; i < NP; i++)
                perm[i] = s.r[ord[i]];
            CHECK_MPI(MPI_Iallreduce(&nbv, &nbsum, 1, MPI_INT, MPI_SUM, comm, &nb));
            CHECK_MPI(MPI_Startall(NP, perm));
        }
        CHECK_MPI(MPI_Waitall(NP, s.r, MPI_STATUSES_IGNORE));
        CHECK_MPI(MPI_Wait(&nb, MPI_STATUS_IGNORE));
        int sum = 0;
        for (int k = 0; k < n; k++)
            sum += k * 10 + round;
        CHECK(s.bc == 500 + round, "%s round %d rank %d: Bcast gave %d", what, round, rank, s.bc);
        CHECK(s.allred == sum, "%s round %d rank %d: Allreduce gave %d, want %d", what, round, rank,
              s.allred, sum);
        for (int k = 0; k < n; k++)
            CHECK(s.allg[k] == k * 10 + round, "%s round %d rank %d: Allgather[%d] = %d", what,
                  round, rank, k, s.allg[k]);
        if (rank == n - 1)
            CHECK(s.red == (n - 1) * 10 + round, "%s round %d: Reduce gave %d", what, round, s.red);
        int part = 0;
        for (int k = 0; k <= rank; k++)
            part += k * 10 + round;
        CHECK(s.scan == part, "%s round %d rank %d: Scan gave %d, want %d", what, round, rank,
              s.scan, part);
        int nbwant = 0;
        for (int k = 0; k < n; k++)
            nbwant += k + round;
        CHECK(nbsum == nbwant, "%s round %d rank %d: Iallreduce gave %d, want %d", what, round,
              rank, nbsum, nbwant);
    }
    for (int i = 0; i < NP; i++)
        CHECK_MPI(MPI_Request_free(&s.r[i]));
    free(s.allg);
}

/* Group 0 (even world ranks) and group 1 (odd) of an inter-communicator; group 0's rank 0
 * is the Bcast root. */
static void run_inter(void)
{
    int wrank, wn;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wn);
    if (wn < 2) return;
    int color = wrank % 2;
    MPI_Comm half, inter;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &half));
    CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, !color, 7, &inter));
    int rank, rn;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rn);
    int bc, v, sum;
    MPI_Request r[3];
    int root = color ? 0 : rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    CHECK_MPI(MPI_Bcast_init(&bc, 1, MPI_INT, root, inter, MPI_INFO_NULL, &r[0]));
    CHECK_MPI(MPI_Barrier_init(inter, MPI_INFO_NULL, &r[1]));
    CHECK_MPI(MPI_Allreduce_init(&v, &sum, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &r[2]));
    for (int round = 0; round < ROUNDS; round++) {
        bc = root == MPI_ROOT ? 300 + round : -1;
        v = wrank + round;
        sum = -1;
        for (int i = 0; i < 3; i++)
            CHECK_MPI(MPI_Start(&r[(i + wrank + round) % 3]));
        CHECK_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        if (color) CHECK(bc == 300 + round, "inter round %d: Bcast gave %d", round, bc);
        int want = 0; /* the other group's values */
        for (int k = 0; k < wn; k++)
            if (k % 2 != color) want += k + round;
        CHECK(sum == want, "inter round %d rank %d: Allreduce gave %d, want %d", round, wrank, sum,
              want);
    }
    for (int i = 0; i < 3; i++)
        CHECK_MPI(MPI_Request_free(&r[i]));
    CHECK_MPI(MPI_Comm_free(&inter));
    CHECK_MPI(MPI_Comm_free(&half));
}

/* MPI_Neighbor_allgather_init and MPI_Neighbor_alltoall_init on a periodic ring, started in
 * the order of the rank's parity. */
static void run_neighbor(void)
{
    int wn, periodic = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &wn);
    MPI_Comm ring;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &wn, &periodic, 0, &ring));
    int rank, left, right;
    MPI_Comm_rank(ring, &rank);
    CHECK_MPI(MPI_Cart_shift(ring, 0, 1, &left, &right));
    int v, g[2], s2[2], a2[2];
    MPI_Request r[2];
    CHECK_MPI(
        MPI_Neighbor_allgather_init(&v, 1, MPI_INT, g, 1, MPI_INT, ring, MPI_INFO_NULL, &r[0]));
    CHECK_MPI(
        MPI_Neighbor_alltoall_init(s2, 1, MPI_INT, a2, 1, MPI_INT, ring, MPI_INFO_NULL, &r[1]));
    for (int round = 0; round < ROUNDS; round++) {
        v = rank + 100 * round;
        s2[0] = -(rank + 100 * round) - 1; /* to the left neighbour */
        s2[1] = rank + 100 * round + 1;    /* to the right one */
        g[0] = g[1] = a2[0] = a2[1] = -7;
        for (int i = 0; i < 2; i++)
            CHECK_MPI(MPI_Start(&r[(i + rank + round) % 2]));
        CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(g[0] == left + 100 * round && g[1] == right + 100 * round,
              "neighbour round %d rank %d: allgather gave %d %d", round, rank, g[0], g[1]);
        CHECK(a2[0] == left + 100 * round + 1 && a2[1] == -(right + 100 * round) - 1,
              "neighbour round %d rank %d: alltoall gave %d %d", round, rank, a2[0], a2[1]);
    }
    for (int i = 0; i < 2; i++)
        CHECK_MPI(MPI_Request_free(&r[i]));
    CHECK_MPI(MPI_Comm_free(&ring));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    run_rounds(MPI_COMM_WORLD, "world");
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    run_rounds(dup, "dup");
    CHECK_MPI(MPI_Comm_free(&dup));
    run_inter();
    run_neighbor();
    return finish_ok();
}
