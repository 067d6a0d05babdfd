#!/usr/bin/env python3
"""Small HTTP/1.1 server for recording pcap2spans test captures (record.sh).

Paths: /plain (Content-Length), /chunked (chunked with a trailer), /close (no length:
body until the connection closes), /204, /304, anything else 404.  Keep-alive and
pipelining come from http.server with protocol_version HTTP/1.1.
"""
import http.server
import sys


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_POST(self):
        self.do_GET()

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "1234")
        self.end_headers()

    def do_GET(self):
        self.body()
        p = self.path.split("?")[0]
        if p == "/plain":
            b = b"plain body\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
        elif p == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Trailer", "X-Checksum")
            self.end_headers()
            for part in (b"first chunk;", b"second", b"x" * 3000):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\nX-Checksum: 42\r\n\r\n")
        elif p == "/close":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"body until close\n" * 10)
            self.close_connection = True
        elif p == "/204":
            self.send_response(204)
            self.end_headers()
        elif p == "/304":
            self.send_response(304)
            self.end_headers()
        else:
            b = b"not found\n"
            self.send_response(404)
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
