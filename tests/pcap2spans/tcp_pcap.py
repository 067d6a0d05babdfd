"""tcp_pcap.py - tiny captures for the pcap2spans shell tests (write_exchange, Flow).

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


class Flow:
    """One TCP connection 10.0.0.1:cport -> 10.0.0.2:sport written packet by packet, for
    reconstructions of real traffic (see the tests that use it): each call appends one
    segment, carrying ACK with the other side's next sequence number unless told.

      f = Flow(); f.handshake()
      f.send(True, b"GET / ...")                 client data (split at mss)
      f.send(False, resp, lost=True)             the capture missed it: sequence advances
      f.ack(True)                                a bare ACK from the client
      f.raw(True, seq, data, flags)              any segment, sequence numbers not advanced
      f.write(path)                              classic pcap, 1 ms between packets
    """

    def __init__(self, cisn=100, sisn=500, cport=40000, sport=80, mss=1448):
        self.c, self.s = [10, 0, 0, 1], [10, 0, 0, 2]
        self.cport, self.sport, self.mss = cport, sport, mss
        self.nxt = {True: cisn, False: sisn}
        self.pkts = []

    def raw(self, c2s, seq, data=b"", flags=0x10, ack=None):
        if ack is None:
            ack = self.nxt[not c2s]
        src, dst = (self.c, self.s) if c2s else (self.s, self.c)
        sp, dp = (self.cport, self.sport) if c2s else (self.sport, self.cport)
        self.pkts.append(_pkt(src, dst, sp, dp, seq & 0xffffffff, ack & 0xffffffff, flags, data))

    def handshake(self):
        self.raw(True, self.nxt[True], flags=0x02, ack=0)
        self.nxt[True] += 1
        self.raw(False, self.nxt[False], flags=0x12)
        self.nxt[False] += 1
        self.raw(True, self.nxt[True])

    def send(self, c2s, data, lost=False, flags=0x18):
        for i in range(0, len(data), self.mss):
            piece = data[i:i + self.mss]
            if not lost:
                self.raw(c2s, self.nxt[c2s], piece, flags)
            self.nxt[c2s] += len(piece)

    def ack(self, c2s):
        self.raw(c2s, self.nxt[c2s])

    def fin(self, c2s):
        self.raw(c2s, self.nxt[c2s], flags=0x11)
        self.nxt[c2s] += 1

    def write(self, path):
        out = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
        for i, p in enumerate(self.pkts):
            out += struct.pack("<IIII", 1700000000 + i // 1000, (i % 1000) * 1000, len(p),
                               len(p)) + p
        with open(path, "wb") as f:
            f.write(out)
