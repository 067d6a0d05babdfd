#!/usr/bin/env bash
# The demo service under AddressSanitizer/UBSan: real clients (curl HTTP/1.1 and h2c,
# python3-grpcio) get the right answers, then a few seconds of mutated requests
# (service_fuzz.py) must not crash it or trip a sanitizer, and it still answers.
set -u
. "$(dirname "$0")/../tap.sh"
tap_name="demo service"
for t in clang curl python3 pkg-config; do command -v $t >/dev/null || tap_skip_all "$t not installed"; done
pkg-config --exists libnghttp2 || tap_skip_all "libnghttp2-dev not installed"
# the library of this build (under make SAN=1, the sanitizer one: the service is ASan too)
lib=${SF_BUILD:-$top/build}/libspanfold.a
[ -f "$lib" ] || tap_skip_all "$lib not built"
tmp=$(mktemp -d /tmp/t_service.XXXXXX)
svc=""
trap '[ -n "$svc" ] && kill $svc 2>/dev/null; rm -rf "$tmp"' EXIT
if ! clang -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
    -fno-omit-frame-pointer -I"$top/lib" -o "$tmp/svc" "$top"/samples/demo-service/*.c \
    "$lib" $(pkg-config --libs libnghttp2) -pthread 2>"$tmp/cc.err"; then
    tap_skip_all "cannot build the service with ASan: $(head -c 200 "$tmp/cc.err")"
fi
"$tmp/svc" --scale 0.05 --admin-port 0 >"$tmp/out" 2>"$tmp/err" &
svc=$!
for _ in $(seq 50); do grep -qs listening "$tmp/out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/out")
admin=$(sed -n 's/.*(admin 127\.0\.0\.1:\([0-9]*\)).*/\1/p' "$tmp/out")
[ -n "$port" ] && [ -n "$admin" ] && ok "starts and prints its ports ($port, admin $admin)" ||
    { notok "start: $(cat "$tmp/out" "$tmp/err")"; tap_plan; exit 0; }

r=$(curl -s -w ' %{http_code} %{http_version}' http://127.0.0.1:$port/api/checkout)
[[ "$r" =~ ^[0-9a-f]{16}$'\n'\ (200|500)\ 1.1$ ]] && ok "HTTP/1.1 /api/checkout answers" || notok "HTTP/1.1: '$r'"
r=$(curl -s --http2-prior-knowledge -w ' %{http_code} %{http_version}' -H 'b3: 463ac35c9f6413ad48485a3953bb6124-a2fb4a1d1a96d312' http://127.0.0.1:$port/api/search)
[[ "$r" =~ ^[0-9a-f]{16}$'\n'\ 200\ 2$ ]] && ok "h2c /api/search answers over HTTP/2" || notok "h2c: '$r'"
r=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/nope)
[ "$r" = 404 ] && ok "an unknown path is 404" || notok "unknown path: $r"
r=$(curl -s -X POST "http://127.0.0.1:$admin/admin/rate?r=2x")
[ "$r" = "bad admin request /admin/rate?r=2x" ] && ok "a bad rate is refused" || notok "bad rate: '$r'"
r=$(curl -s -X POST "http://127.0.0.1:$admin/admin/slow?on=1")
[ "$r" = "slow on" ] && ok "slow mode switches on through the admin port" || notok "slow: '$r'"
if /usr/bin/python3 -c 'import grpc' 2>/dev/null; then
    r=$(/usr/bin/python3 - "$port" <<'PY'
import sys, grpc
ch = grpc.insecure_channel("127.0.0.1:" + sys.argv[1])
call = ch.unary_unary("/demo.Catalog/Lookup")
gtb = bytes([0, 0]) + bytes(range(1, 17)) + bytes([1]) + bytes(range(1, 9)) + bytes([2, 1])
out = []
for i in range(3):
    try:
        out.append(call(b"sku", metadata=[("grpc-trace-bin", gtb)], timeout=5).decode().strip())
    except grpc.RpcError as e:
        out.append(str(e.code()))
try:
    ch.unary_unary("/demo.Catalog/Nope")(b"x", timeout=5)
except grpc.RpcError as e:
    out.append(str(e.code()))
print(" ".join(out))
PY
)
    [[ "$r" =~ ^([0-9a-f]{16}|StatusCode.NOT_FOUND)\ .*StatusCode.UNIMPLEMENTED$ ]] &&
        ok "gRPC Lookup answers with a message and grpc-status trailers ($r)" || notok "gRPC: '$r'"
else
    skip "gRPC" "python3-grpcio not installed"
fi

cases=$(timeout 60 python3 "$top/tests/demo/service_fuzz.py" "$port" 1 6 2>&1)
r=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/api/checkout)
kill -0 $svc 2>/dev/null && [[ "$r" =~ ^(200|500)$ ]] && ok "still serving after mutated requests ($cases)" ||
    notok "after mutated requests ($cases): status '$r'"
kill -TERM $svc; wait $svc; rc=$?; svc=""
[ $rc = 0 ] && ! grep -q "Sanitizer\|runtime error" "$tmp/err" && ok "stops cleanly on SIGTERM, no sanitizer report" ||
    notok "exit $rc: $(grep -m3 "Sanitizer\|runtime error\|SUMMARY" "$tmp/err")"
tap_plan
