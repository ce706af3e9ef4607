#!/usr/bin/env bats
# Partitioned communication (MPI 4.0 ch. 4, libclient/part): tests/bats/progs/partitioned.c
# runs every call (Psend_init, Precv_init, Pready, Pready_range, Pready_list, Parrived with
# Start, Startall, Wait, Waitall, Test, Request_get_status and Request_free) between pairs of
# ranks, with equal and different partition counts on the two sides, strided layouts, init-order
# matching, 1 MiB channels past the eager limit, MPI_PROC_NULL and the error classes of misuse;
# four threads readying one request's partitions at once (MPI_THREAD_MULTIPLE); on one node with
# rank threads and on carriers, and across two agents.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

teardown() { stop_all_agents; }

# Status 0, a line OK, and no sanitizer report anywhere.
expect_ok() {
    if [ "$status" -ne 0 ] || ! printf '%s\n' "${lines[@]}" | grep -qx OK ||
        [[ "$output" == *Sanitizer* ]]; then
        echo "expected status 0 and an OK line, got status $status; output:" >&2
        echo "$output" >&2
        return 1
    fi
}

plaunch() { timeout $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) "$TMPI_BUILD/launcher/tmpi-launch" "$@"; }

@test "partitioned: every call on one node, 2 and 4 ranks, rank threads" {
    local exe
    exe=$(prog partitioned)
    run plaunch -n 2 "$exe"
    expect_ok
    run plaunch -n 4 "$exe"
    expect_ok
}

@test "partitioned: every call on one node on carriers (SWITCHING=user), 2 and 4 ranks" {
    local exe
    exe=$(prog partitioned)
    run plaunch -x TMPI_RANK_SWITCHING=user -n 2 "$exe"
    expect_ok
    run plaunch -x TMPI_RANK_SWITCHING=user -n 4 "$exe"
    expect_ok
}

# bats test_tags=multinode
@test "partitioned: every call across 2 agents (2 x 2 ranks), threads and carriers" {
    local exe
    exe=$(prog partitioned)
    start_cluster 2
    run timeout $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" \
        --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe"
    expect_ok
    run timeout $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" \
        --hostfile "$CLUSTER_HOSTFILE" -x TMPI_RANK_SWITCHING=user -n 4 "$exe"
    expect_ok
}

# MPI 4.1's info keys on every object (tests/bats/progs/info_keys.c): the communicator
# assertions and "mpi_memory_alloc_kinds" are kept and returned, and
# "mpi_minimum_memory_alignment" aligns MPI_Alloc_mem and MPI_Win_allocate.
@test "partitioned: MPI 4.1 info keys: communicator assertions returned, mpi_minimum_memory_alignment honoured" {
    local exe
    exe=$(prog info_keys)
    run plaunch -n 2 "$exe"
    expect_ok
}

# The Fortran binding of the partitioned calls (module mpi, built by tmpif90).
@test "partitioned: Psend_init, Precv_init, Pready_range and Parrived from Fortran (use mpi)" {
    command -v gfortran >/dev/null || skip "no gfortran"
    [ -f "$TMPI_BUILD/libclient/fortran/libtmpi_fortran.a" ] || skip "the build has no Fortran bindings"
    local exe="$BATS_FILE_TMPDIR/partitioned_f"
    (cd "$BATS_FILE_TMPDIR" && "$TMPI_BUILD/launcher/tmpif90" -o "$exe" "$BATS_TEST_DIRNAME/progs/partitioned_f.f90")
    run plaunch -n 2 "$exe"
    expect_ok
}
