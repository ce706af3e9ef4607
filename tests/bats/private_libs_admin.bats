#!/usr/bin/env bats
# [agent] private_libraries in tmpid.conf: libraries copied per rank beyond the built-in list
# (libgfortran), wherever they are installed, e.g. a site's Fortran runtime under /usr/lib;
# the value is checked when the file is read (lib_list.h), and a job's TMPI_SHARED_LIBS still
# keeps a library shared.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    need_agent
    CONF="$BATS_TEST_TMPDIR/tmpid.conf"
}

teardown() {
    stop_all_agents
    [ -z "${SYSLIB:-}" ] || rm -rf "$SYSLIB"
}

check_config() {
    printf '[agent]\nprivate_libraries = %s\n' "$1" >"$CONF"
    run "$TMPID" --check-config "$CONF"
}

@test "private_libraries: check-config takes a list and refuses a path, a runtime library, more than TMPI_PRIVATE_LIBS_MAX (32)" {
    check_config "libifcore.so, libflang.so:libpgf90"
    expect_status 0
    check_config ""
    expect_status 0
    check_config "libgfortran.so"
    expect_status 0
    check_config "/opt/lib/libfoo.so"
    expect_status 1
    [[ "$output" == *"$CONF:2: bad value for [agent] private_libraries: \"/opt/lib/libfoo.so\" is not a library name (character '/')"* ]] ||
        { echo "got: $output" >&2; false; }
    check_config "libfoo.so libc.so.6"
    expect_status 1
    [[ "$output" == *"\"libc.so.6\" names libc.so, part of the system runtime every rank shares"* ]] ||
        { echo "got: $output" >&2; false; }
    check_config "libtmpi"
    expect_status 1
    [[ "$output" == *"names libtmpi.so"* ]] || { echo "got: $output" >&2; false; }
    # short names, so that 33 fit one line of the file (the entry length limit: test_lib_list)
    local many="" i
    for ((i = 1; i <= 32; i++)); do many+="lx$i "; done
    check_config "$many"
    expect_status 0
    check_config "${many}lx33"
    expect_status 1
    [[ "$output" == *"more than 32 libraries (TMPI_PRIVATE_LIBS_MAX)"* ]] || { echo "got: $output" >&2; false; }
}

# The counter libraries of tests/bats/projects/privlib installed in a system directory, where
# a library stays shared by the node's ranks unless the admin names it.
@test "private_libraries: a library under /usr/lib is shared, copied per rank once the admin lists it, shared again by TMPI_SHARED_LIBS" {
    [ -w /usr/lib ] || skip "needs to write a library under /usr/lib"
    local src="$TMPI_SRC/tests/bats/projects/privlib"
    SYSLIB=$(mktemp -d /usr/lib/tmpi-bats.XXXXXX)
    cc -shared -fPIC -o "$SYSLIB/libcounter.so.1" -Wl,-soname,libcounter.so.1 "$src/counter.c"
    ln -sf libcounter.so.1 "$SYSLIB/libcounter.so"
    cc -shared -fPIC -o "$SYSLIB/libtwice.so.1" -Wl,-soname,libtwice.so.1 "$src/twice.c" \
        -L"$SYSLIB" -lcounter -Wl,-rpath,"$SYSLIB"
    ln -sf libtwice.so.1 "$SYSLIB/libtwice.so"
    "$TMPI_BUILD/launcher/tmpicc" -o "$BATS_TEST_TMPDIR/prog" "$src/uses_counter.c" -L"$SYSLIB" \
        -ltwice -lcounter -Wl,-rpath,"$SYSLIB"

    start_agent plain
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 3 "$BATS_TEST_TMPDIR/prog"
    expect_status 0
    expect_line SHARED

    printf '[agent]\nprivate_libraries = libcounter.so, libtwice\n' >"$CONF"
    start_agent admin --config "$CONF"
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 3 "$BATS_TEST_TMPDIR/prog"
    expect_status 0
    expect_line PRIVATE
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 3 -x TMPI_SHARED_LIBS=libcounter,libtwice \
        "$BATS_TEST_TMPDIR/prog"
    expect_status 0
    expect_line SHARED
}
