#!/usr/bin/env bash
# The interactive SVG in a real browser: headless Chromium (Debian package `chromium`)
# driven by playwright-core (tests/browser, `npm ci`; no browser download).  Checks hover,
# click to zoom, Reset Zoom, Ctrl-F regex search and its matched percentage (computed here
# from the folded input), Ctrl-I, the URL state (?x=&y=&s=), an icicle graph and a
# differential graph.  Screenshots go to tests/artifacts/.  As root, installs chromium,
# nodejs/npm and the npm packages when they are missing.  Prints TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../tap.sh"
fgbin=${SF_BIN:-$top/bin}/flamegraph
browser=$top/tests/browser
art=$top/tests/artifacts
log=/tmp/spanfold-browser-setup.log

tap_name="browser test"
fail_all() { echo "not ok 1 - browser test: $*"; [ -f "$log" ] && tail -n 5 "$log" | sed 's/^/#   /'; echo "1..1"; exit 1; }

apt_install() {
    [ "$(id -u)" -eq 0 ] || return 1
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        --no-install-recommends "$@"; } >>"$log" 2>&1
}

if ! command -v chromium >/dev/null; then
    apt_install chromium || {
        [ "$(id -u)" -eq 0 ] && fail_all "apt-get install chromium failed"
        tap_skip_all "chromium missing (as root: apt-get install chromium)"
    }
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    apt_install nodejs npm || {
        [ "$(id -u)" -eq 0 ] && fail_all "apt-get install nodejs npm failed"
        tap_skip_all "node/npm missing (as root: apt-get install nodejs npm)"
    }
fi
if [ ! -d "$browser/node_modules/playwright-core" ]; then
    (cd "$browser" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund) >>"$log" 2>&1 ||
        fail_all "npm ci in tests/browser failed"
fi

tap_tmpdir
sample=$top/samples/folded/file-io.folded
"$fgbin" --minwidth 0 "$sample" >"$tmp/graph.svg" || fail_all "flamegraph failed on $sample"
"$fgbin" --inverted "$sample" >"$tmp/icicle.svg" || fail_all "flamegraph --inverted failed"
"$fgbin" "$here/data/diff.folded" >"$tmp/diff.svg" || fail_all "flamegraph failed on diff.folded"
mkdir -p "$art"

# The matched percentage a correct search must report: the share of samples whose stack
# has a frame (annotation stripped, as the graph names it) matching the regex.
python3 - "$sample" "$tmp" "$art" >"$tmp/config.json" <<'PY'
import json, re, sys
sample, tmp, art = sys.argv[1:4]
def pct(term, flags=0):
    rx, hit, total = re.compile(term, flags), 0, 0
    for line in open(sample, encoding="utf-8"):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        total += float(count)
        if any(rx.search(re.sub(r"_\[[kwij]\]$", "", f)) for f in stack.split(";")):
            hit += float(count)
    return 100 * hit / total
print(json.dumps({"svg": tmp + "/graph.svg", "inverted": tmp + "/icicle.svg",
                  "diff": tmp + "/diff.svg", "term": "^ext4_", "expect_pct": pct("^ext4_"),
                  "term_ci": "^VFS_", "expect_pct_ci": pct("^VFS_", re.I), "artifacts": art}))
PY
cd "$browser" && exec node flamegraph.test.mjs "$tmp/config.json"
