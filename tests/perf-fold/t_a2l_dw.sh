#!/usr/bin/env bash
# The inline frames of --call-graph dwarf answered in perf-fold's own process
# (perf-fold/a2l_dw.c) against binutils' addr2line, address by address
# (test_a2l_dw FILE...), on programs built here in the shapes a profile meets: C at -O2
# with DWARF 5 and DWARF 4 (inlined functions, tail padding); C++ (namespaces,
# templates: names that only the ELF symbol gives; hot and cold parts; clang's DWARF 5
# and 4); a binary linked by lld (text not at its file offset); one without DWARF
# (.symtab only: the symbol binutils picks among aliases); a Go program where the
# toolchain is installed; and one whose DWARF is in a separate debug file, which is
# left to addr2line.  Skips where there is no C compiler or no addr2line; without
# arguments test_a2l_dw checks its own binary and libc's debug file (make check runs
# it too).
set -u
. "$(dirname "$0")/../tap.sh"
t=${SF_BUILD:-$top/build}/tests/perf-fold/test_a2l_dw
command -v cc >/dev/null || tap_skip_all "no C compiler"
command -v addr2line >/dev/null || tap_skip_all "binutils' addr2line is not installed"
[ -x "$t" ] || tap_skip_all "test_a2l_dw not built"
tap_tmpdir t_a2l_dw
src=$top/tests/data/perfdata
files=()
build() { # NAME COMPILER ARGS...: $tmp/NAME, listed when the build works
    local name=$1
    shift
    if "$@" -o "$tmp/$name" 2>"$tmp/$name.err"; then
        files+=("$tmp/$name")
    else
        skip "$name: in-process names equal addr2line's" "$(head -1 "$tmp/$name.err")"
    fi
}
build c-dwarf5 cc -O2 -g -gdwarf-5 "$src/inlined.c"
build c-dwarf4 cc -O2 -g -gdwarf-4 "$src/inlined.c"
build c-spin cc -O1 -g -fno-omit-frame-pointer "$src/spin.c"
build c-lld cc -O2 -g -fuse-ld=lld "$src/inlined.c"
if command -v g++ >/dev/null; then
    build cxx g++ -O2 -g "$src/jitspin.cc"
    build cxx-split g++ -O2 -g -freorder-blocks-and-partition "$src/jitspin.cc"
    build cxx-stl g++ -O2 -g "$src/stl.cc"
else
    skip "cxx: in-process names equal addr2line's" "no g++"
fi
# clang's DWARF 5 names its range lists by index (DW_FORM_rnglistx), which binutils 2.40
# does not read: those functions have no ranges for it, nor here
if command -v clang++ >/dev/null; then
    build clang-cxx5 clang++ -O2 -g -gdwarf-5 "$src/jitspin.cc"
    build clang-cxx4 clang++ -O2 -g -gdwarf-4 "$src/jitspin.cc"
    build clang-stl5 clang++ -O2 -g -gdwarf-5 "$src/stl.cc"
else
    skip "clang-cxx5: in-process names equal addr2line's" "no clang++ (scripts/deps.sh check)"
fi
if cc -O2 -o "$tmp/c-symtab" "$src/spin.c" 2>/dev/null; then # no -g: symbols only
    files+=("$tmp/c-symtab")
fi
# a stripped binary with its debug file beside it (.gnu_debuglink): binutils reads that
# file's DWARF, so addr2line answers (the names must still be the same)
if command -v objcopy >/dev/null && cp "$tmp/c-dwarf5" "$tmp/c-linked" &&
    objcopy --only-keep-debug "$tmp/c-linked" "$tmp/c-linked.debug" &&
    objcopy --strip-debug --strip-unneeded --add-gnu-debuglink="$tmp/c-linked.debug" "$tmp/c-linked"; then
    files+=(-x "$tmp/c-linked")
else
    skip "c-linked: left to addr2line" "objcopy cannot make a separate debug file here"
fi
if command -v go >/dev/null; then
    mkdir -p "$tmp/gohome"
    printf 'package main\nimport ("fmt"; "sort"; "strings")\nfunc main() { s := []string{"b", "a"}; sort.Strings(s); fmt.Println(strings.Join(s, ",")) }\n' >"$tmp/g.go"
    if HOME=$tmp/gohome GOCACHE=$tmp/gocache GOPATH=$tmp/gopath go build -o "$tmp/go-prog" "$tmp/g.go" \
        2>"$tmp/go.err"; then
        files+=("$tmp/go-prog")
    else
        skip "go-prog: in-process names equal addr2line's" "go build fails: $(head -1 "$tmp/go.err")"
    fi
else
    skip "go-prog: in-process names equal addr2line's" "Go is not installed (scripts/deps.sh heavy)"
fi
"$t" "${files[@]}" >"$tmp/tap.out"
tap_relay "$tmp/tap.out"
tap_plan
