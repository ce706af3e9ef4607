/* metrics_count.c — the agent's counts for its metrics (metrics_count.h). */
#include "metrics_count.h"

#include "clock.h"

const double metrics_bounds[METRICS_BUCKETS] = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

void metrics_observe(struct metrics_hist *h, double sec)
{
    if (sec < 0) sec = 0;
    for (int i = 0; i < METRICS_BUCKETS; i++)
        if (sec <= metrics_bounds[i]) {
            h->bucket[i]++;
            break;
        }
    h->count++;
    h->sum += sec;
}

void metrics_job_started(struct metrics_counts *m, double created_at, double start_time)
{
    double now = agent_now();
    if (created_at > 0) metrics_observe(&m->launch, now - created_at);
    if (start_time > 0) metrics_observe(&m->load, now - start_time);
}

/* Adds to *total what now has beyond *seen, and remembers now. */
static void grow(uint64_t *total, uint64_t *seen, uint64_t now)
{
    if (now > *seen) {
        *total += now - *seen;
        *seen = now;
    }
}

void metrics_add_link_traffic(struct metrics_counts *m, struct metrics_link_seen *seen,
                              const Tmpi__LinkTraffic *lt)
{
    for (size_t i = 0; i < lt->n_channels; i++) {
        const Tmpi__ChannelTraffic *c = lt->channels[i];
        if (c->channel < 1 || c->channel > 2) continue;
        unsigned k = c->channel - 1;
        grow(&m->link_frames_sent[k], &seen->frames_sent[k], c->frames_sent);
        grow(&m->link_bytes_sent[k], &seen->bytes_sent[k], c->bytes_sent);
        grow(&m->link_frames_received[k], &seen->frames_received[k], c->frames_received);
        grow(&m->link_bytes_received[k], &seen->bytes_received[k], c->bytes_received);
    }
}
