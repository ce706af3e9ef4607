/* rank_process.c — every rank has the process state a process of its own would have, while
 * the ranks of a node change theirs at the same time (docs/USER.md "What a rank shares with the
 * other ranks of its node"):
 *   - environment: setenv, putenv, unsetenv, clearenv and `environ` are the rank's own; a
 *     thread it starts and the commands system() and popen() run see them;
 *   - the variables other MPIs' scripts read (OMPI_COMM_WORLD_*, PMI_*, MPI_LOCAL*, TMPI_*,
 *     PWD) match MPI_Comm_rank and the node's shared-memory communicator;
 *   - working directory: chdir, fchdir, getcwd, and the relative paths of fopen, stat, *at ...,
 *     in the rank, its threads and its commands;
 *   - umask: what the rank's creating calls and its commands apply;
 *   - CPUs: sched_getaffinity of 0 and of getpid() agree, sysconf(_SC_NPROCESSORS_ONLN) and
 *     get_nprocs count them when the job is bound ("rank R cpus N" for the caller to check);
 *   - getpid: a rank's own (a carried rank shares the job host's), accepted by kill and /proc;
 *     kill(getpid(), SIGUSR1) and raise(SIGUSR2) run the rank's handlers.
 *   rank_process [carried] [bound] */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

extern char **environ;

static int rank, size, lrank, lsize;
static MPI_Comm node;
static char mine[32]; /* "rank-R" */

static int env_int(const char *name)
{
    const char *v = getenv(name);
    CHECK(v != NULL, "%s is not set", name);
    return atoi(v);
}

/* Entries of environ that start with prefix (and the last one seen). */
static int environ_count(const char *prefix, const char **last)
{
    int n = 0;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, prefix, strlen(prefix)) == 0) {
            n++;
            if (last) *last = *e;
        }
    return n;
}

static void check_rank_vars(void)
{
    CHECK_EQ(env_int("OMPI_COMM_WORLD_RANK"), rank);
    CHECK_EQ(env_int("OMPI_COMM_WORLD_SIZE"), size);
    CHECK_EQ(env_int("OMPI_COMM_WORLD_LOCAL_RANK"), lrank);
    CHECK_EQ(env_int("OMPI_COMM_WORLD_LOCAL_SIZE"), lsize);
    CHECK_EQ(env_int("OMPI_COMM_WORLD_NODE_RANK"), lrank);
    int *usize, uflag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &uflag);
    CHECK_EQ(env_int("OMPI_UNIVERSE_SIZE"), uflag ? *usize : size);
    CHECK_EQ(env_int("PMI_RANK"), rank);
    CHECK_EQ(env_int("PMI_SIZE"), size);
    CHECK_EQ(env_int("PMIX_RANK"), rank);
    CHECK_EQ(env_int("MPI_LOCALRANKID"), lrank);
    CHECK_EQ(env_int("MPI_LOCALNRANKS"), lsize);
    CHECK_EQ(env_int("TMPI_RANK"), rank);
    CHECK_EQ(env_int("TMPI_SIZE"), size);
    CHECK_EQ(env_int("TMPI_LOCAL_RANK"), lrank);
    CHECK_EQ(env_int("TMPI_LOCAL_SIZE"), lsize);
    /* the node's index: one per node, 0 .. nodes-1 */
    int nd = env_int("TMPI_NODE_RANK"), first = nd, nodes, leaders = lrank == 0, seen;
    MPI_Bcast(&first, 1, MPI_INT, 0, node);
    CHECK(nd == first, "TMPI_NODE_RANK %d, local rank 0 of my node has %d", nd, first);
    MPI_Allreduce(&leaders, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(nd >= 0 && nd < nodes && nodes <= 30, "TMPI_NODE_RANK %d of %d nodes", nd, nodes);
    int bit = lrank == 0 ? 1 << nd : 0;
    MPI_Allreduce(&bit, &seen, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    CHECK_EQ(seen, (1 << nodes) - 1);
    char cwd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof cwd) && getenv("PWD") && strcmp(getenv("PWD"), cwd) == 0,
          "PWD %s, getcwd %s", getenv("PWD"), cwd);
}

static void *set_in_thread(void *arg)
{
    (void)arg;
    setenv("TMPI_TEST_THREAD", mine, 1);
    return NULL;
}

static void check_env(void)
{
    char entry[64];
    snprintf(entry, sizeof entry, "TMPI_TEST_MINE=%s", mine);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(setenv("TMPI_TEST_MINE", mine, 1) == 0);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has set its own */
    const char *v = getenv("TMPI_TEST_MINE"), *e = NULL;
    CHECK(v && strcmp(v, mine) == 0, "TMPI_TEST_MINE %s", v);
    CHECK(environ_count("TMPI_TEST_MINE=", &e) == 1 && strcmp(e, entry) == 0,
          "environ: %d entries, %s", environ_count("TMPI_TEST_MINE=", NULL), e);
    CHECK(setenv("TMPI_TEST_MINE", "other", 0) == 0 && strcmp(getenv("TMPI_TEST_MINE"), mine) == 0);
    CHECK(setenv("", "x", 1) < 0 && errno == EINVAL);
    CHECK(setenv("A=B", "x", 1) < 0 && errno == EINVAL);

    /* putenv keeps the caller's string: writing it changes the variable */
    static char put[64];
    snprintf(put, sizeof put, "TMPI_TEST_PUT=a%d", rank);
    CHECK(putenv(put) == 0 && getenv("TMPI_TEST_PUT") == put + 14);
    put[14] = 'b';
    CHECK(getenv("TMPI_TEST_PUT")[0] == 'b');
    CHECK(unsetenv("TMPI_TEST_PUT") == 0 && !getenv("TMPI_TEST_PUT"));
    CHECK_EQ(environ_count("TMPI_TEST_PUT=", NULL), 0);

    pthread_t t;
    CHECK(pthread_create(&t, NULL, set_in_thread, NULL) == 0 && pthread_join(t, NULL) == 0);
    CHECK(getenv("TMPI_TEST_THREAD") && strcmp(getenv("TMPI_TEST_THREAD"), mine) == 0);

    /* what is there now, to be put back at the end (copies: putenv keeps them) */
    int n = 0;
    while (environ[n])
        n++;
    char **copy = malloc((size_t)n * sizeof *copy);
    CHECK(copy != NULL);
    for (int i = 0; i < n; i++)
        CHECK((copy[i] = strdup(environ[i])) != NULL);

    /* an array of the program's own is what getenv reads; setenv moves to a new one */
    char only[] = "TMPI_TEST_ONLY=1";
    char *mine_env[] = {only, NULL};
    environ = mine_env;
    CHECK(getenv("TMPI_TEST_ONLY") && !getenv("TMPI_TEST_MINE"));
    CHECK(setenv("TMPI_TEST_MORE", "2", 1) == 0 && environ != mine_env);
    CHECK(getenv("TMPI_TEST_ONLY") && getenv("TMPI_TEST_MORE") && !mine_env[1]);

    /* clearenv empties it */
    CHECK(clearenv() == 0 && (!environ || !environ[0]) && !getenv("TMPI_TEST_ONLY"));
    for (int i = 0; i < n; i++)
        CHECK(putenv(copy[i]) == 0);
    free(copy);
    CHECK_EQ(env_int("OMPI_COMM_WORLD_RANK"), rank);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody's changes reached another rank meanwhile */
    CHECK(strcmp(getenv("TMPI_TEST_MINE"), mine) == 0 && !getenv("TMPI_TEST_PUT"));
}

static char want_dir[PATH_MAX];

static void *look_in_thread(void *arg)
{
    char cwd[PATH_MAX];
    struct stat st;
    *(int *)arg = getcwd(cwd, sizeof cwd) && strcmp(cwd, want_dir) == 0 && stat("moved", &st) == 0;
    return NULL;
}

/* The first line of the relative file path. */
static void first_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "%s: %s", path, strerror(errno));
    CHECK(fgets(buf, (int)len, f) != NULL, "%s is empty", path);
    buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static void check_cwd(const char *base)
{
    char dir[32], cwd[PATH_MAX], line[PATH_MAX];
    snprintf(dir, sizeof dir, "r%d", rank);
    snprintf(want_dir, sizeof want_dir, "%s/%s", base, dir);
    CHECK(chdir(base) == 0, "chdir %s: %s", base, strerror(errno));
    CHECK(mkdir(dir, 0755) == 0 && chdir(dir) == 0, "%s: %s", dir, strerror(errno));
    CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, want_dir) == 0, "getcwd %s", cwd);
    FILE *f = fopen("mine", "w");
    CHECK(f != NULL && fprintf(f, "%d\n", rank) > 0 && fclose(f) == 0);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank wrote its "mine" */
    first_line("mine", line, sizeof line);
    CHECK_EQ(atoi(line), rank);
    struct stat st;
    CHECK(stat("mine", &st) == 0 && S_ISREG(st.st_mode) && access("mine", R_OK) == 0);
    CHECK(fstatat(AT_FDCWD, "mine", &st, 0) == 0);
    int fd = openat(AT_FDCWD, "mine", O_RDONLY);
    CHECK(fd >= 0 && close(fd) == 0);
    CHECK(rename("mine", "moved") == 0 && stat("moved", &st) == 0 && stat("mine", &st) < 0);
    CHECK(symlink("moved", "link") == 0);
    char target[64] = "";
    CHECK(readlink("link", target, sizeof target - 1) == 5 && strcmp(target, "moved") == 0);
    char real[PATH_MAX], want_real[PATH_MAX + 8];
    snprintf(want_real, sizeof want_real, "%s/moved", want_dir);
    CHECK(realpath("link", real) && strcmp(real, want_real) == 0, "realpath %s", real);
    DIR *d = opendir(".");
    int found = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        found += strcmp(de->d_name, "moved") == 0;
    CHECK(d && closedir(d) == 0 && found == 1);

    int up = open("..", O_RDONLY | O_DIRECTORY);
    CHECK(up >= 0 && fchdir(up) == 0 && close(up) == 0);
    CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, base) == 0, "after fchdir: %s", cwd);
    CHECK(chdir("nowhere") < 0 && errno == ENOENT);
    CHECK(chdir(dir) == 0 && chdir("moved") < 0 && errno == ENOTDIR);
    char *name = get_current_dir_name();
    CHECK(name && strcmp(name, want_dir) == 0, "get_current_dir_name %s", name);
    free(name);

    int ok = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, look_in_thread, &ok) == 0 && pthread_join(t, NULL) == 0);
    CHECK(ok, "a thread of the rank does not see its directory");

    /* commands run in the rank's directory with the rank's environment */
    CHECK(system("pwd > here; echo \"$TMPI_TEST_MINE\" >> here") == 0);
    first_line("here", line, sizeof line);
    CHECK(strcmp(line, want_dir) == 0, "system ran in %s", line);
    FILE *p = popen("sed -n 2p here", "r");
    CHECK(p != NULL && fgets(line, sizeof line, p) != NULL);
    line[strcspn(line, "\n")] = '\0';
    CHECK(pclose(p) == 0 && strcmp(line, mine) == 0, "popen read %s", line);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_mode(const char *path, mode_t want)
{
    struct stat st;
    CHECK(lstat(path, &st) == 0, "%s: %s", path, strerror(errno));
    CHECK((st.st_mode & 0777) == want, "%s: mode %03o, expected %03o", path,
          (unsigned)(st.st_mode & 0777), (unsigned)want);
}

static void check_umask(void)
{
    static const mode_t masks[] = {0, 077, 027, 022};
    mode_t me = masks[rank % 4];
    mode_t first = umask(me), all = first;
    /* the launcher's, the same for all */
    MPI_Bcast(&all, sizeof all, MPI_BYTE, 0, MPI_COMM_WORLD);
    CHECK(first == all, "umask %03o, rank 0's %03o", (unsigned)first, (unsigned)all);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(umask(me) == me, "another rank's umask reached mine");
    int fd = open("o", O_CREAT | O_WRONLY, 0666);
    CHECK(fd >= 0 && close(fd) == 0);
    CHECK((fd = creat("c", 0666)) >= 0 && close(fd) == 0);
    FILE *f = fopen("f", "w");
    CHECK(f && fclose(f) == 0);
    CHECK(mkdir("d", 0777) == 0 && mkfifo("p", 0666) == 0);
    check_mode("o", 0666 & ~me);
    check_mode("c", 0666 & ~me);
    check_mode("f", 0666 & ~me);
    check_mode("d", 0777 & ~me);
    check_mode("p", 0666 & ~me);
    CHECK(system("umask > m") == 0);
    char line[32];
    first_line("m", line, sizeof line);
    CHECK(strtol(line, NULL, 8) == (long)me, "a command's umask %s, expected %03o", line,
          (unsigned)me);
    umask(first);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_cpus(int bound)
{
    cpu_set_t a, b;
    CHECK(sched_getaffinity(0, sizeof a, &a) == 0 &&
          sched_getaffinity(getpid(), sizeof b, &b) == 0);
    CHECK(CPU_EQUAL(&a, &b), "sched_getaffinity of 0 and of getpid() differ");
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK_EQ(get_nprocs(), online);
    if (bound)
        CHECK_EQ(online, CPU_COUNT(&a));
    else
        CHECK(online >= CPU_COUNT(&a), "%ld online, %d in the mask", online, CPU_COUNT(&a));
    printf("rank %d cpus %d\n", rank, CPU_COUNT(&a));
}

/* Atomic: a rank's SIGUSR handler may run on the thread that took the signal for the node
 * (host_signal.c), not on the rank's own (lock-free atomics are safe in a handler). */
static atomic_int usr1, usr2;
static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&usr1, 1);
}
static void on_usr2(int sig)
{
    (void)sig;
    atomic_fetch_add(&usr2, 1);
}

static void *pid_in_thread(void *arg)
{
    *(pid_t *)arg = getpid();
    return NULL;
}

static void check_pid(int carried)
{
    pid_t me = getpid(), *all = malloc((size_t)lsize * sizeof *all);
    CHECK(all != NULL);
    MPI_Allgather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, node);
    for (int i = 0; i < lsize; i++)
        for (int k = i + 1; k < lsize; k++)
            CHECK(carried ? all[i] == all[k] : all[i] != all[k],
                  "local ranks %d and %d: pids %d %d", i, k, (int)all[i], (int)all[k]);
    free(all);
    if (!carried) CHECK_EQ(me, gettid());
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/%d/status", (int)me);
    CHECK(kill(me, 0) == 0 && access(proc, R_OK) == 0, "pid %d unknown to the kernel", (int)me);
    pid_t seen = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, pid_in_thread, &seen) == 0 && pthread_join(t, NULL) == 0);
    CHECK_EQ(seen, me);

    /* kill(getpid()) reaches the rank's own handler, as raise() does */
    signal(SIGUSR1, on_usr1);
    signal(SIGUSR2, on_usr2);
    MPI_Barrier(MPI_COMM_WORLD); /* every handler is in place */
    CHECK(raise(SIGUSR2) == 0 && atomic_load(&usr2) >= 1, "raise did not run my handler");
    if (lrank == 0) CHECK(kill(getpid(), SIGUSR1) == 0);
    for (int i = 0; i < 10000 && !atomic_load(&usr1); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    CHECK(atomic_load(&usr1) >= 1, "kill(getpid(), SIGUSR1) on my node did not run my handler");
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_size(node, &lsize);
    snprintf(mine, sizeof mine, "rank-%d", rank);
    int carried = 0, bound = 0;
    for (int i = 1; i < argc; i++) {
        carried |= strcmp(argv[i], "carried") == 0;
        bound |= strcmp(argv[i], "bound") == 0;
    }
    check_rank_vars();
    check_env();

    char base[PATH_MAX] = "";
    if (rank == 0) {
        char tmpl[] = "/tmp/rank_process.XXXXXX";
        CHECK(mkdtemp(tmpl) && realpath(tmpl, base), "mkdtemp: %s", strerror(errno));
    }
    MPI_Bcast(base, sizeof base, MPI_CHAR, 0, MPI_COMM_WORLD);
    check_cwd(base);
    check_umask();
    check_cpus(bound);
    check_pid(carried);

    const char *files[] = {"moved", "link", "here", "o", "c", "f", "p", "m"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        CHECK(unlink(files[i]) == 0, "unlink %s: %s", files[i], strerror(errno));
    CHECK(rmdir("d") == 0 && chdir("..") == 0);
    char dir[32];
    snprintf(dir, sizeof dir, "r%d", rank);
    CHECK(rmdir(dir) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK(rmdir(base) == 0);
    return finish_ok();
}
