/* job_member.c — a member's ctl connection to its job's coordinator (job_member.h). */
#include "job_member.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "allow.h"
#include "frame.h"
#include "job.h"
#include "job_link.h"
#include "job_signal.h"
#include "jobhost.h"
#include "log.h"
#include "mesh.h"
#include "progcache.h"
#include "progset.h"

/* One coordinator connection carrying one member job.  Loop thread only. */
struct job_member {
    struct agent *a;
    struct mesh_conn *conn;
    struct job *job; /* NULL before the assignment was accepted, and once freed */
    int started;     /* the job host runs; the job is in the agent's list */
    uint64_t uid;
    struct progset progs; /* the job's programs, pinned or arriving */
};

static void member_free(struct job_member *m)
{
    progset_free(&m->progs);
    free(m);
}

static void send_loaded_error(struct job_member *m, const char *error)
{
    Tmpi__JobLoaded jl = TMPI__JOB_LOADED__INIT;
    jl.uid = m->uid;
    jl.ok = 0;
    jl.error = (char *)error;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_LOADED;
    env.job_loaded = &jl;
    (void)mesh_send(m->conn, &env);
}

/* Gives up the connection: the coordinator reads what was queued, then sees it close. */
static void member_close(struct job_member *m)
{
    if (m->job && !m->started) {
        m->job->member = NULL;
        job_free(m->job);
        m->job = NULL;
    }
    if (m->job) {
        /* the job thread may still write: it finds no channel */
        m->job->member = NULL;
        job_detach(m->job, "the job's coordinator closed the connection");
        m->job = NULL;
    }
    mesh_conn_close(m->conn);
    member_free(m);
}

/* Refuses the assignment with a reason the coordinator shows, and leaves. */
static void refuse(struct job_member *m, const char *why)
{
    log_notice("mesh: job from %s refused: %s", mesh_conn_peer_name(m->conn), why);
    send_loaded_error(m, why);
    member_close(m);
}

static void start(struct job_member *m, struct program **progs)
{
    struct job *j = m->job;
    int r = job_start(j, progs);
    free(progs);
    if (r < 0) {
        char why[128];
        snprintf(why, sizeof why, "cannot start the job: %s", strerror(-r));
        refuse(m, why);
        return;
    }
    m->started = 1;
    struct agent *a = m->a;
    j->next = a->jobs;
    a->jobs = j;
    a->njobs++;
    agent_notify_status(a);
    log_info("job %llu: node %d of %d of job %016llx coordinated by %s", (unsigned long long)j->id,
             j->node, j->nnodes, (unsigned long long)m->uid, j->coordinator);
}

/* Asks the coordinator for the next program the job lacks, or starts it once all are here. */
static void need_programs(struct job_member *m)
{
    const uint8_t *hash;
    int r = progset_need(&m->progs, &hash);
    if (r < 0) {
        refuse(m, "out of memory for the program");
        return;
    }
    if (r == 0) {
        start(m, progset_take(&m->progs));
        return;
    }
    Tmpi__NeedProgram np = TMPI__NEED_PROGRAM__INIT;
    np.program_hash.data = (uint8_t *)hash;
    np.program_hash.len = PROGRAM_HASH_SIZE;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_NEED_PROGRAM;
    env.need_program = &np;
    (void)mesh_send(m->conn, &env);
}

static void on_chunk(struct job_member *m, const Tmpi__ProgramChunk *ch)
{
    const char *why = NULL;
    int r = progset_chunk(&m->progs, ch, &why);
    if (r == -EPROTO)
        refuse(m, why);
    else if (r < 0)
        refuse(m, "out of memory for the program");
    else if (r == 1)
        need_programs(m);
}

static void on_frame(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env)
{
    struct job_member *m = arg;
    struct job *j = m->job;
    uint64_t uid = 0;
    switch (env->msg_case) {
    case TMPI__ENVELOPE__MSG_PROGRAM_CHUNK:
        if (j && !m->started) {
            on_chunk(m, env->program_chunk);
            return;
        }
        break;
    case TMPI__ENVELOPE__MSG_JOB_CONNECT:
        uid = env->job_connect->uid;
        if (j && m->started && uid == m->uid) {
            job_link_connect(j->link);
            return;
        }
        break;
    case TMPI__ENVELOPE__MSG_JOB_GO:
        if (j && m->started && env->job_go->uid == m->uid) {
            jobhost_forward(j, env);
            return;
        }
        break;
    case TMPI__ENVELOPE__MSG_JOB_RELEASE:
        if (j && m->started && env->job_release->uid == m->uid) {
            jobhost_forward(j, env);
            return;
        }
        break;
    case TMPI__ENVELOPE__MSG_RANKS_QUERY:
        /* before its host runs there is nobody to ask: the coordinator asks after JobGo */
        if (env->ranks_query->uid != m->uid) break;
        if (j && m->started) jobhost_forward(j, env);
        return;
    case TMPI__ENVELOPE__MSG_SIGNAL_JOB:
        if (j && m->started && env->signal_job->job_id == m->uid &&
            job_signal(j, env->signal_job->signo) == 0)
            return;
        break;
    case TMPI__ENVELOPE__MSG_STDIN_DATA:
        /* the launcher's stdin for rank 0 here, windowed by the coordinator; a chunk after
         * the host ended has nobody to go to */
        if (j && m->started && j->host && jobhost_stdin(j, env->stdin_data) != -EPROTO) return;
        break;
    case TMPI__ENVELOPE__MSG_JOB_CANCEL:
        if (env->job_cancel->uid != m->uid) break;
        if (j && m->started) {
            const char *why = env->job_cancel->reason;
            job_cancel(j, env->job_cancel->exit_status, why && *why ? why : "cancelled");
        } else {
            member_close(m); /* nothing runs yet */
        }
        return;
    default:
        break;
    }
    log_warning("mesh: unexpected '%s' from the coordinator %s; dropping the job's connection",
                frame_msg_name(env), mesh_conn_peer_name(c));
    member_close(m);
}

static void on_drain(void *arg, struct mesh_conn *c)
{
    struct job_member *m = arg;
    struct job *j = m->job;
    if (!j || !m->started) return;
    /* Output drained: read the host's frames again. */
    jobhost_launcher_drained(j);
}

static void on_close(void *arg, struct mesh_conn *c, int err, const char *why)
{
    struct job_member *m = arg;
    struct job *j = m->job;
    if (j && m->started) {
        j->member = NULL;
        if (jobhost_ended(j)) {
            /* finished here: only the channel goes; the host may unload */
            pthread_mutex_lock(&j->out_mu);
            j->bev = NULL;
            pthread_mutex_unlock(&j->out_mu);
            Tmpi__JobRelease jr = TMPI__JOB_RELEASE__INIT;
            jr.uid = m->uid;
            Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
            env.msg_case = TMPI__ENVELOPE__MSG_JOB_RELEASE;
            env.job_release = &jr;
            jobhost_forward(j, &env);
        } else {
            log_notice("job %llu: lost the connection to the coordinator %s: %s",
                       (unsigned long long)j->id, j->coordinator, why);
            char reason[256];
            snprintf(reason, sizeof reason, "lost the connection to the job's coordinator %s: %s",
                     j->coordinator, why);
            job_detach(j, reason);
        }
    } else if (j) {
        j->member = NULL;
        job_free(j);
    }
    m->job = NULL;
    member_free(m);
}

static const struct mesh_ctl_ops member_ops = {
    .on_frame = on_frame,
    .on_drain = on_drain,
    .on_close = on_close,
};

/* The job's host runs as its owner: the same user (name and uid) must exist here. */
static int check_owner(const struct agent *a, const Tmpi__JobAssign *ja, char *err, size_t errlen)
{
    struct passwd pw, *pwp = NULL;
    char buf[4096];
    const char *owner = ja->owner && *ja->owner ? ja->owner : "?";
    if (getpwuid_r(ja->owner_uid, &pw, buf, sizeof buf, &pwp) != 0 || !pwp) {
        snprintf(err, errlen, "user %s (uid %u) does not exist on %s", owner,
                 (unsigned)ja->owner_uid, a->cfg.name);
        return -ESRCH;
    }
    if (strcmp(pw.pw_name, owner) != 0) {
        snprintf(err, errlen,
                 "uid %u is %s on %s, not %s: the job's user must be the same on "
                 "every node",
                 (unsigned)ja->owner_uid, pw.pw_name, a->cfg.name, owner);
        return -EPERM;
    }
    /* The submitting node's agent checked its own rules; this node's rules (allow_users_dir
     * above all: an allocation on one node is no right to the others) are checked here. */
    if (!allow_submit(&a->cfg, (uid_t)ja->owner_uid, (gid_t)ja->owner_gid, err, errlen))
        return -EPERM;
    return 0;
}

static Tmpi__JobAssign *copy_assign(const Tmpi__JobAssign *ja)
{
    size_t len = tmpi__job_assign__get_packed_size(ja);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) return NULL;
    tmpi__job_assign__pack(ja, buf);
    Tmpi__JobAssign *copy = tmpi__job_assign__unpack(NULL, len, buf);
    free(buf);
    return copy;
}

void job_member_assign(struct agent *a, struct mesh_conn *c, const Tmpi__JobAssign *ja)
{
    struct job_member *m = calloc(1, sizeof *m);
    if (!m) {
        mesh_conn_close(c);
        return;
    }
    m->a = a;
    m->conn = c;
    m->uid = ja->uid;
    mesh_conn_set_ops(c, &member_ops, m);
    if (a->shutting_down) {
        refuse(m, "the agent is shutting down");
        return;
    }
    char err[400];
    for (struct job *o = a->jobs; o; o = o->next) {
        if (o->link && o->link->uid == ja->uid) {
            refuse(m, "this node already runs a part of that job");
            return;
        }
        if (ja->coordinator_job_id && o->id == ja->coordinator_job_id) {
            /* two agents with one node number (job_id.h) */
            snprintf(err, sizeof err,
                     "job id %llu is taken on %s by another job: give the agents distinct "
                     "[mesh] node_number",
                     (unsigned long long)o->id, a->cfg.name);
            log_warning("%s", err);
            refuse(m, err);
            return;
        }
    }
    if (check_owner(a, ja, err, sizeof err) < 0) {
        refuse(m, err);
        return;
    }
    struct job *j;
    int r = job_new_member(a, ja, mesh_conn_bev(c), &j, err, sizeof err);
    if (r < 0) {
        if (r == -ENOMEM) snprintf(err, sizeof err, "out of memory");
        refuse(m, err);
        return;
    }
    m->job = j;
    j->member = m;
    /* what the host is started with, once the program is here */
    j->assign = copy_assign(ja);
    if (!j->assign) {
        refuse(m, "out of memory");
        return;
    }
    /* job_new_member bounded every program's size by max_program_size */
    size_t n = ja->n_apps ? ja->n_apps : 1;
    if (progset_init(&m->progs, &a->cache, n) < 0) {
        refuse(m, "out of memory");
        return;
    }
    for (size_t k = 0; k < ja->n_apps; k++)
        progset_set(&m->progs, k, ja->apps[k]->program_hash.data, ja->apps[k]->program_size);
    if (ja->n_apps == 0) progset_set(&m->progs, 0, ja->program_hash.data, ja->program_size);
    need_programs(m);
}

void job_member_linked(struct job *j, int err, const char *why)
{
    struct job_member *m = j->member;
    if (!m) return;
    if (err < 0) log_warning("job %llu: %s", (unsigned long long)j->id, why);
    Tmpi__JobLinked jl = TMPI__JOB_LINKED__INIT;
    jl.uid = m->uid;
    jl.ok = err == 0;
    jl.error = (char *)(err == 0 ? "" : why);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_LINKED;
    env.job_linked = &jl;
    (void)mesh_send(m->conn, &env);
}

void job_member_forget(struct job_member *m)
{
    m->job = NULL;
}
