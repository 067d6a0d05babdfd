"""hostile.py - the hostile strings of issue #20 and the inputs that carry them.

STRINGS is the one list: Markdown, HTML, CSV, XML and addr2line attacks, control bytes,
invalid UTF-8, very long names, bidirectional overrides, quotes of every kind.

  python3 hostile.py pcap OUT.pcap     one capture: per string an HTTP/1.1 exchange (the
                                       string, made request-line safe, as path and Host),
                                       an h2c stream (:path, :authority) and a gRPC call
                                       (method and grpc-message), 0.4 s apart
  python3 hostile.py folded DIR        DIR/base.folded and DIR/new.folded: stacks whose
                                       frames are the strings, each grown in new
  python3 hostile.py series FILE.csv   an inflect --series input: a time column, then one
                                       column per string (NUL and line breaks taken out: the
                                       reader refuses them, with their position), a step at
                                       row 40
  python3 hostile.py list              the strings, one hex line each
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pcap2spans"))
import tcp_pcap  # noqa: E402

STRINGS = [
    b"/md\n\n# H\n![x](http://evil.example/x.png)<img src=x onerror=alert(1)>",
    b"/md2\r\n## H2 <script>alert(1)</script> [link](javascript:alert(1))",
    b"/tick`|`forged|col|`` ``` x",
    b"/csv\",0,0,1,1,99999\nforged,0,0,1,1,99999",
    b"=HYPERLINK(\"http://evil.example\",\"x\")",
    b"+cmd|' /C calc'!A0",
    b"-2+3",
    b"@SUM(1+1)",
    b"/xml]]><!--x--><?pi?>&amp;&#0;\xef\xbf\xbe\xef\xbf\xbf",
    b"/quote'it's\"double\"'",
    b"/ctl\x00\x01\x07\x08\x0b\x0c\x1b[31mred\x7f\xc2\x85",
    b"/bad\xff\xfe\xc0\xaf\xed\xa0\x80\xf8\x88\x80\x80\x80utf8",
    b"/rtl\xe2\x80\xaeevil\xe2\x80\xac\xe2\x81\xa6iso\xe2\x81\xa9",
    b"/long-" + b"\xc3\xa9" * 59 + b"\xe2\x82\xac" * 30 + b"x" * 200,
    b"/mail a@b.example www.evil.example http://evil.example @team #1",
    b"(@/etc/passwd)",
    b"-e /etc/passwd",
    b"/gp`echo pwned > gp-pwned`@x $(touch sh-pwned) ; ! touch bang-pwned",
    b"/\\|backslash\\\\|pipe",
    b"/{{tmpl}}$x%s%n\\u0000\\x00",
]


def _hpack_int(v, prefix, first=0):
    mx = (1 << prefix) - 1
    if v < mx:
        return bytes([first | v])
    out = [first | mx]
    v -= mx
    while v >= 128:
        out.append(v % 128 + 128)
        v //= 128
    out.append(v)
    return bytes(out)


def _hpack(headers):
    """A header block of literals without indexing, new names, no Huffman."""
    out = b""
    for k, v in headers:
        out += b"\x00" + _hpack_int(len(k), 7) + k + _hpack_int(len(v), 7) + v
    return out


def _frame(ftype, flags, stream, payload):
    return struct.pack("!I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(
        "!I", stream) + payload


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = _frame(4, 0, 0, b"")
SETTINGS_ACK = _frame(4, 1, 0, b"")


def h1_safe(s):
    """The string as an HTTP/1.1 request target: no space, CR, LF or NUL."""
    for c in b" \r\n\t\x00":
        s = s.replace(bytes([c]), b"_")
    return s if s.startswith(b"/") else b"/" + s


def exchanges(s):
    """(request bytes, response bytes) of the three exchanges that carry s."""
    p = h1_safe(s)
    host = p[1:40] or b"h"
    yield (b"GET " + p + b" HTTP/1.1\r\nHost: " + host + b"\r\n\r\n",
           b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    req = _hpack([(b":method", b"GET"), (b":scheme", b"http"), (b":path", s),
                  (b":authority", s[:60])])
    yield (PREFACE + SETTINGS + _frame(1, 5, 1, req),
           SETTINGS + SETTINGS_ACK + _frame(1, 5, 1, _hpack([(b":status", b"404")])))
    req = _hpack([(b":method", b"POST"), (b":scheme", b"http"),
                  (b":path", b"/hostile.Svc/" + s), (b":authority", b"grpc.example"),
                  (b"content-type", b"application/grpc"), (b"te", b"trailers")])
    msg = b"\x00\x00\x00\x00\x00"
    resp = (_frame(1, 4, 1, _hpack([(b":status", b"200"), (b"content-type", b"application/grpc")]))
            + _frame(0, 0, 1, msg)
            + _frame(1, 5, 1, _hpack([(b"grpc-status", b"13"), (b"grpc-message", s)])))
    yield (PREFACE + SETTINGS + _frame(1, 4, 1, req) + _frame(0, 1, 1, msg),
           SETTINGS + SETTINGS_ACK + resp)


def write_pcap(path):
    c, srv = [10, 0, 0, 1], [10, 0, 0, 2]
    out = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
    k = 0
    for s in STRINGS:
        for req, resp in exchanges(s):
            port, cs, ss = 20000 + k, 1000, 5000
            pkts = [tcp_pcap._pkt(c, srv, port, 80, cs, 0, 0x02),
                    tcp_pcap._pkt(srv, c, 80, port, ss, cs + 1, 0x12),
                    tcp_pcap._pkt(c, srv, port, 80, cs + 1, ss + 1, 0x10),
                    tcp_pcap._pkt(c, srv, port, 80, cs + 1, ss + 1, 0x18, req),
                    tcp_pcap._pkt(srv, c, 80, port, ss + 1, cs + 1 + len(req), 0x18, resp),
                    tcp_pcap._pkt(c, srv, port, 80, cs + 1 + len(req), ss + 1 + len(resp), 0x11),
                    tcp_pcap._pkt(srv, c, 80, port, ss + 1 + len(resp), cs + 2 + len(req), 0x11)]
            t_us = k * 400000
            for i, p in enumerate(pkts):
                t = t_us + i * 1000 * (1 + k % 7)
                out += struct.pack("<IIII", 1700000000 + t // 1000000, t % 1000000, len(p),
                                   len(p)) + p
            k += 1
    with open(path, "wb") as f:
        f.write(out)


def write_folded(d):
    with open(os.path.join(d, "base.folded"), "wb") as b, \
            open(os.path.join(d, "new.folded"), "wb") as n:
        b.write(b"main;idle 1000\n")  # gone in new: every other frame grows
        for i, s in enumerate(STRINGS):
            # a frame holds no ';' (it separates frames) and no line break
            fr = s.replace(b";", b":").replace(b"\n", b" ").replace(b"\r", b" ")
            b.write(b"main;" + fr + b" %d\n" % (10 + i))
            n.write(b"main;" + fr + b" %d\n" % (40 + 3 * i))


def write_series(path):
    names = [s.replace(b"\x00", b"").replace(b"\n", b" ").replace(b"\r", b" ") for s in STRINGS]
    rows = [b"t," + b",".join(b'"' + n.replace(b'"', b'""') + b'"' for n in names)]
    for i in range(80):
        rows.append(b",".join([b"%d" % i] + [b"%d" % ((10 if i < 40 else 30) + j)
                                             for j in range(len(names))]))
    with open(path, "wb") as f:
        f.write(b"\n".join(rows) + b"\n")


if __name__ == "__main__":
    if sys.argv[1] == "pcap":
        write_pcap(sys.argv[2])
    elif sys.argv[1] == "folded":
        write_folded(sys.argv[2])
    elif sys.argv[1] == "series":
        write_series(sys.argv[2])
    else:
        for s in STRINGS:
            print(s.hex())
