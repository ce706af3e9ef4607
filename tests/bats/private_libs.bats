#!/usr/bin/env bats
# A program's own libraries (outside the system's library directories) are copied per rank
# like the program: their globals are the rank's, their constructors run once per rank, a
# library that needs another is bound to the rank's copy of it, and an executable's copy of
# a library's variable is the one the rank's library uses (image_private.h).  What the admin
# (tmpid.conf shared_libraries) or the job (TMPI_SHARED_LIBS) names stays shared.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    local src="$TMPI_SRC/tests/bats/projects/privlib" d="$BATS_FILE_TMPDIR"
    mkdir -p "$d/lib"
    cc -shared -fPIC -o "$d/lib/libcounter.so.1" -Wl,-soname,libcounter.so.1 "$src/counter.c"
    ln -sf libcounter.so.1 "$d/lib/libcounter.so"
    cc -shared -fPIC -o "$d/lib/libtwice.so.1" -Wl,-soname,libtwice.so.1 "$src/twice.c" \
        -L"$d/lib" -lcounter -Wl,-rpath,"$d/lib"
    ln -sf libtwice.so.1 "$d/lib/libtwice.so"
    "$TMPI_BUILD/launcher/tmpicc" -o "$d/so_prog" "$src/uses_counter.c" -L"$d/lib" -ltwice \
        -lcounter -Wl,-rpath,"$d/lib"
    # no run path: found through LD_LIBRARY_PATH only (as a libtool build tree runs its tests)
    "$TMPI_BUILD/launcher/tmpicc" -o "$d/ldpath_prog" "$src/uses_counter.c" -L"$d/lib" -ltwice \
        -lcounter
    # as a CMake or pkg-config build links it: a PIE with copy relocations of counter_*
    local flags
    flags=$("$TMPI_BUILD/launcher/tmpicc" -showme:compile)
    # shellcheck disable=SC2086
    cc $flags -o "$d/pie_prog" "$src/uses_counter.c" -L"$d/lib" -ltwice -lcounter \
        -Wl,-rpath,"$d/lib" $("$TMPI_BUILD/launcher/tmpicc" -showme:link | sed 's/-shared//')
}

@test "private libraries: a tmpicc program's own libraries are the rank's" {
    need_agent
    run timeout 60 "$LAUNCH_BIN" -n 3 "$BATS_FILE_TMPDIR/so_prog"
    expect_status 0
    expect_line PRIVATE
}

# The private agent inherits the launcher's LD_LIBRARY_PATH and the job host's dlopen searches
# it; the ranks' environment has none (not forwarded), and the libraries it finds are still
# the rank's.
@test "private libraries: a library found through the launcher's LD_LIBRARY_PATH is the rank's" {
    need_agent
    LD_LIBRARY_PATH="$BATS_FILE_TMPDIR/lib" run timeout 60 "$LAUNCH_BIN" -n 3 \
        "$BATS_FILE_TMPDIR/ldpath_prog"
    expect_status 0
    expect_line PRIVATE
    # and with the job's own LD_LIBRARY_PATH too
    LD_LIBRARY_PATH="$BATS_FILE_TMPDIR/lib" run timeout 60 "$LAUNCH_BIN" -n 3 -x LD_LIBRARY_PATH \
        "$BATS_FILE_TMPDIR/ldpath_prog"
    expect_status 0
    expect_line PRIVATE
}

@test "private libraries: a PIE's copies of a library's variables are the rank's library's" {
    need_agent
    run timeout 60 "$LAUNCH_BIN" -n 3 "$BATS_FILE_TMPDIR/pie_prog"
    expect_status 0
    expect_line PRIVATE
    # ranks on carriers (user-level switching) too
    run timeout 60 "$LAUNCH_BIN" -n 3 -x TMPI_RANK_SWITCHING=user "$BATS_FILE_TMPDIR/pie_prog"
    expect_status 0
    expect_line PRIVATE
}

@test "private libraries: TMPI_SHARED_LIBS keeps a library shared by the node's ranks" {
    need_agent
    run timeout 60 "$LAUNCH_BIN" -n 3 -x TMPI_SHARED_LIBS=libcounter,libtwice \
        "$BATS_FILE_TMPDIR/so_prog"
    expect_status 0
    expect_line SHARED
}

@test "private libraries: an exported TMPI_SHARED_LIBS is forwarded, and --display-map states the rule" {
    need_agent
    TMPI_SHARED_LIBS=libcounter,libtwice run timeout 60 "$LAUNCH_BIN" -n 3 "$BATS_FILE_TMPDIR/so_prog"
    expect_status 0
    expect_line SHARED
    TMPI_SHARED_LIBS=libcounter run timeout 60 "$LAUNCH_BIN" -n 2 --display-map
    expect_status 0
    [[ "$output" == *"libraries shared by the ranks of a node: those in /lib/"*"libstdc++.so"*"TMPI_SHARED_LIBS: libcounter"* ]] ||
        { echo "$output"; return 1; }
}
