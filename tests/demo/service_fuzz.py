#!/usr/bin/env python3
"""Mutated HTTP/1.1 and h2c/gRPC requests against a running demo service, one connection
each (t_service.sh runs the service under ASan/UBSan).

    service_fuzz.py PORT SEED SECONDS

Seeds: two pipelined HTTP/1.1 requests with trace headers and a body; an h2c connection
(preface, SETTINGS, a gRPC call with grpc-trace-bin and its DATA, a plain request, a
HEADERS without END_STREAM).  Mutations: byte flips, deletions, insertions, truncation.
Prints the number of cases sent.
"""
import socket, sys, random, time
port=int(sys.argv[1]); rng=random.Random(int(sys.argv[2])); secs=float(sys.argv[3])
h1=b'GET /api/search HTTP/1.1\r\ntraceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nX-B3-TraceId: 463ac35c9f6413ad48485a3953bb6124\r\nX-B3-SpanId: a2fb4a1d1a96d312\r\nContent-Length: 3\r\n\r\nabcGET /api/checkout HTTP/1.1\r\nb3: 463ac35c9f6413ad48485a3953bb6124-a2fb4a1d1a96d312-1\r\n\r\n'
pre=b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'+b'\x00\x00\x00\x04\x00\x00\x00\x00\x00'
def lit(n,v): return b'\x00'+bytes([len(n)])+n+bytes([len(v)])+v
def hdrs(sid, path, grpc):
    blk=lit(b':method',b'POST')+lit(b':path',path)+lit(b':scheme',b'http')+lit(b':authority',b'x')
    if grpc: blk+=lit(b'content-type',b'application/grpc')+lit(b'grpc-trace-bin',b'AABLn5Ync7NNpqPOkp4ODkc2AQDwZ6oLqQK3AgE')
    return len(blk).to_bytes(3,'big')+b'\x01\x04'+sid.to_bytes(4,'big')+blk
def data(sid): return b'\x00\x00\x08\x00\x01'+sid.to_bytes(4,'big')+b'\x00\x00\x00\x00\x03abc'
h2=pre+hdrs(1,b'/demo.Catalog/Lookup',1)+data(1)+hdrs(3,b'/api/search',0)+data(3)+hdrs(5,b'/x',1)
seeds=[h1,h2]
n=0; t0=time.time()
while time.time()-t0<secs:
    s=bytearray(rng.choice(seeds))
    for _ in range(rng.randint(0,8)):
        if not s: break
        op=rng.random(); i=rng.randrange(len(s))
        if op<0.4: s[i]=rng.randrange(256)
        elif op<0.6: del s[i:i+rng.randint(1,20)]
        elif op<0.8: s[i:i]=bytes(rng.randrange(256) for _ in range(rng.randint(1,20)))
        else: s=s[:i]
    c=socket.create_connection(('127.0.0.1',port)); c.settimeout(1)
    try:
        c.sendall(bytes(s))
        if rng.random() < 0.9:
            c.shutdown(socket.SHUT_WR)
        c.recv(4096)
    except Exception: pass
    c.close(); n+=1
print("cases", n)
