#!/bin/sh
# Builds TMPI's Debian packages (debian/: libtmpi0, libtmpi-dev, tmpid, tmpi-tools and their
# -dbgsym packages) with dpkg-buildpackage into OUTDIR (default: the current directory) and
# prints their paths.  Usage:
#   packaging/build-deb.sh [OUTDIR]
# The source tree is copied first (tracked and untracked files git does not ignore, or the whole
# tree outside git): dpkg-buildpackage writes its results into the parent of the tree it builds,
# and a build must not touch the checkout.  The build's output is kept in a log and shown when
# the build fails.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "${1:-.}"
out=$(cd "${1:-.}" && pwd)
for tool in dpkg-buildpackage dh; do
    if ! command -v "$tool" >/dev/null; then
        echo "build-deb.sh: $tool is not installed (apt-get install dpkg-dev debhelper, or tools/install-deps.sh)" >&2
        exit 1
    fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/tmpi-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
src="$work/tmpi"
mkdir "$src"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # -z: names with any bytes; deleted-but-tracked files are skipped by tar's --ignore-failed-read.
    git -C "$top" ls-files -z --cached --others --exclude-standard |
        (cd "$top" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$src"
else
    (cd "$top" && tar --exclude='./build*' -cf - .) | tar -xf - -C "$src"
fi

log="$work/build.log"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
    cat "$log" >&2
    echo "build-deb.sh: dpkg-buildpackage failed (its output is above)" >&2
    exit 1
fi
found=0
for f in "$work"/*.deb "$work"/*.ddeb; do
    [ -e "$f" ] || continue
    mv "$f" "$out/"
    echo "$out/$(basename "$f")"
    found=1
done
[ "$found" -eq 1 ] || { echo "build-deb.sh: dpkg-buildpackage made no package" >&2; exit 1; }
