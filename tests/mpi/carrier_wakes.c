/* carrier_wakes.c — how many of a ping-pong's wake-ups take the slow path (MPI_T counter
 * rank.slow_wakes) when the ranks run on carriers.  Ranks i and i + n/2 exchange ROUNDS 8-byte
 * round trips (the pairs of osu_mbw_mr); each rank reads its own counter before and after.
 *
 * Argument "few": the pairs share a carrier (TMPI_CARRIER_PLACEMENT=cyclic, n/2 a multiple of
 * the carriers), and a wake of a rank parked on the waker's own carrier must not take the slow
 * path: each rank counts under a quarter of its round trips (a few are allowed for moves off a
 * carrier that the machine's load made look stuck).  "many": the pairs are split across
 * carriers (block placement, the default), and every wake of a parked rank is counted: over
 * half of them on some rank (a rank moved off a carrier that looked stuck may end up beside
 * its partner), which shows the counter sees what "few" checks.  "any": no count is checked
 * (across nodes, where a pair's wakes come from the links). Run with an even number of ranks.
 */
#include <string.h>

#include "check.h"

#define ROUNDS 2000

static unsigned long long slow_wakes(MPI_T_pvar_session ses, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    CHECK_MPI(MPI_T_pvar_read(ses, h, &v));
    return v;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init(&argc, &argv);
    CHECK(argc == 2 && (strcmp(argv[1], "few") == 0 || strcmp(argv[1], "many") == 0 ||
                        strcmp(argv[1], "any") == 0),
          "usage: carrier_wakes few|many|any");
    int few = strcmp(argv[1], "few") == 0, many = strcmp(argv[1], "many") == 0;
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size % 2 == 0, "an even number of ranks, not %d", size);
    int idx, count;
    CHECK_MPI(MPI_T_pvar_get_index("rank.slow_wakes", MPI_T_PVAR_CLASS_COUNTER, &idx));
    MPI_T_pvar_session ses;
    MPI_T_pvar_handle h;
    CHECK_MPI(MPI_T_pvar_session_create(&ses));
    CHECK_MPI(MPI_T_pvar_handle_alloc(ses, idx, NULL, &h, &count));

    int half = size / 2, peer = rank < half ? rank + half : rank - half;
    char buf[8] = {0};
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long before = slow_wakes(ses, h);
    for (int i = 0; i < ROUNDS; i++) {
        if (rank < half) {
            MPI_Send(buf, sizeof buf, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, sizeof buf, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, sizeof buf, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, sizeof buf, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    unsigned long long mine = slow_wakes(ses, h) - before, most = 0, least = 0;
    MPI_Reduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &least, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("slow wakes per rank: %llu to %llu of %d round trips\n", least, most, ROUNDS);
        if (few)
            CHECK(most < ROUNDS / 4,
                  "at most %d slow wakes a rank with the pairs on one carrier, "
                  "got %llu",
                  ROUNDS / 4, most);
        else if (many)
            CHECK(most > ROUNDS / 2,
                  "over %d slow wakes on some rank with the pairs split, got %llu", ROUNDS / 2,
                  most);
    }
    CHECK_MPI(MPI_T_pvar_handle_free(ses, &h));
    CHECK_MPI(MPI_T_pvar_session_free(&ses));
    CHECK_MPI(MPI_T_finalize());
    return finish_ok();
}
