#!/usr/bin/env python3
"""rpc_cases.py OUT.pcap: one HTTP/1.1 keep-alive connection of JSON-RPC exchanges, good
and hostile, for t_mcp.sh.  Each exchange is numbered in the comments; the test states
what each must give.  Segments are 200 bytes (bodies and events cross them)."""
import gzip
import json
import sys
import zlib

sys.path.insert(0, __import__("os").path.dirname(__file__))
import tcp_pcap  # noqa: E402


def post(body, ctype=b"application/json", session=None, chunked=False, enc=None, tp=None):
    h = b"POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Type: " + ctype + b"\r\n"
    if tp:
        h += b"traceparent: " + tp + b"\r\n"
    if enc:
        h += b"Content-Encoding: " + enc + b"\r\n"
    if session:
        h += b"Mcp-Session-Id: " + session + b"\r\n"
    if chunked:
        mid = len(body) // 2
        parts = [body[:mid], body[mid:]]
        enc = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
        return h + b"Transfer-Encoding: chunked\r\n\r\n" + enc
    return h + b"Content-Length: %d\r\n\r\n" % len(body) + body


def resp(body, ctype=b"application/json", status=b"200 OK", enc=None):
    return (b"HTTP/1.1 " + status + b"\r\nContent-Type: " + ctype +
            (b"\r\nContent-Encoding: " + enc if enc else b"") +
            b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)


def j(**m):
    m["jsonrpc"] = "2.0"
    return json.dumps(m).encode()


def sse(*msgs):
    return b"".join(b"event: message\ndata: " + m + b"\n\n" for m in msgs)


ex = [
    # 1 a good call, chunked request: one span "ping", answered
    (post(j(id=1, method="ping"), chunked=True), resp(j(id=1, result={}))),
    # 2 malformed (truncated JSON naming jsonrpc): a flagged span; its neighbours intact
    (post(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{'), resp(b"")),
    # 3 a response to an id never asked: "request not seen"
    (post(j(method="notifications/initialized")), resp(j(id=99, result={}))),
    # 4 nesting 1,000 deep: flagged, no crash
    (post(b'{"jsonrpc":"2.0","id":4,"method":"x","params":' + b"[" * 1000 + b"]" * 1000 +
          b"}"), resp(j(id=4, result={}))),
    # 5 a batch of three, answered out of order as an event stream: three spans
    (post(b"[" + b",".join(j(id=i, method="m%d" % i) for i in (10, 11, 12)) + b"]"),
     resp(sse(j(id=12, result={}), j(id=10, error={"code": -32000, "message": "busy"}),
              j(id=11, result={"isError": True})), ctype=b"text/event-stream")),
    # 6 ids of every JSON type the spec allows: "s" and 5 and 5 as text are three calls
    (post(b"[" + j(id="s", method="a") + b"," + j(id=5, method="b") + b"," +
          j(id="5", method="c") + b"]"),
     resp(b"[" + j(id="5", result={}) + b"," + j(id="s", result={}) + b"," +
          j(id=5, result={}) + b"]")),
    # 7 duplicate member, invalid UTF-8: two flagged spans
    (post(b'{"jsonrpc":"2.0","id":7,"method":"a","method":"b"}'),
     resp(b'{"jsonrpc":"2.0","id":70,"result":"\xc3\x28"}')),
    # 8 plain JSON that is not JSON-RPC: nothing, no flag
    (post(b'{"query":"x"}'), resp(b'{"rows":[1,2]}')),
    # 9 sampling parameters and a _meta trace context, the response in an SSE stream
    (post(j(id=9, method="sampling/createMessage",
            params={"temperature": 0.25, "maxTokens": 64, "stopSequences": ["x"],
                    "modelPreferences": {"hints": [{"name": "claude"}]},
                    "_meta": {"traceparent":
                              "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}),
          session=b"sess-1"),
     resp(sse(j(method="notifications/progress", params={"progress": 1}),
              j(id=9, result={"model": "m"})), ctype=b"text/event-stream")),
    # 10 a request never answered (the response is a 202): "no response" at the end
    (post(j(id=10, method="tools/call", params={"name": "slow"}), session=b"sess-1"),
     b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"),
    # 11 a deflate (zlib) request answered by a gzip response: one call, "zipped"
    (post(zlib.compress(j(id=11, method="tools/call", params={"name": "zipped"})), enc=b"deflate"),
     resp(gzip.compress(j(id=11, result={})), enc=b"gzip")),
    # 12 a gzip bomb: 64 MiB of spaces in a few KB, past --max-rpc-bytes 16 MiB: an event
    (post(j(id=12, method="bomb")), resp(gzip.compress(b" " * (64 << 20)), enc=b"gzip")),
    # 13 a coding not known: an event, the call stays unanswered
    (post(j(id=13, method="lzw")), resp(b"\x1f\x9d\x90", enc=b"compress")),
    # 14 trace context on the HTTP request only: the call is the exchange's child in exports
    (post(j(id=14, method="tools/call", params={"name": "traced"}),
          tp=b"00-11111111111111111111111111111111-2222222222222222-01"),
     resp(j(id=14, result={}))),
]

f = tcp_pcap.Flow(mss=200)
f.handshake()
for req, rsp in ex:
    f.send(True, req)
    f.send(False, rsp)
f.fin(True)
f.fin(False)
f.write(sys.argv[1])
