# perf-fold: perf script text -> folded stacks, database, per-span folds, diff gate.
TOOLS += perf-fold
LDLIBS_perf-fold = $(call pc,sqlite3 libelf libtraceevent)
