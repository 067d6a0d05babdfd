# spanfold: the front end (ingest, stacks, report, gate).  It links every tool it drives
# and calls their code in-process, never their binaries.
TOOLS += spanfold
SPANFOLD_LINKS := pcap2spans perf-fold tracefs2spans flamegraph inflect spanfold-export
# libcurl: ClickHouse's HTTP interface (spanfold push, stacks --clickhouse; spanfold/ch.c)
LDLIBS_spanfold = $(sort $(foreach t,$(SPANFOLD_LINKS),$(LDLIBS_$(t)))) $(call pc,libcurl) -lm
