#!/usr/bin/env bats
# The Fortran bindings (docs/FORTRAN.md): mpif.h from fixed form, module mpi and module
# mpi_f08 from free form (tests/fortran/), built with gfortran against the build tree's
# libtmpi_fortran.a, run on 2 to 4 ranks on one agent and across two agents.

bats_require_minimum_version 1.5.0
load helpers

FDIR="$TMPI_BUILD/libclient/fortran"

setup() {
    command -v gfortran >/dev/null || skip "no gfortran"
    [ -f "$FDIR/libtmpi_fortran.a" ] || skip "the build has no Fortran bindings"
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

teardown() { stop_all_agents; }

# fprog NAME: tests/fortran/NAME.f or .f90 built once per file (tmpicc's link line with
# libtmpi_fortran before libtmpi); prints its path.  mpif.h programs pass buffers of
# several types to one routine, which gfortran accepts with -fallow-argument-mismatch.
fprog() {
    local name=$1 out="$BATS_FILE_TMPDIR/f_$1" src
    src=$(ls "$TMPI_SRC/tests/fortran/$name".f* | head -1)
    if [ ! -x "$out" ]; then
        local link
        link=$(tmpicc -showme:link)
        # shellcheck disable=SC2086 # the link line, split
        gfortran -fPIC -fallow-argument-mismatch -w -I"$FDIR" -J"$BATS_FILE_TMPDIR" \
            -o "$out" "$src" ${link/ -ltmpi / -L$FDIR -ltmpi_fortran -ltmpi } -lgfortran >&2 ||
            return 1
    fi
    echo "$out"
}

# run_f NAME LINE N...: each run exits 0 and prints "LINE N".
run_f() {
    local name=$1 want=$2 exe n
    shift 2
    exe=$(fprog "$name")
    for n in "$@"; do
        # shellcheck disable=SC2086 # LAUNCH_ARGS: tmpi-launch's own options, split
        run timeout 120 "$LAUNCH_BIN" ${LAUNCH_ARGS:-} -n "$n" "$exe"
        if [ "$status" -ne 0 ] || [[ "$output" != *"$want $n"* ]] || [[ "$output" == *Sanitizer* ]]; then
            echo "$name on $n ranks: status $status"
            echo "$output"
            return 1
        fi
    done
}

@test "fortran: mpif.h from fixed form (p2p, statuses, STATUS_IGNORE, LOGICAL LAND, strings)" {
    run_f f77_basic "f77 ok" 2 4
}

@test "fortran: module mpi (Waitany index, 2REAL MINLOC, 2INTEGER, IN_PLACE, info strings)" {
    run_f f90_use_mpi "use mpi ok" 2 3
}

@test "fortran: module mpi_f08 (types, operators, reductions, callbacks, attributes, RMA, errors)" {
    run_f f08_bindings "f08 ok" 2 4
}

@test "fortran: mpi_f08 with ranks on carriers (user-level switching)" {
    LAUNCH_ARGS="-x TMPI_RANK_SWITCHING=user" run_f f08_bindings "f08 ok" 4
}

# bats test_tags=multinode
@test "fortran: mpi_f08 program across two agents" {
    start_cluster 2
    local exe
    exe=$(fprog f08_bindings)
    run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe"
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    [[ "$output" == *"f08 ok 4"* ]] || { echo "output: $output"; return 1; }
}

@test "fortran: mpif.h lines fit fixed form (72 columns, no continuation)" {
    run awk 'length > 72 { print FILENAME ":" FNR ": " $0 }' "$FDIR/mpif.h"
    [ "$status" -eq 0 ] && [ -z "$output" ]
    gfortran -ffixed-form -fsyntax-only -I"$FDIR" -x f77 - <<<"      INCLUDE 'mpif.h'
      END"
    gfortran -ffree-form -fsyntax-only -I"$FDIR" -x f95 - <<<"include 'mpif.h'
end"
}

@test "fortran: module mpi has explicit interfaces (a call missing ierror does not compile)" {
    cd "$BATS_TEST_TMPDIR"
    printf 'program p\n  use mpi\n  integer :: r, ierr\n  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)\nend program\n' >ok.f90
    gfortran -fsyntax-only -I"$FDIR" ok.f90
    printf 'program p\n  use mpi\n  integer :: r\n  call MPI_Comm_rank(MPI_COMM_WORLD, r)\nend program\n' >bad.f90
    run gfortran -fsyntax-only -I"$FDIR" bad.f90
    [ "$status" -ne 0 ] && [[ "$output" == *ierror* ]]
}
