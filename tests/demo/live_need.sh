# shellcheck shell=bash
# live_need.sh - what a live recording of the demo service needs (sourced after tap.sh):
# root, kernel BTF, spantrace, perf, tcpdump, curl, clang, python3 with grpcio.  Skips the
# whole test with the reason when one is missing.
[ "$(id -u)" = 0 ] || tap_skip_all "needs root (perf, tcpdump, BPF)"
[ -r /sys/kernel/btf/vmlinux ] || tap_skip_all "kernel has no BTF (spantrace)"
[ -x "${SF_BIN:-$top/bin}/spantrace" ] || [ -x "$top/bin/spantrace" ] ||
    tap_skip_all "spantrace not built (needs clang, bpftool, libbpf-dev)"
for t in perf tcpdump curl clang python3; do command -v $t >/dev/null || tap_skip_all "$t not installed"; done
/usr/bin/python3 -c 'import grpc' 2>/dev/null || tap_skip_all "python3-grpcio not installed"
