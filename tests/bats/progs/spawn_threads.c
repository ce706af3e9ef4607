/* spawn_threads.c — MPI_Comm_spawn from several threads of a rank at once under
 * MPI_THREAD_MULTIPLE (dynproc.bats).
 *   spawn_threads self T N R   T threads of each rank spawn N children each over MPI_COMM_SELF,
 *                              all at once, R rounds
 *   spawn_threads world T N R  the same over each thread's own duplicate of MPI_COMM_WORLD
 *                              (every rank's thread k spawns together with the others')
 * Each thread sends its number and round to its children, which answer with it plus their rank
 * and check their world (an allreduce) before they disconnect; the thread checks every answer
 * and that its inter-communicator has the sizes it asked for.  Prints "threads ok" on rank 0
 * when every check passed, and each child "tchild R of N on NODE". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abort_check.h"

#define MAX_THREADS 16

struct run {
    const char *self;
    int over_world; /* each thread spawns over its own dup of MPI_COMM_WORLD, else COMM_SELF */
    int n, rounds;
    MPI_Comm comms[MAX_THREADS];
    pthread_barrier_t start;
};

struct arg {
    struct run *r;
    int k;
};

static int child(void)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent != MPI_COMM_NULL, "a spawned rank has no parent");
    int rank, size, one = 1, sum = 0, v[2];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char host[MPI_MAX_PROCESSOR_NAME];
    int hl;
    MPI_Get_processor_name(host, &hl);
    printf("tchild %d of %d on %s\n", rank, size, host);
    fflush(stdout);
    /* a collective over the children's own world: every child of this spawn is in it */
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size, "children's allreduce %d of %d", sum, size);
    MPI_Bcast(v, 2, MPI_INT, 0, parent);
    int back[3] = {v[0], v[1], rank};
    MPI_Send(back, 3, MPI_INT, 0, 8, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

static void *spawner(void *p)
{
    struct arg *a = p;
    struct run *r = a->r;
    MPI_Comm over = r->over_world ? r->comms[a->k] : MPI_COMM_SELF;
    int rank, lsize, rsize, errs[64];
    MPI_Comm_rank(over, &rank);
    char *args[] = {"tchild", NULL};
    for (int round = 0; round < r->rounds; round++) {
        pthread_barrier_wait(&r->start); /* every thread in MPI_Comm_spawn at once */
        MPI_Comm kids;
        int rc = MPI_Comm_spawn(r->self, args, r->n, MPI_INFO_NULL, 0, over, &kids, errs);
        CHECK(rc == MPI_SUCCESS, "thread %d round %d: spawn failed (%d)", a->k, round, rc);
        for (int i = 0; rank == 0 && i < r->n; i++)
            CHECK(errs[i] == MPI_SUCCESS, "thread %d: errcode %d: %d", a->k, i, errs[i]);
        MPI_Comm_size(kids, &lsize);
        MPI_Comm_remote_size(kids, &rsize);
        int want_l;
        MPI_Comm_size(over, &want_l);
        CHECK(lsize == want_l && rsize == r->n, "thread %d: intercomm sizes %d/%d", a->k, lsize,
              rsize);
        int v[2] = {a->k, round};
        MPI_Bcast(v, 2, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, kids);
        for (int i = 0; rank == 0 && i < r->n; i++) {
            int back[3];
            MPI_Recv(back, 3, MPI_INT, i, 8, kids, MPI_STATUS_IGNORE);
            CHECK(back[0] == a->k && back[1] == round && back[2] == i,
                  "thread %d round %d: child %d answered %d/%d/%d (another thread's child?)", a->k,
                  round, i, back[0], back[1], back[2]);
        }
        MPI_Comm_disconnect(&kids);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) return child();
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    CHECK(argc == 5 && (strcmp(argv[1], "self") == 0 || strcmp(argv[1], "world") == 0),
          "usage: spawn_threads self|world THREADS N ROUNDS");
    struct run r = {.self = argv[0], .over_world = strcmp(argv[1], "world") == 0};
    int t = atoi(argv[2]);
    r.n = atoi(argv[3]);
    r.rounds = atoi(argv[4]);
    CHECK(t >= 1 && t <= MAX_THREADS && r.n >= 1 && r.n <= 64 && r.rounds >= 1, "bad arguments");
    for (int k = 0; r.over_world && k < t; k++)
        MPI_Comm_dup(MPI_COMM_WORLD, &r.comms[k]);
    pthread_barrier_init(&r.start, NULL, (unsigned)t);
    pthread_t th[MAX_THREADS];
    struct arg args[MAX_THREADS];
    for (int k = 0; k < t; k++) {
        args[k] = (struct arg){&r, k};
        CHECK(pthread_create(&th[k], NULL, spawner, &args[k]) == 0, "pthread_create");
    }
    for (int k = 0; k < t; k++)
        pthread_join(th[k], NULL);
    pthread_barrier_destroy(&r.start);
    for (int k = 0; r.over_world && k < t; k++)
        MPI_Comm_free(&r.comms[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("threads ok\n");
    MPI_Finalize();
    return 0;
}
