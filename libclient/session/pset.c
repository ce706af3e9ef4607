/* pset.c — the process sets a session knows (session.h), derived from the job's layout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "job.h"
#include "session.h"

enum { PSET_WORLD, PSET_SELF, PSET_NODE, PSET_FIRST_NODE };
#define NODE_PREFIX "tmpi://node/"

/* Whether node holds a rank of the job: a node of the host file without any has no set (a
 * process set of no processes is nothing a program can make a communicator of). */
static int node_used(const struct tmpi_rank_info *in, int node)
{
    for (int r = 0; r < in->size; r++)
        if (in->node_of_rank[r] == node) return 1;
    return 0;
}

/* The index of the k-th node (0-based) that holds ranks of the job, -1 past the last (k < 0:
 * how many there are).  One pass over the ranks. */
static int nth_used_node(const struct tmpi_rank_info *in, int k)
{
    char *used = calloc((size_t)in->nnodes + 1, 1);
    if (!used) return k < 0 ? 0 : -1;
    for (int r = 0; r < in->size; r++)
        if (in->node_of_rank[r] >= 0 && in->node_of_rank[r] < in->nnodes)
            used[in->node_of_rank[r]] = 1;
    int n = 0, at = -1;
    for (int i = 0; i < in->nnodes && at < 0; i++)
        if (used[i] && n++ == k) at = i;
    free(used);
    return k < 0 ? n : at;
}

int tm_pset_count(struct tm_rank *me)
{
    return PSET_FIRST_NODE + nth_used_node(me->info, -1);
}

int tm_pset_name(struct tm_rank *me, int n, char *buf, int len)
{
    if (n < 0 || n >= tm_pset_count(me)) return -EINVAL;
    switch (n) {
    case PSET_WORLD:
        return snprintf(buf, (size_t)len, "mpi://WORLD");
    case PSET_SELF:
        return snprintf(buf, (size_t)len, "mpi://SELF");
    case PSET_NODE:
        return snprintf(buf, (size_t)len, "tmpi://node");
    default:
        return snprintf(buf, (size_t)len, NODE_PREFIX "%d",
                        nth_used_node(me->info, n - PSET_FIRST_NODE));
    }
}

/* The node index a tmpi://node/<i> name gives, -1 if it is no such name of this job. */
static int node_of_name(struct tm_rank *me, const char *name)
{
    size_t np = strlen(NODE_PREFIX);
    if (strncasecmp(name, NODE_PREFIX, np) != 0) return -1;
    const char *d = name + np;
    if (*d < '0' || *d > '9' || (d[0] == '0' && d[1])) return -1; /* digits, no leading 0 */
    char *end;
    long v = strtol(d, &end, 10);
    if (*end || v >= me->info->nnodes || !node_used(me->info, (int)v)) return -1;
    return (int)v;
}

int tm_pset_members(struct tm_rank *me, const char *name, int32_t **ret, int *ret_n)
{
    const struct tmpi_rank_info *in = me->info;
    int node = -2; /* -2: every rank; -3: only me */
    if (!strcasecmp(name, "mpi://WORLD"))
        node = -2;
    else if (!strcasecmp(name, "mpi://SELF"))
        node = -3;
    else if (!strcasecmp(name, "tmpi://node"))
        node = in->node;
    else if ((node = node_of_name(me, name)) < 0)
        return -ENOENT;
    int32_t *v = malloc(sizeof *v * (size_t)in->size);
    if (!v) return -ENOMEM;
    int n = 0;
    if (node == -3) v[n++] = me->rank;
    for (int r = 0; node != -3 && r < in->size; r++)
        if (node == -2 || in->node_of_rank[r] == node) v[n++] = r;
    *ret = v;
    *ret_n = n;
    return 0;
}
