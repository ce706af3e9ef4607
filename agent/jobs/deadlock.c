/* deadlock.c — the deadlock rule and the cycle of waits (deadlock.h). */
#include "deadlock.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank_fmt.h"

#define PEER_ANY RANK_FMT_PEER_ANY
#define PEER_ALL RANK_FMT_PEER_ALL

static int is_ended(const Tmpi__RankState *s)
{
    return s && s->activity && strcmp(s->activity, "ended") == 0;
}

static int is_blocked(const Tmpi__RankState *s)
{
    return s && s->activity && strcmp(s->activity, "waiting") == 0 && s->blocked;
}

/* Whether rank q takes part in the same collective as s (same call on the same communicator:
 * waiting for q is then waiting for itself). */
static int same_collective(const Tmpi__RankState *s, const Tmpi__RankState *q)
{
    return q && q->activity && strcmp(q->activity, "waiting") == 0 && q->peer == PEER_ALL &&
           strcmp(q->call ? q->call : "", s->call ? s->call : "") == 0 &&
           strcmp(q->comm ? q->comm : "", s->comm ? s->comm : "") == 0;
}

/* The ranks r waits for, into out (at most nranks); how many.  A point-to-point call with a
 * named peer waits for that peer; a collective on MPI_COMM_WORLD for every rank not in it; a
 * receive from MPI_ANY_SOURCE on MPI_COMM_WORLD for every other rank.  On other
 * communicators the members are not in the snapshot: no edge. */
static uint32_t waits_for(const struct ranks_snap *s, uint32_t r, uint32_t *out)
{
    const Tmpi__RankState *x = s->ranks[r];
    uint32_t n = 0;
    if (x->peer_world >= 0 && (uint32_t)x->peer_world < s->nranks) {
        out[n++] = (uint32_t)x->peer_world;
        return n;
    }
    if (!x->comm_world) return 0;
    for (uint32_t q = 0; q < s->nranks; q++) {
        if (q == r) continue;
        if (x->peer == PEER_ALL && same_collective(x, s->ranks[q])) continue;
        if (x->peer == PEER_ALL || x->peer == PEER_ANY) out[n++] = q;
    }
    return n;
}

/* Appends to a bounded report; the end says it was cut. */
struct rep {
    char *buf;
    size_t len, used;
    int cut;
};

__attribute__((format(printf, 2, 3))) static void rep_add(struct rep *p, const char *fmt, ...)
{
    if (p->cut) return;
    char piece[400];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(piece, sizeof piece, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if (p->used + (size_t)k + 4 >= p->len) {
        snprintf(p->buf + p->used, p->len - p->used, "...");
        p->cut = 1;
        return;
    }
    memcpy(p->buf + p->used, piece, (size_t)k + 1);
    p->used += (size_t)k;
}

static void rep_rank(struct rep *p, const struct ranks_snap *s, uint32_t r, int64_t target)
{
    char call[300];
    rank_fmt_call(s->ranks[r], call, sizeof call);
    rep_add(p, "rank %u in %s", r, call);
    if (target >= 0)
        rep_add(p, " waits for rank %lld%s", (long long)target,
                is_ended(s->ranks[target]) ? ", which has ended" : "");
    else if (!s->ranks[r]->comm_world && s->ranks[r]->peer == PEER_ALL)
        rep_add(p, " waits for the other members of %s",
                s->ranks[r]->comm && *s->ranks[r]->comm ? s->ranks[r]->comm : "its communicator");
}

/* A cycle of waits through the blocked ranks: DFS, colour 1 on the path, 2 done; *ret_start
 * is a rank on the cycle and next[] leads around it.  0 when there is none. */
static int find_cycle(const struct ranks_snap *s, uint32_t *next, uint8_t *colour, uint32_t *edges,
                      uint32_t *stack, uint32_t *pos, uint32_t *ret_start)
{
    uint32_t n = s->nranks;
    for (uint32_t root = 0; root < n; root++) {
        if (colour[root] || !is_blocked(s->ranks[root])) continue;
        uint32_t depth = 0;
        stack[depth] = root;
        pos[depth] = 0;
        colour[root] = 1;
        while (depth != UINT32_MAX) {
            uint32_t v = stack[depth];
            uint32_t ne = waits_for(s, v, edges);
            int pushed = 0;
            while (pos[depth] < ne) {
                uint32_t w = edges[pos[depth]++];
                if (colour[w] == 1) { /* back edge: the cycle is w .. v */
                    next[v] = w;
                    *ret_start = w;
                    return 1;
                }
                if (colour[w] == 0 && is_blocked(s->ranks[w])) {
                    next[v] = w;
                    colour[w] = 1;
                    depth++;
                    stack[depth] = w;
                    pos[depth] = 0;
                    pushed = 1;
                    break;
                }
            }
            if (pushed) continue;
            colour[v] = 2;
            depth = depth == 0 ? UINT32_MAX : depth - 1;
        }
    }
    return 0;
}

static void report(const struct ranks_snap *s, char *buf, size_t len)
{
    uint32_t n = s->nranks;
    struct rep p = {buf, len, 0, 0};
    buf[0] = 0;
    rep_add(&p, "deadlock: ");
    uint32_t *next = calloc(n, sizeof *next), *edges = calloc(n, sizeof *edges);
    uint32_t *stack = calloc(n, sizeof *stack), *pos = calloc(n, sizeof *pos);
    uint8_t *colour = calloc(n, 1), *shown = calloc(n, 1);
    uint32_t start = 0;
    int first = 1;
    if (next && edges && stack && pos && colour && shown &&
        find_cycle(s, next, colour, edges, stack, pos, &start)) {
        uint32_t v = start;
        do {
            if (!first) rep_add(&p, "; ");
            rep_rank(&p, s, v, next[v]);
            shown[v] = 1;
            first = 0;
            v = next[v];
        } while (v != start && !p.cut);
    }
    /* The blocked ranks the cycle does not show (or all, without one), each with whom it
     * waits for first: an ended rank, or the first of its peers. */
    for (uint32_t r = 0; r < n && !p.cut; r++) {
        if ((shown && shown[r]) || !is_blocked(s->ranks[r])) continue;
        int64_t target = -1;
        uint32_t ne = edges ? waits_for(s, r, edges) : 0;
        for (uint32_t k = 0; k < ne && target < 0; k++)
            if (is_ended(s->ranks[edges[k]])) target = edges[k];
        if (target < 0 && ne) target = edges[0];
        rep_add(&p, "%s", first ? "" : "; ");
        rep_rank(&p, s, r, target);
        first = 0;
    }
    free(next);
    free(edges);
    free(stack);
    free(pos);
    free(colour);
    free(shown);
}

int deadlock_find(const struct ranks_snap *prev, const struct ranks_snap *cur, char *buf,
                  size_t len)
{
    if (!prev || !cur || !prev->complete || !cur->complete || len == 0) return 0;
    if (prev->nranks != cur->nranks || prev->nparts != cur->nparts) return 0;
    if (prev->helpers_busy || cur->helpers_busy) return 0;
    uint64_t sent = 0, handled = 0;
    for (uint32_t i = 0; i < cur->nparts; i++) {
        if (prev->sent[i] != cur->sent[i] || prev->handled[i] != cur->handled[i]) return 0;
        sent += cur->sent[i];
        handled += cur->handled[i];
    }
    if (sent != handled) return 0;
    uint32_t blocked = 0;
    for (uint32_t r = 0; r < cur->nranks; r++) {
        const Tmpi__RankState *a = prev->ranks[r], *b = cur->ranks[r];
        if (!a && !b) continue; /* a slot of the universe nothing was spawned into */
        if (is_ended(a) && is_ended(b)) continue;
        if (!is_blocked(a) || !is_blocked(b) || a->sleeps != b->sleeps) return 0;
        blocked++;
    }
    if (!blocked) return 0;
    report(cur, buf, len);
    return 1;
}
