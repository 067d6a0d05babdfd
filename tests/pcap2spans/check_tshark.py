#!/usr/bin/env python3
"""tshark's own dissection of the sample captures against pcap2spans --ndjson.

  check_tshark.py PCAP2SPANS SAMPLES_DIR      prints TAP on stdout

For each capture of samples/pcap/MANIFEST.json (format variants are covered by t_manifest),
tshark 4.0 dissects it (`-T json --no-duplicate-keys`, `-d tcp.port==N,http2` for the h2c
ports, `-o tls.keylog_file:` for TLS) into requests keyed by client port and the
HTTP/2 stream id, or the HTTP/1 method, path and occurrence on its connection.  Then:
  - every tshark request has a pcap2spans span with the same key, and the reverse;
  - method, path and status agree;
  - every trace-context header tshark shows is in a pcap2spans context's raw value (base64
    grpc-trace-bin decoded and compared as hex), and every context's raw value is made of
    headers tshark shows.  gRPC "true binary" values, which tshark 4.0 shows as "", are
    looked for in the raw HPACK block tshark shows for the stream.
Independently of pcap2spans: the manifest's requests (method, path, status, every trace
header as sent) are what tshark shows; for TLS captures the manifest's TLS facts (cipher, version,
SNI, ALPN, early data as cleartext and key log show it, HelloRetryRequest, alerts) are what
tshark's dissection with the key log shows, so the expectations are right.
"""
import base64
import json
import os
import subprocess
import sys

from check_manifest import Tap

TRACE_HEADERS = {"traceparent", "b3", "uber-trace-id", "x-amzn-trace-id", "baggage",
                 "grpc-trace-bin", "x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid",
                 "x-b3-sampled", "x-b3-flags", "x-datadog-trace-id", "x-datadog-parent-id",
                 "x-datadog-sampling-priority", "x-datadog-tags"}
SINGLE = {"traceparent": "traceparent", "b3-single": "b3", "uber-trace-id": "uber-trace-id",
          "x-amzn-trace-id": "x-amzn-trace-id", "baggage": "baggage",
          "grpc-trace-bin": "grpc-trace-bin"}
MULTI = {"b3-multi": "x-b3-", "datadog": "x-datadog-"}


def as_list(x):
    if x is None:
        return []
    return x if isinstance(x, list) else [x]


def find_key(obj, key):
    """First value of key anywhere in a tshark JSON tree."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            r = find_key(v, key)
            if r is not None:
                return r
    elif isinstance(obj, list):
        for v in obj:
            r = find_key(v, key)
            if r is not None:
                return r
    return None


def uri_path(uri):
    """Path and query of an absolute URI as tshark prints http.response_for.uri."""
    from urllib.parse import urlsplit
    u = urlsplit(uri)
    return u.path + ("?" + u.query if u.query else "")


def tshark_requests(path, decode_ports, keylog, server_ports):
    """Requests as tshark sees them, keyed like span_key(): HTTP/2 streams by stream id,
    HTTP/1 requests by method, path and occurrence on their connection (a request that was
    never answered, e.g. refused 0-RTT data, must not shift the others).  An HTTP/1 request
    answered with 101 (Upgrade: h2c) becomes HTTP/2 stream 1."""
    argv = ["tshark", "-r", path, "-T", "json", "--no-duplicate-keys",
            "-Y", "http || http2.header"]
    for p in decode_ports:
        argv += ["-d", "tcp.port==%d,http2" % p]
    if keylog:
        argv += ["-o", "tls.keylog_file:" + keylog]
    p = subprocess.run(argv, capture_output=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("tshark failed: %s" % p.stderr.decode(errors="replace")[-300:])
    pkts = json.loads(p.stdout.decode(errors="replace") or "[]")
    h1 = {}    # client_port -> [request records in order]
    h2 = {}    # (client_port, stream id) -> record
    for pkt in pkts:
        lay = pkt["_source"]["layers"]
        tcp = lay.get("tcp", {})
        frame = int(lay.get("frame", {}).get("frame.number", 0))
        sport, dport = int(tcp.get("tcp.srcport", 0)), int(tcp.get("tcp.dstport", 0))
        to_server = dport in server_ports
        cport = sport if to_server else dport
        for h in as_list(lay.get("http")):
            if not isinstance(h, dict):
                continue
            if h.get("http.request") == "1" or find_key(h, "http.request.method"):
                hdrs = []
                for line in as_list(h.get("http.request.line")):
                    name, _, val = line.rstrip("\r\n").partition(":")
                    hdrs.append((name.strip().lower(), val.strip()))
                h1.setdefault(cport, []).append({
                    "method": find_key(h, "http.request.method"),
                    "path": find_key(h, "http.request.uri"), "headers": hdrs, "frame": frame})
            elif h.get("http.response") == "1" or find_key(h, "http.response.code"):
                code = int(find_key(h, "http.response.code"))
                lst = [r for r in h1.get(cport, []) if "status" not in r]
                want = find_key(h, "http.response_for.uri")
                if want:  # tshark's own request/response pairing
                    lst = [r for r in lst if r["path"] == uri_path(want)] or lst
                if lst:
                    lst[0]["status"] = code
        for h2l in as_list(lay.get("http2")):
            for st in as_list(h2l.get("http2.stream") if isinstance(h2l, dict) else None):
                if not isinstance(st, dict) or "http2.header" not in st:
                    continue
                sid = int(st.get("http2.streamid", 0))
                rec = h2.setdefault((cport, "h2", sid), {"headers": []})
                if to_server:  # the HPACK block as sent, for values tshark shows as ""
                    for frag in as_list(st.get("http2.headers")) + \
                            as_list(st.get("http2.continuation.header")):
                        rec["block"] = rec.get("block", "") + frag.replace(":", "")
                for hd in as_list(st["http2.header"]):
                    name = hd.get("http2.header.name", "")
                    val = hd.get("http2.header.value", "")
                    if name == ":method":
                        rec["method"] = val
                        rec.setdefault("frame", frame)
                    elif name == ":path":
                        rec["path"] = val
                    elif name == ":status":
                        rec.setdefault("status", int(val))
                    elif to_server:
                        rec["headers"].append((name.lower(), val))
    out = {}
    for cport, lst in h1.items():
        seen = {}
        for r in lst:
            if r.get("status") == 101:  # h2c upgrade: the request is HTTP/2 stream 1
                up = h2.setdefault((cport, "h2", 1), {"headers": []})
                up.update(method=r["method"], path=r["path"], frame=r["frame"])
                up["headers"] = r["headers"] + up["headers"]
                continue
            k = (r["method"], r["path"])
            seen[k] = seen.get(k, 0) + 1
            out[(cport, "h1") + k + (seen[k],)] = r
    # HTTP/2 records with a request (not only a response or trailers).
    out.update({k: v for k, v in h2.items() if v.get("method")})
    return out


def span_keys(spans):
    """The same keys for pcap2spans spans."""
    out = {}
    seen = {}
    for s in sorted(spans, key=lambda s: (s.get("req_start_ns") or 0, s.get("stream_id") or 0)):
        cport = s.get("client_port")
        if s.get("proto") in ("h2", "grpc"):
            out[(cport, "h2", s.get("stream_id"))] = s
        else:
            k = (cport, s.get("method"), s.get("path"))
            seen[k] = seen.get(k, 0) + 1
            out[(cport, "h1", s.get("method"), s.get("path"), seen[k])] = s
    return out


def b64_hex(v):
    v = v.strip()
    return base64.b64decode(v + "=" * (-len(v) % 4)).hex()


def compare_contexts(key, span, rec, notes):
    d = []
    ctxs = [c for c in span.get("contexts") or [] if c.get("direction", "request") == "request"]
    raws = [(c.get("format"), c.get("raw") or "") for c in ctxs]
    shown = [(n, v) for n, v in rec["headers"] if n in TRACE_HEADERS]
    # Every trace header tshark shows is in some context's raw value.
    for n, v in shown:
        if n == "grpc-trace-bin":
            if v == "":
                # gRPC true binary (SPECS §8): tshark 4.0 shows "", so look for the bytes
                # pcap2spans reports in the HPACK block (a literal that is not Huffman-coded).
                notes["true-binary"] += 1
                got = [r.lower() for f, r in raws if f == "grpc-trace-bin"]
                if not got or not all(len(g) >= 20 and g in rec.get("block", "") for g in got):
                    d.append("%s: true-binary grpc-trace-bin: pcap2spans raw %r not found in "
                             "the HPACK block tshark shows" % (key, got))
                continue
            want = b64_hex(v)
            # raw is the value as sent (base64 text) or its bytes as hex: both agree.
            if not any(f == "grpc-trace-bin" and r.lower() in (want, v.lower()) for f, r in raws):
                d.append("%s: grpc-trace-bin %s (hex %s) not in pcap2spans raw %r"
                         % (key, v, want, [r for f, r in raws if f == "grpc-trace-bin"]))
            continue
        if not any(v in r for f, r in raws):
            d.append("%s: header %s: %r (tshark) is in no pcap2spans context raw %r"
                     % (key, n, v, [r for _, r in raws]))
    # Every single-header context's raw is made of what tshark shows.
    for f, r in raws:
        if f in SINGLE and f != "grpc-trace-bin":
            vals = [v for n, v in shown if n == SINGLE[f]]
            if not vals:
                d.append("%s: pcap2spans %s raw %r, tshark shows no %s header"
                         % (key, f, r, SINGLE[f]))
            elif len(vals) == 1 and r != vals[0]:
                d.append("%s: %s raw %r, tshark %r" % (key, f, r, vals[0]))
        elif f in MULTI:
            if not any(n.startswith(MULTI[f]) for n, _ in shown):
                d.append("%s: pcap2spans %s context, tshark shows no %s* header"
                         % (key, f, MULTI[f]))
    return d


def reqs_of(f, by_file):
    return f["requests"] or (by_file[f["same_spans_as"]]["requests"]
                             if f.get("same_spans_as") else [])


def check_manifest_requests(tap, f, treqs):
    """What the manifest says was sent is what tshark shows: every request (by method and
    path, in order), its status, and every trace header value as sent."""
    pool = {}
    for k, r in sorted(treqs.items(), key=lambda x: x[1].get("frame", 0)):
        pool.setdefault((r.get("method"), r.get("path")), []).append(r)
    d = []
    for m in f["requests"]:
        lst = pool.get((m["method"], m["path"]), [])
        if not lst:
            d.append("%s: tshark shows no %s %s" % (m["id"], m["method"], m["path"]))
            continue
        r = lst.pop(0)
        if m.get("status") is not None and r.get("status") != m["status"]:
            d.append("%s: status %r, tshark %r" % (m["id"], m["status"], r.get("status")))
        for n, v in m["trace_headers"]:
            vals = [tv for tn, tv in r["headers"] if tn == n.lower()]
            if n.endswith("-bin") and m.get("bin_headers_hex"):
                if "" in vals:  # true binary: tshark 4.0 shows "", the bytes are in the block
                    ok = v in r.get("block", "")
                else:
                    ok = any(b64_hex(tv) == v for tv in vals)
            else:
                ok = v in vals
            if not ok:
                d.append("%s: header %s: %r sent, tshark shows %r" % (m["id"], n, v, vals))
    tap.result(not d, "%s: the manifest's %d requests are what tshark shows"
               % (f["file"], len(f["requests"])), d[:12])


def check_file(tap, binary, sdir, f, tls_missing, by_file):
    path = os.path.join(sdir, f["file"])
    keylog = os.path.join(sdir, f["keylog"]) if f.get("keylog") else None
    tls = bool(f.get("tls_ports"))
    skip = "pcap2spans TLS layer not implemented in this build" if tls and tls_missing else None
    argv = [binary, "--ndjson", "--quiet"]
    if keylog and not f.get("keylog_embedded"):
        argv += ["--keylog", keylog]
    p = subprocess.run(argv + [path], capture_output=True, timeout=300)
    spans = [json.loads(x) for x in p.stdout.decode().splitlines() if x.strip()]
    # a failed handshake's own span (proto tls) is no request; check_manifest.py checks it
    spans = [s for s in spans if s.get("proto") != "tls"]
    try:
        treqs = tshark_requests(path, f.get("h2c_ports", []),
                                None if f.get("keylog_embedded") else keylog,
                                set(f.get("server_ports", [])))
    except (RuntimeError, ValueError) as e:
        tap.result(False, "%s: tshark dissects it" % f["file"], [str(e)])
        return
    tap.result(len(treqs) > 0 or not f["requests"],
               "%s: tshark finds %d requests" % (f["file"], len(treqs)),
               ["tshark found no request in a capture the manifest says has %d"
                % len(f["requests"])])
    if f["requests"]:
        check_manifest_requests(tap, f, treqs)
    pspans = span_keys(spans)
    # Early data the server refused was never answered: a span for it is optional.
    optional = {(r["method"], r["path"]) for r in reqs_of(f, by_file)
                if r.get("delivered") is False}
    miss = ["%s: tshark request %s %s has no pcap2spans span" % (k, r.get("method"), r.get("path"))
            for k, r in sorted(treqs.items(), key=lambda x: str(x[0]))
            if k not in pspans and (r.get("method"), r.get("path")) not in optional]
    extra = ["%s: pcap2spans span %s %s is not a request tshark shows" % (k, s.get("method"),
                                                                          s.get("path"))
             for k, s in sorted(pspans.items(), key=lambda x: str(x[0])) if k not in treqs]
    tap.result(not miss and not extra, "%s: same requests in tshark and pcap2spans" % f["file"],
               (miss + extra)[:12], skip=skip)
    d = []
    for k, rec in sorted(treqs.items(), key=lambda x: str(x[0])):
        s = pspans.get(k)
        if not s:
            continue
        for fld in ("method", "path", "status"):
            if rec.get(fld) != s.get(fld):
                d.append("%s: %s tshark %r, pcap2spans %r" % (k, fld, rec.get(fld), s.get(fld)))
    tap.result(not d, "%s: method, path and status agree with tshark" % f["file"], d[:12],
               skip=skip)
    notes = {"true-binary": 0}
    d = []
    for k, rec in sorted(treqs.items(), key=lambda x: str(x[0])):
        if k in pspans:
            d += compare_contexts(k, pspans[k], rec, notes)
    n_hdr = sum(1 for r in treqs.values() for n, _ in r["headers"] if n in TRACE_HEADERS)
    extra = " (%d true-binary grpc-trace-bin checked in the HPACK bytes)" \
        % notes["true-binary"] if notes["true-binary"] else ""
    tap.result(not d, "%s: %d trace headers agree with tshark%s" % (f["file"], n_hdr, extra),
               d[:12], skip=skip)


HRR_RANDOM = "cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c"
CIPHER_IDS = {"TLS_AES_128_GCM_SHA256": "0x1301", "TLS_AES_256_GCM_SHA384": "0x1302",
              "TLS_CHACHA20_POLY1305_SHA256": "0x1303",
              "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "0xc02b",
              "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "0xc02c",
              "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "0xcca9"}


def find_all(obj, key, out=None):
    out = [] if out is None else out
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                out += as_list(v)
            else:
                find_all(v, key, out)
    elif isinstance(obj, list):
        for v in obj:
            find_all(v, key, out)
    return out


def handshake_msgs(obj, out=None):
    """Every TLS handshake message (a dict with tls.handshake.type) in a tshark JSON tree."""
    out = [] if out is None else out
    if isinstance(obj, dict):
        if "tls.handshake.type" in obj:
            out.append(obj)
            return out
        for v in obj.values():
            handshake_msgs(v, out)
    elif isinstance(obj, list):
        for v in obj:
            handshake_msgs(v, out)
    return out


def tls_connections(path, keylog):
    """Per TCP connection, in order: what tshark 4.0 shows of the TLS handshake."""
    argv = ["tshark", "-r", path, "-T", "json", "--no-duplicate-keys",
            "-Y", "tls.handshake or tls.alert_message"]
    if keylog:
        argv += ["-o", "tls.keylog_file:" + keylog]
    p = subprocess.run(argv, capture_output=True, timeout=600)
    conns = {}
    for pkt in json.loads(p.stdout.decode(errors="replace") or "[]"):
        lay = pkt["_source"]["layers"]
        c = conns.setdefault(int(lay["tcp"]["tcp.stream"]), {"msgs": [], "alerts": []})
        for m in handshake_msgs(lay.get("tls")):
            c["msgs"].append({
                "type": int(m["tls.handshake.type"]),
                "random": str(m.get("tls.handshake.random", "")).replace(":", ""),
                "cipher": m.get("tls.handshake.ciphersuite"),
                "ext": [int(x) for x in find_all(m, "tls.handshake.extension.type")],
                "sni": (find_all(m, "tls.handshake.extensions_server_name") or [None])[0],
                "alpn": find_all(m, "tls.handshake.extensions_alpn_str"),
                "versions": find_all(m, "tls.handshake.extensions.supported_version")})
        c["alerts"] += [int(x) for x in find_all(lay.get("tls"), "tls.alert_message.desc")]
    return [conns[k] for k in sorted(conns) if any(m["type"] == 1 for m in conns[k]["msgs"])]


def tls_verdicts(c):
    """early_data as the cleartext proves it, and as the key log shows it (SPECS §3.4)."""
    ch = [m for m in c["msgs"] if m["type"] == 1]
    sh = [m for m in c["msgs"] if m["type"] == 2]
    ee = [m for m in c["msgs"] if m["type"] == 8]
    hrr = any(m["random"] == HRR_RANDOM for m in sh)
    real_sh = [m for m in sh if m["random"] != HRR_RANDOM]
    if 42 not in ch[0]["ext"]:
        return "none", "none", hrr
    if hrr or not real_sh or 41 not in real_sh[-1]["ext"]:
        clear = "rejected"
    else:
        clear = "unknown"
    keys = "accepted" if ee and 42 in ee[-1]["ext"] else "rejected" if ee or hrr else None
    return clear, keys, hrr


def check_manifest_tls(tap, sdir, f):
    """The manifest's TLS facts, checked against tshark's dissection (key log given): the
    expectations t_manifest holds pcap2spans to must themselves be what is on the wire."""
    path = os.path.join(sdir, f["file"])
    keylog = os.path.join(sdir, f["keylog"]) if f.get("keylog") and \
        not f.get("keylog_embedded") else None
    got = tls_connections(path, keylog)
    d = []
    if len(got) != len(f["connections"]):
        d.append("tshark sees %d TLS connections, the manifest lists %d"
                 % (len(got), len(f["connections"])))
    for c, g in zip(f["connections"], got):
        t = c["tls"]
        sh = [m for m in g["msgs"] if m["type"] == 2 and m["random"] != HRR_RANDOM]
        ch = [m for m in g["msgs"] if m["type"] == 1]
        ee = [m for m in g["msgs"] if m["type"] == 8]
        lab = c["label"]
        if not sh or sh[-1]["cipher"] != CIPHER_IDS[t["cipher"]]:
            d.append("%s: cipher %s, tshark %r" % (lab, t["cipher"], sh and sh[-1]["cipher"]))
        tls13 = bool(sh) and "0x0304" in sh[-1]["versions"]
        if tls13 != (t["version"] == "TLS 1.3"):
            d.append("%s: %s expected, ServerHello versions %r"
                     % (lab, t["version"], sh and sh[-1]["versions"]))
        if ch[0]["sni"] != t["sni"]:
            d.append("%s: SNI %r, tshark %r" % (lab, t["sni"], ch[0]["sni"]))
        # ALPN: in EncryptedExtensions for TLS 1.3, in the ServerHello before.
        sel = ee if tls13 else sh
        alpn = (sel[-1]["alpn"] or [None])[0] if sel else None
        if alpn != t["alpn"]:
            d.append("%s: ALPN %r, tshark (EncryptedExtensions) %r" % (lab, t["alpn"], alpn))
        clear, keys, hrr = tls_verdicts(g)
        if clear != t["early_data_cleartext"]:
            d.append("%s: early_data (cleartext) %r, tshark shows %r" % (lab,
                                                                       t["early_data_cleartext"],
                                                                       clear))
        if keys != t["early_data_with_keylog"]:
            d.append("%s: early_data (key log) %r, tshark shows %r" % (lab,
                                                                     t["early_data_with_keylog"],
                                                                     keys))
        if bool(t.get("hrr")) != hrr:
            d.append("%s: HelloRetryRequest %r, tshark %r" % (lab, bool(t.get("hrr")), hrr))
        if t.get("alert") and t["alert"]["code"] not in g["alerts"]:
            d.append("%s: alert %d expected, tshark shows %r" % (lab, t["alert"]["code"],
                                                              g["alerts"]))
    tap.result(not d, "%s: the manifest's TLS facts match tshark (%d connections)"
               % (f["file"], len(got)), d)


def main():
    binary, sdir = sys.argv[1], sys.argv[2]
    with open(os.path.join(sdir, "MANIFEST.json")) as fh:
        man = json.load(fh)
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    tls_missing = "not implemented" in help_text and "TLS" in help_text
    tap = Tap()
    by_file = {f["file"]: f for f in man["files"]}
    for f in man["files"]:
        if f.get("same_spans_as") and not f.get("keylog_embedded"):
            continue  # same traffic as its base file; t_manifest compares the spans
        check_file(tap, binary, sdir, f, tls_missing, by_file)
        if f.get("tls_ports") and f.get("connections"):
            check_manifest_tls(tap, sdir, f)
    tap.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
