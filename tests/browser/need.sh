# shellcheck shell=bash
# need.sh - what a test of a page in headless Chromium needs (sourced after tap.sh): Debian's
# chromium, node, and tests/browser's playwright-core (npm ci there; tests/flamegraph/
# t_browser.sh installs all three as root), python3 for the expected values.  Skips the
# whole test with the reason when one is missing; sets browser (this folder) and art
# (tests/artifacts, made, where the screenshots go).
browser=$top/tests/browser
art=$top/tests/artifacts
command -v chromium >/dev/null || tap_skip_all "chromium missing (tests/flamegraph/t_browser.sh installs it as root)"
command -v node >/dev/null || tap_skip_all "node missing (Debian nodejs)"
[ -d "$browser/node_modules/playwright-core" ] ||
    tap_skip_all "playwright-core missing (cd tests/browser && npm ci)"
command -v python3 >/dev/null || tap_skip_all "python3 missing"
mkdir -p "$art"
