#!/usr/bin/env python3
"""The demo service's search backend (record-demo.sh SLOW_KIND=downstream): python3's
ThreadingHTTPServer on 127.0.0.1:PORT answering GET /api/backend after 2 ms, or 25 ms when
the caller asks it to be slow (X-Demo-Slow: 1; the demo service does in its slow mode).  It
prints "listening on 127.0.0.1:PORT" once ready.

  backend.py PORT        (0: any free port)
"""
import http.server
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        slow = self.headers.get("X-Demo-Slow") == "1"
        time.sleep(0.025 if slow else 0.002)
        body = b"results\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 128


srv = Server(("127.0.0.1", int(sys.argv[1])), Handler)
print("listening on 127.0.0.1:%d" % srv.server_address[1], flush=True)
srv.serve_forever()
