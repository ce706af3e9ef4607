#!/usr/bin/env bats
# The Debian packages (debian/, packaging/build-deb.sh): built once per run of this file from a
# copy of the source tree, then checked for what each package holds, what it depends on, its
# maintainer scripts, stripped binaries with split debug symbols, and lintian.

bats_require_minimum_version 1.5.0
load helpers

# The unit tests run in make check already: the package build skips them (DEB_BUILD_OPTIONS).
setup_file() {
    command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || return 0
    export DEB_DIR="$BATS_FILE_TMPDIR/deb"
    DEB_BUILD_OPTIONS="nocheck parallel=2" "$TMPI_SRC/packaging/build-deb.sh" "$DEB_DIR" \
        >"$BATS_FILE_TMPDIR/build.log" 2>&1 || echo failed >"$BATS_FILE_TMPDIR/build.failed"
}

setup() {
    command -v dpkg-buildpackage >/dev/null ||
        skip "dpkg-buildpackage is not installed (apt-get install dpkg-dev; tools/install-deps.sh)"
    command -v dh >/dev/null ||
        skip "debhelper is not installed (apt-get install debhelper; tools/install-deps.sh)"
    if [ -e "$BATS_FILE_TMPDIR/build.failed" ]; then
        echo "packaging/build-deb.sh failed; its output:" >&2
        cat "$BATS_FILE_TMPDIR/build.log" >&2
        return 1
    fi
    VERSION=$(sed -n "s/^  version: '\(.*\)',$/\1/p" "$TMPI_SRC/meson.build")
    ARCH=$(dpkg --print-architecture)
    MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
}

deb() { echo "$DEB_DIR/$1_${VERSION}_$ARCH.deb"; }

# The files and symlinks of a package (no directories, no /usr/share/doc), sorted.
deb_files() {
    dpkg-deb --fsys-tarfile "$(deb "$1")" | tar -tvf - | awk '$1 !~ /^d/ {print $6}' |
        sed 's|^\./|/|' | grep -v '^/usr/share/doc/' | sort
}

# expect_files PACKAGE FILE...: the package holds exactly these files.
expect_files() {
    local pkg=$1 got want
    shift
    got=$(deb_files "$pkg")
    want=$(printf '%s\n' "$@" | sort)
    if [ "$got" != "$want" ]; then
        echo "files of $pkg differ (- expected, + got):" >&2
        diff <(echo "$want") <(echo "$got") >&2
        return 1
    fi
}

# field PACKAGE FIELD: one control field.
field() { dpkg-deb -f "$(deb "$1")" "$2"; }

# expect_match TEXT PATTERN WHAT: TEXT matches the extended regex PATTERN.
expect_match() {
    if ! grep -qE -- "$2" <<<"$1"; then
        echo "$3: expected a match for /$2/, got:" >&2
        echo "$1" >&2
        return 1
    fi
}

@test "packaging: the changelog's version is meson.build's" {
    local v
    v=$(dpkg-parsechangelog -l "$TMPI_SRC/debian/changelog" -S Version)
    [ "$v" = "$VERSION" ] || { echo "debian/changelog has $v, meson.build $VERSION" >&2; return 1; }
}

@test "packaging: four packages and their debug symbols are built" {
    local p
    for p in libtmpi0 libtmpi-dev tmpid tmpi-tools libtmpi0-dbgsym tmpid-dbgsym tmpi-tools-dbgsym; do
        [ -f "$(deb "$p")" ] || { echo "missing $(deb "$p"); built:" >&2; ls "$DEB_DIR" >&2; return 1; }
    done
}

@test "packaging: each package holds its files, mpi.h in a private directory" {
    local unitdir
    unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
    expect_files libtmpi0 "/usr/lib/$MA/libtmpi.so.0" "/usr/lib/$MA/libtmpi.so.$VERSION" \
        /usr/share/lintian/overrides/libtmpi0
    local home="/usr/lib/$MA/tmpi"
    expect_files libtmpi-dev /usr/bin/tmpicc /usr/bin/tmpicxx /usr/include/tmpi/mpi.h \
        /usr/include/tmpi/mpif.h "/usr/lib/$MA/libtmpi_fortran.a" "$home/fortran/mpi.mod" \
        "$home/fortran/mpi_f08.mod" "$home/fortran/tmpi_f08_c.mod" \
        "/usr/lib/$MA/libtmpi.so" "/usr/lib/$MA/libtmpi_module.a" "/usr/lib/$MA/pkgconfig/tmpi.pc" \
        "$home/bin/mpicc" "$home/bin/mpicxx" "$home/bin/mpic++" "$home/pkgconfig/mpi.pc" \
        "$home/pkgconfig/mpi-c.pc" "$home/pkgconfig/mpi-cxx.pc" "$home/pkgconfig/ompi-c.pc" \
        "$home/pkgconfig/ompi-cxx.pc" \
        /usr/share/man/man1/tmpicc.1.gz /usr/share/man/man1/tmpicxx.1.gz \
        /usr/bin/tmpif77 /usr/bin/tmpif90 /usr/bin/tmpifort \
        "/usr/lib/$MA/pkgconfig/tmpi-fortran.pc" "$home/pkgconfig/ompi-fort.pc" \
        "$home/pkgconfig/mpi-fort.pc" "$home/bin/mpif77" "$home/bin/mpif90" "$home/bin/mpifort" \
        /usr/share/man/man1/tmpif77.1.gz /usr/share/man/man1/tmpif90.1.gz \
        /usr/share/man/man1/tmpifort.1.gz
    expect_files tmpid /etc/tmpi/tmpid.conf "$unitdir/tmpid.service" "$unitdir/tmpid.socket" \
        /usr/lib/sysusers.d/tmpid.conf /usr/lib/tmpfiles.d/tmpid.conf /usr/sbin/tmpid \
        /usr/share/man/man5/tmpid.conf.5.gz /usr/share/man/man8/tmpid.8.gz \
        /usr/share/lintian/overrides/tmpid
    expect_files tmpi-tools /usr/bin/tmpi-launch /usr/bin/tmpictl "$home/bin/mpiexec" \
        "$home/bin/mpirun" /usr/share/man/man1/tmpi-launch.1.gz /usr/share/man/man1/tmpictl.1.gz
}

@test "packaging: tmpicc and tmpi.pc point at the private include directory" {
    local root="$BATS_TEST_TMPDIR/root"
    dpkg-deb -x "$(deb libtmpi-dev)" "$root"
    run grep -E '^TMPI_INCDIR=' "$root/usr/bin/tmpicc"
    expect_match "$output" '/usr/include/tmpi\}?$' "tmpicc's include directory"
    run grep -E '^Cflags:' "$root/usr/lib/$MA/pkgconfig/tmpi.pc"
    expect_match "$output" '^Cflags: -I\$\{includedir\}/tmpi( |$)' "tmpi.pc's Cflags"
}

@test "packaging: dependencies are computed, the packages of one build go together" {
    local d
    d=$(field libtmpi0 Depends)
    # libhwloc: MPI_Comm_split_type's hardware levels (libclient/mpi/split_hw.c)
    expect_match "$d" '^libc6 \(>= [0-9.]+\), libhwloc[0-9]+ \(>= [0-9.]+\)$' "libtmpi0 Depends"
    d=$(field libtmpi-dev Depends)
    expect_match "$d" "libtmpi0 \(= $VERSION\)" "libtmpi-dev Depends"
    d=$(field tmpid Depends)
    expect_match "$d" "libtmpi0 \(= $VERSION\)" "tmpid Depends"
    expect_match "$d" 'libevent-core-[^ ]+ \(>= ' "tmpid Depends (shlibs)"
    expect_match "$d" 'systemd-sysusers' "tmpid Depends (sysusers)"
    d=$(field tmpi-tools Depends)
    expect_match "$d" "tmpid \(= $VERSION\)" "tmpi-tools Depends"
    expect_match "$d" 'libsodium[0-9]+ \(>= ' "tmpi-tools Depends (shlibs)"
    run dpkg-deb -I "$(deb libtmpi0)" shlibs
    expect_match "$output" "^libtmpi 0 libtmpi0 \(>= $VERSION\)$" "libtmpi0 shlibs"
    run dpkg-deb -I "$(deb libtmpi0)" triggers
    expect_match "$output" '^activate-noawait ldconfig$' "libtmpi0 triggers"
}

@test "packaging: tmpid's maintainer scripts create the user, then the directory, then start it" {
    local ctl="$BATS_TEST_TMPDIR/ctl" s
    dpkg-deb -e "$(deb tmpid)" "$ctl"
    for s in postinst prerm postrm; do
        [ -x "$ctl/$s" ] || { echo "tmpid has no executable $s" >&2; return 1; }
        sh -n "$ctl/$s" || { echo "tmpid $s is not valid sh" >&2; return 1; }
    done
    run cat "$ctl/conffiles"
    expect_line /etc/tmpi/tmpid.conf
    run grep -nE 'systemd-sysusers|systemd-tmpfiles|deb-systemd-invoke \$_dh_action' "$ctl/postinst"
    expect_match "$output" '^[0-9]+:.*systemd-sysusers .*tmpid\.conf' "postinst creates the user"
    # in this order: the directory belongs to the user, the unit runs as it
    local order
    order=$(sed -E 's/^[0-9]+:.*(sysusers|tmpfiles|invoke).*/\1/' <<<"$output" | uniq | tr '\n' ' ')
    [ "$order" = "sysusers tmpfiles invoke " ] ||
        { echo "postinst order: expected sysusers tmpfiles invoke, got $order" >&2; return 1; }
    run grep -c adduser "$ctl/postinst"
    [ "$output" = 0 ] || { echo "postinst still calls adduser" >&2; return 1; }
    run grep -E "deb-systemd-invoke stop 'tmpid.service'" "$ctl/prerm"
    expect_status 0
    # the user and directory entries themselves
    local root="$BATS_TEST_TMPDIR/root"
    dpkg-deb -x "$(deb tmpid)" "$root"
    run grep -v '^#' "$root/usr/lib/sysusers.d/tmpid.conf"
    expect_match "$output" '^u tmpi - ' "sysusers entry"
    run grep -v '^#' "$root/usr/lib/tmpfiles.d/tmpid.conf"
    expect_match "$output" '^d /run/tmpid 0755 tmpi tmpi' "tmpfiles entry"
    run grep -E '^User=' "$root$(pkg-config --variable=systemdsystemunitdir systemd)/tmpid.service"
    expect_line User=tmpi
}

@test "packaging: binaries are stripped and their debug symbols are in -dbgsym" {
    local root="$BATS_TEST_TMPDIR/root" dbg="$BATS_TEST_TMPDIR/dbg" f id
    local p
    for p in libtmpi0 tmpid tmpi-tools; do
        dpkg-deb -x "$(deb "$p")" "$root"
        dpkg-deb -x "$(deb "$p"-dbgsym)" "$dbg"
    done
    for f in "$root/usr/lib/$MA/libtmpi.so.$VERSION" "$root/usr/sbin/tmpid" \
        "$root/usr/bin/tmpi-launch" "$root/usr/bin/tmpictl"; do
        if readelf -S "$f" | grep -qE '\.(debug_info|symtab)'; then
            echo "${f#"$root"} is not stripped" >&2
            return 1
        fi
        id=$(readelf -n "$f" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
        [ -n "$id" ] || { echo "${f#"$root"} has no build id" >&2; return 1; }
        [ -f "$dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
            { echo "no debug symbols for ${f#"$root"} (build id $id)" >&2; return 1; }
    done
}

@test "packaging: lintian finds nothing (overrides carry their reasons)" {
    command -v lintian >/dev/null || skip "lintian is not installed (tools/install-deps.sh)"
    local f
    for f in "$TMPI_SRC"/debian/*.lintian-overrides; do
        grep -q '^#' "$f" || { echo "$f has no comment saying why" >&2; return 1; }
    done
    # -I: info tags too; overridden tags do not show
    run lintian -I --fail-on error,warning,info "$DEB_DIR"/*.deb
    local tags
    tags=$(grep -E '^[EWI]: ' <<<"$output" || true)
    if [ -n "$tags" ] || [ "$status" -ne 0 ]; then
        echo "lintian (status $status):" >&2
        echo "$output" >&2
        return 1
    fi
}
