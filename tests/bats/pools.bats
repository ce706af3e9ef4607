#!/usr/bin/env bats
# Thread pools of shared libraries (OpenBLAS, OpenMP) are sized when they load, once per job
# host: the job host sets their variables to the node's CPUs per rank, as a process per rank
# bound to its cores would size them, unless the job sets them itself (job_pools.h).

bats_require_minimum_version 1.5.0
load helpers

@test "pools: a library loading with the job sees one thread per rank when ranks fill the CPUs" {
    need_agent
    local n
    n=$(($(nproc) * 2))
    run timeout 60 "$LAUNCH_BIN" -n "$n" "$(prog pool_env)"
    expect_status 0
    expect_line "at load: OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1"
}

@test "pools: one rank gets the node's CPUs, and the job's own -x value wins" {
    need_agent
    run timeout 60 "$LAUNCH_BIN" -n 1 --bind-to none -x OMP_NUM_THREADS=7 "$(prog pool_env)"
    expect_status 0
    expect_line "at load: OPENBLAS_NUM_THREADS=$(nproc) OMP_NUM_THREADS=7"
}

