/* topo_cart.c — Cartesian topologies (MPI 3.1 §7.5.1-7.5.5, 7.5.7-7.5.8): creation,
 * Dims_create, the queries, shifts and sub-grids.  Ranks are laid out row-major (the last
 * dimension varies fastest), as the standard requires. */
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "job.h"
#include "topo.h"

void tm_cart_coords(const struct tm_topo *t, int r, int *coords)
{
    for (int d = t->cart.ndims - 1; d >= 0; d--) {
        coords[d] = r % t->cart.dims[d];
        r /= t->cart.dims[d];
    }
}

int tm_cart_rank(const struct tm_topo *t, const int *coords)
{
    int r = 0;
    for (int d = 0; d < t->cart.ndims; d++)
        r = r * t->cart.dims[d] + coords[d];
    return r;
}

void tm_cart_shift(const struct tm_topo *t, int rank, int dim, int disp, int *src, int *dst)
{
    int c[TM_TOPO_MAX_DIMS];
    tm_cart_coords(t, rank, c);
    int n = t->cart.dims[dim], here = c[dim];
    for (int k = 0; k < 2; k++) {
        long v = (long)here + (k ? disp : -(long)disp);
        int *out = k ? dst : src;
        if (t->cart.periods[dim]) {
            v %= n;
            if (v < 0) v += n;
        } else if (v < 0 || v >= n) {
            *out = MPI_PROC_NULL;
            continue;
        }
        c[dim] = (int)v;
        *out = tm_cart_rank(t, c);
    }
}

/* A Cartesian topology object for dims/periods (periods normalised to 0/1). */
static struct tm_topo *cart_new(int ndims, const int *dims, const int *periods)
{
    struct tm_topo *t = tm_topo_new(MPI_CART, 1);
    if (!t) return NULL;
    size_t sz = sizeof(int) * (size_t)(ndims > 0 ? ndims : 1);
    t->cart.ndims = ndims;
    t->cart.dims = malloc(sz);
    t->cart.periods = malloc(sz);
    if (!t->cart.dims || !t->cart.periods) {
        tm_topo_release(t);
        return NULL;
    }
    int n = 1;
    for (int d = 0; d < ndims; d++) {
        t->cart.dims[d] = dims[d];
        t->cart.periods[d] = periods[d] != 0;
        n *= dims[d];
    }
    t->n = n;
    return t;
}

/* Checks ndims/dims/periods of Cart_create and Cart_map against a communicator of size
 * members; *ret_n: the grid's size. */
static int check_grid(struct tm_rank *me, MPI_Comm comm, const char *fn, int size, int ndims,
                      const int *dims, const int *periods, int *ret_n)
{
    if (ndims < 0 || ndims > TM_TOPO_MAX_DIMS)
        return tm_err(me, comm, MPI_ERR_DIMS, fn, "invalid ndims %d (0 to %d)", ndims,
                      TM_TOPO_MAX_DIMS);
    if (ndims > 0 && (!dims || !periods))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "dims or periods is NULL");
    long n = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return tm_err(me, comm, MPI_ERR_DIMS, fn, "dims[%d] = %d is not positive", d, dims[d]);
        n *= dims[d];
        if (n > size)
            return tm_err(me, comm, MPI_ERR_DIMS, fn,
                          "the grid has more points than the communicator's %d members", size);
    }
    *ret_n = (int)n;
    return MPI_SUCCESS;
}

TM_API int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                            int reorder, MPI_Comm *comm_cart)
{
    const char *fn = "MPI_Cart_create";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm_old);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm_old);
    if (cr->c->inter)
        return tm_err(me, comm_old, MPI_ERR_COMM, fn, "communicator %d is an inter-communicator",
                      comm_old);
    if (!comm_cart) return tm_err(me, comm_old, MPI_ERR_ARG, fn, "comm_cart is NULL");
    int n = 0;
    int err = check_grid(me, comm_old, fn, cr->c->size, ndims, dims, periods, &n);
    if (err) return err;
    int *newrank = malloc(sizeof *newrank * (size_t)cr->c->size);
    struct tm_topo *t = newrank ? cart_new(ndims, dims, periods) : NULL;
    if (!t || tm_map_cart(me, cr->c, ndims, dims, periods, reorder, newrank) < 0) {
        free(newrank);
        tm_topo_release(t);
        return tm_err(me, comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int mine = newrank[cr->rank];
    free(newrank);
    return tm_topo_make_comm(me, comm_old, fn, mine, t, comm_cart);
}
TM_ALIAS(Cart_create)

TM_API int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                         int *newrank)
{
    const char *fn = "MPI_Cart_map";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (cr->c->inter)
        return tm_err(me, comm, MPI_ERR_COMM, fn, "communicator %d is an inter-communicator", comm);
    if (!newrank) return tm_err(me, comm, MPI_ERR_ARG, fn, "newrank is NULL");
    int n = 0;
    int err = check_grid(me, comm, fn, cr->c->size, ndims, dims, periods, &n);
    if (err) return err;
    int *map = malloc(sizeof *map * (size_t)cr->c->size);
    if (!map || tm_map_cart(me, cr->c, ndims, dims, periods, 1, map) < 0) {
        free(map);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *newrank = map[cr->rank];
    free(map);
    return MPI_SUCCESS;
}
TM_ALIAS(Cart_map)

TM_API int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    TM_TOPO_ENTRY("MPI_Cartdim_get", comm, MPI_CART);
    if (!ndims) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Cartdim_get", "ndims is NULL");
    *ndims = t->cart.ndims;
    return MPI_SUCCESS;
}
TM_ALIAS(Cartdim_get)

TM_API int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    const char *fn = "MPI_Cart_get";
    TM_TOPO_ENTRY(fn, comm, MPI_CART);
    int nd = t->cart.ndims;
    if (maxdims < nd)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "maxdims %d is less than the %d dimensions",
                      maxdims, nd);
    if (nd > 0 && (!dims || !periods || !coords))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "dims, periods or coords is NULL");
    if (nd == 0) return MPI_SUCCESS;
    memcpy(dims, t->cart.dims, sizeof *dims * (size_t)nd);
    memcpy(periods, t->cart.periods, sizeof *periods * (size_t)nd);
    tm_cart_coords(t, cr->rank, coords);
    return MPI_SUCCESS;
}
TM_ALIAS(Cart_get)

TM_API int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    const char *fn = "MPI_Cart_rank";
    TM_TOPO_ENTRY(fn, comm, MPI_CART);
    int nd = t->cart.ndims;
    if (!rank || (nd > 0 && !coords))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "coords or rank is NULL");
    int c[TM_TOPO_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int n = t->cart.dims[d], v = coords[d];
        if (t->cart.periods[d]) {
            v %= n;
            if (v < 0) v += n;
        } else if (v < 0 || v >= n) {
            return tm_err(me, comm, MPI_ERR_ARG, fn,
                          "coords[%d] = %d is outside the non-periodic dimension of size %d", d, v,
                          n);
        }
        c[d] = v;
    }
    *rank = tm_cart_rank(t, c);
    return MPI_SUCCESS;
}
TM_ALIAS(Cart_rank)

TM_API int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    const char *fn = "MPI_Cart_coords";
    TM_TOPO_ENTRY(fn, comm, MPI_CART);
    int nd = t->cart.ndims;
    if (rank < 0 || rank >= cr->c->size)
        return tm_err(me, comm, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    if (maxdims < nd)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "maxdims %d is less than the %d dimensions",
                      maxdims, nd);
    if (nd > 0 && !coords) return tm_err(me, comm, MPI_ERR_ARG, fn, "coords is NULL");
    if (nd > 0) tm_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}
TM_ALIAS(Cart_coords)

TM_API int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    const char *fn = "MPI_Cart_shift";
    TM_TOPO_ENTRY(fn, comm, MPI_CART);
    if (!rank_source || !rank_dest)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "rank_source or rank_dest is NULL");
    if (direction < 0 || direction >= t->cart.ndims)
        return tm_err(me, comm, MPI_ERR_DIMS, fn, "invalid direction %d (%d dimensions)", direction,
                      t->cart.ndims);
    tm_cart_shift(t, cr->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}
TM_ALIAS(Cart_shift)

/* Each sub-grid is the set of members that agree on the dropped coordinates: they are the
 * colour, the kept coordinates give the rank (row-major over the kept dimensions, so the
 * sub-grid keeps the parent's order). */
TM_API int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    const char *fn = "MPI_Cart_sub";
    TM_TOPO_ENTRY(fn, comm, MPI_CART);
    int nd = t->cart.ndims;
    if (!newcomm || (nd > 0 && !remain_dims))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "remain_dims or newcomm is NULL");
    int c[TM_TOPO_MAX_DIMS], dims[TM_TOPO_MAX_DIMS], periods[TM_TOPO_MAX_DIMS];
    tm_cart_coords(t, cr->rank, c);
    int color = 0, key = 0, k = 0;
    for (int d = 0; d < nd; d++) {
        if (remain_dims[d]) {
            key = key * t->cart.dims[d] + c[d];
            dims[k] = t->cart.dims[d];
            periods[k++] = t->cart.periods[d];
        } else {
            color = color * t->cart.dims[d] + c[d];
        }
    }
    struct tm_topo *st = cart_new(k, dims, periods);
    if (!st) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    /* Split by colour with key as the new rank (tm_topo_make_comm splits one colour). */
    MPI_Comm h = MPI_COMM_NULL;
    int err = PMPI_Comm_split(comm, color, key, &h);
    if (err != MPI_SUCCESS) {
        tm_topo_release(st);
        return err;
    }
    struct tm_commref *ncr = tm_comm_get_user(&me->comms, h);
    if (!ncr || ncr->rank != key || ncr->c->size != st->n) {
        tm_topo_release(st);
        if (ncr) PMPI_Comm_free(&h);
        return tm_err(me, comm, MPI_ERR_INTERN, fn, "sub-grid communicator does not match");
    }
    tm_topo_install(ncr->c, st);
    *newcomm = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Cart_sub)

/* ---- MPI_Dims_create ---- */

/* Search state: the best split of the free dimensions found so far. */
struct dims_search {
    int k; /* free dimensions */
    int cur[TM_TOPO_MAX_DIMS], best[TM_TOPO_MAX_DIMS];
    long best_spread; /* largest minus smallest of best; -1: none yet */
    long best_sum;    /* sum of best's parts */
    long *div;        /* the divisors of the number to split, descending */
    int ndiv;
};

/* Fills cur[depth..k-1] with a non-increasing factorisation of rem whose parts are at most
 * prev, keeping the one whose largest and smallest parts are closest and, among those, the one
 * with the smallest sum: the parts between are as close as they can be too (5616 in 4
 * dimensions is 13 x 9 x 8 x 6, not 13 x 12 x 6 x 6; what MPICH and its test suite give). */
static void dims_rec(struct dims_search *s, long rem, int depth, long prev)
{
    int left = s->k - depth;
    if (left == 1) {
        if (rem > prev) return;
        s->cur[depth] = (int)rem;
        long spread = s->cur[0] - rem, sum = 0;
        for (int i = 0; i < s->k; i++)
            sum += s->cur[i];
        if (s->best_spread < 0 || spread < s->best_spread ||
            (spread == s->best_spread && sum < s->best_sum)) {
            s->best_spread = spread;
            s->best_sum = sum;
            memcpy(s->best, s->cur, sizeof s->cur[0] * (size_t)s->k);
        }
        return;
    }
    for (int i = 0; i < s->ndiv; i++) {
        long d = s->div[i];
        if (d > prev || d > rem || rem % d) continue;
        /* d is the largest of the remaining parts: d^left must reach rem. */
        long p = 1;
        for (int j = 0; j < left && p < rem; j++)
            p *= d;
        if (p < rem) break; /* smaller d cannot either */
        /* The smallest part will be at most d: worse than the best, and smaller d are worse
         * still (an equal spread may still have a smaller sum). */
        if (depth && s->best_spread >= 0 && s->cur[0] - d > s->best_spread) break;
        s->cur[depth] = (int)d;
        dims_rec(s, rem / d, depth + 1, d);
    }
}

static int cmp_desc(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Splits rem into k parts as equal as possible, largest first, into out. */
static int dims_split(long rem, int k, int *out)
{
    struct dims_search s = {.k = k, .best_spread = -1};
    int cap = 2;
    for (long i = 1; i * i <= rem; i++)
        if (rem % i == 0) cap += 2;
    s.div = malloc(sizeof *s.div * (size_t)cap);
    if (!s.div) return -1;
    for (long i = 1; i * i <= rem; i++) {
        if (rem % i) continue;
        s.div[s.ndiv++] = i;
        if (i != rem / i) s.div[s.ndiv++] = rem / i;
    }
    qsort(s.div, (size_t)s.ndiv, sizeof *s.div, cmp_desc);
    dims_rec(&s, rem, 0, rem);
    free(s.div);
    memcpy(out, s.best, sizeof *out * (size_t)k);
    return 0;
}

TM_API int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    const char *fn = "MPI_Dims_create";
    if (ndims < 0 || ndims > TM_TOPO_MAX_DIMS)
        return tm_err_noco(MPI_ERR_DIMS, fn, "invalid ndims %d (0 to %d)", ndims, TM_TOPO_MAX_DIMS);
    if (nnodes <= 0) return tm_err_noco(MPI_ERR_ARG, fn, "invalid nnodes %d", nnodes);
    if (ndims > 0 && !dims) return tm_err_noco(MPI_ERR_ARG, fn, "dims is NULL");
    long fixed = 1;
    int k = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0)
            return tm_err_noco(MPI_ERR_DIMS, fn, "dims[%d] = %d is negative", d, dims[d]);
        if (dims[d] > 0) {
            fixed *= dims[d];
            if (fixed > nnodes) break;
        } else {
            k++;
        }
    }
    if (fixed > nnodes || nnodes % fixed)
        return tm_err_noco(MPI_ERR_DIMS, fn,
                           "%d nodes cannot be divided among the fixed dimensions (product %ld)",
                           nnodes, fixed);
    long rem = nnodes / fixed;
    if (k == 0) {
        if (rem != 1)
            return tm_err_noco(MPI_ERR_DIMS, fn,
                               "the fixed dimensions (product %ld) do not make %d nodes", fixed,
                               nnodes);
        return MPI_SUCCESS;
    }
    int part[TM_TOPO_MAX_DIMS];
    if (dims_split(rem, k, part) < 0) return tm_err_noco(MPI_ERR_NO_MEM, fn, "out of memory");
    for (int d = 0, i = 0; d < ndims; d++)
        if (dims[d] == 0) dims[d] = part[i++];
    return MPI_SUCCESS;
}
TM_ALIAS(Dims_create)
