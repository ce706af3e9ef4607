/* intercomm.c — inter-communicators (intercomm.h). */
#include "intercomm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp2p.h"
#include "ctx.h"
#include "errh.h"
#include "group.h"
#include "info.h"
#include "job.h"
#include "xjob.h"

#define TM_TAG_INTER_DUP 1 /* tags of libtmpi's own exchanges over the hidden handles */
#define TM_TAG_INTER_SPLIT 2
#define TM_TAG_INTER_MERGE 3

/* What a leader tells its group after meeting the other leader. */
struct inter_hdr {
    int32_t err, rsize, ctx[3];
    int32_t rhigh, reuse; /* merge only */
};

struct make_arg {
    int ctx, reuse, n, rn, inter, nlocal;
    const int32_t *world, *remote;
};

static struct tm_comm *make_comm(void *p)
{
    struct make_arg *a = p;
    int32_t *map = malloc(sizeof *map * (size_t)a->n);
    int32_t *rmap = a->inter ? malloc(sizeof *rmap * (size_t)a->rn) : NULL;
    if (!map || (a->inter && !rmap)) {
        free(map);
        free(rmap);
        return NULL;
    }
    memcpy(map, a->world, sizeof *map * (size_t)a->n);
    if (rmap) memcpy(rmap, a->remote, sizeof *rmap * (size_t)a->rn);
    struct tm_comm *c = tm_comm_new(a->ctx, a->reuse, a->n, map, a->nlocal);
    if (!c) {
        free(map);
        free(rmap);
        return NULL;
    }
    c->inter = a->inter;
    c->remote_size = a->rn;
    c->remote_of = rmap;
    c->xjob = tm_xjob_mask(a->world, a->n) || tm_xjob_mask(a->remote, a->rn);
    return c;
}

/* This rank's handle for the node copy of (ctx, members); MPI_COMM_NULL when out of memory. */
static MPI_Comm attach(struct tm_rank *me, int ctx, int reuse, const int32_t *lmap, int n,
                       const int32_t *rmap, int rn, int inter, int rank, MPI_Errhandler eh)
{
    struct make_arg a = {ctx, reuse, n, rn, inter, tm_ctx_nlocal(me, lmap, n), lmap, rmap};
    /* with ranks of other jobs: its receives fail when one of those jobs ends (net/xjob.h) */
    tm_xjob_note(me->job, &ctx, 1, tm_xjob_mask(lmap, n) | tm_xjob_mask(rmap, rn));
    struct tm_comm *c = tm_ctx_meet(me->job, ctx, lmap[0], a.nlocal, make_comm, &a);
    if (!c) return MPI_COMM_NULL;
    MPI_Comm h = tm_commtab_add(me, c, rank, eh);
    if (h == MPI_COMM_NULL) tm_comm_release(c);
    return h;
}

static int32_t *world_list(const struct tm_comm *c)
{
    int32_t *v = malloc(sizeof *v * ((size_t)c->size + 1));
    if (v)
        for (int i = 0; i < c->size; i++)
            v[i] = tm_comm_world_rank(c, i);
    return v;
}

/* The two leaders' exchange over peer (a handle of the leader: intra, or inter naming the
 * other side): each sends [n, map...] and gets the other's; the one whose group's first
 * member has the lower world rank goes first (no two blocking sends face each other).
 * Returns 0 or a negative errno; *rmap: malloc'd, *rn its size. */
static int leaders_swap(struct tm_rank *me, struct tm_commref *peer, int remote_leader, int tag,
                        const int32_t *lmap, int n, int32_t **rmap, int *rn)
{
    int cap = me->job->size + 1;
    int32_t *out = malloc(sizeof *out * ((size_t)n + 1)), *in = malloc(sizeof *in * (size_t)cap);
    if (!out || !in) {
        free(out);
        free(in);
        return -ENOMEM;
    }
    out[0] = n;
    memcpy(out + 1, lmap, sizeof *out * (size_t)n);
    int ctx = TM_CTX_MAKE(peer->c->ctx), err = 0;
    size_t got = 0;
    /* Who goes first: the side whose leader has the lower world rank. */
    int mine = me->rank, theirs = tm_comm_peer_world(peer->c, remote_leader);
    for (int step = 0; step < 2 && !err; step++) {
        if ((step == 0) == (mine < theirs))
            err = tm_cp2p_send(me, peer->c, peer->rank, ctx, remote_leader, tag, out,
                               sizeof *out * ((size_t)n + 1));
        else
            err =
                tm_cp2p_recv(me, ctx, remote_leader, tag, in, sizeof *in * (size_t)cap, &got, NULL);
    }
    free(out);
    if (!err && (got < sizeof *in || in[0] < 1 || (size_t)in[0] + 1 != got / sizeof *in))
        err = -EPROTO;
    if (err) {
        free(in);
        return err;
    }
    *rn = in[0];
    memmove(in, in + 1, sizeof *in * (size_t)in[0]);
    *rmap = in;
    return 0;
}

/* The lower leader (by world rank) sends h to the other; the other receives it into h. */
static int leaders_pass(struct tm_rank *me, struct tm_commref *peer, int remote_leader, int tag,
                        struct inter_hdr *h, int lower)
{
    int ctx = TM_CTX_MAKE(peer->c->ctx);
    if (lower) return tm_cp2p_send(me, peer->c, peer->rank, ctx, remote_leader, tag, h, sizeof *h);
    return tm_cp2p_recv(me, ctx, remote_leader, tag, h, sizeof *h, NULL, NULL);
}

/* Makes an inter-communicator between the group of local (an intra-communicator handle, its
 * leader local_leader) and the group whose leader is remote_leader in peer (the local leader's
 * handle; other members pass anything).  eh: the new communicator's error handler. */
static int inter_make(struct tm_rank *me, const char *fn, MPI_Comm errc, MPI_Comm local,
                      int local_leader, MPI_Comm peer, int remote_leader, int tag,
                      MPI_Errhandler eh, MPI_Comm *out)
{
    struct tm_commref *lr = tm_comm_get(&me->comms, local);
    struct tm_comm *lc = lr->c;
    int n = lc->size, myrank = lr->rank;
    int32_t *lmap = world_list(lc), *rmap = NULL;
    if (!lmap) return tm_err(me, errc, MPI_ERR_NO_MEM, fn, "out of memory");
    struct inter_hdr h = {0};
    int rn = 0;
    if (myrank == local_leader) {
        struct tm_commref *pr = tm_comm_get(&me->comms, peer);
        int err = leaders_swap(me, pr, remote_leader, tag, lmap, n, &rmap, &rn);
        int lower = me->rank < tm_comm_peer_world(pr->c, remote_leader);
        if (!err && lower) {
            int reuse = 0;
            /* Both sides share the ids: never given back (attach with reuse 0), since no side
             * knows when the other let go. */
            h.err = tm_ctx_for(me, lmap, n, rmap, rn, 3, h.ctx, &reuse) < 0;
        }
        if (!err) err = leaders_pass(me, pr, remote_leader, tag, &h, lower);
        if (err) h.err = 1;
        h.rsize = rn;
    }
    /* The leader tells its group: the header, then the remote group's world ranks. */
    int e = PMPI_Bcast(&h, (int)(sizeof h / sizeof(int32_t)), MPI_INT, local_leader, local);
    if (e == MPI_SUCCESS && !h.err && myrank != local_leader) {
        rn = h.rsize;
        rmap = malloc(sizeof *rmap * (size_t)rn);
        if (!rmap) e = MPI_ERR_NO_MEM;
    }
    /* Everyone takes part in the second broadcast, whatever they found. */
    if (e == MPI_SUCCESS && !h.err) {
        int32_t dummy = 0;
        e = PMPI_Bcast(rmap ? rmap : &dummy, rmap ? rn : 0, MPI_INT, local_leader, local);
    }
    if (e != MPI_SUCCESS || h.err) {
        free(lmap);
        free(rmap);
        return tm_err(me, errc, e != MPI_SUCCESS ? e : MPI_ERR_INTERN, fn,
                      "the groups' leaders could not agree");
    }
    int e2 = tm_intercomm_attach(me, h.ctx, lmap, n, rmap, rn, myrank, eh, out);
    free(lmap);
    free(rmap);
    return e2 ? tm_err(me, errc, e2, fn, "out of memory") : MPI_SUCCESS;
}

int tm_intercomm_attach(struct tm_rank *me, const int32_t ctx[3], const int32_t *lmap, int n,
                        const int32_t *rmap, int rn, int rank, MPI_Errhandler eh, MPI_Comm *out)
{
    MPI_Comm hm = attach(me, ctx[0], 0, lmap, n, rmap, rn, 1, rank, eh);
    MPI_Comm hi = attach(me, ctx[1], 0, lmap, n, rmap, rn, 1, rank, MPI_ERRORS_RETURN);
    MPI_Comm hl = attach(me, ctx[2], 0, lmap, n, NULL, 0, 0, rank, MPI_ERRORS_RETURN);
    if (hm == MPI_COMM_NULL || hi == MPI_COMM_NULL || hl == MPI_COMM_NULL) {
        MPI_Comm all[3] = {hm, hi, hl};
        for (int i = 0; i < 3; i++)
            if (all[i] != MPI_COMM_NULL) tm_commtab_free(me, all[i]);
        return MPI_ERR_NO_MEM;
    }
    struct tm_commref *r = tm_comm_get(&me->comms, hm);
    r->coll_inter = hi;
    r->coll_local = hl;
    tm_comm_get(&me->comms, hi)->hidden = 1;
    tm_comm_get(&me->comms, hl)->hidden = 1;
    *out = hm;
    return MPI_SUCCESS;
}

TM_API int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                 int remote_leader, int tag, MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *lr = tm_comm_get_user(&me->comms, local_comm);
    if (!lr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid local communicator %d",
                      local_comm);
    if (lr->c->inter)
        return tm_err(me, local_comm, MPI_ERR_COMM, fn, "local_comm is an inter-communicator");
    if (!newintercomm) return tm_err(me, local_comm, MPI_ERR_ARG, fn, "newintercomm is NULL");
    if (local_leader < 0 || local_leader >= lr->c->size)
        return tm_err(me, local_comm, MPI_ERR_RANK, fn, "invalid local_leader %d", local_leader);
    if (lr->rank == local_leader) {
        /* Only the leaders use peer_comm and remote_leader (MPI 3.1 §6.6.2). */
        struct tm_commref *pr = tm_comm_get_user(&me->comms, peer_comm);
        if (!pr)
            return tm_err(me, local_comm, MPI_ERR_COMM, fn, "invalid peer communicator %d",
                          peer_comm);
        if (remote_leader < 0 || remote_leader >= tm_comm_peer_size(pr->c))
            return tm_err(me, local_comm, MPI_ERR_RANK, fn, "invalid remote_leader %d",
                          remote_leader);
        if (tag < 0 || tag > TM_TAG_UB)
            return tm_err(me, local_comm, MPI_ERR_TAG, fn, "invalid tag %d", tag);
        if (tm_comm_peer_world(pr->c, remote_leader) == me->rank)
            return tm_err(me, local_comm, MPI_ERR_RANK, fn,
                          "remote_leader %d is the local leader itself", remote_leader);
    }
    return inter_make(me, fn, local_comm, local_comm, local_leader, peer_comm, remote_leader, tag,
                      lr->eh, newintercomm);
}
TM_ALIAS(Intercomm_create)

int tm_stringtag_tag(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return (int)(h % ((uint32_t)TM_TAG_UB + 1));
}

/* MPI 4.0 §7.6.2 without sessions: the groups are groups of MPI_COMM_WORLD's processes, so the
 * local group becomes a communicator as MPI_Comm_create_group makes one (collective over the
 * group only), and its leader meets the remote leader over MPI_COMM_WORLD's hidden context, as
 * MPI_Intercomm_create does with a peer communicator. */
TM_API int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                             MPI_Group remote_group, int remote_leader,
                                             const char *stringtag, MPI_Info info,
                                             MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create_from_groups";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (tm_errh_check(me, errhandler, TM_EH_COMM))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ERRHANDLER, fn,
                      "%d is not an error handler for communicators", errhandler);
#define EH_ERR(code, ...)                                                                          \
    tm_err_obj(me, TM_EH_COMM, MPI_COMM_NULL, errhandler, code, fn, __VA_ARGS__)
    /* From here the call's errors go to errhandler (MPI 4.1 §7.6.2). */
    const struct tm_group *lg = tm_group_get(me, local_group);
    const struct tm_group *rg = tm_group_get(me, remote_group);
    if (!lg || !rg)
        return EH_ERR(MPI_ERR_GROUP, "invalid %s group %d", lg ? "remote" : "local",
                      lg ? remote_group : local_group);
    if (!newintercomm || !stringtag)
        return EH_ERR(MPI_ERR_ARG, "newintercomm or stringtag is NULL");
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return EH_ERR(MPI_ERR_ARG, "stringtag longer than MPI_MAX_STRINGTAG_LEN - 1 (%d)",
                      MPI_MAX_STRINGTAG_LEN - 1);
    if (tm_group_rank_of(lg, me->rank) == MPI_UNDEFINED)
        return EH_ERR(MPI_ERR_GROUP, "the calling process is not in local_group");
    if (tm_group_rank_of(rg, me->rank) != MPI_UNDEFINED)
        return EH_ERR(MPI_ERR_GROUP,
                      "the calling process is in both groups (they must be disjoint)");
    if (local_leader < 0 || local_leader >= lg->size)
        return EH_ERR(MPI_ERR_RANK, "invalid local_leader %d", local_leader);
    if (remote_leader < 0 || remote_leader >= rg->size)
        return EH_ERR(MPI_ERR_RANK, "invalid remote_leader %d", remote_leader);
    struct tm_info *hints = NULL;
    if (info != MPI_INFO_NULL && !(hints = tm_info_get(me, info)))
        return EH_ERR(MPI_ERR_INFO, "invalid info %d", info);
#undef EH_ERR
    int tag = tm_stringtag_tag(stringtag), rl_world = rg->world[remote_leader];
    MPI_Comm local = MPI_COMM_NULL;
    int err = PMPI_Comm_create_group(MPI_COMM_WORLD, local_group, tag, &local);
    if (err) return err;
    err = inter_make(me, fn, MPI_COMM_WORLD, local, local_leader, MPI_COMM_WORLD, rl_world, tag,
                     errhandler, newintercomm);
    tm_commtab_free(me, local);
    if (err || !hints) return err;
    struct tm_commref *r = tm_comm_get(&me->comms, *newintercomm);
    if (!(r->hints = tm_info_dup_obj(hints))) {
        tm_commtab_free(me, *newintercomm);
        *newintercomm = MPI_COMM_NULL;
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return MPI_SUCCESS;
}
TM_ALIAS(Intercomm_create_from_groups)

int tm_intercomm_dup(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, MPI_Comm *newcomm)
{
    return inter_make(me, "MPI_Comm_dup", comm, cr->coll_local, 0, cr->coll_inter, 0,
                      TM_TAG_INTER_DUP, cr->eh, newcomm);
}

/* Color and key of every member of a group, as pairs. */
struct ck {
    int32_t color, key;
};

int tm_intercomm_split(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, int color, int key,
                       MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_split";
    MPI_Comm local = cr->coll_local, twin = cr->coll_inter;
    MPI_Errhandler eh = cr->eh;
    int n = cr->c->size, rn = cr->c->remote_size, myrank = cr->rank;
    const int32_t *rmap_w = cr->c->remote_of;
    struct ck *mine = malloc(sizeof *mine * (size_t)n),
              *theirs = malloc(sizeof *theirs * (size_t)rn);
    if (!mine || !theirs) {
        free(mine);
        free(theirs);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    struct ck me_ck = {color, key};
    int e = PMPI_Allgather(&me_ck, 2, MPI_INT, mine, 2, MPI_INT, local);
    /* Leaders (local rank 0 of each side) swap the lists; then each tells its group. */
    if (e == MPI_SUCCESS && myrank == 0) {
        struct tm_commref *tr = tm_comm_get(&me->comms, twin);
        int ctx = TM_CTX_MAKE(tr->c->ctx), err = 0;
        int lower = tm_xjob_before(me->job, me->rank, rmap_w[0]);
        for (int step = 0; step < 2 && !err; step++) {
            if ((step == 0) == lower)
                err = tm_cp2p_send(me, tr->c, 0, ctx, 0, TM_TAG_INTER_SPLIT, mine,
                                   sizeof *mine * (size_t)n);
            else
                err = tm_cp2p_recv(me, ctx, 0, TM_TAG_INTER_SPLIT, theirs,
                                   sizeof *theirs * (size_t)rn, NULL, NULL);
        }
        if (err) e = MPI_ERR_OTHER;
    }
    if (e == MPI_SUCCESS) e = PMPI_Bcast(theirs, 2 * rn, MPI_INT, 0, local);
    MPI_Comm nl = MPI_COMM_NULL;
    if (e == MPI_SUCCESS) e = tm_comm_split(me, fn, local, color, key, &nl);
    if (e != MPI_SUCCESS) {
        free(mine);
        free(theirs);
        return tm_err(me, comm, e, fn, "splitting the local group failed");
    }
    /* The remote leader of my color: its member with the lowest (key, rank). */
    int rl = -1;
    for (int i = 0; color != MPI_UNDEFINED && i < rn; i++)
        if (theirs[i].color == color && (rl < 0 || theirs[i].key < theirs[rl].key)) rl = i;
    free(mine);
    free(theirs);
    *newcomm = MPI_COMM_NULL;
    if (nl == MPI_COMM_NULL) return MPI_SUCCESS;
    if (rl < 0) { /* no one of my color on the other side */
        tm_commtab_free(me, nl);
        return MPI_SUCCESS;
    }
    struct tm_commref *nr = tm_comm_get(&me->comms, nl);
    nr->hidden = 1;
    /* The new local group's leader (its rank 0) meets the other side's over the twin. */
    int r = inter_make(me, fn, comm, nl, 0, twin, rl, TM_TAG_INTER_SPLIT, eh, newcomm);
    tm_commtab_free(me, nl);
    return r;
}

TM_API int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *fn = "MPI_Intercomm_merge";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, intercomm);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", intercomm);
    if (!cr->c->inter) return tm_err(me, intercomm, MPI_ERR_COMM, fn, "not an inter-communicator");
    if (!newintracomm) return tm_err(me, intercomm, MPI_ERR_ARG, fn, "newintracomm is NULL");
    struct tm_comm *c = cr->c;
    int n = c->size, rn = c->remote_size;
    high = high != 0;
    int32_t *all = malloc(sizeof *all * ((size_t)n + (size_t)rn));
    int32_t *lmap = world_list(c);
    if (!all || !lmap) {
        free(all);
        free(lmap);
        return tm_err(me, intercomm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    struct inter_hdr h = {0};
    MPI_Comm local = cr->coll_local;
    if (cr->rank == 0) {
        struct tm_commref *tr = tm_comm_get(&me->comms, cr->coll_inter);
        int ctx = TM_CTX_MAKE(tr->c->ctx), err = 0;
        int lower = tm_xjob_before(me->job, me->rank, c->remote_of[0]);
        int32_t theirs = 0;
        for (int step = 0; step < 2 && !err; step++) {
            if ((step == 0) == lower)
                err = tm_cp2p_send(me, tr->c, 0, ctx, 0, TM_TAG_INTER_MERGE, &high, sizeof high);
            else
                err = tm_cp2p_recv(me, ctx, 0, TM_TAG_INTER_MERGE, &theirs, sizeof theirs, NULL,
                                   NULL);
        }
        h.rhigh = theirs;
        if (!err && lower) {
            int reuse = 0;
            h.err = tm_ctx_for(me, lmap, n, c->remote_of, rn, 1, h.ctx, &reuse) < 0;
            h.reuse = reuse;
        }
        struct inter_hdr x = h;
        if (!err) err = leaders_pass(me, tr, 0, TM_TAG_INTER_MERGE, &x, lower);
        if (!err && !lower) {
            h.ctx[0] = x.ctx[0];
            h.reuse = x.reuse;
            h.err = x.err;
        }
        if (err) h.err = 1;
    }
    int e = PMPI_Bcast(&h, (int)(sizeof h / sizeof(int32_t)), MPI_INT, 0, local);
    if (e != MPI_SUCCESS || h.err) {
        free(all);
        free(lmap);
        return tm_err(me, intercomm, e != MPI_SUCCESS ? e : MPI_ERR_INTERN, fn,
                      "the groups' leaders could not agree");
    }
    /* The group that passed high = 0 comes first; with equal values, the group whose first
     * member has the lower world rank (both sides compute the same). */
    int first = high != h.rhigh ? !high : tm_xjob_before(me->job, lmap[0], c->remote_of[0]);
    if (first) {
        memcpy(all, lmap, sizeof *all * (size_t)n);
        memcpy(all + n, c->remote_of, sizeof *all * (size_t)rn);
    } else {
        memcpy(all, c->remote_of, sizeof *all * (size_t)rn);
        memcpy(all + rn, lmap, sizeof *all * (size_t)n);
    }
    int rank = (first ? 0 : rn) + cr->rank;
    MPI_Errhandler eh = cr->eh;
    MPI_Comm nh = attach(me, h.ctx[0], h.reuse, all, n + rn, NULL, 0, 0, rank, eh);
    free(all);
    free(lmap);
    if (nh == MPI_COMM_NULL) return tm_err(me, intercomm, MPI_ERR_NO_MEM, fn, "out of memory");
    *newintracomm = nh;
    return MPI_SUCCESS;
}
TM_ALIAS(Intercomm_merge)
