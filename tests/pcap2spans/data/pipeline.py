#!/usr/bin/env python3
"""Send three pipelined requests in one write, then read until the server closes."""
import socket
import sys

s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
reqs = (b"GET /plain HTTP/1.1\r\nHost: pipe\r\nX-B3-TraceId: 463ac35c9f6413ad48485a3953bb6124\r\n"
        b"X-B3-SpanId: a2fb4a1d1a96d312\r\nX-B3-Sampled: 1\r\n\r\n"
        b"HEAD /head HTTP/1.1\r\nHost: pipe\r\nuber-trace-id: 5f3f4c4f2a1b3c4d:6b7c8d9e0f1a2b3c:0:1\r\n\r\n"
        b"GET /chunked HTTP/1.1\r\nHost: pipe\r\nConnection: close\r\n"
        b"traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n"
        b"tracestate: congo=t61rcWkgMzE,rojo=00f067aa0ba902b7\r\n\r\n")
s.sendall(reqs)
while s.recv(65536):
    pass
s.close()
