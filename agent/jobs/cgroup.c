/* cgroup.c — job hosts' cgroups (cgroup.h): systemd scopes, or a subtree the agent manages in
 * the v2 or the v1 hierarchies. */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "limits_fmt.h"
#include "log.h"

enum cgroup_kind { CGROUP_NONE, CGROUP_SYSTEMD, CGROUP_V2, CGROUP_V1 };

/* The v1 controllers a job's cgroup joins: memory and cpu for the limits, pids to count. */
enum { V1_MEMORY, V1_CPU, V1_PIDS, V1_N };
static const char *const v1_names[V1_N] = {"memory", "cpu", "pids"};

/* How long StartTransientUnit may take, and how long the host may take to show up in its
 * scope afterwards (systemd moves it when the unit starts). */
#define CGROUP_SYSTEMD_TIMEOUT_USEC (5u * 1000000u)
#define CGROUP_SCOPE_WAIT_MS 2000
/* v1: a job killed while its usage's high-water mark was this close to its limit (or an
 * eighth of the limit, if less) ran into its own limit (cgroup_job_oom). */
#define CGROUP_V1_OOM_MARGIN (4u << 20)

/* Set by cgroup_setup before the loop runs, then read by the loop thread only. */
static struct {
    enum cgroup_kind kind;
    sd_bus *bus;                    /* systemd */
    char v2_root[PATH_MAX];         /* v2: mount point of the unified hierarchy */
    char v2_own[PATH_MAX];          /* v2: the cgroup the agent was started in */
    char v2_base[PATH_MAX];         /* v2: OWN/tmpid/PID, parent of the jobs' cgroups */
    int v2_moved;                   /* v2: the agent moved itself to BASE/agent */
    char v1_base[V1_N][PATH_MAX];   /* v1: per controller, "" when not mounted */
    int v2_memory, v2_cpu, v2_pids; /* v2: controllers enabled for the jobs */
} cg;

/* One job's cgroup. */
struct cgroup_job {
    enum cgroup_kind kind;
    uint64_t mem_max;         /* its memory limit, 0: none */
    char dir[V1_N][PATH_MAX]; /* v1: per controller ("" none); v2 and systemd: dir[0] */
};

const char *cgroup_kind_name(void)
{
    switch (cg.kind) {
    case CGROUP_SYSTEMD:
        return "systemd";
    case CGROUP_V2:
        return "v2";
    case CGROUP_V1:
        return "v1";
    default:
        return "none";
    }
}

/* ---- small file helpers ---- */

static int write_file(const char *dir, const char *name, const char *value)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    size_t n = strlen(value);
    ssize_t w = write(fd, value, n);
    int r = w == (ssize_t)n ? 0 : w < 0 ? -errno : -EIO;
    close(fd);
    return r;
}

/* The file's contents, NUL-terminated, truncated to len-1 bytes.  0 or a negative errno. */
static int read_file(const char *dir, const char *name, char *buf, size_t len)
{
    char path[PATH_MAX + 64];
    if (name)
        snprintf(path, sizeof path, "%s/%s", dir, name);
    else
        snprintf(path, sizeof path, "%s", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    size_t got = 0;
    ssize_t n;
    while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
        got += (size_t)n;
    close(fd);
    buf[got] = 0;
    return 0;
}

static int file_exists(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* The number after "key " in a "key value" list file (memory.events, memory.oom_control). */
static uint64_t keyed_value(const char *dir, const char *file, const char *key)
{
    char buf[2048];
    if (read_file(dir, file, buf, sizeof buf) < 0) return 0;
    size_t kl = strlen(key);
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (strncmp(line, key, kl) == 0 && line[kl] == ' ')
            return strtoull(line + kl + 1, NULL, 10);
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* Does the space-separated word list contain word? */
static int has_word(const char *list, const char *word, const char *seps)
{
    size_t wl = strlen(word);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, seps);
        if (n == wl && strncmp(p, word, wl) == 0) return 1;
        p += n;
        p += strspn(p, seps);
    }
    return 0;
}

/* ---- finding the hierarchies ---- */

/* The agent's own cgroup path in the hierarchy whose /proc/self/cgroup controller list
 * contains ctrl ("" for v2's "0::" line).  0 or -ENOENT. */
static int own_path(const char *ctrl, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) return -errno;
    char line[PATH_MAX + 128];
    int r = -ENOENT;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c1 = 0;
        *c2 = 0;
        const char *ctrls = c1 + 1;
        int match = *ctrl ? has_word(ctrls, ctrl, ",") : (strcmp(line, "0") == 0 && !*ctrls);
        if (match) {
            snprintf(out, len, "%s", c2 + 1);
            r = 0;
            break;
        }
    }
    fclose(f);
    return r;
}

/* The mount of a hierarchy: fstype "cgroup2", or "cgroup" whose super options name ctrl.
 * mnt gets the mount point, root the part of the hierarchy mounted there. 0 or -ENOENT. */
static int find_mount(const char *fstype, const char *ctrl, char *mnt, char *root, size_t len)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) return -errno;
    char line[4096];
    int r = -ENOENT;
    while (fgets(line, sizeof line, f)) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
        char *sep = strstr(line, " - ");
        if (!sep) continue;
        char fs[32], src[256], sopts[1024] = "";
        if (sscanf(sep + 3, "%31s %255s %1023s", fs, src, sopts) < 2) continue;
        if (strcmp(fs, fstype) != 0) continue;
        if (ctrl && !has_word(sopts, ctrl, ",")) continue;
        char r_root[PATH_MAX], r_mnt[PATH_MAX];
        if (sscanf(line, "%*s %*s %*s %4095s %4095s", r_root, r_mnt) != 2) continue;
        snprintf(mnt, len, "%s", r_mnt);
        snprintf(root, len, "%s", r_root);
        r = 0;
        break;
    }
    fclose(f);
    return r;
}

/* MOUNT + (own path relative to the mounted root): where the agent's cgroup is. */
static int own_dir(const char *fstype, const char *ctrl, char *out, size_t len)
{
    char mnt[PATH_MAX], root[PATH_MAX], own[PATH_MAX];
    if (find_mount(fstype, ctrl, mnt, root, sizeof mnt) < 0) return -ENOENT;
    if (own_path(ctrl ? ctrl : "", own, sizeof own) < 0) return -ENOENT;
    const char *rel = own;
    size_t rl = strlen(root);
    if (strcmp(root, "/") != 0) {
        if (strncmp(own, root, rl) != 0 || (own[rl] && own[rl] != '/')) return -ENOENT;
        rel = own + rl;
    }
    if (strcmp(rel, "/") == 0) rel = "";
    if ((size_t)snprintf(out, len, "%s%s", mnt, rel) >= len) return -ENAMETOOLONG;
    return 0;
}

/* Removes what a killed agent left in parent (OWN/tmpid): PID directories of pids that no
 * longer run, with their (empty) job cgroups.  rmdir fails on a cgroup that still has
 * processes: harmless. */
static void remove_stale(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char dir[PATH_MAX + 300];
        snprintf(dir, sizeof dir, "%s/%s", parent, e->d_name);
        DIR *jd = opendir(dir);
        if (jd) {
            struct dirent *je;
            while ((je = readdir(jd))) {
                if (je->d_name[0] == '.') continue;
                char sub[PATH_MAX + 600];
                snprintf(sub, sizeof sub, "%s/%s", dir, je->d_name);
                (void)rmdir(sub);
            }
            closedir(jd);
        }
        if (rmdir(dir) == 0) log_info("cgroup: removed %s, left by an agent that is gone", dir);
    }
    closedir(d);
}

/* OWN/tmpid/PID: the agent's subtree.  OWN/tmpid stays (an agent that is not allowed to
 * write OWN once its capabilities are gone could not remove it, nor create it again); the
 * PID directory is the agent's and goes at teardown.  0 or a negative errno. */
static int make_base(const char *own, char *base, size_t len)
{
    char parent[PATH_MAX];
    if ((size_t)snprintf(parent, sizeof parent, "%s/tmpid", own) >= sizeof parent)
        return -ENAMETOOLONG;
    if (mkdir(parent, 0755) < 0 && errno != EEXIST) return -errno;
    remove_stale(parent);
    if ((size_t)snprintf(base, len, "%s/%d", parent, (int)getpid()) >= len) return -ENAMETOOLONG;
    if (mkdir(base, 0755) < 0) return -errno;
    return 0;
}

/* ---- setup per kind ---- */

static int setup_systemd(char *why, size_t wl)
{
    if (geteuid() != 0) {
        /* the system manager grants transient units to root only (without a polkit rule);
         * a service user gets its cgroup delegated instead (Delegate=yes), used as v2 */
        snprintf(why, wl, "systemd is PID 1 but the agent is not root (no transient scopes)");
        return -EPERM;
    }
    int r = sd_bus_open_system(&cg.bus);
    if (r < 0) {
        snprintf(why, wl, "systemd is PID 1 but its bus cannot be reached: %s", strerror(-r));
        cg.bus = NULL;
        return r;
    }
    snprintf(why, wl, "systemd is PID 1: one transient scope per job host");
    return 0;
}

/* Enables memory, cpu and pids (those available) for the children of dir. */
static void v2_enable(const char *dir, int *mem, int *cpu, int *pids)
{
    char avail[512];
    if (read_file(dir, "cgroup.controllers", avail, sizeof avail) < 0) avail[0] = 0;
    *mem = has_word(avail, "memory", " \n") &&
           write_file(dir, "cgroup.subtree_control", "+memory") == 0;
    *cpu = has_word(avail, "cpu", " \n") && write_file(dir, "cgroup.subtree_control", "+cpu") == 0;
    *pids =
        has_word(avail, "pids", " \n") && write_file(dir, "cgroup.subtree_control", "+pids") == 0;
}

static int setup_v2(char *why, size_t wl)
{
    char own[PATH_MAX], ctl[512];
    if (own_dir("cgroup2", NULL, own, sizeof own) < 0) {
        snprintf(why, wl, "no cgroup v2 hierarchy mounted");
        return -ENOENT;
    }
    if (read_file(own, "cgroup.controllers", ctl, sizeof ctl) < 0) ctl[0] = 0;
    ctl[strcspn(ctl, "\n")] = 0;
    if (!has_word(ctl, "memory", " ") && !has_word(ctl, "cpu", " ")) {
        snprintf(why, wl, "the cgroup v2 hierarchy at %s offers no memory or cpu controller (%s)",
                 own, *ctl ? ctl : "none");
        return -ENOENT;
    }
    snprintf(cg.v2_own, sizeof cg.v2_own, "%s", own);
    int r = make_base(own, cg.v2_base, sizeof cg.v2_base);
    if (r < 0) {
        snprintf(why, wl, "cgroup v2 has controllers but %s/tmpid/%d cannot be created: %s", own,
                 (int)getpid(), strerror(-r));
        cg.v2_base[0] = 0;
        return r;
    }
    int m, c, p;
    v2_enable(own, &m, &c, &p);
    if (!m && !c) {
        /* "No internal processes": a cgroup with processes (the agent's own) cannot hand
         * controllers to children.  The agent moves into a leaf of its subtree first. */
        char leaf[PATH_MAX + 8], pid[32];
        snprintf(leaf, sizeof leaf, "%s/agent", cg.v2_base);
        snprintf(pid, sizeof pid, "%d", (int)getpid());
        if (mkdir(leaf, 0755) == 0 && write_file(leaf, "cgroup.procs", pid) == 0) {
            cg.v2_moved = 1;
            v2_enable(own, &m, &c, &p);
        }
    }
    if (m || c) {
        char parent[PATH_MAX + 8];
        snprintf(parent, sizeof parent, "%s/tmpid", own);
        v2_enable(parent, &m, &c, &p);
    }
    if (m || c) v2_enable(cg.v2_base, &cg.v2_memory, &cg.v2_cpu, &cg.v2_pids);
    if (!cg.v2_memory && !cg.v2_cpu) {
        snprintf(why, wl,
                 "cgroup v2 at %s: the memory and cpu controllers cannot be enabled "
                 "for a subtree (other processes share the agent's cgroup?)",
                 own);
        cgroup_teardown();
        return -EBUSY;
    }
    if (snprintf(why, wl, "cgroup v2 at %s offers %s%s%s: jobs under tmpid/%d", own,
                 cg.v2_memory ? "memory " : "", cg.v2_cpu ? "cpu " : "", cg.v2_pids ? "pids" : "",
                 (int)getpid()) >= (int)wl)
        why[wl - 1] = 0;
    return 0;
}

static int setup_v1(const char *v2_why, char *why, size_t wl)
{
    int have = 0, made = 0, err = 0;
    char tried[PATH_MAX + 32] = "";
    for (int i = 0; i < V1_N; i++) {
        char own[PATH_MAX];
        if (own_dir("cgroup", v1_names[i], own, sizeof own) < 0) continue;
        have++;
        char *base = cg.v1_base[i];
        int r = make_base(own, base, PATH_MAX);
        if (r < 0) {
            err = -r;
            snprintf(tried, sizeof tried, "%s/tmpid/%d", own, (int)getpid());
            base[0] = 0;
            continue;
        }
        made++;
    }
    if (!have) {
        snprintf(why, wl, "%s, and no v1 memory, cpu or pids hierarchy is mounted", v2_why);
        return -ENOENT;
    }
    if (!cg.v1_base[V1_MEMORY][0] && !cg.v1_base[V1_CPU][0]) {
        snprintf(why, wl, "%s; the v1 hierarchies are mounted but %s cannot be created: %s", v2_why,
                 tried, strerror(err ? err : ENOENT));
        cgroup_teardown();
        return -(err ? err : ENOENT);
    }
    snprintf(why, wl, "%s; using the v1 hierarchies: %s%s%s(jobs under tmpid/%d)", v2_why,
             cg.v1_base[V1_MEMORY][0] ? "memory " : "", cg.v1_base[V1_CPU][0] ? "cpu " : "",
             cg.v1_base[V1_PIDS][0] ? "pids " : "", (int)getpid());
    (void)made;
    return 0;
}

void cgroup_setup(void)
{
    char why[PATH_MAX + 1024], v2_why[PATH_MAX + 256], sd_why[160] = "";
    memset(&cg, 0, sizeof cg);
    if (sd_booted() > 0) {
        char w[128];
        if (setup_systemd(w, sizeof w) == 0) {
            cg.kind = CGROUP_SYSTEMD;
            log_notice("cgroup: systemd (%s)", w);
            return;
        }
        snprintf(sd_why, sizeof sd_why, "%s; ", w);
    }
    if (setup_v2(v2_why, sizeof v2_why) == 0) {
        cg.kind = CGROUP_V2;
        snprintf(why, sizeof why, "%s", v2_why);
    } else if (setup_v1(v2_why, why, sizeof why) == 0) {
        cg.kind = CGROUP_V1;
    } else {
        cg.kind = CGROUP_NONE;
    }
    if (cg.kind == CGROUP_NONE)
        log_notice("cgroup: none (%s%s): jobs run without a cgroup of their own, no limits", sd_why,
                   why);
    else
        log_notice("cgroup: %s (%s%s)", cgroup_kind_name(), sd_why, why);
}

void cgroup_teardown(void)
{
    if (cg.bus) {
        sd_bus_flush_close_unref(cg.bus);
        cg.bus = NULL;
    }
    if (cg.v2_base[0]) {
        if (cg.v2_moved) {
            char pid[32], leaf[PATH_MAX + 8];
            snprintf(pid, sizeof pid, "%d", (int)getpid());
            (void)write_file(cg.v2_own, "cgroup.procs", pid);
            snprintf(leaf, sizeof leaf, "%s/agent", cg.v2_base);
            (void)rmdir(leaf);
            cg.v2_moved = 0;
        }
        (void)rmdir(cg.v2_base);
        cg.v2_base[0] = 0;
    }
    for (int i = 0; i < V1_N; i++)
        if (cg.v1_base[i][0]) {
            if (rmdir(cg.v1_base[i]) < 0)
                log_errno(LOG_WARNING, -errno, "cgroup: cannot remove %s", cg.v1_base[i]);
            cg.v1_base[i][0] = 0;
        }
}

/* ---- limits ---- */

int cgroup_limits_resolve(const struct agent_config *cfg, uint64_t mem_asked, uint32_t cpu_asked,
                          struct cgroup_limits *ret, char *err, size_t errlen)
{
    if (cfg->job_memory_max && mem_asked > cfg->job_memory_max) {
        snprintf(err, errlen,
                 "--mem-limit of %" PRIu64 " bytes is above this agent's limit of %" PRIu64
                 " bytes (job_memory_max): a job may only lower it",
                 mem_asked, (uint64_t)cfg->job_memory_max);
        return -EINVAL;
    }
    if (cfg->job_cpu_max && cpu_asked > cfg->job_cpu_max) {
        char a[32], m[32];
        limits_format_cpus(cpu_asked, a, sizeof a);
        limits_format_cpus(cfg->job_cpu_max, m, sizeof m);
        snprintf(err, errlen,
                 "--cpu-limit of %s CPUs is above this agent's limit of %s CPUs (job_cpu_max): a "
                 "job may only lower it",
                 a, m);
        return -EINVAL;
    }
    ret->mem_max = mem_asked ? mem_asked : cfg->job_memory_max;
    ret->cpu_milli = cpu_asked ? cpu_asked : cfg->job_cpu_max;
    if ((ret->mem_max || ret->cpu_milli) && cg.kind == CGROUP_NONE) {
        snprintf(err, errlen,
                 "this agent cannot limit a job's memory or CPU: it has no cgroup to put jobs in "
                 "(see its log)");
        return -ENOTSUP;
    }
    if (ret->mem_max && cg.kind == CGROUP_V1 && !cg.v1_base[V1_MEMORY][0]) {
        snprintf(err, errlen, "this agent cannot limit a job's memory: no v1 memory cgroup");
        return -ENOTSUP;
    }
    if (ret->cpu_milli && cg.kind == CGROUP_V1 && !cg.v1_base[V1_CPU][0]) {
        snprintf(err, errlen, "this agent cannot limit a job's CPU: no v1 cpu cgroup");
        return -ENOTSUP;
    }
    if (cg.kind == CGROUP_V2 &&
        ((ret->mem_max && !cg.v2_memory) || (ret->cpu_milli && !cg.v2_cpu))) {
        snprintf(err, errlen, "this agent's cgroup v2 subtree lacks the %s controller",
                 ret->mem_max && !cg.v2_memory ? "memory" : "cpu");
        return -ENOTSUP;
    }
    return 0;
}

/* ---- one job ---- */

static int job_new_systemd(uint64_t job_id, pid_t pid, const struct cgroup_limits *lim,
                           struct cgroup_job *j, char *err, size_t errlen)
{
    char unit[96], desc[96];
    snprintf(unit, sizeof unit, "tmpi-job-%d-%" PRIu64 ".scope", (int)getpid(), job_id);
    snprintf(desc, sizeof desc, "TMPI job %" PRIu64 " of tmpid %d", job_id, (int)getpid());
    sd_bus_message *m = NULL, *reply = NULL;
    sd_bus_error e = SD_BUS_ERROR_NULL;
    int r = sd_bus_message_new_method_call(
        cg.bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
        "org.freedesktop.systemd1.Manager", "StartTransientUnit");
    if (r >= 0) r = sd_bus_message_append(m, "ss", unit, "fail");
    if (r >= 0) r = sd_bus_message_open_container(m, 'a', "(sv)");
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "Description", "s", desc);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, (uint32_t)pid);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "CollectMode", "s", "inactive-or-failed");
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "MemoryAccounting", "b", 1);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "CPUAccounting", "b", 1);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "TasksAccounting", "b", 1);
    if (r >= 0 && lim->mem_max) {
        r = sd_bus_message_append(m, "(sv)", "MemoryMax", "t", lim->mem_max);
        if (r >= 0) r = sd_bus_message_append(m, "(sv)", "MemorySwapMax", "t", (uint64_t)0);
    }
    if (r >= 0 && lim->cpu_milli)
        r = sd_bus_message_append(m, "(sv)", "CPUQuotaPerSecUSec", "t",
                                  (uint64_t)lim->cpu_milli * 1000);
    if (r >= 0) r = sd_bus_message_close_container(m);
    if (r >= 0) r = sd_bus_message_append(m, "a(sa(sv))", 0);
    if (r >= 0) r = sd_bus_call(cg.bus, m, CGROUP_SYSTEMD_TIMEOUT_USEC, &e, &reply);
    if (r < 0) {
        snprintf(err, errlen, "cannot start the systemd scope %s: %s", unit,
                 e.message ? e.message : strerror(-r));
        sd_bus_error_free(&e);
        sd_bus_message_unref(m);
        return r;
    }
    sd_bus_error_free(&e);
    sd_bus_message_unref(reply);
    sd_bus_message_unref(m);
    /* systemd moves the pid when the unit starts: wait for it (the host waits for its job
     * meanwhile), and learn the scope's directory for the OOM count. */
    char path[64], line[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    size_t ul = strlen(unit);
    for (int ms = 0; ms < CGROUP_SCOPE_WAIT_MS; ms++) {
        if (read_file(path, NULL, line, sizeof line) == 0) {
            char *p = strstr(line, "0::");
            if (p) {
                p += 3;
                p[strcspn(p, "\n")] = 0;
                size_t pl = strlen(p);
                if (pl >= ul && strcmp(p + pl - ul, unit) == 0) {
                    if (snprintf(j->dir[0], sizeof j->dir[0], "/sys/fs/cgroup%s", p) >=
                        (int)sizeof j->dir[0])
                        j->dir[0][0] = 0; /* no OOM report then, the limit still holds */
                    return 0;
                }
            }
        }
        struct timespec ts = {.tv_nsec = 1000000};
        nanosleep(&ts, NULL);
    }
    snprintf(err, errlen, "the job host did not appear in its systemd scope %s", unit);
    return -ETIMEDOUT;
}

static int job_new_v2(uint64_t job_id, pid_t pid, const struct cgroup_limits *lim,
                      struct cgroup_job *j, char *err, size_t errlen)
{
    char *dir = j->dir[0], v[64];
    if (snprintf(dir, PATH_MAX, "%s/job.%" PRIu64, cg.v2_base, job_id) >= PATH_MAX) {
        dir[0] = 0;
        snprintf(err, errlen, "cgroup path too long");
        return -ENAMETOOLONG;
    }
    if (mkdir(dir, 0755) < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot create the cgroup %s: %s", dir, strerror(e));
        dir[0] = 0;
        return -e;
    }
    int r = 0;
    if (lim->mem_max) {
        snprintf(v, sizeof v, "%" PRIu64, lim->mem_max);
        r = write_file(dir, "memory.max", v);
        if (r == 0 && file_exists(dir, "memory.swap.max"))
            r = write_file(dir, "memory.swap.max", "0");
    }
    if (r == 0 && lim->cpu_milli) {
        snprintf(v, sizeof v, "%" PRIu64 " 100000", (uint64_t)lim->cpu_milli * 100);
        r = write_file(dir, "cpu.max", v);
    }
    if (r < 0) {
        snprintf(err, errlen, "cannot set the limits of the cgroup %s: %s", dir, strerror(-r));
        return r;
    }
    snprintf(v, sizeof v, "%d", (int)pid);
    r = write_file(dir, "cgroup.procs", v);
    if (r < 0) snprintf(err, errlen, "cannot move the job host into %s: %s", dir, strerror(-r));
    return r;
}

static int job_new_v1(uint64_t job_id, pid_t pid, const struct cgroup_limits *lim,
                      struct cgroup_job *j, char *err, size_t errlen)
{
    char v[64];
    for (int i = 0; i < V1_N; i++) {
        if (!cg.v1_base[i][0]) continue;
        /* The cpu hierarchy only for a CPU limit.  Without one, a cgroup there changes nothing
         * but the job's weight: every job of every agent on the machine would share the one
         * weight of the hierarchy's tmpid/ group (a session's, among the sessions' autogroups),
         * so a 1-rank NPB EP waited 9-22 s on the run queue for 0.8 s of CPU while another
         * TMPI job computed, against Open MPI's 2-5 s (docs/bench/ANALYSIS.md, "NAS Parallel
         * Benchmarks").  Left in the agent's cpu cgroup, a job is scheduled as the agent's
         * session is, as mpirun's ranks are in theirs. */
        if (i == V1_CPU && !lim->cpu_milli) continue;
        char *dir = j->dir[i];
        if (snprintf(dir, PATH_MAX, "%s/job.%" PRIu64, cg.v1_base[i], job_id) >= PATH_MAX) {
            dir[0] = 0;
            snprintf(err, errlen, "cgroup path too long");
            return -ENAMETOOLONG;
        }
        if (mkdir(dir, 0755) < 0) {
            int e = errno;
            snprintf(err, errlen, "cannot create the cgroup %s: %s", dir, strerror(e));
            dir[0] = 0;
            return -e;
        }
        int r = 0;
        if (i == V1_MEMORY && lim->mem_max) {
            snprintf(v, sizeof v, "%" PRIu64, lim->mem_max);
            r = write_file(dir, "memory.limit_in_bytes", v);
            /* memory+swap at the same bound: no swapping past the limit */
            if (r == 0 && file_exists(dir, "memory.memsw.limit_in_bytes"))
                r = write_file(dir, "memory.memsw.limit_in_bytes", v);
        }
        if (i == V1_CPU && lim->cpu_milli) {
            char per[32];
            uint64_t period = 100000;
            if (read_file(dir, "cpu.cfs_period_us", per, sizeof per) == 0 && atoll(per) > 0)
                period = (uint64_t)atoll(per);
            snprintf(v, sizeof v, "%" PRIu64, (uint64_t)lim->cpu_milli * period / 1000);
            r = write_file(dir, "cpu.cfs_quota_us", v);
        }
        if (r == 0) {
            snprintf(v, sizeof v, "%d", (int)pid);
            r = write_file(dir, "cgroup.procs", v);
        }
        if (r < 0) {
            snprintf(err, errlen, "cannot set up the cgroup %s: %s", dir, strerror(-r));
            return r;
        }
    }
    return 0;
}

int cgroup_job_new(uint64_t job_id, pid_t pid, const struct cgroup_limits *lim,
                   struct cgroup_job **ret, char *err, size_t errlen)
{
    *ret = NULL;
    if (cg.kind == CGROUP_NONE) return 0;
    struct cgroup_job *j = calloc(1, sizeof *j);
    if (!j) return -ENOMEM;
    j->kind = cg.kind;
    j->mem_max = lim->mem_max;
    int r;
    switch (cg.kind) {
    case CGROUP_SYSTEMD:
        r = job_new_systemd(job_id, pid, lim, j, err, errlen);
        break;
    case CGROUP_V2:
        r = job_new_v2(job_id, pid, lim, j, err, errlen);
        break;
    default:
        r = job_new_v1(job_id, pid, lim, j, err, errlen);
        break;
    }
    if (r < 0) {
        /* the caller kills and reaps the host; what was made is removed then */
        *ret = j;
        return r;
    }
    *ret = j;
    return 0;
}

enum cgroup_oom cgroup_job_oom(const struct cgroup_job *j)
{
    if (!j) return CGROUP_OOM_NONE;
    const char *dir = j->kind == CGROUP_V1 ? j->dir[V1_MEMORY] : j->dir[0];
    if (!dir[0]) return CGROUP_OOM_NONE;
    if (j->kind == CGROUP_V1) {
        if (keyed_value(dir, "memory.oom_control", "oom_kill") == 0) return CGROUP_OOM_NONE;
        /* v1 has no per-cgroup OOM event (and newer kernels keep failcnt at 0): a job that
         * ran into its own limit took its usage's high-water mark up to it, within the one
         * charge that failed (a batch of pages, a huge page) */
        if (!j->mem_max) return CGROUP_OOM_NODE;
        char buf[32];
        uint64_t limit = j->mem_max, peak = 0;
        if (read_file(dir, "memory.limit_in_bytes", buf, sizeof buf) == 0)
            limit = strtoull(buf, NULL, 10); /* as the kernel rounded it */
        if (read_file(dir, "memory.max_usage_in_bytes", buf, sizeof buf) == 0)
            peak = strtoull(buf, NULL, 10);
        uint64_t margin = limit / 8 < CGROUP_V1_OOM_MARGIN ? limit / 8 : CGROUP_V1_OOM_MARGIN;
        return peak + margin >= limit ? CGROUP_OOM_LIMIT : CGROUP_OOM_NODE;
    }
    if (keyed_value(dir, "memory.events", "oom_kill") == 0) return CGROUP_OOM_NONE;
    /* "oom" counts where the limit was reached and goes up to the ancestors, never down */
    return j->mem_max && keyed_value(dir, "memory.events", "oom") > 0 ? CGROUP_OOM_LIMIT
                                                                      : CGROUP_OOM_NODE;
}

uint64_t cgroup_job_mem_used(const struct cgroup_job *j)
{
    if (!j) return 0;
    char buf[64];
    const char *dir = j->kind == CGROUP_V1 ? j->dir[V1_MEMORY] : j->dir[0];
    const char *file = j->kind == CGROUP_V1 ? "memory.usage_in_bytes" : "memory.current";
    if (!dir[0] || read_file(dir, file, buf, sizeof buf) < 0) return 0;
    return strtoull(buf, NULL, 10);
}

void cgroup_job_free(struct cgroup_job *j)
{
    if (!j) return;
    /* a systemd scope goes away by itself once empty (CollectMode) */
    if (j->kind != CGROUP_SYSTEMD)
        for (int i = 0; i < V1_N; i++)
            if (j->dir[i][0] && rmdir(j->dir[i]) < 0)
                log_errno(LOG_WARNING, -errno, "cgroup: cannot remove %s", j->dir[i]);
    free(j);
}
