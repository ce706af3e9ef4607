/* nothing_lost.c — stress of point-to-point delivery: nothing lost, nothing duplicated, MPI
 * order kept per (source, tag, communicator) (non-overtaking, MPI 3.1 §3.5).
 *
 *   nothing_lost [SEED [MESSAGES [DEADLINE_SEC]]]
 *
 * Every rank derives the whole job's schedule from SEED (default or "": from the clock; printed
 * by rank 0 either way, so that a failure can be replayed): each rank sends MESSAGES messages
 * (default 48) to random other ranks on three communicators (MPI_COMM_WORLD, a duplicate, a split
 * with the ranks reversed) with tags 0-3, of random sizes around both eager limits (intra-node 16
 * KiB, inter-node 100 KiB: the agents' defaults) up to 300 KiB, a tenth of them synchronous.  All
 * sends are posted first (so no receive order can deadlock), then each rank receives what it is
 * owed with a random mix of specific and wildcard (MPI_ANY_SOURCE, MPI_ANY_TAG, both) receives,
 * pausing at random so that messages pile up unexpected (with a tiny buffer pool, eager sends fall
 * back to three-phase).
 *
 * Every message carries a header (source, destination, communicator, tag, sequence number in
 * its stream, size, FNV-1a checksum of the rest) and bytes that follow from the seed; the
 * receiver checks the message against the next one its stream owes: size, header, checksum
 * and every byte.  A lost message is reported after DEADLINE_SEC (default 60) of waiting for
 * it, a duplicate as a message its stream does not owe (or, at the end, as one still
 * pending).  Prints "OK" when every rank got exactly what it was owed. */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define NCOMM 3
#define NTAG 4
#define HDR_BYTES 32
#define HDR_MAGIC 0x4e4c5354u /* "NLST" */
#define MAX_BYTES (300 * 1024)
/* The agents' default eager limits (tmpid.conf: intra_eager_limit, eager_limit). */
#define INTRA_EAGER 16384
#define NET_EAGER (100 * 1024)

/* One message of the schedule. */
struct msg {
    int src, dst, comm, tag;
    uint32_t seq; /* in its stream (src, dst, comm, tag) */
    uint32_t bytes;
    int sync; /* MPI_Issend */
};

/* How much one receiver is owed by one stream (src, comm, tag), and how much it got; the
 * messages themselves are in order[first[stream]...]. */
struct stream {
    int n, next;
};

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(splitmix(s) % n);
}

/* A size around the limits the protocols change at. */
static uint32_t pick_size(uint64_t *s)
{
    uint32_t k = below(s, 100);
    if (k < 25) return below(s, 65);                              /* tiny, zero included */
    if (k < 40) return 65 + below(s, 8192);                       /* small */
    if (k < 60) return INTRA_EAGER - 64 + below(s, 129);          /* intra-node eager limit */
    if (k < 80) return NET_EAGER - 64 + below(s, 129);            /* inter-node eager limit */
    return NET_EAGER + 65 + below(s, MAX_BYTES - NET_EAGER - 64); /* three-phase */
}

/* The schedule of sender src: the same on every rank. */
static void schedule(uint64_t seed, int src, int size, int nmsg, struct msg *out)
{
    uint64_t s = seed ^ (0x5851f42d4c957f2dull * (uint64_t)(src + 1));
    /* sequence numbers per (dst, comm, tag) */
    uint32_t *seq = calloc((size_t)size * NCOMM * NTAG, sizeof *seq);
    CHECK(seq != NULL);
    for (int i = 0; i < nmsg; i++) {
        struct msg *m = &out[i];
        m->src = src;
        m->dst = size == 1 ? 0 : (int)below(&s, (uint32_t)size - 1);
        if (size > 1 && m->dst >= src) m->dst++;
        m->comm = (int)below(&s, NCOMM);
        m->tag = (int)below(&s, NTAG);
        m->bytes = pick_size(&s);
        m->sync = below(&s, 10) == 0;
        m->seq = seq[(m->dst * NCOMM + m->comm) * NTAG + m->tag]++;
    }
    free(seq);
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The bytes of message m: the header (when it fits), then bytes that follow from the seed. */
static void fill(uint64_t seed, const struct msg *m, unsigned char *buf)
{
    uint64_t s = seed ^ ((uint64_t)m->src << 48) ^ ((uint64_t)m->dst << 32) ^
                 ((uint64_t)(m->comm * NTAG + m->tag) << 24) ^ m->seq;
    for (uint32_t i = 0; i < m->bytes; i += 8) {
        uint64_t r = splitmix(&s);
        memcpy(buf + i, &r, m->bytes - i < 8 ? m->bytes - i : 8);
    }
    if (m->bytes < HDR_BYTES) return;
    uint64_t sum = fnv1a(buf + HDR_BYTES, m->bytes - HDR_BYTES);
    put32(buf, HDR_MAGIC);
    put32(buf + 4, (uint32_t)m->src);
    put32(buf + 8, (uint32_t)m->dst);
    put32(buf + 12, (uint32_t)(m->comm * NTAG + m->tag));
    put32(buf + 16, m->seq);
    put32(buf + 20, m->bytes);
    memcpy(buf + 24, &sum, 8);
}

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Checks a received message against what its stream owes next. */
static void check_msg(uint64_t seed, const struct msg *want, const unsigned char *got, int count,
                      unsigned char *scratch)
{
    const char *what = "";
    char where[96];
    snprintf(where, sizeof where, "from rank %d, comm %d, tag %d, message %u", want->src,
             want->comm, want->tag, want->seq);
    CHECK(count == (int)want->bytes,
          "%s: expected %u bytes, got %d (lost, duplicated or "
          "overtaken?)",
          where, want->bytes, count);
    if (want->bytes >= HDR_BYTES) {
        CHECK(get32(got) == HDR_MAGIC, "%s: no header (magic %08x)", where, get32(got));
        CHECK(get32(got + 4) == (uint32_t)want->src && get32(got + 8) == (uint32_t)want->dst &&
                  get32(got + 12) == (uint32_t)(want->comm * NTAG + want->tag),
              "%s: header names source %u, destination %u, stream %u", where, get32(got + 4),
              get32(got + 8), get32(got + 12));
        CHECK(get32(got + 16) == want->seq, "%s: expected sequence number %u, got %u (%s)", where,
              want->seq, get32(got + 16),
              get32(got + 16) < want->seq ? "a duplicate" : "one was lost or overtaken");
        uint64_t sum, have = fnv1a(got + HDR_BYTES, (size_t)count - HDR_BYTES);
        memcpy(&sum, got + 24, 8);
        CHECK(sum == have, "%s: checksum: header says %016llx, the payload gives %016llx", where,
              (unsigned long long)sum, (unsigned long long)have);
        what = " (checksum right)";
    }
    fill(seed, want, scratch);
    for (uint32_t i = 0; i < want->bytes; i++)
        CHECK(got[i] == scratch[i], "%s: byte %u: expected %02x, got %02x%s", where, i, scratch[i],
              got[i], what);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned long long seed = 0;
    int nmsg = argc > 2 ? atoi(argv[2]) : 48;
    double deadline = argc > 3 ? atof(argv[3]) : 60;
    CHECK(nmsg >= 0 && nmsg <= 100000, "MESSAGES from 0 to 100000, got %s", argv[2]);
    if (rank == 0) {
        seed = argc > 1 && argv[1][0]
                   ? strtoull(argv[1], NULL, 0)
                   : (unsigned long long)time(NULL) * 2654435761ull ^ (unsigned)getpid();
        printf("nothing_lost: seed %llu, %d ranks, %d messages each (replay: %s %llu %d)\n", seed,
               size, nmsg, argv[0], seed, nmsg);
        fflush(stdout);
    }
    CHECK_MPI(MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));

    MPI_Comm comms[NCOMM];
    comms[0] = MPI_COMM_WORLD;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &comms[2]));
    /* rank in communicator c -> world rank */
    int *world_of = malloc(sizeof(int) * (size_t)size * NCOMM);
    CHECK(world_of != NULL);
    for (int c = 0; c < NCOMM; c++) {
        CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, world_of + c * size, 1, MPI_INT, comms[c]));
    }
    int *rank_in = malloc(sizeof(int) * (size_t)size * NCOMM); /* world rank -> rank in c */
    CHECK(rank_in != NULL);
    for (int c = 0; c < NCOMM; c++)
        for (int r = 0; r < size; r++)
            rank_in[c * size + world_of[c * size + r]] = r;

    /* Every sender's schedule; what this rank is owed, stream by stream. */
    struct msg *all = malloc(sizeof *all * (size_t)(size * nmsg + 1));
    struct stream *owed = calloc((size_t)size * NCOMM * NTAG, sizeof *owed);
    CHECK(all != NULL && owed != NULL);
    int total = 0;
    for (int s = 0; s < size; s++) {
        schedule(seed, s, size, nmsg, all + s * nmsg);
        for (int i = 0; i < nmsg; i++) {
            struct msg *m = &all[s * nmsg + i];
            if (m->dst != rank) continue;
            struct stream *st = &owed[(s * NCOMM + m->comm) * NTAG + m->tag];
            st->n++;
            total++;
        }
    }
    /* each stream's messages in order, as pointers */
    struct msg **order = malloc(sizeof *order * (size_t)(total + 1));
    CHECK(order != NULL);
    int nstreams = size * NCOMM * NTAG, k = 0;
    int *first = malloc(sizeof(int) * (size_t)nstreams);
    CHECK(first != NULL);
    for (int i = 0; i < nstreams; i++) {
        first[i] = k;
        k += owed[i].n;
        owed[i].next = 0;
    }
    int *fillpos = calloc((size_t)nstreams, sizeof(int));
    CHECK(fillpos != NULL);
    for (int s = 0; s < size; s++)
        for (int i = 0; i < nmsg; i++) {
            struct msg *m = &all[s * nmsg + i];
            if (m->dst != rank) continue;
            int id = (s * NCOMM + m->comm) * NTAG + m->tag;
            order[first[id] + fillpos[id]++] = m;
        }

    /* Post every send first. */
    MPI_Request *sreq = malloc(sizeof *sreq * (size_t)(nmsg + 1));
    unsigned char **sbuf = calloc((size_t)nmsg + 1, sizeof *sbuf);
    CHECK(sreq != NULL && sbuf != NULL);
    for (int i = 0; i < nmsg; i++) {
        const struct msg *m = &all[rank * nmsg + i];
        sbuf[i] = malloc(m->bytes ? m->bytes : 1);
        CHECK(sbuf[i] != NULL);
        fill(seed, m, sbuf[i]);
        int dst = rank_in[m->comm * size + m->dst];
        if (m->sync)
            CHECK_MPI(MPI_Issend(sbuf[i], (int)m->bytes, MPI_BYTE, dst, m->tag, comms[m->comm],
                                 &sreq[i]));
        else
            CHECK_MPI(
                MPI_Isend(sbuf[i], (int)m->bytes, MPI_BYTE, dst, m->tag, comms[m->comm], &sreq[i]));
    }

    /* Receive what is owed, specific and wildcard, pausing now and then. */
    uint64_t rs = seed ^ (0x2545f4914f6cdd1dull * (uint64_t)(rank + 1));
    unsigned char *rbuf = malloc(MAX_BYTES), *scratch = malloc(MAX_BYTES);
    int *pending = malloc(sizeof(int) * (size_t)(nstreams + 1));
    CHECK(rbuf != NULL && scratch != NULL && pending != NULL);
    int kinds[4] = {0, 0, 0, 0};
    for (int got = 0; got < total; got++) {
        int np = 0;
        for (int i = 0; i < nstreams; i++)
            if (owed[i].next < owed[i].n) pending[np++] = i;
        int id = pending[below(&rs, (uint32_t)np)];
        int src = id / (NCOMM * NTAG), c = id / NTAG % NCOMM, tag = id % NTAG;
        int kind = (int)below(&rs, 4);
        kinds[kind]++;
        int rsrc = kind & 1 ? MPI_ANY_SOURCE : rank_in[c * size + src];
        int rtag = kind & 2 ? MPI_ANY_TAG : tag;
        if (below(&rs, 6) == 0) usleep(below(&rs, 3000)); /* a slow receiver */
        MPI_Request rq;
        MPI_Status st;
        CHECK_MPI(MPI_Irecv(rbuf, MAX_BYTES, MPI_BYTE, rsrc, rtag, comms[c], &rq));
        double t0 = now_sec();
        for (int done = 0;;) {
            CHECK_MPI(MPI_Test(&rq, &done, &st));
            if (done) break;
            CHECK(now_sec() - t0 < deadline,
                  "a message from rank %d on comm %d with tag %d (receive source %d, tag %d): "
                  "none came in %.0f s (%d of %d received): lost",
                  src, c, tag, rsrc, rtag, deadline, got, total);
            usleep(100);
        }
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        int wsrc = world_of[c * size + st.MPI_SOURCE];
        CHECK(st.MPI_TAG >= 0 && st.MPI_TAG < NTAG, "tag %d", st.MPI_TAG);
        struct stream *s = &owed[(wsrc * NCOMM + c) * NTAG + st.MPI_TAG];
        CHECK(s->next < s->n,
              "a message from rank %d on comm %d with tag %d (%d bytes): that stream owed "
              "nothing more (%d received): a duplicate",
              wsrc, c, st.MPI_TAG, count, s->n);
        int sid = (int)(s - owed);
        check_msg(seed, order[first[sid] + s->next], rbuf, count, scratch);
        s->next++;
    }
    CHECK_MPI(MPI_Waitall(nmsg, sreq, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* everything sent was received: anything left over is a duplicate */
    for (int c = 0; c < NCOMM; c++) {
        int flag;
        MPI_Status st;
        CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &flag, &st));
        CHECK(!flag, "no message left on comm %d, got one from rank %d tag %d: a duplicate", c,
              flag ? world_of[c * size + st.MPI_SOURCE] : -1, flag ? st.MPI_TAG : -1);
    }
    long long counts[2] = {total, kinds[1] + kinds[2] + kinds[3]}, sums[2];
    CHECK_MPI(MPI_Reduce(counts, sums, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        printf("nothing_lost: %lld messages checked, %lld by wildcard receives\n", sums[0],
               sums[1]);
        CHECK(sums[0] == (long long)size * nmsg, "expected %lld messages, got %lld",
              (long long)size * nmsg, sums[0]);
    }

    for (int i = 0; i < nmsg; i++)
        free(sbuf[i]);
    free(sbuf);
    free(sreq);
    free(rbuf);
    free(scratch);
    free(pending);
    free(order);
    free(first);
    free(fillpos);
    free(owed);
    free(all);
    free(world_of);
    free(rank_in);
    CHECK_MPI(MPI_Comm_free(&comms[1]));
    CHECK_MPI(MPI_Comm_free(&comms[2]));
    return finish_ok();
}
