#!/usr/bin/env bash
# The demo service's sampler and circuit breaker (samples/demo-service/sampler.c),
# through sampler_test.c (and its rules, with lib/'s parsers): built here with the compiler and flags of the tree (the
# service is not a spanfold tool, so make does not build it), under ASan/UBSan when
# the compiler has them.
set -u -o pipefail
. "$(dirname "$0")/../tap.sh"
tap_tmpdir t_sampler
cc=${CC:-cc}
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
echo 'int main(void){return 0;}' >"$tmp/x.c"
$cc $san "$tmp/x.c" -o "$tmp/x" 2>/dev/null || san=""
if ! $cc -std=c11 -D_GNU_SOURCE -O1 -g $san -Wall -Wextra -Werror -I"$top/samples/demo-service" \
    -I"$top/lib" -I"$top/tests" "$top/tests/demo/sampler_test.c" \
    "$top/samples/demo-service/sampler.c" "${SF_BUILD:-$top/build}/libspanfold.a" -lm \
    -o "$tmp/sampler_test" 2>"$tmp/cc.err"; then
    echo "not ok 1 - sampler_test builds: $(head -c 300 "$tmp/cc.err")"
    echo "1..1"
    exit 0
fi
"$tmp/sampler_test" | grep -v '^[0-9]* passed'
