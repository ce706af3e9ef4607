/* test_binding.c — agent/host/binding.c: the topology of this machine, pinning a thread to the
 * k-th object of a kind (round robin past the last), "none" leaving the mask alone, and the
 * report text matching the mask the thread really has. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "binding.h"

/* A thread that waits until told to end, so its mask can be set and read from outside. */
struct parked {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
};

static void *park(void *arg)
{
    struct parked *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->go)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void parked_start(struct parked *p)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    CHECK_EQ(pthread_create(&p->th, NULL, park, p), 0);
}

static void parked_end(struct parked *p)
{
    pthread_mutex_lock(&p->mu);
    p->go = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->th, NULL);
}

static int mask_count(pthread_t th, int *ret_first)
{
    cpu_set_t set;
    CHECK_EQ(pthread_getaffinity_np(th, sizeof set, &set), 0);
    *ret_first = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set) && *ret_first < 0) *ret_first = c;
    return CPU_COUNT(&set);
}

int main(void)
{
    CHECK(strcmp(bind_kind_name(BIND_KIND_CORE), "core") == 0);
    CHECK(strcmp(bind_kind_name(BIND_KIND_PACKAGE), "package") == 0);
    CHECK(bind_kind_name(BIND_KIND_DEFAULT) == NULL);
    CHECK(bind_kind_name((enum bind_kind)99) == NULL);

    struct bind_topo *t;
    CHECK_EQ(bind_topo_load(&t), 0);
    uint32_t cores = bind_topo_cores(t), pus = bind_topo_count(t, BIND_KIND_HWTHREAD);
    int first;
    int all = mask_count(pthread_self(), &first);
    CHECK(cores >= 1 && pus >= cores && pus == (uint32_t)all);
    CHECK_EQ(bind_topo_count(t, BIND_KIND_NONE), 1);
    CHECK(bind_topo_count(t, BIND_KIND_PACKAGE) >= 1 && bind_topo_count(t, BIND_KIND_L3CACHE) >= 1);

    char line[BIND_LINE_MAX];
    struct parked p;
    parked_start(&p);
    /* none: the mask stays every CPU we have, and is reported so */
    CHECK_EQ(bind_thread(t, BIND_KIND_NONE, 0, p.th), 0);
    CHECK_EQ(mask_count(p.th, &first), all);
    CHECK_EQ(bind_describe(t, p.th, BIND_KIND_NONE, line, sizeof line), 0);
    CHECK(strncmp(line, "not bound: [", 12) == 0);

    /* one hardware thread per object; index pus wraps to 0 */
    CHECK_EQ(bind_thread(t, BIND_KIND_HWTHREAD, pus, p.th), 0);
    int cpu0;
    CHECK_EQ(mask_count(p.th, &cpu0), 1);
    CHECK_EQ(bind_thread(t, BIND_KIND_HWTHREAD, 0, p.th), 0);
    CHECK_EQ(mask_count(p.th, &first), 1);
    CHECK_EQ(first, cpu0);
    CHECK_EQ(bind_describe(t, p.th, BIND_KIND_HWTHREAD, line, sizeof line), 0);
    char want[64];
    snprintf(want, sizeof want, "(cpus %d)", cpu0);
    CHECK(strncmp(line, "bound to core 0[hwt 0]: [B", 26) == 0 && strstr(line, want));

    /* the last core: its mask is what the report's cpus say */
    CHECK_EQ(bind_thread(t, BIND_KIND_CORE, cores - 1, p.th), 0);
    int n = mask_count(p.th, &first);
    CHECK(n >= 1 && (cores > 1 ? first != cpu0 : first == cpu0));
    CHECK_EQ(bind_describe(t, p.th, BIND_KIND_CORE, line, sizeof line), 0);
    snprintf(want, sizeof want, "bound to core %u[hwt ", cores - 1);
    CHECK(strncmp(line, want, strlen(want)) == 0);

    /* a package has every core of it; on a one-package machine still "bound to package 0" */
    CHECK_EQ(bind_thread(t, BIND_KIND_PACKAGE, 0, p.th), 0);
    CHECK_EQ(bind_describe(t, p.th, BIND_KIND_PACKAGE, line, sizeof line), 0);
    CHECK(strncmp(line, "bound to package 0[core ", 24) == 0);

    /* a line too small for the layout is cut, never overrun */
    char small[24];
    CHECK_EQ(bind_describe(t, p.th, BIND_KIND_PACKAGE, small, sizeof small), 0);
    CHECK(strlen(small) < sizeof small && strstr(small, "..."));

    parked_end(&p);
    bind_topo_free(t);
    bind_topo_free(NULL);
    puts("ok");
    return 0;
}
