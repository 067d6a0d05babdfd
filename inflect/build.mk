# inflect: change points, sampling drift and clock drift over span series.
TOOLS += inflect
LDLIBS_inflect = $(call pc,sqlite3) -lm
