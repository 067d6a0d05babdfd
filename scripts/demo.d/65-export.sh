# shellcheck shell=bash
# Stage 65: spanfold-export - the joins in the formats other tools open: OTLP/JSON
# (Jaeger UI, collectors), Zipkin, Chrome/Perfetto (spans and samples on one clock),
# speedscope (one profile per span) and pprof (span_id/trace_id labels).
if [ -x "$bin/spanfold-export" ]; then
    mkdir -p "$out/export"
    for f in otlp:spans.otlp.jsonl zipkin:spans.zipkin.json chrome:trace.perfetto.json \
        speedscope:profiles.speedscope.json pprof:cpu.pprof.gz; do
        "$bin/spanfold-export" --db "$db" --format "${f%%:*}" -o "$out/export/${f#*:}" 2>>"$out/export/export.log"
    done
    stage "exports: $out/export/ (OTLP for Jaeger, Zipkin, Perfetto, speedscope, pprof)"
else
    stage "exports: skipped (bin/spanfold-export not built)"
fi
