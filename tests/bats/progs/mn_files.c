/* Every rank, on whichever node it runs, says who it runs as and what it can do with files:
 *   mn_files IN KEY
 * reads the first line of IN (relative to the working directory), writes out.RANK there,
 * tries to open KEY (which must stay closed to it), and prints one line
 *   rank R on NODE pid=P uid=U gid=G read=LINE|error write=ok|error key=open|error
 * (P: the process the rank runs in, its job host: the system call, since getpid() answers
 * the rank's own id), then all ranks meet in a barrier and rank 0 prints OK. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, len;
    char node[MPI_MAX_PROCESSOR_NAME], out[64], line[256], rd[300], wr[128], key[128];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Get_processor_name(node, &len);
    const char *in = argc > 1 ? argv[1] : "input.dat";
    const char *keyfile = argc > 2 ? argv[2] : "/etc/tmpi/cluster.key";

    FILE *f = fopen(in, "r");
    if (!f) {
        snprintf(rd, sizeof rd, "%s", strerror(errno));
    } else {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        line[strcspn(line, "\n")] = 0;
        snprintf(rd, sizeof rd, "%s", line);
        fclose(f);
    }

    snprintf(out, sizeof out, "out.%d", rank);
    f = fopen(out, "w");
    if (!f || fprintf(f, "rank %d on %s\n", rank, node) < 0 || fclose(f) != 0)
        snprintf(wr, sizeof wr, "%s", strerror(errno));
    else
        snprintf(wr, sizeof wr, "ok");

    f = fopen(keyfile, "r");
    if (f) {
        snprintf(key, sizeof key, "open");
        fclose(f);
    } else {
        snprintf(key, sizeof key, "%s", strerror(errno));
    }

    printf("rank %d on %s pid=%d uid=%u gid=%u read=%s write=%s key=%s\n", rank, node,
           (int)syscall(SYS_getpid), (unsigned)getuid(), (unsigned)getgid(), rd, wr, key);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("OK\n");
    MPI_Finalize();
    return 0;
}
