/* metrics_count.h — what the agent counts for its Prometheus endpoint beyond the counters it
 * keeps anyway (jobs started and failed, the pool, the mesh): how long jobs take to start, and
 * the traffic of the jobs' data links.  Plain counts and the functions that add to them, so
 * that the job code counts without the daemon that renders them (daemon/metrics.h).  Loop
 * thread only. */
#ifndef TMPI_AGENT_METRICS_COUNT_H
#define TMPI_AGENT_METRICS_COUNT_H

#include <stdint.h>

#include "control.pb-c.h"

/* Upper bounds (seconds) of the histogram buckets; +Inf is implied. */
#define METRICS_BUCKETS 10
extern const double metrics_bounds[METRICS_BUCKETS];

struct metrics_hist {
    uint64_t bucket[METRICS_BUCKETS]; /* observations <= bound, not cumulative */
    uint64_t count;
    double sum;
};

struct metrics_counts {
    /* from the submission to every rank running (JobStarted) */
    struct metrics_hist launch;
    /* from the last program byte to every rank running: loading, linking */
    struct metrics_hist load;
    /* [channel - 1]: the data links of this node's parts of jobs across nodes, as their hosts
     * report them (LinkTraffic, every JOBHOST_TRAFFIC_MS and at the end) */
    uint64_t link_frames_sent[2], link_bytes_sent[2], link_frames_received[2],
        link_bytes_received[2];
};

void metrics_observe(struct metrics_hist *h, double sec);

/* A job's ranks all run: created_at and start_time (agent_now) say when its submission and
 * its last program byte arrived. */
void metrics_job_started(struct metrics_counts *m, double created_at, double start_time);

/* What one member job host reported so far (its LinkTraffic counts are cumulative). */
struct metrics_link_seen {
    uint64_t frames_sent[2], bytes_sent[2], frames_received[2], bytes_received[2];
};

/* A member job host's LinkTraffic (checked: at most two channels): what grew since seen is
 * added; a count that went down (a host that lies) adds nothing. */
void metrics_add_link_traffic(struct metrics_counts *m, struct metrics_link_seen *seen,
                              const Tmpi__LinkTraffic *lt);

#endif
