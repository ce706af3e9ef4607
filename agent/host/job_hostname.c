/* job_hostname.c — which nodes of its job a host name names (job_hostname.h). */
#include "job_hostname.h"

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

static int names_self(const struct job *j, const char *host)
{
    char me[256];
    if (strcasecmp(host, "localhost") == 0 || strcasecmp(host, j->agent->cfg.name) == 0) return 1;
    if (gethostname(me, sizeof me) == 0) {
        me[sizeof me - 1] = '\0';
        if (strcasecmp(host, me) == 0) return 1;
    }
    return 0;
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
