/* dyn_tab.c — a job's ports and names on one node (dyn_tab.h). */
#include "dyn_tab.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wait.h"

struct tm_port *tm_port_find(struct tm_job *j, const char *name)
{
    for (struct tm_port *p = j->ports; p; p = p->next)
        if (strcmp(p->name, name) == 0) return p;
    return NULL;
}

void tm_port_enqueue(struct tm_port *p, struct tm_conn_req *r)
{
    r->next = NULL;
    if (p->tail)
        p->tail->next = r;
    else
        atomic_store(&p->head, r);
    p->tail = r;
    if (p->acceptor) tm_wake(&p->acceptor->waker);
}

int tm_port_dequeue(struct tm_port *p, struct tm_conn_req *r)
{
    struct tm_conn_req *prev = NULL;
    for (struct tm_conn_req *q = atomic_load(&p->head); q; prev = q, q = q->next) {
        if (q != r) continue;
        if (prev)
            prev->next = q->next;
        else
            atomic_store(&p->head, q->next);
        if (p->tail == q) p->tail = prev;
        return 1;
    }
    return 0;
}

int tm_port_pending(const struct tm_job *j)
{
    int n = 0;
    for (const struct tm_port *p = j->ports; p; p = p->next)
        for (const struct tm_conn_req *q = atomic_load(&p->head); q; q = q->next)
            n++;
    return n;
}

int tm_connect_pending_max(void)
{
    const char *v = getenv("TMPI_CONNECT_PENDING_MAX");
    if (!v || !*v) return TM_CONNECT_PENDING_MAX;
    char *end;
    long n = strtol(v, &end, 10);
    return !*end && n >= 0 && n <= TM_CONNECT_PENDING_LIMIT ? (int)n : -1;
}

int tm_port_node(const struct tm_job *j, const char *name)
{
    unsigned long long id;
    int n, node = 0;
    int k = sscanf(name, "tmpi-port:%llu:%d:%d", &id, &n, &node);
    if (k < 2 || id != (unsigned long long)j->id) return -1;
    return k == 3 ? node : 0;
}

int tm_names_op_here(struct tm_job *j, int op, const char *service, const char *port, char *out,
                     size_t cap)
{
    struct tm_pubname *n = NULL;
    if (op == TM_NAME_PUBLISH) {
        n = calloc(1, sizeof *n);
        if (n) {
            n->service = strdup(service);
            n->port = strdup(port);
        }
        if (!n || !n->service || !n->port) {
            if (n) free(n->service), free(n->port);
            free(n);
            return -ENOMEM;
        }
    }
    int rc = 0;
    pthread_mutex_lock(&j->spawn_lock);
    struct tm_pubname **pp = &j->names;
    while (*pp && !(strcmp((*pp)->service, service) == 0 &&
                    (op != TM_NAME_UNPUBLISH || strcmp((*pp)->port, port) == 0)))
        pp = &(*pp)->next;
    struct tm_pubname *have = *pp;
    if (op == TM_NAME_PUBLISH) {
        if (have) {
            rc = -EEXIST;
        } else {
            n->next = j->names;
            j->names = n;
            n = NULL;
        }
    } else if (!have) {
        rc = -ENOENT;
    } else if (op == TM_NAME_UNPUBLISH) {
        *pp = have->next;
        n = have;
    } else {
        snprintf(out, cap, "%s", have->port);
    }
    pthread_mutex_unlock(&j->spawn_lock);
    if (n) {
        free(n->service);
        free(n->port);
        free(n);
    }
    return rc;
}

void tm_dyn_tabs_free(struct tm_job *j)
{
    for (struct tm_port *p = j->ports, *next; p; p = next) {
        next = p->next;
        /* requests of other nodes nobody accepted: their askers are gone with the job */
        for (struct tm_conn_req *r = atomic_load(&p->head), *rn; r; r = rn) {
            rn = r->next;
            if (r->remote) free(r);
        }
        free(p);
    }
    for (struct tm_pubname *n = j->names, *next; n; n = next) {
        next = n->next;
        free(n->service);
        free(n->port);
        free(n);
    }
    j->ports = NULL;
    j->names = NULL;
}
