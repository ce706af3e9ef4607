/* rma_sync_pscw.c — general active-target synchronisation (MPI 3.1 §11.5.2): Win_post,
 * Win_start, Win_complete, Win_wait, Win_test; and Win_get_group.
 *
 * Counters, never messages to match: a target's post adds one to posts[target] of each origin
 * in its group (rma.h struct tm_win_member; directly on this node, through a POST frame that
 * the origin node's receive daemon applies otherwise), and an origin's Win_start waits until
 * posts[t] passes what its earlier epochs used, for every t of its group.  Win_complete adds
 * one to each target's `completes` (a COMPLETE frame behind the operations on the same link,
 * so they are applied first); Win_wait waits until completes reaches the sum of its groups'
 * sizes.  Every counter only grows, so epochs that follow each other never confuse them. */
#include <stdlib.h>

#include "errh.h"
#include "group.h"
#include "job.h"
#include "rma.h"
#include "wait.h"

#define POST_ASSERTS (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)

/* The window ranks of group g's members into *ret (malloc'd); MPI_ERR_GROUP if one is not a
 * member of the window. */
static int group_ranks(struct tm_rank *me, struct tm_winref *wr, MPI_Group g, int **ret, int *n,
                       const char *fn, int *ret_err)
{
    const struct tm_group *gr = tm_group_get(me, g);
    if (!gr) {
        *ret_err = tm_win_err(me, wr, MPI_ERR_GROUP, fn, "invalid group %d", g);
        return -1;
    }
    int *v = malloc(sizeof *v * (size_t)(gr->size ? gr->size : 1));
    if (!v) {
        *ret_err = tm_win_err(me, wr, MPI_ERR_NO_MEM, fn, "out of memory");
        return -1;
    }
    for (int i = 0; i < gr->size; i++) {
        v[i] = tm_win_member_of(wr->w, gr->world[i]);
        if (v[i] < 0) {
            free(v);
            *ret_err = tm_win_err(me, wr, MPI_ERR_GROUP, fn,
                                  "rank %d of the group is not a member of the window", i);
            return -1;
        }
    }
    *ret = v;
    *n = gr->size;
    return 0;
}

static int is_local(const struct tm_winref *wr, int t)
{
    return wr->w->m[t].node == wr->w->m[wr->rank].node;
}

static void wake_member(struct tm_rank *me, const struct tm_win_member *m)
{
    tm_wake(&tm_job_rank(me->job, m->world)->waker);
}

TM_API int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_post";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (assert & ~POST_ASSERTS)
        return tm_win_err(me, wr, MPI_ERR_ASSERT, fn, "invalid assertion %#x", assert);
    if (wr->exposure || (wr->fence && wr->fence_ops))
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "an exposure or fence epoch is open");
    int *v, n;
    if (group_ranks(me, wr, group, &v, &n, fn, &err) < 0) return err;
    wr->fence = 0;
    struct tm_win *w = wr->w;
    err = 0;
    if (!(assert &MPI_MODE_NOCHECK)) {
        for (int i = 0; i < n && !err; i++) {
            struct tm_win_member *o = &w->m[v[i]];
            if (is_local(wr, v[i])) {
                atomic_fetch_add_explicit(&o->posts[wr->rank], 1, memory_order_seq_cst);
                wake_member(me, o);
            } else {
                err = tm_rma_remote_ctl(me, wr, TM_RMA_POST, v[i], 0);
            }
        }
    }
    free(wr->exp_grp);
    wr->exp_grp = v;
    wr->nexp_grp = n;
    wr->exposure = 1;
    wr->completes_wanted += (uint64_t)n;
    if (err) return tm_win_err(me, wr, err, fn, "cannot reach a rank on another node");
    return MPI_SUCCESS;
}
TM_ALIAS(Win_post)

struct start_wait {
    struct tm_winref *wr;
};

static int posted(void *p)
{
    struct tm_winref *wr = ((struct start_wait *)p)->wr;
    const struct tm_win_member *me = &wr->w->m[wr->rank];
    for (int i = 0; i < wr->nacc_grp; i++) {
        int t = wr->acc_grp[i];
        if (atomic_load_explicit(&me->posts[t], memory_order_seq_cst) <= wr->posts_used[t])
            return 0;
    }
    return 1;
}

TM_API int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_start";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (assert & ~MPI_MODE_NOCHECK)
        return tm_win_err(me, wr, MPI_ERR_ASSERT, fn, "invalid assertion %#x", assert);
    if (wr->access || wr->lock_all || wr->nlocks || (wr->fence && wr->fence_ops))
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "an access epoch is open");
    if (!wr->posts_used) {
        wr->posts_used = calloc((size_t)wr->w->size, sizeof *wr->posts_used);
        if (!wr->posts_used) return tm_win_err(me, wr, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int *v, n;
    if (group_ranks(me, wr, group, &v, &n, fn, &err) < 0) return err;
    wr->fence = 0;
    free(wr->acc_grp);
    wr->acc_grp = v;
    wr->nacc_grp = n;
    wr->acc_nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    if (!wr->acc_nocheck) {
        /* Operations may only start once every target of the group has posted. */
        struct start_wait sw = {wr};
        if (!posted(&sw)) tm_wait(me, posted, &sw);
        for (int i = 0; i < n; i++)
            wr->posts_used[v[i]]++;
    }
    wr->access = 1;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_start)

TM_API int PMPI_Win_complete(MPI_Win win)
{
    static const char fn[] = "MPI_Win_complete";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (!wr->access) return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "no start epoch is open");
    struct tm_win *w = wr->w;
    err = 0;
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < wr->nacc_grp; i++) {
        int t = wr->acc_grp[i];
        if (is_local(wr, t)) {
            tm_rma_acc_net_wait(me, wr); /* its accumulates applied before it is counted */
            atomic_fetch_add_explicit(&w->m[t].completes, 1, memory_order_seq_cst);
            wake_member(me, &w->m[t]);
        } else {
            /* Behind this origin's operations on the link: applied before it is counted. */
            if (wr->dirty) wr->dirty[t] = 0;
            int e = tm_rma_remote_ctl(me, wr, TM_RMA_COMPLETE, t, 0);
            if (!err) err = e;
        }
    }
    if (wr->org) {
        int e = tm_rma_remote_wait(me, wr, 0); /* Gets: their data is here */
        if (!err) err = e;
    }
    wr->access = 0;
    if (err) return tm_win_err(me, wr, err, fn, "operations on another node failed");
    return MPI_SUCCESS;
}
TM_ALIAS(Win_complete)

static int all_completed(void *p)
{
    struct tm_winref *wr = p;
    return atomic_load_explicit(&wr->w->m[wr->rank].completes, memory_order_seq_cst) >=
           wr->completes_wanted;
}

TM_API int PMPI_Win_wait(MPI_Win win)
{
    static const char fn[] = "MPI_Win_wait";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    if (!wr->exposure)
        return tm_win_err(tm_self(), wr, MPI_ERR_RMA_SYNC, fn, "no post epoch is open");
    if (!all_completed(wr)) tm_wait(tm_self(), all_completed, wr);
    atomic_thread_fence(memory_order_seq_cst);
    tm_win_target_sync(wr->w);
    wr->exposure = 0;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_wait)

TM_API int PMPI_Win_test(MPI_Win win, int *flag)
{
    static const char fn[] = "MPI_Win_test";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (!flag) return tm_win_err(me, wr, MPI_ERR_ARG, fn, "flag is NULL");
    if (!wr->exposure) return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn, "no post epoch is open");
    *flag = all_completed(wr);
    if (*flag) {
        atomic_thread_fence(memory_order_seq_cst);
        tm_win_target_sync(wr->w);
        wr->exposure = 0;
    } else {
        tm_poll_idle(me);
    }
    return MPI_SUCCESS;
}
TM_ALIAS(Win_test)

TM_API int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    static const char fn[] = "MPI_Win_get_group";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (!group) return tm_win_err(me, wr, MPI_ERR_ARG, fn, "group is NULL");
    struct tm_win *w = wr->w;
    int32_t *world = malloc(sizeof *world * (size_t)w->size);
    if (!world) return tm_win_err(me, wr, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < w->size; i++)
        world[i] = w->m[i].world;
    MPI_Group g = tm_group_new(me, world, w->size);
    free(world);
    if (g == MPI_GROUP_NULL) return tm_win_err(me, wr, MPI_ERR_NO_MEM, fn, "out of memory");
    *group = g;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_get_group)
