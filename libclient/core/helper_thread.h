/* helper_thread.h — threads of libtmpi's own (non-blocking collectives' runners, the file
 * system threads) start with the process's CPU mask.
 *
 * Such a thread works for every rank of the node, so it must not inherit the pinning of the
 * rank that happens to start it (tmpi-launch --bind-to pins each rank's thread): it would then
 * run only when that rank's core is free, e.g. never while the rank computes.  It takes the
 * process's own mask instead (the job host's main thread, which is never pinned). */
#ifndef TMPI_LIBCLIENT_HELPER_THREAD_H
#define TMPI_LIBCLIENT_HELPER_THREAD_H

#include <pthread.h>

/* pthread_create(t, attr with the process's mask, fn, arg): 0 or an errno value.  Where the
 * mask cannot be read the thread inherits the caller's. */
int tm_helper_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
