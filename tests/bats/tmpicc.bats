#!/usr/bin/env bats
# tmpicc and tmpicxx: the wrapper options (-show, -showme:*, --version), never running
# themselves (safe as CC), C++ programs, and real projects built by autotools
# (CC=tmpicc ./configure && make) and CMake (find_package(MPI)) in tests/bats/projects/.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    # No test may reach the system agent by accident: jobs run on a private agent.
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID TMPI_CC TMPI_CXX
    WRAP="$TMPI_BUILD/launcher"
    export PATH="$WRAP:$PATH"
}

# expect_output TEXT: the whole output is TEXT.
expect_output() {
    if [ "$output" != "$1" ]; then
        echo "expected: $1" >&2
        echo "got:      $output" >&2
        return 1
    fi
}

@test "tmpicc -showme:compile, :link, :incdirs, :libdirs, :libs, :command" {
    # a sanitizer build tree's wrapper adds that build's -fsanitize to both (make sanitize)
    local san sanlibs
    san=$(sed -n 's/^TMPI_SANFLAGS="\(.*\)"$/\1/p' "$WRAP/tmpicc")
    sanlibs=$(sed -n 's/^TMPI_SANLIBS="\(.*\)"$/\1/p' "$WRAP/tmpicc")
    run --separate-stderr tmpicc -showme:compile
    expect_status 0
    expect_output "-fPIC -fno-semantic-interposition -pthread${san:+ $san} -I$TMPI_SRC/libclient/include"
    run --separate-stderr tmpicc --showme:link
    expect_status 0
    [[ "$output" == "-shared -Wl,-z,defs "*" -L$TMPI_BUILD/libclient -ltmpi_module "*" -ltmpi -lm${san:+ $san}${sanlibs:+ $sanlibs}" ]] ||
        { echo "link flags: $output" >&2; return 1; }
    run tmpicc --showme:incdirs
    expect_output "$TMPI_SRC/libclient/include"
    run tmpicc -showme:libdirs
    expect_output "$TMPI_BUILD/libclient"
    run tmpicc -showme:libs
    expect_output "tmpi_module tmpi m"
    run tmpicc -showme:command
    [ -n "$output" ] && [ "$output" != tmpicc ] || { echo "command: $output" >&2; return 1; }
    run --separate-stderr tmpicc -showme:everything
    expect_status 2
    [[ "$stderr" == *"unknown option -showme:everything"* ]] || { echo "got: $stderr" >&2; return 1; }
}

@test "tmpicc -show and -showme print the whole command; -compile-info and -link-info" {
    local cc
    cc=$(tmpicc -showme:command)
    # a link that builds a program asks for main; one that builds a library (-shared) does not
    local needmain
    needmain=$(sed -n 's/^needmain="\(.*\)"$/\1/p' "$WRAP/tmpicc")
    [ -n "$needmain" ] || { echo "no needmain= line in $WRAP/tmpicc" >&2; return 1; }
    run tmpicc -show -O2 -o app app.c
    expect_output "$cc $(tmpicc -showme:compile) -O2 -o app app.c $(tmpicc -showme:link) $needmain"
    run tmpicc -show -shared -o libx.so x.o
    expect_output "$cc $(tmpicc -showme:compile) -shared -o libx.so x.o $(tmpicc -showme:link)"
    run tmpicc -O2 -c x.c --showme
    expect_output "$cc $(tmpicc -showme:compile) -O2 -c x.c "
    run tmpicc -compile-info
    expect_output "$cc $(tmpicc -showme:compile)"
    run tmpicc -link-info
    expect_output "$cc $(tmpicc -showme:compile) $(tmpicc -showme:link)"
}

@test "tmpicc --version: the compiler's text, then TMPI's line" {
    local version
    version=$(sed -n "s/^  version: '\(.*\)',$/\1/p" "$TMPI_SRC/meson.build")
    run tmpicc --version
    expect_status 0
    [ "${lines[-1]}" = "tmpicc (TMPI) $version" ] || { echo "last line: ${lines[-1]}" >&2; return 1; }
    [ "${lines[0]}" = "$("$(tmpicc -showme:command)" --version | head -1)" ] ||
        { echo "first line: ${lines[0]}" >&2; return 1; }
    run tmpicxx --version
    [ "${lines[-1]}" = "tmpicxx (TMPI) $version" ] || { echo "last line: ${lines[-1]}" >&2; return 1; }
}

@test "tmpicc is safe as CC: \$CC is not read, a compiler that is a wrapper is refused" {
    local src="$TMPI_SRC/examples/hello.c" out="$BATS_TEST_TMPDIR/hello"
    # CC names tmpicc itself (as in CC=tmpicc make): ignored, the configured compiler runs
    CC="$WRAP/tmpicc" run timeout 60 tmpicc -o "$out" "$src"
    expect_status 0
    [ -x "$out" ] || { echo "no program built" >&2; return 1; }
    # TMPI_CC naming the wrapper: an error at once, not a recursion
    TMPI_CC="$WRAP/tmpicc" run --separate-stderr timeout 20 tmpicc -c "$src"
    expect_status 2
    [[ "$stderr" == *"TMPI_CC=$WRAP/tmpicc is tmpicc itself"* ]] || { echo "got: $stderr" >&2; return 1; }
    TMPI_CC=tmpicxx run --separate-stderr timeout 20 tmpicc -c "$src"
    expect_status 2
    [[ "$stderr" == *"is a TMPI wrapper"* ]] || { echo "got: $stderr" >&2; return 1; }
    # a compiler script that calls back into the wrapper is caught on the way back in
    printf '#!/bin/sh\nexec tmpicc "$@"\n' >"$BATS_TEST_TMPDIR/mycc"
    chmod +x "$BATS_TEST_TMPDIR/mycc"
    TMPI_CC="$BATS_TEST_TMPDIR/mycc" run --separate-stderr timeout 20 tmpicc -c "$src"
    expect_status 2
    [[ "$stderr" == *"the compiler run by tmpicc started tmpicc again"* ]] ||
        { echo "got: $stderr" >&2; return 1; }
}

@test "tmpicc: options alone go to the compiler and link nothing" {
    cd "$BATS_TEST_TMPDIR"
    run tmpicc -dumpversion
    expect_status 0
    expect_output "$("$(tmpicc -showme:command)" -dumpversion)"
    run tmpicc -v
    expect_status 0
    [ ! -e a.out ] || { echo "tmpicc -v linked a.out" >&2; return 1; }
    run --separate-stderr tmpicc
    expect_status 2
    [[ "$stderr" == *"no input files"* ]] || { echo "got: $stderr" >&2; return 1; }
}

@test "tmpicc: a build system's -fPIE (CMake's POSITION_INDEPENDENT_CODE) still links a module" {
    need_agent
    cd "$BATS_TEST_TMPDIR"
    printf '#include <mpi.h>\n#include <stdio.h>\nstatic int calls;\nint main(void)\n{\n    MPI_Init(NULL, NULL);\n    calls++;\n    int r;\n    MPI_Comm_rank(MPI_COMM_WORLD, &r);\n    if (r == 0) fprintf(stdout, "pie %%d\\n", calls); /* stdout: data of another object */\n    MPI_Finalize();\n    return 0;\n}\n' >pie.c
    run tmpicc -show -fPIE -c pie.c
    [[ "$output" == *"-fPIE -c pie.c -fPIC"* ]] || { echo "got: $output" >&2; return 1; }
    run tmpicc -fPIE -O2 -c pie.c -o pie.o
    expect_status 0
    run tmpicc -fPIE pie.o -o pie
    expect_status 0
    run timeout 60 "$LAUNCH_BIN" -n 2 ./pie
    expect_status 0
    expect_output "pie 1"
}

@test "tmpicxx builds a C++ program that runs on 3 ranks" {
    need_agent
    cat >"$BATS_TEST_TMPDIR/vec.cc" <<'EOF'
#include <mpi.h>
#include <cstdio>
#include <vector>
// A global with a constructor: each rank has its own copy, built when the rank's copy loads.
static std::vector<int> seen(1, -1);
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    seen.push_back(rank);
    int mine = static_cast<int>(seen.size()) + rank;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf(sum == 2 * size + size * (size - 1) / 2 ? "OK\n" : "bad sum %d\n", sum);
    MPI_Finalize();
    return 0;
}
EOF
    run tmpicxx -o "$BATS_TEST_TMPDIR/vec" "$BATS_TEST_TMPDIR/vec.cc"
    expect_status 0
    run timeout 60 "$LAUNCH_BIN" -n 3 "$BATS_TEST_TMPDIR/vec"
    expect_status 0
    expect_output OK
}

@test "autotools project: CC=tmpicc ./configure && make, then it runs" {
    need_agent
    command -v autoreconf >/dev/null && command -v automake >/dev/null ||
        skip "autoconf/automake are not installed (tools/install-deps.sh)"
    local proj="$BATS_TEST_TMPDIR/autotools"
    cp -r "$TMPI_SRC/tests/bats/projects/autotools" "$TMPI_SRC/tests/bats/projects/common" \
        "$BATS_TEST_TMPDIR/"
    cd "$proj"
    run autoreconf -i
    expect_status 0
    # configure runs a test program too ("are we cross compiling?"): a module run directly
    CC=tmpicc run timeout 300 ./configure
    expect_status 0
    expect_line "checking for MPI_Init... yes"
    expect_line "checking for tmpi_no_such_function... no"
    expect_line "checking whether we are cross compiling... no"
    run timeout 300 make
    expect_status 0
    run timeout 60 "$LAUNCH_BIN" -n 3 ./ring
    expect_status 0
    expect_line "ring of 3 ranks"
    expect_line OK
    run timeout 60 "$LAUNCH_BIN" -n 3 ./rank_globals
    expect_status 0
    expect_line "3 ranks, each with its own globals"
}

@test "CMake project: find_package(MPI) with tmpicc, run through MPIEXEC_EXECUTABLE" {
    need_agent
    command -v cmake >/dev/null || skip "cmake is not installed"
    local b="$BATS_TEST_TMPDIR/cmake"
    run timeout 300 cmake -S "$TMPI_SRC/tests/bats/projects/cmake" -B "$b" \
        -DCMAKE_C_COMPILER="$WRAP/tmpicc" -DMPI_C_COMPILER="$WRAP/tmpicc" \
        -DMPIEXEC_EXECUTABLE="$WRAP/tmpi-launch"
    expect_status 0
    expect_line "-- TMPI-CHECK compiler=$WRAP/tmpicc version=4.1"
    expect_line "-- TMPI-CHECK mpiexec=$WRAP/tmpi-launch -n"
    run timeout 300 cmake --build "$b"
    expect_status 0
    cd "$b"
    run timeout 120 ctest --output-on-failure
    expect_status 0
    [[ "$output" == *"100% tests passed"* ]] || { echo "$output" >&2; return 1; }
}

@test "CMake: FindMPI reads tmpicc's -showme:compile and -showme:link" {
    command -v cmake >/dev/null || skip "cmake is not installed"
    local b="$BATS_TEST_TMPDIR/cmake-interrogate"
    # only MPI_C_COMPILER: FindMPI asks the wrapper for its flags (the C compiler stays cc)
    run timeout 300 cmake -S "$TMPI_SRC/tests/bats/projects/cmake" -B "$b" \
        -DMPI_C_COMPILER="$WRAP/tmpicc" -DMPIEXEC_EXECUTABLE="$WRAP/tmpi-launch"
    expect_status 0
    expect_line "-- TMPI-CHECK include=$TMPI_SRC/libclient/include"
    local want="-- TMPI-CHECK libraries=$TMPI_BUILD/libclient/libtmpi_module.a;$TMPI_BUILD/libclient/libtmpi.so;"
    grep -qF -- "$want" <<<"$output" || { echo "expected a line starting: $want; got:" >&2; echo "$output" >&2; return 1; }
}
