/* halo_cart.c — an application-style 2-D halo exchange: a periodic Cartesian communicator from
 * MPI_Dims_create, rows as contiguous types and columns as strided vectors, exchanged with
 * MPI_Neighbor_alltoallw (byte displacements into the one local array), then with
 * MPI_Ineighbor_alltoallw and with MPI_Sendrecv along MPI_Cart_shift; the halos are checked
 * against the global field, and a few Jacobi sweeps must give the same grid by all three
 * routes. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NX 12 /* interior rows per rank */
#define NY 10 /* interior columns per rank */
#define W (NY + 2)
#define AT(a, i, j) ((a)[(i)*W + (j)])

static int dims[2], coords[2];

/* The initial field at global cell (x, y), periodic. */
static double field(int x, int y)
{
    int gx = dims[0] * NX, gy = dims[1] * NY;
    x = (x % gx + gx) % gx;
    y = (y % gy + gy) % gy;
    return x * 1000.0 + y;
}

static void fill(double *a)
{
    memset(a, 0, sizeof(double) * (NX + 2) * W);
    for (int i = 1; i <= NX; i++)
        for (int j = 1; j <= NY; j++)
            AT(a, i, j) = field(coords[0] * NX + i - 1, coords[1] * NY + j - 1);
}

struct plan {
    MPI_Datatype row, col;
    int counts[4];
    MPI_Aint sd[4], rd[4];
    MPI_Datatype types[4];
};

/* Neighbour order of a Cartesian communicator: dim 0 -, dim 0 +, dim 1 -, dim 1 +. */
static void make_plan(struct plan *p)
{
    CHECK_MPI(MPI_Type_contiguous(NY, MPI_DOUBLE, &p->row));
    CHECK_MPI(MPI_Type_vector(NX, 1, W, MPI_DOUBLE, &p->col));
    CHECK_MPI(MPI_Type_commit(&p->row));
    CHECK_MPI(MPI_Type_commit(&p->col));
    const MPI_Aint d = sizeof(double);
    MPI_Aint sd[4] = {(1 * W + 1) * d, (NX * W + 1) * d, (1 * W + 1) * d, (1 * W + NY) * d};
    MPI_Aint rd[4] = {(0 * W + 1) * d, ((NX + 1) * W + 1) * d, (1 * W + 0) * d,
                      (1 * W + NY + 1) * d};
    for (int k = 0; k < 4; k++) {
        p->counts[k] = 1;
        p->sd[k] = sd[k];
        p->rd[k] = rd[k];
        p->types[k] = k < 2 ? p->row : p->col;
    }
}

/* Neighbourhood route: MPI_Neighbor_alltoallw reads and writes the same array (send blocks are
 * interior cells, receive blocks the halo, so they do not overlap). */
static void exchange_nbr(MPI_Comm cart, struct plan *p, double *a, int nonblocking)
{
    /* Alltoallw takes separate send and receive buffers; the interior is copied so the
     * receive into the halo never aliases what is being sent. */
    double *s = malloc(sizeof(double) * (NX + 2) * W);
    CHECK(s != NULL, "out of memory");
    memcpy(s, a, sizeof(double) * (NX + 2) * W);
    if (nonblocking) {
        MPI_Request r;
        CHECK_MPI(MPI_Ineighbor_alltoallw(s, p->counts, p->sd, p->types, a, p->counts, p->rd,
                                          p->types, cart, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Neighbor_alltoallw(s, p->counts, p->sd, p->types, a, p->counts, p->rd,
                                         p->types, cart));
    }
    free(s);
}

/* Point-to-point route: what goes towards - comes from +, per dimension. */
static void exchange_p2p(MPI_Comm cart, struct plan *p, double *a)
{
    char *b = (char *)a;
    for (int dim = 0; dim < 2; dim++) {
        int lo, hi;
        CHECK_MPI(MPI_Cart_shift(cart, dim, 1, &lo, &hi));
        MPI_Datatype t = dim == 0 ? p->row : p->col;
        int k = 2 * dim;
        /* my - block to lo, into my + halo from hi; then the reverse */
        CHECK_MPI(MPI_Sendrecv(b + p->sd[k], 1, t, lo, dim, b + p->rd[k + 1], 1, t, hi, dim, cart,
                               MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Sendrecv(b + p->sd[k + 1], 1, t, hi, 10 + dim, b + p->rd[k], 1, t, lo,
                               10 + dim, cart, MPI_STATUS_IGNORE));
    }
}

static void check_halo(const double *a, const char *how)
{
    int x0 = coords[0] * NX, y0 = coords[1] * NY;
    for (int j = 1; j <= NY; j++) {
        double up = field(x0 - 1, y0 + j - 1), down = field(x0 + NX, y0 + j - 1);
        CHECK(AT(a, 0, j) == up && AT(a, NX + 1, j) == down,
              "%s: column %d: halo rows %g %g, expected %g %g", how, j, AT(a, 0, j),
              AT(a, NX + 1, j), up, down);
    }
    for (int i = 1; i <= NX; i++) {
        double left = field(x0 + i - 1, y0 - 1), right = field(x0 + i - 1, y0 + NY);
        CHECK(AT(a, i, 0) == left && AT(a, i, NY + 1) == right,
              "%s: row %d: halo columns %g %g, expected %g %g", how, i, AT(a, i, 0),
              AT(a, i, NY + 1), left, right);
    }
}

static void sweep(double *a)
{
    double n[NX + 2][W];
    for (int i = 1; i <= NX; i++)
        for (int j = 1; j <= NY; j++)
            n[i][j] =
                0.25 * (AT(a, i - 1, j) + AT(a, i + 1, j) + AT(a, i, j - 1) + AT(a, i, j + 1));
    for (int i = 1; i <= NX; i++)
        for (int j = 1; j <= NY; j++)
            AT(a, i, j) = n[i][j];
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Dims_create(size, 2, dims));
    int periods[2] = {1, 1};
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart));
    CHECK_MPI(MPI_Comm_rank(cart, &rank));
    CHECK_MPI(MPI_Cart_coords(cart, rank, 2, coords));
    struct plan p;
    make_plan(&p);

    double *a = malloc(sizeof(double) * (NX + 2) * W), *b = malloc(sizeof *b * (NX + 2) * W),
           *c = malloc(sizeof *c * (NX + 2) * W);
    CHECK(a && b && c, "out of memory");
    fill(a);
    exchange_nbr(cart, &p, a, 0);
    check_halo(a, "Neighbor_alltoallw");
    fill(b);
    exchange_nbr(cart, &p, b, 1);
    check_halo(b, "Ineighbor_alltoallw");
    fill(c);
    exchange_p2p(cart, &p, c);
    check_halo(c, "Sendrecv along Cart_shift");

    /* Jacobi sweeps: three routes, one answer, bit for bit. */
    for (int it = 0; it < 5; it++) {
        sweep(a);
        sweep(b);
        sweep(c);
        exchange_nbr(cart, &p, a, 0);
        exchange_nbr(cart, &p, b, 1);
        exchange_p2p(cart, &p, c);
    }
    CHECK(!memcmp(a, c, sizeof(double) * (NX + 2) * W) &&
              !memcmp(b, c, sizeof(double) * (NX + 2) * W),
          "the routes disagree after the sweeps");
    /* The field's mean is invariant under periodic Jacobi sweeps. */
    double local = 0, total = 0;
    for (int i = 1; i <= NX; i++)
        for (int j = 1; j <= NY; j++)
            local += AT(a, i, j);
    CHECK_MPI(MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, cart));
    double want = 0;
    for (int x = 0; x < dims[0] * NX; x++)
        for (int y = 0; y < dims[1] * NY; y++)
            want += field(x, y);
    CHECK(total > want * (1 - 1e-9) && total < want * (1 + 1e-9), "sum %.17g, expected %.17g",
          total, want);
    free(a);
    free(b);
    free(c);
    CHECK_MPI(MPI_Type_free(&p.row));
    CHECK_MPI(MPI_Type_free(&p.col));
    CHECK_MPI(MPI_Comm_free(&cart));
    return finish_ok();
}
