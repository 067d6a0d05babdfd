# flamegraph: folded stacks to SVG flame graphs (flamegraph.pl options), d3 and speedscope JSON
TOOLS += flamegraph
