/* Prints one line per rank: "LABEL rank R of S appnum A wd DIR" — LABEL is argv[1] (or "app"),
 * A the MPI_APPNUM attribute of MPI_COMM_WORLD (-1 when it has none), DIR the working
 * directory; then "LABEL rank R env NAME=VALUE" for TMPI_TEST_VAR if set.  MPMD tests run two
 * copies built under different names, so the program file each rank runs shows too. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* -DMPMD_SECOND_PROGRAM builds a different file of the same program (two programs for MPMD). */
#ifdef MPMD_SECOND_PROGRAM
__attribute__((used)) static const char variant[] = "mpmd_info, second build";
#else
__attribute__((used)) static const char variant[] = "mpmd_info";
#endif

int main(int argc, char **argv)
{
    int rank, size, flag, *appnum;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    char wd[4096];
    if (!getcwd(wd, sizeof wd)) wd[0] = '\0';
    const char *label = argc > 1 ? argv[1] : "app";
    printf("%s rank %d of %d appnum %d wd %s\n", label, rank, size, flag ? *appnum : -1, wd);
    const char *v = getenv("TMPI_TEST_VAR");
    if (v) printf("%s rank %d env TMPI_TEST_VAR=%s\n", label, rank, v);
    /* every rank of every program is in one MPI_COMM_WORLD */
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size) {
        printf("%s rank %d: allreduce over the world gave %d, expected %d\n", label, rank, sum,
               size);
        return 1;
    }
    MPI_Finalize();
    return 0;
}
