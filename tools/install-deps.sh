#!/bin/sh
# Installs the Debian packages TMPI builds and tests with, when any is missing.
# dpkg-dev, debhelper, lintian: tests/bats/packaging.bats builds and checks the .deb packages.
# autoconf, automake, cmake: tests/bats/tmpicc.bats builds small real projects with tmpicc;
# libtool-bin: tests/bats/launcher.bats runs a libtool wrapper script (a tiny libtool tree);
#   tests/bats/build_systems.bats builds them with cmake, meson (ninja) and make + pkg-config.
# libhwloc-dev: the job host pins rank threads (tmpi-launch --bind-to); hwloc (hwloc-calc):
# tests/bats/binding.bats checks the reported cores against the machine's.
# slurm-wlm, munge: tests/bats/slurm.bats starts a one-node Slurm (slurmctld, slurmd, munged)
#   and runs tmpi-launch under salloc and sbatch.
# gfortran: the Fortran bindings (libclient/fortran, docs/FORTRAN.md) and tests/bats/fortran.bats.
# libfabric-dev: the OFI data plane between nodes (agent/transport/ofi, docs/ADMIN.md "Fabrics");
#   its tcp provider runs the OFI tests on any machine.
set -eu
pkgs="build-essential meson ninja-build pkg-config libevent-dev protobuf-c-compiler
libprotobuf-c-dev libsystemd-dev libsodium-dev libinih-dev libjson-c-dev libhwloc-dev hwloc libfabric-dev
bats iproute2
python3
clang-format
dpkg-dev debhelper lintian
autoconf automake cmake libtool-bin
slurm-wlm munge
gfortran"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "Installing:$missing"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
