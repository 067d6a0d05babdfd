#!/usr/bin/env bash
# The CI performance gate of docs/ci.md, as one script that the GitHub Actions and
# GitLab CI jobs call and tests/perf-fold/t_ci_recipe.sh runs locally.
#
#   scripts/ci-perf-gate.sh [-o DIR] [-g GATE]... [-c CONFIDENCE] BASE NEW
#
#   BASE   the base branch's profile: its artefact (a .folded file from an earlier run
#          of this script), or `perf script --header` text
#   NEW    this build's `perf script --header` text ('-' = stdin) or a .folded file
#   -o     output directory (default out/perf-gate): new.folded (the artefact the next
#          build compares against), diff.folded (for a differential flame graph),
#          summary.md, gate.xml (JUnit)
#   -g     a gate (repeatable; default 'frame>+5pt': no frame's share up 5 points)
#   -c     confidence a failure must reach (default 0.99)
#
# The Markdown summary is written to DIR/summary.md (to post as a pull/merge request
# comment) and appended to $GITHUB_STEP_SUMMARY when that is set (GitHub Actions).
# Exit status: perf-fold diff's (docs/exit-status.md): 0 pass, 1 a regression (or
# skipped lines), 2 no base profile, an empty profile or a gate that cannot be evaluated.
set -u
out=out/perf-gate conf=0.99 gates=()
while getopts "o:g:c:" opt; do
    case $opt in
    o) out=$OPTARG ;;
    g) gates+=("$OPTARG") ;;
    c) conf=$OPTARG ;;
    *) echo "usage: $0 [-o DIR] [-g GATE]... [-c CONFIDENCE] BASE NEW" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-o DIR] [-g GATE]... [-c CONFIDENCE] BASE NEW" >&2; exit 2; }
[ ${#gates[@]} -gt 0 ] || gates=('frame>+5pt')
base=$1 new=$2
pf=${PERF_FOLD:-perf-fold}
mkdir -p "$out" || exit 2

# A profile as folded sample counts (not periods): what the gate's statistics need.
fold() {
    case $1 in
    *.folded) cat -- "$1" ;;
    *) "$pf" --samples -q "$1" ;;
    esac
}
if [ "$base" != - ] && [ ! -r "$base" ]; then
    echo "ci-perf-gate: $base: no base profile (the base branch's artefact is missing)" >&2
    exit 2
fi
fold "$base" >"$out/base.folded" || exit 2
fold "$new" >"$out/new.folded" || exit 2

rm -f "$out/summary.md" # this run's section only: the comment's body
args=(diff --confidence "$conf" --summary "$out/summary.md" --junit "$out/gate.xml")
for g in "${gates[@]}"; do args+=(--fail-if "$g"); done
"$pf" "${args[@]}" "$out/base.folded" "$out/new.folded" >"$out/diff.folded"
rc=$?
# the job's own summary page gets the same section
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/summary.md" ]; then
    cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
exit $rc
