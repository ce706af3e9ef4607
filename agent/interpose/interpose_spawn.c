/* interpose_spawn.c — programs a rank runs start from the rank's process state (rank_proc.h):
 * its environment, its working directory and its umask.
 *
 * libc's system(), popen() and the exec family read the process's environment and leave the
 * child in the process's directory with the process's umask.  For a rank:
 * - system and popen spawn /bin/sh -c CMD themselves with the rank's environment, in its
 *   directory; when its umask differs from the process's a first shell sets it and execs the
 *   one that runs CMD.  system waits for its child on the calling thread only (libc's ignores
 *   SIGINT and SIGQUIT in the whole process meanwhile, which would take them from every
 *   rank); SIGPIPE, which the job host ignores, is the default again in the child.
 * - execve and the rest replace the job host, and so every rank of the node with it: the new
 *   program starts in the rank's directory with its umask (set in the process just before,
 *   given back if the exec fails) and, for the forms without envp, its environment; the
 *   forms with a search look in the rank's PATH.
 * - posix_spawn and posix_spawnp: a relative path resolves in the rank's directory, the
 *   rank's PATH is searched, and without file actions the child starts in the rank's
 *   directory.  With file actions of the caller (which we cannot extend without changing the
 *   caller's object) it starts in the job's directory, and it always gets the process's umask.
 * Agent threads and a rank before its state is set up get libc's own. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interpose.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

/* The shell system and popen run, and the search path without PATH (glibc's default). */
#define SPAWN_SHELL "/bin/sh"
#define SPAWN_DEFAULT_PATH "/bin:/usr/bin"

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

static struct rank *spawn_rank(void)
{
    struct rank *r = rank_current();
    return r && r->proc.ready ? r : NULL;
}

/* The rank's environment as an envp (never NULL: after clearenv, an empty one). */
static char *const *rank_envp(struct rank *r)
{
    static char *const none[] = {NULL};
    char **env = *rank_proc_environ(r);
    return env ? env : none;
}

/* Spawns the shell for cmd: in the rank's directory, with its environment and umask; fa holds
 * the caller's descriptor actions (popen's), the directory is added here.  0 or an errno. */
static int spawn_shell(struct rank *r, const char *cmd, posix_spawn_file_actions_t *fa,
                       pid_t *ret_pid)
{
    char cwd[PATH_MAX];
    int rc = -rank_proc_getcwd(&r->proc, cwd, sizeof cwd);
    if (rc == 0) rc = posix_spawn_file_actions_addchdir_np(fa, cwd);
    if (rc) return rc;
    unsigned mask = atomic_load_explicit(&r->proc.umask, memory_order_relaxed);
    char set_mask[64];
    snprintf(set_mask, sizeof set_mask, "umask %04o && exec " SPAWN_SHELL " -c \"$1\" sh", mask);
    char *plain[] = {"sh", "-c", (char *)cmd, NULL};
    char *masked[] = {"sh", "-c", set_mask, "sh", (char *)cmd, NULL};
    char **argv = mask == r->proc.host_umask ? plain : masked;
    posix_spawnattr_t attr;
    if ((rc = posix_spawnattr_init(&attr))) return rc;
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &def);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    rc = INTERPOSE_REAL(spawn_fn, posix_spawn)(ret_pid, SPAWN_SHELL, fa, &attr, argv, rank_envp(r));
    posix_spawnattr_destroy(&attr);
    return rc;
}

/* The child's status, waiting through signals. */
static int wait_child(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return status;
}

EXPORT int system(const char *cmd)
{
    struct rank *r = spawn_rank();
    if (!r) return INTERPOSE_REAL(int (*)(const char *), system)(cmd);
    if (!cmd) return access(SPAWN_SHELL, X_OK) == 0;
    /* SIGCHLD held back on this thread: a handler of the program must not reap our child */
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &old);
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    pid_t pid;
    if (rc == 0) rc = spawn_shell(r, cmd, &fa, &pid);
    posix_spawn_file_actions_destroy(&fa);
    /* as libc: a shell that cannot start is a shell that exited 127 */
    int status = rc ? W_EXITCODE(127, 0) : wait_child(pid);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return status;
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
    struct rank *r = spawn_rank();
    if (!r) return INTERPOSE_REAL(FILE * (*)(const char *, const char *), popen)(cmd, mode);
    if (!cmd || !mode || (mode[0] != 'r' && mode[0] != 'w')) {
        errno = EINVAL;
        return NULL;
    }
    int reading = mode[0] == 'r', cloexec = strchr(mode, 'e') != NULL;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) return NULL;
    int mine = fds[reading ? 0 : 1], theirs = fds[reading ? 1 : 0], target = reading ? 1 : 0;
    struct rank_popen *rec = malloc(sizeof *rec);
    posix_spawn_file_actions_t fa;
    int rc = rec ? posix_spawn_file_actions_init(&fa) : ENOMEM;
    if (rc) goto fail;
    /* dup2 onto itself would keep close-on-exec: the shell's end must stay open */
    if (theirs == target)
        rc = fcntl(theirs, F_SETFD, 0) < 0 ? errno : 0;
    else
        rc = posix_spawn_file_actions_adddup2(&fa, theirs, target);
    /* the streams of the rank's earlier popens are not the new child's (POSIX) */
    pthread_mutex_lock(&r->proc.popen_mu);
    for (struct rank_popen *q = r->proc.popens; q && rc == 0; q = q->next)
        rc = posix_spawn_file_actions_addclose(&fa, fileno((FILE *)q->stream));
    pthread_mutex_unlock(&r->proc.popen_mu);
    pid_t pid;
    if (rc == 0) rc = spawn_shell(r, cmd, &fa, &pid);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) goto fail;
    close(theirs);
    if (!cloexec) (void)fcntl(mine, F_SETFD, 0);
    FILE *f = fdopen(mine, reading ? "r" : "w");
    if (!f) {
        int e = errno;
        close(mine);
        wait_child(pid);
        free(rec);
        errno = e;
        return NULL;
    }
    rec->stream = f;
    rec->pid = pid;
    pthread_mutex_lock(&r->proc.popen_mu);
    rec->next = r->proc.popens;
    r->proc.popens = rec;
    pthread_mutex_unlock(&r->proc.popen_mu);
    return f;
fail:
    close(fds[0]);
    close(fds[1]);
    free(rec);
    errno = rc;
    return NULL;
}

EXPORT int pclose(FILE *f)
{
    struct rank *r = spawn_rank();
    struct rank_popen *rec = NULL;
    if (r) {
        pthread_mutex_lock(&r->proc.popen_mu);
        for (struct rank_popen **q = &r->proc.popens; *q; q = &(*q)->next)
            if ((*q)->stream == f) {
                rec = *q;
                *q = rec->next;
                break;
            }
        pthread_mutex_unlock(&r->proc.popen_mu);
    }
    if (!rec) return INTERPOSE_REAL(int (*)(FILE *), pclose)(f);
    fclose(f);
    int status = wait_child(rec->pid);
    free(rec);
    return status;
}

/* ---- the exec family ---- */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

/* Execs path (fd for fexecve) from the rank's directory with its umask; on failure the
 * process's are given back and -1 returned with errno. */
static int exec_as_rank(struct rank *r, const char *path, int fd, char *const argv[],
                        char *const envp[])
{
    char cwd[PATH_MAX];
    if (rank_proc_getcwd(&r->proc, cwd, sizeof cwd) < 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    char abs[PATH_MAX];
    if (path && path[0] != '/') {
        if (rank_proc_join(&r->proc, path, abs) < 0) {
            errno = ENAMETOOLONG;
            return -1;
        }
        path = abs;
    }
    /* the process's own directory (libc's openat: ours would take the rank's) */
    int back = INTERPOSE_REAL(int (*)(int, const char *, int, ...),
                              openat)(AT_FDCWD, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    mode_t (*real_umask)(mode_t) = INTERPOSE_REAL(mode_t(*)(mode_t), umask);
    int (*real_chdir)(const char *) = INTERPOSE_REAL(int (*)(const char *), chdir);
    (void)real_chdir(cwd);
    mode_t old = real_umask((mode_t)atomic_load_explicit(&r->proc.umask, memory_order_relaxed));
    if (path)
        INTERPOSE_REAL(execve_fn, execve)(path, argv, envp);
    else
        INTERPOSE_REAL(fexecve_fn, fexecve)(fd, argv, envp);
    int e = errno;
    real_umask(old);
    if (back >= 0) {
        (void)INTERPOSE_REAL(int (*)(int), fchdir)(back);
        close(back);
    }
    errno = e;
    return -1;
}

/* One candidate of execvp's search.  Returns only if the exec failed: 1 when the search ends
 * here (a script run by the shell failed, or an error other than "not here"), 0 to go on;
 * *denied notes a candidate we may not run. */
static int exec_try(struct rank *r, const char *cand, char *const argv[], char *const envp[],
                    int *denied)
{
    exec_as_rank(r, cand, -1, argv, envp);
    if (errno == ENOEXEC) {
        /* not an executable format: a shell script, as libc runs it */
        size_t argc = 0;
        while (argv[argc])
            argc++;
        char **sh = malloc((argc + 2) * sizeof *sh);
        if (!sh) return 1;
        sh[0] = SPAWN_SHELL;
        sh[1] = (char *)cand;
        for (size_t i = 1; i <= argc; i++)
            sh[i + 1] = argv[i];
        exec_as_rank(r, SPAWN_SHELL, -1, sh, envp);
        int e = errno;
        free(sh);
        errno = e;
        return 1;
    }
    if (errno == EACCES) *denied = 1;
    return errno != EACCES && errno != ENOENT && errno != ENOTDIR && errno != ESTALE &&
           errno != ENODEV && errno != ETIMEDOUT;
}

/* execvp's search, in the rank's PATH. */
static int exec_search(struct rank *r, const char *file, char *const argv[], char *const envp[])
{
    if (!file || !file[0]) {
        errno = ENOENT;
        return -1;
    }
    int denied = 0;
    if (strchr(file, '/')) {
        exec_try(r, file, argv, envp, &denied);
        return -1;
    }
    const char *path = rank_env_get(rank_proc_environ(r), "PATH");
    if (!path) path = SPAWN_DEFAULT_PATH;
    for (const char *dir = path;;) {
        const char *end = strchrnul(dir, ':');
        char cand[PATH_MAX];
        /* an empty entry is the working directory */
        int n = end == dir ? snprintf(cand, sizeof cand, "%s", file)
                           : snprintf(cand, sizeof cand, "%.*s/%s", (int)(end - dir), dir, file);
        if (n > 0 && n < (int)sizeof cand && exec_try(r, cand, argv, envp, &denied)) return -1;
        if (!*end) break;
        dir = end + 1;
    }
    errno = denied ? EACCES : ENOENT;
    return -1;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    struct rank *r = spawn_rank();
    if (!r) return INTERPOSE_REAL(execve_fn, execve)(path, argv, envp);
    return exec_as_rank(r, path, -1, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    struct rank *r = spawn_rank();
    if (!r) return INTERPOSE_REAL(fexecve_fn, fexecve)(fd, argv, envp);
    return exec_as_rank(r, NULL, fd, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
    struct rank *r = spawn_rank();
    if (!r) return INTERPOSE_REAL(int (*)(const char *, char *const[]), execv)(path, argv);
    return exec_as_rank(r, path, -1, argv, rank_envp(r));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    struct rank *r = spawn_rank();
    if (!r) return INTERPOSE_REAL(execve_fn, execvpe)(file, argv, envp);
    return exec_search(r, file, argv, envp);
}

EXPORT int execvp(const char *file, char *const argv[])
{
    struct rank *r = spawn_rank();
    if (!r) return INTERPOSE_REAL(int (*)(const char *, char *const[]), execvp)(file, argv);
    return exec_search(r, file, argv, rank_envp(r));
}

/* The list forms: arg0, ..., NULL (then envp for execle) as a vector. */
static char **list_argv(const char *arg0, va_list ap, char *const **ret_envp)
{
    va_list count;
    va_copy(count, ap);
    size_t n = 1;
    while (va_arg(count, char *))
        n++;
    va_end(count);
    char **v = malloc((n + 1) * sizeof *v);
    if (!v) return NULL;
    v[0] = (char *)arg0;
    for (size_t i = 1; i <= n; i++)
        v[i] = va_arg(ap, char *);
    if (ret_envp) *ret_envp = va_arg(ap, char *const *);
    return v;
}

EXPORT int execl(const char *path, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    char **v = list_argv(arg0, ap, NULL);
    va_end(ap);
    if (!v) return -1;
    execv(path, v);
    free(v);
    return -1;
}

EXPORT int execlp(const char *file, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    char **v = list_argv(arg0, ap, NULL);
    va_end(ap);
    if (!v) return -1;
    execvp(file, v);
    free(v);
    return -1;
}

EXPORT int execle(const char *path, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    char *const *envp;
    char **v = list_argv(arg0, ap, &envp);
    va_end(ap);
    if (!v) return -1;
    execve(path, v, envp);
    free(v);
    return -1;
}

/* ---- posix_spawn ---- */

/* posix_spawnp's search in the rank's PATH: the first candidate that is an executable
 * regular file (libc's tries each with exec; the child here is exec'd once). */
static int spawn_lookup(struct rank *r, const char *file, char buf[PATH_MAX])
{
    const char *path = rank_env_get(rank_proc_environ(r), "PATH");
    if (!path) path = SPAWN_DEFAULT_PATH;
    for (const char *dir = path;;) {
        const char *end = strchrnul(dir, ':');
        char cand[PATH_MAX];
        int n = end == dir ? snprintf(cand, sizeof cand, "%s", file)
                           : snprintf(cand, sizeof cand, "%.*s/%s", (int)(end - dir), dir, file);
        struct stat st;
        int ok = n > 0 && n < PATH_MAX;
        if (ok && cand[0] == '/')
            memcpy(buf, cand, (size_t)n + 1);
        else if (ok)
            ok = rank_proc_join(&r->proc, cand, buf) == 0;
        if (ok && stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return 0;
        if (!*end) return ENOENT;
        dir = end + 1;
    }
}

static int spawn_as_rank(struct rank *r, pid_t *pid, const char *path,
                         const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                         char *const argv[], char *const envp[])
{
    char abs[PATH_MAX];
    if (path[0] != '/' && rank_proc_join(&r->proc, path, abs) < 0) return ENAMETOOLONG;
    if (path[0] != '/') path = abs;
    if (fa) return INTERPOSE_REAL(spawn_fn, posix_spawn)(pid, path, fa, attr, argv, envp);
    posix_spawn_file_actions_t here;
    char cwd[PATH_MAX];
    int rc = posix_spawn_file_actions_init(&here);
    if (rc) return rc;
    rc = -rank_proc_getcwd(&r->proc, cwd, sizeof cwd);
    if (rc == 0) rc = posix_spawn_file_actions_addchdir_np(&here, cwd);
    if (rc == 0) rc = INTERPOSE_REAL(spawn_fn, posix_spawn)(pid, path, &here, attr, argv, envp);
    posix_spawn_file_actions_destroy(&here);
    return rc;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    struct rank *r = spawn_rank();
    if (!r) return INTERPOSE_REAL(spawn_fn, posix_spawn)(pid, path, fa, attr, argv, envp);
    return spawn_as_rank(r, pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    struct rank *r = spawn_rank();
    if (!r) return INTERPOSE_REAL(spawn_fn, posix_spawnp)(pid, file, fa, attr, argv, envp);
    if (strchr(file, '/')) return spawn_as_rank(r, pid, file, fa, attr, argv, envp);
    char found[PATH_MAX];
    int rc = spawn_lookup(r, file, found);
    return rc ? rc : spawn_as_rank(r, pid, found, fa, attr, argv, envp);
}
