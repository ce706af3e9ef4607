/* job_id.c — cluster-wide job ids (job_id.h). */
#include "job_id.h"

#include "config.h"

uint32_t job_id_node_number(uint32_t configured, const char *name, int has_mesh)
{
    if (configured != CONFIG_NODE_UNSET) return configured;
    if (!has_mesh) return 0;
    /* FNV-1a of the name: names are unique in a cluster (they default to the host name), and
     * this spreads them over 1 .. CONFIG_NODE_NUMBER_MAX.  Admins of large clusters set
     * node_number instead, which rules collisions out. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; p && *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return (uint32_t)(h % CONFIG_NODE_NUMBER_MAX) + 1;
}

uint64_t job_id_next(uint64_t *next_seq, uint32_t node_number)
{
    uint64_t seq = ++*next_seq;
    if (seq >= JOB_ID_NODE_FACTOR) {
        *next_seq = 1;
        seq = 1;
    }
    return (uint64_t)node_number * JOB_ID_NODE_FACTOR + seq;
}
