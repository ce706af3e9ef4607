/* A program for the image copy test, built by tmpicc: what each private copy must have of its
 * own (globals, pointers to them, constructors and destructors that ran once, atexit
 * handlers), what it must share (pointers to library functions), and frames the unwinder must
 * find (pthread_exit from a thread it started runs a cleanup in the copy's own frame). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int counter;
int *counter_ptr = &counter;                 /* a pointer into the copy: relocated to each copy */
size_t (*strlen_ptr)(const char *) = strlen; /* a library function: the same in every copy */
int ctor_runs;
int events[8]; /* 1 constructor, 2 destructor, 3 atexit handler, 4 unwound cleanup */
int nevents;
int ctor_saw_counter = -1; /* counter's value as the constructor found it: 0 in every copy */

static void note(int e)
{
    if (nevents < 8) events[nevents++] = e;
}

static void at_exit(void *arg)
{
    (void)arg;
    note(3);
}

/* What atexit() is in a shared object (libc_nonshared.a): a handler of this object, run when
 * it is finalized.  Called directly because ThreadSanitizer's runtime exports an atexit of its
 * own, which registers the handler for process exit instead. */
extern void *__dso_handle;
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

__attribute__((constructor)) static void ctor(void)
{
    ctor_saw_counter = counter;
    counter += 100;
    ctor_runs++;
    note(1);
    __cxa_atexit(at_exit, NULL, &__dso_handle);
}

__attribute__((destructor)) static void dtor(void)
{
    note(2);
}

static void cleanup(int *p)
{
    (void)p;
    note(4);
}

/* noinline: the cleanup's frame is the copy's own, between the thread's start and libc */
__attribute__((noinline)) static void leave(void)
{
    int guard __attribute__((cleanup(cleanup))) = 0;
    (void)guard;
    pthread_exit((void *)(long)(counter + 7));
}

static void *thread_main(void *arg)
{
    (void)arg;
    leave();
    return NULL;
}

/* Starts a thread that ends by pthread_exit inside the copy; returns what it exited with. */
long exit_in_thread(void);
long exit_in_thread(void)
{
    pthread_t t;
    void *ret = NULL;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0) return -1;
    pthread_join(t, &ret);
    return (long)ret;
}

int main(int argc, char **argv)
{
    (void)argv;
    return ++*counter_ptr + argc;
}
