/* info_keys.c — info keys the standard defines on every object (MPI 4.1): the assertions on
 * communicators and "mpi_memory_alloc_kinds" come back from MPI_Comm_get_info, and
 * "mpi_minimum_memory_alignment" aligns MPI_Alloc_mem and MPI_Win_allocate (a value that is
 * not a power of two is ignored, the default 64 stays).  Prints OK from rank 0. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "abort_check.h"

static int me;

static void aligned(const char *value, uintptr_t want)
{
    MPI_Info a;
    MPI_Info_create(&a);
    MPI_Info_set(a, "mpi_minimum_memory_alignment", value);
    void *p = NULL, *wb = NULL;
    CHECK(MPI_Alloc_mem(100, a, &p) == MPI_SUCCESS, "Alloc_mem %s", value);
    CHECK((uintptr_t)p % want == 0, "Alloc_mem with alignment %s: %p", value, p);
    MPI_Win w;
    CHECK(MPI_Win_allocate(100, 1, a, MPI_COMM_WORLD, &wb, &w) == MPI_SUCCESS, "Win_allocate");
    CHECK((uintptr_t)wb % want == 0, "Win_allocate with alignment %s: %p", value, wb);
    MPI_Win_free(&w);
    MPI_Free_mem(p);
    MPI_Info_free(&a);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    static const char *keys[] = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
                                 "mpi_assert_exact_length", "mpi_assert_allow_overtaking",
                                 "mpi_memory_alloc_kinds"};
    MPI_Info i, o;
    MPI_Info_create(&i);
    for (int k = 0; k < 5; k++)
        MPI_Info_set(i, keys[k], k == 4 ? "system" : "true");
    MPI_Comm d;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, i, &d);
    MPI_Comm_get_info(d, &o);
    for (int k = 0; k < 5; k++) {
        char v[64];
        int f = 0;
        MPI_Info_get(o, keys[k], 63, v, &f);
        CHECK(f && !strcmp(v, k == 4 ? "system" : "true"), "%s: %s", keys[k], f ? v : "(none)");
    }
    MPI_Info_free(&o);
    MPI_Info_free(&i);
    MPI_Comm_free(&d);
    aligned("4096", 4096);
    aligned("65536", 65536);
    aligned("3", 64);
    aligned("lots", 64);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("OK\n");
    MPI_Finalize();
    return 0;
}
