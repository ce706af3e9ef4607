/* job_hostname.c — which nodes of its job a host name names (job_hostname.h). */
#include "job_hostname.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agent.h"
#include "job.h"
#include "job_net.h"

/* addr is "HOST:PORT" or "[V6]:PORT" (job_net.h): host names it whole or by its HOST. */
static int names_addr(const char *addr, const char *host)
{
    if (strcasecmp(addr, host) == 0) return 1;
    const char *colon = strrchr(addr, ':');
    if (!colon) return 0;
    const char *h = addr;
    size_t len = (size_t)(colon - addr);
    if (len >= 2 && h[0] == '[' && h[len - 1] == ']') {
        h++;
        len -= 2;
    }
    return strlen(host) == len && strncasecmp(h, host, len) == 0;
}

/* host is a numeric address of one of this machine's interfaces (no name is resolved: the
 * caller never blocks). */
static int names_own_address(const char *host)
{
    unsigned char want[sizeof(struct in6_addr)];
    int fam = inet_pton(AF_INET, host, want) == 1    ? AF_INET
              : inet_pton(AF_INET6, host, want) == 1 ? AF_INET6
                                                     : 0;
    struct ifaddrs *ifs = NULL;
    if (!fam || getifaddrs(&ifs) < 0) return 0;
    int hit = 0;
    for (struct ifaddrs *i = ifs; i && !hit; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != fam) continue;
        if (fam == AF_INET)
            hit = !memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, want,
                          sizeof(struct in_addr));
        else
            hit = !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, want,
                          sizeof(struct in6_addr));
    }
    freeifaddrs(ifs);
    return hit;
}

static int names_self(const struct job *j, const char *host)
{
    char me[256];
    if (strcasecmp(host, "localhost") == 0 || strcasecmp(host, j->agent->cfg.name) == 0) return 1;
    if (gethostname(me, sizeof me) == 0) {
        me[sizeof me - 1] = '\0';
        if (strcasecmp(host, me) == 0) return 1;
    }
    return names_own_address(host);
}

int job_host_nodes(const struct job *j, const char *host, int *out, int cap)
{
    int n = 0;
    if (!host || !*host) return 0;
    int nnodes = j->net && j->nnodes > 1 ? (int)j->nnodes : 1;
    for (int i = 0; i < nnodes; i++) {
        int self = nnodes == 1 || i == (int)j->node;
        int hit =
            (self && names_self(j, host)) || (nnodes > 1 && names_addr(j->net->addr[i], host));
        if (!hit) continue;
        if (n < cap) out[n] = i;
        n++;
    }
    return n;
}
