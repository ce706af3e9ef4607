#!/usr/bin/env bats
# The Fortran bindings added after the first set (docs/FORTRAN.md): Fortran callbacks of
# generalized requests and data representations, sessions, MPI_Sizeof, MPI_F_sync_reg, the
# mpi_f08 specific procedure names a tool overrides, large-count generics; and that every
# function libtmpi implements gets a binding (fortran-gen says which do not, and why).

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

# fprog NAME: tests/fortran/NAME.f90 built once per file with tmpif90's flags; prints its path.
fprog() {
    local name=$1 out="$BATS_FILE_TMPDIR/f_$1" link
    if [ ! -x "$out" ]; then
        link=$(tmpicc -showme:link)
        # shellcheck disable=SC2086 # the link line, split
        gfortran -fPIC -w -I"$FDIR" -J"$BATS_FILE_TMPDIR" -o "$out" \
            "$TMPI_SRC/tests/fortran/$name.f90" \
            ${link/ -ltmpi / -L$FDIR -ltmpi_fortran -ltmpi } -lgfortran >&2 || return 1
    fi
    echo "$out"
}

# fprog_as OUT NAME FLAGS...: tests/fortran/NAME (a .F90, preprocessed) built with FLAGS as
# OUT once per file; prints its path.
fprog_as() {
    local out="$BATS_FILE_TMPDIR/f_$1" src="$TMPI_SRC/tests/fortran/$2" link
    shift 2
    if [ ! -x "$out" ]; then
        link=$(tmpicc -showme:link)
        # shellcheck disable=SC2086 # the link line, split
        gfortran -fPIC -w "$@" -I"$FDIR" -J"$BATS_FILE_TMPDIR" -o "$out" "$src" \
            ${link/ -ltmpi / -L$FDIR -ltmpi_fortran -ltmpi } -lgfortran >&2 || return 1
    fi
    echo "$out"
}

# run_f NAME LINE N...: run in a directory of the test's own (the programs write files).
run_f() {
    local name=$1 want=$2 exe n
    shift 2
    exe=${FEXE:-$(fprog "$name")}
    cd "$BATS_TEST_TMPDIR"
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

@test "fortran: mpi_f08 callbacks (grequest, datarep, session error handler), sessions, Sizeof, PMPI_X_f08, a tool's MPI_X_f08, large count" {
    run_f f08_extras "f08 extras ok" 2 4
}

@test "fortran: mpi_f08 extras with ranks on carriers (user-level switching)" {
    LAUNCH_ARGS="-x TMPI_RANK_SWITCHING=user" run_f f08_extras "f08 extras ok" 3
}

@test "fortran: module mpi extras (Sizeof over kinds, F_sync_reg, grequest, CONVERSION_FN_NULL, sessions)" {
    run_f f90_extras "f90 extras ok" 1 2
}

# Every function libtmpi implements gets a binding (docs/FORTRAN.md): skipped.txt is empty.
@test "fortran: every function libtmpi implements has a Fortran binding" {
    [ -f "$FDIR/skipped.txt" ]
    run cat "$FDIR/skipped.txt"
    [ -z "$output" ] || { echo "implemented without a Fortran binding:"; echo "$output"; return 1; }
    grep -qx MPI_Status_f2f08 "$FDIR/bound.txt"
    grep -qx MPI_Status_f082f "$FDIR/bound.txt"
    grep -qx MPI_Register_datarep_c "$FDIR/bound.txt"
    grep -qx MPI_Comm_spawn "$FDIR/bound.txt"
    grep -qx MPI_Comm_spawn_multiple "$FDIR/bound.txt"
    grep -qx MPI_Op_create_c "$FDIR/bound.txt"
    grep -qx MPI_Grequest_start "$FDIR/bound.txt"
    grep -qx MPI_Session_get_nth_pset "$FDIR/bound.txt"
    grep -qx MPI_F_sync_reg "$FDIR/bound.txt"
}

# Parents spawn copies of the program (16 slots: the spawns take 7 ranks): the children see
# their parent, their argv through GET_COMMAND_ARGUMENT (argv ended by a blank string, one row
# of spawn_multiple's array_of_argv(count, *) each; MPI_ARGV_NULL, MPI_ARGVS_NULL), MPI_APPNUM,
# print on unit 6, and answer over the inter-communicator; errcodes and MPI_ERRCODES_IGNORE.
@test "fortran: MPI_Comm_spawn and MPI_Comm_spawn_multiple from mpi_f08 (CHARACTER argv arrays, errcodes, a missing program)" {
    LAUNCH_ARGS="-x TMPI_UNIVERSE_SIZE=16" run_f spawn_f08 "spawn f08 ok" 1 2
}

@test "fortran: MPI_Comm_spawn and MPI_Comm_spawn_multiple from mpif.h and from module mpi" {
    FEXE=$(fprog_as spawn_mpif spawn_mpi.F90 -fallow-argument-mismatch) \
        LAUNCH_ARGS="-x TMPI_UNIVERSE_SIZE=16" run_f spawn_mpif "spawn mpif ok" 1 2
    FEXE=$(fprog_as spawn_use_mpi spawn_mpi.F90 -DTMPI_USE_MODULE) \
        LAUNCH_ARGS="-x TMPI_UNIVERSE_SIZE=16" run_f spawn_use_mpi "spawn use mpi ok" 2
}

@test "fortran: fortran-gen warns at build time about a function it cannot bind" {
    cd "$BATS_TEST_TMPDIR"
    # A header whose one defined function takes a parameter of a type no rule carries.
    sed 's/^int PMPI_Barrier(MPI_Comm comm);/int PMPI_Barrier(struct tm_unknown *comm);/' \
        "$TMPI_SRC/libclient/include/mpi.h" >mpi.h
    grep -q 'PMPI_Barrier(struct tm_unknown' mpi.h
    run python3 "$TMPI_SRC/libclient/fortran/gen/fortran-gen" --header mpi.h \
        --lib "$TMPI_BUILD/libclient/libtmpi.so" --outdir out
    [ "$status" -eq 0 ]
    [[ "$output" == *"warning: MPI_Barrier has no Fortran binding"* ]] || { echo "$output"; return 1; }
    grep -q '^MPI_Barrier: ' out/skipped.txt
    if grep -qx MPI_Barrier out/bound.txt; then false; fi
}

@test "fortran: mpi_f08 specific procedures are weak as MPI_X_f08, strong as PMPI_X_f08" {
    run nm "$FDIR/libtmpi_fortran.a"
    [[ "$output" == *" W mpi_send_f08_"* ]] || { echo "no weak mpi_send_f08_"; return 1; }
    [[ "$output" == *" T pmpi_send_f08_"* ]] || { echo "no pmpi_send_f08_"; return 1; }
    [[ "$output" == *" W mpi_send_c_f08_"* ]]
}
