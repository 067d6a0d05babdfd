# flamegraph: folded stacks to SVG flame graphs (flamegraph.pl options), d3 and speedscope JSON
TOOLS += flamegraph
# The flame graph's script is JavaScript in flamegraph/flamegraph.js (lint and read it
# as such), made the definition of fg_script that svg.c includes, as lib/schema.sql is embedded.
$(B)/gen/flamegraph_js.inc: flamegraph/flamegraph.js flamegraph/build.mk
	@mkdir -p $(@D)
	@{ echo '/* generated from flamegraph/flamegraph.js - do not edit */'; \
	   echo 'static const char fg_script[] ='; \
	   $(call c_string_lines,$<); \
	   echo ';'; } > $@
$(B)/flamegraph/svg.o: $(B)/gen/flamegraph_js.inc
build/fuzz/obj/flamegraph/svg.o: build/gen/flamegraph_js.inc
