-- 200 spans, 10 per second, 20 windows of 1 s: P99 steps from ~20 ms to ~35 ms at window 12;
-- half the traces kept, configured 50 %; one clock pair.
INSERT INTO sources(id, kind, path, tool, tool_version, status)
    VALUES (1, 'pcap', 'golden.pcap', 'test', '0', 'complete');
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199)
INSERT INTO spans(id, source_id, proto, method, authority, path, status, req_start_ns, resp_end_ns,
                  trace_id, span_id, sampled)
SELECT i + 1, 1, 'http/1.1', 'GET', 'api', '/x', CASE WHEN i % 37 = 0 THEN 503 ELSE 200 END,
       1000000000000 + i * 100000000,
       1000000000000 + i * 100000000 + ((CASE WHEN i >= 120 THEN 35 ELSE 20 END) + i % 3 + ((i / 10) * 7) % 5) * 1000000,
       printf('%032x', i + 1), printf('%016x', i + 1), i % 2
FROM n;
INSERT INTO clock_fits(from_clock, to_clock, offset_ns, skew_ppm, ref_ns, valid_from_ns, points, method)
    VALUES ('monotonic', 'realtime', 5000, 3.5, 0, 0, 50, 'theil-sen+envelope');
