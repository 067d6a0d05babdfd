#!/usr/bin/python3
"""Load for the spanfold demo service (scripts/record-demo.sh): real clients, in phases.

  demo-load.py PORT OUT.json [--admin-port P] [--phase S] [--rate-after R] [--seed N]
               [--slow-cmd CMD]

Three lanes run at once for 3 x S seconds (default S = 15):
  h1    curl, HTTP/1.1, one process and connection per request, ~8 requests/s
  h2c   curl --http2-prior-knowledge (curl 7.88 cannot reuse an h2c connection), ~6/s
  grpc  python3-grpcio, one channel, unary /demo.Catalog/Lookup, ~8/s
Every request carries a fresh trace id and span id:
  h1    3/4 X-B3-TraceId + X-B3-SpanId without X-B3-Sampled (decision deferred to the
        service), 1/4 traceparent with the sampled flag drawn at 0.5 (an upstream
        that decided, at the same configured rate)
  h2c   3/4 b3: TRACE-SPAN (deferred), 1/4 traceparent as above
  grpc  grpc-trace-bin with its options byte drawn at 0.5 (an upstream that decided)
With --scenario NAME the run is 2 x S seconds and every HTTP request also carries
baggage env=prod,tenant=tN (N of 1..4) and x-envoy-downstream-service-cluster: web or
mobile, half of them from client address 127.0.0.2; at S one thing changes (the failure
modes the drift explanation must find; the service runs with the matching rule):
  baggage   80 % of HTTP requests carry env=prod-legacy instead (an SDK overwrote it;
            the service drops env=prod-legacy: --drop-baggage env=prod-legacy)
  header    75 % of HTTP requests lose x-envoy-downstream-service-cluster (a proxy
            stopped sending it; the service keeps those at 0.05: --rate-header)
  upstream  the requests from 127.0.0.2 arrive as traceparent ...-00 (an upstream
            that stopped sampling)
  uniform   the service's rate is lowered (POST /admin/rate?r=R), nothing else changes
Phases: normal; at S the slow mode is switched on (POST /admin/slow?on=1); at 2 S
the service's sampling rate is lowered (POST /admin/rate?r=R, default 0.1).  Each
switch is an HTTP/1.1 request without trace context to the admin port (default: PORT;
the recorder uses a second port so that the capture holds the service's traffic only);
its time is taken just before it is sent and just after the answer.  With --slow-cmd
CMD the slow phase is CMD run instead (a command line, split as the shell's words
without expansion; e.g. the recorder's packet loss on the service's port), timed alike.

OUT.json: {"requests": [{id, trace_id, endpoint, protocol, client, ctx_format,
  sampled_sent, realtime_ns, monotonic_ns, status, grpc_status}], "phases": [...]}.
Exits 1 if any request failed at the transport level (curl error, gRPC UNAVAILABLE).
"""
import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import threading
import time

import grpc

P_TP = 0.25  # share of HTTP requests whose upstream already decided (traceparent)
PARENT_RATE = 0.5  # the upstream's sampling rate


def now():
    return time.time_ns(), time.monotonic_ns()


class Run:
    def __init__(self, port, admin_port, seed):
        self.port = port
        self.admin_port = admin_port
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.reqs = []
        self.errors = []
        self.stop_at = 0.0

        self.scenario = None
        self.switched = False

    def ids(self):
        with self.lock:
            return "%032x" % self.rng.getrandbits(128), "%016x" % (self.rng.getrandbits(64) | 1), \
                self.rng.random(), self.rng.random(), self.rng.random()

    def add(self, r):
        with self.lock:
            self.reqs.append(r)


def http_ctx(trace, span, u_fmt, u_samp, h2):
    """Headers and the facts the manifest keeps about them."""
    if u_fmt < P_TP:
        s = 1 if u_samp < PARENT_RATE else 0
        return [("traceparent", "00-%s-%s-%02x" % (trace, span, s))], "traceparent", s
    if h2:
        return [("b3", "%s-%s" % (trace, span))], "b3-single", None
    return [("X-B3-TraceId", trace), ("X-B3-SpanId", span)], "b3-multi", None


def scenario_headers(run, hdrs, fmt, sent, trace, span):
    """The scenario's extra headers and source address; may replace the context."""
    with run.lock:
        u = [run.rng.random() for _ in range(4)]
    on = run.switched
    env = "prod-legacy" if on and run.scenario == "baggage" and u[0] < 0.8 else "prod"
    extra = [("baggage", "env=%s,tenant=t%d" % (env, 1 + int(u[1] * 4)))]
    if not (on and run.scenario == "header" and u[2] < 0.75):
        extra.append(("x-envoy-downstream-service-cluster", "web" if u[2] < 0.5 else "mobile"))
    src = "127.0.0.2" if u[3] < 0.5 else "127.0.0.1"
    if on and run.scenario == "upstream" and src == "127.0.0.2":
        hdrs, fmt, sent = [("traceparent", "00-%s-%s-00" % (trace, span))], "traceparent", 0
    return hdrs + extra, fmt, sent, src


def curl_lane(run, proto, per_s):
    url = "http://127.0.0.1:%d" % run.port
    while time.monotonic() < run.stop_at:
        t_next = time.monotonic() + 1.0 / per_s
        trace, span, u_fmt, u_samp, u_ep = run.ids()
        ep = "/api/checkout" if u_ep < 0.5 else "/api/search"
        hdrs, fmt, sent = http_ctx(trace, span, u_fmt, u_samp, proto == "h2c")
        argv = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{http_version}",
                "--max-time", "10"]
        src = "127.0.0.1"
        if run.scenario:
            hdrs, fmt, sent, src = scenario_headers(run, hdrs, fmt, sent, trace, span)
            argv += ["--interface", src]
        if proto == "h2c":
            argv.append("--http2-prior-knowledge")
        for n, v in hdrs:
            argv += ["-H", "%s: %s" % (n, v)]
        rt, mono = now()
        p = subprocess.run(argv + [url + ep], capture_output=True, text=True)
        code, _, ver = p.stdout.partition(" ")
        if p.returncode != 0 or ver != ("2" if proto == "h2c" else "1.1"):
            run.errors.append("%s %s: curl rc %d %s %s" % (proto, span, p.returncode, p.stdout,
                                                            p.stderr.strip()))
        run.add({"id": span, "trace_id": trace, "endpoint": ep, "protocol": proto,
                 "client": "curl", "source": src, "ctx_format": fmt, "sampled_sent": sent,
                 "realtime_ns": rt, "monotonic_ns": mono,
                 "status": int(code) if code.isdigit() else None, "grpc_status": None})
        time.sleep(max(0.0, t_next - time.monotonic()))


def grpc_lane(run, per_s):
    ch = grpc.insecure_channel("127.0.0.1:%d" % run.port)
    grpc.channel_ready_future(ch).result(timeout=10)
    call = ch.unary_unary("/demo.Catalog/Lookup")
    while time.monotonic() < run.stop_at:
        t_next = time.monotonic() + 1.0 / per_s
        trace, span, _, u_samp, _ = run.ids()
        s = 1 if u_samp < PARENT_RATE else 0
        gtb = bytes([0, 0]) + bytes.fromhex(trace) + bytes([1]) + bytes.fromhex(span) + \
            bytes([2, s])
        rt, mono = now()
        try:
            call(b"sku-" + span.encode(), metadata=[("grpc-trace-bin", gtb)], timeout=10)
            gs = 0
        except grpc.RpcError as e:
            gs = e.code().value[0]
            if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                run.errors.append("grpc %s: %s %s" % (span, e.code(), e.details()))
        run.add({"id": span, "trace_id": trace, "endpoint": "/demo.Catalog/Lookup",
                 "protocol": "grpc", "client": "python3-grpcio " + grpc.__version__,
                 "ctx_format": "grpc-trace-bin", "sampled_sent": s,
                 "realtime_ns": rt, "monotonic_ns": mono, "status": 200, "grpc_status": gs})
        time.sleep(max(0.0, t_next - time.monotonic()))
    ch.close()


def admin(run, path, what):
    rt0, mono0 = now()
    p = subprocess.run(["curl", "-sS", "-X", "POST", "--max-time", "5",
                        "http://127.0.0.1:%d%s" % (run.admin_port, path)], capture_output=True, text=True)
    rt1, mono1 = now()
    if p.returncode != 0:
        run.errors.append("admin %s: %s" % (path, p.stderr.strip()))
    return {"what": what, "request": "POST " + path, "answer": p.stdout.strip(),
            "realtime_ns": rt0, "monotonic_ns": mono0,
            "answered_realtime_ns": rt1, "answered_monotonic_ns": mono1}


def command(run, cmd, what):
    rt0, mono0 = now()
    p = subprocess.run(shlex.split(cmd), capture_output=True, text=True)
    rt1, mono1 = now()
    if p.returncode != 0:
        run.errors.append("%s: exit %d: %s" % (cmd, p.returncode, p.stderr.strip()))
    return {"what": what, "command": cmd, "realtime_ns": rt0, "monotonic_ns": mono0,
            "answered_realtime_ns": rt1, "answered_monotonic_ns": mono1}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("out")
    ap.add_argument("--admin-port", type=int, default=0)
    ap.add_argument("--phase", type=float, default=15.0)
    ap.add_argument("--rate-after", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "big"))
    ap.add_argument("--scenario", choices=("baggage", "header", "upstream", "uniform"))
    ap.add_argument("--slow-cmd")
    a = ap.parse_args()
    run = Run(a.port, a.admin_port or a.port, a.seed)
    run.scenario = a.scenario
    t0 = time.monotonic()
    run.stop_at = t0 + (2 if a.scenario else 3) * a.phase
    phases = [dict(zip(("what", "realtime_ns", "monotonic_ns"), ("normal",) + now()))]
    lanes = [threading.Thread(target=curl_lane, args=(run, "h1", 8.0)),
             threading.Thread(target=curl_lane, args=(run, "h2c", 6.0)),
             threading.Thread(target=grpc_lane, args=(run, 8.0))]
    for t in lanes:
        t.start()
    time.sleep(max(0.0, t0 + a.phase - time.monotonic()))
    if a.scenario == "uniform":
        phases.append(admin(run, "/admin/rate?r=%g" % a.rate_after, "rate"))
    elif a.scenario:
        rt, mono = now()
        run.switched = True
        phases.append({"what": "scenario:" + a.scenario, "realtime_ns": rt,
                       "monotonic_ns": mono})
    else:
        phases.append(command(run, a.slow_cmd, "slow") if a.slow_cmd else
                      admin(run, "/admin/slow?on=1", "slow"))
        time.sleep(max(0.0, t0 + 2 * a.phase - time.monotonic()))
        phases.append(admin(run, "/admin/rate?r=%g" % a.rate_after, "rate"))
    for t in lanes:
        t.join()
    run.reqs.sort(key=lambda r: r["monotonic_ns"])
    json.dump({"seed": a.seed, "phase_s": a.phase, "scenario": a.scenario, "rate_after": a.rate_after,
               "requests": run.reqs, "phases": phases, "errors": run.errors},
              open(a.out, "w"), indent=None, separators=(",", ":"))
    for e in run.errors[:5]:
        print("demo-load: " + e, file=sys.stderr)
    sys.exit(1 if run.errors else 0)


if __name__ == "__main__":
    main()
