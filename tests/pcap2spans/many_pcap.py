"""many_pcap.py - a capture big enough to take a while to ingest (concurrency tests).

    python3 many_pcap.py OUT N

writes N HTTP/1.1 exchanges, each on its own TCP connection (client 10.x.y.z, a
port per connection, server 10.0.0.2:80), packet i stamped 1700000000 s + i us.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tcp_pcap import _pkt  # noqa: E402


def main(path, n):
    s = [10, 0, 0, 2]
    out = [struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)]
    t = 0
    for k in range(n):
        c = [10, 1 + (k >> 16) % 200, (k >> 8) & 255, k & 255]
        port = 1024 + k % 60000
        req = b"GET /item/%d HTTP/1.1\r\nHost: shop\r\nb3: %016x-%016x-1\r\n\r\n" % (
            k, k + 1, k + 1)
        resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        cs, ss = 100, 500
        for p in (_pkt(c, s, port, 80, cs, 0, 0x02), _pkt(s, c, 80, port, ss, cs + 1, 0x12),
                  _pkt(c, s, port, 80, cs + 1, ss + 1, 0x18, req),
                  _pkt(s, c, 80, port, ss + 1, cs + 1 + len(req), 0x18, resp),
                  _pkt(c, s, port, 80, cs + 1 + len(req), ss + 1 + len(resp), 0x11),
                  _pkt(s, c, 80, port, ss + 1 + len(resp), cs + 2 + len(req), 0x11)):
            out.append(struct.pack("<IIII", 1700000000 + t // 1000000, t % 1000000, len(p),
                                   len(p)) + p)
            t += 1
    with open(path, "wb") as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
