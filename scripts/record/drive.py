#!/usr/bin/python3
"""Client side of scripts/record-samples.sh: runs real clients and writes what they sent.

  drive.py h1   --port P --out F.json        curl keep-alive, POST, chunked, 404, HEAD,
                                             trace cases; pipelining through a raw socket
  drive.py h2   --port P --out F.json        nghttp (prior knowledge, many streams, big
                                             headers), h2load, curl --http2 (Upgrade: h2c)
  drive.py grpc --port P --out F.json        python3-grpcio client + nghttp as a gRPC client
  drive.py tls  --port P ... --out F.json    curl over TLS 1.3 (see record-samples.sh)

Each run writes {"requests": [...], "connections": [...]} with one entry per request in the
manifest's vocabulary (see cases.py).  A client that fails makes the run fail: a manifest must
never list a request that was not sent.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

import cases

TIMEOUT = 20  # seconds for any one client


def run(argv, **kw):
    """Run a client; fail loudly (with its stderr) if it fails."""
    p = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, **kw)
    if p.returncode != 0:
        sys.stderr.write("drive.py: %s failed (%d): %s\n" % (argv[0], p.returncode,
                                                             p.stderr.decode(errors="replace")))
        sys.exit(1)
    return p


def req(rid, client, conn, method, authority, path, status, proto, headers=(), contexts=(),
        **kw):
    r = {"id": rid, "client": client, "connection": conn, "method": method,
         "authority": authority, "path": path, "status": status, "proto": proto,
         "trace_headers": [list(h) for h in headers], "contexts": list(contexts),
         "early_data": False}
    if method == "POST" and path == "/post":
        # nginx's `return 201` answers without reading the body: over HTTP/2 its response
        # can end before the client's DATA frame (seen in tls-nginx.pcap), so the span's
        # resp_end may precede req_end.
        r["server_may_answer_first"] = True
    r.update(kw)
    return r


class Curl:
    """One curl process, several URLs joined with --next: one keep-alive connection."""

    def __init__(self, base, extra=()):
        self.base = list(base)
        self.extra = list(extra)
        self.parts = []

    def add(self, url, opts=(), headers=()):
        part = ["-sS", "-o", "/dev/null"] + self.extra + list(opts)
        for n, v in headers:
            part += ["-H", "%s: %s" % (n, v)]
        part.append(url)
        self.parts.append(part)

    def run(self, env=None):
        argv = list(self.base)
        for i, p in enumerate(self.parts):
            if i:
                argv.append("--next")
            argv += p
        # -w prints one status per URL: checked against what the manifest expects.
        return run(argv, env=env)


# What curl itself saw of each exchange: status, body bytes received and sent (without
# chunk framing; compressed bytes when --compressed), and its local port.
CURL_W = "%{http_code} %{size_download} %{size_upload} %{local_port}\\n"


def curl_results(reqs, out):
    """Check curl's statuses against the plan; record its sizes and client port."""
    rows = [line.split() for line in out.decode().splitlines() if line.strip()]
    check_status(reqs, [int(r[0]) for r in rows])
    for r, row in zip(reqs, rows):
        r["resp_bytes"] = int(row[1])
        r["req_bytes"] = int(row[2])
        r["client_port"] = int(row[3])


def h1(a):
    host = "127.0.0.1:%d" % a.port
    base = "http://" + host
    reqs = []
    # Connection 1: keep-alive with several kinds of exchange.
    c = Curl(["curl"], ["--http1.1", "-w", CURL_W])
    basic = [
        ("h1-get", "GET", "/index.html", 200, [], []),
        ("h1-post", "POST", "/post", 201, ["--data-binary", "name=spanfold&kind=post-body"], []),
        ("h1-chunked", "GET", "/chunked/page.html", 200, ["--compressed"], []),
        ("h1-404", "GET", "/no/such/file", 404, [], []),
        ("h1-head", "HEAD", "/index.html", 200, ["-I"], []),
        ("h1-after-head", "GET", "/small.txt", 200, [], []),
    ]
    for rid, m, path, st, opts, hdr in basic:
        c.add(base + path, opts, hdr)
        reqs.append(req(rid, "curl", "h1-keepalive", m, host, path, st, "http/1.1"))
    curl_results(reqs, c.run().stdout)

    # Connection 2 and 3: every trace-context format, then the malformed ones.
    for conn, group in (("h1-trace", cases.VALID), ("h1-malformed", cases.MALFORMED)):
        c = Curl(["curl"], ["--http1.1", "-w", CURL_W])
        batch = []
        for name, headers, ctxs in group:
            path = "/t/%s" % name
            c.add(base + path, [], headers)
            batch.append(req("h1-" + name, "curl", conn, "GET", host, path, 200, "http/1.1",
                             headers, ctxs))
        curl_results(batch, c.run().stdout)
        reqs += batch

    # Connection 4: pipelining, three requests in one write; nginx answers in order.
    names = ["pipe-1", "pipe-2", "pipe-3"]
    tps = ["00-%032x-%016x-01" % (0xa1 + i, 0xb1 + i) for i in range(3)]
    wire = b""
    for i, n in enumerate(names):
        last = i == len(names) - 1
        wire += ("GET /t/%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: spanfold-pipeline\r\n"
                 "traceparent: %s\r\n%s\r\n" % (n, host, tps[i],
                                                 "Connection: close\r\n" if last else "")).encode()
    s = socket.create_connection(("127.0.0.1", a.port), timeout=TIMEOUT)
    cport = s.getsockname()[1]
    s.sendall(wire)
    resp = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        resp += d
    s.close()
    if resp.count(b"HTTP/1.1 200") != 3:
        sys.exit("drive.py: pipelining: expected 3 responses, got %r" % resp[:200])
    for i, n in enumerate(names):
        reqs.append(req("h1-" + n, "python3 socket (pipelined)", "h1-pipeline", "GET", host,
                        "/t/" + n, 200, "http/1.1", [("traceparent", tps[i])],
                        [cases.ctx("traceparent", "%032x" % (0xa1 + i), "%016x" % (0xb1 + i),
                                   None, 1)], pipelined=True, client_port=cport,
                        req_bytes=0, resp_bytes=len("traced\n")))
    return {"requests": reqs}


def ipv6(a):
    """The same kinds of exchange over ::1: curl to nginx (HTTP/1.1), nghttp to nghttpd."""
    host = "[::1]:%d" % a.port
    reqs = []
    bycase = {n: (h, c) for n, h, c in cases.all_cases()}
    c = Curl(["curl"], ["-g", "--http1.1", "-w", CURL_W])
    for rid, path, status, case in (("v6-h1-tp", "/t/v6-traceparent", 200, "tp-tracestate"),
                                     ("v6-h1-b3", "/t/v6-b3", 200, "b3-multi-128"),
                                     ("v6-h1-404", "/v6-missing", 404, None)):
        headers, ctxs = bycase[case] if case else ([], [])
        c.add("http://%s%s" % (host, path), [], headers)
        reqs.append(req(rid, "curl", "v6-h1", "GET", host, path, status, "http/1.1", headers,
                        ctxs))
    curl_results(reqs, c.run().stdout)
    h2host = "[::1]:%d" % a.port2
    headers, ctxs = bycase["uber-128"]
    path = "/index.html?v6=1"
    st = nghttp_statuses(run(["nghttp", "-nv", "-H", "%s: %s" % headers[0],
                              "http://%s%s" % (h2host, path)]).stdout)
    if list(st.values()) != [200]:
        sys.exit("drive.py: nghttp over ::1: statuses %r" % st)
    reqs.append(req("v6-h2-uber", "nghttp", "v6-h2", "GET", h2host, path, 200, "h2", headers,
                    ctxs, stream_id=list(st)[0]))
    return {"requests": reqs, "h2c_ports": [a.port2]}


# Every valid and malformed case of cases.py, one nghttp connection each.
H2_CASES = [n for n, _, _ in cases.all_cases()]


def lower_headers(headers):
    """HTTP/2 field names are lowercase on the wire (nghttp lowercases what it is given)."""
    return [(n.lower(), v) for n, v in headers]


def nghttp_statuses(out):
    """Statuses from `nghttp -v` output, in the order the responses arrived, per stream."""
    st = {}
    for line in out.decode(errors="replace").splitlines():
        if "recv (stream_id=" in line and ":status:" in line:
            sid = int(line.split("stream_id=")[1].split(")")[0])
            st[sid] = int(line.rsplit(":", 1)[1])
    return st


def h2(a):
    """a.port: nghttpd (prior knowledge); a.port2: nghttpx (accepts Upgrade: h2c)."""
    host = "127.0.0.1:%d" % a.port
    base = "http://" + host
    reqs = []
    bycase = {n: (h, c) for n, h, c in cases.all_cases()}
    # One connection per trace case: nghttp sends the same extra headers on every stream.
    for name in H2_CASES:
        headers, ctxs = bycase[name]
        headers = lower_headers(headers)
        path = "/index.html?case=%s" % name
        argv = ["nghttp", "-nv", base + path]
        for n, v in headers:
            argv += ["-H", "%s: %s" % (n, v)]
        st = nghttp_statuses(run(argv).stdout)
        if list(st.values()) != [200]:
            sys.exit("drive.py: nghttp %s: statuses %r" % (name, st))
        reqs.append(req("h2-" + name, "nghttp", "h2-" + name, "GET", host, path, 200, "h2",
                        headers, ctxs, stream_id=list(st)[0]))
    # Many streams on one connection, with a 404 among them; the dynamic table fills up.
    paths = ["/index.html?stream=%d" % i for i in range(1, 9)] + ["/missing.html"]
    tp = "00-%s-%s-01" % ("5" * 32, "6" * 16)
    argv = ["nghttp", "-nv", "-H", "traceparent: " + tp] + [base + p for p in paths]
    st = nghttp_statuses(run(argv).stdout)
    if sorted(st.values()) != sorted([200] * 8 + [404]):
        sys.exit("drive.py: nghttp many: statuses %r" % st)
    for i, p in enumerate(paths):
        reqs.append(req("h2-many-%d" % (i + 1), "nghttp", "h2-many", "GET", host, p,
                        404 if "missing" in p else 200, "h2", [("traceparent", tp)],
                        [cases.ctx("traceparent", "5" * 32, "6" * 16, None, 1)]))
    # Headers larger than one frame (16384): HEADERS + CONTINUATION, the context behind them.
    big = "".join("%04d-spanfold-padding-" % i for i in range(1400))  # ~30 KB
    tp = "00-%s-%s-01" % ("7" * 32, "8" * 16)
    path = "/index.html?case=continuation"
    run(["nghttp", "-nv", "-H", "x-big: " + big, "-H", "traceparent: " + tp, base + path])
    reqs.append(req("h2-continuation", "nghttp", "h2-continuation", "GET", host, path, 200, "h2",
                    [("traceparent", tp)], [cases.ctx("traceparent", "7" * 32, "8" * 16, None, 1)],
                    big_header_bytes=len(big)))
    # PADDED frames: nghttp pads its HEADERS (and any DATA) with up to 64 bytes.
    tp = "00-%s-%s-01" % ("d" * 32, "e" * 16)
    path = "/index.html?case=padded"
    st = nghttp_statuses(run(["nghttp", "-nv", "-b", "64", "-H", "traceparent: " + tp,
                              base + path]).stdout)
    if list(st.values()) != [200]:
        sys.exit("drive.py: nghttp padded: statuses %r" % st)
    reqs.append(req("h2-padded", "nghttp -b 64", "h2-padded", "GET", host, path, 200, "h2",
                    [("traceparent", tp)], [cases.ctx("traceparent", "d" * 32, "e" * 16, None, 1)],
                    stream_id=list(st)[0], padded=True))
    # h2load: 12 requests, 4 concurrent streams, one connection.
    tp = "00-%s-%s-00" % ("9" * 32, "a" * 16)
    run(["h2load", "-n", "12", "-c", "1", "-m", "4", "-H", "traceparent: " + tp,
         base + "/index.html?h2load=1"])
    for i in range(12):
        reqs.append(req("h2-h2load-%d" % (i + 1), "h2load", "h2-h2load", "GET", host,
                        "/index.html?h2load=1", 200, "h2", [("traceparent", tp)],
                        [cases.ctx("traceparent", "9" * 32, "a" * 16, None, 0)]))
    # curl --http2-prior-knowledge against nghttpd.
    tp = "00-%s-%s-01" % ("b" * 32, "c" * 16)
    p = run(["curl", "-sS", "-o", "/dev/null", "-w", CURL_W, "--http2-prior-knowledge",
             "-H", "traceparent: " + tp, base + "/index.html?curl=prior"])
    r = req("h2-curl-prior", "curl", "h2-curl-prior", "GET", host, "/index.html?curl=prior", 200,
            "h2", [("traceparent", tp)], [cases.ctx("traceparent", "b" * 32, "c" * 16, None, 1)],
            stream_id=1)
    curl_results([r], p.stdout)
    reqs.append(r)
    # curl --http2 with Upgrade: h2c against nghttpx (curl 7.88: one request per connection).
    uhost = "127.0.0.1:%d" % a.port2
    for rid, path, status, name in (("h2-upgrade-200", "/t/upgrade-ok", 200, "tp-tracestate"),
                                    ("h2-upgrade-404", "/upgrade-missing", 404, "b3-single-128")):
        headers, ctxs = bycase[name]
        argv = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_version} " + CURL_W, "--http2"]
        for n, v in headers:
            argv += ["-H", "%s: %s" % (n, v)]
        p = run(argv + ["http://" + uhost + path])
        ver, _, rest = p.stdout.decode().partition(" ")
        if ver != "2":
            sys.exit("drive.py: curl --http2 upgrade: HTTP version %r" % ver)
        r = req(rid, "curl", rid, "GET", uhost, path, status, "h2", headers, ctxs,
                h2c_upgrade=True, stream_id=1)
        curl_results([r], rest.encode())
        reqs.append(r)
    return {"requests": reqs, "h2c_ports": [a.port]}


def grpc_req(rid, client, conn, host, svc_method, headers, ctxs, gstatus, gmsg=None,
             status=200, **kw):
    svc, meth = svc_method.rsplit("/", 1)
    return req(rid, client, conn, "POST", host, "/" + svc_method, status, "grpc", headers, ctxs,
               grpc_service=svc, grpc_method=meth, grpc_status=gstatus, grpc_message=gmsg, **kw)


def grpc(a):
    """python3-grpcio client (one channel: one connection, several streams), then nghttp
    speaking gRPC by hand so that grpc-trace-bin travels as base64."""
    import base64
    import grpc as g
    host = "127.0.0.1:%d" % a.port
    gtb = bytes.fromhex(cases.GTB_HEX)
    tp = cases.TP
    reqs = []
    ch = g.insecure_channel(host)
    g.channel_ready_future(ch).result(timeout=10)

    def call(method, payload, md, timeout=None):
        f = ch.unary_unary("/spanfold.demo.Echo/" + method)
        try:
            f(payload, metadata=md, timeout=timeout)
            return 0, None
        except g.RpcError as e:
            return e.code().value[0], e.details()

    calls = [
        # id, method, metadata, timeout, expected contexts, expected status/message, extra
        ("grpc-bin-tp-deadline", "Say", [("grpc-trace-bin", gtb), ("traceparent", tp)], 5.0,
         [cases.GRPC_VALID, cases.ctx("traceparent", cases.TP_TRACE, cases.TP_SPAN, None, 1)],
         0, None, {"grpc_timeout_ns": [4900000000, 5100000000]}),
        ("grpc-tp-only", "Say", [("traceparent", "00-%s-%s-01" % ("c" * 32, "d" * 16))], None,
         [cases.ctx("traceparent", "c" * 32, "d" * 16, None, 1)], 0, None,
         {"grpc_timeout_ns": None}),
        ("grpc-fail", "Fail", [("grpc-trace-bin", bytes.fromhex(cases.GTB_HEX[:-2] + "00"))], 5.0,
         [cases.ctx("grpc-trace-bin", cases.GTB_TRACE, cases.GTB_SPAN, None, 0, flags=0)],
         5, "no such greeting", {}),
        ("grpc-bin-truncated", "Say", [("grpc-trace-bin", bytes.fromhex(cases.GRPC_TRUNCATED_HEX))],
         5.0, [cases.GRPC_TRUNCATED], 0, None, {}),
        ("grpc-bin-badversion", "Say",
         [("grpc-trace-bin", bytes.fromhex(cases.GRPC_BADVERSION_HEX))],
         5.0, [cases.GRPC_BADVERSION], 0, None, {}),
    ]
    # Deadlines that expire (server sleeps 1 s, deadline 0.2 s): client and server time out
    # together, so which goes first on the wire varies: the server's trailers-only
    # DEADLINE_EXCEEDED, or the client's RST_STREAM(CANCEL) with the server's answer after
    # it.  Six calls; wire_outcomes.py reads the capture and writes down what happened.
    for i in range(1, 7):
        sid = "a2fb4a1d1a96d3%02x" % (0x10 + i)
        calls.append(("grpc-deadline-%d" % i, "Slow",
                      [("x-b3-traceid", "463ac35c9f6413ad48485a3953bb6124"), ("x-b3-spanid", sid),
                       ("x-b3-sampled", "1")], 0.2,
                      [cases.ctx("b3-multi", "463ac35c9f6413ad48485a3953bb6124", sid, None, 1)],
                      4, None, {"deadline_exceeded": True,
                                "grpc_timeout_ns": [100000000, 250000000]}))
    for rid, meth, md, timeout, ctxs, want, wmsg, extra in calls:
        code, msg = call(meth, b"hello " + rid.encode(), md, timeout)
        if code != want or (wmsg is not None and msg != wmsg):
            sys.exit("drive.py: grpc %s: status %r %r, expected %r %r"
                     % (rid, code, msg, want, wmsg))
        headers = [(n, v.hex() if isinstance(v, bytes) else v) for n, v in md]
        r = grpc_req(rid, "python3-grpcio 1.51", "grpc-python", host, "spanfold.demo.Echo/" + meth,
                     headers, ctxs, want, wmsg, **extra)
        if any(n.endswith("-bin") for n, _ in md):
            r["bin_headers_hex"] = True  # values above are hex of the raw bytes sent
        if extra.get("deadline_exceeded"):
            # Filled in from the capture by wire_outcomes.py (see above).
            r["status"] = None
            r["grpc_status"] = None
        reqs.append(r)
    # A call the client cancels (RST_STREAM CANCEL) while the server still works on it: no
    # response ever comes, deterministic unlike the deadline race above.
    tpc = "00-%s-%s-01" % ("e" * 32, "f" * 16)
    fut = ch.unary_unary("/spanfold.demo.Echo/Slow").future(
        b"hello cancel", metadata=[("traceparent", tpc)], timeout=5.0)
    time.sleep(0.2)
    if not fut.cancel():
        sys.exit("drive.py: grpc cancel: the call had already finished")
    reqs.append(grpc_req("grpc-cancelled", "python3-grpcio 1.51", "grpc-python", host,
                         "spanfold.demo.Echo/Slow", [("traceparent", tpc)],
                         [cases.ctx("traceparent", "e" * 32, "f" * 16, None, 1)], None,
                         status=None, reset_code=8, cancelled=True,
                         grpc_timeout_ns=[4900000000, 5100000000]))
    time.sleep(1.2)  # the server's handler finishes; nothing more goes on the wire
    ch.close()

    # nghttp as a gRPC client: base64 grpc-trace-bin, unpadded and padded (SPECS §1.3).
    body = os.path.join(a.dir, "grpc-body.bin")
    msg = b"hello from nghttp"
    with open(body, "wb") as f:
        f.write(b"\x00" + len(msg).to_bytes(4, "big") + msg)
    b64 = base64.b64encode(gtb).decode()
    for rid, val in (("grpc-nghttp-b64-unpadded", b64.rstrip("=")),
                     ("grpc-nghttp-b64-padded", b64)):
        headers = [("content-type", "application/grpc"), ("te", "trailers"),
                   ("grpc-trace-bin", val)]
        argv = ["nghttp", "-nv", "-d", body]
        for n, v in headers:
            argv += ["-H", "%s: %s" % (n, v)]
        out = run(argv + ["http://%s/spanfold.demo.Echo/Say" % host]).stdout.decode()
        if "grpc-status: 0" not in out:
            sys.exit("drive.py: nghttp gRPC call %s: no grpc-status 0:\n%s" % (rid, out[-800:]))
        reqs.append(grpc_req(rid, "nghttp (gRPC by hand)", rid, host, "spanfold.demo.Echo/Say",
                             [("grpc-trace-bin", val)], [cases.GRPC_VALID], 0, None,
                             grpc_timeout_ns=None))
    return {"requests": reqs, "h2c_ports": [a.port]}


SNI = "sample.spanfold.test"
TLS13 = "TLS 1.3"


def tls_conn(label, client, server, cipher, alpn, early_clear, early_keys, resumed=False,
             psk_offered=False, sni=SNI, version=TLS13, **kw):
    """Expected TLS facts of one connection.  early_data: what the cleartext proves
    (none/offered/rejected/unknown) and what the key log shows (SPECS §3.4)."""
    c = {"label": label, "client": client, "server": server,
         "tls": {"version": version, "cipher": cipher, "sni": sni, "alpn": alpn,
                 "psk_offered": psk_offered, "resumed": resumed,
                 "early_data_cleartext": early_clear, "early_data_with_keylog": early_keys}}
    c["tls"].update(kw)
    return c


def tls_nginx(a):
    """curl over TLS 1.3 against nginx, one connection per cipher suite."""
    host = "%s:%d" % (SNI, a.port)
    keylog = os.path.join(a.dir, "tls-nginx.keylog")
    env = dict(os.environ, SSLKEYLOGFILE=keylog)
    bycase = {n: (h, c) for n, h, c in cases.all_cases()}
    reqs, conns = [], []
    plan = [
        ("tls-h2-aes256", "--http2", "TLS_AES_256_GCM_SHA384", "h2",
         [("tls-h2-get", "GET", "/t/tls-h2-get", 200, [], "tp-tracestate"),
          ("tls-h2-index", "GET", "/index.html", 200, [], None)]),
        ("tls-h1-chacha", "--http1.1", "TLS_CHACHA20_POLY1305_SHA256", "http/1.1",
         [("tls-h1-get", "GET", "/t/tls-h1-get", 200, [], "b3-single-128"),
          ("tls-h1-404", "GET", "/tls-missing", 404, [], None)]),
        ("tls-h2-aes128", "--http2", "TLS_AES_128_GCM_SHA256", "h2",
         [("tls-h2-post", "POST", "/post", 201, ["--data-binary", "tls body"], "uber-128")]),
    ]
    for label, ver, cipher, alpn, items in plan:
        # --next resets options: every URL carries them all (the connection is reused).
        c = Curl(["curl"], [ver, "--tlsv1.3", "--tls13-ciphers", cipher, "-k",
                            "--resolve", "%s:%d:127.0.0.1" % (SNI, a.port),
                            "-w", CURL_W])
        batch = []
        for rid, m, path, st, opts, case in items:
            headers, ctxs = bycase[case] if case else ([], [])
            if ver == "--http2":
                headers = lower_headers(headers)
            c.add("https://%s%s" % (host, path), opts, headers)
            batch.append(req(rid, "curl", label, m, host, path, st,
                             "h2" if alpn == "h2" else "http/1.1", headers, ctxs))
        curl_results(batch, c.run(env=env).stdout)
        reqs += batch
        conns.append(tls_conn(label, "curl 7.88", "nginx 1.22", cipher, alpn, "none", "none"))
    # KeyUpdate: s_client's "K" command (update_requested: both sides change keys) between
    # two requests on one connection; only traffic secret 0 is in the key log.
    tp1 = "00-%s-%s-01" % ("1" * 32, "2" * 16)
    tp2 = "00-%s-%s-01" % ("3" * 32, "4" * 16)
    r1 = ("GET /t/tls-before-keyupdate HTTP/1.1\r\nHost: %s\r\ntraceparent: %s\r\n\r\n"
          % (SNI, tp1)).encode()
    out = s_client(a, keylog, steps=[(r1, 0.5), (b"K\n", 0.5),
                                     (http_req("/t/tls-after-keyupdate", tp2), 0)])
    expect_client(out, ["KEYUPDATE"], "keyupdate")
    if out.count("HTTP/1.1 200") != 2:
        sys.exit("drive.py: keyupdate: expected two responses:\n" + out[-1500:])
    for rid, path, tp, tr, sp in (("tls-before-keyupdate", "/t/tls-before-keyupdate", tp1,
                                   "1" * 32, "2" * 16),
                                  ("tls-after-keyupdate", "/t/tls-after-keyupdate", tp2,
                                   "3" * 32, "4" * 16)):
        reqs.append(req(rid, "openssl s_client", "tls-keyupdate", "GET", SNI, path, 200,
                        "http/1.1", [("traceparent", tp)],
                        [cases.ctx("traceparent", tr, sp, None, 1)]))
    conns.append(tls_conn("tls-keyupdate", "openssl s_client", "nginx 1.22",
                          "TLS_AES_256_GCM_SHA384", None, "none", "none",
                          key_update="client, update_requested: both directions once"))
    return {"requests": reqs, "connections": conns, "keylog": "tls-nginx.keylog",
            "tls_ports": [a.port]}


def tls12_nginx(a):
    """curl over TLS 1.2 against nginx: AES-128-GCM (h2), ChaCha20-Poly1305 and AES-256-GCM
    (http/1.1), ECDHE-ECDSA (the certificate is P-256).  Key log lines: CLIENT_RANDOM."""
    host = "%s:%d" % (SNI, a.port)
    keylog = os.path.join(a.dir, "tls12-nginx.keylog")
    env = dict(os.environ, SSLKEYLOGFILE=keylog)
    bycase = {n: (h, c) for n, h, c in cases.all_cases()}
    reqs, conns = [], []
    plan = [
        ("tls12-h2-aes128", "--http2", "ECDHE-ECDSA-AES128-GCM-SHA256",
         "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "h2", "tp-tracestate"),
        ("tls12-h1-chacha", "--http1.1", "ECDHE-ECDSA-CHACHA20-POLY1305",
         "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "http/1.1", "b3-single-128"),
        ("tls12-h1-aes256", "--http1.1", "ECDHE-ECDSA-AES256-GCM-SHA384",
         "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "http/1.1", "datadog-128"),
    ]
    for label, ver, ossl, iana, alpn, case in plan:
        headers, ctxs = bycase[case]
        if ver == "--http2":
            headers = lower_headers(headers)
        path = "/t/" + label
        c = Curl(["curl"], [ver, "--tlsv1.2", "--tls-max", "1.2", "--ciphers", ossl, "-k",
                            "--resolve", "%s:%d:127.0.0.1" % (SNI, a.port), "-w", CURL_W])
        c.add("https://%s%s" % (host, path), [], headers)
        r = req(label, "curl", label, "GET", host, path, 200,
                "h2" if alpn == "h2" else "http/1.1", headers, ctxs)
        curl_results([r], c.run(env=env).stdout)
        reqs.append(r)
        conns.append(tls_conn(label, "curl 7.88", "nginx 1.22 (TLS 1.2 only)", iana, alpn,
                              "none", "none", version="TLS 1.2"))
    return {"requests": reqs, "connections": conns, "keylog": "tls12-nginx.keylog",
            "tls_ports": [a.port]}


def s_client(a, keylog, sess_in=None, sess_out=None, early=None, stdin=b"", wait_close=True,
             extra=(), steps=None):
    """One openssl s_client connection; returns its output.  With wait_close it reads
    until the server closes (nginx answers Connection: close)."""
    argv = ["openssl", "s_client", "-connect", "127.0.0.1:%d" % a.port, "-servername", SNI,
            "-tls1_3", "-keylogfile", keylog] + list(extra)
    if sess_in:
        argv += ["-sess_in", sess_in]
    if sess_out:
        argv += ["-sess_out", sess_out]
    if early:
        argv += ["-early_data", early]
    if wait_close and not steps:
        argv.append("-ign_eof")  # (it also turns off s_client's one-letter commands)
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    try:
        if stdin:
            p.stdin.write(stdin)
            p.stdin.flush()
        for data, pause in steps or ():
            p.stdin.write(data)  # one read() each: s_client looks at cbuf[0] for commands
            p.stdin.flush()
            time.sleep(pause)
        if steps:  # the server closes after the last request (Connection: close)
            try:
                p.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        if not wait_close:
            time.sleep(1.0)  # let the NewSessionTicket arrive before we close
        p.stdin.close()
        out = p.stdout.read()
        p.wait(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return out.decode(errors="replace")


def expect_client(out, what, label):
    for w in what:
        if w not in out:
            sys.exit("drive.py: %s: s_client output lacks %r:\n%s" % (label, w, out[-1500:]))


def http_req(path, tp):
    return ("GET %s HTTP/1.1\r\nHost: %s\r\ntraceparent: %s\r\nConnection: close\r\n\r\n"
            % (path, SNI, tp)).encode()


def start_server(argv, stdin=subprocess.DEVNULL):
    p = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p


def stop_server(p):
    p.terminate()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def listening(port):
    """Is a TCP socket listening on port?  Read from /proc, not by connecting: a probe
    connection would show up in the capture as an empty connection."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):  # grpc-core listens on a v6 socket
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if int(fields[1].split(":")[1], 16) == port and fields[3] == "0A":
                    return True
    return False


def wait_port(port):
    for _ in range(100):
        if listening(port):
            return
        time.sleep(0.05)
    sys.exit("drive.py: nothing listens on %d" % port)


def wait_port_free(port):
    for _ in range(100):
        if not listening(port):
            return
        time.sleep(0.05)
    sys.exit("drive.py: port %d still busy" % port)


def tls_0rtt_nginx(a):
    """0-RTT against nginx: accepted (twice: no anti-replay), rejected after a restart with
    a new ticket key (cleartext proves it), PSK accepted but early data refused (only the
    key log shows it).  nginx-0rtt-{A,B,C}.conf are written by record-samples.sh."""
    keylog = os.path.join(a.dir, "tls-0rtt-nginx.keylog")
    sess = os.path.join(a.dir, "nginx.sess")
    reqs, conns = [], []
    cipher = "TLS_AES_256_GCM_SHA384"  # s_client's default order

    def tp(i):
        return "00-%032x-%016x-01" % (0x0a770000 + i, 0x5e110000 + i)

    def r(rid, conn, path, i, status, early, delivered=True):
        return req(rid, "openssl s_client", conn, "GET", SNI, path, status, "http/1.1",
                   [("traceparent", tp(i))],
                   [cases.ctx("traceparent", "%032x" % (0x0a770000 + i),
                              "%016x" % (0x5e110000 + i), None, 1)],
                   early_data=early, delivered=delivered)

    def nginx(conf):
        p = start_server(["nginx", "-c", os.path.join(a.dir, conf)])
        wait_port(a.port)
        return p

    def early_file(name, data):
        f = os.path.join(a.dir, name)
        with open(f, "wb") as fh:
            fh.write(data)
        return f

    ng = nginx("nginx-0rtt-A.conf")  # early data on, ticket key 1
    out = s_client(a, keylog, sess_out=sess, stdin=http_req("/t/0rtt-prime", tp(1)))
    expect_client(out, ["New, TLSv1.3", "HTTP/1.1 200"], "prime")
    reqs.append(r("0rtt-prime", "0rtt-prime", "/t/0rtt-prime", 1, 200, False))
    conns.append(tls_conn("0rtt-prime", "openssl s_client", "nginx (early data on)", cipher,
                          None, "none", "none"))
    for label, path, i in (("0rtt-accepted", "/t/0rtt-accepted", 2),
                           ("0rtt-replayed", "/t/0rtt-replayed", 3)):
        ef = early_file(label + ".req", http_req(path, tp(i)))
        out = s_client(a, keylog, sess_in=sess, early=ef)
        expect_client(out, ["Reused, TLSv1.3", "Early data was accepted", "HTTP/1.1 200"], label)
        reqs.append(r(label, label, path, i, 200, True))
        conns.append(tls_conn(label, "openssl s_client", "nginx (early data on)", cipher, None,
                              "unknown", "accepted", resumed=True, psk_offered=True,
                              replay=(label == "0rtt-replayed"),
                              early_data_plaintext_bytes=len(http_req(path, tp(i))),
                              early_data_records=1))
    stop_server(ng)
    wait_port_free(a.port)

    # New ticket key: the ticket cannot be decrypted, full handshake, early data rejected.
    ng = nginx("nginx-0rtt-B.conf")
    ef = early_file("rej.req", http_req("/t/0rtt-rejected-early", tp(4)))
    out = s_client(a, keylog, sess_in=sess, early=ef,
                   stdin=http_req("/t/0rtt-rejected-retry", tp(5)))
    expect_client(out, ["New, TLSv1.3", "Early data was rejected", "HTTP/1.1 200"], "rejected")
    reqs.append(r("0rtt-rejected-early", "0rtt-rejected", "/t/0rtt-rejected-early", 4, None,
                  True, delivered=False))
    reqs.append(r("0rtt-rejected-retry", "0rtt-rejected", "/t/0rtt-rejected-retry", 5, 200, False))
    conns.append(tls_conn("0rtt-rejected", "openssl s_client", "nginx (new ticket key)", cipher,
                          None, "rejected", "rejected", psk_offered=True,
                          why="ServerHello has no pre_shared_key (full handshake)",
                          early_data_plaintext_bytes=len(http_req("/t/0rtt-rejected-early",
                                                                  tp(4))),
                          early_data_records=1))
    stop_server(ng)
    wait_port_free(a.port)

    # Same ticket key, early data off: PSK accepted, early data refused in EncryptedExtensions.
    ng = nginx("nginx-0rtt-C.conf")
    ef = early_file("ref.req", http_req("/t/0rtt-refused-early", tp(6)))
    out = s_client(a, keylog, sess_in=sess, early=ef,
                   stdin=http_req("/t/0rtt-refused-retry", tp(7)))
    expect_client(out, ["Reused, TLSv1.3", "Early data was rejected", "HTTP/1.1 200"], "refused")
    reqs.append(r("0rtt-refused-early", "0rtt-refused", "/t/0rtt-refused-early", 6, None, True,
                  delivered=False))
    reqs.append(r("0rtt-refused-retry", "0rtt-refused", "/t/0rtt-refused-retry", 7, 200, False))
    conns.append(tls_conn("0rtt-refused", "openssl s_client", "nginx (early data off)", cipher,
                          None, "unknown", "rejected", resumed=True, psk_offered=True,
                          why="PSK resumed, EncryptedExtensions without early_data",
                          early_data_plaintext_bytes=len(http_req("/t/0rtt-refused-early",
                                                                  tp(6))),
                          early_data_records=1))
    stop_server(ng)
    return {"requests": reqs, "connections": conns, "keylog": "tls-0rtt-nginx.keylog",
            "tls_ports": [a.port]}


def tls_0rtt_s_server(a):
    """openssl s_server -early_data (echo mode, no HTTP): prime, accepted, and the same
    ticket replayed (s_server's anti-replay: full handshake, rejected)."""
    keylog = os.path.join(a.dir, "tls-0rtt-s_server.keylog")
    sess = os.path.join(a.dir, "s_server.sess")
    r, w = os.pipe()  # s_server's stdin stays open: EOF would make it exit
    # -groups P-256: a client whose first key share is X25519 (the default) gets a
    # HelloRetryRequest; the other connections offer P-256 first.
    srv = start_server(["openssl", "s_server", "-accept", "127.0.0.1:%d" % a.port,
                        "-cert", os.path.join(a.dir, "server.crt"),
                        "-key", os.path.join(a.dir, "server.key"), "-tls1_3", "-early_data",
                        "-groups", "P-256"],
                       stdin=r)
    p256 = ["-groups", "P-256"]
    sess2 = os.path.join(a.dir, "s_server2.sess")
    os.close(r)
    conns = []
    cipher = "TLS_AES_256_GCM_SHA384"
    try:
        wait_port(a.port)
        out = s_client(a, keylog, sess_out=sess, stdin=b"hello from the first connection\n",
                       wait_close=False, extra=p256)
        expect_client(out, ["New, TLSv1.3"], "s_server prime")
        conns.append(tls_conn("s_server-prime", "openssl s_client", "openssl s_server", cipher,
                              None, "none", "none"))
        ef = os.path.join(a.dir, "early.txt")
        with open(ef, "wb") as f:
            f.write(b"early data: hello before the handshake\n")
        out = s_client(a, keylog, sess_in=sess, sess_out=sess2, early=ef, wait_close=False,
                       extra=p256)
        expect_client(out, ["Reused, TLSv1.3", "Early data was accepted"], "s_server accepted")
        conns.append(tls_conn("s_server-accepted", "openssl s_client", "openssl s_server",
                              cipher, None, "unknown", "accepted", resumed=True,
                              psk_offered=True, early_data_plaintext_bytes=39,
                              early_data_records=1))
        out = s_client(a, keylog, sess_in=sess, early=ef, wait_close=False, extra=p256)
        expect_client(out, ["New, TLSv1.3", "Early data was rejected"], "s_server replay")
        conns.append(tls_conn("s_server-replay-rejected", "openssl s_client", "openssl s_server",
                              cipher, None, "rejected", "rejected", psk_offered=True,
                              why="anti-replay: ticket already used, full handshake",
                              early_data_plaintext_bytes=39, early_data_records=1))
        # A fresh ticket, but the key share is X25519: HelloRetryRequest, early data rejected.
        out = s_client(a, keylog, sess_in=sess2, early=ef, wait_close=False)
        expect_client(out, ["Early data was rejected"], "s_server hrr")
        conns.append(tls_conn("s_server-hrr-rejected", "openssl s_client", "openssl s_server",
                              cipher, None, "rejected", "rejected", psk_offered=True, hrr=True,
                              resumed=("Reused, TLSv1.3" in out),
                              why="HelloRetryRequest (server wants P-256)",
                              early_data_plaintext_bytes=39, early_data_records=1))
    finally:
        os.close(w)
        stop_server(srv)
    return {"requests": [], "connections": conns, "keylog": "tls-0rtt-s_server.keylog",
            "tls_ports": [a.port]}


def tls_mtls_fail(a):
    """s_server requires a client certificate from ca1; s_client presents one from ca2."""
    keylog = os.path.join(a.dir, "tls-mtls-fail.keylog")
    d = a.dir
    srv = start_server(["openssl", "s_server", "-accept", "127.0.0.1:%d" % a.port,
                        "-cert", os.path.join(d, "server.crt"),
                        "-key", os.path.join(d, "server.key"),
                        "-tls1_3", "-Verify", "1", "-CAfile", os.path.join(d, "ca1.crt"), "-www",
                        "-verify_return_error"])
    try:
        wait_port(a.port)
        out = s_client(a, keylog, stdin=b"GET / HTTP/1.0\r\n\r\n",
                       extra=["-cert", os.path.join(d, "client2.crt"),
                              "-key", os.path.join(d, "client2.key")])
        expect_client(out, ["unknown ca"], "mtls")
    finally:
        stop_server(srv)
    conns = [tls_conn("mtls-fail", "openssl s_client (cert from an unknown CA)",
                      "openssl s_server -Verify", "TLS_AES_256_GCM_SHA384", None, "none", "none",
                      alert={"from": "server", "level": "fatal", "description": "unknown_ca",
                             "code": 48, "encrypted": True},
                      handshake_complete=False)]
    return {"requests": [], "connections": conns, "keylog": "tls-mtls-fail.keylog",
            "tls_ports": [a.port]}


def check_status(reqs, got):
    want = [r["status"] for r in reqs]
    if got != want:
        sys.exit("drive.py: statuses %r, expected %r" % (got, want))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--port2", type=int)
    ap.add_argument("--dir")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    res = globals()[a.what.replace("-", "_")](a)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
