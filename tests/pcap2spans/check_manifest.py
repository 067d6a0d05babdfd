#!/usr/bin/env python3
"""Compare pcap2spans --ndjson (and --db for TLS facts) with samples/pcap/MANIFEST.json.

  check_manifest.py PCAP2SPANS SAMPLES_DIR       prints TAP on stdout

For every capture: pcap2spans exits 0; every manifest request is found (by method and path,
several with one path in order of req_start_ns) with the right authority, status, proto,
stream id, gRPC fields, early_data, timing order and trace contexts (format, ids, parent,
sampled, flags, validity, reason, tracestate), the span's preferred context is the first
valid one in SPECS order; no span appears that the manifest does not list; variants of the
same traffic (pcapng, nanosecond pcap, Linux cooked v1/v2) give identical spans; TLS
connections have the manifest's facts; a capture cut at any of ~75 places (record boundary,
inside a record header, inside packet data) never crashes, exits 0 or 2 naming the packet,
and keeps every span completed before the cut.  A failing check prints "# file request: field:
expected X, got Y" lines under its "not ok".
"""
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

PREFERRED = ["traceparent", "b3-single", "b3-multi", "grpc-trace-bin", "uber-trace-id",
             "x-amzn-trace-id", "datadog"]
TLS_VERSIONS = {"TLS 1.3": {"tls 1.3", "tlsv1.3", "tls1.3", "0x0304", "772", "tls13"},
                "TLS 1.2": {"tls 1.2", "tlsv1.2", "tls1.2", "0x0303", "771", "tls12"}}
CIPHERS = {"TLS_AES_128_GCM_SHA256": "0x1301", "TLS_AES_256_GCM_SHA384": "0x1302",
           "TLS_CHACHA20_POLY1305_SHA256": "0x1303",
           "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "0xc02b",
           "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "0xc02c",
           "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "0xcca9"}


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def result(self, ok, name, diags=(), skip=None):
        self.n += 1
        if skip:
            print("ok %d - %s # SKIP %s" % (self.n, name, skip))
            return
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, name))
        if not ok:
            self.failed += 1
            for d in diags:
                print("#   " + d)

    def done(self):
        print("1..%d" % self.n)


def none_like(v):
    return v is None or v == "" or v == -1


def same(exp, got):
    if none_like(exp):
        return none_like(got)
    if isinstance(exp, bool):
        return got in (1, True) if exp else got in (0, False)
    return exp == got


def run_p2s(binary, path, keylogs, db=None):
    argv = [binary, "--quiet"]
    argv += ["--db", db] if db else ["--ndjson"]
    for k in keylogs:
        argv += ["--keylog", k]
    argv.append(path)
    p = subprocess.run(argv, capture_output=True, timeout=300)
    spans = []
    bad = []
    for i, line in enumerate(p.stdout.decode(errors="replace").splitlines()):
        try:
            spans.append(json.loads(line))
        except ValueError as e:
            bad.append("line %d is not JSON (%s): %.120s" % (i + 1, e, line))
    return p.returncode, p.stderr.decode(errors="replace"), spans, bad


def check_ctx(exp, got, where):
    d = []
    for k in ("trace_id", "span_id", "parent_span_id", "sampled", "valid"):
        if not same(exp.get(k), got.get(k)):
            d.append("%s %s: %s expected %r, got %r" % (where, exp["format"], k, exp.get(k),
                                                        got.get(k)))
    for k in ("flags", "debug", "trace_id_64", "tracestate"):
        if k in exp and not same(exp[k], got.get(k)):
            d.append("%s %s: %s expected %r, got %r" % (where, exp["format"], k, exp[k],
                                                        got.get(k)))
    if exp.get("reason_match"):
        err = got.get("error") or ""
        if not re.search(exp["reason_match"], err, re.I):
            d.append("%s %s: error %r does not give the reason (%s; /%s/)"
                     % (where, exp["format"], err, exp["reason"], exp["reason_match"]))
    return d


def check_contexts(r, span):
    where = r["id"]
    got = [c for c in span.get("contexts") or [] if c.get("direction", "request") == "request"]
    d = []
    if len(got) != len(r["contexts"]):
        d.append("%s: %d request contexts expected (%s), got %d (%s)"
                 % (where, len(r["contexts"]), ",".join(c["format"] for c in r["contexts"]),
                    len(got), ",".join(str(c.get("format")) for c in got)))
    used = set()
    for e in r["contexts"]:
        cand = [i for i, c in enumerate(got) if c.get("format") == e["format"] and i not in used]
        if not cand:
            d.append("%s: no %s context found (sent %r)" % (where, e["format"], r["trace_headers"]))
            continue
        used.add(cand[0])
        d += check_ctx(e, got[cand[0]], where)
    # The span's own columns hold the preferred valid context.
    pref = None
    for f in PREFERRED:
        pref = next((c for c in r["contexts"] if c["format"] == f and c["valid"]), None)
        if pref:
            break
    if pref:
        for k in ("trace_id", "span_id"):
            if span.get(k) != pref[k]:
                d.append("%s: span %s expected %r (preferred %s), got %r"
                         % (where, k, pref[k], pref["format"], span.get(k)))
        if span.get("ctx_format") != pref["format"]:
            d.append("%s: ctx_format expected %r, got %r" % (where, pref["format"],
                                                             span.get("ctx_format")))
    elif span.get("trace_id") not in (None, ""):
        d.append("%s: no valid context was sent, span trace_id is %r" % (where, span["trace_id"]))
    return d


def check_timing(r, s):
    t = [s.get(k) for k in ("req_start_ns", "req_end_ns", "resp_start_ns", "resp_end_ns")]
    if r.get("status") is None:
        return [] if t[0] else ["%s: req_start_ns missing" % r["id"]]
    if any(x in (None, 0) for x in t):
        return ["%s: timestamps missing: %r" % (r["id"], t)]
    d = []
    if not t[0] <= t[1]:
        d.append("%s: req_end < req_start: %r" % (r["id"], t))
    # A server that answers before reading the request body (server_may_answer_first) can
    # end its response before the request ends; otherwise req_end <= resp_end.
    if not r.get("server_may_answer_first") and not t[1] <= t[3]:
        d.append("%s: not req_start <= req_end <= resp_end: %r" % (r["id"], t))
    if not t[2] >= t[0]:
        d.append("%s: resp_start < req_start: %r" % (r["id"], t))
    if not t[2] <= t[3]:
        d.append("%s: resp_start > resp_end: %r" % (r["id"], t))
    return d


def check_request(r, s):
    d = []
    for k in ("method", "path", "authority", "proto"):
        if s.get(k) != r[k]:
            d.append("%s: %s expected %r, got %r" % (r["id"], k, r[k], s.get(k)))
    if r.get("status") is not None and s.get("status") != r["status"]:
        d.append("%s: status expected %r, got %r" % (r["id"], r["status"], s.get("status")))
    if r.get("cancelled") and s.get("status") not in (None, 0):
        d.append("%s: a call the client cancelled has a response (status %r)"
                 % (r["id"], s.get("status")))
    if r.get("delivered") is False and s.get("status") not in (None, 0):
        d.append("%s: early data the server refused has a response (status %r)"
                 % (r["id"], s.get("status")))
    # What the client itself reported (curl -w, the socket): its port and body sizes.
    for k in ("client_port", "req_bytes", "resp_bytes"):
        if k in r and s.get(k) != r[k]:
            d.append("%s: %s expected %r (as the client saw it), got %r" % (r["id"], k, r[k],
                                                                            s.get(k)))
    if "reset_code" in r and s.get("reset_code") != r["reset_code"]:
        d.append("%s: reset_code expected %r (RST_STREAM), got %r" % (r["id"], r["reset_code"],
                                                                      s.get("reset_code")))
    if "stream_id" in r and s.get("stream_id") != r["stream_id"]:
        d.append("%s: stream_id expected %r, got %r" % (r["id"], r["stream_id"],
                                                        s.get("stream_id")))
    if not same(bool(r.get("early_data")), s.get("early_data")):
        d.append("%s: early_data expected %r, got %r" % (r["id"], r.get("early_data"),
                                                         s.get("early_data")))
    if "grpc_service" in r:
        # grpc_status None: the outcome was racy (a deadline); its message is not asserted.
        keys = ["grpc_service", "grpc_method"] + (["grpc_message"]
                                                  if r.get("grpc_status") is not None else [])
        for k in keys:
            if not same(r[k], s.get(k)):
                d.append("%s: %s expected %r, got %r" % (r["id"], k, r[k], s.get(k)))
        if r.get("grpc_status") is not None and s.get("grpc_status") != r["grpc_status"]:
            d.append("%s: grpc_status expected %r, got %r" % (r["id"], r["grpc_status"],
                                                              s.get("grpc_status")))
    if "grpc_timeout_ns" in r:
        want, got = r["grpc_timeout_ns"], s.get("grpc_timeout_ns")
        if want is None and got not in (None, -1):
            d.append("%s: grpc_timeout_ns expected none, got %r" % (r["id"], got))
        if want is not None and not (isinstance(got, int) and want[0] <= got <= want[1]):
            d.append("%s: grpc_timeout_ns expected in %r, got %r" % (r["id"], want, got))
    return d + check_timing(r, s) + check_contexts(r, s)


def match(requests, spans):
    """Manifest request -> span: same method and path, in order of req_start_ns."""
    pool = {}
    for s in sorted(spans, key=lambda s: (s.get("req_start_ns") or 0, s.get("stream_id") or 0)):
        pool.setdefault((s.get("method"), s.get("path")), []).append(s)
    out = []
    for r in requests:
        lst = pool.get((r["method"], r["path"]), [])
        out.append((r, lst.pop(0) if lst else None))
    left = [s for lst in pool.values() for s in lst]
    return out, left


def check_connections(tap, f, pairs):
    """Requests the manifest puts on one connection share a connection_id; requests on
    different connections do not (TCP tracking, port reuse)."""
    ids = {}
    for r, s in pairs:
        if s is not None:
            ids.setdefault(r["connection"], set()).add(s.get("connection_id"))
    d = ["connection %s: its requests are on connections %s" % (lab, sorted(map(str, v)))
         for lab, v in sorted(ids.items()) if len(v) != 1]
    owner = {}
    for lab, v in sorted(ids.items()):
        for cid in v:
            if cid in owner:
                d.append("connection_id %s holds requests of %s and %s" % (cid, owner[cid], lab))
            owner[cid] = lab
    tap.result(not d, "%s: %d connections as the clients made them" % (f["file"], len(ids)), d)


def strip_times(s):
    return {k: v for k, v in s.items() if not k.endswith("_ns") or k == "grpc_timeout_ns"}


def compare_variant(tap, f, spans, base_spans):
    name = "%s: same spans as %s (%s)" % (f["file"], f["same_spans_as"], f["same_spans_how"])
    if f["same_spans_how"] == "exact":
        a, b = spans, base_spans
    else:
        a = [strip_times(s) for s in spans]
        b = [strip_times(s) for s in base_spans]
    diags = []
    if len(a) != len(b):
        diags.append("%d spans, %s has %d" % (len(a), f["same_spans_as"], len(b)))
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            keys = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
            diags.append("span %d (%s): differs in %s: %r vs %r" % (
                i + 1, y.get("path"), ",".join(keys), [x.get(k) for k in keys][:3],
                [y.get(k) for k in keys][:3]))
            if len(diags) > 8:
                break
    if f["same_spans_how"] != "exact" and not diags:
        for x, y in zip(spans, base_spans):
            for k in ("req_start_ns", "resp_end_ns"):
                if x.get(k) and y.get(k) and abs(x[k] - y[k]) > 50_000_000:
                    diags.append("%s %s: %r vs %r (> 50 ms apart)" % (y.get("path"), k, x[k], y[k]))
    tap.result(not diags, name, diags)


def pcap_records(data):
    """(offset, ts_ns, incl_len) of each record of a classic pcap file; None if not one."""
    magic = data[:4]
    order = {b"\xd4\xc3\xb2\xa1": ("<", 1000), b"\x4d\x3c\xb2\xa1": ("<", 1),
             b"\xa1\xb2\xc3\xd4": (">", 1000), b"\xa1\xb2\x3c\x4d": (">", 1)}.get(magic)
    if not order:
        return None
    import struct
    end, mul = order
    recs, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        recs.append((off, sec * 1_000_000_000 + frac * mul, incl))
        off += 16 + incl
    return recs


def check_cuts(tap, binary, f, path, full_spans, ncuts=25):
    """Cut the capture at record boundaries, inside record headers and inside packet data:
    never a crash; exit 0 at a boundary, 2 (damaged) inside a record, naming the packet;
    every span whose last byte precedes the cut is kept, identical."""
    with open(path, "rb") as fh:
        data = fh.read()
    recs = pcap_records(data)
    if not recs:
        return
    step = max(1, len(recs) // ncuts)
    cuts = [(10, None, True)]
    for i in range(0, len(recs), step):
        off, _, incl = recs[i]
        cuts += [(off, i, False), (off + 8, i, True), (off + 16 + incl // 2, i, True)]
    d = []
    for cut, idx, damaged in cuts:
        p = subprocess.run([binary, "--ndjson", "--quiet", "-"], input=data[:cut],
                           capture_output=True, timeout=120)
        err = p.stderr.decode(errors="replace")
        want_rc = 2 if damaged else 0
        if p.returncode != want_rc:
            d.append("cut at byte %d: exit %d, expected %d (%s)" % (cut, p.returncode, want_rc,
                                                                   err.strip()[:160]))
            if p.returncode < 0 or p.returncode > 2:
                continue
        if damaged and idx is not None and ("packet %d " % (idx + 1)) not in err:
            d.append("cut at byte %d (inside packet %d): error does not name it: %s"
                     % (cut, idx + 1, err.strip()[:160]))
        try:
            got = [json.loads(x) for x in p.stdout.decode().splitlines() if x.strip()]
        except ValueError as e:
            d.append("cut at byte %d: output is not NDJSON (%s)" % (cut, e))
            continue
        limit = recs[idx][1] if idx is not None else 0  # time of the first lost packet
        for s in full_spans:
            if s.get("resp_end_ns") and s["resp_end_ns"] < limit and s not in got:
                d.append("cut at byte %d: completed span %s %s (stream %s) lost or changed"
                         % (cut, s.get("method"), s.get("path"), s.get("stream_id")))
                break
        if len(d) > 10:
            break
    tap.result(not d, "%s: %d cuts: no crash, exit 0/2, packet named, completed spans kept"
               % (f["file"], len(cuts)), d)


SPAN_COLS = ("stream_id", "proto", "method", "authority", "path", "status", "grpc_service",
             "grpc_method", "grpc_status", "grpc_message", "grpc_timeout_ns", "req_start_ns",
             "req_end_ns", "resp_start_ns", "resp_end_ns", "req_bytes", "resp_bytes",
             "early_data", "partial", "reset_code", "trace_id", "span_id", "parent_span_id",
             "sampled", "ctx_format", "ctx_valid")
CTX_COLS = ("direction", "format", "raw", "trace_id", "span_id", "parent_span_id", "sampled",
            "debug", "flags", "trace_id_64", "tracestate", "valid", "error")


def check_db(tap, binary, f, path, spans):
    """--db writes the same spans and contexts that --ndjson prints (DESIGN: same names)."""
    d = []
    with tempfile.TemporaryDirectory() as td:
        db = os.path.join(td, "t.db")
        rc, err, _, _ = run_p2s(binary, path, [], db=db)
        if rc != 0:
            d.append("pcap2spans --db exit %d: %s" % (rc, err.strip()[:200]))
        try:
            con = sqlite3.connect(db)
            con.row_factory = sqlite3.Row
            rows = [dict(r) for r in con.execute(
                "SELECT s.*, c.client_port AS c_port FROM spans s "
                "LEFT JOIN connections c ON c.id = s.connection_id")]
            ctxs = {}
            for c in con.execute("SELECT * FROM contexts ORDER BY id"):
                ctxs.setdefault(c["span_row"], []).append(dict(c))
            con.close()
        except sqlite3.Error as e:
            tap.result(False, "%s: --db holds the NDJSON spans" % f["file"], [str(e)])
            return
    key = lambda x, port: (port, x.get("stream_id"), x.get("req_start_ns"))
    byk = {key(r, r["c_port"]): r for r in rows}
    if len(rows) != len(spans):
        d.append("%d span rows, %d NDJSON spans" % (len(rows), len(spans)))
    for s in spans:
        r = byk.get(key(s, s.get("client_port")))
        if r is None:
            d.append("NDJSON span %s %s (port %s, stream %s) has no row"
                     % (s.get("method"), s.get("path"), s.get("client_port"), s.get("stream_id")))
            continue
        diff = [c for c in SPAN_COLS if c in s and not same(s[c], r.get(c))]
        if diff:
            d.append("%s %s: columns differ %s: ndjson %r, db %r"
                     % (s.get("method"), s.get("path"), diff, [s[c] for c in diff],
                        [r.get(c) for c in diff]))
        got = ctxs.get(r["id"], [])
        want = s.get("contexts") or []
        if len(got) != len(want):
            d.append("%s: %d context rows, %d in NDJSON" % (s.get("path"), len(got), len(want)))
        for a, b in zip(want, got):
            diff = [c for c in CTX_COLS if c in a and not same(a[c], b.get(c))]
            if diff:
                d.append("%s %s context: %s differ: %r vs %r" % (s.get("path"), a.get("format"),
                                                                 diff, [a[c] for c in diff],
                                                                 [b.get(c) for c in diff]))
        if len(d) > 10:
            break
    tap.result(not d, "%s: --db holds the same %d spans and their contexts as --ndjson"
               % (f["file"], len(spans)), d)


def check_bad_keys(tap, binary, f, path, keylog):
    """TLS: a wrong or missing key never crashes and never yields garbage spans.  The
    wrong key log has the same client randoms with one hex digit of every secret changed."""
    d = []
    with tempfile.TemporaryDirectory() as td:
        bad = os.path.join(td, "wrong.keylog")
        with open(keylog) as src, open(bad, "w") as dst:
            for line in src:
                p = line.split()
                if len(p) == 3 and not line.startswith("#"):
                    p[2] = ("1" if p[2][0] == "0" else "0") + p[2][1:]
                    line = " ".join(p) + "\n"
                dst.write(line)
        for what, keys in (("wrong key log", [bad]), ("no key log", [])):
            rc, err, spans, junk = run_p2s(binary, path, keys)
            if rc not in (0, 1) or junk:
                d.append("%s: exit %d (%s)" % (what, rc, err.strip()[:160]))
            if spans:
                d.append("%s: %d spans from connections it cannot decrypt, e.g. %s %r"
                         % (what, len(spans), spans[0].get("method"), spans[0].get("path")))
            db = os.path.join(td, "t%d.db" % len(keys))
            run_p2s(binary, path, keys, db=db)
            try:
                con = sqlite3.connect(db)
                rows = con.execute("SELECT client_port, decrypted, decrypt_error FROM connections"
                                   " WHERE tls_version IS NOT NULL").fetchall()
                con.close()
            except sqlite3.Error as e:
                d.append("%s: database: %s" % (what, e))
                continue
            for port, dec, why in rows:
                if dec != 0 or not why:
                    d.append("%s: connection from port %s: decrypted %r, decrypt_error %r"
                             % (what, port, dec, why))
    tap.result(not d, "%s: wrong or missing key: no crash, no spans, decrypt_error set"
               % f["file"], d[:10])


def norm_version(v):
    return str(v).strip().lower() if v is not None else None


def check_tls(tap, binary, f, path, keylogs, with_keys):
    """TLS connection facts from the database (connections table)."""
    mode = "with key log" if with_keys else "cleartext only"
    with tempfile.TemporaryDirectory() as td:
        db = os.path.join(td, "t.db")
        rc, err, _, _ = run_p2s(binary, path, keylogs if with_keys else [], db=db)
        try:
            con = sqlite3.connect(db)
            con.row_factory = sqlite3.Row
            rows = [dict(r) for r in con.execute(
                "SELECT * FROM connections WHERE tls_version IS NOT NULL ORDER BY first_ns")]
            for row in rows:
                row["events"] = [dict(e) for e in con.execute(
                    "SELECT kind, detail FROM connection_events WHERE connection_id = ?",
                    (row["id"],))]
            con.close()
        except sqlite3.Error as e:
            tap.result(False, "%s (%s): connections table readable" % (f["file"], mode),
                       ["%s (pcap2spans exit %d: %s)" % (e, rc, err.strip()[:200])])
            return
    exp = f["connections"]
    tap.result(len(rows) == len(exp), "%s (%s): %d TLS connections" % (f["file"], mode, len(exp)),
               ["got %d TLS connections" % len(rows)])
    for c, row in zip(exp, rows):
        t = c["tls"]
        d = []
        if norm_version(row.get("tls_version")) not in TLS_VERSIONS[t["version"]]:
            d.append("tls_version expected %s, got %r" % (t["version"], row.get("tls_version")))
        cip = str(row.get("tls_cipher"))
        if cip not in (t["cipher"], CIPHERS[t["cipher"]]):
            d.append("tls_cipher expected %s, got %r" % (t["cipher"], row.get("tls_cipher")))
        if row.get("sni") != t["sni"]:
            d.append("sni expected %r, got %r" % (t["sni"], row.get("sni")))
        if not same(t["alpn"], row.get("alpn")):
            d.append("alpn expected %r, got %r" % (t["alpn"], row.get("alpn")))
        want = t["early_data_with_keylog"] if with_keys else t["early_data_cleartext"]
        if row.get("early_data") != want:
            d.append("early_data expected %r, got %r" % (want, row.get("early_data")))
        if with_keys and t.get("handshake_complete", True) and row.get("decrypted") != 1:
            d.append("decrypted expected 1, got %r (%s)" % (row.get("decrypted"),
                                                          row.get("decrypt_error")))
        # 0-RTT volume: the client's early application-data records as sent (visible in the
        # clear): each is plaintext + 1 content-type byte + 16-byte AEAD tag (OpenSSL does
        # not pad), so the manifest's plaintext size gives the record payload bytes.
        if "early_data_plaintext_bytes" in t:
            want_b = t["early_data_plaintext_bytes"] + 17 * t["early_data_records"]
            if row.get("early_data_bytes") != want_b:
                d.append("early_data_bytes expected %d (%d plaintext in %d record(s)), got %r"
                         % (want_b, t["early_data_plaintext_bytes"], t["early_data_records"],
                            row.get("early_data_bytes")))
            if "early_data_records" in row and row["early_data_records"] != \
                    t["early_data_records"]:
                d.append("early_data_records expected %d, got %r"
                         % (t["early_data_records"], row["early_data_records"]))
        # The context hash: sha256 as 64 lowercase hex, one per connection.
        h = row.get("ctx_hash") or ""
        if not re.fullmatch(r"[0-9a-f]{64}", h):
            d.append("ctx_hash expected 64 lowercase hex, got %r" % row.get("ctx_hash"))
        elif sum(1 for o in rows if o.get("ctx_hash") == h) > 1:
            d.append("ctx_hash %s shared with another connection" % h)
        # Alerts and HelloRetryRequest: a connection_events row, or named in tls_info.
        info = str(row.get("tls_info") or "")
        al = t.get("alert")
        if al and (with_keys or not al.get("encrypted")):
            evs = [str(e.get("detail")) for e in row["events"]
                   if "alert" in (str(e.get("kind")) + str(e.get("detail"))).lower()]
            if not any(al["description"] in x or re.search(r"\b%d\b" % al["code"], x)
                       for x in evs + ([info] if "alert" in info.lower() else [])):
                d.append("alert %s (%d) from the %s expected in connection_events or tls_info, "
                         "got %r / %r" % (al["description"], al["code"], al["from"],
                                          row["events"], info[:200]))
        if t.get("hrr") and not (any(str(e.get("kind")).lower() == "hrr" for e in row["events"])
                                 or re.search(r"hrr|helloretry|hello_retry", info, re.I)):
            d.append("HelloRetryRequest expected in connection_events (kind hrr) or tls_info")
        tap.result(not d, "%s (%s): connection %s" % (f["file"], mode, c["label"]),
                   ["%s: %s" % (c["label"], x) for x in d])


def main():
    binary, sdir = sys.argv[1], sys.argv[2]
    with open(os.path.join(sdir, "MANIFEST.json")) as fh:
        man = json.load(fh)
    tap = Tap()
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    tls_missing = "not implemented" in help_text and "TLS" in help_text
    by_file = {f["file"]: f for f in man["files"]}
    outputs = {}
    for f in man["files"]:
        path = os.path.join(sdir, f["file"])
        keylogs = [os.path.join(sdir, f["keylog"])] if f.get("keylog") and \
            not f.get("keylog_embedded") else []
        is_tls = bool(f.get("tls_ports"))
        with open(path, "rb") as fh:
            blob = fh.read()
        digest = hashlib.sha256(blob).hexdigest()
        tap.result(digest == f["sha256"] and len(blob) == f["bytes"],
                   "%s: the file is the one the manifest describes (sha256, size)" % f["file"],
                   ["sha256 %s, %d bytes; manifest %s, %d bytes (re-run scripts/record-samples.sh"
                    " rather than editing a capture)" % (digest, len(blob), f["sha256"],
                                                         f["bytes"])])
        rc, err, spans, bad = run_p2s(binary, path, keylogs)
        outputs[f["file"]] = spans
        tap.result(rc == 0 and not bad, "%s: pcap2spans --ndjson exits 0 with NDJSON" % f["file"],
                   ["exit %d; stderr: %s" % (rc, err.strip()[:300])] + bad[:3])
        skip = "pcap2spans TLS layer not implemented in this build" if is_tls and tls_missing \
            else None
        reqs = f["requests"] or (by_file[f["same_spans_as"]]["requests"]
                                 if f.get("same_spans_as") else [])
        # a connection that never completed its TLS handshake is a failed span of its own
        # (proto tls, path tls:SNI): expected where the manifest says so and the alert can
        # be read (in the clear, or with the key log)
        failed = [s for s in spans if s.get("proto") == "tls"]
        spans = [s for s in spans if s.get("proto") != "tls"]
        want = [c["tls"] for c in f.get("connections") or [] if c.get("tls") and
                c["tls"].get("handshake_complete") is False and c["tls"].get("alert") and
                (keylogs or f.get("keylog_embedded") or not c["tls"]["alert"]["encrypted"])]
        if want or failed:
            d = ["%d failed-handshake spans, the manifest has %d" % (len(failed), len(want))] \
                if len(failed) != len(want) else []
            for w, s in zip(want, failed):
                if s.get("path") != "tls:" + (w.get("sni") or "") or \
                        w["alert"]["description"] not in (s.get("partial_reason") or ""):
                    d.append("span %s %r, want tls:%s and alert %s" % (
                        s.get("path"), s.get("partial_reason"), w.get("sni"),
                        w["alert"]["description"]))
            tap.result(not d, "%s: each failed handshake is a span of its own (tls:SNI, the alert)"
                       % f["file"], d)
        pairs, left = match(reqs, spans)
        for r, s in pairs:
            name = "%s: %s %s %s" % (f["file"], r["id"], r["method"], r["path"])
            if s is None:
                if r.get("delivered") is False:
                    tap.result(True, name + " (refused early data: no span is fine)")
                else:
                    tap.result(False, name, ["%s: no span with method %s and path %s"
                                             % (r["id"], r["method"], r["path"])], skip=skip)
                continue
            tap.result(not check_request(r, s), name, check_request(r, s), skip=skip)
        if not skip and pairs:
            check_connections(tap, f, pairs)
        tap.result(not left, "%s: no span the manifest does not list" % f["file"],
                   ["unexpected span: %s %s %s (status %r)" % (s.get("connection_id"),
                                                              s.get("method"), s.get("path"),
                                                              s.get("status"))
                    for s in left[:10]], skip=skip)
        if f.get("same_spans_as"):
            compare_variant(tap, f, spans, outputs[f["same_spans_as"]])
        if not is_tls and f["container"] == "pcap":
            check_cuts(tap, binary, f, path, spans)
        if not is_tls and not f.get("same_spans_as"):
            check_db(tap, binary, f, path, spans)
        if f.get("connections") and is_tls:
            if tls_missing:
                tap.result(True, "%s: TLS connection facts" % f["file"],
                           skip="pcap2spans TLS layer not implemented in this build")
            else:
                if not f.get("keylog_embedded"):  # its keys travel inside the file
                    check_tls(tap, binary, f, path, keylogs, False)
                if keylogs or f.get("keylog_embedded"):
                    check_tls(tap, binary, f, path, keylogs, True)
                if keylogs:
                    check_bad_keys(tap, binary, f, path, keylogs[0])
    tap.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
