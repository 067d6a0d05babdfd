#!/usr/bin/python3
"""Write down, from the capture itself, how each expired gRPC deadline ended on the wire.

  wire_outcomes.py PCAP H2C_PORT PART.json

Client and server time out at the same moment, so a call with an expired deadline ends
either with the server's trailers-only response (grpc-status 4) or with the client's
RST_STREAM(CANCEL), possibly followed by the server's response anyway.  tshark reads the
capture; every request of PART.json marked deadline_exceeded (in call order, matched to the
Slow streams with a short grpc-timeout in stream order) gets `wire_order`, and the status,
grpc_status, grpc_message that are on the wire for it, and reset_code when the client reset
the stream before the server's response.
"""
import json
import subprocess
import sys


def as_list(x):
    return [] if x is None else x if isinstance(x, list) else [x]


def main():
    pcap, port, part = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    p = subprocess.run(["tshark", "-r", pcap, "-d", "tcp.port==%d,http2" % port, "-T", "json",
                        "--no-duplicate-keys", "-Y", "http2"], capture_output=True, check=True)
    streams = {}  # (tcp stream, h2 stream) -> {"path", "timeout", "events": [...]}
    for pkt in json.loads(p.stdout):
        lay = pkt["_source"]["layers"]
        tcp = lay["tcp"]
        from_client = int(tcp["tcp.dstport"]) == port
        for h2 in as_list(lay.get("http2")):
            for st in as_list(h2.get("http2.stream")):
                if not isinstance(st, dict) or "http2.streamid" not in st:
                    continue
                key = (int(tcp["tcp.stream"]), int(st["http2.streamid"]))
                if key[1] == 0:
                    continue
                rec = streams.setdefault(key, {"events": []})
                typ = int(st.get("http2.type", -1))
                hdrs = {h.get("http2.header.name"): h.get("http2.header.value")
                        for h in as_list(st.get("http2.header"))}
                if typ == 1 and from_client:
                    rec["path"] = hdrs.get(":path")
                    rec["timeout"] = hdrs.get("grpc-timeout")
                elif typ == 1:
                    rec["events"].append(("server_headers", hdrs))
                elif typ == 3:
                    code = int(st.get("http2.rst_stream.error", -1))
                    rec["events"].append(("client_rst" if from_client else "server_rst", code))
    slow = [k for k, v in sorted(streams.items())
            if v.get("path") == "/spanfold.demo.Echo/Slow" and v.get("timeout", "").endswith("m")
            and int(v["timeout"][:-1]) < 1000]
    with open(part) as f:
        data = json.load(f)
    reqs = [r for r in data["requests"] if r.get("deadline_exceeded")]
    if len(reqs) != len(slow):
        sys.exit("wire_outcomes: %d deadline calls, %d matching streams" % (len(reqs), len(slow)))
    for r, key in zip(reqs, slow):
        ev = streams[key]["events"]
        kinds = [e[0] for e in ev]
        r["stream_id"] = key[1]
        hdr = next((e[1] for e in ev if e[0] == "server_headers"), None)
        if hdr is not None:
            r["status"] = int(hdr[":status"])
            r["grpc_status"] = int(hdr["grpc-status"])
            r["grpc_message"] = hdr.get("grpc-message")
        rst = next((e[1] for e in ev if e[0] == "client_rst"), None)
        # A client RST_STREAM that crossed the server's END_STREAM reset nothing: the stream
        # was already complete.  Only a reset while the stream was open is the span's.
        if rst is not None and (hdr is None or
                                kinds.index("client_rst") < kinds.index("server_headers")):
            r["reset_code"] = rst
        if "client_rst" in kinds and "server_headers" in kinds:
            first = "client RST_STREAM, then the server's trailers-only response"
            if kinds.index("server_headers") < kinds.index("client_rst"):
                first = "server's trailers-only response, then client RST_STREAM"
        elif "server_headers" in kinds:
            first = "server's trailers-only response only"
        elif "client_rst" in kinds:
            first = "client RST_STREAM only"
        else:
            first = "neither (capture incomplete?)"
        r["wire_order"] = first
    with open(part, "w") as f:
        json.dump(data, f, indent=1)
    for r in reqs:
        print("wire_outcomes: %s (stream %d): %s" % (r["id"], r["stream_id"], r["wire_order"]),
              file=sys.stderr)


if __name__ == "__main__":
    main()
