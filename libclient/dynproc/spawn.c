/* spawn.c — MPI_Comm_spawn and MPI_Comm_spawn_multiple (spawn.h). */
#include "spawn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "ctx.h"
#include "errh.h"
#include "info.h"
#include "intercomm.h"
#include "port.h"
#include "net_p2p.h"
#include "dyn_net.h"

/* What the root tells comm: the outcome (an MPI error class) and the children. */
struct spawn_hdr {
    int32_t err, first, n, ctx[3];
};

void tm_dynproc_free(struct tm_job *j)
{
    tm_spawn_recs_free(j);
}

/* The world ranks of comm's members, malloc'd. */
static int32_t *members(const struct tm_comm *c)
{
    int32_t *v = malloc(sizeof *v * (size_t)c->size);
    if (v)
        for (int i = 0; i < c->size; i++)
            v[i] = tm_comm_world_rank(c, i);
    return v;
}

/* The most nodes one host name may stand for (several agents on one machine). */
#define TM_SPAWN_HOST_NODES 64

/* The nodes of the job that host names (svc host_nodes), the first cap into out; how many. */
static int host_nodes(struct tm_rank *me, const char *host, int *out, int cap)
{
    const struct tmpi_svc *svc = me->job->svc;
    if (svc->host_nodes) {
        /* the host file's names and this node's own; else another node's own name (its
         * agent's, its machine's), which only that node knows */
        int n = svc->host_nodes(host, out, cap);
        if (n == 0 && me->job->net) n = tm_dyn_host_nodes(me, host, out, cap);
        return n < 0 ? 0 : n;
    }
    /* an agent without it: this node by its usual names */
    int self = strcmp(host, "localhost") == 0 ||
               (me->info->hostname && strcmp(host, me->info->hostname) == 0);
    if (self && cap > 0) out[0] = me->job->net ? me->job->net->node : 0;
    return self;
}

/* Whether two commands' info key host (NULL: none) are the same: one row of ranks. */
static int same_host(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Reserves n world ranks in a row for commands that name host (NULL: anywhere in the
 * universe): MPI_SUCCESS with the first in *ret_first, else an MPI error class with the
 * reason in why. */
static int reserve_run(struct tm_rank *me, const char *host, int n, int *ret_first, char *why,
                       size_t len)
{
    struct tm_job *j = me->job;
    int first = -1, hnodes[TM_SPAWN_HOST_NODES];
    if (host) {
        int nh = host_nodes(me, host, hnodes, TM_SPAWN_HOST_NODES);
        if (nh == 0) {
            snprintf(why, len,
                     "host %s is not a node of the job (its host file's hosts, their agents' "
                     "names, or this node's name %s)",
                     host, me->info->hostname ? me->info->hostname : "?");
            return MPI_ERR_SPAWN;
        }
        if (nh > TM_SPAWN_HOST_NODES) nh = TM_SPAWN_HOST_NODES;
        /* a host several agents share: the first of its nodes with room */
        for (int k = 0; k < nh && first < 0; k++)
            first = tm_spawn_reserve(me, n, hnodes[k]);
        if (first < 0) {
            snprintf(why, len, "host %s: %d ranks asked, fewer free slots left there in a row",
                     host, n);
            return MPI_ERR_SPAWN;
        }
    } else if ((first = tm_spawn_reserve(me, n, -1)) < 0) {
        int left = j->size - atomic_load(&j->spawn_next);
        if (first == -1 && !j->net)
            snprintf(why, len, "%d ranks asked, %d left of the universe of %d (MPI_UNIVERSE_SIZE)",
                     n, left < 0 ? 0 : left, j->size);
        else
            snprintf(why, len,
                     "%d ranks asked, fewer left of the universe of %d "
                     "(MPI_UNIVERSE_SIZE)%s%s",
                     n, j->size, first < -1 ? ": " : "", first < -1 ? strerror(-first) : "");
        return MPI_ERR_SPAWN;
    }
    *ret_first = first;
    return MPI_SUCCESS;
}

/* The longest line of a hostfile info key's file that is read. */
#define TM_SPAWN_HOSTFILE_LINE 1024

/* Open MPI's info key hostfile: the file's hosts as a host list of want slots at most (lines
 * "HOST [slots=N] [port=P]", '#' comments; no slots: one; a port makes it HOST:P, the name
 * of one of several agents on a machine), malloc'd into *ret.  MPI_SUCCESS or an MPI error
 * class with the reason in why. */
static int hostfile_list(const char *path, int want, char **ret, char *why, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return snprintf(why, len, "hostfile %s: %s", path, strerror(errno)), MPI_ERR_SPAWN;
    size_t cap = 256, used = 0;
    char *list = malloc(cap), line[TM_SPAWN_HOSTFILE_LINE];
    int n = 0, err = list ? MPI_SUCCESS : MPI_ERR_NO_MEM, lineno = 0;
    if (list) list[0] = 0;
    while (!err && n < want && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#'), *save = NULL;
        if (hash) *hash = 0;
        char *host = strtok_r(line, " \t\r\n", &save), *tok;
        if (!host) continue;
        long slots = 1, port = 0;
        while (!err && (tok = strtok_r(NULL, " \t\r\n", &save))) {
            char *end = NULL;
            if (!strncmp(tok, "slots=", 6))
                slots = strtol(tok + 6, &end, 10);
            else if (!strncmp(tok, "port=", 5))
                port = strtol(tok + 5, &end, 10);
            if (!end || *end || slots < 1 || port < 0 || port > 65535) {
                snprintf(why, len, "hostfile %s line %d: %s is not slots=N or port=P", path, lineno,
                         tok);
                err = MPI_ERR_SPAWN;
            }
        }
        char name[300];
        snprintf(name, sizeof name, port ? "%s:%ld" : "%s", host, port);
        for (long i = 0; !err && i < slots && n < want; i++, n++) {
            size_t l = strlen(name) + 1;
            if (used + l + 1 > cap) {
                char *more = realloc(list, cap = 2 * (used + l + 1));
                if (!more) {
                    err = MPI_ERR_NO_MEM;
                    break;
                }
                list = more;
            }
            used += (size_t)snprintf(list + used, cap - used, "%s%s", used ? "," : "", name);
        }
    }
    fclose(f);
    if (!err && n == 0) {
        snprintf(why, len, "hostfile %s names no host", path);
        err = MPI_ERR_SPAWN;
    }
    if (err == MPI_ERR_NO_MEM) snprintf(why, len, "out of memory");
    if (err) {
        free(list);
        return err;
    }
    *ret = list;
    return MPI_SUCCESS;
}

/* The root's part: checks the commands, reserves and records the children and has the agent
 * start them.  An MPI error class, with the reason in why; on success the children's world
 * ranks, in their MPI_COMM_WORLD's order, in *ret_cmap (malloc'd, h->n of them). */
static int root_spawn(struct tm_rank *me, const struct tm_comm *pc, int count, char **cmds,
                      char ***argvs, const int *maxprocs, const MPI_Info *infos,
                      struct spawn_hdr *h, int32_t **ret_cmap, char *why, size_t len)
{
    struct tm_job *j = me->job;
    *ret_cmap = NULL;
    if (count < 1) return snprintf(why, len, "count %d is not positive", count), MPI_ERR_ARG;
    if (!cmds || !maxprocs)
        return snprintf(why, len, "array of commands or maxprocs is NULL"), MPI_ERR_ARG;
    /* each command's info: its host value (info key host, else Open MPI's add-host), wdir, path */
    const char **hv = calloc((size_t)count * 3, sizeof *hv), **wd = hv + count, **pa = wd + count;
    char **own = calloc((size_t)count, sizeof *own); /* the lists made of hostfiles */
    if (!hv || !own) {
        free(hv);
        free(own);
        return snprintf(why, len, "out of memory"), MPI_ERR_NO_MEM;
    }
    int total = 0, err = MPI_SUCCESS, napps = 0;
    for (int k = 0; k < count && !err; k++) {
        if (!cmds[k] || !cmds[k][0]) {
            snprintf(why, len, "command %d is %s", k, cmds[k] ? "empty" : "NULL");
            err = MPI_ERR_ARG;
        } else if (maxprocs[k] < 1) {
            snprintf(why, len, "maxprocs %d of %s is not positive", maxprocs[k], cmds[k]);
            err = MPI_ERR_ARG;
        } else if (maxprocs[k] > j->size - total) {
            snprintf(why, len, "%d ranks of %s do not fit in the universe of %d", maxprocs[k],
                     cmds[k], j->size);
            err = MPI_ERR_SPAWN;
        }
        if (err) break;
        struct tm_info *in = NULL;
        MPI_Info ih = infos ? infos[k] : MPI_INFO_NULL;
        if (ih != MPI_INFO_NULL && !(in = tm_info_get(me, ih))) {
            snprintf(why, len, "invalid info %d for command %s", ih, cmds[k]);
            err = MPI_ERR_INFO;
            break;
        }
        hv[k] = in ? tm_info_lookup(in, "host") : NULL;
        /* a running job takes no new hosts: add-host names hosts of the job, as host does */
        if (!hv[k] && in) hv[k] = tm_info_lookup(in, "add-host");
        /* and Open MPI's hostfile (add-hostfile) as the list of its hosts' slots */
        const char *hf = !hv[k] && in ? tm_info_lookup(in, "hostfile") : NULL;
        if (!hv[k] && in && !hf) hf = tm_info_lookup(in, "add-hostfile");
        if (hf && (err = hostfile_list(hf, maxprocs[k], &own[k], why, len))) break;
        if (hf) hv[k] = own[k];
        wd[k] = in ? tm_info_lookup(in, "wdir") : NULL;
        pa[k] = in ? tm_info_lookup(in, "path") : NULL;
        int entries = 1;
        for (const char *c = hv[k]; c && *c; c++)
            entries += *c == ',';
        if (entries > 1 && entries < maxprocs[k]) {
            snprintf(why, len, "host %s lists %d slots for the %d ranks of %s", hv[k], entries,
                     maxprocs[k], cmds[k]);
            err = MPI_ERR_SPAWN;
        }
        napps += entries > 1 ? maxprocs[k] : 1;
        total += maxprocs[k];
    }
    if (!err && !j->svc->spawn) {
        snprintf(why, len, "the agent cannot spawn ranks");
        err = MPI_ERR_SPAWN;
    }
    /* The parts of the commands: a command whose host is a list ("a,b,a", Open MPI's: one
     * slot an entry, its ranks fill them in order) has a part per run of one host in it,
     * the others one part; each part its own entry of apps with the command's appnum. */
    struct tmpi_spawn_app *apps = err ? NULL : calloc((size_t)napps, sizeof *apps);
    char **hosts = err ? NULL : calloc((size_t)napps, sizeof *hosts); /* each part's host */
    if (!err && (!apps || !hosts)) {
        snprintf(why, len, "out of memory");
        err = MPI_ERR_NO_MEM;
    }
    napps = 0;
    for (int k = 0; !err && k < count; k++) {
        const char *c = hv[k];
        for (int left = maxprocs[k]; !err && left > 0;) {
            /* the next entry of the list (the whole value when it has no comma) */
            const char *e = c ? strchr(c, ',') : NULL;
            size_t l = c ? (e ? (size_t)(e - c) : strlen(c)) : 0;
            int n = c && e ? 1 : left;
            while (c && e && n < left && strncmp(e + 1, c, l) == 0 &&
                   (e[1 + l] == ',' || e[1 + l] == 0)) {
                n++; /* the same host again: one part */
                e = e[1 + l] == ',' ? e + 1 + l : NULL;
            }
            if (c && !(hosts[napps] = strndup(c, l))) {
                snprintf(why, len, "out of memory");
                err = MPI_ERR_NO_MEM;
                break;
            }
            if (c && !hosts[napps][0]) {
                snprintf(why, len, "host %s of %s has an empty entry", hv[k], cmds[k]);
                err = MPI_ERR_SPAWN;
            }
            apps[napps++] = (struct tmpi_spawn_app){
                .command = cmds[k],
                .argv = argvs ? argvs[k] : NULL,
                .maxprocs = n,
                .first = -1,
                .appnum = k,
                .wdir = wd[k],
                .path = pa[k],
            };
            left -= n;
            c = e ? e + 1 : c;
        }
    }
    for (int k = 0; k < count; k++)
        free(own[k]);
    free(own);
    free(hv);
    /* Each run of parts naming one host (or none) takes a row of the universe: on that
     * host's node, so that spawn_multiple places every command on its own host.  The
     * children's MPI_COMM_WORLD is the commands' ranks in command order all the same. */
    for (int k0 = 0, k1; !err && k0 < napps; k0 = k1) {
        int n = 0, f = -1;
        for (k1 = k0; k1 < napps && same_host(hosts[k0], hosts[k1]); k1++)
            n += apps[k1].maxprocs;
        err = reserve_run(me, hosts[k0], n, &f, why, len);
        for (int k = k0; !err && k < k1; f += apps[k++].maxprocs)
            apps[k].first = f;
    }
    int first = apps ? apps[0].first : -1;
    int32_t *cmap = NULL, *pmap = NULL;
    struct tm_spawn_req rq = {.apps = apps, .napps = napps, .first = first, .n = total};
    int wreuse = 0;
    if (!err) {
        cmap = malloc(sizeof *cmap * (size_t)total);
        pmap = members(pc);
        for (int k = 0, i = 0; cmap && k < napps; k++)
            for (int r = 0; r < apps[k].maxprocs; r++)
                cmap[i++] = apps[k].first + r;
        int ictx[3], reuse = 0, wctx = -1;
        if (!cmap || !pmap || tm_ctx_for(me, cmap, total, NULL, 0, 1, &wctx, &wreuse) < 0 ||
            tm_ctx_for(me, pmap, pc->size, cmap, total, 3, ictx, &reuse) < 0) {
            snprintf(why, len, "out of memory or context ids");
            err = MPI_ERR_NO_MEM;
        } else {
            rq.wctx = wctx;
            memcpy(rq.ctx, ictx, sizeof ictx);
            rq.pmap = pmap;
            rq.pn = pc->size;
        }
    }
    /* this node's record (the children here point at it), then each node's ranks: the other
     * nodes' first, so that a program missing there fails the spawn before any rank runs here */
    if (!err && tm_spawn_rec_add(j, &rq, wreuse) < 0) {
        snprintf(why, len, "out of memory");
        err = MPI_ERR_NO_MEM;
    }
    pthread_mutex_lock(&j->spawn_lock);
    j->spawn_free = tm_dynproc_free;
    pthread_mutex_unlock(&j->spawn_lock);
    const int32_t *nor = j->net ? j->net->node_of_rank : NULL;
    int mine = 0, nn = nor ? j->net->nnodes : 0;
    /* the nodes whose share started (its ranks wait before main, svc spawn_gate): told at
     * the end whether they run, so a spawn that fails on one node leaves nothing running */
    unsigned char *began = nn ? calloc((size_t)nn, 1) : NULL;
    if (!err && nn && !began) {
        snprintf(why, len, "out of memory");
        err = MPI_ERR_NO_MEM;
    }
    for (int node = 0; !err && nor && node < nn; node++) {
        int has = 0;
        for (int i = 0; i < total && !has; i++)
            has = nor[cmap[i]] == node;
        if (node == j->net->node) mine = has;
        if (!has || node == j->net->node) continue;
        char aerr[TM_SPAWN_WHY_MAX + 32] = "";
        int rc = tm_spawn_remote(me, node, &rq, aerr, sizeof aerr);
        if (rc < 0) {
            snprintf(why, len, "%s", aerr);
            err = MPI_ERR_SPAWN;
        } else {
            began[node] = 1;
        }
    }
    int here = 0;
    if (!err && (!nor || mine)) {
        char aerr[256] = "";
        int rc = j->svc->spawn(apps, napps, first, aerr, sizeof aerr);
        if (rc < 0) {
            snprintf(why, len, "%s", aerr[0] ? aerr : strerror(-rc));
            err = MPI_ERR_SPAWN;
        } else {
            here = 1;
        }
    }
    /* a node the outcome cannot reach has lost its link: that ends the job, and its ranks */
    for (int node = 0; node < nn; node++)
        if (began[node]) (void)tm_spawn_remote_gate(me, node, first, !err);
    if (here && j->svc->spawn_gate) (void)j->svc->spawn_gate(first, !err);
    /* none of a failed spawn's ranks runs: its slots are free for the next */
    for (int k = 0; err && apps && k < napps; k++)
        if (apps[k].first >= 0) (void)tm_spawn_release(me, apps[k].first, apps[k].maxprocs);
    free(began);
    if (!err) {
        *h = (struct spawn_hdr){0, first, total, {rq.ctx[0], rq.ctx[1], rq.ctx[2]}};
        *ret_cmap = cmap;
        cmap = NULL;
    }
    free(cmap);
    free(pmap);
    free(apps);
    for (int k = 0; hosts && k < napps; k++)
        free(hosts[k]);
    free(hosts);
    return err;
}

static int spawn_common(const char *fn, int count, char **cmds, char ***argvs, const int *maxprocs,
                        const MPI_Info *infos, int root, MPI_Comm comm, MPI_Comm *intercomm,
                        int *errcodes)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (cr->c->inter) return tm_err(me, comm, MPI_ERR_COMM, fn, "comm is an inter-communicator");
    if (root < 0 || root >= cr->c->size)
        return tm_err(me, comm, MPI_ERR_ROOT, fn, "invalid root %d", root);
    if (!intercomm) return tm_err(me, comm, MPI_ERR_ARG, fn, "intercomm is NULL");
    struct spawn_hdr h = {MPI_SUCCESS, 0, 0, {0, 0, 0}};
    char why[320] = "";
    int32_t *rmap = NULL;
    if (cr->rank == root)
        h.err =
            root_spawn(me, cr->c, count, cmds, argvs, maxprocs, infos, &h, &rmap, why, sizeof why);
    int e = PMPI_Bcast(&h, (int)(sizeof h / sizeof(int32_t)), MPI_INT, root, comm);
    if (e != MPI_SUCCESS) {
        free(rmap);
        return e;
    }
    /* the children's world ranks, which spawn_multiple's hosts may set apart */
    if (h.err == MPI_SUCCESS && cr->rank != root)
        rmap = malloc(sizeof *rmap * (size_t)(h.n > 0 ? h.n : 1));
    int mapped = rmap ? 1 : 0, all_mapped = 0;
    if (h.err == MPI_SUCCESS) {
        e = PMPI_Allreduce(&mapped, &all_mapped, 1, MPI_INT, MPI_MIN, comm);
        if (e == MPI_SUCCESS && all_mapped) e = PMPI_Bcast(rmap, h.n, MPI_INT32_T, root, comm);
        if (e == MPI_SUCCESS && !all_mapped) e = MPI_ERR_NO_MEM;
        if (e != MPI_SUCCESS) {
            free(rmap);
            *intercomm = MPI_COMM_NULL;
            return tm_err(me, comm, e, fn, "out of memory for the children's ranks");
        }
    }
    /* errcodes has maxprocs entries (spawn) or their sum (spawn_multiple): significant at the
     * root, which alone knows how many (MPI 4.1 §11.8.2) */
    if (h.err != MPI_SUCCESS) {
        *intercomm = MPI_COMM_NULL;
        if (errcodes && cr->rank == root && maxprocs && count > 0) {
            int n = 0;
            for (int k = 0; k < count; k++)
                n += maxprocs[k] > 0 ? maxprocs[k] : 0;
            for (int i = 0; i < n; i++)
                errcodes[i] = h.err;
        }
        return tm_err(me, comm, h.err, fn, "%s",
                      cr->rank == root ? why : "the root could not spawn the ranks");
    }
    if (errcodes && cr->rank == root)
        for (int i = 0; i < h.n; i++)
            errcodes[i] = MPI_SUCCESS;
    int32_t *lmap = members(cr->c);
    int err = lmap ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (!err) {
        err = tm_intercomm_attach(me, h.ctx, lmap, cr->c->size, rmap, h.n, cr->rank, cr->eh,
                                  intercomm);
    }
    free(lmap);
    free(rmap);
    return err ? tm_err(me, comm, err, fn, "out of memory") : MPI_SUCCESS;
}

TM_API int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                           MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmd = (char *)command;
    char **av = argv;
    return spawn_common("MPI_Comm_spawn", 1, &cmd, &av, &maxprocs, &info, root, comm, intercomm,
                        array_of_errcodes);
}
TM_ALIAS(Comm_spawn)

TM_API int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                                    const int array_of_maxprocs[], const MPI_Info array_of_info[],
                                    int root, MPI_Comm comm, MPI_Comm *intercomm,
                                    int array_of_errcodes[])
{
    return spawn_common("MPI_Comm_spawn_multiple", count, array_of_commands, array_of_argv,
                        array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes);
}
TM_ALIAS(Comm_spawn_multiple)

int tm_spawn_parent(struct tm_rank *me, MPI_Comm *parent)
{
    if (!me->spawn) {
        *parent = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (!me->parent_made) {
        struct tm_spawn_rec *r = me->spawn;
        int32_t *cmap = malloc(sizeof *cmap * (size_t)r->n);
        if (!cmap) return MPI_ERR_NO_MEM;
        for (int i = 0; i < r->n; i++)
            cmap[i] = tm_comm_world_rank(r->world, i);
        int err = tm_intercomm_attach(me, r->ctx, cmap, r->n, r->pmap, r->pn, me->world_rank,
                                      MPI_ERRORS_ARE_FATAL, &me->parent);
        free(cmap);
        if (err) return err;
        /* its default name (MPI 4.1 §11.8.2) */
        PMPI_Comm_set_name(me->parent, "MPI_COMM_PARENT");
        me->parent_made = 1;
    }
    *parent = me->parent;
    return MPI_SUCCESS;
}
