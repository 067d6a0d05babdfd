# spanfold: the front end (ingest, stacks, report, gate).  It links every tool it drives
# and calls their code in-process, never their binaries.
TOOLS += spanfold
SPANFOLD_LINKS := pcap2spans perf-fold tracefs2spans flamegraph inflect spanfold-export
# libcurl: ClickHouse's HTTP interface (spanfold push, stacks --clickhouse; spanfold/ch.c)
LDLIBS_spanfold = $(sort $(foreach t,$(SPANFOLD_LINKS),$(LDLIBS_$(t)))) $(call pc,libcurl) -lm
# The report page's explorer is JavaScript in spanfold/report_explore.js, embedded as
# flamegraph/flamegraph.js is (the definition of ex_script that report_html.c includes).
$(B)/gen/report_explore_js.inc: spanfold/report_explore.js spanfold/build.mk
	@mkdir -p $(@D)
	@{ echo '/* generated from spanfold/report_explore.js - do not edit */'; \
	   echo 'static const char ex_script[] ='; \
	   $(call c_string_lines,$<); \
	   echo ';'; } > $@
$(B)/spanfold/report_html.o: $(B)/gen/report_explore_js.inc
build/fuzz/obj/spanfold/report_html.o: build/gen/report_explore_js.inc
