#!/usr/bin/env bats
# MPI 4.1 behaviour outside tests/mpi: erroneous programs the standard leaves to the
# implementation that must still end cleanly.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

# Every run: exit status 1, the error names MPI_Finalize and the waiting rank's call, no
# signal.  Repeated: the crash it replaces came in 2 runs of 4.
finalize_early() {
    local exe=$1 n=$2 what=$3 call=$4 i
    shift 4
    for i in 1 2 3 4 5 6; do
        run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" "$@" -n "$n" "$exe" "$what"
        if [ "$status" -ne 1 ] || [[ "$output" == *signal* ]] ||
            [[ "$output" != *"rank 0 called MPI_Finalize while rank "*" waits in $call"* ]]; then
            echo "run $i, $n ranks, $what $*: status $status"
            echo "$output"
            return 1
        fi
    done
}

@test "mpi41: MPI_Finalize while peers wait in MPI_Allreduce or MPI_Bcast ends the job with an error naming both, threads and carriers" {
    local exe
    exe=$(prog finalize_early)
    finalize_early "$exe" 2 allreduce MPI_Allreduce
    finalize_early "$exe" 4 allreduce MPI_Allreduce
    finalize_early "$exe" 3 bcast MPI_Bcast
    finalize_early "$exe" 4 allreduce MPI_Allreduce -x TMPI_RANK_SWITCHING=user
    finalize_early "$exe" 3 bcast MPI_Bcast -x TMPI_RANK_SWITCHING=user
}
