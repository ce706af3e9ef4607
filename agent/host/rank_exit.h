/* rank_exit.h — the handlers a rank registered to run when it exits (atexit, on_exit,
 * at_quick_exit), run when that rank exits, as a process runs its own.
 *
 * In a process, exit() (and a return from main) calls the atexit and on_exit handlers newest
 * first, on_exit ones with the exit status, and quick_exit() the at_quick_exit ones; _exit
 * and a signal call none.  libc keeps one list for the process, and the job host never exits
 * while its ranks run.  So a rank's registrations are kept here instead (interpose_exit.c):
 * every on_exit and at_quick_exit, and the atexit / __cxa_atexit ones of the rank's own
 * program (its copy's __dso_handle) or of none (dso NULL).  Registrations made while the
 * program's constructors ran (at load, before the rank started: C++ static objects) stay in
 * libc's list under the copy's __dso_handle and run when the job ends (image_copy_finish):
 * they were made first, so they run last, as in a process.
 *
 * Any thread of the rank may register (lock below); the rank's own context runs them. */
#ifndef TMPI_AGENT_RANK_EXIT_H
#define TMPI_AGENT_RANK_EXIT_H

#include <pthread.h>
#include <stddef.h>

enum rank_exit_kind {
    RANK_EXIT_CXA,     /* fn(arg): atexit, __cxa_atexit */
    RANK_EXIT_ON_EXIT, /* fn(status, arg): on_exit */
    RANK_EXIT_PLAIN,   /* fn(): at_quick_exit */
};

struct rank_exit_fn {
    int kind; /* enum rank_exit_kind */
    union {
        void (*cxa)(void *);
        void (*on_exit)(int, void *);
        void (*plain)(void);
    } fn;
    void *arg;
};

struct rank_exit_list {
    struct rank_exit_fn *fns; /* in registration order */
    size_t n, cap;
};

/* All zeros: nothing registered. */
struct rank_exit {
    pthread_mutex_t mu; /* the lists; all zeros is an unlocked mutex in glibc */
    struct rank_exit_list at_exit, at_quick_exit;
    int skip; /* the rank ends without its exit handlers (_exit, _Exit, quick_exit) */
};

/* Adds a handler to list (one of e's).  0 or -ENOMEM. */
int rank_exit_add(struct rank_exit *e, struct rank_exit_list *list, struct rank_exit_fn fn);

/* Takes the newest handler of list off it and calls it (on_exit ones with status), without
 * the lock: a handler may register more, or end the rank.  1 when one ran, 0 when the list
 * is empty. */
int rank_exit_run_one(struct rank_exit *e, struct rank_exit_list *list, int status);

/* Forgets every handler (the rank is gone). */
void rank_exit_free(struct rank_exit *e);

#endif
