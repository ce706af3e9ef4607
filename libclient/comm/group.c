/* group.c — MPI groups (group.h): queries, set operations, inclusion and exclusion. */
#include "group.h"

#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "errh.h"
#include "job.h"
#include "objs.h"

static const struct tm_group tm_group_empty = {0, NULL, NULL};

const struct tm_group *tm_group_get(struct tm_rank *me, MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY) return &tm_group_empty;
    if (!me->objs) return NULL;
    pthread_mutex_lock(&me->objs->lock);
    const struct tm_group *g = tm_objtab_get(me->objs->groups, TM_GROUP_BASE, h);
    pthread_mutex_unlock(&me->objs->lock);
    return g;
}

MPI_Group tm_group_new(struct tm_rank *me, const int32_t *world, int n)
{
    if (n == 0) return MPI_GROUP_EMPTY;
    struct tm_group *g = malloc(sizeof *g);
    int32_t *v = malloc(sizeof *v * (size_t)n);
    if (!g || !v || !me->objs) {
        free(g);
        free(v);
        return MPI_GROUP_NULL;
    }
    memcpy(v, world, sizeof *v * (size_t)n);
    *g = (struct tm_group){n, v, NULL};
    pthread_mutex_lock(&me->objs->lock);
    int h = tm_objtab_add(&me->objs->groups, TM_GROUP_BASE, g);
    pthread_mutex_unlock(&me->objs->lock);
    if (h < 0) {
        free(v);
        free(g);
        return MPI_GROUP_NULL;
    }
    return h;
}

void tm_group_free_obj(void *p)
{
    struct tm_group *g = p;
    free(g->world);
    free(g);
}

int tm_group_rank_of(const struct tm_group *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w) return i;
    return MPI_UNDEFINED;
}

#define GET_GROUP(fn, var, h)                                                                      \
    const struct tm_group *var = tm_group_get(me, h);                                              \
    if (!var) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_GROUP, fn, "invalid group %d", h);

#define ENTER(fn)                                                                                  \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

/* A new group handle in *out, or the error. */
static int give(struct tm_rank *me, const char *fn, const int32_t *v, int n, MPI_Group *out)
{
    MPI_Group h = tm_group_new(me, v, n);
    if (h == MPI_GROUP_NULL) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    *out = h;
    return MPI_SUCCESS;
}

/* Marks of world ranks, one byte per job rank (a group never has more members). */
static unsigned char *marks(struct tm_rank *me, const struct tm_group *g)
{
    unsigned char *m = calloc((size_t)me->job->size, 1);
    if (m)
        for (int i = 0; i < g->size; i++)
            m[g->world[i]] = 1;
    return m;
}

TM_API int PMPI_Group_size(MPI_Group group, int *size)
{
    ENTER("MPI_Group_size");
    GET_GROUP("MPI_Group_size", g, group);
    if (!size) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
    *size = g->size;
    return MPI_SUCCESS;
}
TM_ALIAS(Group_size)

TM_API int PMPI_Group_rank(MPI_Group group, int *rank)
{
    ENTER("MPI_Group_rank");
    GET_GROUP("MPI_Group_rank", g, group);
    if (!rank) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
    *rank = tm_group_rank_of(g, me->rank);
    return MPI_SUCCESS;
}
TM_ALIAS(Group_rank)

TM_API int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                                      int ranks2[])
{
    const char *fn = "MPI_Group_translate_ranks";
    ENTER(fn);
    GET_GROUP(fn, a, group1);
    GET_GROUP(fn, b, group2);
    if (n < 0) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "invalid n %d", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "ranks array is NULL");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
            return tm_err(me, MPI_COMM_WORLD, MPI_ERR_RANK, fn,
                          "rank %d is not in group1 (size %d)", ranks1[i], a->size);
    /* world rank -> rank in b + 1 (0: not in b): one pass over b, then one look-up each. */
    int *pos = calloc((size_t)me->job->size, sizeof *pos);
    if (!pos) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = b->size - 1; i >= 0; i--)
        pos[b->world[i]] = i + 1;
    for (int i = 0; i < n; i++)
        ranks2[i] = ranks1[i] == MPI_PROC_NULL ? MPI_PROC_NULL
                    : pos[a->world[ranks1[i]]] ? pos[a->world[ranks1[i]]] - 1
                                               : MPI_UNDEFINED;
    free(pos);
    return MPI_SUCCESS;
}
TM_ALIAS(Group_translate_ranks)

TM_API int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    const char *fn = "MPI_Group_compare";
    ENTER(fn);
    GET_GROUP(fn, a, group1);
    GET_GROUP(fn, b, group2);
    if (!result) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "result is NULL");
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int same = 1;
    for (int i = 0; same && i < a->size; i++)
        same = a->world[i] == b->world[i];
    if (same) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    unsigned char *m = marks(me, a);
    if (!m) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    int sim = 1;
    for (int i = 0; sim && i < b->size; i++)
        sim = m[b->world[i]];
    free(m);
    *result = sim ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}
TM_ALIAS(Group_compare)

TM_API int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    ENTER("MPI_Comm_group");
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_group", "invalid communicator %d",
                      comm);
    if (!group) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_group", "group is NULL");
    struct tm_comm *c = cr->c;
    int32_t *v = malloc(sizeof *v * (size_t)c->size);
    if (!v) return tm_err(me, comm, MPI_ERR_NO_MEM, "MPI_Comm_group", "out of memory");
    for (int i = 0; i < c->size; i++)
        v[i] = tm_comm_world_rank(c, i);
    int r = give(me, "MPI_Comm_group", v, c->size, group);
    free(v);
    return r;
}
TM_ALIAS(Comm_group)

TM_API int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    ENTER("MPI_Comm_remote_group");
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_remote_group",
                      "invalid communicator %d", comm);
    if (!cr->c->inter)
        return tm_err(me, comm, MPI_ERR_COMM, "MPI_Comm_remote_group", "not an inter-communicator");
    if (!group) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_remote_group", "group is NULL");
    return give(me, "MPI_Comm_remote_group", cr->c->remote_of, cr->c->remote_size, group);
}
TM_ALIAS(Comm_remote_group)

enum setop { SET_UNION, SET_INTER, SET_DIFF };

static int setop(const char *fn, MPI_Group group1, MPI_Group group2, MPI_Group *newgroup,
                 enum setop op)
{
    ENTER(fn);
    GET_GROUP(fn, a, group1);
    GET_GROUP(fn, b, group2);
    if (!newgroup) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "newgroup is NULL");
    unsigned char *m = marks(me, b);
    int32_t *v = malloc(sizeof *v * ((size_t)a->size + (size_t)b->size + 1));
    if (!m || !v) {
        free(m);
        free(v);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int n = 0;
    /* The result keeps group1's order, then (union) group2's members not in group1. */
    for (int i = 0; i < a->size; i++)
        if (op == SET_UNION || (op == SET_INTER) == (m[a->world[i]] != 0)) v[n++] = a->world[i];
    if (op == SET_UNION) {
        memset(m, 0, (size_t)me->job->size);
        for (int i = 0; i < a->size; i++)
            m[a->world[i]] = 1;
        for (int i = 0; i < b->size; i++)
            if (!m[b->world[i]]) v[n++] = b->world[i];
    }
    int r = give(me, fn, v, n, newgroup);
    free(m);
    free(v);
    return r;
}

TM_API int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return setop("MPI_Group_union", group1, group2, newgroup, SET_UNION);
}
TM_ALIAS(Group_union)

TM_API int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return setop("MPI_Group_intersection", group1, group2, newgroup, SET_INTER);
}
TM_ALIAS(Group_intersection)

TM_API int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return setop("MPI_Group_difference", group1, group2, newgroup, SET_DIFF);
}
TM_ALIAS(Group_difference)

/* Checks ranks[0..n) are valid and distinct ranks of g; sel[r] = 1 + position for each. */
static int pick(struct tm_rank *me, const char *fn, const struct tm_group *g, int n,
                const int *ranks, int *sel)
{
    if (n < 0 || n > g->size)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "invalid n %d (group size %d)", n,
                      g->size);
    if (n > 0 && !ranks) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "ranks is NULL");
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size)
            return tm_err(me, MPI_COMM_WORLD, MPI_ERR_RANK, fn,
                          "rank %d is not in the group "
                          "(size %d)",
                          r, g->size);
        if (sel[r]) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_RANK, fn, "rank %d given twice", r);
        sel[r] = i + 1;
    }
    return MPI_SUCCESS;
}

static int incl_excl(const char *fn, MPI_Group group, int n, const int ranks[], MPI_Group *newgroup,
                     int incl)
{
    ENTER(fn);
    GET_GROUP(fn, g, group);
    if (!newgroup) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "newgroup is NULL");
    int *sel = calloc((size_t)g->size + 1, sizeof *sel);
    int32_t *v = malloc(sizeof *v * ((size_t)g->size + 1));
    if (!sel || !v) {
        free(sel);
        free(v);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int r = pick(me, fn, g, n, ranks, sel), k = 0;
    if (r == MPI_SUCCESS) {
        if (incl)
            for (int i = 0; i < n; i++)
                v[k++] = g->world[ranks[i]];
        else
            for (int i = 0; i < g->size; i++)
                if (!sel[i]) v[k++] = g->world[i];
        r = give(me, fn, v, k, newgroup);
    }
    free(sel);
    free(v);
    return r;
}

TM_API int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_incl", group, n, ranks, newgroup, 1);
}
TM_ALIAS(Group_incl)

TM_API int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_excl", group, n, ranks, newgroup, 0);
}
TM_ALIAS(Group_excl)

/* Expands the n (first, last, stride) triplets into ranks (at most the group's size, since
 * they must be distinct); *ret_k: how many. */
static int expand(struct tm_rank *me, const char *fn, const struct tm_group *g, int n,
                  int ranges[][3], int *out, int *ret_k)
{
    if (n < 0) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "invalid n %d", n);
    if (n > 0 && !ranges) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "ranges is NULL");
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "range %d has stride 0", i);
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return tm_err(me, MPI_COMM_WORLD, MPI_ERR_RANK, fn,
                          "range %d (%d, %d, %d) leaves the group (size %d)", i, first, last,
                          stride, g->size);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                          "range %d (%d, %d, %d) runs the wrong way", i, first, last, stride);
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (k >= g->size)
                return tm_err(me, MPI_COMM_WORLD, MPI_ERR_RANK, fn, "ranges repeat a rank");
            out[k++] = (int)r;
        }
    }
    *ret_k = k;
    return MPI_SUCCESS;
}

static int range_incl_excl(const char *fn, MPI_Group group, int n, int ranges[][3],
                           MPI_Group *newgroup, int incl)
{
    ENTER(fn);
    GET_GROUP(fn, g, group);
    if (!newgroup) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "newgroup is NULL");
    int *ranks = malloc(sizeof *ranks * ((size_t)g->size + 1));
    if (!ranks) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    int k = 0, r = expand(me, fn, g, n, ranges, ranks, &k);
    if (r == MPI_SUCCESS) r = incl_excl(fn, group, k, ranks, newgroup, incl);
    free(ranks);
    return r;
}

TM_API int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl("MPI_Group_range_incl", group, n, ranges, newgroup, 1);
}
TM_ALIAS(Group_range_incl)

TM_API int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl("MPI_Group_range_excl", group, n, ranges, newgroup, 0);
}
TM_ALIAS(Group_range_excl)

TM_API int PMPI_Group_free(MPI_Group *group)
{
    ENTER("MPI_Group_free");
    if (!group) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_free", "group is NULL");
    /* Freeing MPI_GROUP_EMPTY is allowed (MPI 3.1 §6.3.2 advice): the handle becomes null. */
    if (*group == MPI_GROUP_EMPTY) {
        *group = MPI_GROUP_NULL;
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&me->objs->lock);
    struct tm_group *g = tm_objtab_get(me->objs->groups, TM_GROUP_BASE, *group);
    if (g) tm_objtab_del(me->objs->groups, TM_GROUP_BASE, *group);
    pthread_mutex_unlock(&me->objs->lock);
    if (!g)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_GROUP, "MPI_Group_free", "invalid group %d",
                      *group);
    tm_group_free_obj(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Group_free)
