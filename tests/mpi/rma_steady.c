/* rma_steady.c — one-sided traffic that outlasts a break of the links under it: every rank
 * Puts a block stamped with (round, rank) into its slot of the next rank's window, flushes,
 * Gets it back and checks every byte, for ROUNDS rounds (argv[1]) and, with argv[2], for at
 * least that many seconds of rank 0's clock (rounds go on in steps of STEP until then, the
 * same number on every rank), in one passive epoch.  Run
 * across nodes while the data links are reset (tests/bats/liveness.bats): a Put or Get in
 * flight at the break must be carried out once the link is back, not fail the window.  Prints
 * "rma_steady: started" once the epoch is open, "rma_steady: N rounds checked" and OK. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* a block that goes as one remote write or read on the OFI transport (contiguous) */
#define BLOCK 8192
/* rounds between two looks at the clock */
#define STEP 64

static void stamp(unsigned char *b, int round, int rank)
{
    for (int i = 0; i < BLOCK; i++)
        b[i] = (unsigned char)(round * 31 + rank * 7 + i);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int min_rounds = argc > 1 ? atoi(argv[1]) : 200;
    const double seconds = argc > 2 ? atof(argv[2]) : 0;
    CHECK(min_rounds > 0 && seconds >= 0);
    const double t0 = MPI_Wtime();
    unsigned char *base;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate((MPI_Aint)size * BLOCK, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0, (size_t)size * BLOCK);
    unsigned char *out = malloc(BLOCK), *back = malloc(BLOCK);
    CHECK(out && back);
    const int target = (rank + 1) % size;
    const MPI_Aint slot = (MPI_Aint)rank * BLOCK;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    if (rank == 0) {
        printf("rma_steady: started\n");
        fflush(stdout);
    }
    int rounds = 0;
    for (int r = 0;; r++) {
        stamp(out, r, rank);
        CHECK_MPI(MPI_Put(out, BLOCK, MPI_BYTE, target, slot, BLOCK, MPI_BYTE, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        memset(back, 0xff, BLOCK);
        CHECK_MPI(MPI_Get(back, BLOCK, MPI_BYTE, target, slot, BLOCK, MPI_BYTE, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        if (memcmp(out, back, BLOCK)) {
            int at = 0;
            while (out[at] == back[at])
                at++;
            fprintf(stderr, "rank %d round %d: byte %d of the block read back is %d, put %d\n",
                    rank, r, at, back[at], out[at]);
            CHECK(0);
        }
        if ((r + 1) % STEP && r + 1 != min_rounds) continue;
        int go = r + 1 < min_rounds || MPI_Wtime() - t0 < seconds;
        CHECK_MPI(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (!go) {
            rounds = r + 1;
            break;
        }
    }
    CHECK_MPI(MPI_Win_unlock(target, win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* what the origin before us left in our window: its last round */
    const int from = (rank + size - 1) % size;
    stamp(out, rounds - 1, from);
    CHECK(!memcmp(base + (size_t)from * BLOCK, out, BLOCK));
    long long mine = rounds, all = 0;
    MPI_Reduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("rma_steady: %lld rounds checked\n", all);
    free(out);
    free(back);
    MPI_Win_free(&win);
    return finish_ok();
}
