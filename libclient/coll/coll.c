/* coll.c — the collective engine (coll.h): counting barrier, blocking runs, argument checks,
 * Barrier and Bcast, and the collective counters. */
#include "coll.h"
#include "mstate.h"
#include "coll_c_pieces.h"
#include "coll_inter_ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_net.h"
#include "coll_xjob.h"
#include "errh.h"
#include "job.h"
#include "request.h"
#include "wait.h"

#define TM_SCRATCH_MIN (16u * 1024)

void tm_coll_wake_members(struct tm_rank *me, struct tm_comm *c)
{
    for (int i = 0; i < c->size; i++)
        tm_wake(&tm_job_rank(me->job, tm_comm_world_rank(c, i))->waker);
}

/* Counting barrier: arrive never resets, so the k-th barrier ends at arrive == k * size.  The
 * last to arrive wakes the sleepers.  The seq_cst read-modify-write on arrive also publishes
 * every store a member made before arriving (its slot, its arguments, its parts' results). */
int tm_coll_arrive(struct tm_commref *cr, uint64_t *ret_k)
{
    uint64_t k = ++cr->nbarrier;
    uint64_t prev = atomic_fetch_add_explicit(&cr->c->coll.arrive, 1, memory_order_seq_cst);
    *ret_k = k;
    return prev + 1 == k * (uint64_t)cr->c->size;
}

void tm_coll_guard_end(struct tm_coll_guard *g)
{
    /* communicators with another job's ranks run their own rounds (coll_xjob.c), unstamped */
    if (TM_UNLIKELY(g->cr->nstarted != g->seq) && !g->cr->c->inter && !g->cr->c->xjob)
        atomic_fetch_add_explicit(&g->cr->c->coll.failures, 1, memory_order_seq_cst);
}

void tm_coll_stamp(struct tm_commref *cr, uint64_t sig)
{
    struct tm_slot *s = &cr->c->coll.slot[cr->rank];
    uint64_t k = cr->nbarrier + 1;
    atomic_store_explicit(&s->stamp_k[k & 1], k, memory_order_relaxed);
    atomic_store_explicit(&s->stamp_sig[k & 1], sig, memory_order_relaxed);
}

int tm_coll_in_step(const struct tm_commref *cr, uint64_t sig)
{
    const struct tm_coll *co = &cr->c->coll;
    if (TM_LIKELY(!atomic_load_explicit(&co->failures, memory_order_acquire))) return 1;
    uint64_t k = cr->nbarrier;
    for (int i = 0; i < cr->c->size; i++)
        if (atomic_load_explicit(&co->slot[i].stamp_k[k & 1], memory_order_relaxed) != k ||
            atomic_load_explicit(&co->slot[i].stamp_sig[k & 1], memory_order_relaxed) != sig)
            return 0;
    return 1;
}

int tm_coll_out_of_step(struct tm_rank *me, struct tm_commref *cr)
{
    struct tm_coll *co = &cr->c->coll;
    uint64_t k = cr->nbarrier, g = atomic_load_explicit(&co->res_gen, memory_order_acquire);
    atomic_store_explicit(&co->res_err, -EPROTO, memory_order_relaxed);
    while (g < k && !atomic_compare_exchange_weak_explicit(
                        &co->res_gen, &g, k, memory_order_seq_cst, memory_order_acquire))
        ;
    tm_coll_wake_members(me, cr->c);
    tm_coll_barrier(me, cr);
    return -EPROTO;
}

int tm_coll_barrier(struct tm_rank *me, struct tm_commref *cr)
{
    struct tm_comm *c = cr->c;
    if (TM_UNLIKELY(c->xjob)) { /* ranks of two jobs: their messages (coll_xjob.h) */
        (void)tm_xcoll_run(me, cr, MPIX_COLL_BARRIER, NULL);
        return 0;
    }
    if (TM_UNLIKELY(tm_coll_net_spans(me, c))) {
        /* Comm_dup/split and Finalize rely on it; a failed round aborts the job on its own
         * leader's node, and a lost link is reported by the network layer. */
        (void)tm_chier_round(me, cr, MPIX_COLL_BARRIER, NULL);
        return 0;
    }
    uint64_t k;
    if (tm_coll_arrive(cr, &k)) {
        if (c->size > 1) tm_coll_wake_members(me, c);
        return 1;
    }
    tm_coll_wait_ctr(me, &c->coll.arrive, k * (uint64_t)c->size);
    return 0;
}

void *tm_coll_scratch(struct tm_rank *me, size_t bytes)
{
    if (bytes < TM_SCRATCH_MIN) bytes = TM_SCRATCH_MIN;
    void **scratch = &me->scratch;
    size_t *size = &me->scratch_size;
    /* A thread the rank created (MPI_THREAD_MULTIPLE) may run a collective on another
     * communicator while the rank's thread runs one: it has a scratch of its own. */
    if (TM_UNLIKELY(tm_cur_child && me == tm_cur)) {
        struct tm_tstate *t = tm_tstate_get();
        if (!t) return NULL;
        scratch = &t->scratch, size = &t->scratch_size;
    }
    if (*size < bytes) {
        void *p = malloc(bytes);
        if (!p) return NULL;
        free(*scratch);
        *scratch = p;
        *size = bytes;
    }
    return *scratch;
}

static const char *errno_text(int r)
{
    switch (r) {
    case -EMSGSIZE:
        return "message truncated (type signatures differ)";
    case -ENOMEM:
        return "out of memory";
    case -ENOSYS:
        return "not available on a communicator that spans nodes";
    case -EPROTO:
        return "the members' collectives on this communicator are out of step: a member's "
               "earlier call failed its argument check and returned (MPI_ERRORS_RETURN) where "
               "the others made theirs, so its next call met a different one here";
    default:
        return "the network between the nodes failed";
    }
}

static int net_unavailable(struct tm_cnet *x)
{
    (void)x;
    return -ENOSYS;
}

/* Blocking: publish, barrier, this member's share of the parts, barrier.  Member k takes
 * parts k, k+n, ...: for most algorithms part k is member k's own result block, so each
 * member writes its own memory and reads the others'. */
static int run_blocking(struct tm_rank *me, struct tm_commref *cr, const struct tm_calgo *al,
                        struct tm_cargs *a)
{
    struct tm_comm *c = cr->c;
    int n = c->size;
    struct tm_cwork w = {.me = me, .wrank = cr->rank, .n = n, .slot = c->coll.slot};
    c->coll.slot[cr->rank].args = a;
    if (TM_UNLIKELY(tm_coll_net_spans(me, c)))
        return tm_chier_round(me, cr, al->kind, al->net ? al->net : net_unavailable);
    if (al->direct && n > 1) {
        int r = al->direct(me, cr, a);
        if (r != 1) return r;
    }
    tm_coll_stamp(cr, a->sig);
    tm_coll_barrier(me, cr);
    /* a member's earlier call failed its checks: its next call may have met this one */
    if (TM_UNLIKELY(!tm_coll_in_step(cr, a->sig))) return tm_coll_out_of_step(me, cr);
    int err = 0;
    size_t np = al->nparts(&w);
    for (size_t p = (size_t)cr->rank; p < np; p += (size_t)n) {
        int r = al->part(&w, p);
        if (r < 0 && !err) err = r;
    }
    tm_coll_barrier(me, cr);
    return err;
}

/* What members of one call agree on, whatever their types (tm_cargs.sig): the kind, the
 * root and, where every member moves as many bytes, those.  Different on members that met
 * with different calls (tm_coll_in_step), at least in kind or size wherever a call's buffers
 * would be read beyond their end. */
static uint64_t call_sig(int kind, const struct tm_cargs *a)
{
    uint64_t bytes = 0;
    switch (kind) {
    case MPIX_COLL_BCAST:
        bytes = (uint64_t)a->rcount * (a->rtype ? a->rtype->psize : 0);
        break;
    case MPIX_COLL_REDUCE:
    case MPIX_COLL_ALLREDUCE:
    case MPIX_COLL_SCAN:
    case MPIX_COLL_EXSCAN:
        bytes = (uint64_t)a->count * (a->rtype ? a->rtype->psize : 0);
        break;
    default:
        break;
    }
    uint64_t h = (uint64_t)kind + 1;
    h = h * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)(a->root + 1);
    return h * 0x9e3779b97f4a7c15ull ^ bytes;
}

/* tm_coll_start on a communicator with ranks of two jobs: the generic path (coll_xjob.h);
 * the non-blocking calls return at once (their messages progress without the rank). */
static int xjob_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                      const struct tm_calgo *al, struct tm_cargs *a, MPI_Request *req)
{
    if (cr->rank == 0)
        atomic_fetch_add_explicit(&me->job->coll_stats.ops[al->kind], 1, memory_order_relaxed);
    if (req) {
        struct tm_request *q = NULL;
        int nr = tm_xcoll_nb(me, cr, comm, al->kind, a, &q);
        if (nr != -ENOSYS) {
            tm_cargs_free_own(a); /* what the operation still reads it took (a->own) */
            if (nr < 0) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
            *req = q;
            return MPI_SUCCESS;
        }
    }
    int began = tm_mst_begin(me, fn, cr, comm, TMPI_PEER_ALL, TMPI_TAG_NONE);
    int r = tm_xcoll_run(me, cr, al->kind, a);
    tm_mst_end(me, began);
    tm_cargs_free_own(a);
    if (r < 0) {
        int cls = r == -EPIPE ? MPI_ERR_OTHER : tm_coll_errclass(r);
        return tm_err(me, comm, cls, fn, "%s",
                      r == -EPIPE ? "the other job of the communicator is gone" : errno_text(r));
    }
    if (req) {
        struct tm_request *q = tm_req_alloc(me, TM_REQ_COLL);
        if (!q) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
        tm_req_set_done_own(q, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
        *req = q;
    }
    return MPI_SUCCESS;
}

int tm_coll_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                  const struct tm_calgo *al, struct tm_cargs *a, MPI_Request *req)
{
    cr->nstarted = cr->ncoll;
    if (TM_UNLIKELY(cr->c->xjob)) return xjob_start(me, cr, comm, fn, al, a, req);
    /* The inter-node phase moves blocks as bytes (coll_net/): non-contiguous layouts run on
     * packed staging copies of this member's blocks (coll_stage.c).  So do types whose data
     * lies outside their extent, on every communicator (coll_base.h tm_cargs_outside). */
    a->sig = call_sig(al->kind, a);
    struct tm_cargs staged;
    if ((TM_UNLIKELY(tm_coll_net_spans(me, cr->c)) && tm_cargs_noncontig(a, cr->c->size)) ||
        TM_UNLIKELY(tm_cargs_outside(a, cr->c->size))) {
        int e = tm_cstage_new(al->kind, cr->rank, cr->c->size, a, &staged);
        if (e) {
            tm_cargs_free_own(a);
            return tm_err(me, comm, e == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_ARG, fn,
                          e == -ENOMEM ? "out of memory" : "blocks too large to stage");
        }
        a = &staged;
    }
    if (cr->rank == 0)
        atomic_fetch_add_explicit(&me->job->coll_stats.ops[al->kind], 1, memory_order_relaxed);
    int r;
    if (req) {
        struct tm_request *q = NULL;
        r = TM_UNLIKELY(tm_coll_net_spans(me, cr->c)) ? tm_cnet_nb_start(me, cr, comm, al, a, &q)
                                                      : tm_coll_nb_start(me, cr, comm, al, a, &q);
        if (r == 0) {
            *req = q; /* a->own and a->stage now belong to the operation */
        } else {
            tm_cstage_finish(a, 0);
            tm_cargs_free_own(a);
        }
    } else {
        int began = tm_mst_begin(me, fn, cr, comm, TMPI_PEER_ALL, TMPI_TAG_NONE);
        r = run_blocking(me, cr, al, a);
        tm_mst_end(me, began);
        tm_cstage_finish(a, r == 0);
        tm_cargs_free_own(a);
    }
    if (TM_UNLIKELY(r < 0)) {
        /* a bad collective setting (TMPI_COLL_*, [mpi] coll_*): say which */
        const char *why = r == -EINVAL ? tm_chier_error(me, cr->c) : NULL;
        if (why) return tm_err(me, comm, MPI_ERR_ARG, fn, "%s", why);
        return tm_err(me, comm, tm_coll_errclass(r), fn, "%s", errno_text(r));
    }
    return MPI_SUCCESS;
}

/* ---- argument checks ---- */

int tm_coll_check_buf(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what,
                      const void *buf, MPI_Count count, MPI_Datatype dt,
                      const struct tm_type **ret_t)
{
    /* Set on every path: the compiler cannot see that tm_err never returns MPI_SUCCESS. */
    *ret_t = NULL;
    if (TM_UNLIKELY(count < 0))
        return tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid %scount %lld", what, count);
    const struct tm_type *t = tm_type_get(dt);
    if (TM_UNLIKELY(!t))
        return tm_err(me, comm, MPI_ERR_TYPE, fn, "invalid %sdatatype %d", what, dt);
    if (TM_UNLIKELY(tm_buf_missing(buf, count, t)))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn, "%sbuffer is NULL with count %lld", what,
                      count);
    *ret_t = t;
    return MPI_SUCCESS;
}

int tm_coll_check_root(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                       int root)
{
    if (TM_UNLIKELY(root < 0 || root >= cr->c->size))
        return tm_err(me, comm, MPI_ERR_ROOT, fn, "invalid root %d", root);
    return MPI_SUCCESS;
}

int tm_coll_check_op(struct tm_rank *me, MPI_Comm comm, const char *fn, MPI_Op op,
                     const struct tm_type *t, struct tm_opref *ret)
{
    if (TM_UNLIKELY(tm_op_resolve(me, op, ret) < 0 || op == MPI_REPLACE || op == MPI_NO_OP))
        return tm_err(me, comm, MPI_ERR_OP, fn, "invalid operation %d", op);
    if (TM_UNLIKELY(!tm_opref_defined(ret, t)))
        return tm_err(me, comm, MPI_ERR_OP, fn, "operation %d is not defined for %s", op, t->name);
    return MPI_SUCCESS;
}

int tm_coll_check_counts(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what,
                         const MPI_Count *counts, const MPI_Aint *displs, int n)
{
    if (TM_UNLIKELY(!counts || !displs))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "%scounts or displacements are NULL", what);
    for (int k = 0; k < n; k++)
        if (TM_UNLIKELY(counts[k] < 0))
            return tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid %scount %lld for rank %d", what,
                          (long long)counts[k], k);
    return MPI_SUCCESS;
}

int tm_coll_widen(int n, int nside, const int *const *cin, const int *const *din,
                  const MPI_Count **cout, const MPI_Aint **dout, void **ret_mem)
{
    _Static_assert(sizeof(MPI_Count) == sizeof(MPI_Aint), "one array of 64-bit slots");
    size_t slots = 0;
    for (int i = 0; i < nside; i++)
        slots += (size_t)n * (!!cin[i] + !!din[i]);
    *ret_mem = NULL;
    for (int i = 0; i < nside; i++)
        cout[i] = NULL, dout[i] = NULL;
    if (!slots) return 0;
    MPI_Count *mem = malloc(sizeof *mem * slots);
    if (!mem) return -ENOMEM;
    MPI_Count *p = mem;
    for (int i = 0; i < nside; i++) {
        if (cin[i]) {
            for (int k = 0; k < n; k++)
                p[k] = cin[i][k];
            cout[i] = p;
            p += n;
        }
        if (din[i]) {
            MPI_Aint *d = (MPI_Aint *)p;
            for (int k = 0; k < n; k++)
                d[k] = din[i][k];
            dout[i] = d;
            p += n;
        }
    }
    *ret_mem = mem;
    return 0;
}

/* ---- Barrier ---- */

static size_t no_parts(const struct tm_cwork *w)
{
    (void)w;
    return 0;
}

static const struct tm_calgo barrier_algo = {MPIX_COLL_BARRIER, no_parts, NULL, tm_hier_barrier,
                                             NULL};

TM_API int PMPI_Barrier(MPI_Comm comm)
{
    TM_COLL_ENTRY("MPI_Barrier", comm);
    if (TM_UNLIKELY(cr->c->inter))
        return me->job->inter->barrier(me, cr, comm, "MPI_Barrier", NULL);
    if (cr->rank == 0)
        atomic_fetch_add_explicit(&me->job->coll_stats.ops[MPIX_COLL_BARRIER], 1,
                                  memory_order_relaxed);
    /* One barrier, not the engine's two: there is nothing to publish but the call number. */
    cr->nstarted = cr->ncoll;
    if (!cr->c->xjob) tm_coll_stamp(cr, TM_COLL_SIG_BARRIER);
    int began = tm_mst_begin(me, "MPI_Barrier", cr, comm, TMPI_PEER_ALL, TMPI_TAG_NONE);
    /* With more ranks than cores, the member that ends a barrier is the one that had a core
     * while the others waited, and a member it released may share that core.  If it runs on
     * into the program's next step and that step waits for one of them, the context switch
     * lands in that step: osu_bcast at 4 ranks on 2 cores, where the root's co-runner ended
     * every barrier and then waited in each Bcast for the root's turn (0.69 us on average
     * against Open MPI's 0.12-0.40).  A member whose Bcast found its root late (cr->cede)
     * therefore lets the others leave first, at the barrier right after that Bcast (the
     * Bcast-and-barrier loop).  Not always: where the next step needs nobody (a loop of
     * barriers) the yield is a switch more per round (osu_barrier 4 ranks 1.86 -> 2.36 us),
     * and after a Bcast whose members waited for this rank as root it is the one the next
     * step waits for (osu_bcast from 512 B 0.70 -> 2.5 us). */
    int cede = cr->cede && cr->cede_call + 1 == cr->ncoll;
    cr->ceded = tm_coll_barrier(me, cr) && cede && tm_wait_cede(me);
    int r = cr->c->xjob || tm_coll_net_spans(me, cr->c) || tm_coll_in_step(cr, TM_COLL_SIG_BARRIER)
                ? 0
                : tm_coll_out_of_step(me, cr);
    tm_mst_end(me, began);
    if (TM_UNLIKELY(r)) return tm_err(me, comm, MPI_ERR_OTHER, "MPI_Barrier", "%s", errno_text(r));
    return MPI_SUCCESS;
}
TM_ALIAS(Barrier)

TM_API int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    TM_COLL_ENTRY("MPI_Ibarrier", comm);
    if (TM_UNLIKELY(cr->c->inter)) {
        if (!request) return tm_err(me, comm, MPI_ERR_ARG, "MPI_Ibarrier", "request is NULL");
        return me->job->inter->barrier(me, cr, comm, "MPI_Ibarrier", request);
    }
    if (TM_UNLIKELY(!request))
        return tm_err(me, comm, MPI_ERR_ARG, "MPI_Ibarrier", "request is NULL");
    struct tm_cargs a = {.root = -1};
    return tm_coll_start(me, cr, comm, "MPI_Ibarrier", &barrier_algo, &a, request);
}
TM_ALIAS(Ibarrier)

/* ---- Bcast: part i copies the root's buffer into member i's (one copy per member) ---- */

static size_t per_member(const struct tm_cwork *w)
{
    return (size_t)w->n;
}

static int bcast_part(const struct tm_cwork *w, size_t i)
{
    const struct tm_cargs *r = tm_cw_arg(w, tm_cw_arg(w, w->wrank)->root);
    const struct tm_cargs *d = tm_cw_arg(w, (int)i);
    if (d == r) return 0;
    return tm_dt_copy(d->rbuf, (size_t)d->rcount, d->rtype, r->rbuf, (size_t)r->rcount, r->rtype)
               ? -EMSGSIZE
               : 0;
}

/* The ring of root r's Bcasts on c (comm_parts.h), made by whichever member needs it first. */
static struct tm_bcast_ring *bcast_ring(struct tm_slot *rs)
{
    struct tm_bcast_ring *g = atomic_load_explicit(&rs->bring, memory_order_acquire);
    if (TM_LIKELY(g)) return g;
    struct tm_bcast_ring *mine = aligned_alloc(TM_CACHELINE, sizeof *mine);
    if (!mine) return NULL;
    memset(mine, 0, sizeof *mine);
    if (atomic_compare_exchange_strong_explicit(&rs->bring, &g, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine;
    free(mine); /* another member's is in: g */
    return g;
}

/* Blocking Bcast on one node, with the least waiting: a member waits for its root only; no
 * barrier.  The barrier-and-parts engine would schedule every member twice per call, which on
 * an oversubscribed node (ranks > cores) is two rounds of context switches per Bcast.
 *
 * The root puts round k (its communicator's k-th blocking Bcast, the same number on every
 * member: MPI's collective order) in entry k % TM_BCAST_RING of its ring and wakes the members.
 * Up to TM_BCAST_EAGER bytes the data goes in the entry and the root returns: a Bcast does not
 * synchronise (MPI 4.1 §6.4), and a root that waited for every copy paid a round trip per call
 * where Open MPI's buffered sends pay none (osu_bcast at 2 ranks 0.44 -> 0.27 us, Open MPI 0.32;
 * issue 37).  Larger, or on carriers, the
 * entry holds the root's arguments, the members copy from its buffer, and the root waits for
 * them.  Either way the root reuses an entry only after every member read its last round, so
 * a member behind by up to TM_BCAST_RING - 1 rounds still finds its own. */
static int bcast_direct(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a)
{
    struct tm_comm *c = cr->c;
    struct tm_bcast_ring *g = bcast_ring(&c->coll.slot[a->root]);
    if (TM_UNLIKELY(!g)) return -ENOMEM;
    uint64_t k = ++cr->nbcast, others = (uint64_t)(c->size - 1);
    struct tm_bcast_entry *e = &g->e[k % TM_BCAST_RING];
    if (cr->rank == a->root) {
        size_t bytes = (size_t)a->rcount * a->rtype->psize;
        tm_coll_wait_ctr(me, &e->reads, e->uses * others); /* its last round was read */
        e->uses++;
        /* Carried ranks keep the lockstep: a root that ran ahead on its carrier made
         * osu_bcast at 16 ranks on 2 carriers 2.2x slower (27.6 against 12.3 us), its members
         * taking the rounds in bursts only after it parked; the members follow the root's
         * choice, which it writes in the entry. */
        if (bytes <= TM_BCAST_EAGER && !tm_wait_parks(me)) {
            e->args = NULL;
            e->bytes = bytes;
            if (bytes) tm_type_pack(e->data, a->rbuf, (size_t)a->rcount, a->rtype, 0, bytes);
        } else {
            e->args = a;
        }
        e->sig = a->sig;
        cr->cede = 0;
        cr->cede_call = cr->ncoll;
        atomic_store_explicit(&e->gen, k, memory_order_seq_cst);
        tm_coll_wake_members(me, c);
        if (!e->args) return 0;
        tm_coll_wait_ctr(me, &e->reads, e->uses * others);
        return 0;
    }
    int late = atomic_load_explicit(&e->gen, memory_order_acquire) < k;
    tm_coll_wait_ctr(me, &e->gen, k);
    const struct tm_cargs *r = e->args;
    /* An eager round's root does not wait for its members: one that came before it lets the
     * others leave its next barrier first (PMPI_Barrier), and keeps doing so while that finds
     * the rounds in place.  A root that waits for the copies will wait for it anyway. */
    if (late)
        cr->cede = !r;
    else if (r || !cr->ceded)
        cr->cede = 0;
    cr->cede_call = cr->ncoll;
    int err;
    if (TM_UNLIKELY(atomic_load_explicit(&c->coll.failures, memory_order_acquire)) &&
        e->sig != a->sig) {
        err = -EPROTO; /* the root's round is of another call: read, not copied */
    } else if (!r) {
        size_t have = (size_t)a->rcount * a->rtype->psize;
        err = e->bytes > have ? -EMSGSIZE : 0;
        size_t n = e->bytes < have ? e->bytes : have;
        if (n) tm_type_unpack(a->rbuf, (size_t)a->rcount, a->rtype, 0, e->data, n);
    } else {
        err = tm_dt_copy(a->rbuf, (size_t)a->rcount, a->rtype, r->rbuf, (size_t)r->rcount, r->rtype)
                  ? -EMSGSIZE
                  : 0;
    }
    /* after this the root may change its buffer and return, or reuse the entry */
    uint64_t done = atomic_fetch_add_explicit(&e->reads, 1, memory_order_seq_cst) + 1;
    if (done % others == 0) tm_wake(&tm_job_rank(me->job, tm_comm_world_rank(c, a->root))->waker);
    return err;
}

static const struct tm_calgo bcast_algo = {MPIX_COLL_BCAST, per_member, bcast_part, tm_hier_bcast,
                                           bcast_direct};

static int bcast_common(const char *fn, void *buffer, int count, MPI_Datatype datatype, int root,
                        MPI_Comm comm, MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    if (TM_UNLIKELY(nb && !request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    if (TM_UNLIKELY(cr->c->inter))
        return me->job->inter->bcast(me, cr, comm, fn, buffer, count, datatype, root,
                                     nb ? request : NULL);
    const struct tm_type *t;
    TM_COLL_CHECK(tm_coll_check_buf(me, comm, fn, "", buffer, count, datatype, &t));
    TM_COLL_CHECK(tm_coll_check_root(me, cr, comm, fn, root));
    if (TM_UNLIKELY(buffer == MPI_IN_PLACE))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed");
    struct tm_cargs a = {.rbuf = buffer, .rcount = count, .rtype = t, .root = root};
    return tm_coll_start(me, cr, comm, fn, &bcast_algo, &a, nb ? request : NULL);
}

TM_API int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    /* as MPI_Bcast_c decides, so that the two forms of one signature meet (coll_c_pieces.h) */
    if (TM_UNLIKELY(tm_coll_c_big(comm, count, datatype)))
        return tm_bcast_pieces(buffer, count, datatype, root, comm);
    return bcast_common("MPI_Bcast", buffer, count, datatype, root, comm, NULL, 0);
}
TM_ALIAS(Bcast)

TM_API int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                       MPI_Request *request)
{
    return bcast_common("MPI_Ibcast", buffer, count, datatype, root, comm, request, 1);
}
TM_ALIAS(Ibcast)

/* ---- counters ---- */

TM_API int MPIX_Coll_counters(int kind, MPI_Count *operations, MPI_Count *net_messages)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPIX_Coll_counters", TM_ERR_NOINIT);
    if (kind < 0 || kind >= MPIX_COLL_KINDS)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPIX_Coll_counters", "invalid kind %d",
                      kind);
    struct tm_coll_stats *s = &me->job->coll_stats;
    if (operations)
        *operations = (MPI_Count)atomic_load_explicit(&s->ops[kind], memory_order_relaxed);
    if (net_messages)
        *net_messages = (MPI_Count)atomic_load_explicit(&s->net[kind], memory_order_relaxed);
    return MPI_SUCCESS;
}
