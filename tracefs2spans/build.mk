# tracefs2spans: tracefs text -> span events, intervals, clock fits, sample attribution
TOOLS += tracefs2spans
LDLIBS_tracefs2spans = $(call pc,sqlite3 libcrypto libtracecmd) -lm
CPPFLAGS_tracefs2spans = $(call pcflags,libtracecmd)
