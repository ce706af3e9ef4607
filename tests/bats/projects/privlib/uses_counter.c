/* Rank r bumps the libraries' counters r + 1 times: with a copy of each library per rank,
 * every rank sees only its own bumps (counter_value r + 1, the constructor once per copy);
 * shared, the bumps of all ranks add up. */
#include <mpi.h>
#include <stdio.h>

extern int counter_value;
extern int counter_inits;
int twice_bump(void);

int main(int argc, char **argv)
{
    int rank, bad = 0, any, last = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i <= rank; i++)
        last = twice_bump();
    MPI_Barrier(MPI_COMM_WORLD);
    /* bumps return 111, 221, 331 ... in a private copy */
    int want = 0;
    for (int i = 1; i <= rank + 1; i++)
        want += i * 110 + 1;
    if (counter_value != rank + 1 || counter_inits != 1 || last != want) {
        printf("rank %d: counter_value %d inits %d total %d, expected %d 1 %d\n", rank,
               counter_value, counter_inits, last, rank + 1, want);
        bad = 1;
    }
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) puts(any ? "SHARED" : "PRIVATE");
    MPI_Finalize();
    return 0;
}
