#!/usr/bin/python3
"""Assemble samples/pcap/MANIFEST.json from what scripts/record-samples.sh recorded.

  manifest.py WORKDIR OUTDIR

Reads WORKDIR/part-<traffic>.json (written by drive.py / the TLS steps: what each client
sent and what it must parse to) and WORKDIR/port-<traffic> (server ports), describes every
capture in OUTDIR (format, link type, size, sha256, packets) and writes OUTDIR/MANIFEST.json.
"""
import hashlib
import json
import os
import subprocess
import sys

# file -> (traffic it holds, container, link type, timestamp resolution, same spans as, how)
FILES = {
    "http1.pcap": ("http1", "pcap", "EN10MB", "us", None, None),
    "http1.pcapng": ("http1", "pcapng", "EN10MB", "us", "http1.pcap", "exact"),
    "http1-nsec.pcap": ("http1", "pcap", "EN10MB", "ns", "http1.pcap", "exact"),
    "http1-cooked.pcap": ("http1", "pcap", "LINUX_SLL", "us", "http1.pcap", "except-timestamps"),
    "http1-cooked2.pcap": ("http1", "pcap", "LINUX_SLL2", "us", "http1.pcap", "except-timestamps"),
    "h2c.pcap": ("h2c", "pcap", "EN10MB", "us", None, None),
    "ipv6.pcap": ("ipv6", "pcap", "EN10MB", "us", None, None),
    "grpc.pcap": ("grpc", "pcap", "EN10MB", "us", None, None),
    "tls-nginx.pcap": ("tls-nginx", "pcap", "EN10MB", "us", None, None),
    "tls-nginx-dsb.pcapng": ("tls-nginx", "pcapng", "EN10MB", "us", "tls-nginx.pcap", "exact"),
    "tls12-nginx.pcap": ("tls12-nginx", "pcap", "EN10MB", "us", None, None),
    "tls-0rtt-nginx.pcap": ("tls-0rtt-nginx", "pcap", "EN10MB", "us", None, None),
    "tls-0rtt-s_server.pcap": ("tls-0rtt-s_server", "pcap", "EN10MB", "us", None, None),
    "tls-mtls-fail.pcap": ("tls-mtls-fail", "pcap", "EN10MB", "us", None, None),
}

NOTES = {
    "http1": "nginx 1.22 + curl 7.88 over HTTP/1.1: keep-alive, POST, gzip-chunked, 404, HEAD, "
             "every trace-context format, malformed contexts, three pipelined requests",
    "h2c": "nghttpd + nghttp/h2load/curl with HTTP/2 prior knowledge (many streams, "
           "CONTINUATION); curl --http2 Upgrade: h2c through nghttpx",
    "ipv6": "curl to nginx (HTTP/1.1) and nghttp to nghttpd (h2c) over ::1",
    "grpc": "python3-grpcio client and server (true-binary grpc-trace-bin, error status, "
            "deadlines) and nghttp sending base64 grpc-trace-bin",
    "tls-nginx": "nginx over TLS 1.3 with curl --http2 and --http1.1 (key log)",
    "tls12-nginx": "nginx over TLS 1.2 with curl: ECDHE-ECDSA AES-128-GCM (h2), "
                   "ChaCha20-Poly1305 and AES-256-GCM (http/1.1); CLIENT_RANDOM key log",
    "tls-0rtt-nginx": "openssl s_client 0-RTT requests against nginx: accepted, rejected by a "
                      "restart (new ticket key), PSK accepted but early data refused",
    "tls-0rtt-s_server": "openssl s_client -early_data against openssl s_server -early_data",
    "tls-mtls-fail": "openssl s_client with a client certificate from an unknown CA; the server "
                     "aborts the handshake with an alert",
}


def sh(*argv):
    return subprocess.run(argv, capture_output=True, text=True).stdout


def packets(path):
    out = sh("capinfos", "-c", "-M", path)
    for line in out.splitlines():
        if "Number of packets" in line:
            return int(line.split(":")[1].strip())
    return None


def versions():
    v = {}
    v["curl"] = sh("curl", "--version").split("\n")[0].split(" (")[0]
    v["nginx"] = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()
    v["nghttp2"] = sh("nghttp", "--version").strip()
    v["openssl"] = sh("openssl", "version").strip()
    v["tcpdump"] = sh("tcpdump", "--version").split("\n")[0]
    try:
        import grpc
        v["python3-grpcio"] = grpc.__version__
    except ImportError:
        pass
    return v


def main():
    work, out = sys.argv[1], sys.argv[2]
    parts, ports = {}, {}
    for name in os.listdir(work):
        if name.startswith("part-") and name.endswith(".json"):
            with open(os.path.join(work, name)) as f:
                parts[name[5:-5]] = json.load(f)
        elif name.startswith("port-"):
            with open(os.path.join(work, name)) as f:
                ports[name[5:]] = [int(x) for x in f.read().split()]
    files = []
    for fname, (traffic, container, link, res, same, how) in FILES.items():
        path = os.path.join(out, fname)
        if not os.path.exists(path) or traffic not in parts:
            continue
        part = parts[traffic]
        with open(path, "rb") as f:
            data = f.read()
        e = {
            "file": fname, "traffic": traffic, "description": NOTES[traffic],
            "container": container, "linktype": link, "ts_resolution": res,
            "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "packets": packets(path), "server_ports": ports.get(traffic, []),
            "h2c_ports": part.get("h2c_ports", ports.get(traffic, [])
                                  if traffic in ("h2c", "grpc", "ipv6") else []),
            "tls_ports": part.get("tls_ports", []),
            "keylog": part.get("keylog"),
            "keylog_embedded": fname.endswith("-dsb.pcapng"),
            "same_spans_as": same, "same_spans_how": how,
            "connections": part.get("connections", []),
            # A variant holds the same traffic: its requests are those of same_spans_as.
            "requests": part["requests"] if same is None else [],
        }
        files.append(e)
    m = {
        "about": "What was sent in each capture of samples/pcap and what a correct parser "
                 "must find. Written by scripts/record-samples.sh; see samples/README.md "
                 "and scripts/record/cases.py for the vocabulary.",
        "version": 1,
        "recorded_with": versions(),
        "files": files,
    }
    with open(os.path.join(out, "MANIFEST.json"), "w") as f:
        json.dump(m, f, indent=1, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
