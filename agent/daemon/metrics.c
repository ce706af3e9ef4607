/* metrics.c — the agent's metrics and their text exposition (metrics.h). */
#include "metrics.h"

#include <errno.h>
#include <event2/buffer.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "job_info.h"
#include "mesh.h"
#include "progcache.h"
#include "tmpi_config.h"

/* The writer: the first failed evbuffer append sticks. */
struct out {
    struct evbuffer *b;
    int err;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
    if (o->err) return;
    va_list ap;
    va_start(ap, fmt);
    if (evbuffer_add_vprintf(o->b, fmt, ap) < 0) o->err = -ENOMEM;
    va_end(ap);
}

static void head(struct out *o, const char *name, const char *type, const char *help)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped, as the format wants. */
static const char *label(const char *s, char *buf, size_t size)
{
    size_t k = 0;
    for (; s && *s && k + 3 < size; s++) {
        if (*s == '\\' || *s == '"') {
            buf[k++] = '\\';
            buf[k++] = *s;
        } else if (*s == '\n') {
            buf[k++] = '\\';
            buf[k++] = 'n';
        } else {
            buf[k++] = *s;
        }
    }
    buf[k] = '\0';
    return buf;
}

static void hist(struct out *o, const char *name, const char *help, const struct metrics_hist *h)
{
    head(o, name, "histogram", help);
    uint64_t cum = 0;
    for (int i = 0; i < METRICS_BUCKETS; i++) {
        cum += h->bucket[i];
        put(o, "%s_bucket{le=\"%g\"} %llu\n", name, metrics_bounds[i], (unsigned long long)cum);
    }
    put(o, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->count);
    put(o, "%s_sum %.6f\n%s_count %llu\n", name, h->sum, name, (unsigned long long)h->count);
}

static void gauge(struct out *o, const char *name, const char *help, double v)
{
    head(o, name, "gauge", help);
    put(o, "%s %.17g\n", name, v);
}

static void counter(struct out *o, const char *name, const char *help, uint64_t v)
{
    head(o, name, "counter", help);
    put(o, "%s %llu\n", name, (unsigned long long)v);
}

/* Per channel and direction: ctl from the mesh, p2p and coll from the jobs' links. */
static void traffic(struct out *o, struct agent *a)
{
    struct mesh_traffic t;
    mesh_traffic(a->mesh, &t);
    const struct metrics_counts *m = &a->metrics;
    const uint64_t frames[3][2] = {
        {t.frames_sent, t.frames_received},
        {m->link_frames_sent[0], m->link_frames_received[0]},
        {m->link_frames_sent[1], m->link_frames_received[1]},
    };
    const uint64_t bytes[3][2] = {
        {t.bytes_sent, t.bytes_received},
        {m->link_bytes_sent[0], m->link_bytes_received[0]},
        {m->link_bytes_sent[1], m->link_bytes_received[1]},
    };
    static const char *const ch[3] = {"ctl", "p2p", "coll"};
    static const char *const dir[2] = {"sent", "received"};
    head(o, "tmpi_messages_total", "counter",
         "Frames by channel: ctl (mesh control connections), p2p and coll (data links of jobs "
         "across nodes, reported by their hosts every 2 s)");
    for (int c = 0; c < 3; c++)
        for (int d = 0; d < 2; d++)
            put(o, "tmpi_messages_total{channel=\"%s\",direction=\"%s\"} %llu\n", ch[c], dir[d],
                (unsigned long long)frames[c][d]);
    head(o, "tmpi_bytes_total", "counter", "Bytes of those frames, headers included");
    for (int c = 0; c < 3; c++)
        for (int d = 0; d < 2; d++)
            put(o, "tmpi_bytes_total{channel=\"%s\",direction=\"%s\"} %llu\n", ch[c], dir[d],
                (unsigned long long)bytes[c][d]);
}

static void peers(struct out *o, struct agent *a)
{
    size_t np = mesh_npeers(a->mesh);
    struct mesh_peer_info *pi = np ? calloc(np, sizeof *pi) : NULL;
    if (np && !pi) {
        o->err = -ENOMEM;
        return;
    }
    np = np ? mesh_peers(a->mesh, pi, np) : 0;
    char addr[320], name[160];
    head(o, "tmpi_peer_up", "gauge", "1 while a configured peer answers its heartbeats, else 0");
    for (size_t i = 0; i < np; i++)
        put(o, "tmpi_peer_up{peer=\"%s\",name=\"%s\"} %d\n",
            label(pi[i].address, addr, sizeof addr), label(pi[i].name, name, sizeof name),
            pi[i].state && strcmp(pi[i].state, "up") == 0);
    head(o, "tmpi_peer_rtt_seconds", "gauge", "Round trip of a peer's last heartbeat");
    for (size_t i = 0; i < np; i++)
        put(o, "tmpi_peer_rtt_seconds{peer=\"%s\"} %.9f\n", label(pi[i].address, addr, sizeof addr),
            pi[i].rtt_usec > 0 ? pi[i].rtt_usec * 1e-6 : 0.0);
    free(pi);
}

int metrics_render(struct agent *a, struct evbuffer *b)
{
    struct out o = {.b = b};
    char name[160], ver[64];
    head(&o, "tmpi_agent_info", "gauge", "The agent: its name, version and node number");
    put(&o, "tmpi_agent_info{name=\"%s\",version=\"%s\",node_number=\"%u\"} 1\n",
        label(a->cfg.name, name, sizeof name), label(TMPI_VERSION, ver, sizeof ver),
        a->node_number);
    gauge(&o, "tmpi_agent_uptime_seconds", "Seconds since the agent started",
          agent_now() - a->start_time);
    uint32_t ranks;
    uint32_t running = job_info_running(a->jobs, &ranks);
    gauge(&o, "tmpi_jobs_running", "Jobs (or parts of jobs across nodes) on this node", running);
    counter(&o, "tmpi_jobs_started_total", "Jobs started on this node",
            atomic_load(&a->jobs_started));
    counter(&o, "tmpi_jobs_failed_total", "Jobs that ended with a non-zero status",
            atomic_load(&a->jobs_failed));
    gauge(&o, "tmpi_ranks_running", "Ranks of the running jobs on this node", ranks);
    gauge(&o, "tmpi_programs_cached", "Programs in the program cache", progcache_count(&a->cache));
    gauge(&o, "tmpi_pool_capacity_bytes", "The shared buffer pool's size ([pool] size)",
          (double)a->cfg.pool_size);
    gauge(&o, "tmpi_pool_used_bytes", "Bytes of the buffer pool in use",
          (double)atomic_load_explicit(&a->pool.used, memory_order_relaxed));
    counter(&o, "tmpi_control_bad_frames_total", "Malformed frames on the control socket",
            atomic_load(&a->bad_frames));
    const char *listen;
    uint64_t accepted, failures;
    mesh_stats(a->mesh, &listen, &accepted, &failures);
    counter(&o, "tmpi_mesh_accepted_total", "Authenticated incoming mesh connections", accepted);
    counter(&o, "tmpi_mesh_auth_failures_total",
            "Incoming mesh connections refused: wrong key or malformed handshake", failures);
    traffic(&o, a);
    peers(&o, a);
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) == 3) {
        gauge(&o, "tmpi_node_load1", "The node's load average over 1 minute", load[0]);
        gauge(&o, "tmpi_node_load5", "The node's load average over 5 minutes", load[1]);
        gauge(&o, "tmpi_node_load15", "The node's load average over 15 minutes", load[2]);
    }
    hist(&o, "tmpi_job_launch_seconds", "From a job's submission to every rank running",
         &a->metrics.launch);
    hist(&o, "tmpi_job_load_seconds",
         "From a job's last program byte to every rank running (loading, linking)",
         &a->metrics.load);
    return o.err;
}

int metrics_render_agent(void *arg, struct evbuffer *out)
{
    return metrics_render(arg, out);
}
