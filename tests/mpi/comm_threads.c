/* comm_threads.c — under MPI_THREAD_MULTIPLE, several threads of every rank create and free
 * communicators at the same time (each thread on its own parent, as MPI requires of
 * concurrent collectives): dups, splits, create_group, groups, attributes and info objects.
 * A library that grants less than MPI_THREAD_MULTIPLE skips the threaded part. */
#include <pthread.h>

#include "check.h"

#define NTHREADS 4
#define ITERS 300

static MPI_Comm parent[NTHREADS];
static int key;

static void *worker(void *arg)
{
    int t = (int)(long)arg, rank, size;
    MPI_Comm_rank(parent[t], &rank);
    MPI_Comm_size(parent[t], &size);
    MPI_Group g;
    CHECK_MPI(MPI_Comm_group(parent[t], &g));
    for (int i = 0; i < ITERS; i++) {
        MPI_Comm d, s, cg;
        CHECK_MPI(MPI_Comm_dup(parent[t], &d));
        CHECK_MPI(MPI_Comm_set_attr(d, key, (void *)(long)(t * 1000 + i)));
        CHECK_MPI(MPI_Comm_split(d, rank % 2, -rank, &s));
        CHECK_MPI(MPI_Comm_create_group(parent[t], g, t, &cg));
        MPI_Info in;
        CHECK_MPI(MPI_Info_create(&in));
        CHECK_MPI(MPI_Info_set(in, "k", "v"));
        CHECK_MPI(MPI_Info_free(&in));
        if (i % 50 == 0) {
            int v = t + i, sum = 0;
            CHECK_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, cg));
            CHECK(sum == v * size, "thread %d iteration %d: sum %d", t, i, sum);
        }
        void *val;
        int flag;
        CHECK_MPI(MPI_Comm_get_attr(d, key, &val, &flag));
        CHECK(flag && val == (void *)(long)(t * 1000 + i), "thread %d: attribute %p", t, val);
        CHECK_MPI(MPI_Comm_free(&cg));
        CHECK_MPI(MPI_Comm_free(&s));
        CHECK_MPI(MPI_Comm_free(&d));
    }
    CHECK_MPI(MPI_Group_free(&g));
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    if (provided == MPI_THREAD_MULTIPLE) {
        CHECK_MPI(
            MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
        for (int t = 0; t < NTHREADS; t++)
            CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parent[t]));
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            CHECK(pthread_create(&th[t], NULL, worker, (void *)(long)t) == 0, "pthread_create");
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < NTHREADS; t++)
            CHECK_MPI(MPI_Comm_free(&parent[t]));
        CHECK_MPI(MPI_Comm_free_keyval(&key));
    }
    return finish_ok();
}
