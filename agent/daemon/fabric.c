/* fabric.c — the agent's decision for `[mesh] transport = auto` (fabric.h). */
#include "fabric.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"
#include "tp_ofi.h"

extern char **environ;

int agent_fabric_probe_main(void)
{
    char name[64];
    if (!tp_ofi_fabric_present(name, sizeof name)) return 1;
    printf("%s\n", name);
    return fflush(stdout) == 0 ? 0 : 2;
}

/* Runs `tmpid --probe-fabric` (agent_fabric_probe_main) and reads the provider it prints into
 * name.  In a process of its own because asking libfabric loads every provider into the asker:
 * PSM's (libinfinipath) installs signal handlers of its own, which replaced the agent's SIGTERM
 * handling and raced the agent's exit with the probe thread (make tsan, 2026-12-02), and other
 * providers start threads or map devices the agent would then keep for its lifetime.
 * 1: found, 0: none (or the probe could not run: said in the log). */
static int probe_in_child(char *name, size_t len)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return -errno;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc) goto closed;
    rc = posix_spawnattr_init(&attr);
    if (rc) goto no_attr;
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none); /* the loop thread's blocked signals stay ours */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    rc = posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    char *argv[] = {"tmpid", "--probe-fabric", NULL};
    pid_t pid = -1;
    if (rc == 0) rc = posix_spawn(&pid, "/proc/self/exe", &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
no_attr:
    posix_spawn_file_actions_destroy(&fa);
closed:
    close(p[1]);
    if (rc) {
        close(p[0]);
        return -rc;
    }
    size_t n = 0;
    for (;;) {
        ssize_t k = read(p[0], name + n, len - 1 - n);
        if (k > 0 && (n += (size_t)k) < len - 1) continue;
        if (k < 0 && errno == EINTR) continue;
        break; /* end of file, an error, or a name longer than ours: what came is all */
    }
    close(p[0]);
    name[n] = '\0';
    name[strcspn(name, "\n")] = '\0';
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -errno;
    if (WIFEXITED(st) && WEXITSTATUS(st) <= 1) return WEXITSTATUS(st) == 0 && name[0];
    return -ECHILD;
}

static void *probe(void *arg)
{
    struct agent *a = arg;
    int found = probe_in_child(a->fabric, sizeof a->fabric);
    if (found < 0) {
        a->fabric[0] = '\0';
        log_warning("transport auto: the fabric probe (tmpid --probe-fabric) failed: %s; jobs "
                    "across nodes use tcp",
                    found == -ECHILD ? "it did not exit normally" : strerror(-found));
    } else if (found)
        log_notice("transport auto: fabric provider %s found: jobs across nodes use ofi",
                   a->fabric);
    else
        log_info("transport auto: no fabric provider (only socket ones, or no libfabric): jobs "
                 "across nodes use tcp");
    atomic_store_explicit(&a->fabric_done, 1, memory_order_release);
    return NULL;
}

void agent_fabric_wait(struct agent *a)
{
    if (!a->fabric_running) return;
    pthread_join(a->fabric_thread, NULL);
    a->fabric_running = 0;
}

void agent_fabric_probe(struct agent *a, const char *transport)
{
    agent_fabric_wait(a);
    atomic_store_explicit(&a->fabric_done, 0, memory_order_relaxed);
    a->fabric[0] = '\0';
    a->fabric_probed = 0;
    a->fabric_transport = transport;
    if (!transport || strcmp(transport, "auto")) return;
    a->fabric_probed = 1;
    if (pthread_create(&a->fabric_thread, NULL, probe, a) == 0) {
        a->fabric_running = 1;
        return;
    }
    probe(a); /* no thread: look here */
}
