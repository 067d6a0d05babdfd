#!/usr/bin/env python3
"""ch_lossy_proxy.py - an HTTP proxy in front of ClickHouse that loses answers, for
tests/spanfold/t_clickhouse_retry.sh.

    ch_lossy_proxy.py LISTEN_PORT SERVER_PORT LOG [answer|request]

Each request is forwarded to 127.0.0.1:SERVER_PORT whole and its answer read whole,
so the server has done the work; then the first time an INSERT (the same URL, but
for its query_id, and body) is seen, the answer is thrown away and the client's
connection closed, as when a network drops the answer.  With "request" such an
INSERT is not forwarded at all (the request is lost).  Every other answer is passed
on.  Each loss is one line in LOG ("lost <the query's first 60 bytes>").  Prints
"ready" when it listens.
"""
import hashlib
import socket
import socketserver
import sys
import threading
import urllib.parse

mode = sys.argv[4] if len(sys.argv) > 4 else "answer"
seen = set()
lock = threading.Lock()


def read_request(rf):
    """(head lines, body) of one request, or None at the end of the connection."""
    line = rf.readline()
    if not line:
        return None
    head = [line]
    while True:
        line = rf.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        head.append(line)
    n = 0
    for h in head[1:]:
        k, _, v = h.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v.strip())
    return head, n


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        while True:
            r = read_request(self.rfile)
            if r is None:
                return
            head, n = r
            keep = [h for h in head[1:] if h.split(b":")[0].strip().lower()
                    not in (b"connection", b"expect")]
            if any(h.split(b":")[0].strip().lower() == b"expect" for h in head[1:]):
                self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                self.wfile.flush()
            body = self.rfile.read(n) if n else b""
            target = head[0].split(b" ")[1].decode("latin-1")
            query = urllib.parse.unquote(target.partition("query=")[2].partition("&")[0])
            key = hashlib.sha256(query.encode("latin-1") + body).hexdigest()
            with lock:
                lose = query.startswith("INSERT") and key not in seen
                seen.add(key)
                if lose:
                    with open(sys.argv[3], "a") as log:
                        log.write("lost %s\n" % query[:60])
            if lose and mode == "request":
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            up = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
            up.sendall(b"".join([head[0]] + keep) + b"Connection: close\r\n\r\n" + body)
            answer = b""
            while True:
                chunk = up.recv(65536)
                if not chunk:
                    break
                answer += chunk
            up.close()
            if lose:
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(answer)
            self.wfile.flush()
            return  # the answer said Connection: close


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


srv = Server(("127.0.0.1", int(sys.argv[1])), Handler)
print("ready", flush=True)
srv.serve_forever()
