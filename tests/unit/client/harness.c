/* harness.c — a unit-test stand-in for the agent's side of proto/svc/svc.h (harness.h). */
#include "harness.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "msg_hdr.h"
#include "netd_hdr.h"
#include "svc.h"

#define TH_MAX_PAYLOAD ((size_t)16 << 20) /* the harness agent's max_payload */
#define TH_POOL_DEFAULT ((size_t)256 << 20)
_Static_assert(TM_MSG_NTYPES <= 16, "th_result.frames counts every protocol type");

/* One frame in flight.  Inline mode: the payload was copied into data[] and done already ran;
 * later mode: payload points into the sender's buffer until done runs after delivery. */
struct th_frame {
    struct th_frame *next;
    int src_node, chan;
    uint8_t hdr[NETD_HDR_SIZE];
    const void *payload;
    size_t len;
    void (*done)(void *arg, int err);
    void *arg;
    unsigned char data[];
};

struct th_fifo {
    struct th_frame *head, *tail;
};

struct th_job;

/* A simulated node: its libtmpi job state, its incoming frame queues (one per source node and
 * channel, all under qlock) with the daemon that drains them, and its buffer pool. */
struct th_node {
    struct th_job *job;
    int index;
    void *state; /* job lock; published to the daemon through state_ready */
    struct tmpi_client_ops ops;
    int have_state;
    _Atomic int state_ready;
    pthread_mutex_t qlock;
    pthread_cond_t qcond;
    struct th_fifo *in;       /* [src node * 2 + chan] */
    uint64_t *in_seq;         /* last frame number queued on each of in[] (qlock) */
    unsigned next_fifo;       /* round robin over the queues (qlock) */
    _Atomic(uint64_t) broken; /* bit k: the link from this node to node k is down */
    int stop;                 /* qlock */
    pthread_t daemon;
    int have_daemon;
    size_t pool_cap;
    _Atomic size_t pool_used;
};

struct th_job {
    struct tmpi_rank_info *infos;
    int32_t *node_of_rank, *local_rank_of;
    /* the harness's own copy of node_of_rank: tests may rewrite the infos they are handed */
    int *home;
    int size, nnodes;
    struct th_node *nodes;
    int done_mode;
    pthread_mutex_t lock;
    _Atomic int cancelled;
    _Atomic int runnable;
    _Atomic int phase_init, phase_fin;
    /* frames: counted under lock, quiet signalled when none is left */
    pthread_cond_t quiet;
    long inflight;
    _Atomic uint64_t nsent;
    _Atomic uint64_t frames[16], hold_acks, pool_refused; /* frames by protocol type */
    _Atomic int net_faults; /* what the agent's checks would have refused */
    /* results: lock.  first_failed: the rank whose failure ended the job (the others then
     * leave their waits with code 1, as in the agent), -1 while none failed */
    int *codes;
    int first_failed;
    int aborted, abort_code;
    char abort_why[256];
    th_rank_fn fn;
    void *arg;
};

struct th_thread {
    struct th_job *job;
    int rank;
    pthread_t tid;
};

/* The test program runs one job at a time: this is it. */
static struct th_job *th_cur_job;
static __thread struct th_thread *th_self;
static __thread struct th_node *th_daemon_self; /* set on daemon threads */
static __thread struct th_node *th_child_node;  /* set on threads a rank started */

static const struct tmpi_rank_info *svc_rank_self(void)
{
    return th_self ? &th_self->job->infos[th_self->rank] : NULL;
}

static struct th_node *node_of_self(void)
{
    if (th_daemon_self) return th_daemon_self;
    if (th_child_node) return th_child_node;
    if (!th_self) {
        fprintf(stderr, "harness: agent service called from a thread that is neither a rank "
                        "nor a daemon\n");
        abort();
    }
    struct th_job *j = th_self->job;
    return &j->nodes[j->home[th_self->rank]];
}

int th_rank_mpi(int world_rank, struct tmpi_rank_mpi *out)
{
    struct th_job *j = th_cur_job;
    if (!j || world_rank < 0 || world_rank >= j->size) return -EINVAL;
    struct th_node *nd = &j->nodes[j->home[world_rank]];
    pthread_mutex_lock(&j->lock);
    void *st = nd->have_state ? nd->state : NULL;
    pthread_mutex_unlock(&j->lock);
    if (!st || !nd->ops.rank_mpi) return -ENOENT;
    return nd->ops.rank_mpi(st, world_rank, out);
}

static int svc_job_state(void *(*create)(const struct tmpi_rank_info *, void *), void *arg,
                         const struct tmpi_client_ops *ops, void **ret_state)
{
    struct th_job *j = th_self->job;
    struct th_node *nd = node_of_self();
    pthread_mutex_lock(&j->lock);
    if (!nd->have_state) {
        nd->state = create(&j->infos[th_self->rank], arg);
        nd->have_state = 1;
        if (nd->state) nd->ops = *ops;
    }
    void *st = nd->state;
    pthread_mutex_unlock(&j->lock);
    if (st && !atomic_load(&nd->state_ready)) {
        pthread_mutex_lock(&nd->qlock);
        atomic_store(&nd->state_ready, 1);
        pthread_cond_broadcast(&nd->qcond);
        pthread_mutex_unlock(&nd->qlock);
    }
    if (!st) return -ENOMEM;
    *ret_state = st;
    return 0;
}

/* The job is torn down early: every node's agent wakes its ranks, which leave their waits. */
static void cancel_job(struct th_job *j)
{
    if (atomic_exchange(&j->cancelled, 1)) return;
    for (int k = 0; k < j->nnodes; k++) {
        pthread_mutex_lock(&j->lock);
        void *st = j->nodes[k].state;
        void (*wake)(void *) = j->nodes[k].ops.wake_all;
        pthread_mutex_unlock(&j->lock);
        if (st && wake) wake(st);
    }
}

/* A rank ended with code.  A failed one ends the job, as the agent does (job_rank_finished):
 * its peers would otherwise wait for it for ever, in MPI_Finalize at the latest, and a failed
 * check would show as a hang. */
static void record(struct th_job *j, int rank, int code)
{
    pthread_mutex_lock(&j->lock);
    j->codes[rank] = code;
    int first = code != 0 && j->first_failed < 0;
    if (first) j->first_failed = rank;
    pthread_mutex_unlock(&j->lock);
    if (first) cancel_job(j);
}

__attribute__((noreturn)) static void svc_rank_exit(int code)
{
    record(th_self->job, th_self->rank, code);
    pthread_exit(NULL);
}

__attribute__((noreturn)) static void svc_job_abort(int code, const char *why)
{
    struct th_job *j = th_self->job;
    pthread_mutex_lock(&j->lock);
    if (!j->aborted) {
        j->aborted = 1;
        j->abort_code = code;
        snprintf(j->abort_why, sizeof j->abort_why, "%s", why);
    }
    pthread_mutex_unlock(&j->lock);
    record(j, th_self->rank, code);
    cancel_job(j); /* also when code is 0 */
    pthread_exit(NULL);
}

static void svc_rank_mpi_phase(int phase)
{
    struct th_job *j = th_self->job;
    if (phase == TMPI_PHASE_INIT)
        atomic_fetch_add(&j->phase_init, 1);
    else if (phase == TMPI_PHASE_FINALIZED)
        atomic_fetch_add(&j->phase_fin, 1);
}

static int svc_job_cancelled(void)
{
    return atomic_load(&th_self->job->cancelled);
}
static int svc_runnable_ranks(void)
{
    return atomic_load(&th_cur_job->runnable);
}
static void svc_rank_blocking(int delta)
{
    atomic_fetch_add(&th_self->job->runnable, delta);
}

/* ---- the simulated pool: a header in front of each buffer says whose and how big ---- */

struct pool_hdr {
    struct th_node *node;
    size_t bytes;
    uint64_t magic;
} __attribute__((aligned(16)));
#define POOL_MAGIC 0x706f6f6c62756621ull

static void *svc_pool_alloc(size_t bytes)
{
    struct th_node *nd = node_of_self();
    if (bytes == 0) {
        fprintf(stderr, "harness: pool_alloc(0) (the agent's pool refuses it)\n");
        abort();
    }
    size_t used = atomic_fetch_add(&nd->pool_used, bytes);
    if (used + bytes > nd->pool_cap) {
        atomic_fetch_sub(&nd->pool_used, bytes);
        atomic_fetch_add(&nd->job->pool_refused, 1);
        return NULL;
    }
    struct pool_hdr *h = malloc(sizeof *h + bytes);
    if (!h) {
        atomic_fetch_sub(&nd->pool_used, bytes);
        return NULL;
    }
    *h = (struct pool_hdr){.node = nd, .bytes = bytes, .magic = POOL_MAGIC};
    return h + 1;
}

static void svc_pool_free(void *p, size_t bytes)
{
    struct pool_hdr *h = (struct pool_hdr *)p - 1;
    if (h->magic != POOL_MAGIC || h->bytes != bytes) {
        fprintf(stderr,
                "harness: pool_free(%p, %zu) of a buffer that is not a pool buffer of "
                "that size (%zu)\n",
                p, bytes, h->magic == POOL_MAGIC ? h->bytes : 0);
        abort();
    }
    h->magic = 0;
    atomic_fetch_sub(&h->node->pool_used, bytes);
    free(h);
}

/* ---- the simulated network ---- */

static void fifo_push(struct th_fifo *q, struct th_frame *f)
{
    f->next = NULL;
    if (q->tail)
        q->tail->next = f;
    else
        q->head = f;
    q->tail = f;
}

static struct th_frame *fifo_pop(struct th_fifo *q)
{
    struct th_frame *f = q->head;
    if (f) {
        q->head = f->next;
        if (!q->head) q->tail = NULL;
    }
    return f;
}

static void inflight_add(struct th_job *j, long d)
{
    pthread_mutex_lock(&j->lock);
    j->inflight += d;
    if (j->inflight == 0) pthread_cond_broadcast(&j->quiet);
    pthread_mutex_unlock(&j->lock);
}

/* Queues a frame; with later, the payload is read (and done called) at delivery. */
static int net_queue(struct th_node *from, int to, int channel, const struct netd_hdr *h,
                     const void *payload, int later, void (*done)(void *, int), void *arg)
{
    struct th_job *j = from->job;
    if (to < 0 || to >= j->nnodes || to == from->index ||
        (channel != TMPI_CH_P2P && channel != TMPI_CH_COLL) || (h->payload_len && !payload))
        return -EINVAL;
    size_t len = h->payload_len;
    struct th_frame *f = malloc(sizeof *f + (later ? 0 : len));
    if (!f) return -ENOMEM;
    struct netd_hdr c = *h;
    c.job_id = j->infos[0].job_id; /* the agent sets these */
    c.flags = 0;
    c.channel = (uint8_t)channel;
    netd_hdr_encode(&c, f->hdr);
    f->src_node = from->index;
    f->chan = channel - 1;
    f->len = len;
    f->payload = later ? payload : NULL;
    f->done = later ? done : NULL;
    f->arg = arg;
    if (!later && payload) memcpy(f->data, payload, len); /* no payload: len is 0 */
    inflight_add(j, 1);
    struct th_node *dst = &j->nodes[to];
    pthread_mutex_lock(&dst->qlock);
    /* numbered in queue order, as netd numbers a link's frames in wire order */
    netd_hdr_set_seq(f->hdr, ++dst->in_seq[from->index * 2 + f->chan]);
    fifo_push(&dst->in[from->index * 2 + f->chan], f);
    pthread_cond_signal(&dst->qcond);
    pthread_mutex_unlock(&dst->qlock);
    return 0;
}

static int svc_net_send(void *net, int node, int channel, unsigned flags, const struct netd_hdr *h,
                        const void *payload, void (*done)(void *arg, int err), void *arg)
{
    /* one queued message per frame whatever its writes: TMPI_NET_WHOLE changes nothing here */
    (void)flags;
    struct th_node *from = net;
    struct th_job *j = from->job;
    if (node >= 0 && node < 64 && (atomic_load(&from->broken) >> node & 1)) return -EPIPE;
    uint64_t k = atomic_fetch_add(&j->nsent, 1);
    int later = j->done_mode == TH_DONE_LATER || (j->done_mode == TH_DONE_MIXED && k % 3 == 1);
    int r = net_queue(from, node, channel, h, payload, later && done, done, arg);
    if (r == 0 && !later && done) done(arg, 0);
    return r;
}

int th_net_inject(int from, int to, int channel, const struct netd_hdr *h)
{
    struct th_job *j = th_cur_job;
    if (!j || j->nnodes < 2 || from < 0 || from >= j->nnodes) return -EINVAL;
    return net_queue(&j->nodes[from], to, channel, h, NULL, 0, NULL, NULL);
}

int th_net_break(int from, int to)
{
    struct th_job *j = th_cur_job;
    if (!j || from < 0 || from >= j->nnodes || to < 0 || to >= j->nnodes || to >= 64)
        return -EINVAL;
    atomic_fetch_or(&j->nodes[from].broken, (uint64_t)1 << to);
    return 0;
}

static void fault(struct th_job *j, int node, const char *what, const struct netd_hdr *h)
{
    atomic_fetch_add(&j->net_faults, 1);
    fprintf(stderr,
            "harness: node %d: frame refused by the agent's checks: %s (frame %llu, rank %d "
            "-> %d)\n",
            node, what, (unsigned long long)h->seq, h->src_rank, h->dst_rank);
}

/* Delivers one frame as the agent's receive daemon does: decode, check, net_header, payload
 * into the buffer it returned (or dropped), net_frame. */
static void deliver(struct th_node *nd, struct th_frame *f)
{
    struct th_job *j = nd->job;
    struct netd_hdr h;
    const void *payload = f->payload ? f->payload : f->data;
    const char *bad = NULL;
    if (netd_hdr_decode(f->hdr, TH_MAX_PAYLOAD, &h) < 0) {
        memset(&h, 0, sizeof h);
        bad = "bad header";
    } else if (h.job_id != j->infos[0].job_id) {
        bad = "job id";
    } else if (h.src_rank >= j->size || j->home[h.src_rank] != f->src_node) {
        bad = "source rank not on the sending node";
    } else if (h.dst_rank >= j->size || j->home[h.dst_rank] != nd->index) {
        bad = "destination rank not on this node";
    } else if (h.channel != f->chan + 1) {
        bad = "channel does not match the link";
    }
    if (bad) {
        fault(j, nd->index, bad, &h);
        return;
    }
    /* statistics for the tests: the protocol half, as libtmpi will read it */
    struct tm_msg_hdr m;
    if (tm_msg_hdr_decode(&h, &m) == 0) {
        atomic_fetch_add(&j->frames[m.type], 1);
        if (m.type == TM_MSG_ACK && (m.flags & TM_MSG_F_HOLD)) atomic_fetch_add(&j->hold_acks, 1);
    }
    void *ctx = NULL;
    void *buf = nd->ops.net_header(nd->state, f->src_node, &h, &ctx);
    if (buf && h.payload_len) memcpy(buf, payload, h.payload_len);
    nd->ops.net_frame(nd->state, f->src_node, &h, ctx);
}

static struct th_frame *next_frame(struct th_node *nd)
{
    unsigned nq = (unsigned)nd->job->nnodes * 2;
    for (unsigned i = 0; i < nq; i++) {
        unsigned q = (nd->next_fifo + i) % nq;
        struct th_frame *f = fifo_pop(&nd->in[q]);
        if (f) {
            nd->next_fifo = q + 1;
            return f;
        }
    }
    return NULL;
}

static void *daemon_main(void *p)
{
    struct th_node *nd = p;
    struct th_job *j = nd->job;
    th_daemon_self = nd;
    pthread_mutex_lock(&nd->qlock);
    for (;;) {
        struct th_frame *f = NULL;
        /* Nothing of a job arrives before the node's state exists (svc.h). */
        if (atomic_load(&nd->state_ready) || nd->stop) f = next_frame(nd);
        if (!f) {
            if (nd->stop) break;
            pthread_cond_wait(&nd->qcond, &nd->qlock);
            continue;
        }
        pthread_mutex_unlock(&nd->qlock);
        /* A torn-down job's frames are dropped: its ranks' buffers may be gone. */
        int drop = !atomic_load(&nd->state_ready) || atomic_load(&j->cancelled);
        if (!drop) deliver(nd, f);
        if (f->done) f->done(f->arg, drop ? -ECANCELED : 0);
        free(f);
        inflight_add(j, -1);
        pthread_mutex_lock(&nd->qlock);
    }
    pthread_mutex_unlock(&nd->qlock);
    return NULL;
}

/* Exported: libtmpi finds it with dlsym(RTLD_DEFAULT, "tmpi_svc") (link with export_dynamic). */
__attribute__((visibility("default"))) struct tmpi_svc tmpi_svc = {
    .abi = TMPI_SVC_ABI,
    .rank_self = svc_rank_self,
    .job_state = svc_job_state,
    .rank_exit = svc_rank_exit,
    .job_abort = svc_job_abort,
    .rank_mpi_phase = svc_rank_mpi_phase,
    .job_cancelled = svc_job_cancelled,
    .runnable_ranks = svc_runnable_ranks,
    .rank_blocking = svc_rank_blocking,
    .net_send = svc_net_send,
    .pool_alloc = svc_pool_alloc,
    .pool_free = svc_pool_free,
};

/* Threads a rank starts (libtmpi's runners of non-blocking collectives across nodes) reach
 * the agent's services as their rank's node (the agent's pool and links serve any thread);
 * they are not ranks (rank_self is NULL there). */
struct th_child {
    void *(*fn)(void *);
    void *arg;
    struct th_node *node;
};

static void *child_main(void *p)
{
    struct th_child c = *(struct th_child *)p;
    free(p);
    th_child_node = c.node;
    return c.fn(c.arg);
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

__attribute__((visibility("default"))) int pthread_create(pthread_t *t, const pthread_attr_t *attr,
                                                          void *(*fn)(void *), void *arg)
{
    static _Atomic(pthread_create_fn) real;
    pthread_create_fn rf = atomic_load(&real);
    if (!rf) {
        rf = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
        atomic_store(&real, rf);
    }
    if (!rf) return ENOSYS;
    if (!th_self && !th_child_node) return rf(t, attr, fn, arg);
    struct th_child *c = malloc(sizeof *c);
    if (!c) return EAGAIN;
    *c = (struct th_child){fn, arg, node_of_self()};
    int r = rf(t, attr, child_main, c);
    if (r) free(c);
    return r;
}

static void *rank_main(void *p)
{
    struct th_thread *t = p;
    th_self = t;
    int code = t->job->fn(t->rank, t->job->size, t->job->arg);
    record(t->job, t->rank, code);
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits until no frame is in flight (up to 60 s); 0 or -ETIMEDOUT. */
static int wait_quiet(struct th_job *j)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 60;
    int r = 0;
    pthread_mutex_lock(&j->lock);
    while (j->inflight > 0 && r == 0)
        r = pthread_cond_timedwait(&j->quiet, &j->lock, &dl);
    long left = j->inflight;
    pthread_mutex_unlock(&j->lock);
    if (left) {
        fprintf(stderr, "harness: %ld frames still in flight after the ranks ended\n", left);
        return -ETIMEDOUT;
    }
    return 0;
}

static void setup_nodes(struct th_job *j, const struct th_opts *o)
{
    int n = j->size, nn = j->nnodes;
    int per = (n + nn - 1) / nn;
    int *count = calloc((size_t)nn, sizeof *count);
    if (!count) abort();
    for (int i = 0; i < n; i++) {
        int node = nn == 1 ? 0 : o->round_robin ? i % nn : i / per;
        j->node_of_rank[i] = node;
        j->home[i] = node;
        j->local_rank_of[i] = count[node]++;
    }
    for (int k = 0; k < nn; k++) {
        struct th_node *nd = &j->nodes[k];
        nd->job = j;
        nd->index = k;
        nd->pool_cap = o->pool_bytes ? o->pool_bytes : TH_POOL_DEFAULT;
        if (o->pool_of && o->pool_of[k]) nd->pool_cap = o->pool_of[k];
        pthread_mutex_init(&nd->qlock, NULL);
        pthread_cond_init(&nd->qcond, NULL);
        nd->in = calloc((size_t)nn * 2, sizeof *nd->in);
        nd->in_seq = calloc((size_t)nn * 2, sizeof *nd->in_seq);
        if (!nd->in || !nd->in_seq) abort();
    }
    for (int i = 0; i < n; i++) {
        int node = j->node_of_rank[i];
        j->infos[i].node = node;
        j->infos[i].nnodes = nn;
        j->infos[i].local_rank = j->local_rank_of[i];
        j->infos[i].local_size = count[node];
        j->infos[i].net = nn > 1 ? &j->nodes[node] : NULL;
    }
    free(count);
}

int th_run(const struct th_opts *o, th_rank_fn fn, void *arg, struct th_result *ret)
{
    int n = o->nranks;
    int nn = o->nnodes > 1 ? o->nnodes : 1;
    if (nn > n) nn = n;
    struct th_job *j = calloc(1, sizeof *j);
    struct th_thread *th = calloc((size_t)n, sizeof *th);
    if (!j || !th) abort();
    j->size = n;
    j->nnodes = nn;
    j->done_mode = o->done_mode;
    j->fn = fn;
    j->arg = arg;
    j->infos = calloc((size_t)n, sizeof *j->infos);
    j->node_of_rank = calloc((size_t)n, sizeof(int32_t));
    j->local_rank_of = calloc((size_t)n, sizeof(int32_t));
    j->codes = calloc((size_t)n, sizeof(int));
    j->home = calloc((size_t)n, sizeof(int));
    j->nodes = calloc((size_t)nn, sizeof *j->nodes);
    if (!j->infos || !j->node_of_rank || !j->local_rank_of || !j->codes || !j->home || !j->nodes)
        abort();
    static uint64_t next_job_id = 1;
    uint64_t id = next_job_id++;
    for (int i = 0; i < n; i++) {
        j->infos[i] = (struct tmpi_rank_info){.job_id = id,
                                              .rank = i,
                                              .size = n,
                                              .hostname = "harness",
                                              .node_of_rank = j->node_of_rank,
                                              .local_rank_of = j->local_rank_of};
    }
    j->first_failed = -1;
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->quiet, NULL);
    setup_nodes(j, o);
    atomic_init(&j->runnable, n);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    tmpi_svc.ncpus = o->ncpus ? o->ncpus : (int)(cpus > 0 ? cpus : 1);
    /* the agent always fills these from tmpid.conf; 0 here picks its defaults */
    tmpi_svc.spin_ns = o->spin_ns ? o->spin_ns : 20000;
    tmpi_svc.eager_limit = o->eager_limit ? o->eager_limit : 16384;
    tmpi_svc.coop_min = o->coop_min == TH_COOP_OFF ? 0 : o->coop_min ? o->coop_min : 256 * 1024;
    tmpi_svc.net_eager_limit = o->net_eager_limit ? o->net_eager_limit : 100 * 1024;
    th_cur_job = j;

    if (nn > 1)
        for (int k = 0; k < nn; k++) {
            if (pthread_create(&j->nodes[k].daemon, NULL, daemon_main, &j->nodes[k]) != 0) {
                fprintf(stderr, "harness: pthread_create failed\n");
                abort();
            }
            j->nodes[k].have_daemon = 1;
        }

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    double t0 = now();
    for (int i = 0; i < n; i++) {
        th[i].job = j;
        th[i].rank = i;
        if (pthread_create(&th[i].tid, &attr, rank_main, &th[i]) != 0) {
            fprintf(stderr, "harness: pthread_create failed\n");
            abort();
        }
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i].tid, NULL);
    double t1 = now();
    pthread_attr_destroy(&attr);

    /* The agent destroys a node's state only once nothing of the job is in flight. */
    int quiet_err = nn > 1 ? wait_quiet(j) : 0;
    for (int k = 0; k < nn; k++) {
        struct th_node *nd = &j->nodes[k];
        if (!nd->have_daemon) continue;
        pthread_mutex_lock(&nd->qlock);
        nd->stop = 1;
        pthread_cond_broadcast(&nd->qcond);
        pthread_mutex_unlock(&nd->qlock);
        pthread_join(nd->daemon, NULL);
    }

    struct th_result res = {.failed_rank = j->first_failed, .seconds = t1 - t0};
    if (res.failed_rank >= 0) res.code = j->codes[res.failed_rank];
    res.aborted = j->aborted;
    res.abort_code = j->abort_code;
    snprintf(res.abort_why, sizeof res.abort_why, "%s", j->abort_why);
    for (int t = 0; t < 16; t++)
        res.frames[t] = atomic_load(&j->frames[t]);
    res.hold_acks = atomic_load(&j->hold_acks);
    res.pool_refused = atomic_load(&j->pool_refused);
    int leak = 0;
    for (int k = 0; k < nn; k++) {
        struct th_node *nd = &j->nodes[k];
        if (nd->state && nd->ops.destroy) nd->ops.destroy(nd->state);
        size_t used = atomic_load(&nd->pool_used);
        if (used) {
            fprintf(stderr, "harness: node %d: %zu pool bytes not given back at job end\n", k,
                    used);
            leak = 1;
        }
        for (int q = 0; q < nn * 2; q++) {
            struct th_frame *f;
            while ((f = fifo_pop(&nd->in[q])))
                free(f);
        }
        free(nd->in);
        free(nd->in_seq);
        pthread_mutex_destroy(&nd->qlock);
        pthread_cond_destroy(&nd->qcond);
    }
    int faults = atomic_load(&j->net_faults);
    th_cur_job = NULL;
    pthread_cond_destroy(&j->quiet);
    pthread_mutex_destroy(&j->lock);
    free(j->nodes);
    free(j->infos);
    free(j->node_of_rank);
    free(j->local_rank_of);
    free(j->codes);
    free(j->home);
    free(j);
    free(th);
    if (ret) *ret = res;
    return res.failed_rank >= 0 || res.aborted || leak || faults || quiet_err;
}

int th_main(int argc, char **argv, const struct th_test *tests)
{
    int failed = 0, ran = 0;
    for (const struct th_test *t = tests; t->name; t++) {
        int want = argc <= 1;
        for (int i = 1; i < argc; i++)
            want |= strcmp(argv[i], t->name) == 0;
        if (!want) continue;
        double t0 = now();
        int r = t->run();
        printf("%s %s (%.3f s)\n", r ? "FAIL" : "PASS", t->name, now() - t0);
        fflush(stdout);
        failed += r != 0;
        ran++;
    }
    printf("%d tests, %d failed\n", ran, failed);
    return failed ? 1 : (ran ? 0 : 1);
}
