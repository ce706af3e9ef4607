#!/usr/bin/env bats
# tmpif77, tmpif90 and tmpifort (one program under three names, as mpif77/mpif90/mpifort):
# the wrapper options (-show, -showme:*, --version) with the module directory and
# libtmpi_fortran, TMPI_FC, never running themselves, and Fortran programs built and run.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID TMPI_CC TMPI_CXX TMPI_FC
    WRAP="$TMPI_BUILD/launcher"
    export PATH="$WRAP:$PATH"
    FMOD="$TMPI_BUILD/libclient/fortran"
}

expect_output() {
    if [ "$output" != "$1" ]; then
        echo "expected: $1" >&2
        echo "got:      $output" >&2
        return 1
    fi
}

# Programs that call MPI need the bindings (libtmpi_fortran.a, mpif.h, mpi.mod).
need_bindings() {
    [ -f "$FMOD/libtmpi_fortran.a" ] || skip "the Fortran bindings are not built"
}

@test "tmpif90 -showme:compile, :link, :incdirs, :libdirs, :libs name the module directory and libtmpi_fortran" {
    local san sanlibs w
    san=$(sed -n 's/^TMPI_SANFLAGS="\(.*\)"$/\1/p' "$WRAP/tmpif90")
    sanlibs=$(sed -n 's/^TMPI_SANLIBS="\(.*\)"$/\1/p' "$WRAP/tmpif90")
    for w in tmpif77 tmpif90 tmpifort; do
        run --separate-stderr "$w" -showme:compile
        expect_status 0
        expect_output "-fPIC -fno-semantic-interposition -pthread${san:+ $san} -I$TMPI_SRC/libclient/include -I$FMOD"
        run --separate-stderr "$w" -showme:link
        expect_status 0
        [[ "$output" == "-shared -Wl,-z,defs "*" -ltmpi_module -L$FMOD -ltmpi_fortran -L$TMPI_BUILD/libclient "*" -ltmpi -lm${san:+ $san}${sanlibs:+ $sanlibs}" ]] ||
            { echo "$w link flags: $output" >&2; return 1; }
        run "$w" -showme:incdirs
        expect_output "$TMPI_SRC/libclient/include $FMOD"
        run "$w" -showme:libdirs
        expect_output "$FMOD $TMPI_BUILD/libclient"
        run "$w" -showme:libs
        expect_output "tmpi_fortran tmpi_module tmpi m"
        run "$w" -showme:version
        expect_output "$w: TMPI $(sed -n "s/^  version: '\(.*\)',$/\1/p" "$TMPI_SRC/meson.build")"
    done
    # the C wrapper names no Fortran directory
    run tmpicc -showme:libs
    expect_output "tmpi_module tmpi m"
}

@test "tmpif90 -show prints the whole command; TMPI_FC chooses the compiler" {
    local fc needmain
    fc=$(tmpif90 -showme:command)
    needmain=$(sed -n 's/^needmain="\(.*\)"$/\1/p' "$WRAP/tmpif90")
    run tmpif90 -show -O2 -o app app.f90
    expect_output "$fc $(tmpif90 -showme:compile) -O2 -o app app.f90 $(tmpif90 -showme:link) $needmain"
    run tmpif77 -showme -c x.f
    expect_output "$fc $(tmpif77 -showme:compile) -c x.f "
    run tmpifort -link-info
    expect_output "$fc $(tmpifort -showme:compile) $(tmpifort -showme:link)"
    TMPI_FC="/opt/other/bin/gfortran-13 -m64" run tmpif90 -show -c x.f90
    expect_output "/opt/other/bin/gfortran-13 -m64 $(tmpif90 -showme:compile) -c x.f90 "
    TMPI_FC=flang run tmpif90 -showme:command
    expect_output flang
    # TMPI_FMODDIR moves the module directory, as TMPI_INCDIR moves mpi.h's
    TMPI_FMODDIR=/opt/mods run tmpif90 -showme:compile
    [[ "$output" == *" -I/opt/mods" ]] || { echo "got: $output" >&2; return 1; }
}

@test "tmpif90 --version: the compiler's text, then TMPI's line" {
    run tmpif90 --version
    expect_status 0
    [[ "${lines[-1]}" == "tmpif90 (TMPI) "* ]] || { echo "last line: ${lines[-1]}" >&2; return 1; }
    [[ "${lines[0]}" == "GNU Fortran"* ]] || { echo "first line: ${lines[0]}" >&2; return 1; }
}

@test "tmpif90 never runs itself: TMPI_FC naming a TMPI wrapper is refused" {
    local w
    for w in tmpif90 tmpif77 tmpifort tmpicc; do
        TMPI_FC=$w run --separate-stderr tmpif90 -c x.f90
        expect_status 2
        [[ "$stderr" == *"TMPI_FC=$w is"* ]] || { echo "$w: $stderr" >&2; return 1; }
    done
}

@test "tmpif90 -c compiles a Fortran source into a position-independent object" {
    command -v gfortran >/dev/null || skip "no gfortran"
    cd "$BATS_TEST_TMPDIR"
    printf 'subroutine s(x)\n  real :: x\n  x = 2 * x\nend subroutine\n' >s.f90
    run tmpif90 -c s.f90
    expect_status 0
    [ -f s.o ]
    # fixed form through tmpif77
    printf '      SUBROUTINE T(X)\n      X = X + 1\n      END\n' >t.f
    run tmpif77 -c t.f
    expect_status 0
    [ -f t.o ]
}

@test "tmpif90 builds a program with use mpi and mpif.h that tmpi-launch runs" {
    need_bindings
    need_agent
    cd "$BATS_TEST_TMPDIR"
    cat >hello.f90 <<'F'
program hello
  use mpi
  implicit none
  integer :: ierr, me, n
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  print '(a,i0,a,i0)', 'hello from ', me, ' of ', n
  call MPI_Finalize(ierr)
end program
F
    cat >hello77.f <<'F'
      PROGRAM HELLO
      INCLUDE 'mpif.h'
      INTEGER IERR, ME
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, ME, IERR)
      PRINT '(A,I0)', 'F77 RANK ', ME
      CALL MPI_FINALIZE(IERR)
      END
F
    run tmpif90 -o hello hello.f90
    expect_status 0
    run tmpif77 -o hello77 hello77.f
    expect_status 0
    run timeout 60 "$LAUNCH_BIN" -n 3 ./hello
    expect_status 0
    expect_line "hello from 2 of 3"
    run timeout 60 "$LAUNCH_BIN" -n 2 ./hello77
    expect_status 0
    expect_line "F77 RANK 1"
}

@test "CMake: enable_language(Fortran) + find_package(MPI) with -DMPI_HOME finds MPI_Fortran, its header and modules; the program runs" {
    need_bindings
    need_agent
    command -v cmake >/dev/null || skip "cmake is not installed"
    local b="$BATS_TEST_TMPDIR/cmake-fortran" home="$TMPI_BUILD/packaging/tmpi"
    run timeout 300 cmake -S "$TMPI_SRC/tests/bats/projects/cmake-fortran" -B "$b" \
        -DMPI_HOME="$home"
    expect_status 0
    expect_line "-- TMPI-CHECK fortran compiler=$home/bin/mpif90"
    # mpi_f08 is found once the bindings build its module
    local f08=FALSE
    [ ! -f "$FMOD/mpi_f08.mod" ] || f08=TRUE
    expect_line "-- TMPI-CHECK fortran mpif.h=TRUE mpi=TRUE mpi_f08=$f08"
    expect_line "-- TMPI-CHECK fortran modules=$FMOD"
    run timeout 300 cmake --build "$b"
    expect_status 0
    cd "$b"
    run timeout 120 ctest --output-on-failure
    expect_status 0
    [[ "$output" == *"100% tests passed"* ]] || { echo "$output" >&2; return 1; }
}
