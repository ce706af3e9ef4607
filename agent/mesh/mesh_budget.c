/* mesh_budget.c — the handshake slots of strangers and of configured peers (mesh_budget.h). */
#include "mesh_budget.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "mesh.h"

static const char *unmapped(const char *host)
{
    return strncmp(host, "::ffff:", 7) == 0 && strchr(host + 7, '.') ? host + 7 : host;
}

static int add(struct mesh_budget *b, const char *addr)
{
    if (mesh_budget_is_peer(b, addr)) return 0;
    void *p = realloc(b->peers, (b->npeers + 1) * sizeof *b->peers);
    if (!p) return -ENOMEM;
    b->peers = p;
    snprintf(b->peers[b->npeers++], sizeof *b->peers, "%s", unmapped(addr));
    return 0;
}

int mesh_budget_init(struct mesh_budget *b, char *const *peers, size_t npeers)
{
    for (size_t i = 0; i < npeers; i++) {
        char host[256], port[16];
        if (mesh_parse_address(peers[i], host, sizeof host, port, sizeof port) < 0 || !*host)
            continue;
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
        struct addrinfo *res;
        int g = getaddrinfo(host, port, &hints, &res);
        if (g != 0) {
            log_warning("mesh: peer %s does not resolve (%s): no handshake slots are kept for it",
                        peers[i], gai_strerror(g));
            continue;
        }
        int r = 0;
        for (const struct addrinfo *ai = res; ai && r == 0; ai = ai->ai_next) {
            char a[INET6_ADDRSTRLEN] = "";
            if (ai->ai_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)ai->ai_addr)->sin_addr, a,
                          sizeof a);
            else if (ai->ai_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, a,
                          sizeof a);
            if (*a) r = add(b, a);
        }
        freeaddrinfo(res);
        if (r < 0) return r;
    }
    return 0;
}

void mesh_budget_free(struct mesh_budget *b)
{
    free(b->peers);
    b->peers = NULL;
    b->npeers = 0;
}

int mesh_budget_is_peer(const struct mesh_budget *b, const char *host)
{
    host = unmapped(host);
    for (size_t i = 0; i < b->npeers; i++)
        if (strcmp(b->peers[i], host) == 0) return 1;
    return 0;
}

const char *mesh_budget_refuse(int peer, unsigned strangers, unsigned mine)
{
    if (peer) return mine >= MESH_MAX_PENDING_PER_PEER ? "MESH_MAX_PENDING_PER_PEER" : NULL;
    if (mine >= MESH_MAX_PENDING_PER_ADDR) return "MESH_MAX_PENDING_PER_ADDR";
    if (strangers >= MESH_MAX_PENDING) return "MESH_MAX_PENDING";
    return NULL;
}
