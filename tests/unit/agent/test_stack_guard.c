/* test_stack_guard.c — guard pages that cost no memory map (agent/host/stack_guard.c): a
 * guard region leaves its mapping one map (an mprotect'ed guard, on kernels without guard
 * regions, two) and stack_guard_maps says which; the guard faults on a read and on a write
 * (in a child process); the pages beyond it stay usable; two stacks mapped side by side with
 * guards merge into one map where the guards cost none. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "stack_guard.h"

/* Maps of this process that overlap [lo, hi). */
static int maps_in(uintptr_t lo, uintptr_t hi)
{
    FILE *f = fopen("/proc/self/maps", "re");
    CHECK(f != NULL, "cannot read /proc/self/maps");
    int n = 0;
    unsigned long a, b;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a < hi && b > lo) n++;
    fclose(f);
    return n;
}

/* Whether touching p (write: store, else load) in a child ends it with SIGSEGV. */
static int faults(volatile char *p, int write)
{
    pid_t pid = fork();
    CHECK(pid >= 0, "fork failed");
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* a linked library's handler would catch the fault */
        if (write)
            *p = 1;
        else
            (void)*p;
        _exit(0);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid, "waitpid failed");
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

static void test_one_stack(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 4 * pg;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap failed");
    int r = stack_guard_install(m, pg);
    CHECK(r == 0 || r == 1, "stack_guard_install: %d", r);
    CHECK_EQ(r, stack_guard_maps());
    CHECK_EQ(maps_in((uintptr_t)m, (uintptr_t)m + len), 1 + r);
    CHECK(faults(m, 0), "a read of the guard page did not fault");
    CHECK(faults(m + pg - 1, 1), "a write to the guard page did not fault");
    memset(m + pg, 7, len - pg); /* the stack itself */
    CHECK_EQ(m[len - 1], 7);
    munmap(m, len);
}

static void test_neighbours_merge(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 4 * pg;
    /* two stacks in one reservation, as the kernel places consecutive mmaps */
    char *m = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap failed");
    munmap(m, 2 * len);
    char *a = mmap(m, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    char *b =
        mmap(m + len, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(a == m && b == m + len, "fixed mmaps failed");
    int ra = stack_guard_install(a, pg), rb = stack_guard_install(b, pg);
    CHECK(ra >= 0 && rb >= 0, "stack_guard_install: %d %d", ra, rb);
    int n = maps_in((uintptr_t)m, (uintptr_t)m + 2 * len);
    /* guard regions: one map for both; mprotect'ed guards: guard, stack, guard, stack */
    CHECK_EQ(n, stack_guard_maps() == 0 ? 1 : 4);
    CHECK(faults(b, 1), "the second stack's guard did not fault");
    munmap(m, 2 * len);
}

int main(void)
{
    test_one_stack();
    test_neighbours_merge();
    return 0;
}
