/* fabric.c — the agent's decision for `[mesh] transport = auto` (fabric.h). */
#include "fabric.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "log.h"
#include "tp_ofi.h"

static void *probe(void *arg)
{
    struct agent *a = arg;
    if (tp_ofi_fabric_present(a->fabric, sizeof a->fabric))
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
