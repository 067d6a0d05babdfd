# perf-fold: perf script text -> folded stacks, database, per-span folds, diff gate.
TOOLS += perf-fold
# libiberty (static, Debian's libiberty-dev): cplus_demangle, C++ names as perf shows them;
# libunwind (libunwind-dev): --call-graph dwarf stacks unwound as Debian's perf unwinds them
LDLIBS_perf-fold = $(call pc,sqlite3 libelf libdw libtraceevent libunwind-generic) -liberty
