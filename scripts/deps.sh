#!/usr/bin/env bash
# Install the Debian packages spanfold needs, by what you want to do.  Idempotent and quiet
# when everything is present.  As root it runs apt-get; otherwise it prints the exact
# command to run and exits 2.
#
#   scripts/deps.sh [PROFILE...]         check and install (default: build)
#   scripts/deps.sh --list [PROFILE...]  print the packages of the profiles
#
# Profiles (each includes the ones before it where it says so):
#   build   what `make` and `make demo` need: a C compiler, the libraries, gnuplot
#   check   build + what `make check` needs: tshark, the plugin and BPF headers, clang
#           for the BPF helper, the sqlite3 shell, python3, xmllint, man
#   heavy   what only some tests use, each skipping with its reason without it: a browser
#           (report and flame-graph tests), the Wireshark GUI (screenshot test), real
#           servers and clients (ClickHouse: started by its test, never as a service),
#           tcpdump, perf, trace-cmd, nftables and Go (live recordings), node for the
#           exporters' consumers; CI installs it so that those tests run
#   dev     linters and valgrind (make lint, make format-check, make check-valgrind)
#   all     every profile
set -u

build=(build-essential pkg-config libpcap-dev libsqlite3-dev sqlite3 libnghttp2-dev libssl-dev
       libprotobuf-c-dev protobuf-c-compiler zlib1g-dev liblzma-dev libzstd-dev gnuplot-nox
       libcurl4-openssl-dev libbrotli-dev libelf-dev libtraceevent-dev libtracefs-dev
       libtracecmd-dev libiberty-dev libunwind-dev libdw-dev)
check=(tshark libwireshark-dev wireshark-dev clang llvm lld libclang-rt-14-dev libbpf-dev bpftool
       python3 perl time man-db libxml2-utils cmark-gfm)
heavy=(chromium wireshark-qt xvfb xdotool imagemagick nginx nghttp2-client nghttp2-server
       nghttp2-proxy curl openssl python3-grpcio tcpdump linux-perf trace-cmd systemtap-sdt-dev
       clickhouse-server clickhouse-client nftables golang-go golang-google-grpc-dev)
dev=(valgrind cppcheck clang-format)
# Commands that may come from another packaging (e.g. a newer Node.js that bundles npm):
# their Debian package is installed only when the command is missing.
heavy_cmds=(node:nodejs npm:npm)

list=0
profiles=()
for a in "$@"; do
    case $a in
    --list) list=1 ;;
    build | check | heavy | dev) profiles+=("$a") ;;
    all) profiles+=(build check heavy dev) ;;
    *) echo "deps.sh: unknown profile '$a' (build, check, heavy, dev, all)" >&2; exit 2 ;;
    esac
done
[ ${#profiles[@]} -eq 0 ] && profiles=(build)

pkgs=() cmd_pkgs=()
for p in "${profiles[@]}"; do
    case $p in
    build) pkgs+=("${build[@]}") ;;
    check) pkgs+=("${build[@]}" "${check[@]}") ;;
    heavy) pkgs+=("${heavy[@]}"); cmd_pkgs+=("${heavy_cmds[@]}") ;;
    dev) pkgs+=("${dev[@]}") ;;
    esac
done
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | awk '!seen[$0]++')

if [ $list -eq 1 ]; then
    printf '%s\n' "${pkgs[@]}"
    for cp in "${cmd_pkgs[@]}"; do echo "${cp#*:}"; done
    exit 0
fi

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
