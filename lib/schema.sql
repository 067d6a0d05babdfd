-- spanfold database schema, version 8 (PRAGMA user_version = 8).
--
-- The interface between the tools: pcap2spans, perf-fold and tracefs2spans write
-- it, perf-fold --db, flamegraph, inflect and exports read it.  It is embedded in
-- every binary (lib/sf_db.c) and changes only with a version bump and a forward
-- migration (a rewrite that accepts exactly the same rows is not a change).  This
-- file is always the latest version: a new database is created from it, an older
-- one is taken forward by the migrations in lib/sf_db.c (v1 -> v2: the TCP sequence
-- ranges of spans, span_events.source and span_intervals.source, shared_intervals;
-- v2 -> v3: spans.delivered; v3 -> v4: contexts.format without a CHECK on the list of
-- trace-context formats); v4 -> v5: sample_events, offcpu; v5 -> v6: span_headers; v6 -> v7: the
-- JSON-RPC columns of spans).
-- Conventions:
--   * ids are lowercase hex text of their natural width: trace ids 32 digits
--     (64-bit ids left-padded with 16 '0' and flagged), span ids 16 digits;
--   * timestamps are integer nanoseconds in the clock of their source
--     (sources.clock); clock_fits relates clocks;
--   * booleans are 0/1 integers, unknown is NULL;
--   * a CHECK on a list of more than two values is written with OR, not IN (...):
--     SQLite 3.40 builds an ephemeral index of the list for every INSERT or UPDATE
--     that checks it (a third of pcap2spans --db's instructions, for contexts).

-- One row per ingested input.  status is 'partial' from the moment ingestion
-- starts (error 'interrupted') until it ends; a run that fails keeps 'partial'
-- with its error, and every batch it committed before the failure.
CREATE TABLE sources (
    id            INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind = 'pcap' OR kind = 'perf' OR kind = 'tracefs'),
    path          TEXT NOT NULL,
    bytes         INTEGER,                 -- size of the input
    sha256        TEXT,                    -- 64 hex; identity for re-ingest detection
    clock         TEXT NOT NULL DEFAULT 'unknown', -- realtime, monotonic, perf, local, ...
    tool          TEXT NOT NULL,           -- writer: pcap2spans, perf-fold, ...
    tool_version  TEXT NOT NULL,
    started_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    status        TEXT NOT NULL DEFAULT 'partial' CHECK (status IN ('complete', 'partial')),
    error         TEXT,                    -- first fatal error, or the bad-unit summary
    units         INTEGER,                 -- packets / lines read
    bad_units     INTEGER                  -- packets / lines skipped as bad
);
CREATE INDEX sources_sha256 ON sources(sha256);

-- TCP connections seen in captures.
CREATE TABLE connections (
    id                 INTEGER PRIMARY KEY,
    source_id          INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    client_addr        TEXT,
    client_port        INTEGER,
    server_addr        TEXT,
    server_port        INTEGER,
    app_proto          TEXT,               -- http/1.1, h2, tls, unknown
    tls_version        TEXT,               -- e.g. TLSv1.3
    tls_cipher         TEXT,               -- e.g. TLS_AES_128_GCM_SHA256
    sni                TEXT,
    alpn               TEXT,               -- selected ALPN (offered list in tls_info)
    early_data         TEXT NOT NULL DEFAULT 'none'
                       CHECK (early_data = 'none' OR early_data = 'offered' OR
                              early_data = 'accepted' OR early_data = 'rejected' OR
                              early_data = 'unknown'),
    early_data_bytes   INTEGER NOT NULL DEFAULT 0,  -- client 0-RTT application bytes (record payload)
    early_data_records INTEGER NOT NULL DEFAULT 0,
    decrypted          INTEGER NOT NULL DEFAULT 0,
    decrypt_error      TEXT,               -- why not decrypted (no key, unsupported suite, ...)
    ctx_hash           TEXT,               -- sha256(client_random || server_random || early-data length)
    tls_info           TEXT,               -- JSON: offered versions/suites/groups, PSK, alerts, HRR
    first_ns           INTEGER,
    last_ns            INTEGER,
    bytes_c2s          INTEGER NOT NULL DEFAULT 0,  -- TCP payload bytes client to server
    bytes_s2c          INTEGER NOT NULL DEFAULT 0,
    gaps               INTEGER NOT NULL DEFAULT 0,  -- holes left by lost segments
    gap_bytes          INTEGER NOT NULL DEFAULT 0,
    close              TEXT                -- fin, rst, idle, eof (capture ended)
);
CREATE INDEX connections_source ON connections(source_id);

-- Notable events on a connection: TLS alerts, resets, gaps, HelloRetryRequest, ...
CREATE TABLE connection_events (
    id            INTEGER PRIMARY KEY,
    connection_id INTEGER NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    ts_ns         INTEGER,
    kind          TEXT NOT NULL,           -- tls_alert, rst, gap, hrr, key_update, ...
    detail        TEXT
);
CREATE INDEX connection_events_conn ON connection_events(connection_id);

-- One row per HTTP request/response exchange or gRPC call.
CREATE TABLE spans (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    connection_id   INTEGER REFERENCES connections(id) ON DELETE CASCADE,
    stream_id       INTEGER,               -- HTTP/2 stream id; HTTP/1 exchange number on the connection
    proto           TEXT,                  -- http/1.1, h2, grpc
    method          TEXT,
    authority       TEXT,                  -- :authority or Host
    path            TEXT,
    status          INTEGER,               -- HTTP status
    grpc_service    TEXT,                  -- package.Service
    grpc_method     TEXT,
    grpc_status     INTEGER,
    grpc_message    TEXT,
    grpc_timeout_ns INTEGER,
    req_start_ns    INTEGER,               -- first byte of the request
    req_end_ns      INTEGER,               -- last byte of the request
    resp_start_ns   INTEGER,
    resp_end_ns     INTEGER,
    req_bytes       INTEGER,               -- body bytes
    resp_bytes      INTEGER,
    early_data      INTEGER NOT NULL DEFAULT 0, -- request travelled as TLS 1.3 0-RTT data
    delivered       INTEGER NOT NULL DEFAULT 1, -- 0: it never reached the server's
                                                -- application (0-RTT data it rejected)
    partial         INTEGER NOT NULL DEFAULT 0, -- something of the exchange is missing
    partial_reason  TEXT,
    reset_code      INTEGER,               -- RST_STREAM error code
    -- TCP sequence numbers (mod 2^32) of the request's first byte and one past its
    -- last, and the same for the response; NULL when unknown (TLS, a gap)
    req_seq_start   INTEGER,
    req_seq_end     INTEGER,
    resp_seq_start  INTEGER,
    resp_seq_end    INTEGER,
    -- the request's preferred valid context (W3C first), for easy joins
    trace_id        TEXT,
    span_id         TEXT,
    parent_span_id  TEXT,
    sampled         INTEGER,
    ctx_format      TEXT,
    ctx_valid       INTEGER,
    trace_id_lo     TEXT GENERATED ALWAYS AS (substr(trace_id, 17, 16)) VIRTUAL,
    -- JSON-RPC 2.0 (pcap2spans/rpc.h).  A call is a span of proto 'jsonrpc' whose method
    -- is the JSON-RPC method; its connection_id and stream_id are those of the HTTP
    -- exchange that carried its request (its parent span)
    rpc_messages    INTEGER,               -- on an HTTP span: JSON-RPC messages its bodies carried
    rpc_id          TEXT,                  -- a number as written, a string in "quotes"; NULL: a notification
    rpc_direction   TEXT,                  -- c2s: the client sent the request; s2c: the server did
    rpc_session     TEXT,                  -- MCP session (Mcp-Session-Id, or sessionId= of the SSE transport)
    rpc_name        TEXT,                  -- params.name: the tool of tools/call, the prompt of prompts/get
    rpc_error_code  INTEGER,               -- the response's error.code
    rpc_error       TEXT,                  -- the response's error.message
    rpc_tool_error  INTEGER,               -- 1: a tool result with isError: true
    -- sampling parameters the request carried (sampling/createMessage): temperature,
    -- topP, maxTokens, how many stopSequences, modelPreferences.hints[0].name
    temperature     REAL,
    top_p           REAL,
    max_tokens      INTEGER,
    stop_sequences  INTEGER,
    model_hint      TEXT,
    parent_source   INTEGER                -- NULL: parent_span_id is the context's; else the tracefs source whose socket events gave it
);
CREATE INDEX spans_span_id ON spans(span_id);
CREATE INDEX spans_trace_id ON spans(trace_id);
CREATE INDEX spans_trace_id_lo ON spans(trace_id_lo);
CREATE INDEX spans_source ON spans(source_id);

-- Every trace context found on a span's request (or response), valid or not.
CREATE TABLE contexts (
    id             INTEGER PRIMARY KEY,
    span_row       INTEGER NOT NULL REFERENCES spans(id) ON DELETE CASCADE,
    direction      TEXT NOT NULL DEFAULT 'request' CHECK (direction IN ('request', 'response')),
    -- a name of lib/sf_tc_formats.h (docs/pcap2spans.md#trace-context-formats): the writer
    -- has no other names (sf_tracectx_format_name), so a new format needs no migration
    format         TEXT NOT NULL,
    raw            TEXT,                   -- header value(s) as seen (binary as hex)
    trace_id       TEXT,
    span_id        TEXT,
    parent_span_id TEXT,
    sampled        INTEGER,
    debug          INTEGER,
    flags          INTEGER,                -- format's flag byte (W3C trace-flags, Jaeger flags)
    trace_id_64    INTEGER NOT NULL DEFAULT 0, -- trace id was 64-bit and left-padded
    tracestate     TEXT,                   -- W3C tracestate (only with a valid traceparent)
    valid          INTEGER NOT NULL,
    error          TEXT                    -- reason when not valid (or a warning)
);
CREATE INDEX contexts_span_row ON contexts(span_row);
CREATE INDEX contexts_span_id ON contexts(span_id);

-- The request headers kept for the sampling attributes (lib/sf_attrs.h: user-agent,
-- x-envoy-*, ..., pcap2spans --keep-header), in the order they came; name lowercase,
-- value cut at 128 bytes, control bytes as '?'; at most 1 KiB of them per request.
CREATE TABLE span_headers (
    id       INTEGER PRIMARY KEY,
    span_row INTEGER NOT NULL REFERENCES spans(id) ON DELETE CASCADE,
    name     TEXT NOT NULL,
    value    TEXT NOT NULL
);
CREATE INDEX span_headers_span_row ON span_headers(span_row);

-- tracefs-side markers and other kernel trace lines.
CREATE TABLE span_events (
    id        INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    ts_ns     INTEGER NOT NULL,
    cpu       INTEGER,
    pid       INTEGER,                     -- tgid when known
    tid       INTEGER,                     -- the task the kernel printed
    comm      TEXT,
    kind      TEXT NOT NULL,               -- begin, end, decision, mark, raw
    span_id   TEXT,
    trace_id  TEXT,
    decision  INTEGER,                     -- sampling decision (1 keep, 0 drop)
    message   TEXT,
    line      INTEGER,                     -- line number in the source
    -- marker (USDT, uprobe, trace_marker) or socket (from socket events and a capture)
    source    TEXT NOT NULL DEFAULT 'marker' CHECK (source IN ('marker', 'socket'))
);
CREATE INDEX span_events_span ON span_events(span_id);
CREATE INDEX span_events_tid_ts ON span_events(tid, ts_ns);

-- Events the kernel trace buffer lost (per CPU), and overwritten totals (cpu NULL).
CREATE TABLE losses (
    id        INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    cpu       INTEGER,
    ts_ns     INTEGER,
    events    INTEGER,                     -- NULL when the kernel did not say how many
    line      INTEGER
);

-- Span intervals on threads, built from span_events (source clock).
CREATE TABLE span_intervals (
    id        INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    span_id   TEXT NOT NULL,
    trace_id  TEXT,
    pid       INTEGER,
    tid       INTEGER NOT NULL,
    start_ns  INTEGER NOT NULL,
    end_ns    INTEGER NOT NULL,
    depth     INTEGER NOT NULL DEFAULT 0,  -- nesting depth on the thread
    decision  INTEGER,
    end_rule  TEXT,                        -- end-marker, next-marker, eof, socket
    -- marker, or socket: time the span owns alone on the thread (from socket events)
    source    TEXT NOT NULL DEFAULT 'marker' CHECK (source IN ('marker', 'socket'))
);
CREATE INDEX span_intervals_tid ON span_intervals(tid, start_ns);
CREATE INDEX span_intervals_span ON span_intervals(span_id);

-- Thread time that socket events give to several spans at once (event loops, async
-- runtimes, HTTP/2 streams on one thread): never attributed to one of them.
CREATE TABLE shared_intervals (
    id        INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    pid       INTEGER,
    tid       INTEGER NOT NULL,
    start_ns  INTEGER NOT NULL,
    end_ns    INTEGER NOT NULL,
    spans     INTEGER NOT NULL,            -- how many spans claim this time
    span_ids  TEXT NOT NULL                -- the candidates, ','-separated
);
CREATE INDEX shared_intervals_tid ON shared_intervals(tid, start_ns);

-- Interned folded stacks: frames root first, ';'-separated, as perf-fold prints them.
CREATE TABLE stacks (
    id     INTEGER PRIMARY KEY,
    frames TEXT NOT NULL UNIQUE
);

-- perf samples.
CREATE TABLE samples (
    id        INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    ts_ns     INTEGER,
    pid       INTEGER,
    tid       INTEGER,
    cpu       INTEGER,
    comm      TEXT,
    event     TEXT,
    period    INTEGER,
    stack_id  INTEGER REFERENCES stacks(id),
    span_id   TEXT                          -- attributed span (tracefs2spans / perf-fold)
);
CREATE INDEX samples_tid_ts ON samples(tid, ts_ns);
CREATE INDEX samples_span ON samples(span_id);

-- What each perf source recorded, event by event, and what became of it: samples
-- holds the records of one sampling event (the CPU profile: --event-filter, else the
-- first sampling event of the source); tracepoints (sched:sched_switch, ...) and any
-- other event are counted here and kept out of every CPU figure.
CREATE TABLE sample_events (
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    event     TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('sampling', 'tracepoint')),
    records   INTEGER NOT NULL,
    stored    INTEGER NOT NULL,               -- 1: its records are in samples
    PRIMARY KEY (source_id, event)
);

-- Off-CPU intervals of perf sources, from sched:sched_switch records (and of tracefs
-- sources, from spantrace --offcpu's spantrace_offcpu lines): thread tid left
-- its CPU at ts_ns in state `state` (S sleeping, D uninterruptible, R preempted, ...)
-- with the stack it had (stack_id: "comm;root;...;leaf", the kernel frames down to the
-- scheduler included) and ran again at end_ns: its switch in (end_rule 'switch-in'), or
-- when the switch in was not recorded (perf record -p), its next record ('next-event').
-- reason: the kernel function that blocked (futex_wait_queue, ep_poll, io_schedule,
-- ...) or 'preempted'; frame: the innermost frame of the program itself (not the
-- kernel's or the C runtime's: pool_acquire, not pthread_mutex_lock).  waker: the
-- thread and stack of the first sched_wakeup of it.
CREATE TABLE offcpu (
    id             INTEGER PRIMARY KEY,
    source_id      INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    ts_ns          INTEGER NOT NULL,
    end_ns         INTEGER NOT NULL,
    end_rule       TEXT NOT NULL CHECK (end_rule IN ('switch-in', 'next-event')),
    pid            INTEGER,
    tid            INTEGER NOT NULL,
    comm           TEXT,
    state          TEXT,
    reason         TEXT,
    frame          TEXT,
    stack_id       INTEGER REFERENCES stacks(id),
    waker_tid      INTEGER,
    waker_stack_id INTEGER REFERENCES stacks(id),
    span_id        TEXT                          -- attributed span, by ts_ns as a sample is
);
CREATE INDEX offcpu_tid_ts ON offcpu(tid, ts_ns);
CREATE INDEX offcpu_span ON offcpu(span_id);

-- Clock relations: t_to = t_from + offset_ns + skew_ppm * 1e-6 * (t_from - ref_ns),
-- valid for t_from in [valid_from_ns, valid_to_ns] (NULL = unbounded).
CREATE TABLE clock_fits (
    id            INTEGER PRIMARY KEY,
    from_clock    TEXT NOT NULL,
    to_clock      TEXT NOT NULL,
    from_source   INTEGER REFERENCES sources(id) ON DELETE CASCADE,
    to_source     INTEGER REFERENCES sources(id) ON DELETE CASCADE,
    offset_ns     INTEGER NOT NULL,
    skew_ppm      REAL NOT NULL DEFAULT 0,
    ref_ns        INTEGER NOT NULL DEFAULT 0,
    valid_from_ns INTEGER,
    valid_to_ns   INTEGER,
    points        INTEGER NOT NULL DEFAULT 0,
    residual_ns   INTEGER,                  -- median absolute residual
    residual_max_ns INTEGER,
    method        TEXT NOT NULL             -- theil-sen+envelope, manual, ...
);

-- The version this file is (sf_db sets it too when it creates a database from it), so
-- that a file made with `sqlite3 DB < lib/schema.sql` is a current spanfold database.
PRAGMA user_version = 8;
