/* Writes through every common stdio path; the launcher must see each line on the right stream. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("r%d printf\n", rank);
    puts("puts");
    fprintf(stdout, "r%d fprintf-out\n", rank);
    fputs("fputs-out\n", stdout);
    fwrite("fwrite-out\n", 1, 11, stdout);
    putchar('p');
    putchar('\n');
    fflush(stdout);
    write(1, "write-1\n", 8);
    dprintf(1, "dprintf-1\n");
    printf("partial ");
    printf("line\n");
    fprintf(stderr, "r%d fprintf-err\n", rank);
    fputs("fputs-err\n", stderr);
    write(2, "write-2\n", 8);
    errno = ENOENT;
    perror("perror");
    printf("no newline at the end");
    MPI_Finalize();
    return 0;
}
