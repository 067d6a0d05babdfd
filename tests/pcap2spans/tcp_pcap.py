"""tcp_pcap.py - tiny captures for the pcap2spans shell tests.

write_exchange(path, req, resp) writes a classic pcap (microsecond timestamps,
Ethernet) with one TCP connection 10.0.0.1:40000 -> 10.0.0.2:80: the handshake,
then `req` in one segment from the client and `resp` in one segment from the
server.  Packet i is stamped 1700000000 s + i ms, so the response is at
1700000000004000000 ns.
"""
import struct


def _csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def _pkt(src, dst, sport, dport, seq, ack, flags, data=b""):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0) + data
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, bytes(src),
                     bytes(dst))
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    return b"\0" * 12 + b"\x08\x00" + ip + tcp


def write_exchange(path, req, resp):
    c, s = [10, 0, 0, 1], [10, 0, 0, 2]
    cs, ss = 100, 500
    pkts = [_pkt(c, s, 40000, 80, cs, 0, 0x02), _pkt(s, c, 80, 40000, ss, cs + 1, 0x12),
            _pkt(c, s, 40000, 80, cs + 1, ss + 1, 0x10),
            _pkt(c, s, 40000, 80, cs + 1, ss + 1, 0x18, req),
            _pkt(s, c, 80, 40000, ss + 1, cs + 1 + len(req), 0x18, resp)]
    out = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
    for i, p in enumerate(pkts):
        out += struct.pack("<IIII", 1700000000, i * 1000, len(p), len(p)) + p
    with open(path, "wb") as f:
        f.write(out)
