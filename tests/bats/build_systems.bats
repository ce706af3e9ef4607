#!/usr/bin/env bats
# Programs built the ways users build them run as TMPI ranks, each rank with its own globals:
# tmpicc -o (main in the sources, or in a static library), a Makefile with pkg-config tmpi,
# Meson's dependency('mpi') (through pkg-config or the config tool), CMake's find_package(MPI)
# with MPI::MPI_C (MPI_HOME, or MPI_C_COMPILER).  All but tmpicc's link make ordinary
# position-independent executables.  Every project builds tests/bats/projects/common/
# rank_globals.c and runs it on 3 ranks.  The autotools project is in tmpicc.bats.  Also: the
# MPI home (libdir/tmpi) and the .pc files as installed.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    # No test may reach the system agent by accident: jobs run on a private agent.
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID TMPI_CC TMPI_CXX MPICC MPI_HOME CC CFLAGS LDFLAGS
    PROJECTS="$TMPI_SRC/tests/bats/projects"
    # The build tree's MPI home, as libdir/tmpi is installed (packaging/meson.build).
    HOME_DIR="$TMPI_BUILD/packaging/tmpi"
    export PKG_CONFIG_PATH="$HOME_DIR/pkgconfig"
}

# expect_output TEXT: the whole output is TEXT.
expect_output() {
    if [ "$output" != "$1" ]; then
        echo "expected: $1" >&2
        echo "got:      $output" >&2
        return 1
    fi
}

# copy_project NAME: the project and the sources it shares, into the test's directory.
copy_project() {
    cp -r "$PROJECTS/$1" "$PROJECTS/common" "$BATS_TEST_TMPDIR/"
    echo "$BATS_TEST_TMPDIR/$1"
}

# run_globals PROGRAM: on 3 ranks, each rank with its own globals.
run_globals() {
    need_agent
    run timeout 60 "$LAUNCH_BIN" -n 3 "$1"
    expect_status 0
    expect_line "3 ranks, each with its own globals"
    expect_line OK
}

# expect_pie FILE: a position-independent executable that exports main.
expect_pie() {
    readelf -h "$1" | grep -q 'Type: *DYN' || { readelf -h "$1" >&2; return 1; }
    readelf -l "$1" | grep -q 'INTERP' || { echo "$1 has no program interpreter" >&2; return 1; }
    nm -D --defined-only "$1" | grep -qw main || { echo "$1 does not export main" >&2; return 1; }
}

@test "tmpicc -o: the program runs on 3 ranks, each with its own globals" {
    local c=$PROJECTS/common
    run tmpicc -I"$c" -o "$BATS_TEST_TMPDIR/app" "$c/rank_globals.c" "$c/counter.c"
    expect_status 0
    run_globals "$BATS_TEST_TMPDIR/app"
}

@test "tmpicc: main in a static library is found at link time (HPCC's libhpl.a)" {
    local c=$PROJECTS/common d=$BATS_TEST_TMPDIR
    tmpicc -I"$c" -c -o "$d/rank_globals.o" "$c/rank_globals.c"
    tmpicc -I"$c" -c -o "$d/counter.o" "$c/counter.c"
    ar rcs "$d/libmain.a" "$d/rank_globals.o"
    # nothing on the command line itself defines main
    run tmpicc -o "$d/app" "$d/counter.o" -L"$d" -lmain
    expect_status 0
    nm -D --defined-only "$d/app" | grep -qw main || { echo "main was not linked in" >&2; return 1; }
    run_globals "$d/app"
}

@test "tmpicc: a program without main fails to link, naming main; a library (-shared) links" {
    local d=$BATS_TEST_TMPDIR
    printf 'int helper(void) { return 1; }\n' >"$d/helper.c"
    run tmpicc -o "$d/app" "$d/helper.c"
    [ "$status" -ne 0 ] || { echo "linked without main" >&2; return 1; }
    [[ "$output" == *"main"* ]] || { echo "main not named: $output" >&2; return 1; }
    [ ! -e "$d/app" ]
    run tmpicc -shared -o "$d/libhelper.so" "$d/helper.c"
    expect_status 0
    [ -f "$d/libhelper.so" ]
}

@test "a PIE linked with a bare -ltmpi exports main (libtmpi refers to it), as the agent needs" {
    local d=$BATS_TEST_TMPDIR
    printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); return MPI_Finalize(); }\n' \
        >"$d/bare.c"
    cc -I"$TMPI_SRC/libclient/include" -o "$d/bare" "$d/bare.c" -L"$TMPI_BUILD/libclient" -ltmpi
    expect_pie "$d/bare"
    # without libtmpi the same program keeps main to itself: the export is libtmpi's doing
    printf 'int main(void) { return 0; }\n' >"$d/plain.c"
    cc -o "$d/plain" "$d/plain.c"
    if nm -D --defined-only "$d/plain" | grep -qw main; then
        echo "cc exports main from every PIE here: the test proves nothing" >&2
        return 1
    fi
}

@test "pkg-config tmpi: a Makefile with the ordinary cc builds a PIE that runs on 3 ranks" {
    command -v pkg-config >/dev/null || skip "pkg-config is not installed (tools/install-deps.sh)"
    command -v make >/dev/null || skip "make is not installed"
    local p
    p=$(copy_project make)
    run timeout 120 make -C "$p" CC=cc
    expect_status 0
    # the ordinary compiler, not the wrapper
    [[ "$output" == *"cc "*"-I$TMPI_SRC/libclient/include"* ]] || { echo "$output" >&2; return 1; }
    [[ "$output" != *tmpicc* ]] || { echo "the wrapper ran: $output" >&2; return 1; }
    expect_pie "$p/rank_globals"
    run_globals "$p/rank_globals"
}

@test "pkg-config: the MPI home's aliases (ompi-c, mpi, ...) are tmpi.pc; mpi_home names it" {
    command -v pkg-config >/dev/null || skip "pkg-config is not installed (tools/install-deps.sh)"
    local want name
    want=$(pkg-config --cflags --libs tmpi)
    [[ "$want" == *"-I$TMPI_SRC/libclient/include"*"-ltmpi_module -ltmpi"* ]] ||
        { echo "tmpi.pc: $want" >&2; return 1; }
    for name in ompi-c ompi-cxx mpi mpi-c mpi-cxx; do
        run pkg-config --cflags --libs "$name"
        expect_status 0
        [ "$output" = "$want" ] || { echo "$name: $output; tmpi: $want" >&2; return 1; }
    done
    run pkg-config --variable=mpi_home tmpi
    expect_output "$HOME_DIR"
    [ "$(readlink -f "$HOME_DIR/bin/mpicc")" = "$(readlink -f "$TMPI_BUILD/launcher/tmpicc")" ]
    [ "$(readlink -f "$HOME_DIR/bin/mpiexec")" = "$(readlink -f "$LAUNCH_BIN")" ]
}

@test "install: tmpi.pc where pkg-config looks; mpicc, mpiexec, ompi-c.pc only in libdir/tmpi" {
    command -v meson >/dev/null || skip "meson is not installed"
    local root="$BATS_TEST_TMPDIR/root" prefix libdir bindir
    run meson install -C "$TMPI_BUILD" --no-rebuild --destdir "$root"
    expect_status 0
    prefix=$(meson introspect --buildoptions "$TMPI_BUILD" |
        python3 -c 'import json,sys; o={x["name"]: x["value"] for x in json.load(sys.stdin)}; print(o["prefix"], o["libdir"], o["bindir"])')
    read -r prefix libdir bindir <<<"$prefix"
    local lib="$root$prefix/$libdir" bin="$root$prefix/$bindir"
    [ -f "$lib/pkgconfig/tmpi.pc" ]
    # the generic names would take an installed MPI's place: none where builds look by default
    local f
    for f in "$bin/mpicc" "$bin/mpiexec" "$bin/mpirun" "$lib/pkgconfig/mpi.pc" \
        "$lib/pkgconfig/ompi-c.pc" "$lib/pkgconfig/mpi-c.pc"; do
        [ ! -e "$f" ] && [ ! -L "$f" ] || { echo "installed $f" >&2; return 1; }
    done
    for f in ompi-c ompi-cxx mpi mpi-c mpi-cxx; do
        [ -f "$lib/tmpi/pkgconfig/$f.pc" ] || { echo "no $f.pc in $lib/tmpi/pkgconfig" >&2; return 1; }
    done
    # relative links into bindir, so they survive DESTDIR and relocation
    local link target
    for link in mpicc:tmpicc mpicxx:tmpicxx mpic++:tmpicxx mpiexec:tmpi-launch mpirun:tmpi-launch; do
        target=$(readlink "$lib/tmpi/bin/${link%%:*}")
        [[ "$target" == ../* ]] || { echo "${link%%:*} -> $target is not relative" >&2; return 1; }
        [ "$(readlink -f "$lib/tmpi/bin/${link%%:*}")" = "$(readlink -f "$bin/${link#*:}")" ] ||
            { echo "${link%%:*} -> $target, not $bin/${link#*:}" >&2; return 1; }
    done
    # the installed tmpi.pc: the installed directories, the entry point and main exported
    PKG_CONFIG_PATH="$lib/pkgconfig" run pkg-config --define-prefix --cflags --libs tmpi
    expect_status 0
    [[ "$output" == *"-I$root$prefix/include/tmpi"* ]] || { echo "$output" >&2; return 1; }
    [[ "$output" == *"-Wl,-e,tmpi_module_entry"*"-ltmpi_module -ltmpi"* ]] ||
        { echo "$output" >&2; return 1; }
    PKG_CONFIG_PATH="$lib/pkgconfig" run pkg-config --variable=mpi_home tmpi
    expect_output "$prefix/$libdir/tmpi"
}

@test "Meson: dependency('mpi') with the MPI home first in PKG_CONFIG_PATH and PATH" {
    command -v meson >/dev/null || skip "meson is not installed (tools/install-deps.sh)"
    command -v pkg-config >/dev/null || skip "pkg-config is not installed (tools/install-deps.sh)"
    local p
    p=$(copy_project meson)
    # docs/USER.md's line: Meson 1.0 asks pkg-config for ompi-c first, later releases mpicc
    PATH="$HOME_DIR/bin:$PATH" CC=cc run timeout 300 meson setup "$p/build" "$p"
    expect_status 0
    [[ "$output" == *"Run-time dependency MPI for c found: YES 0.1.0"* ]] ||
        { echo "TMPI (0.1.0) not found: $output" >&2; return 1; }
    run timeout 300 ninja -C "$p/build"
    expect_status 0
    expect_pie "$p/build/rank_globals"
    readelf -d "$p/build/rank_globals" | grep -qF '[libtmpi.so.0]' ||
        { echo "not linked with libtmpi" >&2; return 1; }
    run_globals "$p/build/rank_globals"
}

@test "Meson: dependency('mpi') through the config tool: MPICC=tmpicc, no ompi-c.pc" {
    command -v meson >/dev/null || skip "meson is not installed (tools/install-deps.sh)"
    # An installed Open MPI's ompi-c.pc would be taken first (Meson 1.0): pkg-config looks in
    # an empty directory only, as on a machine without it.  Meson also tries mpicc from PATH
    # and keeps the highest version: the MPI home's mpicc comes first, as another MPI's mpicc
    # would win.
    unset PKG_CONFIG_PATH
    mkdir "$BATS_TEST_TMPDIR/no-pc"
    local p
    p=$(copy_project meson)
    PATH="$HOME_DIR/bin:$PATH" PKG_CONFIG_LIBDIR="$BATS_TEST_TMPDIR/no-pc" CC=cc \
        MPICC="$TMPI_BUILD/launcher/tmpicc" run timeout 300 meson setup "$p/build" "$p"
    expect_status 0
    expect_line "$TMPI_BUILD/launcher/tmpicc found: YES ($TMPI_BUILD/launcher/tmpicc) 0.1.0"
    run timeout 300 ninja -C "$p/build"
    expect_status 0
    expect_pie "$p/build/rank_globals"
    run_globals "$p/build/rank_globals"
}

@test "CMake: -DMPI_HOME=libdir/tmpi finds mpicc and mpiexec; MPI::MPI_C and MPI_C_LIBRARIES programs run on 3 ranks" {
    need_agent
    command -v cmake >/dev/null || skip "cmake is not installed (tools/install-deps.sh)"
    local b="$BATS_TEST_TMPDIR/cmake"
    # no compiler given: the ordinary cc builds, FindMPI interrogates the home's mpicc
    run timeout 300 cmake -S "$PROJECTS/cmake" -B "$b" -DMPI_HOME="$HOME_DIR"
    expect_status 0
    expect_line "-- TMPI-CHECK compiler=$HOME_DIR/bin/mpicc version=4.1"
    expect_line "-- TMPI-CHECK mpiexec=$HOME_DIR/bin/mpiexec -n"
    run timeout 300 cmake --build "$b"
    expect_status 0
    expect_pie "$b/rank_globals"
    expect_pie "$b/rank_globals_vars"
    cd "$b"
    run timeout 120 ctest --output-on-failure
    expect_status 0
    [[ "$output" == *"100% tests passed, 0 tests failed out of 3"* ]] || { echo "$output" >&2; return 1; }
}

@test "CMake: -DMPI_C_COMPILER=tmpicc alone, the MPI home's bin in PATH: mpiexec is tmpi-launch" {
    need_agent
    command -v cmake >/dev/null || skip "cmake is not installed (tools/install-deps.sh)"
    local b="$BATS_TEST_TMPDIR/cmake"
    PATH="$HOME_DIR/bin:$PATH" run timeout 300 cmake -S "$PROJECTS/cmake" -B "$b" \
        -DMPI_C_COMPILER="$TMPI_BUILD/launcher/tmpicc"
    expect_status 0
    expect_line "-- TMPI-CHECK compiler=$TMPI_BUILD/launcher/tmpicc version=4.1"
    expect_line "-- TMPI-CHECK mpiexec=$HOME_DIR/bin/mpiexec -n"
    run timeout 300 cmake --build "$b"
    expect_status 0
    expect_pie "$b/rank_globals"
    run_globals "$b/rank_globals"
}
