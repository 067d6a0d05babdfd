#!/usr/bin/python3
"""Tiny gRPC server for scripts/record-samples.sh (python3-grpcio, no protoc needed).

  grpc_server.py PORT

Service spanfold.demo.Echo, messages are raw bytes (generic handler):
  Say   returns the request bytes (status OK)
  Fail  aborts with NOT_FOUND and the message "no such greeting"
  Slow  sleeps 1 s before answering (clients call it with a short deadline)
Stops on SIGTERM.  Binds 127.0.0.1 only.
"""
import signal
import sys
import threading
import time
from concurrent import futures

import grpc


def say(req, ctx):
    return req


def fail(req, ctx):
    ctx.abort(grpc.StatusCode.NOT_FOUND, "no such greeting")


def slow(req, ctx):
    time.sleep(1.0)
    return req


def main():
    port = int(sys.argv[1])
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    handlers = {n: grpc.unary_unary_rpc_method_handler(f) for n, f in
                (("Say", say), ("Fail", fail), ("Slow", slow))}
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("spanfold.demo.Echo", handlers),))
    if server.add_insecure_port("127.0.0.1:%d" % port) != port:
        sys.exit("grpc_server: cannot bind port %d" % port)
    server.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    done.wait(300)
    server.stop(0.5).wait()


if __name__ == "__main__":
    main()
