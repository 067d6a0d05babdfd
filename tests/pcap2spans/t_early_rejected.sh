#!/usr/bin/env bash
# TLS 0-RTT data the server rejected is parsed into spans (issue #18 item 6) on
# samples/pcap/tls-0rtt-nginx.pcap (recorded: nginx 1.22 with ssl_early_data, the
# openssl s_client sending early data; see its MANIFEST.json): each rejected request is
# a span with early_data = 1, delivered = 0, partial, its own trace context, on a
# connection whose early_data is 'rejected', and the early_data_rejected event stays;
# the 1-RTT retry is an ordinary span with the context it carried.  And the schema
# migration: a version 1 database gets spans.delivered (existing rows 1).
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}/pcap2spans
s=$top/samples/pcap
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 not installed"
tap_tmpdir
q() { sqlite3 "$tmp/t.db" "$1"; }
rc=0
"$bin" --quiet --db "$tmp/t.db" --keylog "$s/tls-0rtt-nginx.keylog" "$s/tls-0rtt-nginx.pcap" || rc=$?
check_eval "reads the capture (exit $rc)" '[ "$rc" -eq 0 ]'
got=$(q "SELECT s.path || '|' || s.early_data || '|' || s.delivered || '|' || s.partial || '|' ||
         ifnull(s.status, '-') || '|' || s.span_id || '|' || c.early_data FROM spans s
         JOIN connections c ON c.id = s.connection_id WHERE s.delivered = 0 ORDER BY s.span_id")
want="/t/0rtt-rejected-early|1|0|1|-|000000005e110004|rejected
/t/0rtt-refused-early|1|0|1|-|000000005e110006|rejected"
check_eval "the two rejected 0-RTT requests are spans: early_data 1, delivered 0, partial, no status, their span ids, connection rejected" \
    '[ "$got" = "$want" ] || { echo "# got: $got"; false; }'
check_eval "their reason says the server never processed them" \
    '[ "$(q "SELECT count(*) FROM spans WHERE delivered = 0 AND partial_reason LIKE '"'"'TLS 0-RTT data rejected by the server%'"'"'")" = 2 ]'
check_eval "their contexts are rows of contexts" \
    '[ "$(q "SELECT count(*) FROM contexts x JOIN spans s ON s.id = x.span_row WHERE s.delivered = 0 AND x.format = '"'"'traceparent'"'"'")" = 2 ]'
check_eval "the early_data_rejected events are kept" \
    '[ "$(q "SELECT count(*) FROM connection_events WHERE kind = '"'"'early_data_rejected'"'"'")" = 2 ]'
got=$(q "SELECT a.span_id || '>' || b.span_id FROM spans a JOIN spans b ON b.connection_id = a.connection_id
         AND b.delivered = 1 AND b.early_data = 0 WHERE a.delivered = 0 ORDER BY a.span_id")
check_eval "each retry in 1-RTT is a delivered span beside it, with the context it carried" \
    '[ "$got" = "000000005e110004>000000005e110005
000000005e110006>000000005e110007" ] || { echo "# got: $got"; false; }'
check_eval "every other span is delivered" '[ "$(q "SELECT count(*) FROM spans WHERE delivered = 1")" = 5 ]'
"$bin" --quiet --ndjson --keylog "$s/tls-0rtt-nginx.keylog" "$s/tls-0rtt-nginx.pcap" >"$tmp/t.ndjson"
check_eval "NDJSON spans carry delivered too" \
    '[ "$(grep -c "\"early_data\":1,\"delivered\":0,\"partial\":1" "$tmp/t.ndjson")" = 2 ]'
ver=$(sed -n 's/^#define SF_DB_SCHEMA_VERSION //p' "$top/lib/sf_db.h")
check_eval "the database is the current schema version ($ver)" '[ "$(q "PRAGMA user_version")" = "$ver" ]'
# a version 2 file: the current schema without spans.delivered, which 2 -> 3 adds, and
# without sample_events and offcpu (4 -> 5), span_headers (5 -> 6), the JSON-RPC columns
# of spans (6 -> 7) and spans.parent_source (7 -> 8)
sqlite3 "$tmp/v2.db" <"$top/lib/schema.sql"
sqlite3 "$tmp/v2.db" "ALTER TABLE spans DROP COLUMN delivered; DROP TABLE sample_events; DROP TABLE offcpu;
    DROP TABLE span_headers;
    ALTER TABLE spans DROP COLUMN rpc_messages;
    ALTER TABLE spans DROP COLUMN rpc_id;
    ALTER TABLE spans DROP COLUMN rpc_direction;
    ALTER TABLE spans DROP COLUMN rpc_session;
    ALTER TABLE spans DROP COLUMN rpc_name;
    ALTER TABLE spans DROP COLUMN rpc_error_code;
    ALTER TABLE spans DROP COLUMN rpc_error;
    ALTER TABLE spans DROP COLUMN rpc_tool_error;
    ALTER TABLE spans DROP COLUMN temperature;
    ALTER TABLE spans DROP COLUMN top_p;
    ALTER TABLE spans DROP COLUMN max_tokens;
    ALTER TABLE spans DROP COLUMN stop_sequences;
    ALTER TABLE spans DROP COLUMN parent_source;
    ALTER TABLE spans DROP COLUMN model_hint;
    PRAGMA user_version = 2;
    INSERT INTO sources(id, kind, path, tool, tool_version)
    VALUES (1, 'pcap', 'old.pcap', 'test', '0'); INSERT INTO spans(source_id, proto) VALUES (1, 'h2');"
"$bin" --quiet --db "$tmp/v2.db" "$top/tests/pcap2spans/data/h1-lo.pcap"
check_eval "a version 2 database is migrated: version $ver, the old row delivered" \
    '[ "$(sqlite3 "$tmp/v2.db" "PRAGMA user_version; SELECT delivered FROM spans WHERE source_id = 1")" = "$ver
1" ]'
tap_plan
