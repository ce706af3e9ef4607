/* binding.h — the node's CPUs as hwloc sees them, and pinning threads to them
 * (tmpi-launch --bind-to, --report-bindings).
 *
 * A topology is loaded once per job, in the job host, restricted to the CPUs the loading
 * thread may run on (the agent's own affinity or cgroup cpuset: an agent Slurm started on some
 * CPUs of a node binds its ranks inside them).  Thread k of a job is pinned to object
 * k mod n of the chosen kind, in hwloc's logical order (neighbouring cores first), so that
 * neighbouring ranks share caches and the objects are used evenly.
 *
 * This file knows hwloc and nothing of jobs: the policy (which kind, which threads, where the
 * report goes) is job_bind.c's.  Functions return 0 or a negative errno. */
#ifndef TMPI_AGENT_BINDING_H
#define TMPI_AGENT_BINDING_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* What a thread is pinned to; the values are the control protocol's tmpi.BindTo. */
enum bind_kind {
    BIND_KIND_DEFAULT = 0, /* not a kind: the job host chooses (job_bind.c) */
    BIND_KIND_NONE = 1,    /* left as inherited: every CPU of the job host */
    BIND_KIND_HWTHREAD = 2,
    BIND_KIND_CORE = 3,
    BIND_KIND_L3CACHE = 4,
    BIND_KIND_NUMA = 5,
    BIND_KIND_PACKAGE = 6,
};

/* A report line describes one thread's mask in at most this many bytes (a longer layout,
 * thousands of CPUs, is cut with "..."). */
#define BIND_LINE_MAX 4096

struct bind_topo;

/* Loads the topology as the calling thread sees it (see above). */
int bind_topo_load(struct bind_topo **ret);
void bind_topo_free(struct bind_topo *t);

/* Cores the job may use (a PU outside any core counts as one). */
uint32_t bind_topo_cores(const struct bind_topo *t);

/* Objects of kind (NONE: 1, the whole allowed set). */
uint32_t bind_topo_count(const struct bind_topo *t, enum bind_kind kind);

/* Pins thread to object index mod bind_topo_count(kind) of kind; NONE leaves it as it is. */
int bind_thread(struct bind_topo *t, enum bind_kind kind, uint32_t index, pthread_t thread);

/* Describes thread's CPU mask as it is now, without a newline: "bound to core 1[hwt 1]: [./B]
 * (cpus 1)" or "not bound: [B/B] (cpus 0-1)" (docs/USER.md "Binding"); a mask of every CPU
 * the job may use is "not bound".  asked: the kind to name the mask by when several kinds of
 * object have exactly its CPUs. */
int bind_describe(struct bind_topo *t, pthread_t thread, enum bind_kind asked, char *buf,
                  size_t len);

/* The word for kind as tmpi-launch spells it ("core"), NULL for DEFAULT or out of range. */
const char *bind_kind_name(enum bind_kind kind);

#endif
