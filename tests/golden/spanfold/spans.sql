-- The database of the spanfold golden cases: 10 requests (T0 = 2026-12-01T12:00:00Z),
-- request i at T0 + i s lasting i * 10 ms: odd ones GET /api/search?q=i, even ones
-- POST /api/checkout, the 10th a 500.  CPU samples (1 ms each) carry their span id,
-- as tracefs2spans leaves them; span 9 (the slowest search) burns 5 in regex; one
-- sample finds its span through a span interval only; three are outside every span.
INSERT INTO sources(id, kind, path, clock, tool, tool_version, status) VALUES
    (1, 'pcap', 'golden.pcap', 'realtime', 'test', '0', 'complete'),
    (2, 'perf', 'perf.txt', 'monotonic', 'test', '0', 'complete'),
    (3, 'tracefs', 'markers.txt', 'monotonic', 'test', '0', 'complete');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
INSERT INTO spans(id, source_id, proto, method, authority, path, status, req_start_ns,
                  resp_end_ns, span_id, trace_id, sampled)
SELECT i, 1, 'http/1.1', CASE WHEN i % 2 THEN 'GET' ELSE 'POST' END, 'shop',
       CASE WHEN i % 2 THEN '/api/search?q=' || i ELSE '/api/checkout' END,
       CASE WHEN i = 10 THEN 500 ELSE 200 END,
       1796126400000000000 + i * 1000000000, 1796126400000000000 + i * 1000000000 + i * 10000000,
       printf('%016x', i), printf('%032x', 4096 + i), i % 2
  FROM n;
INSERT INTO stacks(id, frames) VALUES
    (1, 'svc;main;handle;search;regex'), (2, 'svc;main;handle;search;rank'),
    (3, 'svc;main;handle;checkout;tax'), (4, 'svc;main;idle');
-- two samples in every span, in its handler; five more in span 9's regex
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
INSERT INTO samples(source_id, ts_ns, pid, tid, cpu, comm, event, period, stack_id, span_id)
SELECT 2, 5000000000 + i * 1000, 7, 7, 0, 'svc', 'cpu-clock', 1000000,
       CASE WHEN ((i + 1) / 2) % 2 THEN 2 ELSE 3 END, printf('%016x', (i + 1) / 2) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5)
INSERT INTO samples(source_id, ts_ns, pid, tid, cpu, comm, event, period, stack_id, span_id)
SELECT 2, 6000000000 + i * 1000, 7, 7, 0, 'svc', 'cpu-clock', 1000000, 1, '0000000000000009'
  FROM n;
INSERT INTO samples(source_id, ts_ns, pid, tid, cpu, comm, event, period, stack_id, span_id) VALUES
    (2, 7000000000, 7, 8, 0, 'svc', 'cpu-clock', 1000000, 4, NULL),
    (2, 7000001000, 7, 8, 0, 'svc', 'cpu-clock', 1000000, 4, NULL),
    (2, 7000002000, 7, 8, 0, 'svc', 'cpu-clock', 1000000, 4, NULL),
    (2, 8000000500, 7, 9, 0, 'svc', 'cpu-clock', 1000000, 3, NULL);
INSERT INTO span_intervals(source_id, span_id, pid, tid, start_ns, end_ns) VALUES
    (3, '000000000000000a', 7, 9, 8000000000, 8000001000);
