/* comm_create.c — communicators from groups (Comm_create over the parent, Comm_create_group
 * over the group only), dup with info (the non-blocking dups: comm_idup.c), and the kind
 * queries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "cp2p.h"
#include "ctx.h"
#include "errh.h"
#include "group.h"
#include "info.h"
#include "intercomm.h"
#include "job.h"
#include "request.h"

#define ENTER(fn, comm)                                                                            \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);                    \
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);                                    \
    if (TM_UNLIKELY(!cr))                                                                          \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);

/* comm rank of each world rank of c's (local) group, -1 for others: job-size array (ranks of
 * other jobs, net/xjob.h, are found by rank_at). */
static int *rank_index(struct tm_rank *me, const struct tm_comm *c)
{
    int *ix = malloc(sizeof *ix * (size_t)me->job->size);
    if (!ix) return NULL;
    memset(ix, 0xff, sizeof *ix * (size_t)me->job->size);
    for (int i = 0; i < c->size; i++) {
        int w = tm_comm_world_rank(c, i);
        if (w >= 0 && w < me->job->size) ix[w] = i;
    }
    return ix;
}

/* The comm rank of world rank w in c (-1: none), through ix for this job's ranks. */
static int rank_at(struct tm_rank *me, const struct tm_comm *c, const int *ix, int w)
{
    if (w >= 0 && w < me->job->size) return ix[w];
    for (int i = 0; i < c->size; i++)
        if (tm_comm_world_rank(c, i) == w) return i;
    return -1;
}

TM_API int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create";
    ENTER(fn, comm);
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    const struct tm_group *g = tm_group_get(me, group);
    if (!g) return tm_err(me, comm, MPI_ERR_GROUP, fn, "invalid group %d", group);
    int *ix = rank_index(me, cr->c);
    if (!ix) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    int bad = -1;
    for (int i = 0; i < g->size && bad < 0; i++)
        if (rank_at(me, cr->c, ix, g->world[i]) < 0) bad = g->world[i];
    /* Members of one group agree on its color: the parent rank of its first member (groups
     * of different members must be disjoint, MPI 3.1 §6.4.2, so colors differ). */
    int grank = tm_group_rank_of(g, me->rank);
    int color = grank == MPI_UNDEFINED ? MPI_UNDEFINED : rank_at(me, cr->c, ix, g->world[0]);
    free(ix);
    if (bad >= 0)
        return tm_err(me, comm, MPI_ERR_GROUP, fn,
                      "world rank %d of the group is not in the communicator's group", bad);
    if (cr->c->inter) return tm_intercomm_split(me, cr, comm, color, grank, newcomm);
    return tm_comm_split(me, fn, comm, color, grank, newcomm);
}
TM_ALIAS(Comm_create)

struct make_arg {
    int ctx, reuse, n, nlocal;
    const int32_t *world;
};

static struct tm_comm *make_intra(void *p)
{
    struct make_arg *a = p;
    int32_t *map = malloc(sizeof *map * (size_t)a->n);
    if (!map) return NULL;
    memcpy(map, a->world, sizeof *map * (size_t)a->n);
    struct tm_comm *c = tm_comm_new(a->ctx, a->reuse, a->n, map, a->nlocal);
    if (!c)
        free(map);
    else
        tm_comm_mark_xjob(tm_self(), c);
    return c;
}

/* Message of the group's leader to the others: the id, and whether it is a reusable one. */
struct cg_msg {
    int32_t ctx, reuse, err;
};

TM_API int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create_group";
    ENTER(fn, comm);
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (cr->c->inter) return tm_err(me, comm, MPI_ERR_COMM, fn, "an inter-communicator");
    if (tag < 0 || tag > TM_TAG_UB) return tm_err(me, comm, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    const struct tm_group *g = tm_group_get(me, group);
    if (!g) return tm_err(me, comm, MPI_ERR_GROUP, fn, "invalid group %d", group);
    int grank = tm_group_rank_of(g, me->rank);
    if (grank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    struct tm_comm *pc = cr->c;
    int *ix = rank_index(me, pc);
    if (!ix) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    int bad = -1;
    for (int i = 0; i < g->size && bad < 0; i++)
        if (rank_at(me, cr->c, ix, g->world[i]) < 0) bad = g->world[i];
    if (bad >= 0) {
        free(ix);
        return tm_err(me, comm, MPI_ERR_GROUP, fn,
                      "world rank %d of the group is not in the communicator's group", bad);
    }
    /* Only the group's members talk: its first member picks the id and tells the others. */
    struct cg_msg m = {0, 0, 0};
    int err = 0, mctx = TM_CTX_MAKE(pc->ctx);
    if (grank == 0) {
        int ctx = 0, reuse = 0;
        int r = tm_ctx_for(me, g->world, g->size, NULL, 0, 1, &ctx, &reuse);
        m = (struct cg_msg){ctx, reuse, r < 0};
        for (int i = 1; i < g->size && !err; i++)
            err = tm_cp2p_send(me, pc, cr->rank, mctx, rank_at(me, pc, ix, g->world[i]), tag, &m,
                               sizeof m);
    } else {
        err =
            tm_cp2p_recv(me, mctx, rank_at(me, pc, ix, g->world[0]), tag, &m, sizeof m, NULL, NULL);
    }
    free(ix);
    if (err) return tm_err(me, comm, MPI_ERR_OTHER, fn, "the group's members cannot agree");
    if (m.err) return tm_err(me, comm, MPI_ERR_INTERN, fn, "out of context ids");
    struct make_arg a = {m.ctx, m.reuse, g->size, tm_ctx_nlocal(me, g->world, g->size), g->world};
    struct tm_comm *nc = tm_ctx_meet(me->job, m.ctx, g->world[0], a.nlocal, make_intra, &a);
    if (!nc) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    MPI_Comm h = tm_commtab_add(me, nc, grank, cr->eh);
    if (h == MPI_COMM_NULL) {
        tm_comm_release(nc);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *newcomm = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_create_group)

/* MPI 4.0 §7.4.2 without sessions: the group is a group of MPI_COMM_WORLD's processes, so this
 * is MPI_Comm_create_group over MPI_COMM_WORLD (collective over the group only) with the tag
 * the string gives, then the error handler and hints asked for. */
TM_API int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                       MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create_from_group";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (tm_errh_check(me, errhandler, TM_EH_COMM))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ERRHANDLER, fn,
                      "%d is not an error handler for communicators", errhandler);
#define EH_ERR(code, ...)                                                                          \
    tm_err_obj(me, TM_EH_COMM, MPI_COMM_NULL, errhandler, code, fn, __VA_ARGS__)
    /* From here the call's errors go to errhandler (MPI 4.1 §7.4.2). */
    const struct tm_group *g = tm_group_get(me, group);
    if (!g) return EH_ERR(MPI_ERR_GROUP, "invalid group %d", group);
    if (!newcomm || !stringtag) return EH_ERR(MPI_ERR_ARG, "newcomm or stringtag is NULL");
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return EH_ERR(MPI_ERR_ARG, "stringtag longer than MPI_MAX_STRINGTAG_LEN - 1 (%d)",
                      MPI_MAX_STRINGTAG_LEN - 1);
    /* MPI_GROUP_EMPTY gives MPI_COMM_NULL, as in MPI_Comm_create_group (processes left out of
     * a split call it so); another group must hold the caller, the call is over its members. */
    if (g->size == 0) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (tm_group_rank_of(g, me->rank) == MPI_UNDEFINED)
        return EH_ERR(MPI_ERR_GROUP, "the calling process is not in group");
    struct tm_info *hints = NULL;
    if (info != MPI_INFO_NULL && !(hints = tm_info_get(me, info)))
        return EH_ERR(MPI_ERR_INFO, "invalid info %d", info);
#undef EH_ERR
    MPI_Comm h = MPI_COMM_NULL;
    int err = PMPI_Comm_create_group(MPI_COMM_WORLD, group, tm_stringtag_tag(stringtag), &h);
    if (err) return err;
    struct tm_commref *r = tm_comm_get(&me->comms, h);
    r->session_bsb = g->session_bsb;
    if (hints && !(r->hints = tm_info_dup_obj(hints))) {
        tm_commtab_free(me, h);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    PMPI_Comm_set_errhandler(h, errhandler); /* checked above: cannot fail */
    *newcomm = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_create_from_group)

TM_API int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_dup_with_info";
    ENTER(fn, comm);
    (void)cr;
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    struct tm_info *hints = NULL;
    if (info != MPI_INFO_NULL && !(hints = tm_info_get(me, info)))
        return tm_err(me, comm, MPI_ERR_INFO, fn, "invalid info %d", info);
    return tm_comm_dup(me, fn, comm, hints ? hints : tm_info_empty(), newcomm);
}
TM_ALIAS(Comm_dup_with_info)

TM_API int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    ENTER("MPI_Comm_test_inter", comm);
    if (!flag) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag is NULL");
    *flag = cr->c->inter;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_test_inter)

TM_API int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    ENTER("MPI_Comm_remote_size", comm);
    if (!cr->c->inter)
        return tm_err(me, comm, MPI_ERR_COMM, "MPI_Comm_remote_size", "not an inter-communicator");
    if (!size) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_remote_size", "size is NULL");
    *size = cr->c->remote_size;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_remote_size)

TM_API int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    ENTER("MPI_Comm_set_info", comm);
    struct tm_info *in = tm_info_get(me, info);
    if (!in) return tm_err(me, comm, MPI_ERR_INFO, "MPI_Comm_set_info", "invalid info %d", info);
    struct tm_info *copy = tm_info_dup_obj(in);
    if (!copy) return tm_err(me, comm, MPI_ERR_NO_MEM, "MPI_Comm_set_info", "out of memory");
    /* TMPI acts on no communicator hint; it keeps what it was given, for Comm_get_info. */
    tm_info_free_obj(cr->hints);
    cr->hints = copy;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_set_info)

TM_API int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    ENTER("MPI_Comm_get_info", comm);
    if (!info_used) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_get_info", "info_used is NULL");
    MPI_Info h = tm_info_new_handle(me, cr->hints);
    if (h == MPI_INFO_NULL)
        return tm_err(me, comm, MPI_ERR_NO_MEM, "MPI_Comm_get_info", "out of memory");
    *info_used = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_get_info)
