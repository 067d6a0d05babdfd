#!/usr/bin/env bash
# Install the Debian packages spanfold needs to build, test and run its demo.
# Idempotent and quiet when everything is present.  As root it runs apt-get;
# otherwise it prints the exact command to run and exits 2.
#   scripts/deps.sh          check and install
#   scripts/deps.sh --list   print the package list
set -u

pkgs=(
    # build
    build-essential pkg-config clang llvm libclang-rt-14-dev
    # libraries of the field
    libpcap-dev libsqlite3-dev sqlite3 libnghttp2-dev libssl-dev
    # charts
    gnuplot-nox
    # Wireshark plugin, and tshark for cross-checks
    tshark libwireshark-dev wireshark-dev
    # libbpf capture helper; live recordings and their tests (skip without them)
    libbpf-dev bpftool libelf-dev zlib1g-dev systemtap-sdt-dev tcpdump linux-perf
    # tests and tooling
    valgrind cppcheck clang-format python3 perl time
    # output safety (tests/scripts/t_hostile.sh): XML checks, GitHub's Markdown parser
    libxml2-utils cmark-gfm
    # real clients and servers for the recordings and the live tests
    nginx nghttp2-client nghttp2-server nghttp2-proxy curl openssl python3-grpcio
    # exports: pprof via protobuf-c, gzip via zlib; consumers read back in node/chromium
    protobuf-c-compiler libprotobuf-c-dev chromium
    # the Wireshark GUI screenshot test (Qt under Xvfb)
    wireshark-qt xvfb xdotool imagemagick
)

if [ "${1:-}" = "--list" ]; then
    printf '%s\n' "${pkgs[@]}" nodejs npm
    exit 0
fi

# Commands that may come from another packaging (e.g. a newer Node.js that bundles
# npm): their Debian package is installed only when the command is missing.
cmd_pkgs=(node:nodejs npm:npm)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
done
for cp in "${cmd_pkgs[@]}"; do
    command -v "${cp%%:*}" >/dev/null || missing+=("${cp#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "spanfold: missing Debian packages: ${missing[*]}" >&2
    echo "spanfold: run as root:  apt-get update && $cmd" >&2
    exit 2
fi
echo "spanfold: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# The package lists may be absent or stale on a new machine.
apt-get update -qq >/dev/null || { echo "spanfold: apt-get update failed" >&2; exit 2; }
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/spanfold-deps.log 2>&1; then
    tail -n 20 /tmp/spanfold-deps.log >&2
    echo "spanfold: '$cmd' failed (log: /tmp/spanfold-deps.log)" >&2
    exit 2
fi
