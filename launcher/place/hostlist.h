/* hostlist.h — the hosts a job may run on: names, slots, agent ports, and their limits.
 *
 * Filled from a host file (hostfile.c), from -H (hostlist_parse_option), or from a Slurm
 * allocation (slurm.c); consumed by placement.c.  A host is identified by (name, port):
 * the same name with two ports is two agents, hence two nodes (several agents on one machine
 * is how a cluster is emulated on one box).  Adding a host that is already listed merges the
 * two entries: their slots add up.
 */
#ifndef TMPI_LAUNCHER_HOSTLIST_H
#define TMPI_LAUNCHER_HOSTLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errlist.h"

#define HOSTLIST_MAX_HOSTS 65536u     /* distinct (host, port) entries */
#define HOSTLIST_MAX_SLOTS (1u << 20) /* slots (and max_slots) of one host, after merging */
#define HOSTLIST_MAX_NAME 253         /* longest DNS name */
#define HOSTLIST_DEFAULT_PORT 7470    /* tmpid --listen's default port */

struct host {
    char *name;         /* host name or canonical IPv4/IPv6 text, without brackets */
    bool ipv6;          /* name is an IPv6 address (printed in brackets) */
    uint16_t port;      /* the agent's port: HOSTLIST_DEFAULT_PORT unless the file said */
    uint32_t slots;     /* ranks the host takes without oversubscription, >= 1 */
    uint32_t max_slots; /* hard bound even with --oversubscribe; 0: none */
};

struct hostlist {
    struct host *hosts;
    size_t n, cap;
    /* Open-addressing index over (lower-cased name, port): slot holds host index + 1, 0 is
     * empty; kept at most half full, so adding stays O(1) even for 65536 distinct hosts. */
    uint32_t *index;
    size_t index_cap; /* a power of two, or 0 */
};

/* Check and canonicalise one host as written: a name (letters, digits, '.', '-', '_',
 * starting with a letter or digit, at most 253 characters), an IPv4 address (anything made of
 * digits and dots must be one), or an IPv6 address in brackets.  On success *ret_name is
 * a new string (brackets removed, addresses in canonical form) and *ret_ipv6 is set.  On
 * failure returns -EINVAL and *ret_why says what is wrong (a static string, or NULL with
 * -ENOMEM). */
int hostlist_parse_host(const char *s, size_t len, char **ret_name, bool *ret_ipv6,
                        const char **ret_why);

/* Add slots to (name, port), creating the entry when it is new.  max_slots 0 is "no bound";
 * merging two entries adds max_slots too, and a bound is kept only when both had one.
 * Returns 0, -E2BIG when a new entry would exceed HOSTLIST_MAX_HOSTS, -EOVERFLOW when the
 * merged slots or max_slots would exceed HOSTLIST_MAX_SLOTS (the list is then unchanged), or
 * -ENOMEM.  name is copied. */
int hostlist_add(struct hostlist *l, const char *name, bool ipv6, uint16_t port, uint32_t slots,
                 uint32_t max_slots);

/* A whole decimal number in [1, max] (no sign, no spaces): 0, -EINVAL when s is not a
 * positive integer, -ERANGE when it is larger than max. */
int hostlist_parse_count(const char *s, size_t len, uint32_t max, uint32_t *ret);

/* Parse the value of -H: HOST[:N][,HOST[:N]...].  A host listed without :N counts one slot
 * per mention (-H a,a,b gives a two slots).  Problems go to err prefixed "-H: "; returns 0 or
 * -EINVAL / -ENOMEM. */
int hostlist_parse_option(struct hostlist *l, const char *arg, struct errlist *err);

/* Sum of the slots of all hosts (cannot overflow: at most 2^36). */
uint64_t hostlist_total_slots(const struct hostlist *l);

/* "name:port", with brackets around IPv6 addresses, into buf (always terminated). */
void hostlist_format(const struct host *h, char *buf, size_t size);

void hostlist_free(struct hostlist *l);

#endif
