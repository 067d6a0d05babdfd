# flamegraph: folded stacks to SVG flame graphs (flamegraph.pl options), d3 and speedscope JSON
TOOLS += flamegraph
# The flame graph's script is JavaScript in flamegraph/flamegraph.js (lint and read it
# as such), made a string literal that svg.c includes, as lib/schema.sql is embedded.
$(B)/gen/flamegraph_js.inc: flamegraph/flamegraph.js
	@mkdir -p $(@D)
	@{ echo '/* generated from flamegraph/flamegraph.js - do not edit */'; \
	   $(call c_string_lines,$<); } > $@
$(B)/flamegraph/svg.o: $(B)/gen/flamegraph_js.inc
build/fuzz/obj/flamegraph/svg.o: build/gen/flamegraph_js.inc
