#!/usr/bin/env python3
"""traffic_cases.py - captures of the classes of real traffic of issue #18, rebuilt.

  traffic_cases.py DIR      writes DIR/<case>.pcap and DIR/cases.json

Every capture is a faithful reconstruction, not a recording: the segments are those the
Linux stack and the named client and server put on the wire in that situation (sizes,
sequence and acknowledgement numbers, keep-alive probes at SND.NXT - 1, delayed ACKs),
written by tcp_pcap.Flow.  cases.json lists, per capture, what must come out of it
(checked by t_traffic.sh against pcap2spans, and against tshark's own decode of the same
capture by check_tshark.check_file) in the form check_traffic.py reads.
"""
import json
import os
import struct
import sys

import tcp_pcap

TP = "00-%032x-%016x-01"


def tp(i):
    return TP % (0x4bf92f3577b34da6a3ce929d00000000 + i, 0x00f067aa0b000000 + i)


def get(path, host="api.test", extra=b"", i=0):
    return (b"GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n"
            b"traceparent: %s\r\n" % (path.encode(), host.encode(), tp(i).encode())) + extra + b"\r\n"


def ok(body=b"ok\n"):
    return (b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nContent-Type: text/plain\r\n"
            b"Content-Length: %d\r\nConnection: keep-alive\r\n\r\n" % len(body)) + body


def big_headers(d):
    """nginx with large_client_header_buffers 4 128k and curl sending a 72 KB header
    section (session cookies), traceparent after them: the section spans 51 segments."""
    f = tcp_pcap.Flow(cport=41000, sport=8080)
    f.handshake()
    cookies = b"".join(b"Cookie: s%02d=%s\r\n" % (k, b"c" * 3590) for k in range(20))
    req = (b"GET /big HTTP/1.1\r\nHost: api.test\r\nUser-Agent: curl/7.88.1\r\n" + cookies +
           b"traceparent: " + tp(1).encode() + b"\r\n\r\n")
    assert 72000 < len(req) < 73000
    f.send(True, req)
    f.ack(False)
    f.send(False, ok())
    f.ack(True)
    f.fin(True)
    f.fin(False)
    f.ack(True)
    f.write(os.path.join(d, "big-headers.pcap"))
    return {"file": "big-headers.pcap", "server_ports": [8080],
            "spans": [{"path": "/big", "status": 200, "trace_id": tp(1)[3:35], "partial": 0}]}


def keepalive(d):
    """Captures that start on idle keep-alive connections (no handshake): a Windows-style
    probe (one 0x00 byte at SND.NXT - 1, repeated, each ACKed with SND.NXT) from the
    client, then its request; a long poll whose server (Linux, nginx so_keepalive) sends
    zero-length probes at SND.NXT - 1 before its response; a 1-byte probe from the server
    before the client's request."""
    f = tcp_pcap.Flow(cisn=7000, sisn=9000, cport=42001, sport=8080)
    for _ in range(2):
        f.raw(True, f.nxt[True] - 1, b"\0")  # 1-byte keep-alive probe
        f.ack(False)
    f.send(True, get("/ka1", i=11))
    f.send(False, ok())
    f.ack(True)
    f.write(os.path.join(d, "keepalive-1byte.pcap"))
    g = tcp_pcap.Flow(cisn=17000, sisn=19000, cport=42002, sport=8080)
    g.send(True, get("/ka2", i=12))  # a long poll: the server probes while it waits
    g.ack(False)
    for _ in range(2):
        g.raw(False, g.nxt[False] - 1)  # zero-length probe
        g.ack(True)
    g.send(False, ok())
    g.ack(True)
    g.write(os.path.join(d, "keepalive-0byte.pcap"))
    h = tcp_pcap.Flow(cisn=27000, sisn=29000, cport=42003, sport=8080)
    h.raw(False, h.nxt[False] - 1, b"\0")  # the server probes first
    h.ack(True)
    h.send(True, get("/ka3", i=13))
    h.send(False, ok())
    h.ack(True)
    h.write(os.path.join(d, "keepalive-server.pcap"))
    return [{"file": "keepalive-1byte.pcap", "server_ports": [8080],
             "what": "1-byte keep-alive probes, then a request",
             "spans": [{"path": "/ka1", "status": 200, "trace_id": tp(11)[3:35], "partial": 0}],
             "events": {"tcp_keepalive": 1}},
            {"file": "keepalive-0byte.pcap", "server_ports": [8080],
             "what": "a long poll: the server's zero-length probes at SND.NXT - 1, then its response",
             "spans": [{"path": "/ka2", "status": 200, "trace_id": tp(12)[3:35], "partial": 0}]},
            {"file": "keepalive-server.pcap", "server_ports": [8080],
             "what": "the server's 1-byte probe, then a request",
             "spans": [{"path": "/ka3", "status": 200, "trace_id": tp(13)[3:35], "partial": 0}],
             "events": {"tcp_keepalive": 1}}]


def lost_first_response(d):
    """curl fetching 1,000 URLs over one keep-alive connection (nginx): the capture lost
    the server's first response segment (tcpdump: "packets dropped by kernel"), and the
    client's next request acknowledges it, which proves it was delivered and will never
    be retransmitted.  Each request is sent only after its response arrived."""
    f = tcp_pcap.Flow(cisn=1000, sisn=900000, cport=43000, sport=8080)
    f.handshake()
    for i in range(1, 1001):
        f.send(True, get("/r%d" % i, i=100 + i))
        f.send(False, ok(b"response %d\n" % i), lost=(i == 1))
    f.ack(True)
    f.fin(True)
    f.fin(False)
    f.ack(True)
    f.write(os.path.join(d, "lost-first-response.pcap"))
    # /r2's response follows the gap: complete, but which request it answers is inferred
    # (the newest sent before it, on a connection that does not pipeline), so it is partial.
    spans = [{"path": "/r1", "status": None, "partial": 1, "trace_id": tp(101)[3:35],
              "partial_reason": "response lost in a capture gap"},
             {"path": "/r2", "status": 200, "partial": 1, "trace_id": tp(102)[3:35],
              "partial_reason": "gap before the response"}]
    spans += [{"path": "/r%d" % i, "status": 200, "partial": 0, "trace_id": tp(100 + i)[3:35]}
              for i in range(3, 1001)]
    return {"file": "lost-first-response.pcap", "server_ports": [8080],
            "what": "the first response lost, 1,000 requests", "spans": spans,
            "events": {"gap": 1}}


def pipeline_retransmit(d):
    """A pipelining client (one request per segment, without waiting) during loss
    recovery: the network lost the server's first response, so the client's ACKs stay at
    its start (duplicate ACKs) while the other 99 responses arrive behind the hole, until
    the retransmission fills it.  More than 64 requests wait meanwhile."""
    f = tcp_pcap.Flow(cisn=5000, sisn=600000, cport=43100, sport=8080)
    f.handshake()
    hole = f.nxt[False]
    first = ok(b"response 1\n")
    for i in range(1, 101):
        f.raw(True, f.nxt[True], get("/p%d" % i, i=300 + i), 0x18, ack=hole)
        f.nxt[True] += len(get("/p%d" % i, i=300 + i))
        if i == 1:
            f.nxt[False] += len(first)  # lost on the way: never captured
        else:
            f.send(False, ok(b"response %d\n" % i))
    f.raw(False, hole, first, 0x18)  # the retransmission
    f.ack(True)
    f.fin(True)
    f.fin(False)
    f.ack(True)
    f.write(os.path.join(d, "pipeline-retransmit.pcap"))
    spans = [{"path": "/p%d" % i, "status": 200, "partial": 0, "trace_id": tp(300 + i)[3:35]}
             for i in range(1, 101)]
    return {"file": "pipeline-retransmit.pcap", "server_ports": [8080],
            "what": "100 pipelined requests while the first response is retransmitted",
            "spans": spans, "tshark_unanswered": ["/p1"], "events": {"retransmit": 1},
            "tshark_why": "tshark 4.0 leaves the late retransmission as TCP Out-Of-Order"}


def h2_frame(ftype, flags, sid, payload):
    return struct.pack("!I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack("!I", sid) + payload


def hp_str(v):
    assert len(v) < 127
    return bytes([len(v)]) + v


def hp_lit(name, value):
    """Literal header field without indexing, new name (RFC 7541 6.2.2)."""
    return b"\x00" + hp_str(name) + hp_str(value)


def hp_lit_idx(idx, value):
    """Literal without indexing, name from the static table (index < 15)."""
    return bytes([idx]) + hp_str(value)


def grpc_call(cf, sf, sid, i, pad=None):
    """One unary gRPC call on stream sid: request HEADERS + DATA, response HEADERS, DATA,
    trailers.  Header blocks use static-table references and literals only (what grpc-go
    sends after a dynamic table size update to 0), so a capture that starts here is
    decodable by tshark as well.  pad: make the request HEADERS payload that long."""
    blk = (b"\x83\x86" + hp_lit_idx(4, b"/helloworld.Greeter/SayHello") +
           hp_lit_idx(1, b"grpc.test:50051") + hp_lit(b"content-type", b"application/grpc") +
           hp_lit(b"te", b"trailers") + hp_lit(b"traceparent", tp(i).encode()))
    if pad is not None:
        blk = blk[:2] + hp_lit_idx(4, b"/a.B/C") + hp_lit(b"content-type", b"application/grpc")
        blk += hp_lit(b"x", b"p" * (pad - len(blk) - 4))
        assert len(blk) == pad
    msg = b"\0\0\0\0\x07\x0a\x05world"
    cf.send(True, h2_frame(1, 0x4, sid, blk) + h2_frame(0, 0x1, sid, msg))
    sf_blk = b"\x88" + hp_lit(b"content-type", b"application/grpc")
    sf.send(False, h2_frame(1, 0x4, sid, sf_blk) + h2_frame(0, 0, sid, msg) +
            h2_frame(1, 0x5, sid, hp_lit(b"grpc-status", b"0")))


def grpc_mid(d):
    """Captures that start inside long-lived gRPC connections (grpcio client, h2c): the
    first frames seen are on streams 18,131,981 and 928,401, as in real ones; no
    preface, no SETTINGS.  And one whose first client segment holds a HEADERS frame of
    59 bytes and then a DATA frame: the 64-byte detection window cuts the second header."""
    out = []
    for first in (18131981, 928401):
        f = tcp_pcap.Flow(cisn=77000, sisn=88000, cport=56000 + first % 1000, sport=50051)
        f.send(False, h2_frame(8, 0, 0, b"\0\0\x10\0"))  # WINDOW_UPDATE from the server
        for k in range(3):
            grpc_call(f, f, first + 2 * k, 400 + k)
            f.ack(True)
        name = "grpc-mid-%d.pcap" % first
        f.write(os.path.join(d, name))
        out.append({"file": name, "server_ports": [50051], "h2c_ports": [50051],
                    "what": "capture starts at stream %d" % first,
                    "spans": [{"stream_id": first + 2 * k, "proto": "grpc", "status": 200,
                               "grpc_status": 0, "grpc_service": "helloworld.Greeter",
                               "trace_id": tp(400 + k)[3:35]} for k in range(3)]})
    f = tcp_pcap.Flow(cisn=97000, sisn=98000, cport=56999, sport=50051)
    grpc_call(f, f, 41, 410, pad=50)
    grpc_call(f, f, 43, 411)
    f.write(os.path.join(d, "h2-detect-cut.pcap"))
    out.append({"file": "h2-detect-cut.pcap", "server_ports": [50051], "h2c_ports": [50051],
                "what": "detection window cuts the second frame header",
                "spans": [{"stream_id": 41, "proto": "grpc", "status": 200, "grpc_status": 0},
                          {"stream_id": 43, "proto": "grpc", "status": 200, "grpc_status": 0,
                           "trace_id": tp(411)[3:35]}]})
    return out


CASES = [big_headers, keepalive, lost_first_response, pipeline_retransmit, grpc_mid]


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cases.json"), "w") as f:
        cases = []
        for c in CASES:
            r = c(d)
            cases += r if isinstance(r, list) else [r]
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
