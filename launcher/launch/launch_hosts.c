/* launch_hosts.c — the hosts of a placement, checked before the job goes anywhere.
 *
 * Every node the placement uses must resolve here: the coordinating agent is the local one,
 * so a name that does not resolve for us does not resolve for it either, and would only come
 * back later as a failed connection ("No route to host") that does not say why.
 *
 * A placement on one host runs on the local agent, as a job without hosts does, only when
 * the host is this machine (localhost, our host name, or an address of one of our
 * interfaces) at the default agent port: the local agent is then that host's agent, and
 * running there needs no mesh (a private agent has none).  Any other lone host, a remote one
 * or another agent's port on this machine, goes through the local agent's mesh like a job on
 * several nodes, so that a host whose agent does not answer fails the job naming it instead
 * of the job quietly running here.
 *
 * Names are resolved one after the other with getaddrinfo, from /etc/hosts or DNS as the
 * system is configured; there is one lookup per node that receives ranks.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launch.h"

static bool same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
    if (!a || !b || a->sa_family != b->sa_family) return false;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return false;
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return false;
}

/* Is one of the addresses loopback or one of this machine's interfaces? */
static bool addrs_are_here(const struct addrinfo *res)
{
    struct ifaddrs *ifs = NULL;
    bool here = false;
    if (getifaddrs(&ifs) < 0) ifs = NULL;
    for (const struct addrinfo *a = res; a && !here; a = a->ai_next) {
        if (is_loopback(a->ai_addr)) here = true;
        for (const struct ifaddrs *i = ifs; i && !here; i = i->ifa_next)
            here = same_addr(a->ai_addr, i->ifa_addr);
    }
    if (ifs) freeifaddrs(ifs);
    return here;
}

/* Our host name, or its first label, spelled as host. */
static bool is_our_name(const char *host)
{
    char me[256];
    if (strcasecmp(host, "localhost") == 0) return true;
    if (gethostname(me, sizeof me) < 0) return false;
    me[sizeof me - 1] = '\0';
    size_t short_len = strcspn(me, ".");
    return strcasecmp(host, me) == 0 ||
           (strlen(host) == short_len && strncasecmp(host, me, short_len) == 0);
}

/* host resolves (for a spare host: its slots are of use). */
static bool resolves(const char *host)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0) return false;
    freeaddrinfo(res);
    return true;
}

int launch_hosts_check(struct placement *p, const char *opt, const char *file, bool *ret_lone_here)
{
    *ret_lone_here = false;
    int status = 0;
    /* the spare hosts first, so that what is left decides whether this is one node */
    for (uint32_t i = p->nnodes; i < p->nnodes + p->nspare;) {
        if (!p->nodes[i].host || resolves(p->nodes[i].host)) {
            i++;
            continue;
        }
        free(p->nodes[i].host);
        memmove(&p->nodes[i], &p->nodes[i + 1], sizeof *p->nodes * (p->nnodes + p->nspare - i - 1));
        p->nspare--;
    }
    for (uint32_t i = 0; i < p->nnodes + p->nspare; i++) {
        const struct placement_node *n = &p->nodes[i];
        if (!n->host) {
            *ret_lone_here = true; /* no hosts: the local agent */
            continue;
        }
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
        struct addrinfo *res = NULL;
        int g = getaddrinfo(n->host, NULL, &hints, &res);
        if (g != 0) {
            fprintf(stderr, "tmpi-launch: %s%s%s: host %s does not resolve: %s\n", opt,
                    file ? " " : "", file ? file : "", n->host,
                    g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
            status = LAUNCH_EXIT_FAILURE; /* name every bad host in one round */
            continue;
        }
        if (p->nnodes + p->nspare == 1 && n->port == HOSTLIST_DEFAULT_PORT)
            *ret_lone_here = is_our_name(n->host) || addrs_are_here(res);
        freeaddrinfo(res);
    }
    return status;
}
