#!/usr/bin/env bash
# Lint: curl's banned-function list, then cppcheck folder by folder: lib/, each
# tool with its own folder and generated headers on the include path, and the
# C tests (unit, per-tool, fuzz targets) with tests/ and their tool's folder.
#   scripts/lint.sh            everything
#   scripts/lint.sh DIR...     only those folders (e.g. lib tracefs2spans tests/unit)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
rc=0
files=$(git ls-files '*.c' '*.h' | grep -v '^tests/')
banned='\b(gets|strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|atof|sscanf)\s*\('
if grep -nE "$banned" $files; then
    echo "lint: banned functions used (see above); use snprintf, memcpy, strtol, sf_opt_*"
    rc=1
fi
# Packet bytes are decoded through lib/sf_rd.h only (issue #26): a byte taken by index or
# by *p++ and shifted into a wider field, an integer memcpy'd out of bytes, or ntohs and
# friends is a hand-decoded read that can pass the end.  Allowed, file and text, each
# with its reason:
rd_allow=(
    # a lookup table built from the static code lengths, no packet bytes
    'pcap2spans/hpack_huff.c	hp_huff_bits[s] << 8'
    # HPACK Huffman bit accumulator (RFC 7541 Appendix B): a bit stream, not a field;
    # bounded by its loop's i < n
    'pcap2spans/hpack_huff.c	(uint64_t)in[i++] << (56 - nb)'
    # hashes the 16 address bytes ip.c already read; their byte order does not matter
    'pcap2spans/tcp.c	memcpy(&x, a, 8)'
    'pcap2spans/tcp.c	memcpy(&y, a + 8, 8)'
)
rd_hand='\][[:space:]]*<<|\*\([^)]*\)[[:space:]]*<<|=[[:space:]]*\*[A-Za-z_][A-Za-z0-9_>.-]*\+\+'
rd_hand+='|memcpy\(&|\b(ntoh[sl]|be(16|32|64)toh|le(16|32|64)toh)\('
rd_hits=$(grep -nE "$rd_hand" $(git ls-files 'pcap2spans/*.c') |
    awk -v allow="$(printf '%s\n' "${rd_allow[@]}")" '
        BEGIN { n = split(allow, a, "\n"); for (i = 1; i <= n; i++) if (a[i] != "") {
                    split(a[i], f, "\t"); file[i] = f[1]; text[i] = f[2] } }
        { split($0, h, ":"); for (i in file) if (h[1] == file[i] && index($0, text[i])) next
          print }')
if [ -n "$rd_hits" ]; then
    echo "$rd_hits"
    echo "lint: packet bytes decoded by hand (see above); read them with lib/sf_rd.h"
    rc=1
fi
command -v cppcheck >/dev/null || { echo "lint: cppcheck not installed, only the banned list ran"; exit $rc; }

# one cppcheck run: $1 = label, then include flags, "--", files
check() {
    local label=$1 inc=() f=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do inc+=("$1"); shift; done
    shift
    for x in "$@"; do [ -f "$x" ] && f+=("$x"); done
    [ ${#f[@]} -eq 0 ] && return
    cppcheck --quiet --error-exitcode=1 --std=c11 --inline-suppr \
        --enable=warning,portability --suppress=missingIncludeSystem \
        "${inc[@]}" "${f[@]}" || { echo "lint: cppcheck: $label"; rc=1; }
}
tracked() { git ls-files "$@"; }
want() { [ ${#only[@]} -eq 0 ] && return 0; for o in "${only[@]}"; do [ "$o" = "$1" ] && return 0; done; return 1; }
only=("${@%/}")

want lib && check lib -Ilib -- $(tracked 'lib/*.c' 'lib/*.h')
for mk in */build.mk; do
    d=${mk%/build.mk}
    want "$d" || continue
    # generated headers (build/<tool>/: protoc-c, bpftool skeleton, vmlinux.h) stay off the
    # path: cppcheck cannot see the system headers they test (protobuf-c's #error version
    # check fires) and the kernel's vmlinux.h takes it minutes
    check "$d" -Ilib -I"$d" -DSF_VERSION='"lint"' \
        '-DLIBBPF_OPTS(type,name,...)=struct type name = {0}' \
        -- $(tracked "$d/*.c" "$d/*.h" | grep -v '\.bpf\.c$')
    # BPF programs: libbpf's section and helper macros, without vmlinux.h
    bpf=$(tracked "$d/*.bpf.c")
    [ -n "$bpf" ] && check "$d (bpf)" -I"$d" '-DSEC(x)=' '-D__always_inline=inline' -- $bpf
done
# Not yet: tests/pcap2spans (owner mid-edit, 2026-11-29) has two findings reported to its
# owner: test_truncate.c:53 keeps &ctx (a local) in *r after returning [autoVariables];
# test_h2.c:124 memcpy from a NULL p with n == 0 guarded by the caller [ctunullpointer].
# Add it back (delete it from this list) once those are fixed or suppressed inline.
not_yet=" tests/pcap2spans "
for d in tests/*/; do
    d=${d%/}
    [ "$d" = tests/fuzz ] && continue
    case $not_yet in *" $d "*) [ ${#only[@]} -eq 0 ] && continue ;; esac
    want "$d" || continue
    tool=${d#tests/}
    check "$d" -Ilib -Itests -I"$tool" -- $(tracked "$d/*.c" "$d/*.h")
done
if want tests/fuzz; then
    for d in tests/fuzz/*/; do
        d=${d%/}
        tool=${d#tests/fuzz/}
        check "$d" -Ilib -Itests -I"$tool" -- $(tracked "$d/*.c")
    done
    check tests/fuzz -Ilib -Itests -- tests/fuzz/replay.c
fi
exit $rc
