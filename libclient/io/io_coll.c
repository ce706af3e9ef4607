/* io_coll.c — collective data access (MPI 4.0 §14.4): two-phase collective buffering with one
 * aggregator per node.
 *
 * Ranks of one node are threads of one process, so a node's ranks need not send their data
 * anywhere: each publishes a pointer to its prepared access (its file segments, each pointing
 * into the rank's own buffer) to the node's leader, the lowest rank of the file's communicator
 * on the node, and waits while the leader works.  The leaders split the accessed file range
 * into cb_nodes contiguous file domains (one per aggregator, boundaries aligned to
 * striping_unit or TM_IO_ALIGN_DEFAULT) and walk them in rounds of cb_buffer_size:
 *   - an aggregator's own node's pieces in the round's window are written with pwritev (read
 *     with preadv) straight from (into) the ranks' buffers: no copy at all;
 *   - pieces of other nodes travel once, leader to aggregator, in one MPI_Alltoallv of the
 *     leaders per round (offsets and lengths, then the data; reads get the data back the
 *     same way), and the aggregator writes them from the receive buffer with the rest.
 * All pieces of a window go to the file sorted by offset, every file-contiguous run as one
 * pwritev/preadv, so the file sees few, large, aligned transfers.  Holes are not filled by a
 * read-modify-write: a run ends at a hole (nothing another rank wrote there is overwritten).
 *
 * romio_cb_write / romio_cb_read "disable", and atomic mode (where each rank's access must be
 * one unit under its own lock), make every rank move its own data; "automatic" (the default)
 * aggregates unless every rank's access is one contiguous piece of at least cb_buffer_size / 4
 * (large independent transfers gain nothing from a detour through one thread).  Every rank
 * returns the same error class: the worst of all. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "errh.h"
#include "io.h"
#include "job.h"

/* One piece an aggregator moves in a window; src orders pieces of equal offset (rank order). */
struct piece {
    int64_t off;
    size_t len;
    char *mem;
    size_t src;
};

struct plist {
    struct piece *v;
    size_t n, cap, bytes;
};

static int padd(struct plist *p, int64_t off, size_t len, char *mem, size_t src)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        struct piece *v = realloc(p->v, cap * sizeof *v);
        if (!v) return MPI_ERR_NO_MEM;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = (struct piece){off, len, mem, src};
    p->bytes += len;
    return MPI_SUCCESS;
}

static int by_off(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    return x->src < y->src ? -1 : x->src > y->src;
}

/* Appends the pieces of access a inside [ws, we) (a's segments are in file order). */
static int clip(struct plist *p, const struct tm_io_acc *a, int64_t ws, int64_t we, size_t src)
{
    const struct tm_io_seg *v = a->segs.v;
    size_t lo = 0, hi = a->segs.n; /* first segment ending after ws */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].off + (int64_t)v[mid].len <= ws)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < a->segs.n && v[i].off < we; i++) {
        int64_t s = v[i].off > ws ? v[i].off : ws;
        int64_t e = v[i].off + (int64_t)v[i].len;
        if (e > we) e = we;
        if (e <= s) continue;
        int err = padd(p, s, (size_t)(e - s), v[i].mem + (s - v[i].off), src);
        if (err) return err;
    }
    return MPI_SUCCESS;
}

/* Moves a window's pieces (sorted here) with the aggregator's descriptor. */
static int window_io(struct tm_file *f, struct plist *p, int write)
{
    if (!p->n) return MPI_SUCCESS;
    qsort(p->v, p->n, sizeof *p->v, by_off);
    struct tm_io_seg *s = malloc(p->n * sizeof *s);
    if (!s) return MPI_ERR_NO_MEM;
    for (size_t i = 0; i < p->n; i++)
        s[i] = (struct tm_io_seg){p->v[i].off, p->v[i].len, p->v[i].mem};
    size_t done;
    int err = write
                  ? tm_io_pwrite_segs(f->fd, s, p->n, &done)
                  : tm_io_pread_segs(f->fd, s, p->n, f->h.ds_read ? f->h.cb_buffer_size : 0, &done);
    free(s);
    return err;
}

/* What the leaders agree on before the rounds. */
struct plan {
    int nl, me_l, naggr;
    int64_t align, W, D, base;
    int64_t *dlo, *dhi; /* per aggregator: data range in its domain (dlo >= dhi: none) */
    int64_t rounds;
};

static int64_t rdown(int64_t x, int64_t a)
{
    return x / a * a;
}

static int make_plan(struct tm_file *f, struct tm_io_acc **accs, int nn, struct plan *pl)
{
    PMPI_Comm_size(f->leaders, &pl->nl);
    PMPI_Comm_rank(f->leaders, &pl->me_l);
    pl->naggr = f->h.cb_nodes < pl->nl ? f->h.cb_nodes : pl->nl;
    long long lh[2] = {-(long long)INT64_MAX, -(long long)INT64_MAX}, g[2];
    for (int k = 0; k < nn; k++) {
        const struct tm_io_segs *s = &accs[k]->segs;
        if (!s->n) continue;
        if (-s->lo > lh[0]) lh[0] = -s->lo;
        if (s->hi > lh[1]) lh[1] = s->hi;
    }
    PMPI_Allreduce(lh, g, 2, MPI_LONG_LONG, MPI_MAX, f->leaders);
    int64_t lo = -g[0], hi = g[1];
    pl->rounds = 0;
    if (hi <= lo) return MPI_SUCCESS; /* nobody accesses anything */
    int64_t per = (hi - lo + pl->naggr - 1) / pl->naggr;
    pl->align = f->h.striping_unit                    ? (int64_t)f->h.striping_unit
                : per >= (int64_t)TM_IO_ALIGN_DEFAULT ? (int64_t)TM_IO_ALIGN_DEFAULT
                                                      : 4096;
    pl->base = rdown(lo, pl->align);
    pl->D = (hi - pl->base + pl->naggr - 1) / pl->naggr;
    pl->D = (pl->D + pl->align - 1) / pl->align * pl->align;
    pl->W = rdown((int64_t)f->h.cb_buffer_size, pl->align);
    if (pl->W < pl->align) pl->W = pl->align;
    /* per domain, where its data really is: rounds start at the data, not at the domain */
    long long *v = malloc(4 * (size_t)pl->naggr * sizeof *v);
    if (!v) return MPI_ERR_NO_MEM;
    long long *r = v + 2 * pl->naggr;
    for (int j = 0; j < pl->naggr; j++)
        v[2 * j] = v[2 * j + 1] = -(long long)INT64_MAX;
    for (int k = 0; k < nn; k++) {
        const struct tm_io_seg *s = accs[k]->segs.v;
        for (size_t i = 0; i < accs[k]->segs.n; i++) {
            int64_t a = s[i].off, e = s[i].off + (int64_t)s[i].len;
            while (a < e) {
                int j = (int)((a - pl->base) / pl->D);
                int64_t de = pl->base + (int64_t)(j + 1) * pl->D, pe = e < de ? e : de;
                if (-a > v[2 * j]) v[2 * j] = -a;
                if (pe > v[2 * j + 1]) v[2 * j + 1] = pe;
                a = pe;
            }
        }
    }
    PMPI_Allreduce(v, r, 2 * pl->naggr, MPI_LONG_LONG, MPI_MAX, f->leaders);
    pl->dlo = malloc(2 * (size_t)pl->naggr * sizeof *pl->dlo);
    if (!pl->dlo) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    pl->dhi = pl->dlo + pl->naggr;
    for (int j = 0; j < pl->naggr; j++) {
        pl->dlo[j] = rdown(-r[2 * j], pl->align);
        pl->dhi[j] = r[2 * j + 1];
        int64_t n = pl->dhi[j] > pl->dlo[j] ? (pl->dhi[j] - pl->dlo[j] + pl->W - 1) / pl->W : 0;
        if (n > pl->rounds) pl->rounds = n;
    }
    free(v);
    return MPI_SUCCESS;
}

/* Window of aggregator j in round r ([ws, we), empty if ws >= we). */
static void window(const struct plan *pl, int j, int64_t r, int64_t *ws, int64_t *we)
{
    /* An aggregator no rank reaches has dlo near INT64_MAX: adding its rounds would overflow */
    if (pl->dhi[j] <= pl->dlo[j]) {
        *ws = *we = 0;
        return;
    }
    int64_t dend = pl->base + (int64_t)(j + 1) * pl->D;
    *ws = pl->dlo[j] + r * pl->W;
    *we = *ws + pl->W;
    if (*we > dend) *we = dend;
    if (*we > pl->dhi[j]) *we = pl->dhi[j];
}

/* The leaders' rounds.  accs: the node's nn accesses.  Returns this leader's error. */
static int rounds(struct tm_file *f, struct tm_io_acc **accs, int nn, int write)
{
    struct plan pl = {0};
    int err = make_plan(f, accs, nn, &pl);
    int aerr = MPI_SUCCESS; /* an I/O error: the rounds go on (the others wait for them) */
    int nl = pl.nl;
    struct plist *mine = calloc((size_t)nl, sizeof *mine); /* my node's pieces, per aggregator */
    int *scnt = calloc(4 * (size_t)nl, sizeof *scnt);
    if (!mine || !scnt) err = MPI_ERR_NO_MEM;
    int *sdis = scnt + nl, *rcnt = scnt + 2 * nl, *rdis = scnt + 3 * nl;
    char *sbuf = NULL, *rbuf = NULL;
    long long rounds_all = err ? 0 : pl.rounds;
    for (int64_t r = 0; r < rounds_all; r++) {
        struct plist agg = {0}; /* what I move as an aggregator this round */
        size_t stot = 0;
        for (int j = 0; j < nl; j++) {
            mine[j].n = mine[j].bytes = 0;
            if (j >= pl.naggr) continue;
            int64_t ws, we;
            window(&pl, j, r, &ws, &we);
            if (ws >= we) continue;
            for (int k = 0; k < nn && !err; k++)
                err = clip(j == pl.me_l ? &agg : &mine[j], accs[k], ws, we, (size_t)k);
        }
        /* the exchange: per aggregator, [n][(off, len) x n] and (writes) the data */
        for (int j = 0; j < nl; j++) {
            size_t sz = j == pl.me_l || !mine[j].n ? 0 : 8 + 16 * mine[j].n;
            if (write && sz) sz += mine[j].bytes;
            scnt[j] = (int)sz;
            sdis[j] = (int)stot;
            stot += sz;
        }
        if (nl > 1) {
            char *nb = realloc(sbuf, stot ? stot : 1);
            if (!nb)
                err = MPI_ERR_NO_MEM;
            else
                sbuf = nb;
            for (int j = 0; j < nl && !err; j++) {
                if (!scnt[j]) continue;
                char *p = sbuf + sdis[j];
                int64_t n = (int64_t)mine[j].n;
                memcpy(p, &n, 8);
                p += 8;
                for (size_t i = 0; i < mine[j].n; i++) {
                    int64_t ol[2] = {mine[j].v[i].off, (int64_t)mine[j].v[i].len};
                    memcpy(p, ol, 16);
                    p += 16;
                }
                for (size_t i = 0; write && i < mine[j].n; i++) {
                    memcpy(p, mine[j].v[i].mem, mine[j].v[i].len);
                    p += mine[j].v[i].len;
                }
            }
            PMPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, f->leaders);
            size_t rtot = 0;
            for (int i = 0; i < nl; i++) {
                rdis[i] = (int)rtot;
                rtot += (size_t)rcnt[i];
            }
            char *nr = realloc(rbuf, rtot ? rtot : 1);
            if (!nr)
                err = MPI_ERR_NO_MEM;
            else
                rbuf = nr;
            PMPI_Alltoallv(sbuf, scnt, sdis, MPI_BYTE, rbuf, rcnt, rdis, MPI_BYTE, f->leaders);
            /* remote pieces: in the receive buffer (writes), or in a reply area (reads) */
            size_t rep_tot = 0;
            for (int i = 0; i < nl; i++) {
                if (!rcnt[i]) continue;
                int64_t n;
                memcpy(&n, rbuf + rdis[i], 8);
                for (int64_t q = 0; q < n; q++) {
                    int64_t ol[2];
                    memcpy(ol, rbuf + rdis[i] + 8 + 16 * q, 16);
                    rep_tot += (size_t)ol[1];
                }
            }
            char *reply = !write && rep_tot ? malloc(rep_tot) : NULL;
            if (!write && rep_tot && !reply) err = MPI_ERR_NO_MEM;
            size_t rp = 0;
            for (int i = 0; i < nl && !err; i++) {
                if (!rcnt[i]) continue;
                int64_t n;
                memcpy(&n, rbuf + rdis[i], 8);
                char *data = rbuf + rdis[i] + 8 + 16 * n;
                for (int64_t q = 0; q < n && !err; q++) {
                    int64_t ol[2];
                    memcpy(ol, rbuf + rdis[i] + 8 + 16 * q, 16);
                    char *mem = write ? data : reply + rp;
                    if (write)
                        data += ol[1];
                    else
                        rp += (size_t)ol[1];
                    err = padd(&agg, ol[0], (size_t)ol[1], mem, (size_t)nn + (size_t)i);
                }
            }
            if (!err && !aerr) aerr = window_io(f, &agg, write);
            if (!write) {
                /* replies back: the aggregator sends each leader its pieces' data in the order
                 * asked, the leader copies them into its ranks' buffers */
                int *c2 = calloc(4 * (size_t)nl, sizeof *c2);
                if (!c2) err = MPI_ERR_NO_MEM;
                size_t t2 = 0, at = 0;
                for (int i = 0; c2 && i < nl; i++) {
                    int64_t n = 0, b = 0;
                    if (rcnt[i]) memcpy(&n, rbuf + rdis[i], 8);
                    for (int64_t q = 0; q < n; q++) {
                        int64_t ol[2];
                        memcpy(ol, rbuf + rdis[i] + 8 + 16 * q, 16);
                        b += ol[1];
                    }
                    c2[i] = (int)b;
                    c2[nl + i] = (int)at;
                    at += (size_t)b;
                    c2[2 * nl + i] = i == pl.me_l || i >= pl.naggr ? 0 : (int)mine[i].bytes;
                    c2[3 * nl + i] = (int)t2;
                    t2 += (size_t)c2[2 * nl + i];
                }
                char *back = c2 && t2 ? malloc(t2) : NULL;
                if (c2) {
                    PMPI_Alltoallv(reply, c2, c2 + nl, MPI_BYTE, back, c2 + 2 * nl, c2 + 3 * nl,
                                   MPI_BYTE, f->leaders);
                    /* the aggregators have read (their reply came after): a piece's bytes past
                     * the end of file are none, and the rank's buffer keeps what it held there */
                    struct stat sb;
                    int64_t eof = fstat(f->fd, &sb) == 0 ? (int64_t)sb.st_size : INT64_MAX;
                    for (int j = 0; back && j < nl; j++) {
                        char *p = back + c2[3 * nl + j];
                        for (size_t i = 0; j != pl.me_l && i < mine[j].n; i++) {
                            const struct piece *q = &mine[j].v[i];
                            int64_t in = eof - q->off;
                            size_t n = in <= 0 ? 0 : (uint64_t)in < q->len ? (size_t)in : q->len;
                            memcpy(q->mem, p, n);
                            p += q->len;
                        }
                    }
                }
                free(back);
                free(c2);
            }
            free(reply);
        } else if (!err && !aerr) {
            aerr = window_io(f, &agg, write);
        }
        free(agg.v);
    }
    for (int j = 0; mine && j < nl; j++)
        free(mine[j].v);
    free(mine);
    free(scnt);
    free(sbuf);
    free(rbuf);
    free(pl.dlo);
    return err ? err : aerr;
}

/* View bytes of access a that lie before end of file eof (its segments are in file order). */
static size_t below(const struct tm_io_acc *a, int64_t eof)
{
    size_t n = 0;
    for (size_t i = 0; i < a->segs.n; i++) {
        const struct tm_io_seg *s = &a->segs.v[i];
        if (s->off >= eof) break;
        n += s->off + (int64_t)s->len <= eof ? s->len : (size_t)(eof - s->off);
    }
    return n;
}

int tm_io_coll(struct tm_file *f, MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype dt,
               int write, size_t *nbytes, const char **why)
{
    struct tm_io_acc a;
    *nbytes = 0;
    int err = tm_io_acc_prepare(f, &a, off, buf, count, dt, write, why);
    enum tm_io_cb cb = write ? f->h.cb_write : f->h.cb_read;
    /* agreed by everybody: the worst error, and whether any access is worth aggregating */
    int small = a.segs.n > 1 || (a.segs.n == 1 && a.segs.bytes < f->h.cb_buffer_size / 4);
    int v[2] = {err, small}, g[2];
    PMPI_Allreduce(v, g, 2, MPI_INT, MPI_MAX, f->comm);
    if (g[0]) {
        tm_io_acc_free(&a);
        if (!err) *why = "a bad access on another rank";
        return g[0];
    }
    int aggregate = !f->atomic && cb != TM_IO_CB_DISABLE && (cb == TM_IO_CB_ENABLE || g[1]);
    size_t done = 0;
    if (!aggregate) {
        err = tm_io_acc_move(f, &a, write, &done);
    } else {
        /* the node's accesses reach the leader as pointers (one process, one address space) */
        int nn, nrank;
        PMPI_Comm_size(f->node, &nn);
        PMPI_Comm_rank(f->node, &nrank);
        struct tm_io_acc *mine = &a, **accs = NULL;
        if (nrank == 0 && !(accs = malloc((size_t)nn * sizeof *accs))) err = MPI_ERR_NO_MEM;
        PMPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, accs, (int)sizeof mine, MPI_BYTE, 0,
                    f->node);
        long long res[2] = {0, 0}; /* error, end of file (reads) */
        if (nrank == 0) {
            if (!err) err = rounds(f, accs, nn, write);
            int gerr;
            PMPI_Allreduce(&err, &gerr, 1, MPI_INT, MPI_MAX, f->leaders);
            res[0] = gerr;
            struct stat sb;
            if (!write) res[1] = fstat(f->fd, &sb) == 0 ? (long long)sb.st_size : 0;
        }
        free(accs);
        /* the leader is done with every buffer of the node once this returns */
        PMPI_Bcast(res, 2, MPI_LONG_LONG, 0, f->node);
        err = (int)res[0];
        done = err ? 0 : write ? a.segs.bytes : below(&a, res[1]);
    }
    int gerr;
    if (!aggregate) {
        PMPI_Allreduce(&err, &gerr, 1, MPI_INT, MPI_MAX, f->comm);
        err = gerr;
    }
    if (err) *why = write ? "collective write failed" : "collective read failed";
    if (!err && !write && (err = tm_io_acc_finish_read(f, &a, done)))
        *why = "read conversion failed";
    *nbytes = tm_io_acc_native(&a, done);
    tm_io_acc_free(&a);
    return err;
}
