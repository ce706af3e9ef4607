#!/bin/sh
# Builds a Debian package of TMPI (binaries, headers, libtmpi, pkg-config file, systemd unit,
# config and man pages) into OUTDIR (default: the current directory).  Usage:
#   packaging/build-deb.sh [OUTDIR]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(cd "${1:-.}" && pwd)
version=$(sed -n "s/^  version: '\(.*\)',$/\1/p" "$top/meson.build")
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson setup "$work/build" "$top" --prefix=/usr --sysconfdir=/etc --libdir=lib \
    --buildtype=release >/dev/null
ninja -C "$work/build" >/dev/null
DESTDIR="$work/root" meson install -C "$work/build" --no-rebuild >/dev/null

mkdir -p "$work/root/DEBIAN"
cat >"$work/root/DEBIAN/control" <<CONTROL
Package: tmpi
Version: $version
Architecture: $arch
Maintainer: TMPI developers <tmpi@localhost>
Section: net
Priority: optional
Depends: libc6, libevent-core-2.1-7, libevent-pthreads-2.1-7, libprotobuf-c1, libsystemd0, libsodium23, libinih1, libjson-c5, gcc
Description: threaded MPI runtime for clusters of multi-core nodes
 TMPI runs MPI C programs with every rank as a thread inside a per-node agent
 (tmpid), with private globals per rank. Includes tmpicc, tmpi-launch, tmpictl,
 libtmpi, mpi.h and the tmpid systemd service.
CONTROL
echo /etc/tmpi/tmpid.conf >"$work/root/DEBIAN/conffiles"
cat >"$work/root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    getent passwd tmpi >/dev/null || adduser --system --group --no-create-home --home /nonexistent tmpi
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload || true
    fi
fi
POSTINST
cat >"$work/root/DEBIAN/prerm" <<'PRERM'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
    systemctl stop tmpid.service || true
fi
PRERM
chmod 0755 "$work/root/DEBIAN/postinst" "$work/root/DEBIAN/prerm"
dpkg-deb --root-owner-group --build "$work/root" "$out/tmpi_${version}_${arch}.deb" >/dev/null
echo "$out/tmpi_${version}_${arch}.deb"
