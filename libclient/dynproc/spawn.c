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
    if (svc->host_nodes) return svc->host_nodes(host, out, cap);
    /* an agent without it: this node by its usual names */
    int self = strcmp(host, "localhost") == 0 ||
               (me->info->hostname && strcmp(host, me->info->hostname) == 0);
    if (self && cap > 0) out[0] = me->job->net ? me->job->net->node : 0;
    return self;
}

/* The root's part: checks the commands, reserves and records the children and has the agent
 * start them.  An MPI error class, with the reason in why. */
static int root_spawn(struct tm_rank *me, const struct tm_comm *pc, int count, char **cmds,
                      char ***argvs, const int *maxprocs, const MPI_Info *infos,
                      struct spawn_hdr *h, char *why, size_t len)
{
    struct tm_job *j = me->job;
    if (count < 1) return snprintf(why, len, "count %d is not positive", count), MPI_ERR_ARG;
    if (!cmds || !maxprocs)
        return snprintf(why, len, "array of commands or maxprocs is NULL"), MPI_ERR_ARG;
    struct tmpi_spawn_app *apps = calloc((size_t)count, sizeof *apps);
    if (!apps) return snprintf(why, len, "out of memory"), MPI_ERR_NO_MEM;
    int total = 0, err = MPI_SUCCESS;
    const char *host = NULL; /* the info key host of the commands that have it */
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
        const char *hk = in ? tm_info_lookup(in, "host") : NULL;
        if (hk && host && strcmp(hk, host) != 0) {
            /* one spawn's ranks are one row of the universe: on one host */
            snprintf(why, len, "the commands name two hosts, %s and %s: one spawn goes to one host",
                     host, hk);
            err = MPI_ERR_SPAWN;
            break;
        }
        if (hk) host = hk;
        apps[k] = (struct tmpi_spawn_app){
            .command = cmds[k],
            .argv = argvs ? argvs[k] : NULL,
            .maxprocs = maxprocs[k],
            .wdir = in ? tm_info_lookup(in, "wdir") : NULL,
            .path = in ? tm_info_lookup(in, "path") : NULL,
        };
        total += maxprocs[k];
    }
    if (!err && !j->svc->spawn) {
        snprintf(why, len, "the agent cannot spawn ranks");
        err = MPI_ERR_SPAWN;
    }
    int first = -1, hnodes[TM_SPAWN_HOST_NODES], nh = -1;
    if (!err && host) {
        nh = host_nodes(me, host, hnodes, TM_SPAWN_HOST_NODES);
        if (nh == 0) {
            snprintf(why, len,
                     "host %s is not a node of the job (its host file's hosts, or this "
                     "node's name %s)",
                     host, me->info->hostname ? me->info->hostname : "?");
            err = MPI_ERR_SPAWN;
        }
        if (nh > TM_SPAWN_HOST_NODES) nh = TM_SPAWN_HOST_NODES;
    }
    /* a host several agents share: the first of its nodes with room */
    for (int k = 0; !err && k < nh && first < 0; k++)
        first = tm_spawn_reserve(me, total, hnodes[k]);
    if (!err && nh > 0 && first < 0) {
        snprintf(why, len, "host %s: %d ranks asked, fewer free slots left there in a row", host,
                 total);
        err = MPI_ERR_SPAWN;
    }
    if (!err && nh < 0 && (first = tm_spawn_reserve(me, total, -1)) < 0) {
        int left = j->size - atomic_load(&j->spawn_next);
        if (first == -1 && !j->net)
            snprintf(why, len, "%d ranks asked, %d left of the universe of %d (MPI_UNIVERSE_SIZE)",
                     total, left < 0 ? 0 : left, j->size);
        else
            snprintf(why, len,
                     "%d ranks asked, fewer left of the universe of %d "
                     "(MPI_UNIVERSE_SIZE)%s%s",
                     total, j->size, first < -1 ? ": " : "", first < -1 ? strerror(-first) : "");
        err = MPI_ERR_SPAWN;
    }
    int32_t *cmap = NULL, *pmap = NULL;
    struct tm_spawn_req rq = {.apps = apps, .napps = count, .first = first, .n = total};
    int wreuse = 0;
    if (!err) {
        cmap = malloc(sizeof *cmap * (size_t)total);
        pmap = members(pc);
        if (cmap)
            for (int i = 0; i < total; i++)
                cmap[i] = first + i;
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
            has = nor[first + i] == node;
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
        int rc = j->svc->spawn(apps, count, first, aerr, sizeof aerr);
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
    if (err && first >= 0) (void)tm_spawn_release(me, first, total);
    free(began);
    if (!err) *h = (struct spawn_hdr){0, first, total, {rq.ctx[0], rq.ctx[1], rq.ctx[2]}};
    free(cmap);
    free(pmap);
    free(apps);
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
    if (cr->rank == root)
        h.err = root_spawn(me, cr->c, count, cmds, argvs, maxprocs, infos, &h, why, sizeof why);
    int e = PMPI_Bcast(&h, (int)(sizeof h / sizeof(int32_t)), MPI_INT, root, comm);
    if (e != MPI_SUCCESS) return e;
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
    int32_t *lmap = members(cr->c), *rmap = malloc(sizeof *rmap * (size_t)h.n);
    int err = lmap && rmap ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (!err) {
        for (int i = 0; i < h.n; i++)
            rmap[i] = h.first + i;
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
            cmap[i] = r->first + i;
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
